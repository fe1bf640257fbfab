/* floyd-warshall: all-pairs shortest path lengths, in place (PolyBench/C 4.2 kernel, written for
   moldtune on pb.h). Like PolyBench, the element type defaults to int for this kernel.

   Input: PolyBench's deterministic edge weights by default. With PB_INPUT=random the weights are
   pseudo-random (fixed seed, PB_SEED to change it): PolyBench's own input is so regular that every
   loop order of the kernel -- legal or not -- produces the same output, so an output check on it
   cannot reject an illegal transformation; random weights can. */
#if !defined(DATA_TYPE_IS_INT) && !defined(DATA_TYPE_IS_FLOAT) && !defined(DATA_TYPE_IS_DOUBLE)
#define DATA_TYPE_IS_INT
#endif
#include "../harness/pb.h"

#if !defined(N)
#if defined(MINI_DATASET)
#define N 60
#elif defined(SMALL_DATASET)
#define N 180
#elif defined(MEDIUM_DATASET)
#define N 500
#elif defined(LARGE_DATASET)
#define N 2800
#else /* EXTRALARGE_DATASET */
#define N 5600
#endif
#endif

static void init_array(int n, DATA_TYPE path[N][N]) {
  if (pb_input_random()) {
    /* A complete directed graph with weights 1..1000 and a zero diagonal: most shortest paths
       take several hops, so relaxing in the wrong order leaves visible errors. */
    for (int i = 0; i < n; i++)
      for (int j = 0; j < n; j++) path[i][j] = (i == j) ? 0 : pb_rand_int(1, 1000);
    return;
  }
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) {
      path[i][j] = i * j % 7 + 1;
      if ((i + j) % 13 == 0 || (i + j) % 7 == 0 || (i + j) % 11 == 0) path[i][j] = 999;
    }
}

__attribute__((noinline)) void kernel_floyd_warshall(int n, DATA_TYPE path[N][N]) {
  int i, j, k;
  (void)n;

  #pragma omp tile sizes(32)
  for (k = 0; k < N; k++) {
    #pragma omp tile sizes(50)
    for (i = 0; i < N; i++)
      #pragma omp tile sizes(96)
      for (j = 0; j < N; j++)
        path[i][j] = path[i][j] < path[i][k] + path[k][j] ? path[i][j] : path[i][k] + path[k][j];
  }
}

int main(void) {
  PB_ARRAY_2D(path, DATA_TYPE, N, N);

  init_array(N, path);

  pb_flush_cache();
  pb_timer_start();
  kernel_floyd_warshall(N, path);
  pb_timer_stop();
  pb_timer_print();

  pb_dump_start();
  pb_dump_array("path", &path[0][0], (size_t)N * N);
  pb_dump_finish();

  PB_FREE(path);
  return 0;
}
