/* cjrt conform: not built yet (placeholder until its issue lands). */
#include <stdio.h>

int cjrt_cmd_conform(int argc, char **argv) {
  (void)argc;
  (void)argv;
  fprintf(stderr, "cjrt conform: not implemented yet\n");
  return 2;
}
