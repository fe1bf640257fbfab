/* A small matrix-multiply mold: C = A * B (N x N doubles), tuned by moldtune.
 * #P0, #P1: tile sizes of the (i, j) loops; #P2: an interchange of the two floor loops or
 * nothing; #P3: a deliberately broken choice ("skip") that computes a wrong answer, so the
 * output check has something to catch.
 * The program prints the kernel time (seconds) alone on stdout; with MT_DUMP=1 it also
 * prints the result matrix on stderr for the output check. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#ifndef N
#define N 256
#endif

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

__attribute__((noinline)) void kernel_matmul(int n, double C[N][N], double A[N][N], double B[N][N]) {
  int skip = #P3;
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++)
      C[i][j] = 0.0;
  #P2
  #pragma omp tile sizes(#P0, #P1)
  for (int i = 0; i < n; i++)
    for (int k = 0; k < n; k++)
      for (int j = 0; j < n; j++)
        C[i][j] += A[i][k] * B[k][j];
  if (skip)
    C[n / 2][n / 3] += 1.0;
}

int main(void) {
  double (*A)[N] = malloc(sizeof(double[N][N]));
  double (*B)[N] = malloc(sizeof(double[N][N]));
  double (*C)[N] = malloc(sizeof(double[N][N]));
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++) {
      A[i][j] = (double)((i * j + 1) % N) / N;
      B[i][j] = (double)((i + 2 * j) % N) / N;
    }
  double t0 = now();
  kernel_matmul(N, C, A, B);
  double t1 = now();
  printf("%0.6f\n", t1 - t0);
  const char *dump = getenv("MT_DUMP");
  if (dump && dump[0] == '1') {
    for (int i = 0; i < N; i++) {
      for (int j = 0; j < N; j++)
        fprintf(stderr, "%.10g ", C[i][j]);
      fputc('\n', stderr);
    }
  }
  free(A);
  free(B);
  free(C);
  return 0;
}
