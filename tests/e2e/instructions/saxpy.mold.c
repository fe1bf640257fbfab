/* A tiny kernel for the simulated metrics: `kernel` runs its loop #REPS times. */
#include <stdio.h>

#define N 4096
static double x[N], y[N];

__attribute__((noinline)) void kernel(int reps, double a) {
  for (int r = 0; r < reps; r++)
    for (int i = 0; i < N; i++)
      y[i] = a * x[i] + y[i];
}

int main(void) {
  for (int i = 0; i < N; i++) {
    x[i] = (double)(i % 17);
    y[i] = 1.0;
  }
  kernel(#REPS, 0.5);
  printf("%f\n", y[N / 3]);
  return 0;
}
