/* bench_parse: how fast the text front end reads StableHLO. Loads every .mlir file of the
 * conformance tree into memory, then parses (`// -----` splits included) and verifies all of them
 * on one core, several rounds, and reports MB/s (best and median round) and files/s.
 *
 *   bench_parse [--rounds N] [--no-verify] [DIR]      (DIR defaults to the conformance corpus)
 */
#include <dirent.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "frontend/frontend.h"
#include "ir/ir.h"

#ifndef CJRT_CONFORMANCE_DIR
#define CJRT_CONFORMANCE_DIR "../shared/conformance"
#endif

typedef struct file {
  char *path, *data;
  size_t len;
} file;

static file *files;
static size_t nfiles, capfiles;

static void add_file(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *d = malloc((size_t)(n > 0 ? n : 0) + 1);
  if (!d || fread(d, 1, (size_t)n, f) != (size_t)n) {
    free(d);
    fclose(f);
    return;
  }
  fclose(f);
  if (nfiles == capfiles) {
    capfiles = capfiles ? capfiles * 2 : 1024;
    file *nf = realloc(files, sizeof *files * capfiles);
    if (!nf) {
      free(d);
      return;
    }
    files = nf;
  }
  files[nfiles].path = strdup(path);
  files[nfiles].data = d;
  files[nfiles].len = (size_t)n;
  nfiles++;
}

static void walk(const char *dir) {
  DIR *d = opendir(dir);
  if (!d) return;
  struct dirent *e;
  while ((e = readdir(d))) {
    if (e->d_name[0] == '.') continue;
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    struct stat st;
    if (stat(path, &st) != 0) continue;
    size_t l = strlen(e->d_name);
    if (S_ISDIR(st.st_mode))
      walk(path);
    else if (l > 5 && !strcmp(e->d_name + l - 5, ".mlir"))
      add_file(path);
  }
  closedir(d);
}

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
  const char *dir = CJRT_CONFORMANCE_DIR;
  int rounds = 7, verify = 1;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--rounds") && i + 1 < argc)
      rounds = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--no-verify"))
      verify = 0;
    else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
      printf("usage: bench_parse [--rounds N] [--no-verify] [DIR]\n");
      return 0;
    } else
      dir = argv[i];
  }
  if (rounds < 1) rounds = 1;
  /* one core */
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(sched_getcpu() >= 0 ? sched_getcpu() : 0, &set);
  sched_setaffinity(0, sizeof set, &set);

  walk(dir);
  size_t total = 0;
  for (size_t i = 0; i < nfiles; i++) total += files[i].len;
  if (!nfiles) {
    fprintf(stderr, "bench_parse: no .mlir files under %s\n", dir);
    return 1;
  }
  double *t = malloc(sizeof(double) * (size_t)rounds);
  size_t failed = 0, modules = 0;
  for (int r = 0; r < rounds; r++) {
    failed = modules = 0;
    double t0 = now();
    for (size_t i = 0; i < nfiles; i++) {
      cj_module **mods = NULL;
      size_t n = 0;
      cj_status st =
          cj_parse_mlir_text_split(files[i].data, files[i].len, files[i].path, &mods, &n);
      if (st) {
        failed++;
        cj_status_free(st);
        continue;
      }
      for (size_t k = 0; k < n; k++) {
        if (verify) {
          cj_status vs = cj_verify_module(mods[k]);
          if (vs) failed++;
          cj_status_free(vs);
        }
        cj_module_free(mods[k]);
      }
      modules += n;
      free(mods);
    }
    t[r] = now() - t0;
  }
  qsort(t, (size_t)rounds, sizeof *t, cmp_double);
  double best = t[0], med = t[rounds / 2];
  printf("bench_parse: %zu files, %zu modules, %.2f MB under %s\n", nfiles, modules,
         (double)total / 1e6, dir);
  printf(
      "bench_parse: parse%s on one core: best %.1f ms = %.1f MB/s, median %.1f ms = %.1f MB/s, "
      "%.0f files/s (%d rounds); %zu files/modules failed\n",
      verify ? " + verify" : "", best * 1e3, (double)total / 1e6 / best, med * 1e3,
      (double)total / 1e6 / med, (double)nfiles / med, rounds, failed);
  for (size_t i = 0; i < nfiles; i++) {
    free(files[i].path);
    free(files[i].data);
  }
  free(files);
  free(t);
  return 0;
}
