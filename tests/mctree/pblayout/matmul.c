/* matmul.c -- a kernel in PolyBench/C 4.2's layout (written for moldtune's tests): sizes passed
   as parameters, arrays through the POLYBENCH_* macros, the kernel between #pragma scop and
   #pragma endscop, iterators declared at function scope, the arrays dumped to stderr only when
   compiled with -DPOLYBENCH_DUMP_ARRAYS. */
#include <minibench.h>

#ifndef N
#define N 96
#endif

static void init_array(int n, double POLYBENCH_2D(A, N, N, n, n), double POLYBENCH_2D(B, N, N, n, n)) {
  int i, j;
  for (i = 0; i < n; i++)
    for (j = 0; j < n; j++) {
      A[i][j] = (double)((i * j + 1) % n) / n;
      B[i][j] = (double)((i + 2 * j) % n) / n;
    }
}

static void print_array(int n, double POLYBENCH_2D(C, N, N, n, n)) {
  int i, j;
  for (i = 0; i < n; i++)
    for (j = 0; j < n; j++) {
      if ((i * n + j) % 20 == 0) fprintf(stderr, "\n");
      fprintf(stderr, "%0.2lf ", C[i][j]);
    }
  fprintf(stderr, "\n");
}

static void mm(int n, double POLYBENCH_2D(A, N, N, n, n), double POLYBENCH_2D(B, N, N, n, n),
               double POLYBENCH_2D(C, N, N, n, n)) {
  int i, j, k;
#pragma scop
  for (i = 0; i < _PB_N; i++)
    for (j = 0; j < _PB_N; j++)
      C[i][j] = 0.0;
  for (i = 0; i < _PB_N; i++)
    for (k = 0; k < _PB_N; k++)
      for (j = 0; j < _PB_N; j++)
        C[i][j] += A[i][k] * B[k][j];
#pragma endscop
}

int main(void) {
  int n = N;
  POLYBENCH_2D_ARRAY_DECL(A, double, N, N, n, n);
  POLYBENCH_2D_ARRAY_DECL(B, double, N, N, n, n);
  POLYBENCH_2D_ARRAY_DECL(C, double, N, N, n, n);
  init_array(n, POLYBENCH_ARRAY(A), POLYBENCH_ARRAY(B));
  polybench_start_instruments;
  mm(n, POLYBENCH_ARRAY(A), POLYBENCH_ARRAY(B), POLYBENCH_ARRAY(C));
  polybench_stop_instruments;
  polybench_print_instruments;
  polybench_prevent_dce(print_array(n, POLYBENCH_ARRAY(C)));
  POLYBENCH_FREE_ARRAY(A);
  POLYBENCH_FREE_ARRAY(B);
  POLYBENCH_FREE_ARRAY(C);
  return 0;
}
