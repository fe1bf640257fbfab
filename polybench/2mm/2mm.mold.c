/* 2mm: tmp := alpha*A*B; D := beta*D + tmp*C -- moldtune code mold of 2mm.c.

   Markers (values in 2mm-table.yaml):
     P0 P2  "" or "#pragma omp parallel for" on the outermost generated loop of the first / second
            product: legal unless that loop is k (the reduction loop), where threads race on the
            same elements and the output check fails (the table keeps those configurations: they are
            the failures that depend on a combination, not on one value)
     P1 P3  the source loop order of the first / second product as FOR_x macros (default
            "FOR_I FOR_J FOR_K" = PolyBench's order)
     P4     "" or "#pragma omp tile sizes(..)" applied to both products' nests (in their order)

   Reshaped (results unchanged, bit for bit): PolyBench zeroes tmp[i][j] and scales D[i][j] by beta
   between the j and k loop headers; both are split into their own nest in front of the product, so
   the (i,j,k) nest is perfect and can be reordered and tiled. Every element still sees its k
   updates in increasing k order in every loop order and tiling. */
#include "../harness/pb.h"

#if !defined(NI) && !defined(NJ) && !defined(NK) && !defined(NL)
#if defined(MINI_DATASET)
#define NI 16
#define NJ 18
#define NK 22
#define NL 24
#elif defined(SMALL_DATASET)
#define NI 40
#define NJ 50
#define NK 70
#define NL 80
#elif defined(MEDIUM_DATASET)
#define NI 180
#define NJ 190
#define NK 210
#define NL 220
#elif defined(LARGE_DATASET)
#define NI 800
#define NJ 900
#define NK 1100
#define NL 1200
#else /* EXTRALARGE_DATASET */
#define NI 1600
#define NJ 1800
#define NK 2200
#define NL 2400
#endif
#endif

static void init_array(int ni, int nj, int nk, int nl, DATA_TYPE *alpha, DATA_TYPE *beta,
                       DATA_TYPE A[NI][NK], DATA_TYPE B[NK][NJ], DATA_TYPE C[NJ][NL],
                       DATA_TYPE D[NI][NL]) {
  *alpha = 1.5;
  *beta = 1.2;
  for (int i = 0; i < ni; i++)
    for (int j = 0; j < nk; j++) A[i][j] = (DATA_TYPE)((i * j + 1) % ni) / ni;
  for (int i = 0; i < nk; i++)
    for (int j = 0; j < nj; j++) B[i][j] = (DATA_TYPE)(i * (j + 1) % nj) / nj;
  for (int i = 0; i < nj; i++)
    for (int j = 0; j < nl; j++) C[i][j] = (DATA_TYPE)((i * (j + 3) + 1) % nl) / nl;
  for (int i = 0; i < ni; i++)
    for (int j = 0; j < nl; j++) D[i][j] = (DATA_TYPE)(i * (j + 2) % nk) / nk;
}

__attribute__((noinline)) void kernel_2mm(int ni, int nj, int nk, int nl, DATA_TYPE alpha,
                                          DATA_TYPE beta, DATA_TYPE tmp[NI][NJ],
                                          DATA_TYPE A[NI][NK], DATA_TYPE B[NK][NJ],
                                          DATA_TYPE C[NJ][NL], DATA_TYPE D[NI][NL]) {
  (void)ni, (void)nj, (void)nk, (void)nl;

  /* tmp := alpha*A*B */
  for (int i = 0; i < NI; i++)
    for (int j = 0; j < NJ; j++)
      tmp[i][j] = SCALAR_VAL(0.0);
#define FOR_I for (int i = 0; i < NI; i++)
#define FOR_J for (int j = 0; j < NJ; j++)
#define FOR_K for (int k = 0; k < NK; k++)
#P0
#P4
  #P1
        tmp[i][j] += alpha * A[i][k] * B[k][j];
#undef FOR_I
#undef FOR_J
#undef FOR_K

  /* D := beta*D + tmp*C */
  for (int i = 0; i < NI; i++)
    for (int j = 0; j < NL; j++)
      D[i][j] *= beta;
#define FOR_I for (int i = 0; i < NI; i++)
#define FOR_J for (int j = 0; j < NL; j++)
#define FOR_K for (int k = 0; k < NJ; k++)
#P2
#P4
  #P3
        D[i][j] += tmp[i][k] * C[k][j];
#undef FOR_I
#undef FOR_J
#undef FOR_K
}

int main(void) {
  DATA_TYPE alpha, beta;
  PB_ARRAY_2D(tmp, DATA_TYPE, NI, NJ);
  PB_ARRAY_2D(A, DATA_TYPE, NI, NK);
  PB_ARRAY_2D(B, DATA_TYPE, NK, NJ);
  PB_ARRAY_2D(C, DATA_TYPE, NJ, NL);
  PB_ARRAY_2D(D, DATA_TYPE, NI, NL);

  init_array(NI, NJ, NK, NL, &alpha, &beta, A, B, C, D);

  pb_flush_cache();
  pb_timer_start();
  kernel_2mm(NI, NJ, NK, NL, alpha, beta, tmp, A, B, C, D);
  pb_timer_stop();
  pb_timer_print();

  pb_dump_start();
  pb_dump_array("D", &D[0][0], (size_t)NI * NL);
  pb_dump_finish();

  PB_FREE(tmp);
  PB_FREE(A);
  PB_FREE(B);
  PB_FREE(C);
  PB_FREE(D);
  return 0;
}
