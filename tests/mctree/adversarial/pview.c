/* Pointers into an array are that array at an offset: p = &b[1] (initialised), q = c + 1
   (assigned before its loop) and r = &d[1][0] (a row of a 2-D array) each read the element the
   next iteration writes, so none of the three loops may be reversed or run in parallel. */
#include "common.h"
#define N 64

double a[N], b[N + 1], c[N + 1], d[N + 1][N];

__attribute__((noinline)) void kernel_pview(void) {
  double *p = &b[1];
  double *q;
  q = c + 1;
  double *r = &d[1][0];
  for (int i = 0; i < N; i++)
    b[i] = p[i] + a[i];
  for (int i = 0; i < N; i++)
    c[i] = q[i] * 0.5 + a[i];
  for (int i = 0; i < N - 1; i++)
    for (int j = 0; j < N; j++)
      d[i][j] = r[i * N + j] + a[j];
}

int main(void) {
  fill(a, N, 1.0);
  fill(b, N + 1, 2.0);
  fill(c, N + 1, 3.0);
  fill(&d[0][0], (N + 1) * N, 4.0);
  pb_timer_start();
  kernel_pview();
  pb_timer_stop();
  pb_timer_print();
  dump("b", b, N + 1);
  pb_dump_array("c", c, N + 1);
  pb_dump_array("d", &d[0][0], (N + 1) * N);
  pb_dump_finish();
  return 0;
}
