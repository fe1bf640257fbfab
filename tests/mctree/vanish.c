/* A program that deletes its own stdout file when it runs as the pre-flight's probe: the
 * kernel time it printed is lost, and mctree must say so rather than time it by wall clock. */
#include <stdio.h>
#include <stdlib.h>
double a[1000];
void kernel_vanish(void) {
  for (int i = 0; i < 1000; i++)
    a[i] = a[i] * 2 + 1;
}
int main(void) {
  kernel_vanish();
  printf("0.000123\n");
  fflush(stdout);
  remove("probe.out");
  if (getenv("PB_DUMP"))
    for (int i = 0; i < 1000; i += 100)
      fprintf(stderr, "%g\n", a[i]);
  return 0;
}
