/* The source's own directives and a loop in a statement-expression macro (issue 38): they must
   not shift which loop a verdict is applied to, and a loop the source annotates is left alone
   (a directive between `#pragma clang loop`/`#pragma unroll`/`omp simd` and its `for` does not
   build). L_last carries a dependence and must not be reversed or parallelised. */
#include "common.h"
#define N 64
#define SUM(v, n) ({ double s_ = 0.0; for (int q_ = 0; q_ < (n); q_++) s_ += (v)[q_]; s_; })

double a[N], b[N], c[N], m[N][N], x[N], y[N];

__attribute__((noinline)) void kernel_directives(void) {
#pragma omp parallel for collapse(2)
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++)
      m[i][j] = a[i] * b[j];
#pragma omp simd
  for (int i = 0; i < N; i++)
    c[i] = a[i] + b[i];
  double z = SUM(a, N);
#pragma clang loop vectorize(enable)
  for (int i = 0; i < N; i++)
    b[i] = b[i] * 0.5 + z;
#pragma unroll 2
  for (int i = 0; i < N; i++)
    c[i] = c[i] + 1.0;
  for (int i = 1; i < N; i++)
    x[i] = x[i - 1] * 0.5 + c[i];
  for (int i = 0; i < N; i++)
    y[i] = SUM(m[i], N);
}

int main(void) {
  fill(a, N, 1.0);
  fill(b, N, 2.0);
  fill(x, N, 3.0);
  pb_timer_start();
  kernel_directives();
  pb_timer_stop();
  pb_timer_print();
  dump("b", b, N);
  dump("c", c, N);
  dump("x", x, N);
  dump("y", y, N);
  pb_dump_array("m", &m[0][0], N * N);
  pb_dump_finish();
  return 0;
}
