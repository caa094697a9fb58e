/* cjrt: the reference interpreter's probe instrumentation, for the conformance corpus
 * (stablehlo/tests/interpret/probe.mlir): interpreter.probe and check.expect_serialized_eq.
 *
 * Semantics (upstream's interpreter run with --probe-output-dir DIR):
 *   %r = interpreter.probe %x, probe_id = "id"
 *       %r is %x. Each time the op runs, %x is written to DIR/probe<N>.npy (N counts every probe
 *       write of the process, so names never collide) and the line `id,<type>,DIR/probe<N>.npy`
 *       is appended to DIR/index.csv.
 *   check.expect_serialized_eq %e, probe_id = "id", iter = K
 *       the K-th (from 0) line of DIR/index.csv whose probe id is "id" names a file holding a
 *       tensor of %e's type (the type recorded in the line must be %e's) whose elements equal
 *       %e's (the equality of check.expect_eq: NaN matches NaN). Fails the execution otherwise.
 *       (Upstream takes the K-th line of the whole file and then requires the id in it; both
 *       agree whenever the probes being checked are not interleaved with other probes.)
 *
 * DIR comes from the environment variable CJRT_PROBE_DIR when the program is compiled (the
 * equivalent of the interpreter's --probe-output-dir); a program with probes compiled without it
 * fails to compile with UNIMPLEMENTED. Like upstream's tool, which deletes index.csv when a run
 * starts, the caller clears index.csv between executions (`cjrt conform` gives every case a
 * fresh directory). These are test-only ops: their kernels do file I/O at run time.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/lower.h"

typedef struct probe_params {
  const char *dir;      /* the probe output directory */
  const char *id;       /* probe_id */
  const char *type;     /* the operand's type, printed ("tensor<3x1xi64>") */
  cj_dtype dt;
  int32_t rank;
  const int64_t *dims;
  int64_t nbytes;
  int64_t iteration;    /* expect_serialized_eq: which recording of the probe */
  bool has_expected;    /* expect_serialized_eq: it has an operand to compare */
} probe_params;

static pthread_mutex_t probe_lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic uint64_t probe_serial;

/* The NumPy descr of an element type; types NumPy lacks are raw bytes ('|V<n>'). */
static void npy_descr(cj_dtype dt, char *out, size_t cap) {
  int b = cj_dtype_bytes(dt);
  char k;
  switch (cj_dtype_kindof(dt)) {
    case CJ_DK_BOOL: k = 'b'; break;
    case CJ_DK_SINT: k = 'i'; break;
    case CJ_DK_UINT: k = 'u'; break;
    case CJ_DK_COMPLEX: k = 'c'; break;
    case CJ_DK_FLOAT: k = (dt == CJ_F16 || dt == CJ_F32 || dt == CJ_F64) ? 'f' : 'V'; break;
    default: k = 'V';
  }
  /* sub-byte integers occupy a byte each in memory but are not NumPy's i1/u1 */
  if ((k == 'i' || k == 'u') && cj_dtype_bits(dt) < 8) k = 'V';
  snprintf(out, cap, "%c%c%d", (b == 1 || k == 'V') ? '|' : '<', k, b);
}

/* The header of a version-1.0 .npy file; returns its length (a multiple of 64). */
static size_t npy_header(const probe_params *p, char *out, size_t cap) {
  char descr[16], shape[512];
  npy_descr(p->dt, descr, sizeof descr);
  size_t n = 0;
  shape[n++] = '(';
  for (int32_t d = 0; d < p->rank && n < sizeof shape - 32; d++)
    n += (size_t)snprintf(shape + n, sizeof shape - n, "%" PRId64 "%s", p->dims[d],
                          (p->rank == 1 || d + 1 < p->rank) ? "," : "");
  shape[n++] = ')';
  shape[n] = 0;
  char dict[700];
  int dl = snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': %s, }",
                    descr, shape);
  size_t total = 10 + (size_t)dl + 1;
  total = (total + 63) / 64 * 64;
  if (total > cap) return 0;
  memcpy(out, "\x93NUMPY\x01\x00", 8);
  size_t hl = total - 10;
  out[8] = (char)(hl & 0xff);
  out[9] = (char)(hl >> 8);
  memcpy(out + 10, dict, (size_t)dl);
  memset(out + 10 + dl, ' ', total - 10 - (size_t)dl - 1);
  out[total - 1] = '\n';
  return total;
}

static CJ_MUST_USE cj_status k_probe(cj_exec_ctx *ctx, const cj_step *st) {
  const probe_params *p = st->params;
  const char *data = CJ_PTR(ctx, st->in[0]);
  uint64_t serial = atomic_fetch_add(&probe_serial, 1) + 1;
  char path[4096], hdr[1024];
  int pl = snprintf(path, sizeof path, "%s/probe%" PRIu64 ".npy", p->dir, serial);
  if (pl <= 0 || (size_t)pl >= sizeof path)
    return cj_status_make(CJ_INVALID_ARGUMENT, "interpreter.probe (%s): the probe path is too long",
                          st->what);
  size_t hl = npy_header(p, hdr, sizeof hdr);
  if (!hl)
    return cj_status_make(CJ_INVALID_ARGUMENT, "interpreter.probe (%s): the shape is too large",
                          st->what);
  cj_status err = NULL;
  pthread_mutex_lock(&probe_lock);
  FILE *f = fopen(path, "wb");
  if (!f ||
      fwrite(hdr, 1, hl, f) != hl ||
      (p->nbytes && fwrite(data, 1, (size_t)p->nbytes, f) != (size_t)p->nbytes)) {
    err = cj_status_make(CJ_INTERNAL, "interpreter.probe (%s): cannot write %s: %s", st->what, path,
                         strerror(errno));
  }
  if (f && fclose(f) && !err)
    err = cj_status_make(CJ_INTERNAL, "interpreter.probe (%s): cannot write %s: %s", st->what, path,
                         strerror(errno));
  if (!err) {
    char index[4096];
    snprintf(index, sizeof index, "%s/index.csv", p->dir);
    FILE *ix = fopen(index, "a");
    if (!ix || fprintf(ix, "%s,%s,%s\n", p->id, p->type, path) < 0)
      err = cj_status_make(CJ_INTERNAL, "interpreter.probe (%s): cannot append to %s: %s", st->what,
                           index, strerror(errno));
    if (ix && fclose(ix) && !err)
      err = cj_status_make(CJ_INTERNAL, "interpreter.probe (%s): cannot append to %s: %s",
                           st->what, index, strerror(errno));
  }
  pthread_mutex_unlock(&probe_lock);
  return err;
}

/* Finds the `iteration`-th line of DIR/index.csv recording probe `id`: copies its type and path. */
static CJ_MUST_USE cj_status find_record(const probe_params *p, const char *what, char *type, size_t tcap,
                             char *path, size_t pcap) {
  char index[4096];
  snprintf(index, sizeof index, "%s/index.csv", p->dir);
  FILE *f = fopen(index, "r");
  if (!f)
    return cj_status_make(CJ_INVALID_ARGUMENT,
                          "check.expect_serialized_eq failed (%s): no probe was recorded (%s: %s)",
                          what, index, strerror(errno));
  char line[8192];
  int64_t seen = 0;
  size_t idlen = strlen(p->id);
  cj_status err = NULL;
  bool found = false;
  while (fgets(line, sizeof line, f)) {
    size_t n = strlen(line);
    while (n && (line[n - 1] == '\n' || line[n - 1] == '\r')) line[--n] = 0;
    /* probe_id,type,path: the id may itself hold commas, the type never does, so split at the
     * last two commas */
    char *c2 = strrchr(line, ',');
    if (!c2) continue;
    *c2 = 0;
    char *c1 = strrchr(line, ',');
    if (!c1) continue;
    *c1 = 0;
    if ((size_t)(c1 - line) != idlen || memcmp(line, p->id, idlen) != 0) continue;
    if (seen++ != p->iteration) continue;
    snprintf(type, tcap, "%s", c1 + 1);
    snprintf(path, pcap, "%s", c2 + 1);
    found = true;
    break;
  }
  fclose(f);
  if (!found)
    err = cj_status_make(CJ_INVALID_ARGUMENT,
                         "check.expect_serialized_eq failed (%s): probe \"%s\" was recorded %" PRId64
                         " times, iteration %" PRId64 " asked",
                         what, p->id, seen, p->iteration);
  return err;
}

/* Reads the data of a .npy file written by k_probe into buf (p->nbytes), checking its header. */
static CJ_MUST_USE cj_status read_npy(const probe_params *p, const char *what, const char *path, char *buf) {
  FILE *f = fopen(path, "rb");
  if (!f)
    return cj_status_make(CJ_INVALID_ARGUMENT, "check.expect_serialized_eq failed (%s): %s: %s",
                          what, path, strerror(errno));
  char want[1024], got[1024];
  size_t hl = npy_header(p, want, sizeof want);
  cj_status err = NULL;
  if (!hl || fread(got, 1, hl, f) != hl || memcmp(got, want, hl) != 0) {
    err = cj_status_make(CJ_INVALID_ARGUMENT,
                         "check.expect_serialized_eq failed (%s): %s does not hold a tensor of "
                         "the expected element type and shape",
                         what, path);
  } else if (p->nbytes && fread(buf, 1, (size_t)p->nbytes, f) != (size_t)p->nbytes) {
    err = cj_status_make(CJ_INVALID_ARGUMENT, "check.expect_serialized_eq failed (%s): %s is short",
                         what, path);
  }
  fclose(f);
  return err;
}

static bool same_elem(cj_dtype dt, const char *a, const char *b, int64_t i) {
  cj_dtype_kind k = cj_dtype_kindof(dt);
  if (k == CJ_DK_FLOAT || k == CJ_DK_COMPLEX) {
    cj_dtype c = k == CJ_DK_COMPLEX ? cj_dtype_component(dt) : dt;
    int parts = k == CJ_DK_COMPLEX ? 2 : 1;
    for (int j = 0; j < parts; j++) {
      double x = cj_elem_get_f64(c, a, (size_t)(i * parts + j));
      double y = cj_elem_get_f64(c, b, (size_t)(i * parts + j));
      if (!(x == y || (isnan(x) && isnan(y)))) return false;
    }
    return true;
  }
  int bytes = cj_dtype_bytes(dt), bits = cj_dtype_bits(dt);
  uint64_t x = 0, y = 0;
  memcpy(&x, a + i * bytes, (size_t)bytes);
  memcpy(&y, b + i * bytes, (size_t)bytes);
  if (bits < 64) {
    x &= (1ull << bits) - 1;
    y &= (1ull << bits) - 1;
  }
  return x == y;
}

static CJ_MUST_USE cj_status k_expect_serialized(cj_exec_ctx *ctx, const cj_step *st) {
  const probe_params *p = st->params;
  char type[1024], path[4096];
  cj_status err = find_record(p, st->what, type, sizeof type, path, sizeof path);
  if (err || !p->has_expected) return err;
  if (strcmp(type, p->type) != 0)
    return cj_status_make(CJ_INVALID_ARGUMENT,
                          "check.expect_serialized_eq failed (%s): probe \"%s\" recorded a %s, "
                          "expected a %s",
                          st->what, p->id, type, p->type);
  /* the recorded tensor is read into the step's scratch buffer (planned at compile time) */
  char *rec = CJ_PTR(ctx, st->out[0]);
  err = read_npy(p, st->what, path, rec);
  if (err) return err;
  const char *e = CJ_PTR(ctx, st->in[0]);
  int64_t n = 1;
  for (int32_t d = 0; d < p->rank; d++) n *= p->dims[d];
  for (int64_t i = 0; i < n; i++)
    if (!same_elem(p->dt, rec, e, i))
      return cj_status_make(CJ_INVALID_ARGUMENT,
                            "check.expect_serialized_eq failed (%s): probe \"%s\" iteration %" PRId64
                            ": element %" PRId64 " of %" PRId64 " differs from the expected value",
                            st->what, p->id, p->iteration, i, n);
  return NULL;
}

static CJ_MUST_USE cj_status probe_setup(cj_lw *L, cj_op *op, const cj_lw_tensor *t, probe_params **out) {
  const char *dir = getenv("CJRT_PROBE_DIR");
  if (!dir || !*dir)
    return cj_op_error(op, CJ_UNIMPLEMENTED,
                       "no probe output directory: set CJRT_PROBE_DIR when compiling (the "
                       "interpreter's --probe-output-dir)");
  const char *id = NULL;
  size_t idlen = 0;
  if (!cj_attr_get_str(cj_op_attr(op, "probe_id"), &id, &idlen))
    return cj_op_error(op, CJ_INVALID_ARGUMENT, "no probe_id");
  if (memchr(id, '\n', idlen) || memchr(id, '\r', idlen))
    return cj_op_error(op, CJ_INVALID_ARGUMENT, "a probe_id cannot span lines");
  probe_params *p = cj_lw_alloc(L, sizeof *p);
  size_t dl = strlen(dir);
  char *d = cj_lw_alloc(L, dl + 1), *i = cj_lw_alloc(L, idlen + 1);
  if (!p || !d || !i) return cj_oom();
  memcpy(d, dir, dl);
  memcpy(i, id, idlen);
  p->dir = d;
  p->id = i;
  if (t) {
    char *ts = NULL;
    size_t tl = 0;
    CJ_RETURN_IF_ERROR(cj_print_type(t->type, &ts, &tl));
    char *tc = cj_lw_alloc(L, tl + 1);
    if (!tc) {
      free(ts);
      return cj_oom();
    }
    memcpy(tc, ts, tl);
    free(ts);
    p->type = tc;
    p->dt = t->dtype;
    p->rank = t->rank;
    int64_t *dims = cj_lw_alloc(L, sizeof(int64_t) * (size_t)(t->rank ? t->rank : 1));
    if (!dims) return cj_oom();
    if (t->rank) memcpy(dims, t->dims, sizeof(int64_t) * (size_t)t->rank);
    p->dims = dims;
    p->nbytes = t->nbytes;
    if (t->rank > CJ_MAX_RANK) return cj_op_error(op, CJ_UNIMPLEMENTED, "probes of rank above %d", CJ_MAX_RANK);
  }
  *out = p;
  return NULL;
}

cj_status cj_lower_probe(cj_lw *L, cj_op *op) {
  cj_lw_tensor x;
  CJ_RETURN_IF_ERROR(cj_lw_operand(L, op, 0, &x));
  if (cj_dtype_kindof(x.dtype) == CJ_DK_TOKEN)
    return cj_op_error(op, CJ_INVALID_ARGUMENT, "probes a tensor, not a token");
  probe_params *p = NULL;
  CJ_RETURN_IF_ERROR(probe_setup(L, op, &x, &p));
  if (!cj_lw_emit(L, op, k_probe, p, 1, &x.buf, 0, NULL)) return cj_oom();
  return cj_lw_alias(L, op, 0, op->operands[0]);
}

cj_status cj_lower_expect_serialized(cj_lw *L, cj_op *op) {
  probe_params *p = NULL;
  int64_t iter = 0;
  cj_op_get_i64(op, "iteration", &iter);
  if (iter < 0) return cj_op_error(op, CJ_INVALID_ARGUMENT, "negative iteration %" PRId64, iter);
  if (op->nopnds == 0) {
    CJ_RETURN_IF_ERROR(probe_setup(L, op, NULL, &p));
    p->iteration = iter;
    if (!cj_lw_emit(L, op, k_expect_serialized, p, 0, NULL, 0, NULL)) return cj_oom();
    return NULL;
  }
  cj_lw_tensor e;
  CJ_RETURN_IF_ERROR(cj_lw_operand(L, op, 0, &e));
  CJ_RETURN_IF_ERROR(probe_setup(L, op, &e, &p));
  p->iteration = iter;
  p->has_expected = true;
  /* a scratch buffer the recorded tensor is read into */
  int32_t tmp = cj_lw_new_buf(L, e.nbytes ? e.nbytes : 1, CJ_BK_ARENA);
  if (tmp < 0) return cj_oom();
  if (!cj_lw_emit(L, op, k_expect_serialized, p, 1, &e.buf, 1, &tmp)) return cj_oom();
  return NULL;
}
