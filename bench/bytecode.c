/* cjrt bench: MLIR bytecode (VHLO) decoding vs the text parser on the same programs.
 *
 *   bench_bytecode [--min-time SECONDS] DIR...
 *
 * For every program found as a pair in the directories given -- X.mlir with X.mlir.bc (the
 * conformance corpus's tests/vhlo, tests/bytecode/fixtures) --
 * it times cj_parse_mlir_text on the text and cj_read_mlir_bytecode on the bytecode (each repeated
 * until it has run for --min-time, default 0.2 s, on one thread) and reports both: the text
 * parser's MB/s of text, the reader's time to decode, and the reader's speed expressed in MB/s of
 * the same program's text (text bytes / decode time), so the two figures compare directly.
 * Not a test: it prints numbers.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "frontend/frontend.h"

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

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
  if (buf) buf[n] = 0;
  fclose(f);
  *len = (size_t)n;
  return buf;
}

static bool ends_with(const char *s, const char *suffix) {
  size_t a = strlen(s), b = strlen(suffix);
  return a >= b && strcmp(s + a - b, suffix) == 0;
}

static double min_time = 0.2;

/* Seconds per run of one reader on one input (-1 if it fails). */
static double time_text(const char *data, size_t len, const char *name) {
  int iters = 0;
  double t0 = now(), t;
  do {
    cj_module *m = NULL;
    cj_status st = cj_parse_mlir_text(data, len, name, &m);
    if (st) {
      fprintf(stderr, "%s: %s\n", name, cj_status_message(st));
      cj_status_free(st);
      return -1;
    }
    cj_module_free(m);
    iters++;
  } while ((t = now() - t0) < min_time);
  return t / iters;
}

static double time_bytecode(const char *data, size_t len, const char *name) {
  int iters = 0;
  double t0 = now(), t;
  do {
    cj_module *m = NULL;
    cj_status st = cj_read_mlir_bytecode(data, len, name, &m);
    if (st) {
      fprintf(stderr, "%s: %s\n", name, cj_status_message(st));
      cj_status_free(st);
      return -1;
    }
    cj_module_free(m);
    iters++;
  } while ((t = now() - t0) < min_time);
  return t / iters;
}

typedef struct totals {
  double text_bytes, bc_bytes, text_s, bc_s;
  int n;
} totals;

static void bench_pair(const char *label, const char *text_path, const char *bc_path, totals *tot) {
  size_t tlen, blen;
  char *text = read_file(text_path, &tlen);
  char *bc = read_file(bc_path, &blen);
  if (!text || !bc) {
    free(text);
    free(bc);
    return;
  }
  double tt = time_text(text, tlen, text_path);
  double tb = time_bytecode(bc, blen, bc_path);
  if (tt > 0 && tb > 0) {
    printf(
        "%-44s text %7zu B %8.1f us %7.1f MB/s | bytecode %6zu B %8.1f us (%7.1f MB/s of text) "
        "%5.2fx\n",
        label, tlen, tt * 1e6, tlen / tt / 1e6, blen, tb * 1e6, tlen / tb / 1e6, tt / tb);
    tot->text_bytes += (double)tlen;
    tot->bc_bytes += (double)blen;
    tot->text_s += tt;
    tot->bc_s += tb;
    tot->n++;
  }
  free(text);
  free(bc);
}

int main(int argc, char **argv) {
  totals tot = {0};
  for (int a = 1; a < argc; a++) {
    if (strcmp(argv[a], "--min-time") == 0 && a + 1 < argc) {
      min_time = atof(argv[++a]);
      continue;
    }
    DIR *d = opendir(argv[a]);
    if (!d) {
      fprintf(stderr, "cannot open %s\n", argv[a]);
      continue;
    }
    struct dirent *e;
    while ((e = readdir(d))) {
      const char *n = e->d_name;
      if (!ends_with(n, ".mlir")) continue;
      char text[4096], bc[4096];
      snprintf(text, sizeof text, "%s/%s", argv[a], n);
      snprintf(bc, sizeof bc, "%s/%s.bc", argv[a], n);
      FILE *f = fopen(bc, "rb");
      if (!f) continue;
      fclose(f);
      bench_pair(n, text, bc, &tot);
    }
    closedir(d);
  }
  if (!tot.n) {
    fprintf(stderr, "usage: %s [--min-time S] DIR... (directories with X.mlir + X.mlir.bc pairs)\n",
            argv[0]);
    return 1;
  }
  printf(
      "\n%d programs: text parser %.1f MB/s (%.2f ms for %.0f KB of text); bytecode reader "
      "%.2f ms for %.0f KB of bytecode = %.1f MB/s of the same text; %.2fx the text parser\n",
      tot.n, tot.text_bytes / tot.text_s / 1e6, tot.text_s * 1e3, tot.text_bytes / 1024,
      tot.bc_s * 1e3, tot.bc_bytes / 1024, tot.text_bytes / tot.bc_s / 1e6, tot.text_s / tot.bc_s);
  return 0;
}
