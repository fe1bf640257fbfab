/* Loops whose step is not 1: j runs down by 2 (A[j][i] = A[j-2][i-1]: (<, >) in execution order,
   so no interchange, no two-loop tile), and k is written `k = k - 1` (canonical in OpenMP; c[k]
   = c[k+1]: iteration k+1 runs first and is read after it wrote, so reverse and parallel are
   illegal). */
#include "common.h"
#define N 50

double A[N][N], B[N][N], c[N + 1];

__attribute__((noinline)) void kernel_strided(void) {
  for (int i = 1; i < N; i++)
    for (int j = N - 1; j >= 2; j -= 2)
      A[j][i] = A[j - 2][i - 1] + B[j][i];
  for (int k = N - 1; k >= 0; k = k - 1)
    c[k] = c[k + 1] * 0.5 + B[k][0];
}

int main(void) {
  fill(&A[0][0], N * N, 1.0);
  fill(&B[0][0], N * N, 0.5);
  fill(c, N + 1, 2.0);
  pb_timer_start();
  kernel_strided();
  pb_timer_stop();
  pb_timer_print();
  dump("A", &A[0][0], N * N);
  pb_dump_array("c", c, N + 1);
  pb_dump_finish();
  return 0;
}
