/* A program whose output holds infinities and a NaN (as TSVC's checksums can): the same
   values twice are the same output, so the untransformed program passes its own check. */
#include <math.h>
#include <stdio.h>
#define N 64
double a[N];

void kernel_infinite(void) {
  for (int i = 0; i < N; i++)
    a[i] = (i % 3 == 0) ? INFINITY : (i % 3 == 1 ? -INFINITY : i * 0.5);
}

int main(void) {
  kernel_infinite();
  for (int i = 0; i < N; i++) fprintf(stderr, "%g\n", a[i]);
  fprintf(stderr, "%g\n", a[0] - a[0]);
  return 0;
}
