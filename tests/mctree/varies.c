/* A program whose checked output varies from run to run (it prints a clock reading among its
   values): its output check cannot pass even against itself, and mctree must say so. */
#include <stdio.h>
#include <time.h>
#define N 200
double a[N];

void kernel_varies(void) {
  for (int i = 0; i < N; i++)
    a[i] = a[i] * 0.5 + i;
}

int main(void) {
  struct timespec t;
  kernel_varies();
  clock_gettime(CLOCK_MONOTONIC, &t);
  for (int i = 0; i < N; i++) fprintf(stderr, "%g\n", a[i]);
  fprintf(stderr, "elapsed %ld\n", t.tv_nsec);
  return 0;
}
