/* Ping-pong buffers chosen by the sweep's parity (issue 53): `src = (t & 1) ? b : a` and
   `dst = (t & 1) ? a : b` take the same branch in one sweep, so L1 reads one buffer and
   writes the other (reverse, tile and parallel for are legal). `out` is chosen by another
   condition: in some sweeps it is `src` itself, and L2 then shifts that buffer in place, so
   reversing L2 is illegal. */
#include "common.h"
#define N 96

double a[N + 1], b[N + 1];

__attribute__((noinline)) void kernel_pingchoice(int steps) {
  double *src, *dst, *out;
  for (int t = 0; t < steps; t++) {
    src = (t & 1) ? b : a;
    dst = (t & 1) ? a : b;
    for (int i = 1; i < N - 1; i++)
      dst[i] = (src[i - 1] + src[i] + src[i + 1]) * 0.25;
    out = (t % 3 == 0) ? a : b;
    for (int i = 0; i < N - 1; i++)
      out[i] = src[i + 1] * 0.5 + 1.0;
  }
}

int main(void) {
  fill(a, N + 1, 1.0);
  fill(b, N + 1, 2.0);
  int steps = pb_input_random() ? pb_rand_int(4, 7) : 5;
  pb_timer_start();
  kernel_pingchoice(steps);
  pb_timer_stop();
  pb_timer_print();
  dump("a", a, N + 1);
  dump("b", b, N + 1);
  pb_dump_finish();
  return 0;
}
