/* A swap that one iteration leaves half done (issue 53): `continue` between `p = q` and
   `q = s` leaves both pointers at the same buffer, so the next sweep of L1 updates it in place
   and reversing L1 changes the result. A rotation whose loop may skip part of its body is not
   followed: nothing about `p` and `q` is assumed. */
#include "common.h"
#define N 96

double a[N + 1], b[N + 1];

__attribute__((noinline)) void kernel_pingskip(int steps, int skip) {
  double *p = a, *q = b, *s;
  for (int t = 0; t < steps; t++) {
    for (int i = 1; i < N - 1; i++)
      q[i] = (p[i - 1] + p[i] + p[i + 1]) * 0.25;
    s = p;
    p = q;
    if (t == skip)
      continue;
    q = s;
  }
}

int main(void) {
  fill(a, N + 1, 1.0);
  fill(b, N + 1, 2.0);
  int steps = pb_input_random() ? pb_rand_int(4, 6) : 5;
  pb_timer_start();
  kernel_pingskip(steps, 1);
  pb_timer_stop();
  pb_timer_print();
  dump("a", a, N + 1);
  dump("b", b, N + 1);
  pb_dump_finish();
  return 0;
}
