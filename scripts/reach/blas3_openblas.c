/* A BLAS-3 kernel of PolyBench/C 4.2.1 through OpenBLAS, for scripts/blas3.py: the benchmark's
 * own file is included (its init_array and print_array, its dataset sizes and timer), and its
 * kernel replaced by the OpenBLAS routine computing the same thing on the same data.
 *
 *   clang-22 -O3 -DPOLYBENCH_TIME -DLARGE_DATASET -DKERNEL_SYRK '-DKERNEL_FILE="syrk.c"'
 *            -I<pb>/utilities -I<pb>/linear-algebra/blas/syrk blas3_openblas.c
 *            <pb>/utilities/polybench.c -lopenblas -lm
 *
 * (run() takes argc and argv: polybench_prevent_dce reads them.)
 * `--core` prints the kernel set OpenBLAS chose (OPENBLAS_CORETYPE overrides it).
 * The routines, as PolyBench defines each kernel (row-major, its lower triangles):
 *   gemm   C := alpha A B + beta C                   dgemm
 *   syrk   C := alpha A A^T + beta C (lower)         dsyrk lower
 *   syr2k  C := alpha (A B^T + B A^T) + beta C       dsyr2k lower
 *   symm   C := alpha A B + beta C, A symmetric      dsymm left lower
 *   trmm   B := alpha A^T B, A unit lower            dtrmm left lower transposed unit
 *   2mm    D := alpha A B C + beta D                 two dgemm
 *   3mm    G := (A B) (C D)                          three dgemm */
#include <cblas.h>
#include <stdio.h>
#include <string.h>

#define main polybench_main
#include KERNEL_FILE
#undef main

#define RAW(x) (&(POLYBENCH_ARRAY(x))[0][0])

static void run(int argc, char **argv);

int main(int argc, char **argv) {
  if (argc > 1 && strcmp(argv[1], "--core") == 0) {
    puts(openblas_get_corename());
    return 0;
  }
  run(argc, argv);
  return 0;
}

#if defined(KERNEL_GEMM)
static void run(int argc, char **argv) {
  int ni = NI, nj = NJ, nk = NK;
  DATA_TYPE alpha, beta;
  POLYBENCH_2D_ARRAY_DECL(C, DATA_TYPE, NI, NJ, ni, nj);
  POLYBENCH_2D_ARRAY_DECL(A, DATA_TYPE, NI, NK, ni, nk);
  POLYBENCH_2D_ARRAY_DECL(B, DATA_TYPE, NK, NJ, nk, nj);
  init_array(ni, nj, nk, &alpha, &beta, POLYBENCH_ARRAY(C), POLYBENCH_ARRAY(A),
             POLYBENCH_ARRAY(B));
  polybench_start_instruments;
  cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, ni, nj, nk, alpha, RAW(A), NK, RAW(B),
              NJ, beta, RAW(C), NJ);
  polybench_stop_instruments;
  polybench_print_instruments;
  polybench_prevent_dce(print_array(ni, nj, POLYBENCH_ARRAY(C)));
  POLYBENCH_FREE_ARRAY(C);
  POLYBENCH_FREE_ARRAY(A);
  POLYBENCH_FREE_ARRAY(B);
}
#elif defined(KERNEL_SYRK)
static void run(int argc, char **argv) {
  int n = N, m = M;
  DATA_TYPE alpha, beta;
  POLYBENCH_2D_ARRAY_DECL(C, DATA_TYPE, N, N, n, n);
  POLYBENCH_2D_ARRAY_DECL(A, DATA_TYPE, N, M, n, m);
  init_array(n, m, &alpha, &beta, POLYBENCH_ARRAY(C), POLYBENCH_ARRAY(A));
  polybench_start_instruments;
  cblas_dsyrk(CblasRowMajor, CblasLower, CblasNoTrans, n, m, alpha, RAW(A), M, beta, RAW(C), N);
  polybench_stop_instruments;
  polybench_print_instruments;
  polybench_prevent_dce(print_array(n, POLYBENCH_ARRAY(C)));
  POLYBENCH_FREE_ARRAY(C);
  POLYBENCH_FREE_ARRAY(A);
}
#elif defined(KERNEL_SYR2K)
static void run(int argc, char **argv) {
  int n = N, m = M;
  DATA_TYPE alpha, beta;
  POLYBENCH_2D_ARRAY_DECL(C, DATA_TYPE, N, N, n, n);
  POLYBENCH_2D_ARRAY_DECL(A, DATA_TYPE, N, M, n, m);
  POLYBENCH_2D_ARRAY_DECL(B, DATA_TYPE, N, M, n, m);
  init_array(n, m, &alpha, &beta, POLYBENCH_ARRAY(C), POLYBENCH_ARRAY(A), POLYBENCH_ARRAY(B));
  polybench_start_instruments;
  cblas_dsyr2k(CblasRowMajor, CblasLower, CblasNoTrans, n, m, alpha, RAW(A), M, RAW(B), M, beta,
               RAW(C), N);
  polybench_stop_instruments;
  polybench_print_instruments;
  polybench_prevent_dce(print_array(n, POLYBENCH_ARRAY(C)));
  POLYBENCH_FREE_ARRAY(C);
  POLYBENCH_FREE_ARRAY(A);
  POLYBENCH_FREE_ARRAY(B);
}
#elif defined(KERNEL_SYMM)
static void run(int argc, char **argv) {
  int m = M, n = N;
  DATA_TYPE alpha, beta;
  POLYBENCH_2D_ARRAY_DECL(C, DATA_TYPE, M, N, m, n);
  POLYBENCH_2D_ARRAY_DECL(A, DATA_TYPE, M, M, m, m);
  POLYBENCH_2D_ARRAY_DECL(B, DATA_TYPE, M, N, m, n);
  init_array(m, n, &alpha, &beta, POLYBENCH_ARRAY(C), POLYBENCH_ARRAY(A), POLYBENCH_ARRAY(B));
  polybench_start_instruments;
  cblas_dsymm(CblasRowMajor, CblasLeft, CblasLower, m, n, alpha, RAW(A), M, RAW(B), N, beta,
              RAW(C), N);
  polybench_stop_instruments;
  polybench_print_instruments;
  polybench_prevent_dce(print_array(m, n, POLYBENCH_ARRAY(C)));
  POLYBENCH_FREE_ARRAY(C);
  POLYBENCH_FREE_ARRAY(A);
  POLYBENCH_FREE_ARRAY(B);
}
#elif defined(KERNEL_TRMM)
static void run(int argc, char **argv) {
  int m = M, n = N;
  DATA_TYPE alpha;
  POLYBENCH_2D_ARRAY_DECL(A, DATA_TYPE, M, M, m, m);
  POLYBENCH_2D_ARRAY_DECL(B, DATA_TYPE, M, N, m, n);
  init_array(m, n, &alpha, POLYBENCH_ARRAY(A), POLYBENCH_ARRAY(B));
  polybench_start_instruments;
  cblas_dtrmm(CblasRowMajor, CblasLeft, CblasLower, CblasTrans, CblasUnit, m, n, alpha, RAW(A), M,
              RAW(B), N);
  polybench_stop_instruments;
  polybench_print_instruments;
  polybench_prevent_dce(print_array(m, n, POLYBENCH_ARRAY(B)));
  POLYBENCH_FREE_ARRAY(A);
  POLYBENCH_FREE_ARRAY(B);
}
#elif defined(KERNEL_2MM)
static void run(int argc, char **argv) {
  int ni = NI, nj = NJ, nk = NK, nl = NL;
  DATA_TYPE alpha, beta;
  POLYBENCH_2D_ARRAY_DECL(tmp, DATA_TYPE, NI, NJ, ni, nj);
  POLYBENCH_2D_ARRAY_DECL(A, DATA_TYPE, NI, NK, ni, nk);
  POLYBENCH_2D_ARRAY_DECL(B, DATA_TYPE, NK, NJ, nk, nj);
  POLYBENCH_2D_ARRAY_DECL(C, DATA_TYPE, NJ, NL, nj, nl);
  POLYBENCH_2D_ARRAY_DECL(D, DATA_TYPE, NI, NL, ni, nl);
  init_array(ni, nj, nk, nl, &alpha, &beta, POLYBENCH_ARRAY(A), POLYBENCH_ARRAY(B),
             POLYBENCH_ARRAY(C), POLYBENCH_ARRAY(D));
  polybench_start_instruments;
  cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, ni, nj, nk, alpha, RAW(A), NK, RAW(B),
              NJ, 0.0, RAW(tmp), NJ);
  cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, ni, nl, nj, 1.0, RAW(tmp), NJ, RAW(C),
              NL, beta, RAW(D), NL);
  polybench_stop_instruments;
  polybench_print_instruments;
  polybench_prevent_dce(print_array(ni, nl, POLYBENCH_ARRAY(D)));
  POLYBENCH_FREE_ARRAY(tmp);
  POLYBENCH_FREE_ARRAY(A);
  POLYBENCH_FREE_ARRAY(B);
  POLYBENCH_FREE_ARRAY(C);
  POLYBENCH_FREE_ARRAY(D);
}
#elif defined(KERNEL_3MM)
static void run(int argc, char **argv) {
  int ni = NI, nj = NJ, nk = NK, nl = NL, nm = NM;
  POLYBENCH_2D_ARRAY_DECL(E, DATA_TYPE, NI, NJ, ni, nj);
  POLYBENCH_2D_ARRAY_DECL(A, DATA_TYPE, NI, NK, ni, nk);
  POLYBENCH_2D_ARRAY_DECL(B, DATA_TYPE, NK, NJ, nk, nj);
  POLYBENCH_2D_ARRAY_DECL(F, DATA_TYPE, NJ, NL, nj, nl);
  POLYBENCH_2D_ARRAY_DECL(C, DATA_TYPE, NJ, NM, nj, nm);
  POLYBENCH_2D_ARRAY_DECL(D, DATA_TYPE, NM, NL, nm, nl);
  POLYBENCH_2D_ARRAY_DECL(G, DATA_TYPE, NI, NL, ni, nl);
  init_array(ni, nj, nk, nl, nm, POLYBENCH_ARRAY(A), POLYBENCH_ARRAY(B), POLYBENCH_ARRAY(C),
             POLYBENCH_ARRAY(D));
  polybench_start_instruments;
  cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, ni, nj, nk, 1.0, RAW(A), NK, RAW(B), NJ,
              0.0, RAW(E), NJ);
  cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, nj, nl, nm, 1.0, RAW(C), NM, RAW(D), NL,
              0.0, RAW(F), NL);
  cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, ni, nl, nj, 1.0, RAW(E), NJ, RAW(F), NL,
              0.0, RAW(G), NL);
  polybench_stop_instruments;
  polybench_print_instruments;
  polybench_prevent_dce(print_array(ni, nl, POLYBENCH_ARRAY(G)));
  POLYBENCH_FREE_ARRAY(E);
  POLYBENCH_FREE_ARRAY(A);
  POLYBENCH_FREE_ARRAY(B);
  POLYBENCH_FREE_ARRAY(F);
  POLYBENCH_FREE_ARRAY(C);
  POLYBENCH_FREE_ARRAY(D);
  POLYBENCH_FREE_ARRAY(G);
}
#else
#error "define one of KERNEL_GEMM, KERNEL_SYRK, KERNEL_SYR2K, KERNEL_SYMM, KERNEL_TRMM, KERNEL_2MM, KERNEL_3MM"
#endif
