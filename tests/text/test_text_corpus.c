/* The conformance corpus through the text front end: every file of
 *   stablehlo/testdata (with quantized/ and dynamic/), stablehlo/tests/interpret (with chlo/),
 *   stablehlo/tests/math, stablehlo/tests/vhlo/stablehlo_legalize_to_vhlo*.mlir
 * must parse (`// -----` splits allowed) and verify, and its printout must read back to the same
 * module: print -> parse -> print gives the same text, in the pretty form and from the generic
 * form. Prints the counts per folder. Usage: test_text_corpus CONFORMANCE_DIR */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "../common/files.h"

#include "frontend/frontend.h"
#include "ir/ir.h"

typedef struct counts {
  int files, modules, ok, failed;
  size_t bytes;
} counts;

static int failures_shown = 0;

static void fail(const char *path, const char *what, cj_status st) {
  if (failures_shown++ < 40)
    fprintf(stderr, "FAIL %s: %s%s%s\n", path, what, st ? ": " : "",
            st ? cj_status_message(st) : "");
  cj_status_free(st);
}

/* print(m, flags) -> parse -> print(pretty) must equal `want` (or the first printout) */
static int roundtrip(const char *path, const cj_module *m, unsigned flags, const char *want) {
  char *s1 = NULL, *s2 = NULL;
  size_t n1 = 0, n2 = 0;
  cj_module *m2 = NULL;
  int ok = 0;
  cj_status st = cj_print_module(m, flags, &s1, &n1);
  if (st) {
    fail(path, "print", st);
    goto done;
  }
  st = cj_parse_mlir_text(s1, n1, path, &m2);
  if (st) {
    fail(path, flags & CJ_PRINT_GENERIC ? "re-parse of the generic printout" : "re-parse", st);
    goto done;
  }
  st = cj_verify_module(m2);
  if (st) {
    fail(path, "verify after re-parse", st);
    goto done;
  }
  st = cj_print_module(m2, flags & ~(unsigned)CJ_PRINT_GENERIC, &s2, &n2);
  if (st) {
    fail(path, "second print", st);
    goto done;
  }
  if (strcmp(want ? want : s1, s2) != 0) {
    fail(path, flags & CJ_PRINT_GENERIC ? "generic round trip differs" : "round trip differs",
         NULL);
    goto done;
  }
  ok = 1;
done:
  free(s1);
  free(s2);
  cj_module_free(m2);
  return ok;
}

static void check_file(const char *path, counts *c) {
  size_t len = 0;
  char *text = tc_read_file(path, &len);
  c->files++;
  if (!text) {
    fail(path, "cannot read", NULL);
    c->failed++;
    return;
  }
  c->bytes += len;
  cj_module **mods = NULL;
  size_t n = 0;
  cj_status st = cj_parse_mlir_text_split(text, len, path, &mods, &n);
  if (st) {
    fail(path, "parse", st);
    c->failed++;
    free(text);
    return;
  }
  int good = 1;
  for (size_t i = 0; i < n; i++) {
    c->modules++;
    st = cj_verify_module(mods[i]);
    if (st) {
      fail(path, "verify", st);
      good = 0;
      continue;
    }
    char *pretty = NULL;
    size_t pn = 0;
    st = cj_print_module(mods[i], 0, &pretty, &pn);
    if (st) {
      fail(path, "print", st);
      good = 0;
      continue;
    }
    good &= roundtrip(path, mods[i], 0, NULL);
    good &= roundtrip(path, mods[i], CJ_PRINT_GENERIC, pretty);
    good &= roundtrip(path, mods[i], CJ_PRINT_LOCS, NULL);
    free(pretty);
  }
  for (size_t i = 0; i < n; i++) cj_module_free(mods[i]);
  free(mods);
  free(text);
  if (good)
    c->ok++;
  else
    c->failed++;
}

static int ends_with(const char *s, const char *suf) {
  size_t a = strlen(s), b = strlen(suf);
  return a >= b && strcmp(s + a - b, suf) == 0;
}

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every *.mlir under dir (recursively if `recurse`) whose name starts with `prefix`. */
static void walk(const char *dir, int recurse, const char *prefix, counts *c) {
  DIR *d = opendir(dir);
  if (!d) {
    fprintf(stderr, "FAIL %s: cannot open the folder\n", dir);
    c->failed++;
    return;
  }
  char **names = NULL;
  size_t nn = 0, cap = 0;
  struct dirent *e;
  while ((e = readdir(d))) {
    if (e->d_name[0] == '.') continue;
    if (nn == cap) {
      cap = cap ? cap * 2 : 256;
      char **nv = realloc(names, sizeof *names * cap);
      if (!nv) break;
      names = nv;
    }
    names[nn++] = strdup(e->d_name);
  }
  closedir(d);
  qsort(names, nn, sizeof *names, cmp_str);
  for (size_t i = 0; i < nn; i++) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, names[i]);
    struct stat stt;
    if (stat(path, &stt) == 0 && S_ISDIR(stt.st_mode)) {
      if (recurse) walk(path, recurse, prefix, c);
    } else if (ends_with(names[i], ".mlir") && strncmp(names[i], prefix, strlen(prefix)) == 0) {
      check_file(path, c);
    }
    free(names[i]);
  }
  free(names);
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: test_text_corpus CONFORMANCE_DIR\n");
    return 2;
  }
  static const struct {
    const char *sub;
    int recurse;
    const char *prefix;
  } sets[] = {
      {"stablehlo/testdata", 1, ""},
      {"stablehlo/tests/interpret", 1, ""},
      {"stablehlo/tests/math", 1, ""},
      {"stablehlo/tests/vhlo", 0, "stablehlo_legalize_to_vhlo"},
  };
  counts total = {0};
  clock_t t0 = clock();
  for (size_t k = 0; k < sizeof sets / sizeof sets[0]; k++) {
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/%s", argv[1], sets[k].sub);
    counts c = {0};
    walk(dir, sets[k].recurse, sets[k].prefix, &c);
    printf("%-28s %5d files %6d modules %9zu bytes: %5d ok, %d failed\n", sets[k].sub, c.files,
           c.modules, c.bytes, c.ok, c.failed);
    total.files += c.files;
    total.modules += c.modules;
    total.ok += c.ok;
    total.failed += c.failed;
    total.bytes += c.bytes;
  }
  double secs = (double)(clock() - t0) / CLOCKS_PER_SEC;
  printf(
      "text corpus: %d files (%d modules, %.1f MB): %d ok, %d failed (%.2f s with 3 round "
      "trips each)\n",
      total.files, total.modules, (double)total.bytes / 1e6, total.ok, total.failed, secs);
  if (total.files < 2000) {
    fprintf(stderr, "FAIL: only %d files found under %s (is the corpus there?)\n", total.files,
            argv[1]);
    return 1;
  }
  return total.failed ? 1 : 0;
}
