/* The register tile of a rendered gemm-reach variant alone, on data that stays in the L1 cache
 * (scripts/reach.py): the rate its micro-kernel reaches when nothing has to come from memory,
 * to set against the whole kernel's rate and the machine's peak. Built with the variant's own
 * compile flags and -DVARIANT="path/to/variant.c"; prints `flops_per_s X` (best of 7 rounds
 * of the CPU time the thread got). */
#define main variant_main
#include VARIANT
#undef main

#include <time.h>

#define KC 128

static double cpu_now(void) {
  struct timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return t.tv_sec + 1e-9 * t.tv_nsec;
}

int main(void) {
  static DATA_TYPE a[RI * KC] __attribute__((aligned(64))), b[KC * W] __attribute__((aligned(64)));
  for (int i = 0; i < RI * KC; i++) a[i] = 1e-3 * (i % 7);
  for (int i = 0; i < KC * W; i++) b[i] = 1e-3 * (i % 5);
  PB_ARRAY_2D(C, DATA_TYPE, NI, NJ);
  const long reps = 2000000000L / (2L * RI * W * KC);
  double best = 0;
  for (int r = 0; r < 7; r++) {
    double t0 = cpu_now();
    for (long n = 0; n < reps; n++) {
      micro(C, 0, 0, a, 1, RI, 1, b, W, KC);
      __asm__ volatile("" : : "r"(C) : "memory"); /* each call's stores happen */
    }
    double rate = 2.0 * RI * W * KC * reps / (cpu_now() - t0);
    if (rate > best) best = rate;
  }
  printf("flops_per_s %g\nchecksum %g\n", best, C[0][0]);
  PB_FREE(C);
  return 0;
}
