/* The extra source of scale.c: no kernel in it. */
void fill(double *p, int n, double seed) {
  for (int i = 0; i < n; i++) p[i] = (double)((i * 7 + (int)seed) % 13) / 13.0;
}
