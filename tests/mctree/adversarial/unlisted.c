/* Classes the deny-list model proved because nobody had listed them (issue 53), each wrong
   once transformed: L0's bound is a double (C compares in double; OpenMP's loop converts the
   bound to the counter's type first and runs one iteration fewer), L1 counts down to a double
   bound, L2 calls a callback parameter named `log` (it appends to a trace: not the libm
   function), L3 calls a local function pointer named `exp`, L4's bound reads its own counter
   (clang refuses every directive on it), and L5 returns from the kernel through an
   error-check macro: any reordering changes which elements were done before it returned. */
#include "common.h"
#define N 256
#define CHECK(c)  \
  do {            \
    if (!(c))     \
      return -1;  \
  } while (0)

double a[N], b[N], c[N], d[N + 8], e[N];
double trace[4 * N];
int traced;

static double tracer(double x) {
  trace[traced++] = x;
  return x;
}

__attribute__((noinline)) int kernel_unlisted(int n, double frac, double limit,
                                              double (*log)(double)) {
  for (int i = 0; i < n * 0.5; i++)
    c[i] = c[i] + 1.0;
  for (int i = n - 1; i > -0.5 * frac; i--)
    d[i + 8] = d[i + 8] * 0.5 + 1.0;
  for (int i = 0; i < n; i++)
    e[i] = log(a[i]);
  double (*exp)(double) = tracer;
  for (int i = 0; i < n; i++)
    b[i] = b[i] + exp(d[i + 8]);
  for (int k = 0; k <= n - k; k++)
    c[k] = c[k] * 2.0;
  for (int i = 0; i < n; i++) {
    CHECK(a[i] < limit);
    a[i] = a[i] * 0.5 + e[i];
  }
  return 0;
}

int main(void) {
  fill(a, N, 1.0);
  fill(b, N, 2.0);
  fill(c, N, 3.0);
  fill(d, N + 8, 4.0);
  int n = pb_input_random() ? 2 * pb_rand_int(60, 120) + 1 : N - 1;
  double frac = pb_input_random() ? 1.0 + pb_rand_int(1, 9) : 3.0;
  pb_timer_start();
  int rc = kernel_unlisted(n, frac, 110.0, tracer);
  pb_timer_stop();
  pb_timer_print();
  dump("a", a, N);
  dump("b", b, N);
  dump("c", c, N);
  dump("d", d, N + 8);
  dump("e", e, N);
  dump("trace", trace, 4 * N);
  double r = rc + traced;
  pb_dump_array("rc", &r, 1);
  pb_dump_finish();
  return 0;
}
