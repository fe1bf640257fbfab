/* A kernel the dependence analysis cannot read in full: the second loop writes through an
   index array (A[idx[i]]), so whether its iterations touch the same element is unknown. The
   arrays are `restrict`: the file has no caller that would show they do not overlap. The first
   nest's `j` runs to the row's size N, so its subscript is known to stay in its row. */
#define N 64

void kernel_indirect(int n, double *restrict A, int *restrict idx, double (*restrict B)[N]) {
  int i, j;
  for (i = 0; i < n; i++)
    for (j = 0; j < N; j++)
      B[i][j] = B[i][j] + A[idx[j]];
  for (i = 0; i < n; i++)
    A[idx[i]] = A[idx[i]] * 2.0;
}
