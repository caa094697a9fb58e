/* cjrt reference backend: the reference interpreter's probes (stablehlo/tests/interpret/probe.mlir),
 * with the semantics the CPU backend documents (upstream's interpreter with --probe-output-dir):
 *   %r = interpreter.probe %x, probe_id = "id"
 *       %r is %x; each run writes %x to DIR/probe<N>.npy (N counts every probe write of the
 *       process) and appends `id,<type>,DIR/probe<N>.npy` to DIR/index.csv.
 *   check.expect_serialized_eq %e, probe_id = "id", iteration = K
 *       the K-th line of DIR/index.csv with probe id "id" names a file holding a tensor of %e's
 *       type whose elements equal %e's (expect_eq: NaN matches NaN).
 * DIR is $CJRT_PROBE_DIR when the program is compiled (compile.c keeps it in the program). */
#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reference/ref.h"

static pthread_mutex_t probe_mu = PTHREAD_MUTEX_INITIALIZER;
static atomic_long probe_count;

cj_status cj_rf_check_equal(cj_op *op, const char *name, const rv *a, const rv *e);

static CJ_MUST_USE cj_status type_text(const cj_op *op, const cj_type *t, char *buf, size_t cap) {
  char *s = NULL;
  size_t n = 0;
  CJ_RETURN_IF_ERROR(cj_print_type(t, &s, &n));
  if (n >= cap) {
    free(s);
    return cj_op_error(op, CJ_INVALID_ARGUMENT, "the probed type is too long");
  }
  memcpy(buf, s, n);
  buf[n] = 0;
  free(s);
  return NULL;
}

/* .npy version 1.0; the element bytes as the backend stores them ('|V<bytes>' for formats numpy
 * has no code for) */
static const char *npy_descr(cj_dtype dt, char *buf, size_t cap) {
  switch (dt) {
    case CJ_PRED: return "|b1";
    case CJ_S8: return "|i1";
    case CJ_S16: return "<i2";
    case CJ_S32: return "<i4";
    case CJ_S64: return "<i8";
    case CJ_U8: return "|u1";
    case CJ_U16: return "<u2";
    case CJ_U32: return "<u4";
    case CJ_U64: return "<u8";
    case CJ_F16: return "<f2";
    case CJ_F32: return "<f4";
    case CJ_F64: return "<f8";
    case CJ_C64: return "<c8";
    case CJ_C128: return "<c16";
    default: snprintf(buf, cap, "|V%d", cj_dtype_bytes(dt)); return buf;
  }
}

static CJ_MUST_USE cj_status probe(rf_exec *x, cj_op *op, const rv *v, rv *out) {
  const char *dir = x->prog->probe_dir;
  if (!dir) return cj_op_error(op, CJ_UNIMPLEMENTED, "interpreter.probe needs CJRT_PROBE_DIR at compile time");
  const char *id = NULL;
  size_t idn = 0;
  cj_attr_get_str(cj_op_attr(op, "probe_id"), &id, &idn);
  char ty[512], path[4096], shape[512], descr[16];
  CJ_RETURN_IF_ERROR(type_text(op, op->operands[0]->type, ty, sizeof ty));
  long n = atomic_fetch_add(&probe_count, 1);
  snprintf(path, sizeof path, "%s/probe%ld.npy", dir, n);
  size_t k = 0;
  k += (size_t)snprintf(shape + k, sizeof shape - k, "(");
  for (int32_t d = 0; d < v->rank && k < sizeof shape; d++)
    k += (size_t)snprintf(shape + k, sizeof shape - k, "%" PRId64 "%s", v->dims[d], v->rank == 1 ? "," : d + 1 < v->rank ? ", " : "");
  if (k < sizeof shape) snprintf(shape + k, sizeof shape - k, ")");
  char header[1024];
  int hl = snprintf(header, sizeof header, "{'descr': '%s', 'fortran_order': False, 'shape': %s, }",
                    npy_descr(v->dt, descr, sizeof descr), shape);
  int total = 10 + hl + 1;
  int padded = (total + 63) / 64 * 64;
  FILE *f = fopen(path, "wb");
  if (!f) return cj_op_error(op, CJ_INTERNAL, "interpreter.probe: cannot write %s", path);
  unsigned char pre[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, 0, 0};
  uint16_t hlen = (uint16_t)(padded - 10);
  memcpy(pre + 8, &hlen, 2);
  fwrite(pre, 1, 10, f);
  fwrite(header, 1, (size_t)hl, f);
  for (int i = total - 1; i < padded - 1; i++) fputc(' ', f);
  fputc('\n', f);
  fwrite(v->data, 1, (size_t)v->n * (size_t)v->esize, f);
  bool ok = ferror(f) == 0;
  ok = fclose(f) == 0 && ok;
  if (!ok) return cj_op_error(op, CJ_INTERNAL, "interpreter.probe: cannot write %s", path);
  char ipath[4096];
  snprintf(ipath, sizeof ipath, "%s/index.csv", dir);
  pthread_mutex_lock(&probe_mu);
  f = fopen(ipath, "a");
  if (f) {
    fprintf(f, "%.*s,%s,%s\n", (int)idn, id ? id : "", ty, path);
    fclose(f);
  }
  pthread_mutex_unlock(&probe_mu);
  if (!f) return cj_op_error(op, CJ_INTERNAL, "interpreter.probe: cannot append to %s", ipath);
  memcpy(out->data, v->data, (size_t)v->n * (size_t)v->esize);
  return NULL;
}

static CJ_MUST_USE cj_status expect_serialized(rf_exec *x, cj_op *op, const rv *e) {
  const char *dir = x->prog->probe_dir;
  if (!dir) return cj_op_error(op, CJ_UNIMPLEMENTED, "check.expect_serialized_eq needs CJRT_PROBE_DIR at compile time");
  const char *id = NULL;
  size_t idn = 0;
  cj_attr_get_str(cj_op_attr(op, "probe_id"), &id, &idn);
  int64_t iter = 0;
  cj_op_get_i64(op, "iteration", &iter);
  char ty[512], ipath[4096], line[8192];
  CJ_RETURN_IF_ERROR(type_text(op, op->operands[0]->type, ty, sizeof ty));
  snprintf(ipath, sizeof ipath, "%s/index.csv", dir);
  FILE *f = fopen(ipath, "r");
  if (!f) return cj_op_error(op, CJ_INVALID_ARGUMENT, "check.expect_serialized_eq: no probe index %s", ipath);
  char *file = NULL;
  int64_t seen = 0;
  while (fgets(line, sizeof line, f)) {
    size_t L = strlen(line);
    while (L && (line[L - 1] == '\n' || line[L - 1] == '\r')) line[--L] = 0;
    char *c1 = strchr(line, ','), *c2 = c1 ? strrchr(line, ',') : NULL;
    if (!c1 || c2 == c1) continue;
    if ((size_t)(c1 - line) != idn || memcmp(line, id, idn) != 0) continue;
    if (seen++ != iter) continue;
    *c2 = 0;
    if (strcmp(c1 + 1, ty) != 0) {
      fclose(f);
      return cj_op_error(op, CJ_INVALID_ARGUMENT, "check.expect_serialized_eq: probe %.*s recorded %s, expected %s",
                         (int)idn, id, c1 + 1, ty);
    }
    size_t pl = strlen(c2 + 1);
    file = malloc(pl + 1);
    if (file) memcpy(file, c2 + 1, pl + 1);
    break;
  }
  fclose(f);
  if (!file)
    return cj_op_error(op, CJ_INVALID_ARGUMENT, "check.expect_serialized_eq: probe %.*s has no iteration %" PRId64,
                       (int)idn, id, iter);
  f = fopen(file, "rb");
  unsigned char pre[10];
  cj_status st = NULL;
  rv *got = NULL;
  if (!f || fread(pre, 1, 10, f) != 10 || memcmp(pre, "\x93NUMPY", 6) != 0) {
    st = cj_op_error(op, CJ_INVALID_ARGUMENT, "check.expect_serialized_eq: cannot read %s", file);
  } else {
    uint16_t hlen;
    memcpy(&hlen, pre + 8, 2);
    st = cj_rv_new(e->dt, e->rank, e->dims, &got);
    size_t nb = (size_t)e->n * (size_t)e->esize;
    if (!st && (fseek(f, 10 + hlen, SEEK_SET) != 0 || fread(got->data, 1, nb, f) != nb))
      st = cj_op_error(op, CJ_INVALID_ARGUMENT, "check.expect_serialized_eq: %s is shorter than the value", file);
  }
  if (f) fclose(f);
  free(file);
  if (!st) st = cj_rf_check_equal(op, "check.expect_serialized_eq", got, e);
  cj_rv_free(got);
  return st;
}

/* ---------------------------------------------------------------- ref.def's rows */

cj_status cj_rf_x_probe(rf_exec *x, cj_op *op, rv **ins, rv **outs) { return probe(x, op, ins[0], outs[0]); }
cj_status cj_rf_x_expect_serialized(rf_exec *x, cj_op *op, rv **ins, rv **outs) {
  for (uint32_t k = 0; k < op->nopnds; k++) CJ_RETURN_IF_ERROR(expect_serialized(x, op, ins[k]));
  return NULL;
}
