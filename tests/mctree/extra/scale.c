/* A kernel whose input comes from another source file (`-- fill.c`): mctree compiles that file
   once, to an object every variant links. */
#include <stdio.h>
#define N 2000
double a[N], b[N];
void fill(double *p, int n, double seed);

void kernel_scale(void) {
  for (int i = 1; i < N; i++)
    a[i] = a[i - 1] * 0.5 + b[i];
}

int main(void) {
  fill(b, N, 3.0);
  kernel_scale();
  for (int i = 0; i < N; i += 20) fprintf(stderr, "%.10g\n", a[i]);
  return 0;
}
