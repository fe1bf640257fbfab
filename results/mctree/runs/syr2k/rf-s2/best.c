/* syr2k: C := alpha*A*B^T + alpha*B*A^T + beta*C on the lower triangle of C
   (PolyBench/C 4.2 kernel, written for moldtune on pb.h). */
#include "../harness/pb.h"

#if !defined(M) && !defined(N)
#if defined(MINI_DATASET)
#define M 20
#define N 30
#elif defined(SMALL_DATASET)
#define M 60
#define N 80
#elif defined(MEDIUM_DATASET)
#define M 200
#define N 240
#elif defined(LARGE_DATASET)
#define M 1000
#define N 1200
#else /* EXTRALARGE_DATASET */
#define M 2000
#define N 2600
#endif
#endif

static void init_array(int n, int m, DATA_TYPE *alpha, DATA_TYPE *beta, DATA_TYPE C[N][N],
                       DATA_TYPE A[N][M], DATA_TYPE B[N][M]) {
  *alpha = 1.5;
  *beta = 1.2;
  for (int i = 0; i < n; i++)
    for (int j = 0; j < m; j++) {
      A[i][j] = (DATA_TYPE)((i * j + 1) % n) / n;
      B[i][j] = (DATA_TYPE)((i * j + 2) % m) / m;
    }
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) C[i][j] = (DATA_TYPE)((i * j + 3) % n) / m;
}

__attribute__((noinline)) void kernel_syr2k(int n, int m, DATA_TYPE alpha, DATA_TYPE beta,
                                            DATA_TYPE C[N][N], DATA_TYPE A[N][M],
                                            DATA_TYPE B[N][M]) {
  int i, j, k;
  (void)n, (void)m;

  #pragma omp tile sizes(100)
  for (i = 0; i < N; i++) {
    #pragma omp tile sizes(96)
    for (j = 0; j <= i; j++)
      C[i][j] *= beta;
    #pragma omp tile sizes(128,80)
    for (k = 0; k < M; k++)
      for (j = 0; j <= i; j++)
        C[i][j] += A[j][k] * alpha * B[i][k] + B[j][k] * alpha * A[i][k];
  }
}

int main(void) {
  DATA_TYPE alpha, beta;
  PB_ARRAY_2D(C, DATA_TYPE, N, N);
  PB_ARRAY_2D(A, DATA_TYPE, N, M);
  PB_ARRAY_2D(B, DATA_TYPE, N, M);

  init_array(N, M, &alpha, &beta, C, A, B);

  pb_flush_cache();
  pb_timer_start();
  kernel_syr2k(N, M, alpha, beta, C, A, B);
  pb_timer_stop();
  pb_timer_print();

  pb_dump_start();
  pb_dump_array("C", &C[0][0], (size_t)N * N);
  pb_dump_finish();

  PB_FREE(C);
  PB_FREE(A);
  PB_FREE(B);
  return 0;
}
