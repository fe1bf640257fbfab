/* moldtune's roofline probe (src/evaluate/roofline.rs): the peak floating-point rate of
 * independent FMA chains at the widest vector width the compiler targets, then a STREAM-like
 * triad's bandwidth, each the best of 5 rounds over the threads given as argv[1]. Each thread
 * times its own share by the CPU time it got (CLOCK_THREAD_CPUTIME_ID) and the rates add up:
 * another process on a shared machine takes time slices away, not speed, so the figures are
 * what the cores do while they run this program. */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#if defined(__AVX512F__)
#define VW 8
#elif defined(__AVX__)
#define VW 4
#else
#define VW 2
#endif
#define CHAINS 12
#define ROUNDS 5

typedef double vd __attribute__((vector_size(VW * sizeof(double))));

/* clang splits a 512-bit vector type into 256-bit halves on CPUs it tunes for 256-bit vectors
 * (prefer-vector-width=256: the Xeons from Skylake-SP on), which halves the peak measured where
 * two 512-bit FMA units exist (measured on a Xeon with AVX-512: 43 GFLOP/s per thread split,
 * 81-85 whole); the attribute makes the full width legal in the one function that needs it. */
#if defined(__x86_64__) || defined(__i386__)
#define WIDEST __attribute__((min_vector_width(VW * 64)))
#else
#define WIDEST
#endif

/* This thread's CPU seconds. */
static double cpu_now(void) {
  struct timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return t.tv_sec + 1e-9 * t.tv_nsec;
}

/* n steps of CHAINS independent a = a * b + c chains (contracted to FMAs). */
WIDEST static double fma_chains(long n, double seed) {
  vd a[CHAINS];
  vd b = (vd){0} + 0.9999999, c = (vd){0} + 1e-9;
  for (int k = 0; k < CHAINS; k++)
    a[k] = (vd){0} + seed * (k + 1);
  for (long i = 0; i < n; i++)
#pragma clang loop unroll(full)
    for (int k = 0; k < CHAINS; k++)
      a[k] = a[k] * b + c;
  double s = 0;
  for (int k = 0; k < CHAINS; k++)
    for (int l = 0; l < VW; l++)
      s += a[k][l];
  return s;
}

static double peak(int threads, double *sink) {
  const long n = 20000000;
  double best = 0;
  for (int r = 0; r < ROUNDS; r++) {
    double s = 0, rate = 0;
#pragma omp parallel num_threads(threads) reduction(+ : s, rate)
    {
      double t0 = cpu_now();
      s += fma_chains(n, 1.0 + omp_get_thread_num() + r);
      rate += (double)n * CHAINS * VW * 2 / (cpu_now() - t0);
    }
    *sink += s;
    if (rate > best)
      best = rate;
  }
  return best;
}

static double triad(int threads) {
  const long n = 1L << 23; /* 64 MiB per array, past any cache here */
  double *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b), *c = malloc(n * sizeof *c);
  if (!a || !b || !c)
    return 0;
  /* First touch by the thread that will use each element (its NUMA node). */
#pragma omp parallel num_threads(threads)
  {
    int t = omp_get_thread_num(), nt = omp_get_num_threads();
    for (long i = n * t / nt; i < n * (t + 1) / nt; i++) {
      a[i] = 0;
      b[i] = 1;
      c[i] = 2;
    }
  }
  double best = 0;
  for (int r = 0; r < ROUNDS; r++) {
    double rate = 0;
#pragma omp parallel num_threads(threads) reduction(+ : rate)
    {
      int t = omp_get_thread_num(), nt = omp_get_num_threads();
      long lo = n * t / nt, hi = n * (t + 1) / nt;
      double t0 = cpu_now();
      for (long i = lo; i < hi; i++)
        a[i] = b[i] + 3.0 * c[i];
      rate += 3.0 * sizeof(double) * (hi - lo) / (cpu_now() - t0);
    }
    if (rate > best)
      best = rate;
  }
  if (a[n / 2] != 7.0)
    return 0;
  free(a);
  free(b);
  free(c);
  return best;
}

int main(int argc, char **argv) {
  int threads = argc > 1 ? atoi(argv[1]) : 1;
  if (threads < 1)
    threads = 1;
  double sink = 0;
  double flops = peak(threads, &sink);
  double bytes = triad(threads);
  printf("vector_doubles %d\nflops_per_s %.6g\nbytes_per_s %.6g\n", VW, flops, bytes);
  fprintf(stderr, "checksum %g\n", sink);
  return bytes > 0 ? 0 : 1;
}
