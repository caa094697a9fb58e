/* cjrt conform: runs the conformance corpus through a PJRT plugin and checks its assertions.
 *
 *   cjrt conform [--plugin PATH] [--core] [--filter TEXT] [--quiet] [--max-failures N] PATH...
 *
 * Every .mlir file under the given paths (text, split on `// -----` lines; .mlir.bc/.mlirbc
 * through the bytecode reader) is one or more cases; a case of a split file is reported as
 * FILE:LINE (its first line), and positions in its messages are lines of FILE. How a case passes depends on its folder
 * (../shared/conformance/README.md):
 *   testdata, testdata/quantized, tests/interpret, tests/math
 *       compiled and executed by the plugin through its C API only, with libcjrt as any
 *       framework would (cjrt_compile: format "mlir" and real compile options; cjrt_execute),
 *       so any PJRT plugin can be tried (XLA's own CPU plugin too); the program's
 *       check ops / custom calls are evaluated by the plugin and a failing check fails the
 *       execution with its message. Passes when compile and execute succeed.
 *   testdata/dynamic
 *       parses, verifies, prints and re-parses to the same printout (no execution: the programs
 *       have no inputs or checks).
 *   tests/vhlo
 *       stablehlo_legalize_to_vhlo.*.mlir parse; their .mlir.bc twins decode to the same program
 *       as the text (compared printed). The other files test upstream passes (skipped).
 * A case the plugin cannot run (compile fails with UNIMPLEMENTED, or it needs arguments or a
 * probe directory) is skipped with the reason, never passed. Cases with
 * interpreter.run_parallel run as one program whose processes meet at collectives (the compiler
 * makes the op self-contained; src/cpu/k_collective_parallel.c runs them concurrently).
 *
 * --core runs cases in-process through a backend's vtable instead of a plugin (for developing
 * a backend: $CJRT_BACKEND names it, default cpu; the default runner is $CJRT_PLUGIN, else the
 * cjrt plugin next to libcjrt, which reads $CJRT_BACKEND too).
 *
 * Output: each failure with its reason, a pass/fail/skip table per folder and per op (a case
 * counts for every op its program uses), the skip reasons, and the last line
 * `conform: N passed, M failed, K skipped`. Exit status 0 only when M is 0 (2 on bad usage).
 */
#include <dirent.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "backends/registry.h"
#include "base/threadpool.h"
#include "cjrt/cjrt.h"
#include "frontend/frontend.h"
#include "ir/ir.h"
#include "runtime/backend.h"
#include "runtime/compile.h"

enum { R_PASS, R_FAIL, R_SKIP };

/* ======================================================================== small utilities */

static char *read_all(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  size_t cap = 1 << 16, n = 0;
  char *buf = malloc(cap + 1);
  while (buf) {
    size_t got = fread(buf + n, 1, cap - n, f);
    n += got;
    if (n < cap) break;
    cap *= 2;
    char *nb = realloc(buf, cap + 1);
    if (!nb) free(buf);
    buf = nb;
  }
  fclose(f);
  if (buf) {
    buf[n] = 0;
    *len = n;
  }
  return buf;
}

static char *xstrdup(const char *s) {
  size_t n = strlen(s);
  char *d = malloc(n + 1);
  if (d) memcpy(d, s, n + 1);
  return d;
}

static char *xprintf(const char *fmt, const char *a, const char *b) {
  size_t n = strlen(fmt) + (a ? strlen(a) : 0) + (b ? strlen(b) : 0) + 1;
  char *s = malloc(n);
  if (s) snprintf(s, n, fmt, a ? a : "", b ? b : "");
  return s;
}

typedef struct strvec {
  char **v;
  size_t n, cap;
} strvec;

static void sv_push(strvec *s, char *x) {
  if (!x) return;
  if (s->n == s->cap) {
    size_t nc = s->cap ? s->cap * 2 : 64;
    char **nv = realloc(s->v, sizeof(char *) * nc);
    if (!nv) {
      free(x);
      return;
    }
    s->v = nv;
    s->cap = nc;
  }
  s->v[s->n++] = x;
}

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

static bool ends_with(const char *s, const char *suf) {
  size_t a = strlen(s), b = strlen(suf);
  return a >= b && strcmp(s + a - b, suf) == 0;
}

static void collect(const char *path, strvec *out) {
  struct stat st;
  if (stat(path, &st) != 0) {
    fprintf(stderr, "conform: cannot read %s\n", path);
    return;
  }
  if (!S_ISDIR(st.st_mode)) {
    sv_push(out, xstrdup(path));
    return;
  }
  DIR *d = opendir(path);
  if (!d) return;
  strvec kids = {0};
  struct dirent *e;
  while ((e = readdir(d))) {
    if (e->d_name[0] == '.') continue;
    size_t n = strlen(path) + strlen(e->d_name) + 2;
    char *p = malloc(n);
    if (!p) continue;
    snprintf(p, n, "%s/%s", path, e->d_name);
    sv_push(&kids, p);
  }
  closedir(d);
  if (kids.n) qsort(kids.v, kids.n, sizeof(char *), cmp_str);
  for (size_t i = 0; i < kids.n; i++) {
    struct stat ks;
    if (stat(kids.v[i], &ks) == 0 && S_ISDIR(ks.st_mode))
      collect(kids.v[i], out);
    else if (ends_with(kids.v[i], ".mlir") || ends_with(kids.v[i], ".mlir.bc") ||
             ends_with(kids.v[i], ".mlirbc"))
      sv_push(out, xstrdup(kids.v[i]));
    free(kids.v[i]);
  }
  free(kids.v);
}

/* ======================================================================== tallies */

typedef struct tally {
  char *key;
  int pass, fail, skip;
} tally;

typedef struct tallies {
  tally *t;
  size_t n, cap;
} tallies;

static tally *tally_get(tallies *ts, const char *key) {
  for (size_t i = 0; i < ts->n; i++)
    if (!strcmp(ts->t[i].key, key)) return &ts->t[i];
  if (ts->n == ts->cap) {
    size_t nc = ts->cap ? ts->cap * 2 : 64;
    tally *nt = realloc(ts->t, sizeof(tally) * nc);
    if (!nt) return NULL;
    ts->t = nt;
    ts->cap = nc;
  }
  tally *t = &ts->t[ts->n++];
  memset(t, 0, sizeof *t);
  t->key = xstrdup(key);
  return t;
}

static void tally_add(tallies *ts, const char *key, int r) {
  tally *t = tally_get(ts, key);
  if (!t) return;
  if (r == R_PASS) t->pass++;
  else if (r == R_FAIL) t->fail++;
  else t->skip++;
}

static int cmp_tally(const void *a, const void *b) {
  return strcmp(((const tally *)a)->key, ((const tally *)b)->key);
}

static void tallies_print(tallies *ts, const char *title) {
  if (ts->n) qsort(ts->t, ts->n, sizeof(tally), cmp_tally);
  size_t w = strlen(title);
  for (size_t i = 0; i < ts->n; i++)
    if (strlen(ts->t[i].key) > w) w = strlen(ts->t[i].key);
  printf("\n%-*s %7s %7s %7s\n", (int)w, title, "pass", "fail", "skip");
  for (size_t i = 0; i < ts->n; i++)
    printf("%-*s %7d %7d %7d\n", (int)w, ts->t[i].key, ts->t[i].pass, ts->t[i].fail, ts->t[i].skip);
}

static void tallies_free(tallies *ts) {
  for (size_t i = 0; i < ts->n; i++) free(ts->t[i].key);
  free(ts->t);
}

/* ======================================================================== runners */

typedef struct runner {
  bool core;
  /* core */
  cj_backend *backend;
  cj_threadpool *pool;
  /* plugin, through libcjrt */
  cjrt_plugin *plugin;
  cjrt_client *client;
  char version[160]; /* the client's platform version (names the backend) */
} runner;

/* The message of a cjrt error, prefixed with `what` (malloc'd); *code gets its code. The error is
 * freed. */
static char *take_error(cjrt_error *e, const char *what, cjrt_code *code) {
  if (code) *code = cjrt_error_code(e);
  char *m = xprintf("%s: %s", what, cjrt_error_message(e));
  cjrt_error_free(e);
  return m;
}

static char *runner_init(runner *r, const char *plugin) {
  if (r->core) {
    cj_status st = cj_backend_select(NULL, &r->backend); /* $CJRT_BACKEND, else cpu */
    if (st) {
      char *m = xstrdup(cj_status_message(st));
      cj_status_free(st);
      return m;
    }
    r->pool = cj_pool_create(0, &st);
    if (!r->pool) {
      char *m = xstrdup(cj_status_message(st));
      cj_status_free(st);
      return m;
    }
    return NULL;
  }
  cjrt_error *e = cjrt_plugin_open(plugin, &r->plugin);
  if (!e) e = cjrt_client_create(r->plugin, NULL, 0, &r->client);
  if (!e) snprintf(r->version, sizeof r->version, "%s", cjrt_client_platform_version(r->client));
  return e ? take_error(e, plugin ? plugin : "the default plugin", NULL) : NULL;
}

static void runner_fini(runner *r) {
  if (r->core) {
    cj_pool_destroy(r->pool);
    return;
  }
  /* (libcjrt keeps the library loaded until exit: its threads may still be winding down) */
  cjrt_client_free(r->client);
  cjrt_plugin_close(r->plugin);
}

/* Bytes of a static tensor type (-1 if not one). */
static int64_t type_bytes(const cj_type *t) {
  if (!cj_type_is_static(t)) return -1;
  return t->num_elements * cj_dtype_bytes(t->dtype);
}

/* Arguments given to a case (the interpreter's --args) and the results it returned. */
typedef struct case_io {
  int32_t nargs;
  const void **arg_data; /* dense row-major host data */
  const cj_type **arg_types;
  int32_t nres;          /* out */
  void **res_data;       /* out: malloc'ed copies of the results (dense row-major) */
  size_t *res_bytes;     /* out */
} case_io;

static void case_io_free_results(case_io *io) {
  for (int32_t j = 0; j < io->nres; j++) free(io->res_data[j]);
  free(io->res_data);
  free(io->res_bytes);
  io->res_data = NULL;
  io->res_bytes = NULL;
  io->nres = 0;
}

static bool io_keep_results(case_io *io, int32_t n) {
  io->res_data = calloc((size_t)n + 1, sizeof(void *));
  io->res_bytes = calloc((size_t)n + 1, sizeof(size_t));
  if (!io->res_data || !io->res_bytes) {
    case_io_free_results(io);
    return false;
  }
  io->nres = n;
  return true;
}

/* Compiles and runs one program in-process (arguments from io, or none); *msg gets the reason
 * of a failure/skip. */
static int run_core(runner *r, const char *text, size_t len, const char *name, case_io *io,
                    char **msg) {
  cj_module *m = NULL;
  cj_status st = cj_read_program(text, len, name, &m);
  if (!st) st = cj_verify_module(m);
  if (st) {
    *msg = xprintf("parse/verify: %s%s", cj_status_message(st), "");
    cj_status_free(st);
    cj_module_free(m);
    return R_FAIL;
  }
  cj_compiled *compiled = NULL;
  cj_compile_options opts = {1, 1, NULL, false, false};
  st = cj_compile_module(r->backend, m, &opts, &compiled);
  if (st) {
    int res = cj_status_code(st) == CJ_UNIMPLEMENTED ? R_SKIP : R_FAIL;
    *msg = xprintf("compile: %s%s", cj_status_message(st), "");
    cj_status_free(st);
    return res;
  }
  const cj_program *prog = compiled->program;
  const cj_program_info *info = &compiled->info;
  int res = R_PASS;
  int32_t nargs = io ? io->nargs : 0;
  void **results = calloc((size_t)(info->num_results + 1), sizeof(void *));
  void **args = calloc((size_t)(info->num_args + 1), sizeof(void *));
  if (info->num_args != nargs) {
    char b[96];
    snprintf(b, sizeof b, "the program takes %d arguments, %d given", (int)info->num_args, (int)nargs);
    *msg = xstrdup(nargs ? b : "needs arguments");
    res = nargs ? R_FAIL : R_SKIP;
  } else if (!results || !args || (io && !io_keep_results(io, info->num_results))) {
    *msg = xstrdup("out of memory");
    res = R_FAIL;
  } else {
    for (int32_t i = 0; i < nargs && res == R_PASS; i++) {
      int64_t nb = info->args[i].nbytes;
      if (nb != type_bytes(io->arg_types[i])) {
        *msg = xstrdup("an argument does not have its parameter's size");
        res = R_FAIL;
        break;
      }
      args[i] = r->backend->vt->alloc(r->backend, 0, CJ_MEMORY_DEVICE, (size_t)(nb ? nb : 1));
      if (args[i]) memcpy(args[i], io->arg_data[i], (size_t)nb);
    }
    for (int32_t j = 0; j < info->num_results; j++)
      results[j] = r->backend->vt->alloc(r->backend, 0, CJ_MEMORY_DEVICE, info->results[j].nbytes);
    if (res == R_PASS) {
      cj_exec_args ea;
      memset(&ea, 0, sizeof ea);
      ea.args = args;
      ea.results = results;
      ea.pool = r->pool;
      st = r->backend->vt->execute(r->backend, prog, &ea);
      if (st) {
        *msg = xprintf("execute: %s%s", cj_status_message(st), "");
        cj_status_free(st);
        res = R_FAIL;
      }
    }
    for (int32_t j = 0; j < info->num_results; j++) {
      if (io && res == R_PASS && io->res_data) {
        size_t nb = (size_t)info->results[j].nbytes;
        io->res_data[j] = malloc(nb ? nb : 1);
        if (io->res_data[j] && results[j]) memcpy(io->res_data[j], results[j], nb);
        io->res_bytes[j] = nb;
      }
      r->backend->vt->free(r->backend, 0, CJ_MEMORY_DEVICE, results[j]);
    }
    for (int32_t i = 0; i < nargs; i++) r->backend->vt->free(r->backend, 0, CJ_MEMORY_DEVICE, args[i]);
  }
  free(results);
  free(args);
  cj_compiled_free(compiled);
  return res;
}

/* Compiles and runs one program through the plugin (arguments from io, or none) with libcjrt,
 * as a framework would; *msg gets the reason of a failure/skip. A compile or execute error with
 * code UNIMPLEMENTED is a skip. */
static int run_plugin(runner *r, const char *text, size_t len, const char *name, case_io *io,
                      char **msg) {
  (void)name;
  cjrt_executable *exe = NULL;
  cjrt_code code = CJRT_OK;
  cjrt_error *e = cjrt_compile(r->client, text, len, NULL, &exe);
  if (e) {
    *msg = take_error(e, "compile", &code);
    return code == CJRT_UNIMPLEMENTED ? R_SKIP : R_FAIL;
  }
  int res = R_PASS;
  size_t nout = cjrt_executable_num_outputs(exe);
  int32_t nargs = io ? io->nargs : 0;
  cjrt_buffer **outs = calloc(nout + 1, sizeof(cjrt_buffer *));
  cjrt_buffer **ins = calloc((size_t)nargs + 1, sizeof(cjrt_buffer *));
  if (!outs || !ins || (io && !io_keep_results(io, (int32_t)nout))) {
    *msg = xstrdup("out of memory");
    res = R_FAIL;
  } else if (cjrt_executable_num_devices(exe) != 1) {
    char b[96];
    snprintf(b, sizeof b, "the executable runs on %zu devices, not one", cjrt_executable_num_devices(exe));
    *msg = xstrdup(b);
    res = R_FAIL;
  }
  /* the arguments, on the executable's device */
  for (int32_t i = 0; res == R_PASS && i < nargs; i++) {
    const cj_type *t = io->arg_types[i];
    e = cjrt_buffer_from_host(r->client, cjrt_executable_device(exe, 0), (cjrt_dtype)t->dtype,
                              t->dims, (size_t)t->rank, io->arg_data[i], NULL, &ins[i]);
    if (e) {
      *msg = take_error(e, "arguments", NULL);
      res = R_FAIL;
    }
  }
  if (res == R_PASS) {
    e = cjrt_execute(exe, ins, (size_t)nargs, outs, nout);
    if (e) {
      *msg = take_error(e, "execute", &code);
      res = code == CJRT_UNIMPLEMENTED ? R_SKIP : R_FAIL;
    }
  }
  for (size_t j = 0; res == R_PASS && io && j < nout; j++) {
    size_t nb = cjrt_buffer_nbytes(outs[j]);
    io->res_data[j] = malloc(nb ? nb : 1);
    io->res_bytes[j] = nb;
    if (!io->res_data[j]) {
      *msg = xstrdup("out of memory");
      res = R_FAIL;
    } else if (cjrt_buffer_dtype(outs[j]) != CJRT_TOKEN &&
               (e = cjrt_buffer_to_host(outs[j], io->res_data[j], nb))) {
      *msg = take_error(e, "result", NULL);
      res = R_FAIL;
    }
  }
  for (size_t j = 0; outs && j < nout; j++) cjrt_buffer_free(outs[j]);
  for (int32_t i = 0; ins && i < nargs; i++) cjrt_buffer_free(ins[i]);
  free(ins);
  free(outs);
  cjrt_executable_free(exe);
  return res;
}

/* ======================================================================== --args cases
 *
 * A case whose entry function takes arguments runs only if a RUN line of its file gives them the
 * way upstream's interpreter takes them: `stablehlo-translate %s --interpret --args="[dense<..> :
 * tensor<..>, ...]" | FileCheck %s [--check-prefix(es)=P]`. Every such RUN line is honoured:
 *   - without `not`: the program runs on those arguments through the plugin; its results are
 *     printed as the interpreter prints them (`tensor<2xi32> {` / `  [3, 3]` / `}`, nested
 *     brackets per dimension) and matched against the file's P: / P-NEXT: / P-SAME: / P-LABEL:
 *     lines (literal patterns, horizontal whitespace collapsed, as FileCheck does);
 *   - with `not`: the arguments must be rejected (anything other than an array of dense tensor
 *     attributes is). Upstream also FileChecks its tool's error wording; ours differs, so only
 *     the rejection is checked.
 * A pattern using regexes ({{..}}) or variables ([[..]]) makes the case a skip (not supported). */

typedef struct run_line {
  bool negated, filecheck;
  char *args;      /* the --args value */
  char *prefixes;  /* comma-separated check prefixes */
} run_line;

/* Extracts the --args value and FileCheck prefixes of RUN lines; returns how many were found. */
static int find_arg_runs(const char *text, size_t len, run_line *out, int cap) {
  int n = 0;
  const char *p = text, *end = text + len;
  while (p < end && n < cap) {
    const char *eol = memchr(p, '\n', (size_t)(end - p));
    const char *le = eol ? eol : end;
    const char *t = p;
    while (t < le && (*t == ' ' || *t == '\t')) t++;
    if (le - t > 7 && !strncmp(t, "// RUN:", 7)) {
      size_t ll = (size_t)(le - t);
      char *line = malloc(ll + 1);
      if (line) {
        memcpy(line, t, ll);
        line[ll] = 0;
        char *a = strstr(line, "--args=");
        if (a && strstr(line, "--interpret")) {
          a += 7;
          char q = (*a == '"' || *a == '\'') ? *a++ : 0;
          char *e = a;
          while (*e && (q ? *e != q : (*e != ' ' && *e != '\t'))) e++;
          run_line *r = &out[n++];
          memset(r, 0, sizeof *r);
          r->args = malloc((size_t)(e - a) + 1);
          if (r->args) {
            memcpy(r->args, a, (size_t)(e - a));
            r->args[e - a] = 0;
          }
          const char *cmd = line + 7;
          while (*cmd == ' ') cmd++;
          r->negated = !strncmp(cmd, "not ", 4);
          r->filecheck = strstr(line, "FileCheck") != NULL;
          const char *pf = strstr(line, "--check-prefixes=");
          size_t skip = 17;
          if (!pf) {
            pf = strstr(line, "--check-prefix=");
            skip = 15;
          }
          if (pf) {
            pf += skip;
            size_t k = strcspn(pf, " \t");
            r->prefixes = malloc(k + 1);
            if (r->prefixes) {
              memcpy(r->prefixes, pf, k);
              r->prefixes[k] = 0;
            }
          } else {
            r->prefixes = xstrdup("CHECK");
          }
        }
        free(line);
      }
    }
    p = eol ? eol + 1 : end;
  }
  return n;
}

/* Parses an --args value: an array of dense tensor attributes, in module m. */
static char *parse_args_attr(cj_module *m, const char *text, const cj_attr **out) {
  const cj_attr *a = NULL;
  cj_status st = cj_parse_attr_text(m, text, strlen(text), &a);
  if (st) {
    char *e = xprintf("--args is not an attribute: %s%s", cj_status_message(st), "");
    cj_status_free(st);
    return e;
  }
  if (a->kind != CJ_ATTR_ARRAY) return xstrdup("--args is not an array of dense tensor attributes");
  for (int32_t i = 0; i < a->arr.n; i++) {
    const cj_attr *x = a->arr.items[i];
    if (x->kind != CJ_ATTR_DENSE || !cj_type_is_static(x->dense.type))
      return xstrdup("an element of --args is not a dense tensor attribute");
  }
  *out = a;
  return NULL;
}

enum { CJ_MAX_PRINT_RANK = 64 };

typedef struct sbuf {
  char *s;
  size_t n, cap;
  bool oom;
} sbuf;

static void sb_add(sbuf *b, const char *t, size_t n) {
  if (b->oom) return;
  if (b->n + n + 1 > b->cap) {
    size_t nc = b->cap ? b->cap * 2 : 256;
    while (nc < b->n + n + 1) nc *= 2;
    char *ns = realloc(b->s, nc);
    if (!ns) {
      b->oom = true;
      return;
    }
    b->s = ns;
    b->cap = nc;
  }
  memcpy(b->s + b->n, t, n);
  b->n += n;
  b->s[b->n] = 0;
}

static void sb_str(sbuf *b, const char *t) { sb_add(b, t, strlen(t)); }

/* One element as the interpreter prints it (MLIR's attribute syntax without the type). */
static void fmt_elem(sbuf *b, cj_module *m, cj_dtype dt, const char *data, int64_t i) {
  char tmp[64];
  cj_dtype_kind k = cj_dtype_kindof(dt);
  if (k == CJ_DK_BOOL) {
    sb_str(b, data[i] ? "true" : "false");
  } else if (k == CJ_DK_SINT) {
    snprintf(tmp, sizeof tmp, "%lld", (long long)cj_elem_get_i64(dt, data, (size_t)i));
    sb_str(b, tmp);
  } else if (k == CJ_DK_UINT) {
    snprintf(tmp, sizeof tmp, "%llu", (unsigned long long)cj_elem_get_i64(dt, data, (size_t)i));
    sb_str(b, tmp);
  } else {
    bool cx = k == CJ_DK_COMPLEX;
    cj_dtype c = cx ? cj_dtype_component(dt) : dt;
    if (cx) sb_str(b, "[");
    for (int j = 0; j < (cx ? 2 : 1); j++) {
      double v = cj_elem_get_f64(c, data, (size_t)(cx ? 2 * i + j : i));
      char *txt = NULL;
      size_t tl = 0;
      cj_status st = cj_print_attr(cj_attr_float(m, v, cj_type_elem(m, c)), &txt, &tl);
      if (st) {
        cj_status_free(st);
        sb_str(b, "?");
      } else {
        char *colon = strstr(txt, " : ");
        sb_add(b, txt, colon ? (size_t)(colon - txt) : tl);
      }
      free(txt);
      if (cx && j == 0) sb_str(b, ", ");
    }
    if (cx) sb_str(b, "]");
  }
}

static void newline_indent(sbuf *b, int64_t n) {
  sb_str(b, "\n");
  for (int64_t i = 0; i < n; i++) sb_str(b, "  ");
}

/* The elements under index prefix idx[0..depth) (flat: the running element number). */
static void fmt_level(sbuf *b, cj_module *m, const cj_type *t, const char *data, int64_t *idx,
                      int32_t depth, int64_t *flat) {
  int32_t rank = t->rank;
  bool last = depth == 0 || idx[depth - 1] == t->dims[depth - 1] - 1;
  if (depth == rank) {
    fmt_elem(b, m, t->dtype, data, (*flat)++);
    if (!last) sb_str(b, ", ");
    return;
  }
  newline_indent(b, depth + 1);
  sb_str(b, "[");
  for (int64_t i = 0; i < t->dims[depth]; i++) {
    idx[depth] = i;
    fmt_level(b, m, t, data, idx, depth + 1, flat);
  }
  sb_str(b, "]");
  if (!last)
    sb_str(b, ",");
  else
    newline_indent(b, depth);
}

/* A tensor as the interpreter prints it: its type, " {", the elements in brackets nested per
 * dimension (each bracket on a new line, indented two spaces per level; innermost rows on one
 * line), "}". A rank-0 tensor prints as `tensor<i32> {5}`. */
static void fmt_tensor(sbuf *b, cj_module *m, const cj_type *t, const char *data) {
  char *ts = NULL;
  size_t tl = 0;
  cj_status st = cj_print_type(t, &ts, &tl);
  if (st) {
    cj_status_free(st);
    sb_str(b, "?");
  } else {
    sb_add(b, ts, tl);
  }
  free(ts);
  sb_str(b, " {");
  int64_t idx[CJ_MAX_PRINT_RANK];
  int64_t flat = 0;
  if (t->rank <= CJ_MAX_PRINT_RANK) fmt_level(b, m, t, data, idx, 0, &flat);
  sb_str(b, "}");
}

/* Collapses runs of spaces/tabs to one space and trims the ends (FileCheck's default). */
static char *canon_ws(const char *s, size_t n) {
  char *o = malloc(n + 1);
  if (!o) return NULL;
  size_t k = 0;
  bool sp = false;
  for (size_t i = 0; i < n; i++) {
    if (s[i] == ' ' || s[i] == '\t') {
      sp = true;
      continue;
    }
    if (sp && k) o[k++] = ' ';
    sp = false;
    o[k++] = s[i];
  }
  o[k] = 0;
  return o;
}

/* A small FileCheck: literal patterns of the lines `// PREFIX:`, `PREFIX-NEXT:`, `PREFIX-SAME:`,
 * `PREFIX-LABEL:` (for any prefix in the comma-separated list), matched in order against the
 * output. Returns NULL on a match, else the reason; *unsupported is set for patterns we cannot
 * evaluate (regexes, variables, other directives). */
static char *filecheck(const char *file, size_t flen, const char *prefixes, const char *output,
                       bool *unsupported) {
  /* the output, one canonicalized line each */
  strvec lines = {0};
  for (const char *p = output; *p;) {
    const char *eol = strchr(p, '\n');
    size_t n = eol ? (size_t)(eol - p) : strlen(p);
    sv_push(&lines, canon_ws(p, n));
    p = eol ? eol + 1 : p + n;
  }
  size_t cur_line = 0, cur_col = 0; /* where the next search starts */
  bool have_match = false;
  size_t match_line = 0;
  char *err = NULL;
  int checks = 0;
  const char *p = file, *end = file + flen;
  while (p < end && !err && !*unsupported) {
    const char *eol = memchr(p, '\n', (size_t)(end - p));
    const char *le = eol ? eol : end;
    const char *c = p;
    p = eol ? eol + 1 : end;
    while (c < le && (*c == ' ' || *c == '\t')) c++;
    if (le - c < 2 || c[0] != '/' || c[1] != '/') continue;
    c += 2;
    while (c < le && (*c == ' ' || *c == '\t')) c++;
    /* which prefix */
    const char *pf = prefixes;
    size_t plen = 0;
    bool found = false;
    while (*pf && !found) {
      plen = strcspn(pf, ",");
      if ((size_t)(le - c) > plen && !strncmp(c, pf, plen) && (c[plen] == ':' || c[plen] == '-' || c[plen] == '{'))
        found = true;
      else
        pf += plen + (pf[plen] == ',');
    }
    if (!found) continue;
    c += plen;
    const char *kind = "";
    if (*c == '-') {
      const char *k = c + 1;
      size_t kl = 0;
      while (k + kl < le && ((k[kl] >= 'A' && k[kl] <= 'Z') || k[kl] == '-')) kl++;
      if (kl == 4 && !strncmp(k, "NEXT", 4)) kind = "NEXT";
      else if (kl == 4 && !strncmp(k, "SAME", 4)) kind = "SAME";
      else if (kl == 5 && !strncmp(k, "LABEL", 5)) kind = "LABEL";
      else if ((kl == 3 && !strncmp(k, "NOT", 3)) || (kl == 3 && !strncmp(k, "DAG", 3)) ||
               (kl == 5 && !strncmp(k, "EMPTY", 5)) || (kl >= 5 && !strncmp(k, "COUNT", 5))) {
        *unsupported = true;
        break;
      } else {
        continue; /* another prefix that merely starts like this one (CHECK-ERROR-...) */
      }
      c = k + kl;
    }
    bool literal = false;
    if (le - c >= 9 && !strncmp(c, "{LITERAL}", 9)) {
      literal = true;
      c += 9;
    }
    if (c >= le || *c != ':') continue; /* not a directive after all */
    c++;
    char *pat = canon_ws(c, (size_t)(le - c));
    if (!pat) break;
    if (!literal && (strstr(pat, "{{") || strstr(pat, "[["))) {
      *unsupported = true;
      free(pat);
      break;
    }
    checks++;
    bool ok = false;
    if (!strcmp(kind, "NEXT") || !strcmp(kind, "SAME")) {
      size_t want = have_match ? match_line + (kind[0] == 'N') : 0;
      size_t from = (kind[0] == 'S' && want == cur_line) ? cur_col : 0;
      if (want < lines.n) {
        const char *hit = strstr(lines.v[want] + (from <= strlen(lines.v[want]) ? from : 0), pat);
        if (hit) {
          ok = true;
          match_line = want;
          cur_line = want;
          cur_col = (size_t)(hit - lines.v[want]) + strlen(pat);
        }
      }
    } else {
      for (size_t l = cur_line; l < lines.n && !ok; l++) {
        const char *base = lines.v[l] + (l == cur_line ? cur_col : 0);
        const char *hit = strstr(base, pat);
        if (hit) {
          ok = true;
          match_line = l;
          cur_line = l;
          cur_col = (size_t)(hit - lines.v[l]) + strlen(pat);
        }
      }
    }
    if (!ok) err = xprintf("%s: no match for `%s`", *kind ? kind : "CHECK", pat);
    have_match = have_match || ok;
    free(pat);
  }
  if (!err && !*unsupported && checks == 0) err = xstrdup("no check lines for the prefix");
  for (size_t i = 0; i < lines.n; i++) free(lines.v[i]);
  free(lines.v);
  return err;
}

/* Runs the program on the arguments of one RUN line and FileChecks the printed results.
 * Returns R_PASS / R_FAIL / R_SKIP with *msg set for the latter two. */
static int run_one_args(runner *rn, const char *text, size_t len, const char *casename,
                        const cj_type *ft, const run_line *rl, char **msg) {
  int res = R_PASS;
  do {
    cj_module *m = cj_module_create("args");
    if (!m || !rl->args) {
      cj_module_free(m);
      *msg = xstrdup("out of memory");
      return R_FAIL;
    }
    const cj_attr *args = NULL;
    char *perr = parse_args_attr(m, rl->args, &args);
    if (perr) {
      *msg = xprintf("RUN line --args: %s%s", perr, "");
      free(perr);
      cj_module_free(m);
      res = R_FAIL;
      break;
    }
    int32_t n = args->arr.n;
    bool types_ok = n == ft->rank;
    for (int32_t i = 0; i < n && types_ok; i++) {
      const cj_type *want = cj_type_fn_input(ft, i), *got = args->arr.items[i]->dense.type;
      types_ok = cj_type_is_static(want) && want->dtype == got->dtype && want->rank == got->rank;
      for (int32_t d = 0; types_ok && d < want->rank; d++) types_ok = want->dims[d] == got->dims[d];
    }
    if (!types_ok) {
      *msg = xstrdup("the --args of the RUN line do not match the entry function's parameters");
      cj_module_free(m);
      res = R_FAIL;
      break;
    }
    case_io io;
    memset(&io, 0, sizeof io);
    io.nargs = n;
    io.arg_data = calloc((size_t)n + 1, sizeof(void *));
    io.arg_types = calloc((size_t)n + 1, sizeof(cj_type *));
    char **owned = calloc((size_t)n + 1, sizeof(char *));
    bool oom = !io.arg_data || !io.arg_types || !owned;
    for (int32_t i = 0; i < n && !oom; i++) {
      const cj_attr *d = args->arr.items[i];
      io.arg_types[i] = d->dense.type;
      int64_t nb = type_bytes(d->dense.type);
      owned[i] = malloc((size_t)(nb ? nb : 1));
      if (!owned[i]) {
        oom = true;
        break;
      }
      if (d->dense.splat) {
        size_t es = d->dense.nbytes;
        for (int64_t k = 0; es && k < nb / (int64_t)es; k++) memcpy(owned[i] + k * (int64_t)es, d->dense.data, es);
      } else {
        memcpy(owned[i], d->dense.data, (size_t)nb);
      }
      io.arg_data[i] = owned[i];
    }
    if (oom) {
      *msg = xstrdup("out of memory");
      res = R_FAIL;
    } else {
      res = rn->core ? run_core(rn, text, len, casename, &io, msg)
                     : run_plugin(rn, text, len, casename, &io, msg);
    }
    if (res == R_PASS && rl->filecheck) {
      sbuf out = {0};
      for (int32_t j = 0; j < io.nres && j < ft->nresults; j++) {
        const cj_type *rt = cj_type_fn_result(ft, j);
        if (!cj_type_is_static(rt) || (int64_t)io.res_bytes[j] < type_bytes(rt)) {
          sb_str(&out, "?\n");
          continue;
        }
        fmt_tensor(&out, m, rt, io.res_data[j]);
        sb_str(&out, "\n");
      }
      bool unsupported = false;
      char *ferr = out.oom ? xstrdup("out of memory")
                           : filecheck(text, len, rl->prefixes, out.s ? out.s : "", &unsupported);
      if (unsupported) {
        *msg = xstrdup("FileCheck patterns with regexes, variables or other directives");
        res = R_SKIP;
      } else if (ferr) {
        *msg = xprintf("FileCheck of the printed results: %s\n%s", ferr, out.s ? out.s : "");
        res = R_FAIL;
      }
      free(ferr);
      free(out.s);
    }
    case_io_free_results(&io);
    for (int32_t i = 0; owned && i < n; i++) free(owned[i]);
    free(owned);
    free(io.arg_data);
    free(io.arg_types);
    cj_module_free(m);
  } while (0);
  return res;
}

/* Runs the --args RUN lines of a case (see above). Returns R_PASS / R_FAIL / R_SKIP. */
static int run_arg_case(runner *rn, const char *text, size_t len, const char *casename,
                        cj_module *prog, const run_line *runs, int nruns, char **msg) {
  const cj_type *ft = cj_func_type(cj_module_main(prog));
  int res = R_PASS;
  for (int r = 0; r < nruns && res == R_PASS; r++) {
    char *m = NULL;
    /* a `not` line's FileCheck patterns are upstream's error messages: only the rejection
     * counts, so the results are not checked against them */
    run_line rl = runs[r];
    if (rl.negated) rl.filecheck = false;
    int one = run_one_args(rn, text, len, casename, ft, &rl, &m);
    if (!runs[r].negated) {
      res = one;
      if (one != R_PASS) *msg = xprintf("RUN line --args=%s: %s", runs[r].args, m ? m : "");
    } else if (one == R_PASS) {
      res = R_FAIL;
      *msg = xprintf("RUN line --args=%s: the program ran; upstream rejects these arguments%s",
                     runs[r].args, "");
    }
    free(m);
  }
  return res;
}

/* Removes a probe directory: the files the probes wrote (no subdirectories) and the folder. */
static void remove_dir(const char *dir) {
  DIR *d = opendir(dir);
  if (d) {
    struct dirent *e;
    while ((e = readdir(d))) {
      if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
      char p[PATH_MAX + 256];
      snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
      unlink(p);
    }
    closedir(d);
  }
  rmdir(dir);
}

/* ======================================================================== cases */

typedef enum folder_kind { F_EXEC, F_DYNAMIC, F_VHLO, F_OTHER } folder_kind;

static const char *folder_of(const char *path, folder_kind *k) {
  static const struct {
    const char *needle, *name;
    folder_kind kind;
  } tab[] = {
      {"/testdata/dynamic/", "testdata/dynamic", F_DYNAMIC},
      {"/testdata/quantized/", "testdata/quantized", F_EXEC},
      {"/testdata/", "testdata", F_EXEC},
      {"/tests/interpret/", "tests/interpret", F_EXEC},
      {"/tests/math/", "tests/math", F_EXEC},
      {"/tests/vhlo/", "tests/vhlo", F_VHLO},
  };
  for (size_t i = 0; i < sizeof tab / sizeof *tab; i++)
    if (strstr(path, tab[i].needle)) {
      *k = tab[i].kind;
      return tab[i].name;
    }
  *k = F_EXEC;
  return "other";
}

/* op names of a module (every function), excluding structure and checks */
typedef struct opset {
  const char *names[256];
  int n;
} opset;

static CJ_MUST_USE cj_status add_op(cj_op *op, void *ctx) {
  opset *s = ctx;
  const char *nm = op->name;
  if (!nm || !strncmp(nm, "func.", 5) || !strncmp(nm, "check.", 6) || !strcmp(nm, "stablehlo.return") ||
      !strcmp(nm, "stablehlo.constant") || !strcmp(nm, "stablehlo.custom_call") ||
      !strncmp(nm, "sdy.", 4))
    return NULL;
  for (int i = 0; i < s->n; i++)
    if (!strcmp(s->names[i], nm)) return NULL;
  if (s->n < 256) s->names[s->n++] = nm;
  return NULL;
}

static bool has_op(cj_module *m, const char *name) {
  opset s = {{0}, 0};
  cj_status_ignore(cj_walk_module(m, add_op, &s)); /* add_op never fails */
  for (int i = 0; i < s.n; i++)
    if (!strcmp(s.names[i], name)) return true;
  /* also structural/check names (add_op filters them) */
  return false;
}

typedef struct found {
  const char *name;
  bool hit;
} found;

static CJ_MUST_USE cj_status find_name(cj_op *op, void *ctx) {
  found *f = ctx;
  if (op->name && !strcmp(op->name, f->name)) f->hit = true;
  return NULL;
}

static bool uses(cj_module *m, const char *name) {
  found f = {name, false};
  cj_status_ignore(cj_walk_module(m, find_name, &f)); /* find_name never fails */
  return f.hit || has_op(m, name);
}

typedef struct conf {
  runner r;
  const char *filter;
  bool quiet;
  int max_failures;
  int npass, nfail, nskip, nprinted;
  tallies folders, ops, reasons;
  const char *shown; /* the name FAIL/SKIP lines give the case ("FILE:LINE" in a split file) */
} conf;

static void record(conf *c, const char *folder, const char *casename, opset *ops, int res,
                   const char *msg) {
  if (res == R_PASS) c->npass++;
  else if (res == R_FAIL) c->nfail++;
  else c->nskip++;
  tally_add(&c->folders, folder, res);
  if (ops)
    for (int i = 0; i < ops->n; i++) tally_add(&c->ops, ops->names[i], res);
  if (res == R_FAIL && (c->max_failures < 0 || c->nprinted < c->max_failures)) {
    printf("FAIL %s: %s\n", c->shown ? c->shown : casename, msg ? msg : "");
    c->nprinted++;
  }
  if (res == R_SKIP) {
    /* the reason without positions, for the summary */
    char *key = xstrdup(msg ? msg : "");
    char *at = key ? strstr(key, " at ") : NULL;
    if (at) {
      char *colon = strstr(at, ": ");
      if (colon) memmove(at, colon, strlen(colon) + 1);
    }
    if (key && strlen(key) > 160) key[160] = 0;
    if (key) tally_add(&c->reasons, key, R_SKIP);
    free(key);
    if (!c->quiet) printf("SKIP %s: %s\n", c->shown ? c->shown : casename, msg ? msg : "");
  }
}

static int run_exec_case(conf *c, const char *folder, const char *casename, const char *text,
                         size_t len) {
  char *msg = NULL;
  cj_module *m = NULL;
  cj_status st = cj_read_program(text, len, casename, &m);
  if (st) {
    msg = xprintf("parse: %s%s", cj_status_message(st), "");
    cj_status_free(st);
    record(c, folder, casename, NULL, R_FAIL, msg);
    free(msg);
    return R_FAIL;
  }
  opset ops = {{0}, 0};
  cj_status_ignore(cj_walk_module(m, add_op, &ops)); /* add_op never fails */
  /* copy the names: the module dies below */
  char *names[256];
  for (int i = 0; i < ops.n; i++) names[i] = xstrdup(ops.names[i]);
  for (int i = 0; i < ops.n; i++) ops.names[i] = names[i];
  int res;
  cj_op *main = cj_module_main(m);
  const cj_type *ft = main ? cj_func_type(main) : NULL;
  /* interpreter.run_parallel runs as one program whose processes meet at collectives (the
   * compiler and src/cpu/k_collective_parallel.c) */
  bool probes = uses(m, "interpreter.probe") || uses(m, "check.expect_serialized_eq");
  char probe_dir[PATH_MAX] = "";
  if (probes) {
    /* upstream runs these with --probe-output-dir: the plugin's equivalent is CJRT_PROBE_DIR at
     * compile time (src/cpu/k_probe.c); every case gets a fresh directory, removed afterwards */
    const char *tmp = getenv("TMPDIR");
    snprintf(probe_dir, sizeof probe_dir, "%s/cjrt-probe-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(probe_dir)) probe_dir[0] = 0;
  }
  if (probes && !probe_dir[0]) {
    msg = xstrdup("cannot create a probe output directory");
    res = R_FAIL;
  } else if (uses(m, "interpreter.print")) {
    msg = xstrdup("checks the interpreter's printed output (FileCheck)");
    res = R_SKIP;
  } else if (!main) {
    msg = xstrdup("no entry function (no @main and several functions: the interpreter rejects it "
                  "too)");
    res = R_SKIP;
  } else if (ft && ft->rank > 0) {
    run_line runs[8];
    int nruns = find_arg_runs(text, len, runs, 8);
    if (nruns == 0) {
      msg = xstrdup("needs arguments (no RUN line gives the interpreter's --args)");
      res = R_SKIP;
    } else {
      res = run_arg_case(&c->r, text, len, casename, m, runs, nruns, &msg);
    }
    for (int i = 0; i < nruns; i++) {
      free(runs[i].args);
      free(runs[i].prefixes);
    }
  } else {
    char *saved = NULL;
    if (probes) {
      const char *old = getenv("CJRT_PROBE_DIR");
      saved = old ? xstrdup(old) : NULL;
      setenv("CJRT_PROBE_DIR", probe_dir, 1);
    }
    res = c->r.core ? run_core(&c->r, text, len, casename, NULL, &msg)
                    : run_plugin(&c->r, text, len, casename, NULL, &msg);
    if (probes) {
      if (saved) setenv("CJRT_PROBE_DIR", saved, 1);
      else unsetenv("CJRT_PROBE_DIR");
      free(saved);
    }
  }
  if (probe_dir[0]) remove_dir(probe_dir);
  cj_module_free(m);
  record(c, folder, casename, &ops, res, msg);
  for (int i = 0; i < ops.n; i++) free(names[i]);
  free(msg);
  return res;
}

/* Reads (text or bytecode), verifies and prints a program in the given form (flags of
 * cj_print_module: 0 is the pretty form, which elides attributes holding their default values,
 * CJ_PRINT_GENERIC prints every attribute that is present). */
static char *print_of(const char *text, size_t len, const char *name, bool bytecode, unsigned flags,
                      char **err) {
  cj_module *m = NULL;
  cj_status st = bytecode ? cj_read_mlir_bytecode(text, len, name, &m)
                          : cj_parse_mlir_text(text, len, name, &m);
  if (!st) st = cj_verify_module(m);
  char *out = NULL;
  size_t olen = 0;
  if (!st) st = cj_print_module(m, flags, &out, &olen);
  cj_module_free(m);
  if (st) {
    *err = xstrdup(cj_status_message(st));
    cj_status_free(st);
    free(out);
    return NULL;
  }
  return out;
}

/* testdata/dynamic: the program parses and verifies, and its printout re-parses to the same
 * program, in both printed forms (pretty and generic): print(parse(print(parse(text)))) equals
 * print(parse(text)). */
static void run_roundtrip_case(conf *c, const char *folder, const char *casename, const char *text,
                               size_t len) {
  static const unsigned forms[2] = {0, CJ_PRINT_GENERIC};
  int res = R_PASS;
  char *msg = NULL;
  for (int f = 0; f < 2 && res == R_PASS; f++) {
    char *err = NULL;
    char *p1 = print_of(text, len, casename, false, forms[f], &err);
    char *p2 = p1 ? print_of(p1, strlen(p1), casename, false, forms[f], &err) : NULL;
    if (!p1 || !p2) {
      res = R_FAIL;
      msg = xprintf("%s%s", p1 ? (f ? "re-parse (generic form): " : "re-parse: ") : "parse: ", err);
    } else if (strcmp(p1, p2) != 0) {
      res = R_FAIL;
      msg = xprintf("the %s printout does not re-parse to the same program%s",
                    f ? "generic" : "pretty", "");
    }
    free(err);
    free(p1);
    free(p2);
  }
  record(c, folder, casename, NULL, res, msg);
  free(msg);
}

/* The first line where two printouts differ, for messages: "line N: <a> vs <b>" (malloc'd). */
static char *first_difference(const char *a, const char *b) {
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
  if (na > 200) na = 200;
  if (nb > 200) nb = 200;
  size_t cap = (size_t)na + (size_t)nb + 64;
  char *m = malloc(cap);
  if (m) snprintf(m, cap, "line %d: `%.*s` vs `%.*s`", line, na, la, nb, lb);
  return m;
}

static bool file_exists(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* tests/vhlo, the portable artifacts of every release and their text twins:
 *   X.mlir with an X.mlir.bc twin      passes when it parses and verifies;
 *   X.mlir.bc / X.mlirbc with a twin    passes when it decodes and verifies to the same program as
 *                                       the text (both printed in the pretty form, as
 *                                       tests/bytecode compares them);
 *   invalid_*.mlir.bc                   an artifact of a release newer than ours: passes when the
 *                                       reader rejects it naming both versions (its .mlir is a
 *                                       listing of the bytecode, not a program: upstream says it
 *                                       is not valid to parse);
 * every other file is an upstream test of a version-conversion pass (stablehlo-opt pipelines
 * checked by FileCheck patterns, no program to compare) and is skipped with that reason. */
static void run_vhlo_file(conf *c, const char *folder, const char *path) {
  const char *base = strrchr(path, '/');
  base = base ? base + 1 : path;
  bool is_bc = ends_with(path, ".mlir.bc") || ends_with(path, ".mlirbc");
  if (!strncmp(base, "invalid_", 8)) {
    if (!is_bc) {
      record(c, folder, path, NULL, R_SKIP,
             "a listing of a rejected artifact's bytecode (upstream: not valid to parse)");
      return;
    }
    size_t blen;
    char *bytes = read_all(path, &blen);
    if (!bytes) {
      record(c, folder, path, NULL, R_FAIL, "cannot read the file");
      return;
    }
    cj_module *m = NULL;
    cj_status st = cj_read_mlir_bytecode(bytes, blen, path, &m);
    cj_module_free(m);
    free(bytes);
    int64_t v[3];
    cj_stablehlo_version_current(v);
    char cur[64];
    snprintf(cur, sizeof cur, "%lld.%lld.%lld", (long long)v[0], (long long)v[1], (long long)v[2]);
    if (!st) {
      record(c, folder, path, NULL, R_FAIL, "an artifact of a newer release was accepted");
    } else if (!strstr(cj_status_message(st), cur)) {
      char *m2 = xprintf("rejected without naming our version %s: %s", cur, cj_status_message(st));
      record(c, folder, path, NULL, R_FAIL, m2);
      free(m2);
    } else {
      record(c, folder, path, NULL, R_PASS, NULL);
    }
    cj_status_free(st);
    return;
  }
  bool paired;
  if (is_bc) {
    paired = true;
  } else {
    char *bc = xprintf("%s.bc%s", path, "");
    paired = bc && file_exists(bc);
    free(bc);
  }
  if (!paired) {
    record(c, folder, path, NULL, R_SKIP,
           "an upstream test of a version-conversion pass (reference only, no program to compare)");
    return;
  }
  size_t len;
  char *data = read_all(path, &len);
  if (!data) {
    record(c, folder, path, NULL, R_FAIL, "cannot read the file");
    return;
  }
  if (ends_with(path, ".mlir")) {
    char *err = NULL;
    char *p = print_of(data, len, path, false, 0, &err);
    char *m = p ? NULL : xprintf("text: %s%s", err, "");
    record(c, folder, path, NULL, p ? R_PASS : R_FAIL, m);
    free(m);
    free(p);
    free(err);
    free(data);
    return;
  }
  /* the text twin: X.mlir.bc -> X.mlir, X.mlirbc -> X.mlir */
  size_t pl = strlen(path);
  char *twin = malloc(pl + 1);
  if (!twin) {
    free(data);
    record(c, folder, path, NULL, R_FAIL, "out of memory");
    return;
  }
  memcpy(twin, path, pl + 1);
  twin[ends_with(path, ".mlir.bc") ? pl - 3 : pl - 2] = 0;
  size_t tlen = 0;
  char *ttext = read_all(twin, &tlen);
  char *err = NULL, *err2 = NULL, *m = NULL;
  /* compared in the pretty form: the text twins spell out attributes at their default values
   * (api_version = 1, result_accuracy DEFAULT ...) that upstream's VHLO to StableHLO conversion
   * drops, and the pretty form elides defaults in both */
  char *pb = print_of(data, len, path, true, 0, &err);
  char *pt = ttext ? print_of(ttext, tlen, twin, false, 0, &err2) : NULL;
  int res = R_FAIL;
  if (!pb)
    m = xprintf("bytecode: %s%s", err, "");
  else if (!ttext)
    m = xprintf("no text twin %s%s", twin, "");
  else if (!pt)
    m = xprintf("the text twin does not parse: %s%s", err2, "");
  else if (strcmp(pb, pt) != 0) {
    char *d = first_difference(pb, pt);
    m = xprintf("decodes to another program than its text twin (%s)%s", d, "");
    free(d);
  } else
    res = R_PASS;
  record(c, folder, path, NULL, res, m);
  free(m);
  free(pb);
  free(pt);
  free(err);
  free(err2);
  free(ttext);
  free(twin);
  free(data);
}

static void run_file(conf *c, const char *path) {
  folder_kind fk;
  const char *folder = folder_of(path, &fk);
  if (fk == F_VHLO) {
    run_vhlo_file(c, folder, path);
    return;
  }
  size_t len;
  char *data = read_all(path, &len);
  if (!data) {
    record(c, folder, path, NULL, R_FAIL, "cannot read the file");
    return;
  }
  bool bytecode = cj_is_mlir_bytecode(data, len);
  /* split text on lines that are exactly `// -----` */
  const char *p = data, *end = data + len;
  int k = 0;
  size_t line = 1; /* the line of FILE that p is on */
  while (p <= end) {
    const char *q = p, *next = NULL;
    const char *cut = end;
    if (!bytecode) {
      for (const char *s = p; s < end;) {
        const char *eol = memchr(s, '\n', (size_t)(end - s));
        size_t ll = eol ? (size_t)(eol - s) : (size_t)(end - s);
        if (ll >= 8 && !strncmp(s, "// -----", 8)) {
          bool only = true;
          for (size_t i = 8; i < ll; i++)
            if (s[i] != '-' && s[i] != ' ' && s[i] != '\r') only = false;
          if (only) {
            cut = s;
            next = eol ? eol + 1 : end;
            break;
          }
        }
        s = eol ? eol + 1 : end;
      }
    }
    size_t clen = (size_t)(cut - q);
    /* a chunk of only whitespace/comments is no case */
    bool empty = true;
    for (const char *s = q; s < cut && empty;) {
      const char *eol = memchr(s, '\n', (size_t)(cut - s));
      const char *le = eol ? eol : cut;
      const char *t = s;
      while (t < le && (*t == ' ' || *t == '\t' || *t == '\r')) t++;
      if (t < le && !(le - t >= 2 && t[0] == '/' && t[1] == '/')) empty = false;
      s = eol ? eol + 1 : cut;
    }
    size_t first = line; /* the chunk's first line that is not blank */
    for (const char *s = q; s < cut && (*s == '\n' || *s == ' ' || *s == '\r' || *s == '\t'); s++)
      first += *s == '\n';
    if (!empty) {
      /* keep line numbers: blank lines stand for the text before the chunk, so that positions
       * in messages are lines of the file, which names the program */
      char *chunk = malloc(line - 1 + clen + 1);
      if (chunk) {
        memset(chunk, '\n', line - 1);
        memcpy(chunk + line - 1, q, clen);
        chunk[line - 1 + clen] = 0;
        char name[PATH_MAX + 32];
        snprintf(name, sizeof name, "%s:%zu", path, first);
        c->shown = next || k > 0 ? name : NULL;
        if (fk == F_DYNAMIC)
          run_roundtrip_case(c, folder, path, chunk, line - 1 + clen);
        else
          run_exec_case(c, folder, path, chunk, line - 1 + clen);
        c->shown = NULL;
        free(chunk);
      }
      k++;
    }
    if (!next) break;
    for (const char *s = p; s < next; s++) line += *s == '\n';
    p = next;
  }
  free(data);
}

static void usage(FILE *f) {
  fprintf(f,
          "usage: cjrt conform [--plugin PATH] [--core] [--filter TEXT] [--quiet]\n"
          "                    [--max-failures N] PATH...\n"
          "\n"
          "Runs every conformance case in the given files and folders through a PJRT plugin's C\n"
          "API and checks its assertions; prints each failure, tables of pass/fail/skip per\n"
          "folder and per op, the skip reasons, and `conform: N passed, M failed, K skipped`.\n"
          "\n"
          "  --plugin P        the PJRT plugin: a path to its .so or a name (default: $CJRT_PLUGIN,\n"
          "                    else the cjrt plugin next to libcjrt); any plugin works, e.g.\n"
          "                    XLA's CPU plugin (cases using cjrt's check ops then fail there)\n"
          "  --core            run in-process through the CPU backend instead of a plugin\n"
          "  --filter TEXT     only files whose path contains TEXT\n"
          "  --quiet           do not list skipped cases one by one\n"
          "  --max-failures N  print at most N failures (default: all)\n"
          "\n"
          "Exit status: 0 when no case failed, 1 otherwise, 2 on bad usage.\n");
}

int cjrt_cmd_conform(int argc, char **argv) {
  conf c;
  memset(&c, 0, sizeof c);
  c.max_failures = -1;
  const char *plugin = NULL;
  strvec paths = {0};
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
      usage(stdout);
      return 0;
    } else if (!strcmp(a, "--plugin") && i + 1 < argc) {
      plugin = argv[++i];
    } else if (!strcmp(a, "--core")) {
      c.r.core = true;
    } else if (!strcmp(a, "--filter") && i + 1 < argc) {
      c.filter = argv[++i];
    } else if (!strcmp(a, "--quiet") || !strcmp(a, "-q")) {
      c.quiet = true;
    } else if (!strcmp(a, "--max-failures") && i + 1 < argc) {
      c.max_failures = atoi(argv[++i]);
    } else if (a[0] == '-') {
      fprintf(stderr, "cjrt conform: unknown option %s\n", a);
      usage(stderr);
      return 2;
    } else {
      collect(a, &paths);
    }
  }
  if (!paths.n) {
    fprintf(stderr, "cjrt conform: no input files\n");
    usage(stderr);
    free(paths.v);
    return 2;
  }
  char *err = runner_init(&c.r, plugin);
  if (err) {
    fprintf(stderr, "cjrt conform: %s\n", err);
    free(err);
    for (size_t i = 0; i < paths.n; i++) free(paths.v[i]);
    free(paths.v);
    return 2;
  }
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  /* CJRT_CONFORM_EXCLUDE: colon-separated path fragments to leave out (for test splits) */
  const char *excl = getenv("CJRT_CONFORM_EXCLUDE");
  for (size_t i = 0; i < paths.n; i++) {
    bool skip = c.filter && !strstr(paths.v[i], c.filter);
    for (const char *e = excl; e && *e && !skip;) {
      const char *colon = strchr(e, ':');
      size_t n = colon ? (size_t)(colon - e) : strlen(e);
      if (n && memmem(paths.v[i], strlen(paths.v[i]), e, n)) skip = true;
      e = colon ? colon + 1 : e + n;
    }
    if (!skip) run_file(&c, paths.v[i]);
    free(paths.v[i]);
  }
  free(paths.v);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  runner_fini(&c.r);
  tallies_print(&c.folders, "folder");
  tallies_print(&c.ops, "op");
  if (c.reasons.n) {
    qsort(c.reasons.t, c.reasons.n, sizeof(tally), cmp_tally);
    printf("\nskip reasons (cases):\n");
    for (size_t i = 0; i < c.reasons.n; i++) printf("  %5d  %s\n", c.reasons.t[i].skip, c.reasons.t[i].key);
  }
  double secs = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
  if (c.r.core)
    printf("\n(%.2f s, in-process %s backend)\n", secs, c.r.backend->vt->name);
  else
    printf("\n(%.2f s, through the plugin's C API: %s)\n", secs, c.r.version);
  printf("conform: %d passed, %d failed, %d skipped\n", c.npass, c.nfail, c.nskip);
  tallies_free(&c.folders);
  tallies_free(&c.ops);
  tallies_free(&c.reasons);
  return c.nfail ? 1 : 0;
}
