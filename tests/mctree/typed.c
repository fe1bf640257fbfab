/* Headers the grammar types (issue 53), read by `--list` only: a `char` counter (C converts
   each step back to `char`: a bound past 127 never ends the loop, OpenMP counts in `int`), an
   unsigned counter counting down to `>= 0` (C never ends it), a signed counter compared as
   unsigned from a variable start, and the legal forms beside them. */
double a[300];

void kernel_typed(int n, int s) {
  for (char c = 0; c < 100; c++)
    a[c] = a[c] + 1.0;
  for (unsigned u = 10; u >= 0; u--) {
    a[u] = 2.0;
    if (a[u + 1] > 5.0)
      return;
  }
  for (int i = s; i < sizeof a / sizeof a[0]; i++)
    a[i] = a[i] * 0.5;
  for (unsigned u = 10; u >= 1; u--)
    a[u] = a[u] * 3.0;
  for (unsigned long k = 0; k < 20; k++)
    a[k] = 1.0;
  for (int i = 0; i < sizeof a / sizeof a[0]; i++)
    a[i] = a[i] + 2.0;
}
