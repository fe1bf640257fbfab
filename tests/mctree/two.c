/* Two candidate kernels and no #pragma scop: the user must name one. */
double a[64];
void kernel_one(void) { for (int i = 0; i < 64; i++) a[i] = i; }
void kernel_two(void) { for (int i = 0; i < 64; i++) a[i] += i; }
int main(void) { kernel_one(); kernel_two(); return 0; }
