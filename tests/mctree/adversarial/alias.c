/* Pointers whose targets the kernel cannot see: parameters the caller points into one array
   (x = b, y = b + 1) and a global pointer (g = c + 1). x[i] = y[i] + ... is b[i] = b[i+1] + ...,
   and c[i] = g[i] ... reads c[i+1]: neither loop may be reversed or run in parallel. */
#include "common.h"
#define N 64

double b[N + 1], c[N + 1], e[N];
double *g;

__attribute__((noinline)) void kernel_alias(double *x, double *y) {
  for (int i = 0; i < N; i++)
    x[i] = y[i] * 0.5 + e[i];
  for (int i = 0; i < N; i++)
    c[i] = g[i] + e[i];
}

int main(void) {
  fill(b, N + 1, 1.0);
  fill(c, N + 1, 2.0);
  fill(e, N, 3.0);
  g = c + 1;
  pb_timer_start();
  kernel_alias(b, b + 1);
  pb_timer_stop();
  pb_timer_print();
  dump("b", b, N + 1);
  pb_dump_array("c", c, N + 1);
  pb_dump_finish();
  return 0;
}
