/* gemm: C := alpha*A*B + beta*C (PolyBench/C 4.2 kernel, written for moldtune on pb.h). */
#include "../harness/pb.h"

#if !defined(NI) && !defined(NJ) && !defined(NK)
#if defined(MINI_DATASET)
#define NI 20
#define NJ 25
#define NK 30
#elif defined(SMALL_DATASET)
#define NI 60
#define NJ 70
#define NK 80
#elif defined(MEDIUM_DATASET)
#define NI 200
#define NJ 220
#define NK 240
#elif defined(LARGE_DATASET)
#define NI 1000
#define NJ 1100
#define NK 1200
#else /* EXTRALARGE_DATASET */
#define NI 2000
#define NJ 2300
#define NK 2600
#endif
#endif

static void init_array(int ni, int nj, int nk, DATA_TYPE *alpha, DATA_TYPE *beta,
                       DATA_TYPE C[NI][NJ], DATA_TYPE A[NI][NK], DATA_TYPE B[NK][NJ]) {
  *alpha = 1.5;
  *beta = 1.2;
  for (int i = 0; i < ni; i++)
    for (int j = 0; j < nj; j++) C[i][j] = (DATA_TYPE)((i * j + 1) % ni) / ni;
  for (int i = 0; i < ni; i++)
    for (int j = 0; j < nk; j++) A[i][j] = (DATA_TYPE)(i * (j + 1) % nk) / nk;
  for (int i = 0; i < nk; i++)
    for (int j = 0; j < nj; j++) B[i][j] = (DATA_TYPE)(i * (j + 2) % nj) / nj;
}

__attribute__((noinline)) void kernel_gemm(int ni, int nj, int nk, DATA_TYPE alpha, DATA_TYPE beta,
                                           DATA_TYPE C[NI][NJ], DATA_TYPE A[NI][NK],
                                           DATA_TYPE B[NK][NJ]) {
  int i, j, k;
  (void)ni, (void)nj, (void)nk;

  #pragma omp tile sizes(96)
  for (i = 0; i < NI; i++) {
    #pragma omp tile sizes(16)
    for (j = 0; j < NJ; j++)
      C[i][j] *= beta;
    for (k = 0; k < NK; k++)
      for (j = 0; j < NJ; j++)
        C[i][j] += alpha * A[i][k] * B[k][j];
  }
}

int main(void) {
  DATA_TYPE alpha, beta;
  PB_ARRAY_2D(C, DATA_TYPE, NI, NJ);
  PB_ARRAY_2D(A, DATA_TYPE, NI, NK);
  PB_ARRAY_2D(B, DATA_TYPE, NK, NJ);

  init_array(NI, NJ, NK, &alpha, &beta, C, A, B);

  pb_flush_cache();
  pb_timer_start();
  kernel_gemm(NI, NJ, NK, alpha, beta, C, A, B);
  pb_timer_stop();
  pb_timer_print();

  pb_dump_start();
  pb_dump_array("C", &C[0][0], (size_t)NI * NJ);
  pb_dump_finish();

  PB_FREE(C);
  PB_FREE(A);
  PB_FREE(B);
  return 0;
}
