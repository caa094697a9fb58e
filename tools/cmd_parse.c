/* cjrt parse: parse and verify MLIR files, printing them or checking print/parse round trips.
 * Files named *.pb (a serialized xla.HloModuleProto) and *.hlo (HLO text) are read as HLO and
 * printed as the StableHLO they lower to.
 *
 *   cjrt parse [--roundtrip] [--quiet] [--generic] [--locs] FILE...
 *
 * Text files may hold several modules separated by `// -----` lines; each is parsed, verified and
 * printed (separated the same way). With --roundtrip each module is printed, parsed back and
 * printed again, in the pretty and in the generic form, and the printouts must be identical.
 * Failures are reported as `FILE:LINE:COL: error: ...`; the last line is `parse: N ok, M failed`
 * and the exit status is 1 when M > 0.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frontend/frontend.h"
#include "ir/ir.h"

static void usage(FILE *f) {
  fprintf(f,
          "usage: cjrt parse [--roundtrip] [--quiet] [--generic] [--locs] FILE...\n"
          "\n"
          "Parses each MLIR file (text, `// -----` splits allowed; bytecode once its reader is\n"
          "built) and verifies it, then prints the module. FILE.pb (an xla.HloModuleProto) and\n"
          "FILE.hlo (HLO text) are read as HLO and printed as the StableHLO they lower to.\n"
          "\n"
          "  --roundtrip  print, parse the printout and print again (pretty and generic forms);\n"
          "               the printouts must match\n"
          "  --quiet      print nothing but errors and the summary\n"
          "  --generic    print every op in the generic form\n"
          "  --locs       print locations\n"
          "  -h, --help   this text\n"
          "\n"
          "Errors are reported as FILE:LINE:COL: error: MESSAGE. The last line is\n"
          "`parse: N ok, M failed`; the exit status is 1 if any file failed, 2 on bad usage.\n");
}

static char *read_file(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  size_t cap = 1 << 16, n = 0;
  char *buf = malloc(cap);
  while (buf) {
    size_t got = fread(buf + n, 1, cap - n, f);
    n += got;
    if (n < cap) break;
    cap *= 2;
    char *nb = realloc(buf, cap);
    if (!nb) {
      free(buf);
      buf = NULL;
    }
    buf = nb;
  }
  fclose(f);
  if (buf) *len = n;
  return buf;
}

/* Reformats a status message as `FILE:LINE:COL: error: ...`. Parser messages start with
 * "file:line:col: "; verifier messages are "<op> at file:line:col: reason". */
static void report_message(const char *file, cj_status st) {
  const char *msg = cj_status_message(st);
  /* "name at pos: rest" */
  const char *at = strstr(msg, " at ");
  if (at) {
    const char *pos = at + 4;
    const char *colon = pos;
    int ncolon = 0;
    while (*colon && ncolon < 3) {
      if (*colon == ':') ncolon++;
      if (ncolon < 3) colon++;
    }
    if (ncolon == 3 && colon[0] == ':' && colon[1] == ' ' &&
        !memchr(msg, ' ', (size_t)(at - msg))) {
      fprintf(stderr, "%.*s: error: %.*s: %s\n", (int)(colon - pos), pos, (int)(at - msg), msg,
              colon + 2);
      return;
    }
  }
  size_t fl = strlen(file);
  if (strncmp(msg, file, fl) == 0 && msg[fl] == ':') {
    const char *p = msg + fl + 1;
    const char *q = p;
    while (*q >= '0' && *q <= '9') q++;
    if (q > p && *q == ':') {
      const char *r = q + 1;
      while (*r >= '0' && *r <= '9') r++;
      if (r > q + 1 && r[0] == ':' && r[1] == ' ') {
        fprintf(stderr, "%.*s: error: %s\n", (int)(r - msg), msg, r + 2);
        return;
      }
    }
  }
  if (strncmp(msg, file, fl) == 0 && msg[fl] == ':' && msg[fl + 1] == ' ') msg += fl + 2;
  fprintf(stderr, "%s: error: %s\n", file, msg);
}

/* The error, then (with CJRT_ERROR_LOCATIONS=1, for cjrt's developers) where cjrt made it. */
static void report(const char *file, cj_status st) {
  report_message(file, st);
  if (cj_status_locations_wanted()) {
    char where[1024];
    cj_status_where(st, where, sizeof where);
    fprintf(stderr, "%s: note: made at %s\n", file, where);
  }
}

/* Prints m, parses the printout, prints again; 0 if identical. */
static int roundtrip_one(const char *file, const cj_module *m, unsigned flags, const char *want,
                         const char *what) {
  char *s1 = NULL, *s2 = NULL;
  size_t n1 = 0, n2 = 0;
  cj_module *m2 = NULL;
  int rc = 1;
  cj_status st = cj_print_module(m, flags, &s1, &n1);
  if (st) goto fail;
  st = cj_parse_mlir_text(s1, n1, file, &m2);
  if (st) {
    st = cj_status_annotate(st, "re-parsing the %s printout", what);
    goto fail;
  }
  st = cj_print_module(m2, flags & ~(unsigned)CJ_PRINT_GENERIC, &s2, &n2);
  if (st) goto fail;
  const char *ref = want ? want : s1;
  if (strcmp(ref, s2) != 0) {
    /* the first differing line */
    int line = 1;
    const char *a = ref, *b = s2;
    while (*a && *a == *b) {
      if (*a == '\n') line++;
      a++;
      b++;
    }
    const char *la = a, *lb = b;
    while (la > ref && la[-1] != '\n') la--;
    while (lb > s2 && lb[-1] != '\n') lb--;
    const char *ea = strchr(la, '\n'), *eb = strchr(lb, '\n');
    int wa = ea ? (int)(ea - la) : (int)strlen(la), wb = eb ? (int)(eb - lb) : (int)strlen(lb);
    if (wa > 300) wa = 300;
    if (wb > 300) wb = 300;
    fprintf(
        stderr,
        "%s: error: %s round trip differs at printed line %d:\n  first:  %.*s\n  second: %.*s\n",
        file, what, line, wa, la, wb, lb);
    goto done;
  }
  rc = 0;
  goto done;
fail:
  report(file, st);
  cj_status_free(st);
done:
  free(s1);
  free(s2);
  cj_module_free(m2);
  return rc;
}

int cjrt_cmd_parse(int argc, char **argv) {
  bool roundtrip = false, quiet = false;
  unsigned flags = 0;
  int nfiles = 0;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "--roundtrip"))
      roundtrip = true;
    else if (!strcmp(a, "--quiet") || !strcmp(a, "-q"))
      quiet = true;
    else if (!strcmp(a, "--generic"))
      flags |= CJ_PRINT_GENERIC;
    else if (!strcmp(a, "--locs"))
      flags |= CJ_PRINT_LOCS;
    else if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
      usage(stdout);
      return 0;
    } else if (a[0] == '-' && a[1]) {
      fprintf(stderr, "cjrt parse: unknown option '%s'\n\n", a);
      usage(stderr);
      return 2;
    } else {
      nfiles++;
    }
  }
  if (!nfiles) {
    usage(stderr);
    return 2;
  }
  int ok = 0, failed = 0;
  for (int i = 1; i < argc; i++) {
    const char *file = argv[i];
    if (file[0] == '-' && file[1]) continue;
    size_t len = 0;
    char *data = read_file(file, &len);
    if (!data) {
      fprintf(stderr, "%s: error: cannot read the file\n", file);
      failed++;
      continue;
    }
    cj_module **mods = NULL;
    size_t nmods = 0;
    cj_status st;
    size_t fl = strlen(file);
    bool hlo_pb = fl > 3 && strcmp(file + fl - 3, ".pb") == 0;
    bool hlo_text = fl > 4 && strcmp(file + fl - 4, ".hlo") == 0;
    if ((len >= 4 && !memcmp(data, "ML\xEFR", 4)) || hlo_pb || hlo_text) {
      cj_module *m = NULL;
      if (hlo_pb || hlo_text)
        st = cj_read_hlo_program(data, len, hlo_text ? CJ_HLO_TEXT : CJ_HLO_PROTO, file, &m);
      else
        st = cj_read_program(data, len, file, &m);
      if (!st) {
        mods = malloc(sizeof *mods);
        if (mods) {
          mods[0] = m;
          nmods = 1;
        } else {
          cj_module_free(m);
          st = cj_status_make(CJ_RESOURCE_EXHAUSTED, "out of memory");
        }
      }
    } else {
      st = cj_parse_mlir_text_split(data, len, file, &mods, &nmods);
    }
    int bad = 0;
    if (st) {
      report(file, st);
      cj_status_free(st);
      bad = 1;
    }
    for (size_t k = 0; k < nmods && !bad; k++) {
      st = cj_verify_module(mods[k]);
      if (st) {
        report(file, st);
        cj_status_free(st);
        bad = 1;
        break;
      }
      if (roundtrip) {
        char *pretty = NULL;
        size_t pn = 0;
        st = cj_print_module(mods[k], flags & CJ_PRINT_LOCS, &pretty, &pn);
        if (st) {
          report(file, st);
          cj_status_free(st);
          bad = 1;
          break;
        }
        bad |= roundtrip_one(file, mods[k], flags & CJ_PRINT_LOCS, NULL, "pretty");
        if (!bad)
          bad |= roundtrip_one(file, mods[k], (flags & CJ_PRINT_LOCS) | CJ_PRINT_GENERIC, pretty,
                               "generic");
        free(pretty);
      }
      if (!quiet && !bad) {
        char *s = NULL;
        size_t n = 0;
        st = cj_print_module(mods[k], flags, &s, &n);
        if (st) {
          report(file, st);
          cj_status_free(st);
          bad = 1;
        } else {
          if (k) fputs("// -----\n", stdout);
          fwrite(s, 1, n, stdout);
        }
        free(s);
      }
    }
    for (size_t k = 0; k < nmods; k++) cj_module_free(mods[k]);
    free(mods);
    free(data);
    if (bad)
      failed++;
    else
      ok++;
  }
  printf("parse: %d ok, %d failed\n", ok, failed);
  return failed ? 1 : 0;
}
