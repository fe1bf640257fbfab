/* gemm: C := alpha*A*B + beta*C -- moldtune's reach mold (issue 41): the loops of a BLIS-like
   kernel written in plain C, their sizes and choices left to the search. Blocks of B (TK x TJ)
   are walked in order and optionally packed; inside, blocks of TI rows of A are optionally
   packed into micro-panels (alpha folded in); a register tile of RI rows by RJ vectors of C is
   held in local accumulators over the block's k range -- the register tiling / unroll-and-jam
   the paper's space lacks.

   Markers (values in gemm-reach.yaml):
     TJ TK   the block of B (columns x rows) kept in cache
     TI      the block of rows of A (rounded down to a multiple of RI) kept in cache
     RI RJ   the register tile: RI rows of C by RJ vectors of VW doubles
     PACKA   1: copy alpha * the block of A into RI-row micro-panels, k-major (one stream)
     PACKB   0: B in place; 1: the block copied into a contiguous panel (row stride TJ);
             2: copied into W-column micro-panels, k-major (one stream per tile)
     VEC     0: the tile as arrays, vectorised by clang; 1: as vector-extension types at the
             full vector width (min_vector_width: clang otherwise splits 512-bit vectors in two
             on the Xeons it tunes for 256-bit ones)
     ORDER   0: row tiles outer, column strips inner; 1: strips outer (BLIS's order)
     PAR     "" or "#pragma omp parallel for" on the outer of those two loops (each tile of C
             is written by one iteration only: legal for every size)

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
#define TK 256
#define RI 6
#define RJ 4
#define TI (24 / RI * RI > 0 ? 24 / RI * RI : RI)
#define PACKA 1
#define PACKB 0
#define VEC 1
#define ORDER 1
#if defined(__AVX512F__)
#define VW 8
#elif defined(__AVX__)
#define VW 4
#else
#define VW 2
#endif
#if defined(__x86_64__)
#define WIDEST __attribute__((min_vector_width(VW * 64)))
#else
#define WIDEST
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

/* The register tile: rows i0 .. i0+RI-1, columns j0 .. j0+W-1 of C over kc values of k.
   Element (r, k) of A's part is scale * a[r * ars + k * aks] (scale is 1 when alpha is packed
   in); row k of B's part starts at b + k * ldb. */
#if VEC
typedef DATA_TYPE vd __attribute__((vector_size(VW * sizeof(DATA_TYPE)), aligned(sizeof(DATA_TYPE))));
WIDEST static inline void micro(DATA_TYPE C[NI][NJ], int i0, int j0, const DATA_TYPE *a, int ars,
                                int aks, DATA_TYPE scale, const DATA_TYPE *b, int ldb, int kc) {
  vd c[RI][RJ];
  for (int r = 0; r < RI; r++)
    for (int v = 0; v < RJ; v++) c[r][v] = *(const vd *)&C[i0 + r][j0 + v * VW];
  for (int k = 0; k < kc; k++) {
    vd bk[RJ];
    for (int v = 0; v < RJ; v++) bk[v] = *(const vd *)(b + (size_t)k * ldb + v * VW);
    for (int r = 0; r < RI; r++) {
      DATA_TYPE x = scale * a[r * ars + k * aks];
      for (int v = 0; v < RJ; v++) c[r][v] += x * bk[v];
    }
  }
  for (int r = 0; r < RI; r++)
    for (int v = 0; v < RJ; v++) *(vd *)&C[i0 + r][j0 + v * VW] = c[r][v];
}
#else
static inline void micro(DATA_TYPE C[NI][NJ], int i0, int j0, const DATA_TYPE *a, int ars, int aks,
                         DATA_TYPE scale, const DATA_TYPE *b, int ldb, int kc) {
  DATA_TYPE c[RI][W];
  for (int r = 0; r < RI; r++)
    for (int v = 0; v < W; v++) c[r][v] = C[i0 + r][j0 + v];
  for (int k = 0; k < kc; k++) {
    const DATA_TYPE *bk = b + (size_t)k * ldb;
    for (int r = 0; r < RI; r++) {
      DATA_TYPE x = scale * a[r * ars + k * aks];
      for (int v = 0; v < W; v++) c[r][v] += x * bk[v];
    }
  }
  for (int r = 0; r < RI; r++)
    for (int v = 0; v < W; v++) C[i0 + r][j0 + v] = c[r][v];
}
#endif

/* What the register tiles do not cover (the last rows and columns), element by element. */
static void edge(DATA_TYPE alpha, DATA_TYPE C[NI][NJ], DATA_TYPE A[NI][NK], DATA_TYPE B[NK][NJ],
                 int i0, int i1, int j0, int j1, int k0, int k1) {
  for (int i = i0; i < i1; i++)
    for (int k = k0; k < k1; k++)
      for (int j = j0; j < j1; j++) C[i][j] += alpha * A[i][k] * B[k][j];
}

static DATA_TYPE bpack[TK * TJ] __attribute__((aligned(64)));
static DATA_TYPE apack[TI * TK] __attribute__((aligned(64)));

/* B's block (rows kk..kk+kc, columns jj..jj+W*strips) as PACKB lays it out; its base and row
   stride, and how far apart its strips are. */
static const DATA_TYPE *pack_b(DATA_TYPE B[NK][NJ], int kk, int kc, int jj, int strips, int *ldb,
                               int *step) {
  *ldb = PACKB == 0 ? NJ : PACKB == 1 ? TJ : W;
  *step = PACKB == 2 ? kc * W : W;
  if (PACKB == 0)
    return &B[kk][jj];
  for (int s = 0; s < strips; s++)
    for (int k = 0; k < kc; k++)
      for (int v = 0; v < W; v++)
        bpack[PACKB == 1 ? k * TJ + s * W + v : (s * kc + k) * W + v] = B[kk + k][jj + s * W + v];
  return bpack;
}

/* A's block (rows ii..ii+RI*tiles, columns kk..kk+kc) as PACKA lays it out, alpha folded in
   when packed; its strides and how far apart its tiles are. */
static const DATA_TYPE *pack_a(DATA_TYPE alpha, DATA_TYPE A[NI][NK], int ii, int tiles, int kk,
                               int kc, int *ars, int *aks, int *step) {
  *ars = PACKA ? 1 : NK;
  *aks = PACKA ? RI : 1;
  *step = PACKA ? kc * RI : RI * NK;
  if (!PACKA)
    return &A[ii][kk];
  for (int t = 0; t < tiles; t++)
    for (int k = 0; k < kc; k++)
      for (int r = 0; r < RI; r++) apack[(t * kc + k) * RI + r] = alpha * A[ii + t * RI + r][kk + k];
  return apack;
}

/* One block: rows ii..ii+RI*tiles of C, columns jj..je, k from kk: a and b are A's and B's
   parts as packed, with their strides. */
struct part {
  const DATA_TYPE *a, *b;
  int ars, aks, astep, ldb, bstep, ii, tiles, jj, strips, je, kk, kc;
};

/* The block's tiles, and the columns right of its last strip, which the tile loop's iterations
   share out too (so that threads do not wait on them). */
static void block(DATA_TYPE alpha, DATA_TYPE C[NI][NJ], DATA_TYPE A[NI][NK], DATA_TYPE B[NK][NJ],
                  const struct part *p) {
  const DATA_TYPE scale = PACKA ? 1 : alpha;
  const int cols = p->jj + p->strips * W, k1 = p->kk + p->kc;
#define TILE(t, s)                                                                                 \
  micro(C, p->ii + (t) * RI, p->jj + (s) * W, p->a + (t) * p->astep, p->ars, p->aks, scale,        \
        p->b + (s) * p->bstep, p->ldb, p->kc)
#if ORDER == 0

  for (int t = 0; t < p->tiles; t++) {
    for (int s = 0; s < p->strips; s++) TILE(t, s);
    edge(alpha, C, A, B, p->ii + t * RI, p->ii + t * RI + RI, cols, p->je, p->kk, k1);
  }
#else

  for (int s = 0; s <= p->strips; s++) {
    if (s < p->strips)
      for (int t = 0; t < p->tiles; t++) TILE(t, s);
    else
      edge(alpha, C, A, B, p->ii, p->ii + p->tiles * RI, cols, p->je, p->kk, k1);
  }
#endif
#undef TILE
}

__attribute__((noinline)) void kernel_gemm(int ni, int nj, int nk, DATA_TYPE alpha, DATA_TYPE beta,
                                           DATA_TYPE C[NI][NJ], DATA_TYPE A[NI][NK],
                                           DATA_TYPE B[NK][NJ]) {
  (void)ni, (void)nj, (void)nk;
  for (int i = 0; i < NI; i++)
    for (int j = 0; j < NJ; j++) C[i][j] *= beta;
  struct part p;
  for (p.jj = 0; p.jj < NJ; p.jj += TJ) {
    p.je = MIN(p.jj + TJ, NJ);
    p.strips = (p.je - p.jj) / W;
    for (p.kk = 0; p.kk < NK; p.kk += TK) {
      p.kc = MIN(TK, NK - p.kk);
      p.b = pack_b(B, p.kk, p.kc, p.jj, p.strips, &p.ldb, &p.bstep);
      for (p.ii = 0; p.ii < NI; p.ii += TI) {
        const int ie = MIN(p.ii + TI, NI);
        p.tiles = (ie - p.ii) / RI;
        p.a = pack_a(alpha, A, p.ii, p.tiles, p.kk, p.kc, &p.ars, &p.aks, &p.astep);
        block(alpha, C, A, B, &p);
        edge(alpha, C, A, B, p.ii + p.tiles * RI, ie, p.jj, p.je, p.kk, p.kk + p.kc);
      }
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
