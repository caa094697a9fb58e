/* cjrt tests: the JAX fixtures run end to end through the plugin.
 *
 *   test_fixtures_run <plugin.so> <fixtures dir> [NAME...]
 *
 * For every program <name> of the fixtures (tests/bytecode/make_fixtures.py) that has inputs
 * (<name>.in<i>.npy) and expected outputs (<name>.out<j>.npy computed by jax on CPU), both kinds
 * of bytes are compiled by the plugin through its C API (libcjrt), executed on the inputs and the
 * outputs compared with jax's:
 *   <name>.export.mlir.bc   jax.export's serialized artifact. A shape-polymorphic one has
 *                           dynamic argument types; jax runs such an artifact by calling it from a
 *                           module with the concrete shapes, its arguments wrapped in
 *                           stablehlo.shape_refinement_operand_wrapper (the plugin refines the
 *                           shapes at compile time), and so does this test: the artifact is read
 *                           with our bytecode reader, printed, and wrapped the same way.
 *   <name>.plugin.mlir.bc   the bytes jax hands a PJRT plugin (portable artifact for 1.20.0).
 * A program jax laid out over several devices has <name>.shards (the piece of every argument
 * and result each device holds): it is compiled for that many partitions (SPMD), every device
 * gets its pieces of the inputs, and every device's pieces of the outputs are compared.
 *
 * Known gaps (features of other parts of cjrt still missing) are listed in KNOWN_GAPS with the
 * reason: such a program must fail to compile with UNIMPLEMENTED (reported, not counted as a
 * failure; any other error fails the test); if it compiles, it runs and is checked like any
 * other, and the test says the entry is stale.
 *
 * Comparison: integers and booleans exactly; floats within 2e-5 + 1e-4 * |expected| (jax's
 * XLA:CPU and cjrt round transcendental functions differently by a few ulp).
 */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/files.h"

#include "cjrt/array.h"
#include "cjrt/cjrt.h"
#include "cjrt/npy.h"
#include "common/check.h"
#include "frontend/frontend.h"
#include "ir/ir.h"

static const struct {
  const char *name, *kind, *why;
} KNOWN_GAPS[] = {
    {"sharded", "export",
     "jit with in/out shardings: values sharded outside a manual computation need SPMD "
     "propagation (src/compiler/spmd.c partitions only manual computations and replicated "
     "values)"},
    {"sharded", "plugin", "the same program as jax hands it to a plugin (mhlo.sharding on @main)"},
};

enum { MAX_VALUES = 16, MAX_DEVICES = 8 };

typedef struct piece {
  int64_t lo[16], hi[16];
  bool set;
} piece;

typedef struct manifest {
  int ndev;
  piece in[MAX_VALUES][MAX_DEVICES], out[MAX_VALUES][MAX_DEVICES];
} manifest;

static bool file_exists(const char *path) {
  FILE *f = fopen(path, "rb");
  if (f) fclose(f);
  return f != NULL;
}

/* "<kind> <index> <device> lo:hi,lo:hi" lines; false if absent or malformed. */
static bool read_manifest(const char *path, manifest *m) {
  memset(m, 0, sizeof *m);
  FILE *f = fopen(path, "r");
  if (!f) return false;
  char line[512];
  bool ok = true;
  while (fgets(line, sizeof line, f)) {
    char kind[8], ranges[400];
    int idx, dev;
    if (sscanf(line, "devices %d", &m->ndev) == 1) continue;
    if (sscanf(line, "%7s %d %d %399s", kind, &idx, &dev, ranges) != 4 || idx < 0 ||
        idx >= MAX_VALUES || dev < 0 || dev >= MAX_DEVICES) {
      ok = false;
      break;
    }
    piece *p = !strcmp(kind, "in") ? &m->in[idx][dev] : &m->out[idx][dev];
    p->set = true;
    int d = 0;
    for (char *r = ranges; *r && *r != '-' && d < 16; d++) {
      long long lo, hi;
      int used = 0;
      if (sscanf(r, "%lld:%lld%n", &lo, &hi, &used) != 2) {
        ok = false;
        break;
      }
      p->lo[d] = lo;
      p->hi[d] = hi;
      r += used;
      if (*r == ',') r++;
    }
  }
  fclose(f);
  return ok && m->ndev >= 1 && m->ndev <= MAX_DEVICES;
}

/* Copies the piece p of a (dims, rank) out of src into a new dense array. */
static cjrt_error *slice_of(const cjrt_array *a, const piece *p, cjrt_array *out) {
  int64_t dims[16];
  for (size_t d = 0; d < a->rank; d++) dims[d] = p->hi[d] - p->lo[d];
  cjrt_error *e = cjrt_array_alloc(a->dtype, dims, a->rank, out);
  if (e) return e;
  size_t es = cjrt_dtype_size(a->dtype);
  int64_t n = cjrt_array_num_elements(out);
  int64_t idx[16] = {0};
  for (int64_t k = 0; k < n; k++) {
    int64_t src = 0;
    for (size_t d = 0; d < a->rank; d++) src = src * a->dims[d] + p->lo[d] + idx[d];
    memcpy((char *)out->data + k * (int64_t)es, (const char *)a->data + src * (int64_t)es, es);
    for (int64_t d = (int64_t)a->rank - 1; d >= 0; d--) {
      if (++idx[d] < dims[d]) break;
      idx[d] = 0;
    }
  }
  return NULL;
}

/* Compares an output with the expected array; returns the number of mismatches (and describes
 * the first). */
static int64_t compare(const cjrt_array *got, const cjrt_array *want, char *why, size_t cap) {
  if (got->dtype != want->dtype || got->rank != want->rank) {
    snprintf(why, cap, "type %s rank %zu, expected %s rank %zu", cjrt_dtype_name(got->dtype),
             got->rank, cjrt_dtype_name(want->dtype), want->rank);
    return 1;
  }
  for (size_t d = 0; d < got->rank; d++)
    if (got->dims[d] != want->dims[d]) {
      snprintf(why, cap, "dimension %zu is %lld, expected %lld", d, (long long)got->dims[d],
               (long long)want->dims[d]);
      return 1;
    }
  int64_t n = cjrt_array_num_elements(got), bad = 0;
  size_t es = cjrt_dtype_size(got->dtype);
  for (int64_t i = 0; i < n; i++) {
    bool ok;
    double x = 0, y = 0;
    if (got->dtype == CJRT_F32) {
      x = ((const float *)got->data)[i];
      y = ((const float *)want->data)[i];
      ok = fabs(x - y) <= 2e-5 + 1e-4 * fabs(y) || (isnan(x) && isnan(y));
    } else if (got->dtype == CJRT_F64) {
      x = ((const double *)got->data)[i];
      y = ((const double *)want->data)[i];
      ok = fabs(x - y) <= 1e-9 + 1e-8 * fabs(y) || (isnan(x) && isnan(y));
    } else {
      ok = memcmp((const char *)got->data + i * (int64_t)es, (const char *)want->data + i * (int64_t)es,
                  es) == 0;
    }
    if (!ok && bad++ == 0) snprintf(why, cap, "element %lld: %.9g, expected %.9g", (long long)i, x, y);
  }
  return bad;
}

/* jax's way of calling a shape-polymorphic export on concrete arrays: a new @main with static
 * argument types calls the artifact's entry function on its arguments wrapped in
 * shape_refinement_operand_wrapper. Returns the program text (malloc'd) or NULL. */
static char *wrap_polymorphic(const char *bc, size_t len, const char *what, cjrt_array *ins,
                              int nin, bool *is_poly) {
  *is_poly = false;
  cj_module *m = NULL;
  cj_status st = cj_read_mlir_bytecode(bc, len, what, &m);
  if (st) {
    fprintf(stderr, "%s: %s\n", what, cj_status_message(st));
    cj_status_free(st);
    return NULL;
  }
  cj_op *main = cj_module_main(m);
  const cj_type *ft = main ? cj_func_type(main) : NULL;
  bool dyn = false;
  for (int32_t i = 0; ft && i < ft->rank; i++)
    if (!cj_type_is_static(cj_type_fn_input(ft, i))) dyn = true;
  char *text = NULL;
  size_t tlen = 0;
  if (!dyn || !ft || ft->rank != nin) {
    cj_module_free(m);
    return NULL;
  }
  *is_poly = true;
  st = cj_print_module(m, 0, &text, &tlen);
  if (st) {
    cj_status_free(st);
    cj_module_free(m);
    return NULL;
  }
  /* the artifact's @main becomes @exported_main */
  const char *hdr = "func.func public @main(";
  char *at = strstr(text, hdr);
  char *close = strrchr(text, '}');
  size_t cap = tlen + 16384;
  char *out = malloc(cap);
  if (!at || !close || !out) {
    free(out);
    free(text);
    cj_module_free(m);
    return NULL;
  }
  size_t n = 0;
  n += (size_t)snprintf(out + n, cap - n, "%.*sfunc.func private @exported_main(", (int)(at - text), text);
  n += (size_t)snprintf(out + n, cap - n, "%.*s", (int)(close - (at + strlen(hdr))), at + strlen(hdr));
  /* the new entry function */
  char params[4096] = "", inner[4096] = "", body[8192] = "", rtypes[4096] = "";
  size_t pn = 0, in_ = 0, bn = 0, rn = 0;
  for (int32_t i = 0; i < nin; i++) {
    char *ts = NULL, *dt = NULL;
    size_t tl = 0, dl = 0;
    const cj_type *t = cj_type_fn_input(ft, i);
    CHECK_OK(cj_print_type(t, &ts, &tl));
    CHECK_OK(cj_print_type(t->elem ? t->elem : t, &dt, &dl));
    char st_type[512];
    size_t sn = (size_t)snprintf(st_type, sizeof st_type, "tensor<");
    for (size_t d = 0; d < ins[i].rank; d++)
      sn += (size_t)snprintf(st_type + sn, sizeof st_type - sn, "%lldx", (long long)ins[i].dims[d]);
    snprintf(st_type + sn, sizeof st_type - sn, "%s>", dt ? dt : "?");
    pn += (size_t)snprintf(params + pn, sizeof params - pn, "%s%%a%d: %s", i ? ", " : "", i, st_type);
    if (cj_type_is_static(t)) {
      in_ += (size_t)snprintf(inner + in_, sizeof inner - in_, "%s%%a%d", i ? ", " : "", i);
    } else {
      char shape[512] = "";
      size_t hn = 0;
      for (size_t d = 0; d < ins[i].rank; d++)
        hn += (size_t)snprintf(shape + hn, sizeof shape - hn, "%s%lld", d ? ", " : "", (long long)ins[i].dims[d]);
      bn += (size_t)snprintf(body + bn, sizeof body - bn,
                             "    %%s%d = stablehlo.constant dense<[%s]> : tensor<%zuxi64>\n"
                             "    %%w%d = stablehlo.custom_call @stablehlo.shape_refinement_operand_wrapper("
                             "%%a%d, %%s%d) {indices_of_shape_operands = dense<1> : tensor<1xi64>} : "
                             "(%s, tensor<%zuxi64>) -> %s\n",
                             i, shape, ins[i].rank, i, i, i, st_type, ins[i].rank, ts ? ts : "?");
      in_ += (size_t)snprintf(inner + in_, sizeof inner - in_, "%s%%w%d", i ? ", " : "", i);
    }
    free(ts);
    free(dt);
  }
  char fty[8192];
  char *fts = NULL;
  size_t fl = 0;
  CHECK_OK(cj_print_type(ft, &fts, &fl));
  snprintf(fty, sizeof fty, "%s", fts ? fts : "?");
  free(fts);
  char *arrow = strstr(fty, ") -> ");
  for (int32_t j = 0; j < ft->nresults; j++) {
    char *ts = NULL;
    size_t tl = 0;
    CHECK_OK(cj_print_type(cj_type_fn_result(ft, j), &ts, &tl));
    rn += (size_t)snprintf(rtypes + rn, sizeof rtypes - rn, "%s%s", j ? ", " : "", ts ? ts : "?");
    free(ts);
  }
  n += (size_t)snprintf(out + n, cap - n, "  func.func public @main(%s) -> (%s) {\n%s", params, rtypes, body);
  n += (size_t)snprintf(out + n, cap - n, "    %%r:%d = call @exported_main(%s) : %.*s) -> (%s)\n",
                        ft->nresults, inner, arrow ? (int)(arrow - fty) : 0, fty, rtypes);
  n += (size_t)snprintf(out + n, cap - n, "    return");
  for (int32_t j = 0; j < ft->nresults; j++)
    n += (size_t)snprintf(out + n, cap - n, "%s %%r#%d", j ? "," : "", j);
  n += (size_t)snprintf(out + n, cap - n, " : %s\n  }\n}\n", rtypes);
  free(text);
  cj_module_free(m);
  if (n >= cap - 1) {
    free(out);
    return NULL;
  }
  return out;
}

/* Artifacts whose inputs the executable takes whole on every device although the manifest
 * (what XLA's executable took) has them in shards: jit(shard_map) called on unsharded arrays.
 * XLA propagates the manual computation's in_specs back to the parameters; cjrt keeps the
 * parameters replicated and each device slices its own shard (src/compiler/spmd.c,
 * slice_replicated). Its parameter shardings say so, and JAX passes whole arrays. */
static const struct {
  const char *name, *kind;
} WHOLE_INPUTS[] = {{"shard_map", "export"},
                    /* the same in Shardy's round-trip form (xla.sdy.* custom calls) */
                    {"shard_map", "plugin"}};

static bool whole_inputs(const char *name, const char *kind) {
  for (size_t i = 0; i < sizeof WHOLE_INPUTS / sizeof *WHOLE_INPUTS; i++)
    if (!strcmp(WHOLE_INPUTS[i].name, name) && !strcmp(WHOLE_INPUTS[i].kind, kind)) return true;
  return false;
}

static const char *gap_of(const char *name, const char *kind) {
  for (size_t i = 0; i < sizeof KNOWN_GAPS / sizeof *KNOWN_GAPS; i++)
    if (!strcmp(KNOWN_GAPS[i].name, name) && !strcmp(KNOWN_GAPS[i].kind, kind))
      return KNOWN_GAPS[i].why;
  return NULL;
}

typedef struct tally {
  int ran, passed, gaps;
} tally;

static void run_one(cjrt_client *client, const char *dir, const char *name, const char *kind,
                    cjrt_array *ins, int nin, cjrt_array *outs, int nout, const manifest *mf,
                    tally *t) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s.%s.mlir.bc", dir, name, kind);
  size_t len = 0;
  char *bytes = tc_read_file(path, &len);
  CHECK_MSG(bytes != NULL, "cannot read %s", path);
  if (!bytes) return;
  t->ran++;
  bool poly = false;
  char *wrapped = wrap_polymorphic(bytes, len, path, ins, nin, &poly);
  CHECK_MSG(!poly || wrapped, "%s: could not wrap the polymorphic artifact", path);
  int ndev = mf ? mf->ndev : 1;
  int64_t ids[MAX_DEVICES];
  for (int d = 0; d < ndev; d++) ids[d] = d;
  cjrt_compile_options opts = {1, ndev, ndev > 1 ? ids : NULL, NULL, ndev > 1};
  cjrt_executable *ex = NULL;
  cjrt_error *e = wrapped ? cjrt_compile_text(client, wrapped, &opts, &ex)
                          : cjrt_compile(client, bytes, len, &opts, &ex);
  const char *gap = gap_of(name, kind);
  if (e && gap && cjrt_error_code(e) == CJRT_UNIMPLEMENTED) {
    printf("  %-18s %-6s KNOWN GAP: %s\n      (%s)\n", name, kind, gap, cjrt_error_message(e));
    t->gaps++;
    cjrt_error_free(e);
    free(wrapped);
    free(bytes);
    return;
  }
  CHECK_MSG(e == NULL, "%s: compile: %s", path, cjrt_error_message(e));
  cjrt_error_free(e);
  if (gap && ex) printf("  note: %s %s is listed as a known gap but compiles now\n", name, kind);
  bool ok = ex != NULL;
  cjrt_buffer *args[MAX_VALUES * MAX_DEVICES] = {0}, *res[MAX_VALUES * MAX_DEVICES] = {0};
  if (ex) {
    CHECK_MSG((int)cjrt_executable_num_outputs(ex) == nout, "%s: %zu outputs, expected %d", path,
              cjrt_executable_num_outputs(ex), nout);
    CHECK_MSG((int)cjrt_executable_num_devices(ex) == ndev, "%s: runs on %zu devices, expected %d",
              path, cjrt_executable_num_devices(ex), ndev);
    ok = ok && (int)cjrt_executable_num_outputs(ex) == nout &&
         (int)cjrt_executable_num_devices(ex) == ndev;
  }
  for (int d = 0; ok && d < ndev; d++)
    for (int i = 0; ok && i < nin; i++) {
      cjrt_array piece_arr = {0};
      const cjrt_array *src = &ins[i];
      if (mf && !whole_inputs(name, kind)) {
        e = slice_of(&ins[i], &mf->in[i][d], &piece_arr);
        src = &piece_arr;
      }
      if (!e)
        e = cjrt_buffer_from_host(client, cjrt_executable_device(ex, (size_t)d), src->dtype,
                                  src->dims, src->rank, src->data, NULL, &args[d * nin + i]);
      CHECK_MSG(e == NULL, "%s: argument %d: %s", path, i, cjrt_error_message(e));
      ok = e == NULL;
      cjrt_error_free(e);
      e = NULL;
      cjrt_array_free(&piece_arr);
    }
  if (ok) {
    e = ndev == 1 ? cjrt_execute(ex, args, (size_t)nin, res, (size_t)nout)
                  : cjrt_execute_sharded(ex, (size_t)ndev, args, (size_t)nin, res, (size_t)nout);
    CHECK_MSG(e == NULL, "%s: execute: %s", path, cjrt_error_message(e));
    ok = e == NULL;
    cjrt_error_free(e);
  }
  for (int d = 0; ok && d < ndev; d++)
    for (int j = 0; j < nout; j++) {
      cjrt_array got = {0}, want = {0};
      const cjrt_array *w = &outs[j];
      e = NULL;
      if (mf) {
        e = slice_of(&outs[j], &mf->out[j][d], &want);
        w = &want;
      }
      if (!e) e = cjrt_buffer_to_array(res[d * nout + j], &got);
      CHECK_MSG(e == NULL, "%s: output %d: %s", path, j, cjrt_error_message(e));
      if (!e) {
        char why[256] = "";
        int64_t bad = compare(&got, w, why, sizeof why);
        CHECK_MSG(bad == 0, "%s: device %d output %d: %lld elements differ (%s)", path, d, j,
                  (long long)bad, why);
        if (bad) ok = false;
      } else {
        ok = false;
      }
      cjrt_error_free(e);
      cjrt_array_free(&got);
      cjrt_array_free(&want);
    }
  for (int k = 0; k < MAX_VALUES * MAX_DEVICES; k++) {
    cjrt_buffer_free(args[k]);
    cjrt_buffer_free(res[k]);
  }
  cjrt_executable_free(ex);
  if (ok) {
    t->passed++;
    printf("  %-18s %-6s ok (%d device%s%s)\n", name, kind, ndev, ndev > 1 ? "s" : "",
           poly ? ", shape-polymorphic export called on concrete shapes" : "");
  }
  free(wrapped);
  free(bytes);
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: %s <plugin.so> <fixtures dir> [NAME...]\n", argv[0]);
    return 2;
  }
  const char *dir = argv[2];
  cjrt_plugin *plugin = NULL;
  cjrt_error *e = cjrt_plugin_open(argv[1], &plugin);
  CHECK_MSG(e == NULL, "open %s: %s", argv[1], cjrt_error_message(e));
  cjrt_error_free(e);
  if (!plugin) return check_report("fixtures_run");
  cjrt_value opt = cjrt_value_int64("cpu_device_count", 2);
  cjrt_client *client = NULL;
  e = cjrt_client_create(plugin, &opt, 1, &client);
  CHECK_MSG(e == NULL, "client: %s", cjrt_error_message(e));
  cjrt_error_free(e);
  /* programs: every <name>.in0.npy */
  DIR *dd = opendir(dir);
  CHECK_MSG(dd != NULL, "cannot open %s", dir);
  char *names[64];
  int nnames = 0;
  struct dirent *de;
  while (dd && (de = readdir(dd)) && nnames < 64) {
    size_t l = strlen(de->d_name);
    if (l > 8 && !strcmp(de->d_name + l - 8, ".in0.npy")) {
      names[nnames] = strndup(de->d_name, l - 8);
      bool wanted = argc <= 3;
      for (int a = 3; a < argc; a++)
        if (!strcmp(argv[a], names[nnames])) wanted = true;
      if (wanted) nnames++;
      else free(names[nnames]);
    }
  }
  if (dd) closedir(dd);
  for (int i = 0; i < nnames; i++)
    for (int j = i + 1; j < nnames; j++)
      if (strcmp(names[i], names[j]) > 0) {
        char *x = names[i];
        names[i] = names[j];
        names[j] = x;
      }
  tally t = {0, 0, 0};
  for (int k = 0; client && k < nnames; k++) {
    const char *name = names[k];
    cjrt_array ins[MAX_VALUES], outs[MAX_VALUES];
    memset(ins, 0, sizeof ins);
    memset(outs, 0, sizeof outs);
    int nin = 0, nout = 0;
    char path[4096];
    for (; nin < MAX_VALUES; nin++) {
      snprintf(path, sizeof path, "%s/%s.in%d.npy", dir, name, nin);
      if (!file_exists(path)) break;
      e = cjrt_npy_read_file(path, CJRT_INVALID, &ins[nin]);
      CHECK_MSG(e == NULL, "%s: %s", path, cjrt_error_message(e));
      cjrt_error_free(e);
    }
    for (; nout < MAX_VALUES; nout++) {
      snprintf(path, sizeof path, "%s/%s.out%d.npy", dir, name, nout);
      if (!file_exists(path)) break;
      e = cjrt_npy_read_file(path, CJRT_INVALID, &outs[nout]);
      CHECK_MSG(e == NULL, "%s: %s", path, cjrt_error_message(e));
      cjrt_error_free(e);
    }
    manifest mf;
    snprintf(path, sizeof path, "%s/%s.shards", dir, name);
    bool sharded = file_exists(path);
    if (sharded) CHECK_MSG(read_manifest(path, &mf), "%s: malformed", path);
    run_one(client, dir, name, "export", ins, nin, outs, nout, sharded ? &mf : NULL, &t);
    run_one(client, dir, name, "plugin", ins, nin, outs, nout, sharded ? &mf : NULL, &t);
    for (int i = 0; i < MAX_VALUES; i++) {
      cjrt_array_free(&ins[i]);
      cjrt_array_free(&outs[i]);
    }
    free(names[k]);
  }
  printf("fixtures: %d of %d runs matched jax's outputs, %d known gaps\n", t.passed, t.ran, t.gaps);
  CHECK_MSG(t.ran >= 16 || argc > 3, "only %d runs", t.ran);
  cjrt_client_free(client);
  cjrt_plugin_close(plugin);
  return check_report("fixtures_run");
}
