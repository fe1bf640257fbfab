/* lu: LU decomposition without pivoting, in place (PolyBench/C 4.2 kernel, written for moldtune
   on pb.h). */
#include "../harness/pb.h"

#if !defined(N)
#if defined(MINI_DATASET)
#define N 40
#elif defined(SMALL_DATASET)
#define N 120
#elif defined(MEDIUM_DATASET)
#define N 400
#elif defined(LARGE_DATASET)
#define N 2000
#else /* EXTRALARGE_DATASET */
#define N 4000
#endif
#endif

/* A lower-triangular L with unit diagonal, then A := L * L^T (positive semi-definite, as PolyBench
   builds it for cholesky and reuses for lu). */
static void init_array(int n, DATA_TYPE A[N][N]) {
  for (int i = 0; i < n; i++) {
    for (int j = 0; j <= i; j++) A[i][j] = (DATA_TYPE)(-j % n) / n + 1;
    for (int j = i + 1; j < n; j++) A[i][j] = 0;
    A[i][i] = 1;
  }
  PB_ARRAY_2D(B, DATA_TYPE, N, N);
  for (int r = 0; r < n; ++r)
    for (int s = 0; s < n; ++s) B[r][s] = 0;
  for (int t = 0; t < n; ++t)
    for (int r = 0; r < n; ++r)
      for (int s = 0; s < n; ++s) B[r][s] += A[r][t] * A[s][t];
  for (int r = 0; r < n; ++r)
    for (int s = 0; s < n; ++s) A[r][s] = B[r][s];
  PB_FREE(B);
}

__attribute__((noinline)) void kernel_lu(int n, DATA_TYPE A[N][N]) {
  int i, j, k;
  (void)n;

  #pragma omp tile sizes(256)
  for (i = 0; i < N; i++) {
    for (j = 0; j < i; j++) {
      #pragma omp unroll partial(8)
      for (k = 0; k < j; k++)
        A[i][j] -= A[i][k] * A[k][j];
      A[i][j] /= A[j][j];
    }
    #pragma omp interchange permutation(2,1)
    for (j = i; j < N; j++) {
      for (k = 0; k < i; k++)
        A[i][j] -= A[i][k] * A[k][j];
    }
  }
}

int main(void) {
  PB_ARRAY_2D(A, DATA_TYPE, N, N);

  init_array(N, A);

  pb_flush_cache();
  pb_timer_start();
  kernel_lu(N, A);
  pb_timer_stop();
  pb_timer_print();

  pb_dump_start();
  pb_dump_array("A", &A[0][0], (size_t)N * N);
  pb_dump_finish();

  PB_FREE(A);
  return 0;
}
