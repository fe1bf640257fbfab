/* A forward goto that skips a definition (issue 38): when b[i] is small the iteration jumps
   past `t = a[i]`, so `c[i] = t` reads the value an earlier iteration left. L0 carries t. */
#include "common.h"
#define N 256

double a[N], b[N], c[N];

__attribute__((noinline)) void kernel_skips(void) {
  double t = 0.0;
  for (int i = 0; i < N; i++) {
    if (b[i] < 60.0)
      goto use;
    t = a[i];
  use:
    c[i] = t;
  }
}

int main(void) {
  fill(a, N, 1.0);
  fill(b, N, 50.0);
  pb_timer_start();
  kernel_skips();
  pb_timer_stop();
  pb_timer_print();
  dump("c", c, N);
  pb_dump_finish();
  return 0;
}
