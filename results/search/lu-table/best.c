/* lu: LU decomposition without pivoting, in place -- moldtune code mold of lu.c (the paper's
   section 4.3 case study, carried onto clang-22's OpenMP loop directives).

   Row i is computed in two parts, L (columns j < i) and U (columns j >= i); the outer i loop
   carries dependences and stays as it is. Each part is a 2-deep (j,k) nest that is transformed.
   Markers (values in lu.yaml):
     P0  L part: "" or "#pragma omp interchange" -- swaps the tile (floor) loops
     P1  L part: source loop order, "FOR_J FOR_K" (PolyBench's) or "FOR_K FOR_J"
     P2  U part: "" or "#pragma omp parallel for" on the outermost generated loop; legal only when
         that loop is j -- lu.yaml forbids the combinations that put k outermost
     P3  tile size of the outer loop of both parts (the paper's first list)
     P4  tile size of the inner loop of the L part (the paper's second list)
     P5  tile size of the inner loop of the U part (the paper's third list)
     P6  U part: "" or "#pragma omp interchange" -- swaps the tile (floor) loops
     P7  U part: source loop order, "FOR_J FOR_K" (PolyBench's) or "FOR_K FOR_J"
   The paper's "pack array(A)" has no upstream equivalent and is left out.

   Reshaped (results unchanged, bit for bit): the L part is imperfect (the division by the pivot
   sits after the k loop) and triangular (k < j). It becomes one perfect, rectangular j < i, k < i
   nest whose body updates when k < j and divides when k == j. Per element the operations are the
   same (updates in increasing k, then the division), and the only dependence between elements --
   A[i][k] must be final (divided at (k,k)) before (j,k) uses it -- has distance (j-k, 0), which every
   tiling and loop order keeps. So k-outer ("right-looking") orders are legal too. The U part's
   bounds depend only on i, which is outside the transformed nest, so it is used as it is. (The
   paper's lu mold split the two parts into two separate i loops, which reorders row i's L part
   before the U parts of earlier rows' -- not the same computation.) */
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
  (void)n;

  for (int i = 0; i < N; i++) {
    /* L part: columns j < i of row i */
#define FOR_J for (int j = 0; j < i; j++)
#define FOR_K for (int k = 0; k < i; k++)

#pragma omp tile sizes(96, 2048)
    FOR_K FOR_J
        {
          if (k < j)
            A[i][j] -= A[i][k] * A[k][j];
          else if (k == j)
            A[i][j] /= A[j][j];
        }
#undef FOR_J
#undef FOR_K

    /* U part: columns j >= i of row i */
#define FOR_J for (int j = i; j < N; j++)
#define FOR_K for (int k = 0; k < i; k++)


#pragma omp tile sizes(96, 256)
    FOR_K FOR_J
        A[i][j] -= A[i][k] * A[k][j];
#undef FOR_J
#undef FOR_K
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
