/* 2mm: tmp := alpha*A*B; D := beta*D + tmp*C (PolyBench/C 4.2 kernel, written for moldtune on pb.h). */
#include "../harness/pb.h"

#if !defined(NI) && !defined(NJ) && !defined(NK) && !defined(NL)
#if defined(MINI_DATASET)
#define NI 16
#define NJ 18
#define NK 22
#define NL 24
#elif defined(SMALL_DATASET)
#define NI 40
#define NJ 50
#define NK 70
#define NL 80
#elif defined(MEDIUM_DATASET)
#define NI 180
#define NJ 190
#define NK 210
#define NL 220
#elif defined(LARGE_DATASET)
#define NI 800
#define NJ 900
#define NK 1100
#define NL 1200
#else /* EXTRALARGE_DATASET */
#define NI 1600
#define NJ 1800
#define NK 2200
#define NL 2400
#endif
#endif

static void init_array(int ni, int nj, int nk, int nl, DATA_TYPE *alpha, DATA_TYPE *beta,
                       DATA_TYPE A[NI][NK], DATA_TYPE B[NK][NJ], DATA_TYPE C[NJ][NL],
                       DATA_TYPE D[NI][NL]) {
  *alpha = 1.5;
  *beta = 1.2;
  for (int i = 0; i < ni; i++)
    for (int j = 0; j < nk; j++) A[i][j] = (DATA_TYPE)((i * j + 1) % ni) / ni;
  for (int i = 0; i < nk; i++)
    for (int j = 0; j < nj; j++) B[i][j] = (DATA_TYPE)(i * (j + 1) % nj) / nj;
  for (int i = 0; i < nj; i++)
    for (int j = 0; j < nl; j++) C[i][j] = (DATA_TYPE)((i * (j + 3) + 1) % nl) / nl;
  for (int i = 0; i < ni; i++)
    for (int j = 0; j < nl; j++) D[i][j] = (DATA_TYPE)(i * (j + 2) % nk) / nk;
}

__attribute__((noinline)) void kernel_2mm(int ni, int nj, int nk, int nl, DATA_TYPE alpha,
                                          DATA_TYPE beta, DATA_TYPE tmp[NI][NJ],
                                          DATA_TYPE A[NI][NK], DATA_TYPE B[NK][NJ],
                                          DATA_TYPE C[NJ][NL], DATA_TYPE D[NI][NL]) {
  int i, j, k;
  (void)ni, (void)nj, (void)nk, (void)nl;

  /* D := alpha*A*B*C + beta*D */
  for (i = 0; i < NI; i++)
    for (j = 0; j < NJ; j++) {
      tmp[i][j] = SCALAR_VAL(0.0);
      for (k = 0; k < NK; ++k)
        tmp[i][j] += alpha * A[i][k] * B[k][j];
    }
  for (i = 0; i < NI; i++)
    for (j = 0; j < NL; j++) {
      D[i][j] *= beta;
      for (k = 0; k < NJ; ++k)
        D[i][j] += tmp[i][k] * C[k][j];
    }
}

int main(void) {
  DATA_TYPE alpha, beta;
  PB_ARRAY_2D(tmp, DATA_TYPE, NI, NJ);
  PB_ARRAY_2D(A, DATA_TYPE, NI, NK);
  PB_ARRAY_2D(B, DATA_TYPE, NK, NJ);
  PB_ARRAY_2D(C, DATA_TYPE, NJ, NL);
  PB_ARRAY_2D(D, DATA_TYPE, NI, NL);

  init_array(NI, NJ, NK, NL, &alpha, &beta, A, B, C, D);

  pb_flush_cache();
  pb_timer_start();
  kernel_2mm(NI, NJ, NK, NL, alpha, beta, tmp, A, B, C, D);
  pb_timer_stop();
  pb_timer_print();

  pb_dump_start();
  pb_dump_array("D", &D[0][0], (size_t)NI * NL);
  pb_dump_finish();

  PB_FREE(tmp);
  PB_FREE(A);
  PB_FREE(B);
  PB_FREE(C);
  PB_FREE(D);
  return 0;
}
