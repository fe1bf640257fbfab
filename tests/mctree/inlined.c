/* A kernel in PolyBench's style: `static`, called once from `main`, so clang inlines it at
   -O2 and no symbol `kernel_inlined` is left; only the parallel region outlined from it
   (`kernel_inlined.omp_outlined`) keeps the kernel's name. */
#include <stdio.h>
#include <stdlib.h>

#define N 96

static double A[N][N], B[N][N], C[N][N], D[N][N];

static void kernel_inlined(int n) {
  int i, j, k;
  for (i = 0; i < n; i++)
    for (j = 0; j < n; j++)
      for (k = 0; k < n; k++)
        C[i][j] += A[i][k] * B[k][j];
  for (i = 0; i < n; i++)
    for (j = 0; j < n; j++)
      D[i][j] = 2.0 * C[i][j] + A[j][i];
}

int main(void) {
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++) {
      A[i][j] = (double)((i * j + 1) % N) / N;
      B[i][j] = (double)((i + 2 * j) % N) / N;
      C[i][j] = 0.0;
    }
  kernel_inlined(N);
  if (getenv("PB_DUMP"))
    for (int i = 0; i < N; i++)
      for (int j = 0; j < N; j++)
        fprintf(stderr, "%0.6f\n", D[i][j]);
  return 0;
}
