/* cjrt run: not built yet (placeholder until its issue lands). */
#include <stdio.h>

int cjrt_cmd_run(int argc, char **argv) {
  (void)argc;
  (void)argv;
  fprintf(stderr, "cjrt run: not implemented yet\n");
  return 2;
}
