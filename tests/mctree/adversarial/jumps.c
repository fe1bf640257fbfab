/* Jumps inside loop bodies (TSVC_2's s161, s277, s442 have them). L0 jumps only forward to
   labels of its own body: every iteration still runs whole and in order, so L0 is
   transformable, but it carries c[i+1] -> c[i] from one iteration to the next (reverse is
   illegal). L1 jumps back inside its body (a part of an iteration runs again) and L2 jumps
   out of the loop: neither is transformable. */
#include "common.h"
#define N 512

double a[N], b[N], c[N + 1], d[N], e[N];

__attribute__((noinline)) void kernel_jumps(void) {
  for (int i = 0; i < N; i++) {
    if (b[i] < 60.0)
      goto L20;
    a[i] = c[i] + d[i] * e[i];
    goto L10;
  L20:
    c[i + 1] = a[i] + d[i] * 0.5;
  L10:;
  }
  for (int i = 0; i < N; i++) {
    int k = 0;
  again:
    e[i] = e[i] * 0.5 + 1.0;
    if (++k < 3)
      goto again;
  }
  for (int i = 0; i < N; i++) {
    if (d[i] > 120.0)
      goto done;
    d[i] = d[i] + a[i];
  }
done:;
}

int main(void) {
  fill(a, N, 1.0);
  fill(b, N, 50.0);
  fill(c, N + 1, 2.0);
  fill(d, N, 3.0);
  fill(e, N, 4.0);
  pb_timer_start();
  kernel_jumps();
  pb_timer_stop();
  pb_timer_print();
  dump("a", a, N);
  dump("c", c, N + 1);
  dump("d", d, N);
  dump("e", e, N);
  pb_dump_finish();
  return 0;
}
