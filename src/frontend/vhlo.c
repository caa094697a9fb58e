/* cjrt: the VHLO dialect of StableHLO portable artifacts, mapped onto our StableHLO IR.
 *
 * Types and attributes are decoded from their bytecode payloads (codes of VhloBytecode.cpp,
 * ../shared/reference/stablehlo-formats.md section 4.5) into our generic types and attributes:
 * !vhlo.tensor_v1 -> tensor, #vhlo.tensor_v1 -> dense elements, #vhlo.integer_v1 -> integer,
 * enums -> enums, and so on. Ops are then built the way upstream's VHLO -> StableHLO
 * legalization does it, after upgrading older op versions: attributes whose value is the
 * StableHLO default are dropped, dimension numbers are assembled into their structured
 * attributes, channel ids become channel handles, strings naming functions become symbol
 * references, and dimension lists take the kinds the op table declares.
 *
 * Also here, for the dialects that meet VHLO in a file: Shardy (sdy) attributes of mixed
 * artifacts, carried as their text; and the native stablehlo, chlo and quant encodings of plain
 * (non-VHLO) MLIR bytecode.
 */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/grow.h"
#include "frontend/bytecode_internal.h"

/* ======================================================================== the op table */

typedef struct vhlo_op {
  const char *name; /* "add_v1" */
  int min[3], max[3];
  const char *const *attrs;
} vhlo_op;

/* one attribute array per row, named after the row's line in vhlo_ops.h */
#define VCAT2(a, b) a##b
#define VCAT(a, b) VCAT2(a, b)
#define VOP(name, a, b, c, d, e, f, ...) \
  static const char *const VCAT(vop_attrs_, __LINE__)[] = {__VA_ARGS__};
#include "frontend/vhlo_ops.h"
#undef VOP

static const vhlo_op kOps[] = {
#define VOP(name, a, b, c, d, e, f, ...) {name, {a, b, c}, {d, e, f}, VCAT(vop_attrs_, __LINE__)},
#include "frontend/vhlo_ops.h"
#undef VOP
};
enum { kNumOps = (int)(sizeof kOps / sizeof kOps[0]) };

/* What each VHLO op becomes, resolved from its name ("cosine_v2" -> stablehlo.cosine, version
 * 2), and a name -> index table: both built once. */
typedef struct vop_target {
  cj_op_kind kind;
  int8_t version;
  char name[64]; /* "stablehlo.<base>" for ops our table lacks (carried by name) */
} vop_target;
static vop_target targets[kNumOps];

#define VOP_SLOTS 512
static int16_t vop_index[VOP_SLOTS];
static pthread_once_t tables_once = PTHREAD_ONCE_INIT;

static uint32_t name_hash(const char *s, size_t n) {
  uint32_t h = 2166136261u;
  for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)s[i]) * 16777619u;
  return h;
}

static void build_tables(void) {
  for (int i = 0; i < VOP_SLOTS; i++) vop_index[i] = -1;
  for (int k = 0; k < kNumOps; k++) {
    const char *n = kOps[k].name;
    size_t len = strlen(n);
    uint32_t h = name_hash(n, len) & (VOP_SLOTS - 1);
    while (vop_index[h] >= 0) h = (h + 1) & (VOP_SLOTS - 1);
    vop_index[h] = (int16_t)k;

    const char *us = strrchr(n, '_');
    int version = 1;
    size_t base = len;
    if (us && us[1] == 'v') {
      base = (size_t)(us - n);
      version = atoi(us + 2);
    }
    vop_target *t = &targets[k];
    t->kind = CJ_OP_UNKNOWN;
    t->version = (int8_t)version;
    char buf[96];
    if (base == 4 && memcmp(n, "func", 4) == 0) {
      t->kind = CJ_OP_FUNC;
    } else if (base == 4 && memcmp(n, "call", 4) == 0) {
      t->kind = CJ_OP_FUNC_CALL;
    } else if (base + 10 < sizeof buf) {
      memcpy(buf, "stablehlo.", 10);
      memcpy(buf + 10, n, base);
      t->kind = cj_op_kind_from_name(buf, base + 10);
      if (t->kind == CJ_OP_UNKNOWN && base + 10 < sizeof t->name) {
        memcpy(t->name, buf, base + 10);
        t->name[base + 10] = 0;
      }
    }
  }
}

int cj_vhlo_op_lookup(const char *name, size_t len) {
  pthread_once(&tables_once, build_tables);
  for (uint32_t h = name_hash(name, len) & (VOP_SLOTS - 1); vop_index[h] >= 0;
       h = (h + 1) & (VOP_SLOTS - 1)) {
    const char *n = kOps[vop_index[h]].name;
    if (strlen(n) == len && memcmp(n, name, len) == 0) return vop_index[h];
  }
  return -1;
}

const char *const *cj_vhlo_op_attr_names(int vop) { return kOps[vop].attrs; }
const char *cj_vhlo_op_name(int vop) { return kOps[vop].name; }

/* ======================================================================== small helpers */

static const cj_attr *fail_attr(bc_reader *r, bc_cur *c, const char *msg) {
  cj_bc_fail(r, c, "%s", msg);
  return NULL;
}

static const cj_attr *make_struct(bc_reader *r, bc_cur *c, cj_struct_kind sk, const cj_attr **f) {
  const cj_attr *a = cj_attr_struct(r->m, sk, f);
  return a ? a : fail_attr(r, c, "out of memory");
}

/* Fails on a code the dialect does not define ("unknown <what> code N"); NULL to return. */
static void *unknown_code(bc_reader *r, bc_cur *c, const char *what, uint64_t code) {
  cj_bc_fail(r, c, "unknown %s code %llu", what, (unsigned long long)code);
  return NULL;
}

static const cj_type *fail_type(bc_reader *r, bc_cur *c, const char *msg) {
  cj_bc_fail(r, c, "%s", msg);
  return NULL;
}

/* t, or NULL after failing with out-of-memory when making it gave none */
static const cj_type *made_type(bc_reader *r, bc_cur *c, const cj_type *t) {
  return t ? t : fail_type(r, c, "out of memory");
}

/* A growable text buffer for the textual form of attributes we only carry. */
typedef struct sbuf {
  char *s;
  size_t n, cap;
  bool oom;
} sbuf;

static void sb_putn(sbuf *b, const char *s, size_t n) {
  if (b->oom) return;
  if (!cj_grow(&b->s, &b->cap, b->n + n + 1, 64)) {
    b->oom = true;
    return;
  }
  memcpy(b->s + b->n, s, n);
  b->n += n;
  b->s[b->n] = 0;
}
static void sb_puts(sbuf *b, const char *s) { sb_putn(b, s, strlen(s)); }
static void sb_printf(sbuf *b, const char *fmt, long long v) {
  char tmp[64];
  int k = snprintf(tmp, sizeof tmp, fmt, v);
  if (k > 0) sb_putn(b, tmp, (size_t)k);
}
static void sb_quoted(sbuf *b, const char *s, size_t n) {
  sb_puts(b, "\"");
  for (size_t i = 0; i < n; i++) {
    unsigned char ch = (unsigned char)s[i];
    if (ch == '"' || ch == '\\' || ch < 0x20 || ch >= 0x7f) {
      char esc[4];
      snprintf(esc, sizeof esc, "\\%02X", ch);
      sb_putn(b, esc, 3);
    } else {
      sb_putn(b, (const char *)&ch, 1);
    }
  }
  sb_puts(b, "\"");
}

static const cj_attr *sb_opaque(bc_reader *r, bc_cur *c, sbuf *b) {
  if (b->oom) {
    free(b->s);
    return fail_attr(r, c, "out of memory");
  }
  const cj_attr *a = cj_attr_opaque(r->m, b->s ? b->s : "", b->n);
  free(b->s);
  return a ? a : fail_attr(r, c, "out of memory");
}

/* ======================================================================== types */

/* The textual form of a type, for the types we carry as text (buffers, futures): the printer's. */
static void sb_type_text(sbuf *b, const cj_type *t) {
  char *text = NULL;
  size_t n = 0;
  cj_status st = cj_print_type(t, &text, &n);
  if (st) {
    cj_status_ignore(st); /* the printer fails only when out of memory */
    b->oom = true;
  } else {
    sb_putn(b, text, n);
  }
  free(text);
}

/* Reads a type list and writes "!stablehlo.future<T, ...>" of it; false if the list is bad. */
static bool sb_future(bc_reader *r, bc_cur *c, sbuf *b) {
  const cj_type **mem = NULL;
  uint64_t n;
  if (!cj_bc_type_list(r, c, &mem, &n)) return false;
  sb_puts(b, "!stablehlo.future<");
  for (uint64_t i = 0; i < n; i++) {
    if (i) sb_puts(b, ", ");
    sb_type_text(b, mem[i]);
  }
  sb_puts(b, ">");
  free(mem);
  return true;
}

/* The opaque type whose text b holds (b's buffer is freed). */
static const cj_type *sb_opaque_type(bc_reader *r, bc_cur *c, sbuf *b) {
  const cj_type *t = b->oom ? NULL : cj_type_opaque(r->m, b->s, b->n);
  free(b->s);
  return made_type(r, c, t);
}

static const cj_type *elem(bc_reader *r, bc_cur *c, cj_dtype dt) {
  return made_type(r, c, cj_type_elem(r->m, dt));
}

static bool is_elem_type(const cj_type *t) {
  return t && (t->kind == CJ_TYPE_ELEM || t->kind == CJ_TYPE_QUANT || t->kind == CJ_TYPE_OPAQUE);
}

static const cj_type *ranked_tensor(bc_reader *r, bc_cur *c, bool with_encoding) {
  const cj_attr *enc = NULL;
  if (with_encoding && !(enc = cj_bc_attr_ref(r, c))) return NULL;
  int64_t stack[8], *dims;
  uint64_t rank;
  if (!cj_bc_dims(r, c, &dims, &rank, stack, 8)) return NULL;
  const cj_type *e = cj_bc_type_ref(r, c);
  const cj_type *t = NULL;
  if (e && !is_elem_type(e)) {
    cj_bc_fail(r, c, "invalid tensor element type");
  } else if (e) {
    const int64_t *bounds = NULL;
    int64_t bstack[8], *bheap = NULL;
    bool ok = true;
    if (enc && enc->kind == CJ_ATTR_STRUCT && enc->st.sk == CJ_SK_TYPE_EXTENSIONS) {
      const cj_attr *b = enc->st.fields[CJ_SF_TYPE_EXTENSIONS_bounds];
      int64_t *dst = rank <= 8 ? bstack : (bheap = malloc(sizeof(int64_t) * (size_t)rank));
      int64_t nb = 0;
      if (!dst) {
        ok = cj_bc_fail(r, c, "out of memory");
      } else if (!b || !cj_attr_get_i64s(b, dst, (int64_t)rank, &nb) || (uint64_t)nb != rank) {
        ok = cj_bc_fail(r, c, "tensor bounds do not match its rank");
      }
      bounds = dst;
      enc = NULL;
    }
    if (ok) {
      t = cj_type_tensor(r->m, e, (int32_t)rank, dims, bounds, enc);
      if (!t) cj_bc_fail(r, c, "out of memory");
    }
    free(bheap);
  }
  if (dims != stack) free(dims);
  return t;
}

static bool storage_dtype(bc_reader *r, bc_cur *c, const cj_type *st, bool is_signed,
                          cj_dtype *out) {
  if (!st || st->kind != CJ_TYPE_ELEM || !cj_dtype_is_int(st->dtype))
    return cj_bc_fail(r, c, "quantized storage type must be an integer type");
  switch (cj_dtype_bits(st->dtype)) {
    case 2: *out = is_signed ? CJ_S2 : CJ_U2; return true;
    case 4: *out = is_signed ? CJ_S4 : CJ_U4; return true;
    case 8: *out = is_signed ? CJ_S8 : CJ_U8; return true;
    case 16: *out = is_signed ? CJ_S16 : CJ_U16; return true;
    case 32: *out = is_signed ? CJ_S32 : CJ_U32; return true;
    case 64: *out = is_signed ? CJ_S64 : CJ_U64; return true;
    default: return cj_bc_fail(r, c, "unsupported quantized storage width");
  }
}

static double f64_of(uint64_t bits) {
  double d;
  memcpy(&d, &bits, 8);
  return d;
}

/* A result accuracy's payload, the same in VHLO and StableHLO: atol, rtol (f64 bit patterns),
 * ulps, then the mode attribute (`mode_syntax` names it in the message when it is not one). */
static const cj_attr *result_accuracy(bc_reader *r, bc_cur *c, const char *mode_syntax) {
  uint64_t atol, rtol;
  int64_t ulps;
  if (!cj_bc_apint(r, c, 64, &atol) || !cj_bc_apint(r, c, 64, &rtol) || !cj_bc_svarint(r, c, &ulps))
    return NULL;
  const cj_attr *mode = cj_bc_attr_ref(r, c);
  if (!mode) return NULL;
  if (mode->kind != CJ_ATTR_ENUM || mode->en.ek != CJ_EK_RESULT_ACCURACY_MODE) {
    cj_bc_fail(r, c, "result accuracy mode must be a %s", mode_syntax);
    return NULL;
  }
  const cj_type *f64 = cj_type_elem(r->m, CJ_F64);
  const cj_attr *f[CJ_SF_RESULT_ACCURACY__COUNT] = {NULL};
  f[CJ_SF_RESULT_ACCURACY_atol] = cj_attr_float(r->m, f64_of(atol), f64);
  f[CJ_SF_RESULT_ACCURACY_rtol] = cj_attr_float(r->m, f64_of(rtol), f64);
  f[CJ_SF_RESULT_ACCURACY_ulps] = cj_attr_int(r->m, ulps, cj_type_elem(r->m, CJ_S64));
  f[CJ_SF_RESULT_ACCURACY_mode] = mode;
  if (!f[0] || !f[1] || !f[2]) return fail_attr(r, c, "out of memory");
  return make_struct(r, c, CJ_SK_RESULT_ACCURACY, f);
}

static const cj_type *quant_type(bc_reader *r, bc_cur *c, bool per_axis) {
  uint64_t flags, qdim = 0;
  int64_t smin, smax;
  cj_quant q;
  memset(&q, 0, sizeof q);
  if (!cj_bc_varint(r, c, &flags)) return NULL;
  const cj_type *st = cj_bc_type_ref(r, c);
  const cj_type *ex = st ? cj_bc_type_ref(r, c) : NULL;
  if (!ex) return NULL;
  if (!storage_dtype(r, c, st, flags & 1, &q.storage)) return NULL;
  if (ex->kind != CJ_TYPE_ELEM || !cj_dtype_is_float(ex->dtype))
    return fail_type(r, c, "quantized expressed type must be a float type");
  q.expressed = ex->dtype;
  double scale_stack[8], *scales = scale_stack;
  int64_t zp_stack[8], *zps = zp_stack;
  const cj_type *t = NULL;
  if (!per_axis) {
    uint64_t sbits;
    int64_t zp;
    if (!cj_bc_apint(r, c, 64, &sbits) || !cj_bc_svarint(r, c, &zp) || !cj_bc_svarint(r, c, &smin) ||
        !cj_bc_svarint(r, c, &smax))
      return NULL;
    scales[0] = f64_of(sbits);
    zps[0] = zp;
    q.nscales = 1;
    q.axis = -1;
  } else {
    uint64_t ns, nz;
    if (!cj_bc_varint(r, c, &qdim) || !cj_bc_svarint(r, c, &smin) || !cj_bc_svarint(r, c, &smax) ||
        !cj_bc_count(r, c, &ns))
      return NULL;
    if (qdim > 0x7fffffff) return fail_type(r, c, "invalid quantized dimension");
    if (ns > 8 && !(scales = malloc(sizeof(double) * ns))) return fail_type(r, c, "out of memory");
    for (uint64_t i = 0; i < ns; i++) {
      uint64_t bits;
      if (!cj_bc_apint(r, c, 64, &bits)) goto done;
      scales[i] = f64_of(bits);
    }
    if (!cj_bc_count(r, c, &nz)) goto done;
    if (nz != ns) {
      cj_bc_fail(r, c, "per-axis quantized type has %llu scales and %llu zero points",
              (unsigned long long)ns, (unsigned long long)nz);
      goto done;
    }
    if (nz > 8 && !(zps = malloc(sizeof(int64_t) * nz))) {
      cj_bc_fail(r, c, "out of memory");
      goto done;
    }
    for (uint64_t i = 0; i < nz; i++)
      if (!cj_bc_svarint(r, c, &zps[i])) goto done;
    q.nscales = (int32_t)ns;
    q.axis = (int32_t)qdim;
  }
  q.storage_min = smin;
  q.storage_max = smax;
  q.scales = scales;
  q.zero_points = zps;
  t = cj_type_quant(r->m, &q);
  if (!t) cj_bc_fail(r, c, "out of memory");
done:
  if (scales != scale_stack) free(scales);
  if (zps != zp_stack) free(zps);
  return t;
}

const cj_type *cj_vhlo_read_type(bc_reader *r, bc_cur *c) {
  uint64_t code;
  if (!cj_bc_varint(r, c, &code)) return NULL;
  cj_module *m = r->m;
  switch (code) {
    case 0: return elem(r, c, CJ_PRED);
    case 1: { /* complex */
      const cj_type *e = cj_bc_type_ref(r, c);
      if (!e) return NULL;
      if (e->kind == CJ_TYPE_ELEM && e->dtype == CJ_F32) return elem(r, c, CJ_C64);
      if (e->kind == CJ_TYPE_ELEM && e->dtype == CJ_F64) return elem(r, c, CJ_C128);
      return fail_type(r, c, "unsupported complex element type");
    }
    case 2: return elem(r, c, CJ_BF16);
    case 3: return elem(r, c, CJ_F16);
    case 4: return elem(r, c, CJ_F32);
    case 5: return elem(r, c, CJ_F64);
    case 6: return elem(r, c, CJ_F8E4M3FN);
    case 7: return elem(r, c, CJ_F8E5M2);
    case 8: return cj_bc_function_type(r, c); /* function */
    case 9: return elem(r, c, CJ_INDEX);
    case 10: return elem(r, c, CJ_S4);
    case 11: return elem(r, c, CJ_S8);
    case 12: return elem(r, c, CJ_S16);
    case 13: return elem(r, c, CJ_S32);
    case 14: return elem(r, c, CJ_S64);
    case 15: return elem(r, c, CJ_U4);
    case 16: return elem(r, c, CJ_U8);
    case 17: return elem(r, c, CJ_U16);
    case 18: return elem(r, c, CJ_U32);
    case 19: return elem(r, c, CJ_U64);
    case 20: return ranked_tensor(r, c, false);
    case 21: return ranked_tensor(r, c, true);
    case 22: return made_type(r, c, cj_type_token(m));
    case 23: return cj_bc_tuple_type(r, c); /* tuple */
    case 24: return quant_type(r, c, false);
    case 25: { /* unranked tensor */
      const cj_type *e = cj_bc_type_ref(r, c);
      if (!e) return NULL;
      if (!is_elem_type(e)) return fail_type(r, c, "invalid tensor element type");
      return made_type(r, c, cj_type_unranked(m, e));
    }
    case 26: return made_type(r, c, cj_type_opaque(m, "!shape.witness", 14));
    case 27: return elem(r, c, CJ_F8E4M3FNUZ);
    case 28: return elem(r, c, CJ_F8E5M2FNUZ);
    case 29: return elem(r, c, CJ_F8E4M3B11FNUZ);
    case 30: return quant_type(r, c, true);
    case 31: return elem(r, c, CJ_S2);
    case 32: return elem(r, c, CJ_U2);
    case 33: return made_type(r, c, cj_type_none(m));
    case 34: return elem(r, c, CJ_TF32);
    case 35: return elem(r, c, CJ_F8E4M3);
    case 36: return elem(r, c, CJ_F8E3M4);
    case 37: return elem(r, c, CJ_F4E2M1FN);
    case 38: return elem(r, c, CJ_F6E2M3FN);
    case 39: return elem(r, c, CJ_F6E3M2FN);
    case 40: return elem(r, c, CJ_F8E8M0FNU);
    case 41:   /* ranked buffer: memref<...> */
    case 42: { /* future: !stablehlo.future<...> */
      sbuf b = {0};
      if (code == 41) {
        int64_t stack[8], *dims;
        uint64_t rank;
        if (!cj_bc_dims(r, c, &dims, &rank, stack, 8)) return NULL;
        const cj_type *e = cj_bc_type_ref(r, c);
        if (e) {
          sb_puts(&b, "memref<");
          for (uint64_t i = 0; i < rank; i++) {
            if (dims[i] == CJ_DYN)
              sb_puts(&b, "?x");
            else
              sb_printf(&b, "%lldx", (long long)dims[i]);
          }
          sb_type_text(&b, e);
          sb_puts(&b, ">");
        }
        if (dims != stack) free(dims);
        if (!e) {
          free(b.s);
          return NULL;
        }
      } else if (!sb_future(r, c, &b)) {
        return NULL;
      }
      return sb_opaque_type(r, c, &b);
    }
    default: break;
  }
  return unknown_code(r, c, "VHLO type", code);
}

/* ======================================================================== attributes */

static const cj_attr *enum_attr(bc_reader *r, bc_cur *c, cj_enum_kind ek) {
  uint64_t v;
  if (!cj_bc_varint(r, c, &v)) return NULL;
  if (v > 0x7fffffff || !cj_enum_case_name(ek, (int32_t)v)) {
    cj_bc_fail(r, c, "invalid #vhlo<%s> value %llu", cj_enum_keyword(ek), (unsigned long long)v);
    return NULL;
  }
  const cj_attr *a = cj_attr_enum(r->m, ek, (int32_t)v);
  return a ? a : fail_attr(r, c, "out of memory");
}

static const cj_attr *svarint_list(bc_reader *r, bc_cur *c) {
  uint64_t n;
  if (!cj_bc_count(r, c, &n)) return NULL;
  int64_t stack[16], *v = n <= 16 ? stack : malloc(sizeof(int64_t) * n);
  if (!v) return fail_attr(r, c, "out of memory");
  for (uint64_t i = 0; i < n; i++)
    if (!cj_bc_svarint(r, c, &v[i])) {
      if (v != stack) free(v);
      return NULL;
    }
  const cj_attr *a = cj_attr_i64_array(r->m, (int64_t)n, v);
  if (v != stack) free(v);
  return a ? a : fail_attr(r, c, "out of memory");
}

static const cj_attr *attr_list(bc_reader *r, bc_cur *c) {
  uint64_t n;
  if (!cj_bc_count(r, c, &n)) return NULL;
  const cj_attr **items = malloc(sizeof(cj_attr *) * (size_t)(n ? n : 1));
  if (!items) return fail_attr(r, c, "out of memory");
  for (uint64_t i = 0; i < n; i++)
    if (!(items[i] = cj_bc_attr_ref(r, c))) {
      free(items);
      return NULL;
    }
  const cj_attr *a = cj_attr_array(r->m, (int32_t)n, items);
  free(items);
  return a ? a : fail_attr(r, c, "out of memory");
}

static const cj_attr *vstring(bc_reader *r, bc_cur *c) {
  const cj_attr *a = cj_bc_attr_ref(r, c);
  if (a && a->kind != CJ_ATTR_STRING) return fail_attr(r, c, "expected a #vhlo.string_v1");
  return a;
}

/* Textual forms of the StableHLO mesh attributes (carried, not interpreted). */
static void sb_attr_text(sbuf *b, const cj_attr *a, bool stripped) {
  if (a->kind == CJ_ATTR_OPAQUE) {
    const char *t = a->opaque.text;
    size_t n = a->opaque.len;
    if (stripped) { /* drop "#stablehlo.<mnemonic>" */
      const char *p = memchr(t, '<', n);
      const char *q = memchr(t, '(', n);
      if (q && (!p || q < p)) p = q;
      if (p) {
        n -= (size_t)(p - t);
        t = p;
      }
    }
    sb_putn(b, t, n);
  } else if (a->kind == CJ_ATTR_STRING) {
    sb_quoted(b, a->str.s, a->str.len);
  } else if (a->kind == CJ_ATTR_SYMREF) {
    sb_puts(b, "@");
    sb_puts(b, a->sym.root);
  } else if (a->kind == CJ_ATTR_ARRAY) {
    sb_puts(b, "[");
    for (int32_t i = 0; i < a->arr.n; i++) {
      if (i) sb_puts(b, ", ");
      sb_attr_text(b, a->arr.items[i], false);
    }
    sb_puts(b, "]");
  } else if (a->kind == CJ_ATTR_DENSE && a->dense.type && a->dense.type->kind == CJ_TYPE_TENSOR) {
    const cj_type *t = a->dense.type;
    int64_t n = cj_dense_num_elements(a);
    sb_puts(b, "dense<");
    if (a->dense.splat) {
      sb_printf(b, "%lld", (long long)cj_dense_get_i64(a, 0));
    } else {
      sb_puts(b, "[");
      for (int64_t i = 0; i < n; i++) {
        if (i) sb_puts(b, ", ");
        sb_printf(b, "%lld", (long long)cj_dense_get_i64(a, i));
      }
      sb_puts(b, "]");
    }
    sb_puts(b, "> : tensor<");
    for (int32_t i = 0; i < t->rank; i++) sb_printf(b, "%lldx", (long long)t->dims[i]);
    const char *en = cj_dtype_get(t->dtype)->mlir;
    sb_puts(b, en ? en : "?");
    sb_puts(b, ">");
  } else {
    sb_puts(b, "<?>");
  }
}

/* "#stablehlo.mesh<axes=[...]>", with ", device_ids=..." when ids is not NULL */
static void sb_mesh(sbuf *b, const cj_attr *axes, const cj_attr *ids) {
  sb_puts(b, "#stablehlo.mesh<axes=[");
  for (int32_t i = 0; i < axes->arr.n; i++) {
    if (i) sb_puts(b, ", ");
    sb_attr_text(b, axes->arr.items[i], true);
  }
  sb_puts(b, "]");
  if (ids) {
    sb_puts(b, ", device_ids=");
    sb_attr_text(b, ids, false);
  }
  sb_puts(b, ">");
}

static const cj_attr *mesh_attr(bc_reader *r, bc_cur *c, uint64_t code) {
  sbuf b = {0};
  switch (code) {
    case 21: { /* SubAxisInfo: pre_size, size */
      int64_t pre, size;
      if (!cj_bc_svarint(r, c, &pre) || !cj_bc_svarint(r, c, &size)) return NULL;
      sb_printf(&b, "#stablehlo.sub_axis_info(%lld)", (long long)pre);
      sb_printf(&b, "%lld", (long long)size);
      break;
    }
    case 22: { /* AxisRef: name, has sub-axis, [sub-axis] */
      const cj_attr *name = vstring(r, c);
      uint64_t has;
      const cj_attr *sub = NULL;
      if (!name || !cj_bc_varint(r, c, &has)) return NULL;
      if (has && !(sub = cj_bc_attr_ref(r, c))) return NULL;
      sb_puts(&b, "#stablehlo.axis_ref<name = ");
      sb_quoted(&b, name->str.s, name->str.len);
      if (sub) {
        sb_puts(&b, ", sub_axis_info = ");
        sb_attr_text(&b, sub, true);
      }
      sb_puts(&b, ">");
      break;
    }
    case 23: { /* ReplicaGroupMeshAxes: mesh (a string naming it, or a mesh), axes */
      const cj_attr *mesh = cj_bc_attr_ref(r, c);
      const cj_attr *axes = mesh ? cj_bc_attr_ref(r, c) : NULL;
      if (!axes) return NULL;
      sb_puts(&b, "#stablehlo.replica_group_mesh_axes<mesh = ");
      if (mesh->kind == CJ_ATTR_STRING) {
        sb_puts(&b, "@");
        sb_putn(&b, mesh->str.s, mesh->str.len);
      } else {
        sb_attr_text(&b, mesh, false);
      }
      sb_puts(&b, ", axes = ");
      sb_attr_text(&b, axes, false);
      sb_puts(&b, ">");
      break;
    }
    case 24: { /* MeshAxis: name, size */
      const cj_attr *name = vstring(r, c);
      int64_t size;
      if (!name || !cj_bc_svarint(r, c, &size)) return NULL;
      sb_puts(&b, "#stablehlo.mesh_axis<name = ");
      sb_quoted(&b, name->str.s, name->str.len);
      sb_printf(&b, ", size = %lld>", (long long)size);
      break;
    }
    case 25: { /* Mesh: axes, optional device ids */
      const cj_attr *axes = cj_bc_attr_ref(r, c);
      const cj_attr *ids = NULL;
      if (!axes || !cj_bc_opt_attr_ref(r, c, &ids)) return NULL;
      if (axes->kind != CJ_ATTR_ARRAY) return fail_attr(r, c, "mesh axes must be an array");
      sb_mesh(&b, axes, ids);
      break;
    }
  }
  return sb_opaque(r, c, &b);
}

const cj_attr *cj_vhlo_read_attr(bc_reader *r, bc_cur *c) {
  uint64_t code;
  if (!cj_bc_varint(r, c, &code)) return NULL;
  cj_module *m = r->m;
  switch (code) {
    case 1: return attr_list(r, c);
    case 2: { /* boolean */
      uint64_t v;
      if (!cj_bc_varint(r, c, &v)) return NULL;
      if (v > 1) return fail_attr(r, c, "invalid #vhlo.bool_v1 value");
      const cj_attr *a = cj_attr_bool(m, v == 1);
      return a ? a : fail_attr(r, c, "out of memory");
    }
    case 3: return enum_attr(r, c, CJ_EK_COMPARISON_DIRECTION);
    case 4: return enum_attr(r, c, CJ_EK_COMPARISON_TYPE);
    case 5: return enum_attr(r, c, CJ_EK_CUSTOM_CALL_API_VERSION);
    case 6: return cj_bc_dict_attr(r, c, vstring); /* dictionary of (string attribute, attribute) */
    case 7: return enum_attr(r, c, CJ_EK_FFT_TYPE);
    case 8: { /* float: type, APFloat */
      const cj_type *t = cj_bc_type_ref(r, c);
      if (!t) return NULL;
      if (t->kind != CJ_TYPE_ELEM || !cj_dtype_is_float(t->dtype))
        return fail_attr(r, c, "#vhlo.float_v1 of a non-float type");
      uint64_t bits;
      if (!cj_bc_apint(r, c, (unsigned)cj_dtype_bits(t->dtype), &bits)) return NULL;
      double v;
      if (t->dtype == CJ_TF32) {
        uint32_t f = (uint32_t)(bits & 0x7ffff) << 13;
        float fv;
        memcpy(&fv, &f, 4);
        v = fv;
      } else {
        v = cj_float_decode(t->dtype, bits);
      }
      const cj_attr *a = cj_attr_float(m, v, t);
      return a ? a : fail_attr(r, c, "out of memory");
    }
    case 9: { /* integer: type, APInt */
      const cj_type *t = cj_bc_type_ref(r, c);
      if (!t) return NULL;
      if (t->kind != CJ_TYPE_ELEM || !cj_dtype_is_int(t->dtype))
        return fail_attr(r, c, "#vhlo.integer_v1 of a non-integer type");
      int bits = cj_dtype_bits(t->dtype);
      uint64_t raw;
      if (!cj_bc_apint(r, c, (unsigned)bits, &raw)) return NULL;
      if (bits < 64) {
        uint64_t mask = (1ull << bits) - 1;
        raw &= mask;
        if (cj_dtype_kindof(t->dtype) == CJ_DK_SINT && ((raw >> (bits - 1)) & 1)) raw |= ~mask;
      }
      const cj_attr *a = cj_attr_int(m, (int64_t)raw, t);
      return a ? a : fail_attr(r, c, "out of memory");
    }
    case 10: { /* output operand alias */
      const cj_attr *out_idx = svarint_list(r, c);
      int64_t opnd;
      if (!out_idx || !cj_bc_svarint(r, c, &opnd)) return NULL;
      const cj_attr *opnd_idx = svarint_list(r, c);
      if (!opnd_idx) return NULL;
      const cj_attr *f[CJ_SF_OUTPUT_OPERAND_ALIAS__COUNT] = {NULL};
      f[CJ_SF_OUTPUT_OPERAND_ALIAS_output_tuple_indices] = out_idx->darr.n ? out_idx : NULL;
      f[CJ_SF_OUTPUT_OPERAND_ALIAS_operand_index] = cj_attr_int(m, opnd, cj_type_elem(m, CJ_S64));
      f[CJ_SF_OUTPUT_OPERAND_ALIAS_operand_tuple_indices] = opnd_idx->darr.n ? opnd_idx : NULL;
      if (!f[CJ_SF_OUTPUT_OPERAND_ALIAS_operand_index]) return fail_attr(r, c, "out of memory");
      const cj_attr *a = cj_attr_struct(m, CJ_SK_OUTPUT_OPERAND_ALIAS, f);
      return a ? a : fail_attr(r, c, "out of memory");
    }
    case 11: return enum_attr(r, c, CJ_EK_PRECISION);
    case 12: return enum_attr(r, c, CJ_EK_RNG_ALGORITHM);
    case 13: return enum_attr(r, c, CJ_EK_RNG_DISTRIBUTION);
    case 14: { /* string */
      const char *s;
      size_t n;
      if (!cj_bc_string(r, c, &s, &n)) return NULL;
      const cj_attr *a = cj_attr_string(m, s, n);
      return a ? a : fail_attr(r, c, "out of memory");
    }
    case 15: { /* tensor: type, blob */
      const cj_type *t = cj_bc_type_ref(r, c);
      const uint8_t *d;
      uint64_t len;
      if (!t || !cj_bc_blob(r, c, &d, &len)) return NULL;
      return cj_bc_make_dense(r, c, t, d, len, true);
    }
    case 16: return enum_attr(r, c, CJ_EK_TRANSPOSE);
    case 17: { /* type */
      const cj_type *t = cj_bc_type_ref(r, c);
      if (!t) return NULL;
      const cj_attr *a = cj_attr_type(m, t);
      return a ? a : fail_attr(r, c, "out of memory");
    }
    case 18: { /* type extensions: bounds */
      const cj_attr *b = svarint_list(r, c);
      if (!b) return NULL;
      const cj_attr *f[CJ_SF_TYPE_EXTENSIONS__COUNT] = {b};
      const cj_attr *a = cj_attr_struct(m, CJ_SK_TYPE_EXTENSIONS, f);
      return a ? a : fail_attr(r, c, "out of memory");
    }
    case 19: return enum_attr(r, c, CJ_EK_RESULT_ACCURACY_MODE);
    case 20: return result_accuracy(r, c, "#vhlo<result_accuracy_mode_v1>");
    case 21:
    case 22:
    case 23:
    case 24:
    case 25: return mesh_attr(r, c, code);
    default: break;
  }
  return unknown_code(r, c, "VHLO attribute", code);
}

/* ======================================================================== Shardy (mixed artifacts)
 *
 * Mixed artifacts (StableHLO >= 1.11) keep the sdy dialect next to VHLO. Its attributes have
 * their own bytecode encoding (shardy/dialect/sdy/ir/bytecode.td); we carry them as text, in the
 * form sdy's printer gives them (#sdy.sharding<@mesh, [{"x"}, {}]>, #sdy.mesh<["x"=2]>, ...),
 * which is what the text parser keeps for them too. */

/* The body of an sdy attribute without its "#sdy.mnemonic" / "#sdy<mnemonic ... >" wrapper,
 * as sdy prints nested attributes ("\"x\"=2", "<@mesh, [...]>"). */
static void sb_sdy_stripped(sbuf *b, const cj_attr *a) {
  if (a->kind != CJ_ATTR_OPAQUE) {
    sb_attr_text(b, a, false);
    return;
  }
  const char *t = a->opaque.text, *e = t + a->opaque.len;
  if (e - t > 5 && memcmp(t, "#sdy<", 5) == 0) {
    t += 5;
    e--; /* the closing '>' */
  } else if (e - t > 5 && memcmp(t, "#sdy.", 5) == 0) {
    t += 5;
  }
  while (t < e && ((*t >= 'a' && *t <= 'z') || *t == '_')) t++; /* the mnemonic */
  sb_putn(b, t, (size_t)(e - t));
}

static const cj_attr *sdy_ref(bc_reader *r, bc_cur *c) {
  const cj_attr *a = cj_bc_attr_ref(r, c);
  if (a && a->kind != CJ_ATTR_OPAQUE && a->kind != CJ_ATTR_SYMREF && a->kind != CJ_ATTR_STRING)
    return fail_attr(r, c, "unexpected attribute inside an sdy attribute");
  return a;
}

/* count, then attribute references printed stripped and separated by ", " */
static bool sdy_list(bc_reader *r, bc_cur *c, sbuf *b) {
  uint64_t n;
  if (!cj_bc_count(r, c, &n)) return false;
  for (uint64_t i = 0; i < n; i++) {
    const cj_attr *a = sdy_ref(r, c);
    if (!a) return false;
    if (i) sb_puts(b, ", ");
    sb_sdy_stripped(b, a);
  }
  return true;
}

static bool sdy_ints(bc_reader *r, bc_cur *c, sbuf *b) {
  uint64_t n;
  if (!cj_bc_count(r, c, &n)) return false;
  for (uint64_t i = 0; i < n; i++) {
    int64_t v;
    if (!cj_bc_svarint(r, c, &v)) return false;
    if (i) sb_puts(b, ", ");
    sb_printf(b, "%lld", (long long)v);
  }
  return true;
}

static bool sdy_sharding(bc_reader *r, bc_cur *c, sbuf *b, int version) {
  const cj_attr *mesh = cj_bc_attr_ref(r, c);
  if (!mesh) return false;
  sb_puts(b, "<");
  if (mesh->kind == CJ_ATTR_SYMREF) {
    sb_puts(b, "@");
    sb_puts(b, mesh->sym.root);
  } else if (mesh->kind == CJ_ATTR_OPAQUE) {
    sb_puts(b, "mesh");
    sb_sdy_stripped(b, mesh);
  } else {
    return cj_bc_fail(r, c, "sdy sharding: expected a mesh or a mesh reference");
  }
  sb_puts(b, ", [");
  if (!sdy_list(r, c, b)) return false;
  sb_puts(b, "]");
  sbuf rep = {0}, unred = {0};
  bool ok = sdy_list(r, c, &rep);
  if (ok && version >= 2) ok = sdy_list(r, c, &unred);
  int64_t red = 0;
  if (ok && version >= 3) ok = cj_bc_svarint(r, c, &red);
  if (ok && rep.n) {
    sb_puts(b, ", replicated={");
    sb_putn(b, rep.s, rep.n);
    sb_puts(b, "}");
  }
  if (ok && unred.n) {
    sb_puts(b, ", unreduced=");
    if (red == 1) sb_puts(b, "max"); /* ReductionOp: SUM = 0, MAX = 1, MIN = 2 (assumed order) */
    if (red == 2) sb_puts(b, "min");
    sb_puts(b, "{");
    sb_putn(b, unred.s, unred.n);
    sb_puts(b, "}");
  }
  b->oom |= rep.oom || unred.oom;
  free(rep.s);
  free(unred.s);
  sb_puts(b, ">");
  return ok;
}

const cj_attr *cj_sdy_read_attr(bc_reader *r, bc_cur *c) {
  uint64_t code;
  if (!cj_bc_varint(r, c, &code)) return NULL;
  sbuf b = {0};
  bool ok = true;
  switch (code) {
    case 0:    /* ManualAxes: StringAttr[] */
    case 11: { /* AxisRefList: AxisRef[] */
      sb_puts(&b, code == 0 ? "#sdy<manual_axes{" : "#sdy<axis_ref_list{");
      ok = sdy_list(r, c, &b);
      sb_puts(&b, "}>");
      break;
    }
    case 1: { /* MeshAxis: name, size */
      const char *s;
      size_t n;
      int64_t size;
      if (!cj_bc_string(r, c, &s, &n) || !cj_bc_svarint(r, c, &size)) return NULL;
      sb_puts(&b, "#sdy<mesh_axis");
      sb_quoted(&b, s, n);
      sb_printf(&b, "=%lld>", (long long)size);
      break;
    }
    case 2: { /* Mesh: axes, device ids */
      sb_puts(&b, "#sdy.mesh<[");
      ok = sdy_list(r, c, &b);
      sb_puts(&b, "]");
      sbuf ids = {0};
      if (ok) ok = sdy_ints(r, c, &ids);
      if (ok && ids.n) {
        sb_puts(&b, ", device_ids=[");
        sb_putn(&b, ids.s, ids.n);
        sb_puts(&b, "]");
      }
      b.oom |= ids.oom;
      free(ids.s);
      sb_puts(&b, ">");
      break;
    }
    case 3: { /* SubAxisInfo: pre-size, size */
      int64_t pre, size;
      if (!cj_bc_svarint(r, c, &pre) || !cj_bc_svarint(r, c, &size)) return NULL;
      sb_printf(&b, "#sdy<sub_axis_info(%lld)", (long long)pre);
      sb_printf(&b, "%lld>", (long long)size);
      break;
    }
    case 4: { /* AxisRef: name, optional sub-axis info */
      const char *s;
      size_t n;
      const cj_attr *sub = NULL;
      if (!cj_bc_string(r, c, &s, &n) || !cj_bc_opt_attr_ref(r, c, &sub)) {
        if (!bc_ok(r)) return NULL;
      }
      sb_puts(&b, "#sdy<axis_ref");
      sb_quoted(&b, s, n);
      if (sub) {
        sb_puts(&b, ":");
        sb_sdy_stripped(&b, sub);
      }
      sb_puts(&b, ">");
      break;
    }
    case 5: { /* DimensionSharding: axes, is_closed, optional priority */
      sbuf axes = {0};
      uint8_t closed = 0;
      uint64_t prio = 0;
      ok = sdy_list(r, c, &axes) && cj_bc_byte(r, c, &closed) && cj_bc_varint(r, c, &prio);
      sb_puts(&b, "#sdy<dimension_sharding{");
      sb_putn(&b, axes.s ? axes.s : "", axes.n);
      if (!closed) sb_puts(&b, axes.n ? ", ?" : "?");
      sb_puts(&b, "}");
      if (prio & 1) sb_printf(&b, "p%lld", (long long)(prio >> 1));
      sb_puts(&b, ">");
      b.oom |= axes.oom;
      free(axes.s);
      break;
    }
    case 6:    /* TensorSharding v1 */
    case 15:   /* v2: + unreduced axes */
    case 17: { /* v3: + reduction op */
      sb_puts(&b, "#sdy.sharding");
      ok = sdy_sharding(r, c, &b, code == 6 ? 1 : code == 15 ? 2 : 3);
      break;
    }
    case 7:    /* TensorShardingPerValue v1 */
    case 16: { /* v2 */
      sb_puts(&b, "#sdy.sharding_per_value<[");
      ok = sdy_list(r, c, &b);
      sb_puts(&b, "]>");
      break;
    }
    case 8: { /* DimMapping: factor indices */
      sb_puts(&b, "#sdy<dim_mapping[");
      ok = sdy_ints(r, c, &b);
      sb_puts(&b, "]>");
      break;
    }
    case 9: { /* TensorMapping: dim mappings */
      sb_puts(&b, "#sdy<tensor_mapping[");
      ok = sdy_list(r, c, &b);
      sb_puts(&b, "]>");
      break;
    }
    case 10: { /* OpShardingRule (carried, not used): factor sizes, operand and result mappings,
                * reduction / need-replication / permutation / blocked factors, is_custom */
      static const char *const part[] = {"factor_sizes", "operands", "results", "reduction",
                                         "need_replication", "permutation", "blocked"};
      sb_puts(&b, "#sdy.op_sharding_rule<");
      for (int k = 0; ok && k < 7; k++) {
        if (k) sb_puts(&b, ", ");
        sb_puts(&b, part[k]);
        sb_puts(&b, "=[");
        ok = k == 1 || k == 2 ? sdy_list(r, c, &b) : sdy_ints(r, c, &b);
        sb_puts(&b, "]");
      }
      uint8_t custom = 0;
      if (ok) ok = cj_bc_byte(r, c, &custom);
      if (ok && custom) sb_puts(&b, ", custom");
      sb_puts(&b, ">");
      break;
    }
    case 12: { /* ListOfAxisRefLists */
      sb_puts(&b, "#sdy<list_of_axis_ref_lists[");
      ok = sdy_list(r, c, &b);
      sb_puts(&b, "]>");
      break;
    }
    default:
      free(b.s);
      cj_bc_fail(r, c, "unsupported sdy attribute (code %llu)", (unsigned long long)code);
      return NULL;
  }
  if (!ok) {
    free(b.s);
    return NULL;
  }
  return sb_opaque(r, c, &b);
}

/* ======================================================================== native stablehlo / chlo
 *
 * Plain (non-VHLO) MLIR bytecode of the stablehlo and chlo dialects uses these dialects' own
 * encodings (StablehloBytecode.cpp, ChloBytecode.cpp). */

static const cj_attr *i64_attr(bc_reader *r, bc_cur *c, int64_t v) {
  const cj_attr *a = cj_attr_int(r->m, v, cj_type_elem(r->m, CJ_S64));
  return a ? a : fail_attr(r, c, "out of memory");
}

static bool svint_field(bc_reader *r, bc_cur *c, const cj_attr **out) {
  int64_t v;
  if (!cj_bc_svarint(r, c, &v)) return false;
  return (*out = i64_attr(r, c, v)) != NULL;
}

/* a list of svarints as array<i64: ...>; NULL when empty unless keep_empty */
static bool svlist_field(bc_reader *r, bc_cur *c, const cj_attr **out, bool keep_empty) {
  const cj_attr *a = svarint_list(r, c);
  if (!a) return false;
  *out = a->darr.n || keep_empty ? a : NULL;
  return true;
}

static bool read_bool_byte(bc_reader *r, bc_cur *c, bool *out) {
  uint8_t b;
  if (!cj_bc_byte(r, c, &b)) return false;
  *out = b != 0;
  return true;
}

const cj_attr *cj_stablehlo_read_attr(bc_reader *r, bc_cur *c) {
  uint64_t code;
  if (!cj_bc_varint(r, c, &code)) return NULL;
  switch (code) {
    case 1: { /* channel handle: handle, type */
      const cj_attr *f[CJ_SF_CHANNEL_HANDLE__COUNT];
      if (!svint_field(r, c, &f[0]) || !svint_field(r, c, &f[1])) return NULL;
      return make_struct(r, c, CJ_SK_CHANNEL_HANDLE, f);
    }
    case 2: return enum_attr(r, c, CJ_EK_COMPARISON_DIRECTION);
    case 3: return enum_attr(r, c, CJ_EK_COMPARISON_TYPE);
    case 4: { /* convolution dimension numbers */
      const cj_attr *f[CJ_SF_CONV__COUNT];
      if (!svint_field(r, c, &f[CJ_SF_CONV_input_batch_dimension]) ||
          !svint_field(r, c, &f[CJ_SF_CONV_input_feature_dimension]) ||
          !svlist_field(r, c, &f[CJ_SF_CONV_input_spatial_dimensions], true) ||
          !svint_field(r, c, &f[CJ_SF_CONV_kernel_input_feature_dimension]) ||
          !svint_field(r, c, &f[CJ_SF_CONV_kernel_output_feature_dimension]) ||
          !svlist_field(r, c, &f[CJ_SF_CONV_kernel_spatial_dimensions], true) ||
          !svint_field(r, c, &f[CJ_SF_CONV_output_batch_dimension]) ||
          !svint_field(r, c, &f[CJ_SF_CONV_output_feature_dimension]) ||
          !svlist_field(r, c, &f[CJ_SF_CONV_output_spatial_dimensions], true))
        return NULL;
      return make_struct(r, c, CJ_SK_CONV, f);
    }
    case 5: { /* dot dimension numbers */
      const cj_attr *f[CJ_SF_DOT__COUNT];
      for (int i = 0; i < CJ_SF_DOT__COUNT; i++)
        if (!svlist_field(r, c, &f[i], false)) return NULL;
      return make_struct(r, c, CJ_SK_DOT, f);
    }
    case 6: return enum_attr(r, c, CJ_EK_FFT_TYPE);
    case 7:                /* gather dimension numbers */
    case 11: {             /* scatter dimension numbers (the same layout) */
      const cj_attr *f[6]; /* both structs have 5 lists and index_vector_dim */
      for (int i = 0; i < 5; i++)
        if (!svlist_field(r, c, &f[i], false)) return NULL;
      if (!svint_field(r, c, &f[5])) return NULL;
      return make_struct(r, c, code == 7 ? CJ_SK_GATHER : CJ_SK_SCATTER, f);
    }
    case 8: return enum_attr(r, c, CJ_EK_PRECISION);
    case 9: return enum_attr(r, c, CJ_EK_RNG_ALGORITHM);
    case 10: return enum_attr(r, c, CJ_EK_RNG_DISTRIBUTION);
    case 12: return enum_attr(r, c, CJ_EK_TRANSPOSE);
    case 13: { /* type extensions (bounds) */
      const cj_attr *f[CJ_SF_TYPE_EXTENSIONS__COUNT];
      if (!svlist_field(r, c, &f[0], true)) return NULL;
      return make_struct(r, c, CJ_SK_TYPE_EXTENSIONS, f);
    }
    case 14: { /* output operand alias */
      const cj_attr *f[CJ_SF_OUTPUT_OPERAND_ALIAS__COUNT];
      if (!svlist_field(r, c, &f[CJ_SF_OUTPUT_OPERAND_ALIAS_output_tuple_indices], false) ||
          !svint_field(r, c, &f[CJ_SF_OUTPUT_OPERAND_ALIAS_operand_index]) ||
          !svlist_field(r, c, &f[CJ_SF_OUTPUT_OPERAND_ALIAS_operand_tuple_indices], false))
        return NULL;
      return make_struct(r, c, CJ_SK_OUTPUT_OPERAND_ALIAS, f);
    }
    case 15: { /* dot algorithm: 3 types, 3 svarints, a bool */
      const cj_attr *f[CJ_SF_DOT_ALGORITHM__COUNT];
      for (int i = 0; i < 3; i++) {
        const cj_type *t = cj_bc_type_ref(r, c);
        if (!t) return NULL;
        if (!(f[i] = cj_attr_type(r->m, t))) return fail_attr(r, c, "out of memory");
      }
      for (int i = 3; i < 6; i++)
        if (!svint_field(r, c, &f[i])) return NULL;
      bool allow;
      if (!read_bool_byte(r, c, &allow)) return NULL;
      if (!(f[6] = cj_attr_bool(r->m, allow))) return fail_attr(r, c, "out of memory");
      return make_struct(r, c, CJ_SK_DOT_ALGORITHM, f);
    }
    case 16: return enum_attr(r, c, CJ_EK_RESULT_ACCURACY_MODE);
    case 17: return result_accuracy(r, c, "#stablehlo<result_accuracy_mode>");
    case 18: { /* replica group mesh axes: mesh, axes */
      const cj_attr *mesh = cj_bc_attr_ref(r, c);
      if (!mesh) return NULL;
      uint64_t n;
      if (!cj_bc_count(r, c, &n)) return NULL;
      sbuf b = {0};
      sb_puts(&b, "#stablehlo.replica_group_mesh_axes<mesh = ");
      sb_attr_text(&b, mesh, false);
      sb_puts(&b, ", axes = [");
      for (uint64_t i = 0; i < n; i++) {
        const cj_attr *ax = cj_bc_attr_ref(r, c);
        if (!ax) {
          free(b.s);
          return NULL;
        }
        if (i) sb_puts(&b, ", ");
        sb_attr_text(&b, ax, false);
      }
      sb_puts(&b, "]>");
      return sb_opaque(r, c, &b);
    }
    case 19: { /* sub-axis info */
      int64_t pre, size;
      if (!cj_bc_svarint(r, c, &pre) || !cj_bc_svarint(r, c, &size)) return NULL;
      sbuf b = {0};
      sb_printf(&b, "#stablehlo.sub_axis_info(%lld)", (long long)pre);
      sb_printf(&b, "%lld", (long long)size);
      return sb_opaque(r, c, &b);
    }
    case 20: { /* axis ref: name, has sub-axis, [sub-axis] */
      const char *s;
      size_t n;
      bool has;
      const cj_attr *sub = NULL;
      if (!cj_bc_string(r, c, &s, &n) || !read_bool_byte(r, c, &has)) return NULL;
      if (has && !(sub = cj_bc_attr_ref(r, c))) return NULL;
      sbuf b = {0};
      sb_puts(&b, "#stablehlo.axis_ref<name = ");
      sb_quoted(&b, s, n);
      if (sub) {
        sb_puts(&b, ", sub_axis_info = ");
        sb_attr_text(&b, sub, true);
      }
      sb_puts(&b, ">");
      return sb_opaque(r, c, &b);
    }
    case 21: { /* mesh axis: name, size */
      const char *s;
      size_t n;
      int64_t size;
      if (!cj_bc_string(r, c, &s, &n) || !cj_bc_svarint(r, c, &size)) return NULL;
      sbuf b = {0};
      sb_puts(&b, "#stablehlo.mesh_axis<name = ");
      sb_quoted(&b, s, n);
      sb_printf(&b, ", size = %lld>", (long long)size);
      return sb_opaque(r, c, &b);
    }
    case 22: { /* mesh: axes (an array), has device ids, [device ids] */
      const cj_attr *axes = cj_bc_attr_ref(r, c);
      bool has;
      const cj_attr *ids = NULL;
      if (!axes || !read_bool_byte(r, c, &has)) return NULL;
      if (has && !(ids = cj_bc_attr_ref(r, c))) return NULL;
      if (axes->kind != CJ_ATTR_ARRAY) return fail_attr(r, c, "mesh axes must be an array");
      sbuf b = {0};
      sb_mesh(&b, axes, ids);
      return sb_opaque(r, c, &b);
    }
    default: break;
  }
  return unknown_code(r, c, "stablehlo attribute", code);
}

const cj_type *cj_stablehlo_read_type(bc_reader *r, bc_cur *c) {
  uint64_t code;
  if (!cj_bc_varint(r, c, &code)) return NULL;
  if (code == 0) return made_type(r, c, cj_type_token(r->m));
  if (code == 1) { /* future */
    sbuf b = {0};
    return sb_future(r, c, &b) ? sb_opaque_type(r, c, &b) : NULL;
  }
  return unknown_code(r, c, "stablehlo type", code);
}

/* The quant dialect's types (QuantDialectBytecode.td): 4 uniform, 5 uniform per axis, with the
 * payloads of VHLO's quantized types. */
const cj_type *cj_quant_read_type(bc_reader *r, bc_cur *c) {
  uint64_t code;
  if (!cj_bc_varint(r, c, &code)) return NULL;
  if (code == 4) return quant_type(r, c, false);
  if (code == 5) return quant_type(r, c, true);
  cj_bc_fail(r, c, "unsupported quant type (code %llu)", (unsigned long long)code);
  return NULL;
}

const cj_attr *cj_chlo_read_attr(bc_reader *r, bc_cur *c) {
  uint64_t code;
  if (!cj_bc_varint(r, c, &code)) return NULL;
  if (code == 0) return enum_attr(r, c, CJ_EK_CHLO_COMPARISON_DIRECTION);
  if (code == 1) return enum_attr(r, c, CJ_EK_CHLO_COMPARISON_TYPE);
  return unknown_code(r, c, "chlo attribute", code);
}

/* ======================================================================== ops */

/* The op's attributes while they are converted. */
typedef struct alist {
  cj_named_attr *a;
  uint32_t n, cap;
  cj_module *m;
  bool oom;
  bool on_stack; /* a is the caller's buffer: grow into the heap */
} alist;

static int find(const alist *l, const char *name) {
  for (uint32_t i = 0; i < l->n; i++)
    if (strcmp(l->a[i].name, name) == 0) return (int)i;
  return -1;
}
static const cj_attr *peek(const alist *l, const char *name) {
  int i = find(l, name);
  return i < 0 ? NULL : l->a[i].value;
}
static void drop(alist *l, const char *name) {
  int i = find(l, name);
  if (i < 0) return;
  memmove(&l->a[i], &l->a[i + 1], sizeof(cj_named_attr) * (l->n - (uint32_t)i - 1));
  l->n--;
}
static const cj_attr *take(alist *l, const char *name) {
  const cj_attr *v = peek(l, name);
  drop(l, name);
  return v;
}
static void put(alist *l, const char *name, const cj_attr *v) {
  if (!v) {
    l->oom = true;
    return;
  }
  int i = find(l, name);
  if (i >= 0) {
    l->a[i].value = v;
    return;
  }
  if (l->n == l->cap) {
    uint32_t cap = l->cap ? l->cap * 2 : 16;
    cj_named_attr *a = l->on_stack ? malloc(sizeof *a * cap) : realloc(l->a, sizeof *a * cap);
    if (!a) {
      l->oom = true;
      return;
    }
    if (l->on_stack) memcpy(a, l->a, sizeof *a * l->n);
    l->on_stack = false;
    l->a = a;
    l->cap = cap;
  }
  l->a[l->n].name = name;
  l->a[l->n].value = v;
  l->n++;
}

/* ---- predicates of upstream's default removal ---- */
static bool is_bool(const cj_attr *a, bool v) { return a && a->kind == CJ_ATTR_BOOL && a->b == v; }
static bool is_int(const cj_attr *a, int64_t v) {
  return a && a->kind == CJ_ATTR_INT && a->i.v == v;
}
static bool is_empty_array(const cj_attr *a) {
  return a && a->kind == CJ_ATTR_ARRAY && a->arr.n == 0;
}
static bool is_empty_dict(const cj_attr *a) {
  return a && a->kind == CJ_ATTR_DICT && a->dict.n == 0;
}
static bool is_empty_string(const cj_attr *a) {
  return a && a->kind == CJ_ATTR_STRING && a->str.len == 0;
}
static bool is_empty_tensor(const cj_attr *a) {
  return a && a->kind == CJ_ATTR_DENSE && a->dense.nbytes == 0;
}
static bool is_enum(const cj_attr *a, cj_enum_kind ek, int32_t v) {
  return a && a->kind == CJ_ATTR_ENUM && a->en.ek == ek && a->en.v == v;
}
/* MLIR calls a dense attribute a splat when its data holds one element (1-element tensors
 * included). */
static bool is_splat_tensor(const cj_attr *a, int64_t v) {
  return a && a->kind == CJ_ATTR_DENSE && a->dense.splat && a->dense.type &&
         (cj_dtype_is_int(a->dense.type->dtype) || a->dense.type->dtype == CJ_PRED) &&
         cj_dense_get_i64(a, 0) == v;
}
static bool is_splat_array(const cj_attr *a, cj_enum_kind ek, int32_t v) {
  if (!a || a->kind != CJ_ATTR_ARRAY) return false;
  for (int32_t i = 0; i < a->arr.n; i++)
    if (!is_enum(a->arr.items[i], ek, v)) return false;
  return true;
}
static bool is_none_type(const cj_attr *a) {
  return a && a->kind == CJ_ATTR_TYPE && a->type && a->type->kind == CJ_TYPE_NONE;
}
static bool is_default_accuracy(const cj_attr *a) {
  if (!a || a->kind != CJ_ATTR_STRUCT || a->st.sk != CJ_SK_RESULT_ACCURACY) return false;
  double atol = 1, rtol = 1;
  int64_t ulps = 1;
  int32_t mode = -1;
  cj_attr_get_f64(a->st.fields[CJ_SF_RESULT_ACCURACY_atol], &atol);
  cj_attr_get_f64(a->st.fields[CJ_SF_RESULT_ACCURACY_rtol], &rtol);
  cj_attr_get_i64(a->st.fields[CJ_SF_RESULT_ACCURACY_ulps], &ulps);
  cj_attr_get_enum(a->st.fields[CJ_SF_RESULT_ACCURACY_mode], CJ_EK_RESULT_ACCURACY_MODE, &mode);
  return atol == 0 && rtol == 0 && ulps == 0 && mode == CJ_RESULT_ACCURACY_MODE_DEFAULT;
}

/* ---- building structured attributes ---- */

/* A dimension list (a #vhlo.tensor_v1 of integers) as array<i64: ...>; NULL when empty. */
static bool dims_field(alist *l, const char *name, const cj_attr **out, cj_status *err) {
  const cj_attr *a = take(l, name);
  *out = NULL;
  if (!a) {
    *err = cj_invalid("missing attribute '%s'", name);
    return false;
  }
  int64_t n;
  if (a->kind == CJ_ATTR_DENSE_ARRAY && a->darr.dtype == CJ_S64) {
    *out = a->darr.n ? a : NULL;
    return true;
  }
  if (a->kind != CJ_ATTR_DENSE || !a->dense.type || !cj_dtype_is_int(a->dense.type->dtype) ||
      (n = cj_dense_num_elements(a)) < 0) {
    *err = cj_invalid("attribute '%s' must be a tensor of integers", name);
    return false;
  }
  if (n == 0) return true;
  int64_t stack[16], *v = n <= 16 ? stack : malloc(sizeof(int64_t) * (size_t)n);
  if (!v) {
    *err = cj_oom();
    return false;
  }
  for (int64_t i = 0; i < n; i++) v[i] = cj_dense_get_i64(a, i);
  *out = cj_attr_i64_array(l->m, n, v);
  if (v != stack) free(v);
  if (!*out) {
    *err = cj_oom();
    return false;
  }
  return true;
}

static bool int_field(alist *l, const char *name, const cj_attr **out, cj_status *err) {
  const cj_attr *a = take(l, name);
  *out = a;
  if (!a || a->kind != CJ_ATTR_INT) {
    *err = cj_invalid("attribute '%s' must be an integer", name);
    return false;
  }
  return true;
}

/* Takes the attributes named after the fields of struct sk into f[], integer lists or integers
 * as structs.def declares each; the fields in `skip` (a mask of field numbers) are left out. */
static CJ_MUST_USE cj_status struct_fields(alist *l, cj_struct_kind sk, unsigned skip,
                                           const cj_attr **f) {
  cj_status err = NULL;
  for (int i = 0; i < cj_struct_num_fields(sk); i++) {
    if (skip & (1u << i)) continue;
    const char *name = cj_struct_field_name(sk, i);
    bool ok = cj_struct_field_kind(sk, i) == CJ_FK_I64 ? int_field(l, name, &f[i], &err)
                                                       : dims_field(l, name, &f[i], &err);
    if (!ok) return err;
  }
  return NULL;
}

/* struct_fields, then the struct as attribute `attr` */
static CJ_MUST_USE cj_status implode_struct(alist *l, const char *attr, cj_struct_kind sk,
                                            unsigned skip, const cj_attr **f) {
  CJ_RETURN_IF_ERROR(struct_fields(l, sk, skip, f));
  put(l, attr, cj_attr_struct(l->m, sk, f));
  return NULL;
}

static CJ_MUST_USE cj_status implode_conv(alist *l) {
  const cj_attr *f[CJ_SF_CONV__COUNT] = {NULL};
  CJ_RETURN_IF_ERROR(struct_fields(l, CJ_SK_CONV, 0, f));
  /* spatial dimension lists are part of the layout even when empty */
  static const int lists[] = {CJ_SF_CONV_input_spatial_dimensions,
                              CJ_SF_CONV_kernel_spatial_dimensions,
                              CJ_SF_CONV_output_spatial_dimensions};
  for (int i = 0; i < 3; i++)
    if (!f[lists[i]] && !(f[lists[i]] = cj_attr_i64_array(l->m, 0, NULL))) return cj_oom();
  put(l, "dimension_numbers", cj_attr_struct(l->m, CJ_SK_CONV, f));
  return NULL;
}

static CJ_MUST_USE cj_status implode_dot(alist *l, int version) {
  const cj_attr *f[CJ_SF_DOT__COUNT] = {NULL};
  CJ_RETURN_IF_ERROR(implode_struct(l, "dot_dimension_numbers", CJ_SK_DOT, 0, f));
  if (version < 2) return NULL;
  static const char *const names[] = {"lhs_precision_type",          "rhs_precision_type",
                                      "accumulation_type",           "lhs_component_count",
                                      "rhs_component_count",         "num_primitive_operations",
                                      "allow_imprecise_accumulation"};
  const cj_attr *v[7];
  for (int i = 0; i < 7; i++) {
    v[i] = take(l, names[i]);
    if (!v[i]) return cj_invalid("dot_general: missing attribute '%s'", names[i]);
  }
  if (is_none_type(v[3])) { /* no algorithm: every field must be none */
    for (int i = 0; i < 7; i++)
      if (!is_none_type(v[i]))
        return cj_invalid("dot_general: partially specified algorithm ('%s')", names[i]);
    return NULL;
  }
  for (int i = 0; i < 3; i++)
    if (v[i]->kind != CJ_ATTR_TYPE) return cj_invalid("dot_general: '%s' must be a type", names[i]);
  for (int i = 3; i < 6; i++)
    if (v[i]->kind != CJ_ATTR_INT)
      return cj_invalid("dot_general: '%s' must be an integer", names[i]);
  if (v[6]->kind != CJ_ATTR_BOOL)
    return cj_invalid("dot_general: '%s' must be a boolean", names[6]);
  const cj_attr *g[CJ_SF_DOT_ALGORITHM__COUNT];
  for (int i = 0; i < 7; i++) g[i] = v[i];
  put(l, "algorithm", cj_attr_struct(l->m, CJ_SK_DOT_ALGORITHM, g));
  return NULL;
}

static CJ_MUST_USE cj_status implode_gather(alist *l, int version) {
  const cj_attr *f[CJ_SF_GATHER__COUNT] = {NULL};
  unsigned v1 = 1u << CJ_SF_GATHER_operand_batching_dims |
                1u << CJ_SF_GATHER_start_indices_batching_dims; /* batching came in v2 */
  return implode_struct(l, "dimension_numbers", CJ_SK_GATHER, version >= 2 ? 0 : v1, f);
}

static CJ_MUST_USE cj_status implode_scatter(alist *l, int version) {
  const cj_attr *f[CJ_SF_SCATTER__COUNT] = {NULL};
  unsigned v1 = 1u << CJ_SF_SCATTER_input_batching_dims |
                1u << CJ_SF_SCATTER_scatter_indices_batching_dims; /* batching came in v2 */
  return implode_struct(l, "scatter_dimension_numbers", CJ_SK_SCATTER, version >= 2 ? 0 : v1, f);
}

static const cj_attr *channel_handle(cj_module *m, const cj_attr *id, const cj_attr *type) {
  const cj_attr *f[CJ_SF_CHANNEL_HANDLE__COUNT];
  f[CJ_SF_CHANNEL_HANDLE_handle] = id;
  f[CJ_SF_CHANNEL_HANDLE_type] = type ? type : cj_attr_int(m, 0, cj_type_elem(m, CJ_S64));
  if (!f[CJ_SF_CHANNEL_HANDLE_type]) return NULL;
  return cj_attr_struct(m, CJ_SK_CHANNEL_HANDLE, f);
}

/* channel_id -> channel_handle, boolean flags -> unit attributes (or nothing when false) */
static CJ_MUST_USE cj_status collective_attrs(alist *l) {
  const cj_attr *id = take(l, "channel_id");
  if (id) {
    if (id->kind != CJ_ATTR_INT) return cj_invalid("channel_id must be an integer");
    put(l, "channel_handle", channel_handle(l->m, id, NULL));
  }
  static const char *const flags[] = {"use_global_device_ids", "has_dynamic_root"};
  for (int i = 0; i < 2; i++) {
    const cj_attr *b = peek(l, flags[i]);
    if (!b) continue;
    if (b->kind != CJ_ATTR_BOOL) return cj_invalid("'%s' must be a boolean", flags[i]);
    if (b->b)
      put(l, flags[i], cj_attr_unit(l->m));
    else
      drop(l, flags[i]);
  }
  return NULL;
}

/* ---- the VHLO column of opfacts.def: an op's VHLO attributes into StableHLO's ----
 * va_* drops the attributes VHLO spells out at their defaults (StableHLO leaves them out) and
 * rebuilds the structured ones from their VHLO pieces; v is the VHLO op's version. */

typedef cj_status (*va_fn)(alist *l, int v);
#define va_none NULL

static CJ_MUST_USE cj_status va_func(alist *l, int v) {
  if (is_empty_string(peek(l, "sym_visibility"))) drop(l, "sym_visibility");
  /* lists of empty dictionaries are dropped by cj_bc_normalize_op_attrs */
  return NULL;
}

static CJ_MUST_USE cj_status va_collective(alist *l, int v) {
  if (is_int(peek(l, "channel_id"), 0)) drop(l, "channel_id");
  if (is_bool(peek(l, "use_global_device_ids"), false)) drop(l, "use_global_device_ids");
  if (is_bool(peek(l, "has_dynamic_root"), false)) drop(l, "has_dynamic_root");
  return collective_attrs(l);
}

static CJ_MUST_USE cj_status va_cholesky(alist *l, int v) {
  if (is_bool(peek(l, "lower"), false)) drop(l, "lower");
  return NULL;
}

static CJ_MUST_USE cj_status va_compare(alist *l, int v) {
  if (is_enum(peek(l, "compare_type"), CJ_EK_COMPARISON_TYPE, CJ_COMPARISON_TYPE_NOTYPE))
    drop(l, "compare_type");
  return NULL;
}

static CJ_MUST_USE cj_status va_composite(alist *l, int v) {
  if (is_int(peek(l, "version"), 0)) drop(l, "version");
  if (is_empty_dict(peek(l, "composite_attributes"))) drop(l, "composite_attributes");
  return NULL;
}

/* convolution and dynamic_conv */
static CJ_MUST_USE cj_status conv_attrs(alist *l, bool dynamic) {
  if (is_splat_tensor(peek(l, "window_strides"), 1)) drop(l, "window_strides");
  if (dynamic) {
    drop(l, "padding"); /* dynamic_conv_v1's attribute; v2 takes padding as an operand */
  } else if (is_splat_tensor(peek(l, "padding"), 0)) {
    drop(l, "padding");
  }
  if (is_splat_tensor(peek(l, "lhs_dilation"), 1)) drop(l, "lhs_dilation");
  if (is_splat_tensor(peek(l, "rhs_dilation"), 1)) drop(l, "rhs_dilation");
  if (is_splat_tensor(peek(l, "window_reversal"), 0)) drop(l, "window_reversal");
  if (is_splat_array(peek(l, "precision_config"), CJ_EK_PRECISION, CJ_PRECISION_DEFAULT))
    drop(l, "precision_config");
  return implode_conv(l);
}

static CJ_MUST_USE cj_status va_convolution(alist *l, int v) { return conv_attrs(l, false); }
static CJ_MUST_USE cj_status va_dynamic_conv(alist *l, int v) { return conv_attrs(l, true); }

static CJ_MUST_USE cj_status va_custom_call(alist *l, int v) {
  if (is_bool(peek(l, "has_side_effect"), false)) drop(l, "has_side_effect");
  if (is_empty_string(peek(l, "backend_config")) || is_empty_dict(peek(l, "backend_config")))
    drop(l, "backend_config");
  if (is_enum(peek(l, "api_version"), CJ_EK_CUSTOM_CALL_API_VERSION,
              CJ_CUSTOM_CALL_API_VERSION_API_VERSION_ORIGINAL))
    drop(l, "api_version");
  if (is_empty_array(peek(l, "called_computations"))) drop(l, "called_computations");
  if (is_empty_array(peek(l, "operand_layouts")) && is_empty_array(peek(l, "result_layouts"))) {
    drop(l, "operand_layouts");
    drop(l, "result_layouts");
  }
  if (is_empty_array(peek(l, "output_operand_aliases"))) drop(l, "output_operand_aliases");
  if (is_empty_array(peek(l, "result_tilings"))) drop(l, "result_tilings");
  return NULL;
}

static CJ_MUST_USE cj_status va_dot_general(alist *l, int v) {
  if (is_splat_array(peek(l, "precision_config"), CJ_EK_PRECISION, CJ_PRECISION_DEFAULT))
    drop(l, "precision_config");
  return implode_dot(l, v);
}

static CJ_MUST_USE cj_status va_dot(alist *l, int v) {
  if (is_splat_array(peek(l, "precision_config"), CJ_EK_PRECISION, CJ_PRECISION_DEFAULT))
    drop(l, "precision_config");
  return NULL;
}

static CJ_MUST_USE cj_status va_dynamic_broadcast_in_dim(alist *l, int v) {
  if (is_empty_tensor(peek(l, "known_expanding_dimensions")))
    drop(l, "known_expanding_dimensions");
  if (is_empty_tensor(peek(l, "known_nonexpanding_dimensions")))
    drop(l, "known_nonexpanding_dimensions");
  return NULL;
}

static CJ_MUST_USE cj_status va_gather(alist *l, int v) {
  if (is_bool(peek(l, "indices_are_sorted"), false)) drop(l, "indices_are_sorted");
  return implode_gather(l, v);
}

static CJ_MUST_USE cj_status va_infeed(alist *l, int v) {
  if (is_empty_string(peek(l, "infeed_config"))) drop(l, "infeed_config");
  if (is_empty_array(peek(l, "layout"))) drop(l, "layout");
  return NULL;
}

static CJ_MUST_USE cj_status va_outfeed(alist *l, int v) {
  if (is_empty_string(peek(l, "outfeed_config"))) drop(l, "outfeed_config");
  return NULL;
}

static CJ_MUST_USE cj_status va_send_recv(alist *l, int v) {
  if (is_bool(peek(l, "is_host_transfer"), false)) drop(l, "is_host_transfer");
  if (is_empty_tensor(peek(l, "source_target_pairs"))) drop(l, "source_target_pairs");
  const cj_attr *id = take(l, "channel_id"), *ty = take(l, "channel_type");
  if (!id || !ty || id->kind != CJ_ATTR_INT || ty->kind != CJ_ATTR_INT)
    return cj_invalid("send/recv: channel_id and channel_type must be integers");
  put(l, "channel_handle", channel_handle(l->m, id, ty));
  return NULL;
}

static CJ_MUST_USE cj_status va_reduce_window(alist *l, int v) {
  if (is_splat_tensor(peek(l, "window_strides"), 1)) drop(l, "window_strides");
  if (is_splat_tensor(peek(l, "base_dilations"), 1)) drop(l, "base_dilations");
  if (is_splat_tensor(peek(l, "window_dilations"), 1)) drop(l, "window_dilations");
  if (is_splat_tensor(peek(l, "padding"), 0)) drop(l, "padding");
  return NULL;
}

static CJ_MUST_USE cj_status va_scatter(alist *l, int v) {
  if (is_bool(peek(l, "indices_are_sorted"), false)) drop(l, "indices_are_sorted");
  if (is_bool(peek(l, "unique_indices"), false)) drop(l, "unique_indices");
  return implode_scatter(l, v);
}

static CJ_MUST_USE cj_status va_select_and_scatter(alist *l, int v) {
  if (is_splat_tensor(peek(l, "window_strides"), 1)) drop(l, "window_strides");
  if (is_splat_tensor(peek(l, "padding"), 0)) drop(l, "padding");
  return NULL;
}

static CJ_MUST_USE cj_status va_sort(alist *l, int v) {
  if (is_int(peek(l, "dimension"), -1)) drop(l, "dimension");
  if (is_bool(peek(l, "is_stable"), false)) drop(l, "is_stable");
  return NULL;
}

static CJ_MUST_USE cj_status va_result_accuracy(alist *l, int v) {
  if (is_default_accuracy(peek(l, "result_accuracy"))) drop(l, "result_accuracy");
  return NULL;
}

static const va_fn vhlo_attr_fns[CJ_OP_COUNT] = {
#define OPF(id, infer, canon, ev, quant, va, ...) va,
#include "ir/opfacts.def"
#undef OPF
};

static CJ_MUST_USE cj_status convert_attrs(alist *l, cj_op_kind kind, int v) {
  va_fn fn = (unsigned)kind < CJ_OP_COUNT ? vhlo_attr_fns[kind] : NULL;
  cj_status st = fn ? fn(l, v) : NULL;
  if (!st && l->oom) st = cj_oom();
  return st;
}

cj_status cj_vhlo_build_op(bc_reader *r, int vop, const cj_named_attr *attrs, uint32_t nattrs,
                        uint32_t nopnds, uint32_t nresults, uint32_t nregions,
                        cj_op_kind parent_kind, cj_op **out) {
  *out = NULL;
  pthread_once(&tables_once, build_tables);
  cj_op_kind kind = targets[vop].kind;
  int version = targets[vop].version;
  const char *vname = kOps[vop].name;
  if (kind == CJ_OP_UNKNOWN && !targets[vop].name[0])
    return cj_unimplemented("VHLO op 'vhlo.%s' has no StableHLO counterpart in this reader", vname);
  if (kind == CJ_OP_RETURN && parent_kind == CJ_OP_FUNC) kind = CJ_OP_FUNC_RETURN;

  cj_named_attr stack[24];
  alist l = {stack, 0, 24, r->m, false, true};
  if (nattrs + 4 > l.cap) {
    l.cap = nattrs + 4;
    l.a = malloc(sizeof *l.a * l.cap);
    l.on_stack = false;
    if (!l.a) return cj_oom();
  }
  /* names are distinct (properties, then discardable attributes; a repeated name in damaged
   * input is harmless: lookups take the first) */
  for (uint32_t i = 0; i < nattrs; i++) l.a[l.n++] = attrs[i];
  cj_status st = l.oom ? cj_oom() : convert_attrs(&l, kind, version);
  if (st) {
    if (!l.on_stack) free(l.a);
    return cj_status_annotate(st, "vhlo.%s", vname);
  }
  /* ops our table lacks (stablehlo.cross-replica-sum) are carried by name */
  cj_op *op = cj_op_create(r->m, kind, kind == CJ_OP_UNKNOWN ? targets[vop].name : NULL, nopnds,
                           nresults, nregions);
  if (!op) {
    if (!l.on_stack) free(l.a);
    return cj_oom();
  }
  st = cj_bc_set_attrs(r, op, l.a, l.n);
  if (!l.on_stack) free(l.a);
  if (!st) st = cj_bc_normalize_op_attrs(r->m, op);
  if (st) return cj_status_annotate(st, "vhlo.%s", vname);
  *out = op;
  return NULL;
}
