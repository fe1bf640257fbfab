/* Loop counters read after their loop (issue 38). L0 is a hand-unrolled loop whose counter the
   remainder loop L1 starts from; L2 searches each row for a value and L3's counter is stored
   after it (`stop[r] = j`); L4's counter places a terminator after it. Reversing, tiling or
   parallelising these loops changes the counter's final value, so none of their
   transformations may be proved. L5 reads L6's counter before L6 sets it again, so it sees
   the value the previous iteration left: L5 carries it. L8 uses L7's counter as an
   accumulator (`i += k`) after L7: L8 carries it. */
#include "common.h"
#define N 203
#define R 16

double a[N], b[N], w[R][N], t[N + 1], x[R], w2[R][N], y[N];
int stop[R];

__attribute__((noinline)) void kernel_counters(int n) {
  int i, j, k;
  for (i = 0; i + 4 <= n; i += 4) {
    b[i] = a[i] * 2.0;
    b[i + 1] = a[i + 1] * 2.0;
    b[i + 2] = a[i + 2] * 2.0;
    b[i + 3] = a[i + 3] * 2.0;
  }
  for (; i < n; i++)
    b[i] = a[i] * 3.0;
  for (int r = 0; r < R; r++) {
    for (j = 0; j < N; j++)
      if (w[r][j] > 100.0)
        break;
    stop[r] = j;
  }
  for (k = 0; k < n / 2; k++)
    t[k] = a[k] + 1.0;
  t[k] = -1.0;
  int m = 0;
  for (int r = 0; r < R; r++) {
    x[r] = m;
    for (m = 0; m < N; m++)
      w2[r][m] = w[r][m] + 1.0;
  }
  for (i = 0; i < N; i++)
    b[i] = b[i] + 1.0;
  for (k = 0; k < N; k++) {
    i += k;
    y[k] = i;
  }
}

int main(void) {
  fill(a, N, 1.0);
  fill(&w[0][0], R * N, 50.0);
  int n = pb_input_random() ? 150 + pb_rand_int(0, 50) : N;
  pb_timer_start();
  kernel_counters(n);
  pb_timer_stop();
  pb_timer_print();
  dump("b", b, N);
  dump("t", t, N + 1);
  dump("x", x, R);
  dump("y", y, N);
  pb_dump_array("w2", &w2[0][0], R * N);
  double s[R];
  for (int r = 0; r < R; r++) s[r] = stop[r];
  pb_dump_array("stop", s, R);
  pb_dump_finish();
  return 0;
}
