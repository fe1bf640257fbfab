/* Loops whose bound changes while they run: `n` shrinks inside the first loop and cnt[0] is
   rewritten inside the second. OpenMP's directives compute the trip count once, so neither
   loop is transformable (unroll partial or reverse would run the wrong iterations). */
#include "common.h"
#define N 64

double a[N], b[N];
double cnt[1];

__attribute__((noinline)) void kernel_bounds(void) {
  int n = N;
  for (int i = 0; i < n; i++) {
    a[i] = a[i] * 0.5 + 1.0;
    if (a[i] > 40.0) n--;
  }
  for (int j = 0; j < cnt[0]; j++) {
    b[j] = b[j] + a[j];
    if (b[j] > 80.0) cnt[0] = cnt[0] - 1;
  }
}

int main(void) {
  fill(a, N, 1.0);
  fill(b, N, 2.0);
  cnt[0] = N;
  pb_timer_start();
  kernel_bounds();
  pb_timer_stop();
  pb_timer_print();
  dump("a", a, N);
  pb_dump_array("b", b, N);
  pb_dump_finish();
  return 0;
}
