/* gemm: C := alpha*A*B + beta*C -- moldtune's reach mold (issue 41): the shape of a BLIS-like
   kernel written in plain C, its sizes left to the search. Blocks of B (TK x TJ) are walked in
   order, optionally packed into a contiguous panel; inside a block, a register tile of RI rows by
   RJ vectors of C is held in local accumulators over the block's k range (clang keeps them in
   registers when they fit), which is the register tiling / unroll-and-jam the paper's space lacks.

   Markers (values in gemm-reach.yaml):
     TJ TK   the block of B (columns x rows) kept in cache
     RI RJ   the register tile: RI rows of C by RJ vectors of VW doubles
     PACK    1: copy each block of B into a contiguous panel first
     PAR     "" or "#pragma omp parallel for" on the loop over row tiles (rows of C are
             independent: legal for every size)

   Every element of C still sees its k updates in increasing k order, each as
   C += (alpha*A[i][k])*B[k][j] as in gemm.c, so outputs agree with it up to rounding. */
#include "../harness/pb.h"

#if !defined(NI) && !defined(NJ) && !defined(NK)
#if defined(MINI_DATASET)
#define NI 20
#define NJ 25
#define NK 30
#elif defined(SMALL_DATASET)
#define NI 60
#define NJ 70
#define NK 80
#elif defined(MEDIUM_DATASET)
#define NI 200
#define NJ 220
#define NK 240
#elif defined(LARGE_DATASET)
#define NI 1000
#define NJ 1100
#define NK 1200
#else /* EXTRALARGE_DATASET */
#define NI 2000
#define NJ 2300
#define NK 2600
#endif
#endif

#define TJ 1100
#define TK 64
#define RI 6
#define RJ 2
#define PACK 0
#if defined(__AVX512F__)
#define VW 8
#elif defined(__AVX__)
#define VW 4
#else
#define VW 2
#endif
#define W (RJ * VW)
#define MIN(a, b) ((a) < (b) ? (a) : (b))

static void init_array(int ni, int nj, int nk, DATA_TYPE *alpha, DATA_TYPE *beta,
                       DATA_TYPE C[NI][NJ], DATA_TYPE A[NI][NK], DATA_TYPE B[NK][NJ]) {
  *alpha = 1.5;
  *beta = 1.2;
  for (int i = 0; i < ni; i++)
    for (int j = 0; j < nj; j++) C[i][j] = (DATA_TYPE)((i * j + 1) % ni) / ni;
  for (int i = 0; i < ni; i++)
    for (int j = 0; j < nk; j++) A[i][j] = (DATA_TYPE)(i * (j + 1) % nk) / nk;
  for (int i = 0; i < nk; i++)
    for (int j = 0; j < nj; j++) B[i][j] = (DATA_TYPE)(i * (j + 2) % nj) / nj;
}

/* Rows i0 .. i0+RI-1, columns j0 .. j0+W-1 of C over k in [k0, k1): the register tile. `b` is
   the block of B (row stride ldb, column 0 = j0). */
static inline void micro(DATA_TYPE alpha, DATA_TYPE C[NI][NJ], DATA_TYPE A[NI][NK],
                         const DATA_TYPE *b, int ldb, int i0, int j0, int k0, int k1) {
  DATA_TYPE c[RI][W];
  for (int r = 0; r < RI; r++)
    for (int v = 0; v < W; v++) c[r][v] = C[i0 + r][j0 + v];
  for (int k = k0; k < k1; k++) {
    const DATA_TYPE *bk = b + (size_t)(k - k0) * ldb;
    for (int r = 0; r < RI; r++) {
      DATA_TYPE a = alpha * A[i0 + r][k];
      for (int v = 0; v < W; v++) c[r][v] += a * bk[v];
    }
  }
  for (int r = 0; r < RI; r++)
    for (int v = 0; v < W; v++) C[i0 + r][j0 + v] = c[r][v];
}

/* What the register tile does not cover (the last rows and columns), element by element. */
static void edge(DATA_TYPE alpha, DATA_TYPE C[NI][NJ], DATA_TYPE A[NI][NK], DATA_TYPE B[NK][NJ],
                 int i0, int i1, int j0, int j1, int k0, int k1) {
  for (int i = i0; i < i1; i++)
    for (int k = k0; k < k1; k++)
      for (int j = j0; j < j1; j++) C[i][j] += alpha * A[i][k] * B[k][j];
}

static DATA_TYPE panel[TK * TJ];

__attribute__((noinline)) void kernel_gemm(int ni, int nj, int nk, DATA_TYPE alpha, DATA_TYPE beta,
                                           DATA_TYPE C[NI][NJ], DATA_TYPE A[NI][NK],
                                           DATA_TYPE B[NK][NJ]) {
  (void)ni, (void)nj, (void)nk;
  for (int i = 0; i < NI; i++)
    for (int j = 0; j < NJ; j++) C[i][j] *= beta;
  const int rows = NI / RI * RI;
  for (int jj = 0; jj < NJ; jj += TJ) {
    const int je = MIN(jj + TJ, NJ), cols = jj + (je - jj) / W * W;
    for (int kk = 0; kk < NK; kk += TK) {
      const int ke = MIN(kk + TK, NK);
      const DATA_TYPE *b = &B[kk][jj];
      int ldb = NJ;
      if (PACK) {
        for (int k = kk; k < ke; k++)
          for (int j = jj; j < je; j++) panel[(k - kk) * TJ + (j - jj)] = B[k][j];
        b = panel;
        ldb = TJ;
      }
#pragma omp parallel for
      for (int i = 0; i < rows; i += RI) {
        for (int j = jj; j < cols; j += W) micro(alpha, C, A, b + (j - jj), ldb, i, j, kk, ke);
        edge(alpha, C, A, B, i, i + RI, cols, je, kk, ke);
      }
      edge(alpha, C, A, B, rows, NI, jj, je, kk, ke);
    }
  }
}

int main(void) {
  DATA_TYPE alpha, beta;
  PB_ARRAY_2D(C, DATA_TYPE, NI, NJ);
  PB_ARRAY_2D(A, DATA_TYPE, NI, NK);
  PB_ARRAY_2D(B, DATA_TYPE, NK, NJ);

  init_array(NI, NJ, NK, &alpha, &beta, C, A, B);

  pb_flush_cache();
  pb_timer_start();
  kernel_gemm(NI, NJ, NK, alpha, beta, C, A, B);
  pb_timer_stop();
  pb_timer_print();

  pb_dump_start();
  pb_dump_array("C", &C[0][0], (size_t)NI * NJ);
  pb_dump_finish();

  PB_FREE(C);
  PB_FREE(A);
  PB_FREE(B);
  return 0;
}
