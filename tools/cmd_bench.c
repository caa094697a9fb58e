/* cjrt bench: not built yet (placeholder until its issue lands). */
#include <stdio.h>

int cjrt_cmd_bench(int argc, char **argv) {
  (void)argc;
  (void)argv;
  fprintf(stderr, "cjrt bench: not implemented yet\n");
  return 2;
}
