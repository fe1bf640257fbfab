/* 3mm: E := A*B; F := C*D; G := E*F (PolyBench/C 4.2 kernel, written for moldtune on pb.h). */
#include "../harness/pb.h"

#if !defined(NI) && !defined(NJ) && !defined(NK) && !defined(NL) && !defined(NM)
#if defined(MINI_DATASET)
#define NI 16
#define NJ 18
#define NK 20
#define NL 22
#define NM 24
#elif defined(SMALL_DATASET)
#define NI 40
#define NJ 50
#define NK 60
#define NL 70
#define NM 80
#elif defined(MEDIUM_DATASET)
#define NI 180
#define NJ 190
#define NK 200
#define NL 210
#define NM 220
#elif defined(LARGE_DATASET)
#define NI 800
#define NJ 900
#define NK 1000
#define NL 1100
#define NM 1200
#else /* EXTRALARGE_DATASET */
#define NI 1600
#define NJ 1800
#define NK 2000
#define NL 2200
#define NM 2400
#endif
#endif

static void init_array(int ni, int nj, int nk, int nl, int nm, DATA_TYPE A[NI][NK],
                       DATA_TYPE B[NK][NJ], DATA_TYPE C[NJ][NM], DATA_TYPE D[NM][NL]) {
  for (int i = 0; i < ni; i++)
    for (int j = 0; j < nk; j++) A[i][j] = (DATA_TYPE)((i * j + 1) % ni) / (5 * ni);
  for (int i = 0; i < nk; i++)
    for (int j = 0; j < nj; j++) B[i][j] = (DATA_TYPE)((i * (j + 1) + 2) % nj) / (5 * nj);
  for (int i = 0; i < nj; i++)
    for (int j = 0; j < nm; j++) C[i][j] = (DATA_TYPE)(i * (j + 3) % nl) / (5 * nl);
  for (int i = 0; i < nm; i++)
    for (int j = 0; j < nl; j++) D[i][j] = (DATA_TYPE)((i * (j + 2) + 2) % nk) / (5 * nk);
}

__attribute__((noinline)) void kernel_3mm(int ni, int nj, int nk, int nl, int nm,
                                          DATA_TYPE E[NI][NJ], DATA_TYPE A[NI][NK],
                                          DATA_TYPE B[NK][NJ], DATA_TYPE F[NJ][NL],
                                          DATA_TYPE C[NJ][NM], DATA_TYPE D[NM][NL],
                                          DATA_TYPE G[NI][NL]) {
  int i, j, k;
  (void)ni, (void)nj, (void)nk, (void)nl, (void)nm;

  /* E := A*B */
  for (i = 0; i < NI; i++)
    for (j = 0; j < NJ; j++) {
      E[i][j] = SCALAR_VAL(0.0);
      for (k = 0; k < NK; ++k)
        E[i][j] += A[i][k] * B[k][j];
    }
  /* F := C*D */
  for (i = 0; i < NJ; i++)
    for (j = 0; j < NL; j++) {
      F[i][j] = SCALAR_VAL(0.0);
      #pragma omp tile sizes(50)
      for (k = 0; k < NM; ++k)
        F[i][j] += C[i][k] * D[k][j];
    }
  /* G := E*F */
  #pragma omp reverse
  for (i = 0; i < NI; i++)
    for (j = 0; j < NL; j++) {
      G[i][j] = SCALAR_VAL(0.0);
      for (k = 0; k < NJ; ++k)
        G[i][j] += E[i][k] * F[k][j];
    }
}

int main(void) {
  PB_ARRAY_2D(E, DATA_TYPE, NI, NJ);
  PB_ARRAY_2D(A, DATA_TYPE, NI, NK);
  PB_ARRAY_2D(B, DATA_TYPE, NK, NJ);
  PB_ARRAY_2D(F, DATA_TYPE, NJ, NL);
  PB_ARRAY_2D(C, DATA_TYPE, NJ, NM);
  PB_ARRAY_2D(D, DATA_TYPE, NM, NL);
  PB_ARRAY_2D(G, DATA_TYPE, NI, NL);

  init_array(NI, NJ, NK, NL, NM, A, B, C, D);

  pb_flush_cache();
  pb_timer_start();
  kernel_3mm(NI, NJ, NK, NL, NM, E, A, B, F, C, D, G);
  pb_timer_stop();
  pb_timer_print();

  pb_dump_start();
  pb_dump_array("G", &G[0][0], (size_t)NI * NL);
  pb_dump_finish();

  PB_FREE(E);
  PB_FREE(A);
  PB_FREE(B);
  PB_FREE(F);
  PB_FREE(C);
  PB_FREE(D);
  PB_FREE(G);
  return 0;
}
