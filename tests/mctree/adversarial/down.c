/* An inner loop that runs downwards: A[j][i] = A[j-1][i-1] + ... carries (<, >) in the order the
   iterations run (iteration (i+1, j+1) reads what (i, j) wrote, and j+1 runs before j), so
   interchange and a two-loop tile are illegal; reversing j or running it in parallel is legal. */
#include "common.h"
#define N 48

__attribute__((noinline)) void kernel_down(double A[N][N], double B[N][N]) {
  for (int i = 1; i < N; i++)
    for (int j = N - 1; j >= 1; j--)
      A[j][i] = A[j - 1][i - 1] + B[j][i];
}

int main(void) {
  PB_ARRAY_2D(A, double, N, N);
  PB_ARRAY_2D(B, double, N, N);
  fill(&A[0][0], N * N, 1.0);
  fill(&B[0][0], N * N, 0.5);
  pb_timer_start();
  kernel_down(A, B);
  pb_timer_stop();
  pb_timer_print();
  dump("A", &A[0][0], N * N);
  pb_dump_finish();
  return 0;
}
