/* Sleeps 3 s the first time it runs (while the file $SLOW_ONCE does not exist), then prints a
   kernel time: a run timeout of 1 s cuts its first run only. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(void) {
  const char *marker = getenv("SLOW_ONCE");
  if (marker != NULL && access(marker, F_OK) != 0) {
    FILE *f = fopen(marker, "w");
    if (f != NULL) fclose(f);
    sleep(3);
  }
  printf("%d.0e-3\n", P0);
  return 0;
}
