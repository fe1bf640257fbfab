#include <stdio.h>
int main(void) {
  int u = #UNROLL, p0 = #P0, v = #VEC;
  #P2
  #P4
  for (int i = 0; i < p0; i++) { u += i * v; }
  printf("GFLOPS: %d\n", u);
  return 0;
}
