/* covariance: cov := (data - mean)^T (data - mean) / (n - 1) for N points of M attributes
   (PolyBench/C 4.2 kernel, written for moldtune on pb.h). */
#include "../harness/pb.h"

#if !defined(M) && !defined(N)
#if defined(MINI_DATASET)
#define M 28
#define N 32
#elif defined(SMALL_DATASET)
#define M 80
#define N 100
#elif defined(MEDIUM_DATASET)
#define M 240
#define N 260
#elif defined(LARGE_DATASET)
#define M 1200
#define N 1400
#else /* EXTRALARGE_DATASET */
#define M 2600
#define N 3000
#endif
#endif

static void init_array(int m, int n, DATA_TYPE *float_n, DATA_TYPE data[N][M]) {
  (void)m, (void)n;
  *float_n = (DATA_TYPE)N;
  for (int i = 0; i < N; i++)
    for (int j = 0; j < M; j++) data[i][j] = ((DATA_TYPE)i * j) / M;
}

__attribute__((noinline)) void kernel_covariance(int m, int n, DATA_TYPE float_n,
                                                 DATA_TYPE data[N][M], DATA_TYPE cov[M][M],
                                                 DATA_TYPE mean[M]) {
  int i, j, k;
  (void)m, (void)n;

  #pragma omp tile sizes(32)
  for (j = 0; j < M; j++) {
    mean[j] = SCALAR_VAL(0.0);
    #pragma omp tile sizes(20)
    for (i = 0; i < N; i++)
      mean[j] += data[i][j];
    mean[j] /= float_n;
  }

  #pragma omp interchange permutation(2,1)
  for (i = 0; i < N; i++)
    for (j = 0; j < M; j++)
      data[i][j] -= mean[j];

  for (i = 0; i < M; i++)
    for (j = i; j < M; j++) {
      cov[i][j] = SCALAR_VAL(0.0);
      for (k = 0; k < N; k++)
        cov[i][j] += data[k][i] * data[k][j];
      cov[i][j] /= (float_n - SCALAR_VAL(1.0));
      cov[j][i] = cov[i][j];
    }
}

int main(void) {
  DATA_TYPE float_n;
  PB_ARRAY_2D(data, DATA_TYPE, N, M);
  PB_ARRAY_2D(cov, DATA_TYPE, M, M);
  PB_ARRAY_1D(mean, DATA_TYPE, M);

  init_array(M, N, &float_n, data);

  pb_flush_cache();
  pb_timer_start();
  kernel_covariance(M, N, float_n, data, cov, mean);
  pb_timer_stop();
  pb_timer_print();

  pb_dump_start();
  pb_dump_array("cov", &cov[0][0], (size_t)M * M);
  pb_dump_finish();

  PB_FREE(data);
  PB_FREE(cov);
  PB_FREE(mean);
  return 0;
}
