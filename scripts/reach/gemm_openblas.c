/* gemm through OpenBLAS's cblas_dgemm on PolyBench's gemm data (the same init_array,
 * timer and dump as polybench/gemm/gemm.c), for scripts/reach.py's comparison. */
#include <cblas.h>
#include <stdio.h>
#include <string.h>

#include "../../polybench/harness/pb.h"

#ifndef NI
#define NI 1000
#define NJ 1100
#define NK 1200
#endif

static void init_array(double *alpha, double *beta, double *C, double *A, double *B) {
  *alpha = 1.5;
  *beta = 1.2;
  for (int i = 0; i < NI; i++)
    for (int j = 0; j < NJ; j++) C[i * NJ + j] = (double)((i * j + 1) % NI) / NI;
  for (int i = 0; i < NI; i++)
    for (int j = 0; j < NK; j++) A[i * NK + j] = (double)(i * (j + 1) % NK) / NK;
  for (int i = 0; i < NK; i++)
    for (int j = 0; j < NJ; j++) B[i * NJ + j] = (double)(i * (j + 2) % NJ) / NJ;
}

/* `gemm_openblas --core`: the kernel set OpenBLAS chose (OPENBLAS_CORETYPE overrides its
 * detection, which falls back to Prescott's SSE3 kernels on CPUs newer than its release). */
int main(int argc, char **argv) {
  if (argc > 1 && strcmp(argv[1], "--core") == 0) {
    puts(openblas_get_corename());
    return 0;
  }
  double alpha, beta;
  PB_ARRAY_1D(C, double, (size_t)NI * NJ);
  PB_ARRAY_1D(A, double, (size_t)NI * NK);
  PB_ARRAY_1D(B, double, (size_t)NK * NJ);
  init_array(&alpha, &beta, C, A, B);
  pb_flush_cache();
  pb_timer_start();
  cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, NI, NJ, NK, alpha, A, NK, B, NJ, beta,
              C, NJ);
  pb_timer_stop();
  pb_timer_print();
  pb_dump_start();
  pb_dump_array("C", C, (size_t)NI * NJ);
  pb_dump_finish();
  PB_FREE(C);
  PB_FREE(A);
  PB_FREE(B);
  return 0;
}
