/* A kernel whose dependence is in its input (issue 53 item 4): `a[i + shift]` with `shift` from
   the environment (`SHIFT`, default 0). On the default input the loop carries nothing, so a
   reversed loop prints the same; with `SHIFT=1` it reads what the iteration after it writes.
   The subscript is not affine in known values: nothing is proved, and under
   --trust-output-check only an output check that varies the input sees the reversal is wrong. */
#include <stdio.h>
#include <stdlib.h>
#define N 400
double a[N + 1], b[N];

void kernel_shifted(int shift) {
  for (int i = 0; i < N; i++)
    a[i] = a[i + shift] * 0.5 + b[i];
}

int main(void) {
  const char *s = getenv("SHIFT");
  int shift = s ? atoi(s) : 0;
  for (int i = 0; i <= N; i++) a[i] = i % 7;
  for (int i = 0; i < N; i++) b[i] = i % 5;
  kernel_shifted(shift);
  if (getenv("PB_DUMP"))
    for (int i = 0; i < N; i++) fprintf(stderr, "%g\n", a[i]);
  return 0;
}
