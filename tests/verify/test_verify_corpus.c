/* Every program of the conformance corpus must verify: parses each .mlir file under testdata/
 * (incl. quantized and dynamic), tests/interpret/, tests/math/ and the
 * tests/vhlo/stablehlo_legalize_to_vhlo*.mlir files, runs cj_verify_module on every module and
 * prints the counts. Fails if any file does not parse or does not verify.
 *
 * Usage: test_verify_corpus CONFORMANCE_DIR [-v]   (-v prints every failure, not only 20) */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "../common/files.h"

#include "frontend/frontend.h"
#include "ir/ir.h"

typedef struct stats {
  int files, modules, verified, parse_failed, verify_failed, shown, show_max;
  double parse_s, verify_s;
  size_t bytes;
} stats;

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void show(stats *s, const char *what, const char *path, const char *msg) {
  if (s->shown++ < s->show_max) fprintf(stderr, "%s: %s\n  %s\n", what, path, msg);
}

static void do_file(stats *s, const char *path) {
  size_t len;
  char *text = tc_read_file(path, &len);
  if (!text) {
    s->parse_failed++;
    show(s, "cannot read", path, "");
    return;
  }
  s->files++;
  s->bytes += len;
  cj_module **mods = NULL;
  size_t n = 0;
  double t0 = now();
  cj_status st = cj_parse_mlir_text_split(text, len, path, &mods, &n);
  s->parse_s += now() - t0;
  if (st) {
    s->parse_failed++;
    show(s, "PARSE", path, cj_status_message(st));
    cj_status_free(st);
    free(text);
    return;
  }
  for (size_t i = 0; i < n; i++) {
    s->modules++;
    t0 = now();
    cj_status vs = cj_verify_module(mods[i]);
    s->verify_s += now() - t0;
    if (vs) {
      s->verify_failed++;
      show(s, "VERIFY", path, cj_status_message(vs));
      cj_status_free(vs);
    } else {
      s->verified++;
    }
    cj_module_free(mods[i]);
  }
  free(mods);
  free(text);
}

static int has_suffix(const char *s, const char *suf) {
  size_t a = strlen(s), b = strlen(suf);
  return a >= b && strcmp(s + a - b, suf) == 0;
}

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Walks dir recursively (sorted, so the output is stable); `prefix` filters file names. */
static void walk(stats *s, const char *dir, const char *prefix) {
  DIR *d = opendir(dir);
  if (!d) {
    fprintf(stderr, "cannot open %s\n", dir);
    s->parse_failed++;
    return;
  }
  char **names = NULL;
  size_t n = 0, cap = 0;
  struct dirent *e;
  while ((e = readdir(d))) {
    if (e->d_name[0] == '.') continue;
    if (n == cap) {
      cap = cap ? cap * 2 : 256;
      names = realloc(names, cap * sizeof *names);
    }
    names[n++] = strdup(e->d_name);
  }
  closedir(d);
  qsort(names, n, sizeof *names, cmp_str);
  for (size_t i = 0; i < n; i++) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, names[i]);
    struct stat sb;
    if (stat(path, &sb) == 0 && S_ISDIR(sb.st_mode)) {
      if (!prefix) walk(s, path, prefix);
    } else if (has_suffix(names[i], ".mlir") &&
               (!prefix || strncmp(names[i], prefix, strlen(prefix)) == 0)) {
      do_file(s, path);
    }
    free(names[i]);
  }
  free(names);
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s CONFORMANCE_DIR [-v]\n", argv[0]);
    return 2;
  }
  stats s = {0};
  s.show_max = argc > 2 && strcmp(argv[2], "-v") == 0 ? 1 << 30 : 20;
  static const struct {
    const char *sub, *prefix;
  } sets[] = {{"stablehlo/testdata", NULL},
              {"stablehlo/tests/interpret", NULL},
              {"stablehlo/tests/math", NULL},
              {"stablehlo/tests/vhlo", "stablehlo_legalize_to_vhlo"}};
  for (size_t i = 0; i < sizeof sets / sizeof sets[0]; i++) {
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/%s", argv[1], sets[i].sub);
    stats before = s;
    walk(&s, dir, sets[i].prefix);
    printf("%-32s files %5d  modules %5d  verified %5d  parse failures %3d  verify failures %3d\n",
           sets[i].sub, s.files - before.files, s.modules - before.modules,
           s.verified - before.verified, s.parse_failed - before.parse_failed,
           s.verify_failed - before.verify_failed);
  }
  printf("total: %d files (%.1f MB), %d modules, %d verified, %d parse failures, %d verify "
         "failures; parse %.3f s, verify %.3f s (%.0f MB/s)\n",
         s.files, (double)s.bytes / 1e6, s.modules, s.verified, s.parse_failed, s.verify_failed,
         s.parse_s, s.verify_s, s.verify_s > 0 ? (double)s.bytes / 1e6 / s.verify_s : 0.0);
  if (s.files == 0) {
    fprintf(stderr, "no files found under %s\n", argv[1]);
    return 1;
  }
  return s.parse_failed || s.verify_failed ? 1 : 0;
}
