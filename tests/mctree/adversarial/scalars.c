/* Scalars across iterations: s carries a recurrence (s = s/2 + a[i]); `last` is a global that
   every iteration writes before reading it, but its final value is read after the kernel, so it
   is not private: reversing or parallelising either loop changes the output. t is a local the
   inner loop rewrites each time (private to i: the i loop is parallel). */
#include "common.h"
#define N 64

double a[N], b[N], c[N], m[N][N], last;

__attribute__((noinline)) void kernel_scalars(void) {
  double s = 0.0;
  for (int i = 0; i < N; i++) {
    s = s * 0.5 + a[i];
    b[i] = s;
  }
  for (int i = 0; i < N; i++) {
    last = a[i] * 3.0;
    c[i] = last + 1.0;
  }
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++) {
      double t = a[j] * 2.0;
      m[i][j] = t + c[i];
    }
}

int main(void) {
  fill(a, N, 1.0);
  pb_timer_start();
  kernel_scalars();
  pb_timer_stop();
  pb_timer_print();
  dump("b", b, N);
  pb_dump_array("c", c, N);
  pb_dump_array("m", &m[0][0], N * N);
  pb_dump_array("last", &last, 1);
  pb_dump_finish();
  return 0;
}
