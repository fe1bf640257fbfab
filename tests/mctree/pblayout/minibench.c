/* minibench.c -- the run-time part of minibench.h (an extra source, as polybench.c is). */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <stdio.h>

static double start_s, stop_s;

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

void *minibench_alloc(size_t bytes) {
  void *p = NULL;
  if (posix_memalign(&p, 4096, bytes) != 0) abort();
  memset(p, 0, bytes);
  return p;
}

void minibench_timer_start(void) { start_s = now_s(); }
void minibench_timer_stop(void) { stop_s = now_s(); }
void minibench_timer_print(void) { printf("%0.6f\n", stop_s - start_s); }
