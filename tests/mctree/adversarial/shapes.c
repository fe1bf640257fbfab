/* Shapes the test must keep apart: a triangular nest (j from i), a skewed subscript
   (A[i-1][j+1]: (<, >), no interchange), a reduction into one row (r[i] += ...: j carries it),
   an indirect write (x[idx[i]]: unknown, nothing proved on its loop) and a loop that moves its own
   induction variable (not canonical: untouchable). */
#include "common.h"
#define N 40

double T[N][N], S[N][N], R[N][N], r[N], x[N], y[N];
int idx[N];

__attribute__((noinline)) void kernel_shapes(void) {
  for (int i = 1; i < N; i++)
    for (int j = i; j < N; j++)
      T[i][j] = T[i - 1][j - 1] * 0.5 + T[i][j];
  for (int i = 1; i < N; i++)
    for (int j = 0; j < N - 1; j++)
      S[i][j] = S[i - 1][j + 1] + R[i][j];
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++)
      r[i] += R[i][j] * r[j];
  for (int i = 0; i < N; i++)
    x[idx[i]] = x[idx[i]] * 0.5 + y[i];
  for (int i = 0; i < N - 1; i++) {
    y[i] = y[i] + x[i];
    if (x[i] > 60.0) i++;
  }
}

int main(void) {
  fill(&T[0][0], N * N, 1.0);
  fill(&S[0][0], N * N, 2.0);
  fill(&R[0][0], N * N, 0.25);
  fill(r, N, 1.0);
  fill(x, N, 50.0);
  fill(y, N, 1.5);
  for (int i = 0; i < N; i++) idx[i] = pb_input_random() ? pb_rand_int(0, N - 1) : i % 4;
  pb_timer_start();
  kernel_shapes();
  pb_timer_stop();
  pb_timer_print();
  dump("T", &T[0][0], N * N);
  pb_dump_array("S", &S[0][0], N * N);
  pb_dump_array("r", r, N);
  pb_dump_array("x", x, N);
  pb_dump_array("y", y, N);
  pb_dump_finish();
  return 0;
}
