/* test_ops_cases: runs StableHLO op cases through the CPU backend. Each file holds cases separated
 * by lines `// -----`; every case is parsed, verified, compiled and executed, and passes when that
 * succeeds (the case's check.* custom calls compare each result with expected values that the
 * case generator computed with numpy, or that are derived by hand). Case lines:
 *   // case: NAME          names the case (otherwise it is "case K", K counting from 0)
 *   // expect-error: TEXT  the case must instead fail to compile with a message containing TEXT
 *   // threads: N          runs it on a pool of N threads (default: every core), so that the
 *                          parallel paths of the kernels run
 *
 *   test_ops_cases [--case SEL]... [--list] FILE...
 *
 * A failure is reported as FILE:LINE (the line of the case's `// case:` line in FILE, or of its
 * first line), and positions in parser and
 * verifier messages are lines of FILE too. --case SEL runs only the cases whose name contains SEL
 * or whose FILE:LINE ends with SEL (`--case cases.mlir:67`); selecting none is a failure. --list
 * prints each case's FILE:LINE and name without running it. Exit status 0 when every case run
 * passes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "files.h"
#include "../cpu/prog_util.h"

static int ncases = 0;

typedef struct options {
  const char *sel[16];
  int nsel;
  int list;
} options;

/* The text after `key` on its line (up to the newline), if `key` starts a line of `text`. */
static const char *line_value(const char *text, const char *key, int *n) {
  size_t kl = strlen(key);
  for (const char *s = text; s && *s; s = strchr(s, '\n'), s = s ? s + 1 : NULL) {
    if (strncmp(s, key, kl) != 0) continue;
    const char *e = strchr(s + kl, '\n');
    *n = e ? (int)(e - (s + kl)) : (int)strlen(s + kl);
    return s + kl;
  }
  return NULL;
}

static int ends_with(const char *s, const char *suffix) {
  size_t a = strlen(s), b = strlen(suffix);
  return a >= b && strcmp(s + a - b, suffix) == 0;
}

static int selected(const options *o, const char *where, const char *name) {
  if (!o->nsel) return 1;
  for (int i = 0; i < o->nsel; i++)
    if (strstr(name, o->sel[i]) || ends_with(where, o->sel[i])) return 1;
  return 0;
}

/* Runs one case: `text` is the case, `line` the line of FILE it starts on. */
static void run_case(const options *o, const char *file, int k, const char *text, int line) {
  /* the case's own first line: skip blank lines and the `// -----` remains */
  const char *s = text;
  while (*s == '\n') {
    s++;
    line++;
  }
  char where[4096], name[512];
  int n = 0, at = line; /* a named case is where its `// case:` line is */
  const char *cn = line_value(s, "// case: ", &n);
  if (cn) {
    snprintf(name, sizeof name, "%.*s", n, cn);
    for (const char *c = s; c < cn; c++) at += *c == '\n';
  } else {
    snprintf(name, sizeof name, "case %d", k);
  }
  snprintf(where, sizeof where, "%s:%d", file, at);
  if (!selected(o, where, name)) return;
  ncases++;
  if (o->list) {
    printf("%s: %s\n", where, name);
    return;
  }
  char errbuf[256] = {0};
  const char *want_err = NULL;
  const char *ee = line_value(s, "// expect-error: ", &n);
  if (ee && ee == s + 17) { /* only as the case's first line */
    snprintf(errbuf, sizeof errbuf, "%.*s", n, ee);
    want_err = errbuf;
  }
  /* parse the case at its place in FILE: blank lines before it keep the positions real */
  size_t len = strlen(s);
  char *padded = malloc((size_t)line - 1 + len + 1);
  if (!padded) {
    CHECK_MSG(0, "%s: %s: out of memory", where, name);
    return;
  }
  memset(padded, '\n', (size_t)line - 1);
  memcpy(padded + line - 1, s, len + 1);
  cj_status err = NULL;
  cj_compiled *p = tu_compile_named(padded, file, &err);
  free(padded);
  if (want_err) {
    CHECK_MSG(!p && err && strstr(cj_status_message(err), want_err),
              "%s: %s: expected a compile error containing \"%s\", got %s", where, name, want_err,
              p ? "success" : cj_status_message(err));
    cj_status_free(err);
    if (p) tu_free(p);
    return;
  }
  if (!p) {
    CHECK_MSG(0, "%s: %s: compile failed: %s", where, name, cj_status_message(err));
    cj_status_free(err);
    return;
  }
  cj_threadpool *pool = tu_pool();
  cj_threadpool *own = NULL;
  const char *th = line_value(s, "// threads: ", &n);
  if (th) {
    cj_status st = NULL;
    own = cj_pool_create(atoi(th), &st);
    CHECK_MSG(own != NULL, "%s: %s: no pool of %d threads: %s", where, name, atoi(th),
              cj_status_message(st));
    cj_status_free(st);
    if (own) pool = own;
  }
  const cj_program_info *info = tu_info(p);
  void *res[16] = {0};
  cj_status st = info->num_results <= 16 ? tu_run(p, NULL, res, pool)
                                         : cj_internal("too many results");
  CHECK_MSG(!st, "%s: %s: execute failed: %s", where, name, st ? cj_status_message(st) : "");
  cj_status_free(st);
  for (int j = 0; j < 16; j++) free(res[j]);
  tu_free(p);
  cj_pool_destroy(own);
}

static void run_file(const options *o, const char *path) {
  char *data = tc_read_file(path, NULL);
  CHECK_MSG(data != NULL, "cannot read %s", path);
  if (!data) return;
  int k = 0, line = 1;
  char *p = data;
  for (;;) {
    char *cut = strstr(p, "\n// -----");
    if (cut) *cut = 0;
    run_case(o, path, k++, p, line);
    if (!cut) break;
    for (const char *c = p; *c; c++) line += *c == '\n';
    line++; /* the newline `cut` replaced */
    p = strchr(cut + 1, '\n');
    if (!p) break;
    line++; /* the `// -----` line */
    p++;
  }
  free(data);
}

static int usage(FILE *f) {
  fprintf(f,
          "usage: test_ops_cases [--case SEL]... [--list] FILE...\n"
          "  runs the `// -----`-separated StableHLO cases of each FILE (see the comment at the\n"
          "  top of tests/common/run_op_cases.c); failures name FILE:LINE of the case.\n"
          "  --case SEL  only cases whose `// case:` name contains SEL, or whose FILE:LINE ends\n"
          "              with SEL (e.g. --case cases.mlir:67); may repeat\n"
          "  --list      print FILE:LINE and the name of each (selected) case, run nothing\n");
  return f == stdout ? 0 : 2;
}

int main(int argc, char **argv) {
  (void)tu_expect_bytes;
  (void)tu_compile;
  options o = {{0}, 0, 0};
  int nfiles = 0;
  for (int a = 1; a < argc; a++) {
    if (!strcmp(argv[a], "--help") || !strcmp(argv[a], "-h")) return usage(stdout);
    if (!strcmp(argv[a], "--list")) {
      o.list = 1;
    } else if (!strcmp(argv[a], "--case") && a + 1 < argc && o.nsel < 16) {
      o.sel[o.nsel++] = argv[++a];
    } else if (argv[a][0] == '-' && argv[a][1] == '-') {
      fprintf(stderr, "test_ops_cases: unknown option %s\n", argv[a]);
      return usage(stderr);
    } else {
      nfiles++;
    }
  }
  if (!nfiles) return usage(stderr);
  for (int a = 1; a < argc; a++) {
    if (!strcmp(argv[a], "--case")) {
      a++;
      continue;
    }
    if (argv[a][0] == '-' && argv[a][1] == '-') continue;
    run_file(&o, argv[a]);
  }
  printf("%d cases\n", ncases);
  CHECK_MSG(ncases > 0 || !o.nsel, "no case matches the --case selection");
  cj_pool_destroy(tu_pool());
  return o.list ? (ncases > 0 || !o.nsel ? 0 : 1) : check_report("test_ops_cases");
}
