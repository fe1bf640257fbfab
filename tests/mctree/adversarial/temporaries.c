/* Polly's own temporaries. In kernel_temporaries' first nest (TSVC_2's s235) the compiler keeps
   the new a[i] in a register for the inner loop: Polly sees that scalar written in every `i`
   and marks `i` as carrying a dependence, though each iteration computes its own value —
   `parallel for` of `i` is legal and must stay proved. The second nest's `t` is the source's
   own scalar, read after the loop: its last value is the program's, `i` carries it. The
   third keeps a value from one `i` to the next (`prev`): a flow Polly's temporary carries. */
#include "common.h"
#define N 48

double a[N], b[N], c[N], d[N], aa[N][N], bb[N][N], out[2];

__attribute__((noinline)) void kernel_temporaries(void) {
  for (int i = 0; i < N; i++) {
    a[i] += b[i] * c[i];
    for (int j = 1; j < N; j++)
      aa[j][i] = aa[j - 1][i] + bb[j][i] * a[i];
  }
  double t = 0;
  for (int i = 0; i < N; i++) {
    t = c[i] * 2;
    for (int j = 0; j < N; j++)
      bb[i][j] = t + b[j];
  }
  out[0] = t;
  double prev = b[0];
  for (int i = 1; i < N; i++) {
    double here = b[i];
    d[i] = here - prev;
    prev = here;
  }
  out[1] = prev;
}

int main(void) {
  fill(a, N, 1.0);
  fill(b, N, 2.0);
  fill(c, N, 4.0);
  fill(d, N, 0.0);
  for (int j = 0; j < N; j++) {
    fill(aa[j], N, 1.0);
    fill(bb[j], N, 0.5);
  }
  pb_timer_start();
  kernel_temporaries();
  pb_timer_stop();
  pb_timer_print();
  dump("a", a, N);
  pb_dump_array("d", d, N);
  pb_dump_array("aa", &aa[0][0], N * N);
  pb_dump_array("bb", &bb[0][0], N * N);
  pb_dump_array("out", out, 2);
  pb_dump_finish();
  return 0;
}
