/* Headers with side effects (issue 38): L0's bound calls a helper that counts its calls (and the
   count is an output), L1's initial value calls another, and the 2-D nest L2/L3 has an inner
   bound that calls the helper. L1 and L2 carry no dependence. A transformed loop evaluates these a different number of times:
   no transformation of these loops is proved. */
#include "common.h"
#define N 96

double a[N], b[N], m[N][N];
int calls;

__attribute__((noinline)) int bound(int n) {
  calls++;
  return n;
}

__attribute__((noinline)) int start(void) {
  calls += 10;
  return 1;
}

__attribute__((noinline)) void kernel_headers(int n) {
  for (int i = 0; i < bound(n); i++)
    b[i] = a[i] + calls;
  for (int i = start(); i < n; i++)
    a[i] = a[i] * 0.5 + b[i];
  for (int i = 0; i < n; i++)
    for (int j = 0; j < bound(n); j++)
      m[i][j] = a[i] * b[j];
}

int main(void) {
  fill(a, N, 1.0);
  fill(b, N, 2.0);
  int n = pb_input_random() ? 60 + pb_rand_int(0, 36) : N;
  pb_timer_start();
  kernel_headers(n);
  pb_timer_stop();
  pb_timer_print();
  dump("a", a, N);
  dump("b", b, N);
  pb_dump_array("m", &m[0][0], N * N);
  double c = calls;
  pb_dump_array("calls", &c, 1);
  pb_dump_finish();
  return 0;
}
