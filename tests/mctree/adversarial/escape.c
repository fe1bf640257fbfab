/* A kernel whose address a global's initialiser takes: the direct call passes two arrays of
   their own, but the call through `run` passes x = b, y = b + 1, so x[i] = y[i] + ... is
   b[i] = b[i+1] + ...: the loop may not be reversed or run in parallel. Only the global
   shows that the direct call is not every call. */
#include "common.h"
#define N 64

double a[N + 1], b[N + 1], c[N + 1], e[N];

__attribute__((noinline)) void kernel_escape(double *x, double *y) {
  for (int i = 0; i < N; i++)
    x[i] = y[i] * 0.5 + e[i];
}

void (*run)(double *, double *) = kernel_escape;

int main(void) {
  fill(a, N + 1, 1.0);
  fill(b, N + 1, 2.0);
  fill(c, N + 1, 4.0);
  fill(e, N, 3.0);
  pb_timer_start();
  kernel_escape(a, c);
  run(b, b + 1);
  pb_timer_stop();
  pb_timer_print();
  dump("a", a, N + 1);
  pb_dump_array("b", b, N + 1);
  pb_dump_finish();
  return 0;
}
