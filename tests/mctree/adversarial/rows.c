/* A subscript that runs past its row: `A[i][j + 1]` at j = N - 1 is `A[i + 1][0]`, the element
   the next `i` writes. C's subscript rule, which mctree's test assumes, says a subscript stays
   in its dimension, so the test finds `i` independent; Polly, which models the memory as laid
   out, finds the dependence `i` carries. Where the two disagree nothing is proved for `i`: its
   `parallel for` would let the next row's write race this row's read. The second nest reads
   past its row too, but of an array no loop writes: nothing there depends on the order, and
   its loops stay proved. */
#include "common.h"
#define N 24

double A[N][N], B[N][N], R[N][N];

__attribute__((noinline)) void kernel_rows(void) {
  for (int i = 0; i < N - 1; i++)
    for (int j = 0; j < N; j++)
      A[i][j] = A[i][j + 1] + B[i][j];
  for (int i = 0; i < N - 1; i++)
    for (int j = 0; j < N; j++)
      R[i][j] = B[i][j + 1] * 0.5;
}

int main(void) {
  for (int i = 0; i < N; i++) {
    fill(A[i], N, 1.0);
    fill(B[i], N, 2.0);
  }
  pb_timer_start();
  kernel_rows();
  pb_timer_stop();
  pb_timer_print();
  dump("A", &A[0][0], N * N);
  pb_dump_array("R", &R[0][0], N * N);
  pb_dump_finish();
  return 0;
}
