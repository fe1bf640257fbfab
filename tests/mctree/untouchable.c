/* A kernel whose only loops cannot be transformed: a float induction variable, an early exit. */
#include <stdio.h>
double a[100];
void kernel_odd(void) {
  for (double x = 0.0; x < 10.0; x += 1.0) a[(int)x] = x;
  for (int i = 0; i < 100; i++) {
    if (a[i] < 0) break;
    a[i] += 1;
  }
}
int main(void) { kernel_odd(); printf("%f\n", a[3]); return 0; }
