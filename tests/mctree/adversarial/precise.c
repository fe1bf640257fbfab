/* Ordinary code the grammar must read precisely (issue 53): sizes and a field index written
   as `enum` constants (L0-L2), a `const` integer global and local (L3/L4), glibc's `assert`
   in a body (a statement expression) and a helper of the file whose body has no effect beside
   a libm call (L5/L6), and the compiler's builtins `__builtin_expect` (a `likely` macro) and
   `__builtin_fabs` (L7). Every loop is legal to tile, interchange, reverse and parallelise:
   each is proved. */
#include "common.h"
#include <assert.h>
#include <math.h>
#define likely(x) __builtin_expect(!!(x), 1)

enum { N = 64, M = 48 };
enum field { FX, FY, FZ, FIELDS };
static const int R = 40;

double A[N][M], B[N][M], P[N][FIELDS], C[R][R], D[R][R];

static double squared(double x) {
  double y = x * x;
  return y;
}

__attribute__((noinline)) void kernel_precise(void) {
  for (int i = 0; i < N; i++)
    for (int j = 0; j < M; j++)
      A[i][j] = A[i][j] * 0.5 + B[i][j];
  for (int i = 0; i < N; i++)
    P[i][FZ] = P[i][FX] * 2.0 + P[i][FY];
  const int half = N / 2;
  for (int i = 0; i < half; i++)
    for (int j = 0; j < R; j++)
      C[j][i] = C[j][i] + D[i][j];
  for (int i = 0; i < R; i++)
    for (int j = 0; j < R; j++) {
      assert(j < R);
      D[i][j] = D[i][j] + sqrt(squared(C[i][j]) + 1.0);
    }
  for (int i = 0; i < N; i++)
    if (likely(B[i][0] > 1.0))
      B[i][1] = __builtin_fabs(B[i][0] - 60.0);
}

int main(void) {
  fill(&A[0][0], N * M, 1.0);
  fill(&B[0][0], N * M, 2.0);
  fill(&P[0][0], N * FIELDS, 3.0);
  fill(&C[0][0], R * R, 4.0);
  fill(&D[0][0], R * R, 5.0);
  pb_timer_start();
  kernel_precise();
  pb_timer_stop();
  pb_timer_print();
  pb_dump_array("A", &A[0][0], N * M);
  pb_dump_array("B", &B[0][0], N * M);
  pb_dump_array("P", &P[0][0], N * FIELDS);
  pb_dump_array("C", &C[0][0], R * R);
  pb_dump_array("D", &D[0][0], R * R);
  pb_dump_finish();
  return 0;
}
