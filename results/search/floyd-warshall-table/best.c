/* floyd-warshall: all-pairs shortest path lengths, in place -- moldtune code mold of
   floyd-warshall.c (the paper's section 4.6 case study, carried onto clang-22's OpenMP loop
   directives). Like PolyBench, the element type defaults to int for this kernel.

   Markers (values in floyd-warshall.yaml):
     P0  1: the paper's variant -- the whole (k,i,j) nest tiled (and reordered). ILLEGAL on general
         inputs: step k needs every (i,j) relaxed through k-1 first. Kept so that the output check
         (with PB_INPUT=random) can show it.
         0: the legal variants -- k stays the outermost loop, untiled; the (i,j) nest inside it is
         tiled, reordered and optionally parallelised.
     P1  (P0=1) "" or "#pragma omp interchange permutation(..)": reorders the tile (floor) loops
     P2  (P0=1) source order of the three loops as FOR_x macros (default "FOR_K FOR_I FOR_J")
     P3  (P0=1) tile size of the 1st loop of that order (the paper's first list)
     P4 P5  tile sizes of the next two loops (P0=1) or of the (i,j) nest (P0=0)
     P6  (P0=0) "" or "#pragma omp parallel for" on the outer generated loop of the (i,j) nest:
         legal, since row k and column k do not change during step k (path[k][k] >= 0), so the
         (i,j) updates of one step are independent
     P7  (P0=0) "" or "#pragma omp interchange": swaps the (i,j) tile (floor) loops
     P8  (P0=0) source order of the (i,j) nest, "FOR_I FOR_J" (PolyBench's) or "FOR_J FOR_I"
   The paper's "pack array(..)" has no upstream equivalent and is left out. No reshaping was
   needed: PolyBench's (k,i,j) nest is perfect and rectangular.

   Input: with PolyBench's own input every loop order gives the same output, so the space is
   run and checked with PB_INPUT=random (see floyd-warshall.c). */
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
  (void)n;

#if 0
#define FOR_K for (int k = 0; k < N; k++)
#define FOR_I for (int i = 0; i < N; i++)
#define FOR_J for (int j = 0; j < N; j++)

#pragma omp tile sizes(, 100, 256)
  
        path[i][j] = path[i][j] < path[i][k] + path[k][j] ? path[i][j] : path[i][k] + path[k][j];
#undef FOR_K
#undef FOR_I
#undef FOR_J
#else
#define FOR_I for (int i = 0; i < N; i++)
#define FOR_J for (int j = 0; j < N; j++)
  for (int k = 0; k < N; k++) {


#pragma omp tile sizes(100, 256)
    FOR_I FOR_J
          path[i][j] = path[i][j] < path[i][k] + path[k][j] ? path[i][j] : path[i][k] + path[k][j];
  }
#undef FOR_I
#undef FOR_J
#endif
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
