/*
 * pb.h -- moldtune's own PolyBench-compatible harness (header only).
 *
 * Written for moldtune from the documented behaviour of PolyBench/C 4.2; it shares no code with it.
 * A kernel program includes this header once (it defines static functions and state) and gets:
 *
 *   dataset selection   -DMINI_DATASET / -DSMALL_DATASET / -DMEDIUM_DATASET / -DLARGE_DATASET /
 *                       -DEXTRALARGE_DATASET (LARGE when none is given); each kernel defines its sizes.
 *   element type        DATA_TYPE: double by default; -DDATA_TYPE_IS_FLOAT or -DDATA_TYPE_IS_INT, or a
 *                       kernel may pick its PolyBench default by defining DATA_TYPE_IS_xxx before including.
 *   allocation          PB_ARRAY_1D/2D/3D(name, type, d1, ...) declare a heap array (4 KiB aligned,
 *                       zero-filled before the timer so first-touch page faults are not timed), PB_FREE.
 *   kernel timer        pb_timer_start(), pb_timer_stop(), pb_timer_print(). Wall time from
 *                       clock_gettime(CLOCK_MONOTONIC); with PB_CPU_TIME=1 process CPU time
 *                       (CLOCK_PROCESS_CPUTIME_ID, summed over all threads). pb_timer_print() writes the
 *                       seconds alone on one line ("%0.6f\n") to stdout -- the only thing ever written there.
 *                       -DPB_SLOWDOWN=f spins after the kernel so the timed region is (1+f) times as long
 *                       (tests of the regression gate only).
 *   cache flush         pb_flush_cache() when PB_FLUSH=1: writes and reads a 64 MiB buffer (> LLC).
 *   output              PB_DUMP=1: arrays to stderr in PolyBench's dump layout, values as "%.10g ",
 *                       a line break before every 20th value. PB_CHECKSUM=1 (wins over PB_DUMP): one line
 *                       "checksum NAME <sum> <sum of abs>" per array instead.
 *   input mode          pb_input_random(): PB_INPUT=random (kernels that support it switch to random
 *                       inputs from pb_rand_*, a fixed-seed generator; PB_SEED=<n> changes the seed).
 *
 * The harness makes no OpenMP runtime calls: programs are compiled with -fopenmp only so that the
 * kernel's loop directives take effect.
 */
#ifndef MOLDTUNE_PB_H
#define MOLDTUNE_PB_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- dataset ------------------------------------------------------------------------------- */
#if !defined(MINI_DATASET) && !defined(SMALL_DATASET) && !defined(MEDIUM_DATASET) && \
    !defined(LARGE_DATASET) && !defined(EXTRALARGE_DATASET)
#define LARGE_DATASET
#endif

/* ---- element type -------------------------------------------------------------------------- */
#if !defined(DATA_TYPE_IS_INT) && !defined(DATA_TYPE_IS_FLOAT) && !defined(DATA_TYPE_IS_DOUBLE)
#define DATA_TYPE_IS_DOUBLE
#endif
#if defined(DATA_TYPE_IS_INT)
#define DATA_TYPE int
#define SCALAR_VAL(x) x
#elif defined(DATA_TYPE_IS_FLOAT)
#define DATA_TYPE float
#define SCALAR_VAL(x) x##f
#define SQRT_FUN(x) sqrtf(x)
#define EXP_FUN(x) expf(x)
#define POW_FUN(x, y) powf(x, y)
#else
#define DATA_TYPE double
#define SCALAR_VAL(x) x
#define SQRT_FUN(x) sqrt(x)
#define EXP_FUN(x) exp(x)
#define POW_FUN(x, y) pow(x, y)
#endif

#define PB_UNUSED __attribute__((unused))

/* ---- environment --------------------------------------------------------------------------- */

/* A flag is on when the variable is set to anything but "" or "0". */
static PB_UNUSED int pb_env_flag(const char *name) {
  const char *v = getenv(name);
  return v != NULL && v[0] != '\0' && strcmp(v, "0") != 0;
}

static PB_UNUSED int pb_input_random(void) {
  const char *v = getenv("PB_INPUT");
  return v != NULL && strcmp(v, "random") == 0;
}

/* ---- allocation ---------------------------------------------------------------------------- */
/* Declared `malloc`: every call returns memory no other pointer reaches (what tells mctree's
   dependence test that the arrays main allocates and passes to a kernel do not overlap). */
static PB_UNUSED __attribute__((malloc)) void *pb_alloc(size_t count, size_t elem_size) {
  void *p = NULL;
  size_t bytes = count * elem_size;
  if (bytes == 0) bytes = 1;
  if (posix_memalign(&p, 4096, bytes) != 0 || p == NULL) {
    fprintf(stderr, "pb: cannot allocate %zu bytes\n", bytes);
    exit(1);
  }
  memset(p, 0, bytes);
  return p;
}

#define PB_ARRAY_1D(name, type, d1) type *name = (type *)pb_alloc((size_t)(d1), sizeof(type))
#define PB_ARRAY_2D(name, type, d1, d2) \
  type(*name)[d2] = (type(*)[d2])pb_alloc((size_t)(d1) * (size_t)(d2), sizeof(type))
#define PB_ARRAY_3D(name, type, d1, d2, d3)                                                  \
  type(*name)[d2][d3] =                                                                      \
      (type(*)[d2][d3])pb_alloc((size_t)(d1) * (size_t)(d2) * (size_t)(d3), sizeof(type))
#define PB_FREE(name) free((void *)(name))

/* ---- deterministic random numbers (splitmix64) --------------------------------------------- */
static PB_UNUSED uint64_t pb_rng_state;
static PB_UNUSED int pb_rng_seeded;

static PB_UNUSED uint64_t pb_rand_u64(void) {
  if (!pb_rng_seeded) {
    const char *s = getenv("PB_SEED");
    pb_rng_state = (s != NULL && s[0] != '\0') ? strtoull(s, NULL, 10) : 20240601u;
    pb_rng_seeded = 1;
  }
  uint64_t z = (pb_rng_state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/* Uniform integer in [lo, hi]. */
static PB_UNUSED int pb_rand_int(int lo, int hi) {
  uint64_t span = (uint64_t)((int64_t)hi - (int64_t)lo + 1);
  return lo + (int)(pb_rand_u64() % span);
}

/* ---- cache flush --------------------------------------------------------------------------- */
#define PB_FLUSH_BYTES (64u * 1024u * 1024u)
static PB_UNUSED volatile double pb_flush_sink;

static PB_UNUSED void pb_flush_cache(void) {
  if (!pb_env_flag("PB_FLUSH")) return;
  size_t n = PB_FLUSH_BYTES / sizeof(double);
  double *buf = (double *)pb_alloc(n, sizeof(double));
  for (size_t i = 0; i < n; i++) buf[i] = (double)(i & 1023u);
  /* Opaque to the optimiser: the writes must reach memory and the reads below must load them. */
  __asm__ volatile("" : : "r"(buf) : "memory");
  double s = 0.0;
  for (size_t i = 0; i < n; i++) s += buf[i];
  pb_flush_sink = s;
  free(buf);
}

/* ---- kernel timer -------------------------------------------------------------------------- */
static PB_UNUSED struct timespec pb_t_start, pb_t_stop;
static PB_UNUSED clockid_t pb_clock_id = CLOCK_MONOTONIC;

static PB_UNUSED void pb_timer_start(void) {
  pb_clock_id = pb_env_flag("PB_CPU_TIME") ? CLOCK_PROCESS_CPUTIME_ID : CLOCK_MONOTONIC;
  clock_gettime(pb_clock_id, &pb_t_start);
}

/* -DPB_SLOWDOWN=f (for testing the regression gate, never in a tuned build): the timed region is
 * made (1 + f) times as long by spinning after the kernel, so one configuration can be slowed by a
 * known fraction without changing its output (scripts/check_under_load.py). */
static PB_UNUSED double pb_since_start(void) {
  struct timespec t;
  clock_gettime(pb_clock_id, &t);
  return (double)(t.tv_sec - pb_t_start.tv_sec) + (double)(t.tv_nsec - pb_t_start.tv_nsec) * 1e-9;
}

static PB_UNUSED void pb_timer_stop(void) {
#ifdef PB_SLOWDOWN
  const double until = (1.0 + (PB_SLOWDOWN)) * pb_since_start();
  while (pb_since_start() < until) {
  }
#endif
  clock_gettime(pb_clock_id, &pb_t_stop);
}

static PB_UNUSED void pb_timer_print(void) {
  double s = (double)(pb_t_stop.tv_sec - pb_t_start.tv_sec) +
             (double)(pb_t_stop.tv_nsec - pb_t_start.tv_nsec) * 1e-9;
  printf("%0.6f\n", s);
  fflush(stdout);
}

/* ---- output dump / checksum ---------------------------------------------------------------- */
enum { PB_OUT_NONE = 0, PB_OUT_DUMP = 1, PB_OUT_CHECKSUM = 2 };

static PB_UNUSED int pb_output_mode(void) {
  if (pb_env_flag("PB_CHECKSUM")) return PB_OUT_CHECKSUM;
  if (pb_env_flag("PB_DUMP")) return PB_OUT_DUMP;
  return PB_OUT_NONE;
}

/* stderr is unbuffered; a dump of a million values would be a million write(2) calls. */
static PB_UNUSED char pb_out_buf[1 << 16];
static PB_UNUSED size_t pb_out_len;

static PB_UNUSED void pb_out_flush(void) {
  if (pb_out_len > 0) fwrite(pb_out_buf, 1, pb_out_len, stderr);
  pb_out_len = 0;
  fflush(stderr);
}

static PB_UNUSED void pb_out_str(const char *s) {
  size_t n = strlen(s);
  if (pb_out_len + n > sizeof pb_out_buf) pb_out_flush();
  if (n > sizeof pb_out_buf) {
    fwrite(s, 1, n, stderr);
    return;
  }
  memcpy(pb_out_buf + pb_out_len, s, n);
  pb_out_len += n;
}

static PB_UNUSED void pb_dump_start(void) {
  if (pb_output_mode() == PB_OUT_DUMP) pb_out_str("==BEGIN DUMP_ARRAYS==\n");
}

static PB_UNUSED void pb_dump_finish(void) {
  if (pb_output_mode() == PB_OUT_DUMP) pb_out_str("==END   DUMP_ARRAYS==\n");
  pb_out_flush();
}

/* Dumps `count` contiguous elements starting at `a` (a whole array in row-major order). */
static PB_UNUSED void pb_dump_array(const char *name, const DATA_TYPE *a, size_t count) {
  int mode = pb_output_mode();
  char tmp[64];
  if (mode == PB_OUT_CHECKSUM) {
    double sum = 0.0, sum_abs = 0.0;
    for (size_t i = 0; i < count; i++) {
      sum += (double)a[i];
      sum_abs += fabs((double)a[i]);
    }
    pb_out_str("checksum ");
    pb_out_str(name);
    snprintf(tmp, sizeof tmp, " %.17g %.17g\n", sum, sum_abs);
    pb_out_str(tmp);
    return;
  }
  if (mode != PB_OUT_DUMP) return;
  pb_out_str("begin dump: ");
  pb_out_str(name);
  for (size_t i = 0; i < count; i++) {
    if (i % 20 == 0) pb_out_str("\n");
    snprintf(tmp, sizeof tmp, "%.10g ", (double)a[i]);
    pb_out_str(tmp);
  }
  pb_out_str("\nend   dump: ");
  pb_out_str(name);
  pb_out_str("\n");
}

#endif /* MOLDTUNE_PB_H */
