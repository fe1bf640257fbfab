/* Shared by the adversarial kernels of the dependence test: inputs that PB_INPUT=random (with
   PB_SEED) varies, and dumps of whole arrays to stderr under PB_DUMP=1. */
#include "../../../polybench/harness/pb.h"

/* A value the input mode decides: random in [0, 1000)/8 with PB_INPUT=random, else `fixed`. */
static double input_value(double fixed) {
  return pb_input_random() ? pb_rand_int(0, 999) / 8.0 : fixed;
}

static void fill(double *a, int n, double fixed) {
  for (int i = 0; i < n; i++) a[i] = input_value(fixed);
}

static void dump(const char *name, const double *a, int n) {
  pb_dump_start();
  pb_dump_array(name, a, (size_t)n);
}
