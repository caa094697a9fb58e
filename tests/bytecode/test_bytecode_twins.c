/* cjrt tests: bytecode and text say the same thing.
 *
 *   test_bytecode_twins <conformance vhlo dir> <fixtures dir> [--show NAME]
 *
 * Every portable artifact of the conformance corpus (stablehlo_legalize_to_vhlo.X.mlir.bc, and
 * vhlo_emit_version_api) is read with the bytecode reader, its .mlir twin with the text parser,
 * and both modules are printed (without locations): the printed forms must be equal. The same
 * for the JAX fixtures, whose upstream reading was saved as text (X.export.mlir beside
 * X.export.mlir.bc, X.plugin.mlir beside X.plugin.mlir.bc, features.mlir beside
 * features.mlir.bc). On a mismatch the first differing line is shown; --show NAME prints both
 * forms of the files whose name contains NAME.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/files.h"

#include "common/check.h"
#include "frontend/frontend.h"

static bool ends_with(const char *s, const char *suffix) {
  size_t a = strlen(s), b = strlen(suffix);
  return a >= b && strcmp(s + a - b, suffix) == 0;
}

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static char **list_dir(const char *dir, const char *suffix, int *n) {
  *n = 0;
  DIR *d = opendir(dir);
  if (!d) return NULL;
  char **names = NULL;
  int cap = 0;
  struct dirent *e;
  while ((e = readdir(d))) {
    if (!ends_with(e->d_name, suffix)) continue;
    if (*n == cap) {
      cap = cap ? cap * 2 : 32;
      names = realloc(names, sizeof *names * (size_t)cap);
    }
    names[(*n)++] = strdup(e->d_name);
  }
  closedir(d);
  qsort(names, (size_t)*n, sizeof *names, cmp_str);
  return names;
}

static const char *show_name = NULL;

/* Prints the first line where a and b differ. */
static void show_first_difference(const char *name, const char *a, const char *b) {
  int line = 1;
  const char *la = a, *lb = b;
  while (*a && *a == *b) {
    if (*a == '\n') {
      line++;
      la = a + 1;
      lb = b + 1;
    }
    a++;
    b++;
  }
  const char *ea = strchr(la, '\n'), *eb = strchr(lb, '\n');
  int na = ea ? (int)(ea - la) : (int)strlen(la), nb = eb ? (int)(eb - lb) : (int)strlen(lb);
  fprintf(stderr, "%s: printed forms differ at line %d\n  bytecode: %.*s\n  text:     %.*s\n", name,
          line, na > 400 ? 400 : na, la, nb > 400 ? 400 : nb, lb);
}

/* 1 if the pair matches, 0 if not (checks counted). */
static int compare_pair(const char *label, const char *bc_path, const char *text_path) {
  size_t blen, tlen;
  char *bc = tc_read_file(bc_path, &blen);
  char *text = tc_read_file(text_path, &tlen);
  CHECK_MSG(bc && text, "cannot read %s or %s", bc_path, text_path);
  int ok = 0;
  cj_module *mb = NULL, *mt = NULL;
  char *pb = NULL, *pt = NULL;
  size_t nb = 0, nt = 0;
  if (!bc || !text) goto done;
  cj_status st = cj_read_mlir_bytecode(bc, blen, bc_path, &mb);
  CHECK_MSG(st == NULL, "%s: %s", label, cj_status_message(st));
  cj_status_free(st);
  st = cj_parse_mlir_text(text, tlen, text_path, &mt);
  CHECK_MSG(st == NULL, "%s (text): %s", label, cj_status_message(st));
  cj_status_free(st);
  if (!mb || !mt) goto done;
  st = cj_print_module(mb, 0, &pb, &nb);
  CHECK_MSG(st == NULL, "%s: print: %s", label, cj_status_message(st));
  cj_status_free(st);
  st = cj_print_module(mt, 0, &pt, &nt);
  CHECK_MSG(st == NULL, "%s (text): print: %s", label, cj_status_message(st));
  cj_status_free(st);
  if (!pb || !pt) goto done;
  bool same = nb == nt && memcmp(pb, pt, nb) == 0;
  CHECK_MSG(same, "%s: the bytecode and its text twin print differently", label);
  if (!same) show_first_difference(label, pb, pt);
  if (show_name && strstr(label, show_name))
    printf("==== %s (bytecode)\n%s\n==== %s (text)\n%s\n", label, pb, label, pt);
  ok = same;
done:
  free(pb);
  free(pt);
  cj_module_free(mb);
  cj_module_free(mt);
  free(bc);
  free(text);
  return ok;
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: %s <conformance vhlo dir> <fixtures dir> [--show NAME]\n", argv[0]);
    return 2;
  }
  if (argc >= 5 && strcmp(argv[3], "--show") == 0) show_name = argv[4];
  int n, same = 0, pairs = 0;
  char **names = list_dir(argv[1], ".mlir.bc", &n);
  for (int i = 0; i < n; i++) {
    if (strncmp(names[i], "invalid_", 8) != 0) {
      char bc[4096], text[4096];
      snprintf(bc, sizeof bc, "%s/%s", argv[1], names[i]);
      snprintf(text, sizeof text, "%s/%.*s", argv[1], (int)(strlen(names[i]) - 3), names[i]);
      pairs++;
      same += compare_pair(names[i], bc, text);
    }
    free(names[i]);
  }
  free(names);
  CHECK_MSG(pairs >= 23, "only %d corpus pairs", pairs);
  printf("corpus: %d of %d bytecode files print the same as their text twin\n", same, pairs);

  int fsame = 0, fpairs = 0;
  names = list_dir(argv[2], ".mlir", &n);
  for (int i = 0; i < n; i++) {
    char bc[4096], text[4096];
    snprintf(text, sizeof text, "%s/%s", argv[2], names[i]);
    snprintf(bc, sizeof bc, "%s/%s.bc", argv[2], names[i]);
    fpairs++;
    fsame += compare_pair(names[i], bc, text);
    free(names[i]);
  }
  free(names);
  CHECK_MSG(fpairs >= 17, "only %d fixture pairs", fpairs);
  printf("fixtures: %d of %d bytecode files print the same as their text twin\n", fsame, fpairs);
  return check_report("bytecode_twins");
}
