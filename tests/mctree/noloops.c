/* A kernel without loops. */
double kernel_scale(double x) { return 2.0 * x; }
int main(void) { return kernel_scale(1.0) > 0 ? 0 : 1; }
