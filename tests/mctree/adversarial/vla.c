/* Variable-length array parameters (issue 53): `double a[n][m]`'s rows are `m` long, so a
   subscript `j` of a loop from 0 below `m` stays in its row. L0/L1 carry nothing; L2/L3
   carry a dependence along i (reversing L2 is illegal). On main at eb5b199 no stack of either
   nest was proved ("a dimension whose size is not a constant"). */
#include "common.h"
#include <stdlib.h>

__attribute__((noinline)) void kernel_vla(int n, int m, double a[n][m], double b[n][m]) {
  for (int i = 0; i < n; i++)
    for (int j = 0; j < m; j++)
      a[i][j] = a[i][j] * 0.5 + b[i][j];
  for (int i = 1; i < n; i++)
    for (int j = 0; j < m; j++)
      b[i][j] = b[i - 1][j] * 0.25 + a[i][j];
}

int main(void) {
  int n = pb_input_random() ? 20 + pb_rand_int(0, 20) : 32;
  int m = pb_input_random() ? 10 + pb_rand_int(0, 30) : 24;
  double(*a)[m] = malloc(sizeof(double[n][m]));
  double(*b)[m] = malloc(sizeof(double[n][m]));
  fill(&a[0][0], n * m, 1.0);
  fill(&b[0][0], n * m, 2.0);
  pb_timer_start();
  kernel_vla(n, m, a, b);
  pb_timer_stop();
  pb_timer_print();
  dump("a", &a[0][0], n * m);
  dump("b", &b[0][0], n * m);
  pb_dump_finish();
  free(a);
  free(b);
  return 0;
}
