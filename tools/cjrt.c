/* cjrt: the command-line tool. Dispatches to the subcommands listed in commands.def. */
#include <stdio.h>
#include <string.h>

#define CMD(name, summary) int cjrt_cmd_##name(int argc, char **argv);
#include "commands.def"
#undef CMD

static const struct {
  const char *name, *summary;
  int (*fn)(int, char **);
} commands[] = {
#define CMD(name, summary) {#name, summary, cjrt_cmd_##name},
#include "commands.def"
#undef CMD
};

static void usage(FILE *f) {
  fprintf(f, "usage: cjrt <command> [options]   (cjrt <command> --help for its options)\n\n");
  for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
    fprintf(f, "  %-8s %s\n", commands[i].name, commands[i].summary);
}

int main(int argc, char **argv) {
  if (argc < 2) {
    usage(stderr);
    return 2;
  }
  if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
    usage(stdout);
    return 0;
  }
  for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
    if (!strcmp(argv[1], commands[i].name)) return commands[i].fn(argc - 1, argv + 1);
  fprintf(stderr, "cjrt: unknown command '%s'\n\n", argv[1]);
  usage(stderr);
  return 2;
}
