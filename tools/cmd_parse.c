/* cjrt parse: not built yet (placeholder until its issue lands). */
#include <stdio.h>

int cjrt_cmd_parse(int argc, char **argv) {
  (void)argc;
  (void)argv;
  fprintf(stderr, "cjrt parse: not implemented yet\n");
  return 2;
}
