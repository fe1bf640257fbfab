/* Scalars that are not the loop's own (issue 38): `total` is an extern declared inside the
   kernel (defined below, an output), `peak` is a local whose address is taken after the loop
   (memcpy), and `prev` is carried by a comma increment that does work. None may be
   privatised; L0, L1 and L2 carry them. */
#include "common.h"
#define N 128
#define R 8

double a[N], out[2], W[R][N], s[R];
double total;

__attribute__((noinline)) void kernel_owners(void) {
  extern double total;
  for (int i = 0; i < N; i++) {
    total = a[i] * 2.0;
    a[i] = total + 1.0;
  }
  double peak = 0.0;
  for (int i = 0; i < N; i++) {
    peak = a[i] * 0.5;
    a[i] = a[i] + peak;
  }
  memcpy(out, &peak, sizeof peak);
  for (int r = 0; r < R; r++) {
    double prev = 0.0;
    int j;
    for (j = 0; j < N; prev = W[r][j], j++)
      s[r] += prev;
  }
}

int main(void) {
  fill(a, N, 1.0);
  fill(&W[0][0], R * N, 3.0);
  pb_timer_start();
  kernel_owners();
  pb_timer_stop();
  pb_timer_print();
  dump("a", a, N);
  dump("out", out, 1);
  pb_dump_array("s", s, R);
  pb_dump_array("total", &total, 1);
  pb_dump_finish();
  return 0;
}
