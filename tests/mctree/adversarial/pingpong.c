/* Ping-pong buffers (issue 53): `p` and `q` swap after each sweep (`s = p; p = q; q = s`).
   Within one iteration of the time loop L0 each nest sees them fixed and apart: L1's sweep is
   out of place (reverse, tile and parallel for are legal). L2 runs after the swap and also
   reads `a` itself, which `q` points at every other sweep: there it updates `a` in place, so
   reversing L2 is illegal. L0 carries every sweep to the next. */
#include "common.h"
#define N 96

double a[N + 1], b[N + 1];

__attribute__((noinline)) void kernel_pingpong(int steps) {
  double *p = a, *q = b, *s;
  for (int t = 0; t < steps; t++) {
    for (int i = 1; i < N - 1; i++)
      q[i] = (p[i - 1] + p[i] + p[i + 1]) * 0.25;
    s = p;
    p = q;
    q = s;
    for (int i = 0; i < N - 1; i++)
      q[i] = a[i + 1] * 0.5 + p[i];
  }
}

int main(void) {
  fill(a, N + 1, 1.0);
  fill(b, N + 1, 2.0);
  int steps = pb_input_random() ? pb_rand_int(3, 6) : 4;
  pb_timer_start();
  kernel_pingpong(steps);
  pb_timer_stop();
  pb_timer_print();
  dump("a", a, N + 1);
  dump("b", b, N + 1);
  pb_dump_finish();
  return 0;
}
