/* The kernel is the function holding `#pragma scop`, and a function defined before it calls it
   with x = b, y = b + 1 (x[i] = y[i] + ... is b[i] = b[i+1] + ...), while `main`, after it,
   passes two arrays of their own: the loop may not be reversed or run in parallel. Reading
   the file in order, the first caller comes before the file shows which function is the
   kernel. */
#include "common.h"
#define N 64

double a[N + 1], b[N + 1], c[N + 1], e[N];

void smooth(double *x, double *y);

__attribute__((noinline)) void shift_b(void) { smooth(b, b + 1); }

__attribute__((noinline)) void smooth(double *x, double *y) {
#pragma scop
  for (int i = 0; i < N; i++)
    x[i] = y[i] * 0.5 + e[i];
#pragma endscop
}

int main(void) {
  fill(a, N + 1, 1.0);
  fill(b, N + 1, 2.0);
  fill(c, N + 1, 4.0);
  fill(e, N, 3.0);
  pb_timer_start();
  smooth(a, c);
  shift_b();
  pb_timer_stop();
  pb_timer_print();
  dump("a", a, N + 1);
  pb_dump_array("b", b, N + 1);
  pb_dump_finish();
  return 0;
}
