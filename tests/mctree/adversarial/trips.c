/* A triangular loop whose initial value passes its bound (generator seed 2, minimised): for
   k > n - 1 the inner loop runs zero times. clang-22's `reverse`, `tile` and `interchange` of
   it, and a `parallel for` above its `unroll partial`, compute its trip count as a huge
   unsigned number and run wild; the loop is independent, so only its trip count stands
   between them and a proof. */
#include "common.h"
#define N 16

double Q[N + 4][N + 4], A[N + 4];

__attribute__((noinline)) static void kernel_trips(int n) {
  for (int k = 0; k < N; k++)
    for (int l = k; l < n; l++)
      Q[l][k] = A[l] + A[k];
}

int main(void) {
  fill(A, N + 4, 1.0);
  pb_timer_start();
  kernel_trips(N - 5);
  pb_timer_stop();
  pb_timer_print();
  pb_dump_start();
  pb_dump_array("Q", &Q[0][0], (N + 4) * (N + 4));
  pb_dump_finish();
  return 0;
}
