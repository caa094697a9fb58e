/* Runs StableHLO test cases through the CPU backend: each file holds cases separated by lines
 * `// -----`; every case is parsed, verified, compiled and executed, and passes when that
 * succeeds (the case's check.* custom calls compare each result with expected values that the
 * case generator computed with numpy, or that are derived by hand). A case whose first line is
 *   // expect-error: TEXT
 * must instead fail to compile with a message containing TEXT. An optional
 *   // threads: N
 * line runs the case on a pool of N threads (default: every core), so that the parallel
 * paths of the kernels run.
 *
 *   test_ops_cases FILE...   exit status 0 when every case passes */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/check.h"
#include "../cpu/prog_util.h"

static char *read_file(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *buf = malloc((size_t)n + 1);
  if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
    free(buf);
    buf = NULL;
  }
  fclose(f);
  if (buf) {
    buf[n] = 0;
    *len = (size_t)n;
  }
  return buf;
}

static int ncases = 0;

static void run_case(const char *file, int k, char *text) {
  ncases++;
  char name[512];
  snprintf(name, sizeof name, "%s case %d", file, k);
  const char *want_err = NULL;
  char errbuf[256] = {0};
  const char *s = text;
  while (*s == '\n') s++;
  if (!strncmp(s, "// expect-error: ", 17)) {
    const char *e = strchr(s + 17, '\n');
    size_t n = e ? (size_t)(e - (s + 17)) : strlen(s + 17);
    if (n >= sizeof errbuf) n = sizeof errbuf - 1;
    memcpy(errbuf, s + 17, n);
    want_err = errbuf;
  }
  /* the case's name, from a `// case: NAME` line */
  const char *cn = strstr(text, "// case: ");
  if (cn) {
    const char *e = strchr(cn, '\n');
    int n = e ? (int)(e - cn - 9) : (int)strlen(cn + 9);
    snprintf(name, sizeof name, "%s case %d (%.*s)", file, k, n, cn + 9);
  }
  cj_status err = NULL;
  cj_compiled *p = tu_compile(text, &err);
  if (want_err) {
    CHECK_MSG(!p && err && strstr(cj_status_message(err), want_err),
              "%s: expected a compile error containing \"%s\", got %s", name, want_err,
              p ? "success" : cj_status_message(err));
    cj_status_free(err);
    if (p) tu_free(p);
    return;
  }
  if (!p) {
    CHECK_MSG(0, "%s: compile failed: %s", name, cj_status_message(err));
    cj_status_free(err);
    return;
  }
  cj_threadpool *pool = tu_pool();
  cj_threadpool *own = NULL;
  const char *th = strstr(text, "// threads: ");
  if (th) {
    cj_status st = NULL;
    own = cj_pool_create(atoi(th + 12), &st);
    cj_status_free(st);
    if (own) pool = own;
  }
  const cj_program_info *info = tu_info(p);
  void *res[16] = {0};
  cj_status st = info->num_results <= 16 ? tu_run(p, NULL, res, pool)
                                         : cj_internal("too many results");
  CHECK_MSG(!st, "%s: execute failed: %s", name, st ? cj_status_message(st) : "");
  cj_status_free(st);
  for (int j = 0; j < 16; j++) free(res[j]);
  tu_free(p);
  cj_pool_destroy(own);
}

int main(int argc, char **argv) {
  (void)tu_expect_bytes;
  for (int a = 1; a < argc; a++) {
    size_t len = 0;
    char *data = read_file(argv[a], &len);
    CHECK_MSG(data != NULL, "cannot read %s", argv[a]);
    if (!data) continue;
    int k = 0;
    char *p = data;
    for (;;) {
      char *cut = strstr(p, "\n// -----");
      if (cut) *cut = 0;
      run_case(argv[a], k++, p);
      if (!cut) break;
      p = strchr(cut + 1, '\n');
      if (!p) break;
    }
    free(data);
  }
  printf("%d cases\n", ncases);
  cj_pool_destroy(tu_pool());
  return check_report("test_ops_cases");
}
