/* A kernel Polly cannot model (every iteration calls a function with side effects it cannot
   see through): Polly's report finds no SCoP in it, so mctree tries `-mllvm -polly` alone (its
   other knobs only schedule SCoPs and would build the same program). */
#include <stdio.h>
#define N 4000
double a[N], b[N];
int calls;

__attribute__((noinline)) void touch(double *p) {
  calls++;
  *p += 1e-9;
}

void kernel_noscop(void) {
  for (int i = 0; i < N; i++) {
    a[i] = a[i] * 0.5 + b[i];
    touch(&b[i]);
  }
}

int main(void) {
  for (int i = 0; i < N; i++) b[i] = i % 7;
  kernel_noscop();
  for (int i = 0; i < N; i += 10) fprintf(stderr, "%g\n", a[i]);
  return 0;
}
