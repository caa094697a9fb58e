/* cjrt info: not built yet (placeholder until its issue lands). */
#include <stdio.h>

int cjrt_cmd_info(int argc, char **argv) {
  (void)argc;
  (void)argv;
  fprintf(stderr, "cjrt info: not implemented yet\n");
  return 2;
}
