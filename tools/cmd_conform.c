/* cjrt conform: runs the conformance corpus through a PJRT plugin and checks its assertions.
 *
 *   cjrt conform [--plugin PATH] [--core] [--filter TEXT] [--quiet] [--max-failures N] PATH...
 *
 * Every .mlir file under the given paths (text, split on `// -----` lines; .mlir.bc/.mlirbc
 * through the bytecode reader) is one or more cases. How a case passes depends on its folder
 * (../shared/conformance/README.md):
 *   testdata, testdata/quantized, tests/interpret, tests/math
 *       compiled and executed by the plugin through its C API only (dlopen + GetPjrtApi,
 *       PJRT_Client_Compile with format "mlir", PJRT_LoadedExecutable_Execute); the program's
 *       check ops / custom calls are evaluated by the plugin and a failing check fails the
 *       execution with its message. Passes when compile and execute succeed.
 *   testdata/dynamic
 *       parses, verifies, prints and re-parses to the same printout (no execution: the programs
 *       have no inputs or checks).
 *   tests/vhlo
 *       stablehlo_legalize_to_vhlo.*.mlir parse; their .mlir.bc twins decode to the same program
 *       as the text (compared printed). The other files test upstream passes (skipped).
 * A case the plugin cannot run (compile fails with UNIMPLEMENTED, or it needs arguments, a probe
 * directory or several processes) is skipped with the reason, never passed.
 *
 * --core runs cases in-process through the CPU backend's vtable instead of a plugin (for
 * developing the backend; the default is the plugin next to this program).
 *
 * Output: each failure with its reason, a pass/fail/skip table per folder and per op (a case
 * counts for every op its program uses), the skip reasons, and the last line
 * `conform: N passed, M failed, K skipped`. Exit status 0 only when M is 0 (2 on bad usage).
 */
#include <dirent.h>
#include <dlfcn.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/threadpool.h"
#include "frontend/frontend.h"
#include "ir/ir.h"
#include "pjrt_c_api.h"
#include "runtime/backend.h"

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
  /* plugin */
  void *dl;
  const PJRT_Api *api;
  PJRT_Client *client;
} runner;

static char *pjrt_msg(const PJRT_Api *api, PJRT_Error *e, PJRT_Error_Code *code) {
  PJRT_Error_Message_Args ma = {PJRT_Error_Message_Args_STRUCT_SIZE, NULL, e, NULL, 0};
  api->PJRT_Error_Message(&ma);
  PJRT_Error_GetCode_Args ga = {PJRT_Error_GetCode_Args_STRUCT_SIZE, NULL, e, PJRT_Error_Code_UNKNOWN};
  api->PJRT_Error_GetCode(&ga);
  if (code) *code = ga.code;
  char *m = malloc(ma.message_size + 1);
  if (m) {
    memcpy(m, ma.message ? ma.message : "", ma.message_size);
    m[ma.message_size] = 0;
  }
  PJRT_Error_Destroy_Args da = {PJRT_Error_Destroy_Args_STRUCT_SIZE, NULL, e};
  api->PJRT_Error_Destroy(&da);
  return m;
}

static char *default_plugin(void) {
  char self[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0) return xstrdup("pjrt_c_api_cjrt_plugin.so");
  self[n] = 0;
  char *slash = strrchr(self, '/');
  if (slash) slash[1] = 0;
  return xprintf("%s%s", self, "pjrt_c_api_cjrt_plugin.so");
}

static char *runner_init(runner *r, const char *plugin) {
  if (r->core) {
    r->backend = cj_backend_cpu();
    cj_status st = NULL;
    r->pool = cj_pool_create(0, &st);
    if (!r->pool) {
      char *m = xstrdup(cj_status_message(st));
      cj_status_free(st);
      return m;
    }
    return NULL;
  }
  r->dl = dlopen(plugin, RTLD_NOW | RTLD_LOCAL);
  if (!r->dl) return xprintf("cannot load the plugin: %s%s", dlerror(), "");
  const PJRT_Api *(*get)(void) = (const PJRT_Api *(*)(void))dlsym(r->dl, "GetPjrtApi");
  if (!get) return xprintf("%s has no GetPjrtApi%s", plugin, "");
  r->api = get();
  if (!r->api) return xprintf("GetPjrtApi returned NULL%s%s", "", "");
  PJRT_Plugin_Initialize_Args ia = {PJRT_Plugin_Initialize_Args_STRUCT_SIZE, NULL};
  PJRT_Error *e = r->api->PJRT_Plugin_Initialize(&ia);
  if (e) return pjrt_msg(r->api, e, NULL);
  PJRT_Client_Create_Args ca;
  memset(&ca, 0, sizeof ca);
  ca.struct_size = PJRT_Client_Create_Args_STRUCT_SIZE;
  e = r->api->PJRT_Client_Create(&ca);
  if (e) return pjrt_msg(r->api, e, NULL);
  r->client = ca.client;
  return NULL;
}

static void runner_fini(runner *r) {
  if (r->core) {
    cj_pool_destroy(r->pool);
    return;
  }
  if (r->client) {
    PJRT_Client_Destroy_Args da = {PJRT_Client_Destroy_Args_STRUCT_SIZE, NULL, r->client};
    PJRT_Error *e = r->api->PJRT_Client_Destroy(&da);
    if (e) free(pjrt_msg(r->api, e, NULL));
  }
  /* the plugin stays loaded until exit (its threads may still be winding down) */
}

/* Compiles and runs one program with no arguments; *msg gets the reason of a failure/skip. */
static int run_core(runner *r, const char *text, size_t len, const char *name, char **msg) {
  cj_module *m = NULL;
  cj_status st = cj_read_program(text, len, name, &m);
  if (!st) st = cj_verify_module(m);
  if (st) {
    *msg = xprintf("parse/verify: %s%s", cj_status_message(st), "");
    cj_status_free(st);
    cj_module_free(m);
    return R_FAIL;
  }
  cj_program *prog = NULL;
  cj_compile_options opts = {1, 1, NULL, false, false};
  st = r->backend->vt->compile(r->backend, m, &opts, &prog);
  if (st) {
    int res = cj_status_code(st) == CJ_UNIMPLEMENTED ? R_SKIP : R_FAIL;
    *msg = xprintf("compile: %s%s", cj_status_message(st), "");
    cj_status_free(st);
    return res;
  }
  const cj_program_info *info = r->backend->vt->program_info(prog);
  int res = R_PASS;
  void **results = calloc((size_t)(info->num_results + 1), sizeof(void *));
  if (info->num_args > 0) {
    *msg = xstrdup("needs arguments");
    res = R_SKIP;
  } else if (!results) {
    *msg = xstrdup("out of memory");
    res = R_FAIL;
  } else {
    for (int32_t j = 0; j < info->num_results; j++)
      results[j] = r->backend->vt->alloc(r->backend, info->results[j].nbytes);
    cj_exec_args ea;
    memset(&ea, 0, sizeof ea);
    ea.results = results;
    ea.pool = r->pool;
    st = r->backend->vt->execute(r->backend, prog, &ea);
    if (st) {
      *msg = xprintf("execute: %s%s", cj_status_message(st), "");
      cj_status_free(st);
      res = R_FAIL;
    }
    for (int32_t j = 0; j < info->num_results; j++) r->backend->vt->free(r->backend, results[j]);
  }
  free(results);
  r->backend->vt->program_free(prog);
  return res;
}

static int run_plugin(runner *r, const char *text, size_t len, const char *name, char **msg) {
  (void)name;
  const PJRT_Api *api = r->api;
  PJRT_Program prog;
  memset(&prog, 0, sizeof prog);
  prog.struct_size = PJRT_Program_STRUCT_SIZE;
  prog.code = (char *)text;
  prog.code_size = len;
  prog.format = "mlir";
  prog.format_size = 4;
  PJRT_Client_Compile_Args ca;
  memset(&ca, 0, sizeof ca);
  ca.struct_size = PJRT_Client_Compile_Args_STRUCT_SIZE;
  ca.client = r->client;
  ca.program = &prog;
  ca.compile_options = "";
  ca.compile_options_size = 0;
  PJRT_Error *e = api->PJRT_Client_Compile(&ca);
  if (e) {
    PJRT_Error_Code code;
    char *m = pjrt_msg(api, e, &code);
    *msg = xprintf("compile: %s%s", m, "");
    free(m);
    return code == PJRT_Error_Code_UNIMPLEMENTED ? R_SKIP : R_FAIL;
  }
  PJRT_LoadedExecutable *lx = ca.executable;
  int res = R_PASS;
  /* outputs per device */
  PJRT_LoadedExecutable_GetExecutable_Args ga;
  memset(&ga, 0, sizeof ga);
  ga.struct_size = PJRT_LoadedExecutable_GetExecutable_Args_STRUCT_SIZE;
  ga.loaded_executable = lx;
  size_t nout = 0;
  e = api->PJRT_LoadedExecutable_GetExecutable(&ga);
  if (!e) {
    PJRT_Executable_NumOutputs_Args na;
    memset(&na, 0, sizeof na);
    na.struct_size = PJRT_Executable_NumOutputs_Args_STRUCT_SIZE;
    na.executable = ga.executable;
    e = api->PJRT_Executable_NumOutputs(&na);
    nout = na.num_outputs;
    PJRT_Executable_Destroy_Args xd = {PJRT_Executable_Destroy_Args_STRUCT_SIZE, NULL, ga.executable};
    PJRT_Error *e2 = api->PJRT_Executable_Destroy(&xd);
    if (e2) free(pjrt_msg(api, e2, NULL));
  }
  PJRT_Buffer **outs = calloc(nout + 1, sizeof(PJRT_Buffer *));
  if (e) {
    char *m = pjrt_msg(api, e, NULL);
    *msg = xprintf("executable: %s%s", m, "");
    free(m);
    res = R_FAIL;
  } else if (!outs) {
    *msg = xstrdup("out of memory");
    res = R_FAIL;
  } else {
    PJRT_ExecuteOptions eo;
    memset(&eo, 0, sizeof eo);
    eo.struct_size = PJRT_ExecuteOptions_STRUCT_SIZE;
    PJRT_Buffer **const out_lists[1] = {outs};
    PJRT_Event *done[1] = {NULL};
    PJRT_LoadedExecutable_Execute_Args xa;
    memset(&xa, 0, sizeof xa);
    xa.struct_size = PJRT_LoadedExecutable_Execute_Args_STRUCT_SIZE;
    xa.executable = lx;
    xa.options = &eo;
    xa.argument_lists = NULL;
    xa.num_devices = 1;
    xa.num_args = 0;
    xa.output_lists = out_lists;
    xa.device_complete_events = done;
    e = api->PJRT_LoadedExecutable_Execute(&xa);
    if (e) {
      PJRT_Error_Code code;
      char *m = pjrt_msg(api, e, &code);
      *msg = xprintf("execute: %s%s", m, "");
      free(m);
      res = code == PJRT_Error_Code_UNIMPLEMENTED ? R_SKIP : R_FAIL;
    } else {
      if (done[0]) {
        PJRT_Event_Await_Args wa = {PJRT_Event_Await_Args_STRUCT_SIZE, NULL, done[0]};
        e = api->PJRT_Event_Await(&wa);
        if (e) {
          char *m = pjrt_msg(api, e, NULL);
          *msg = xprintf("execute: %s%s", m, "");
          free(m);
          res = R_FAIL;
        }
        PJRT_Event_Destroy_Args ed = {PJRT_Event_Destroy_Args_STRUCT_SIZE, NULL, done[0]};
        PJRT_Error *e2 = api->PJRT_Event_Destroy(&ed);
        if (e2) free(pjrt_msg(api, e2, NULL));
      }
      for (size_t j = 0; j < nout; j++) {
        if (!outs[j]) continue;
        PJRT_Buffer_Destroy_Args bd = {PJRT_Buffer_Destroy_Args_STRUCT_SIZE, NULL, outs[j]};
        PJRT_Error *e2 = api->PJRT_Buffer_Destroy(&bd);
        if (e2) free(pjrt_msg(api, e2, NULL));
      }
    }
  }
  free(outs);
  PJRT_LoadedExecutable_Destroy_Args ld = {PJRT_LoadedExecutable_Destroy_Args_STRUCT_SIZE, NULL, lx};
  PJRT_Error *e2 = api->PJRT_LoadedExecutable_Destroy(&ld);
  if (e2) free(pjrt_msg(api, e2, NULL));
  return res;
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

static cj_status add_op(cj_op *op, void *ctx) {
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
  cj_walk_module(m, add_op, &s);
  for (int i = 0; i < s.n; i++)
    if (!strcmp(s.names[i], name)) return true;
  /* also structural/check names (add_op filters them) */
  return false;
}

typedef struct found {
  const char *name;
  bool hit;
} found;

static cj_status find_name(cj_op *op, void *ctx) {
  found *f = ctx;
  if (op->name && !strcmp(op->name, f->name)) f->hit = true;
  return NULL;
}

static bool uses(cj_module *m, const char *name) {
  found f = {name, false};
  cj_walk_module(m, find_name, &f);
  return f.hit || has_op(m, name);
}

typedef struct conf {
  runner r;
  const char *filter;
  bool quiet;
  int max_failures;
  int npass, nfail, nskip, nprinted;
  tallies folders, ops, reasons;
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
    printf("FAIL %s: %s\n", casename, msg ? msg : "");
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
    if (!c->quiet) printf("SKIP %s: %s\n", casename, msg ? msg : "");
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
  cj_walk_module(m, add_op, &ops);
  /* copy the names: the module dies below */
  char *names[256];
  for (int i = 0; i < ops.n; i++) names[i] = xstrdup(ops.names[i]);
  for (int i = 0; i < ops.n; i++) ops.names[i] = names[i];
  int res;
  cj_op *main = cj_module_main(m);
  const cj_type *ft = main ? cj_func_type(main) : NULL;
  /* interpreter.run_parallel runs as one program whose processes meet at collectives (the
   * compiler and src/cpu/k_collective_parallel.c) */
  if (uses(m, "interpreter.probe") || uses(m, "check.expect_serialized_eq")) {
    msg = xstrdup("needs the interpreter's probe output directory");
    res = R_SKIP;
  } else if (uses(m, "interpreter.print")) {
    msg = xstrdup("checks the interpreter's printed output (FileCheck)");
    res = R_SKIP;
  } else if (!main) {
    msg = xstrdup("no entry function (no @main and several functions: the interpreter rejects it "
                  "too)");
    res = R_SKIP;
  } else if (ft && ft->rank > 0) {
    msg = xstrdup("needs arguments (the interpreter's --args)");
    res = R_SKIP;
  } else {
    res = c->r.core ? run_core(&c->r, text, len, casename, &msg)
                    : run_plugin(&c->r, text, len, casename, &msg);
  }
  cj_module_free(m);
  record(c, folder, casename, &ops, res, msg);
  for (int i = 0; i < ops.n; i++) free(names[i]);
  free(msg);
  return res;
}

static char *print_of(const char *text, size_t len, const char *name, bool bytecode, char **err) {
  cj_module *m = NULL;
  cj_status st = bytecode ? cj_read_mlir_bytecode(text, len, name, &m)
                          : cj_parse_mlir_text(text, len, name, &m);
  if (!st) st = cj_verify_module(m);
  char *out = NULL;
  size_t olen = 0;
  if (!st) st = cj_print_module(m, CJ_PRINT_GENERIC, &out, &olen);
  cj_module_free(m);
  if (st) {
    *err = xstrdup(cj_status_message(st));
    cj_status_free(st);
    free(out);
    return NULL;
  }
  return out;
}

static void run_roundtrip_case(conf *c, const char *folder, const char *casename, const char *text,
                               size_t len) {
  char *err = NULL;
  char *p1 = print_of(text, len, casename, false, &err);
  char *p2 = p1 ? print_of(p1, strlen(p1), casename, false, &err) : NULL;
  int res = R_PASS;
  char *msg = NULL;
  if (!p1 || !p2) {
    res = R_FAIL;
    msg = xprintf("%s%s", p1 ? "re-parse: " : "parse: ", err);
  } else if (strcmp(p1, p2) != 0) {
    res = R_FAIL;
    msg = xstrdup("the printout does not re-parse to the same program");
  }
  record(c, folder, casename, NULL, res, msg);
  free(msg);
  free(err);
  free(p1);
  free(p2);
}

static void run_vhlo_file(conf *c, const char *folder, const char *path) {
  const char *base = strrchr(path, '/');
  base = base ? base + 1 : path;
  if (strncmp(base, "stablehlo_legalize_to_vhlo.", 27) != 0) {
    record(c, folder, path, NULL, R_SKIP, "an upstream test of a version-conversion pass (reference only)");
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
    char *p = print_of(data, len, path, false, &err);
    record(c, folder, path, NULL, p ? R_PASS : R_FAIL, err);
    free(p);
    free(err);
  } else {
    /* the text twin */
    size_t pl = strlen(path);
    char *twin = malloc(pl + 1);
    memcpy(twin, path, pl + 1);
    twin[pl - 3] = 0; /* drop ".bc" */
    size_t tlen;
    char *ttext = read_all(twin, &tlen);
    char *err = NULL, *err2 = NULL;
    char *pb = print_of(data, len, path, true, &err);
    char *pt = ttext ? print_of(ttext, tlen, twin, false, &err2) : NULL;
    if (!pb) {
      int res = err && strstr(err, "not built") ? R_SKIP : R_FAIL;
      char *m = xprintf("bytecode: %s%s", err, "");
      record(c, folder, path, NULL, res, m);
      free(m);
    } else if (!pt) {
      record(c, folder, path, NULL, R_FAIL, "the text twin does not parse");
    } else if (strcmp(pb, pt) != 0) {
      record(c, folder, path, NULL, R_FAIL, "decodes to another program than its text twin");
    } else {
      record(c, folder, path, NULL, R_PASS, NULL);
    }
    free(pb);
    free(pt);
    free(err);
    free(err2);
    free(ttext);
    free(twin);
  }
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
    if (!empty) {
      char *chunk = malloc(clen + 1);
      if (chunk) {
        /* keep line numbers: blank out the text before the chunk */
        memcpy(chunk, q, clen);
        chunk[clen] = 0;
        char name[PATH_MAX + 32];
        if (next || k > 0)
          snprintf(name, sizeof name, "%s#%d", path, k);
        else
          snprintf(name, sizeof name, "%s", path);
        if (fk == F_DYNAMIC)
          run_roundtrip_case(c, folder, name, chunk, clen);
        else
          run_exec_case(c, folder, name, chunk, clen);
        free(chunk);
      }
      k++;
    }
    if (!next) break;
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
          "  --plugin PATH     the PJRT plugin (default: pjrt_c_api_cjrt_plugin.so beside cjrt)\n"
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
  char *defplug = plugin ? NULL : default_plugin();
  char *err = runner_init(&c.r, plugin ? plugin : defplug);
  free(defplug);
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
  printf("\n(%.2f s, %s)\n", secs, c.r.core ? "in-process CPU backend" : "through the plugin's C API");
  printf("conform: %d passed, %d failed, %d skipped\n", c.npass, c.nfail, c.nskip);
  tallies_free(&c.folders);
  tallies_free(&c.ops);
  tallies_free(&c.reasons);
  return c.nfail ? 1 : 0;
}
