/* libcjrt: element type names and sizes, from the one dtype table (src/base/dtypes.def). */
#include <ctype.h>
#include <string.h>
#include <strings.h>

#include "base/dtype.h"
#include "loader/util.h"

/* The public enum is written out in cjrt.h (an installed header cannot include dtypes.def);
 * these checks keep the two equal. */
#define SAME(id) _Static_assert((int)CJRT_##id == (int)CJ_##id, "cjrt_dtype differs from dtypes.def: " #id);
SAME(INVALID) SAME(PRED) SAME(S8) SAME(S16) SAME(S32) SAME(S64)
SAME(U8) SAME(U16) SAME(U32) SAME(U64) SAME(F16) SAME(F32)
SAME(F64) SAME(BF16) SAME(C64) SAME(C128) SAME(F8E5M2) SAME(F8E4M3FN)
SAME(F8E4M3B11FNUZ) SAME(F8E5M2FNUZ) SAME(F8E4M3FNUZ) SAME(S4) SAME(U4) SAME(TOKEN)
SAME(S2) SAME(U2) SAME(F8E4M3) SAME(F8E3M4) SAME(F8E8M0FNU) SAME(F4E2M1FN)
SAME(S1) SAME(U1) SAME(F6E2M3FN) SAME(F6E3M2FN)
#undef SAME

typedef struct {
  char short_name[16]; /* lower-case id */
  const char *mlir;
  int bits, bytes;
  int xla; /* xla::PrimitiveType */
  cjrt__kind kind;
} dtype_row;

static const dtype_row *row(cjrt_dtype dt) {
  static dtype_row table[CJRT_DTYPE_COUNT];
  static int ready = 0;
  if (!__atomic_load_n(&ready, __ATOMIC_ACQUIRE)) {
    /* Every thread writes identical bytes, so a race here is benign. */
    static const struct {
      const char *id;
      int code;
      const char *mlir;
      int bits, bytes, kind, xla;
    } src[] = {
#define X(id, code, name, bits, bytes, kind, eb, mb, bias, ff, xla) {#id, code, name, bits, bytes, kind, xla},
#include "base/dtypes.def"
#undef X
    };
    for (size_t i = 0; i < sizeof src / sizeof src[0]; i++) {
      if (src[i].code < 0 || src[i].code >= CJRT_DTYPE_COUNT) continue;
      dtype_row *r = &table[src[i].code];
      size_t n = strlen(src[i].id);
      if (n >= sizeof r->short_name) n = sizeof r->short_name - 1;
      for (size_t k = 0; k < n; k++) r->short_name[k] = (char)tolower((unsigned char)src[i].id[k]);
      r->short_name[n] = 0;
      r->mlir = src[i].mlir;
      r->bits = src[i].bits;
      r->bytes = src[i].bytes;
      r->xla = src[i].xla;
      switch ((cj_dtype_kind)src[i].kind) {
        case CJ_DK_BOOL: r->kind = CJRT__K_BOOL; break;
        case CJ_DK_SINT: r->kind = CJRT__K_SINT; break;
        case CJ_DK_UINT: r->kind = CJRT__K_UINT; break;
        case CJ_DK_FLOAT: r->kind = CJRT__K_FLOAT; break;
        case CJ_DK_COMPLEX: r->kind = CJRT__K_COMPLEX; break;
        case CJ_DK_TOKEN: r->kind = CJRT__K_TOKEN; break;
        default: r->kind = CJRT__K_INVALID; break;
      }
    }
    __atomic_store_n(&ready, 1, __ATOMIC_RELEASE);
  }
  if ((int)dt <= 0 || (int)dt >= CJRT_DTYPE_COUNT) return &table[0];
  return &table[dt];
}

CJRT_API const char *cjrt_dtype_name(cjrt_dtype dt) {
  const dtype_row *r = row(dt);
  return r->kind == CJRT__K_INVALID ? "invalid" : r->short_name;
}
CJRT_API const char *cjrt_dtype_mlir_name(cjrt_dtype dt) {
  return row(dt)->kind == CJRT__K_INVALID ? NULL : row(dt)->mlir;
}
CJRT_API size_t cjrt_dtype_size(cjrt_dtype dt) {
  const dtype_row *r = row(dt);
  return r->kind == CJRT__K_INVALID ? 0 : (size_t)r->bytes;
}
CJRT_API int cjrt_dtype_bits(cjrt_dtype dt) { return row(dt)->bits; }
cjrt__kind cjrt__dtype_kind(cjrt_dtype dt) { return row(dt)->kind; }
bool cjrt__dtype_valid_array(cjrt_dtype dt) {
  cjrt__kind k = row(dt)->kind;
  return k != CJRT__K_INVALID && k != CJRT__K_TOKEN;
}

/* numpy / ml_dtypes names, and other common spellings. */
static const struct {
  const char *name;
  cjrt_dtype dt;
} aliases[] = {
    {"bool", CJRT_PRED},       {"bool_", CJRT_PRED},      {"i1", CJRT_PRED},
    {"int8", CJRT_S8},         {"int16", CJRT_S16},       {"int32", CJRT_S32},
    {"int64", CJRT_S64},       {"uint8", CJRT_U8},        {"uint16", CJRT_U16},
    {"uint32", CJRT_U32},      {"uint64", CJRT_U64},      {"i8", CJRT_S8},
    {"i16", CJRT_S16},         {"i32", CJRT_S32},         {"i64", CJRT_S64},
    {"ui8", CJRT_U8},          {"ui16", CJRT_U16},        {"ui32", CJRT_U32},
    {"ui64", CJRT_U64},        {"float16", CJRT_F16},     {"half", CJRT_F16},
    {"float32", CJRT_F32},     {"float", CJRT_F32},       {"single", CJRT_F32},
    {"float64", CJRT_F64},     {"double", CJRT_F64},      {"bfloat16", CJRT_BF16},
    {"complex64", CJRT_C64},   {"complex128", CJRT_C128}, {"complex<f32>", CJRT_C64},
    {"complex<f64>", CJRT_C128}, {"float8_e5m2", CJRT_F8E5M2},
    {"float8_e4m3fn", CJRT_F8E4M3FN}, {"float8_e4m3b11fnuz", CJRT_F8E4M3B11FNUZ},
    {"float8_e5m2fnuz", CJRT_F8E5M2FNUZ}, {"float8_e4m3fnuz", CJRT_F8E4M3FNUZ},
    {"float8_e4m3", CJRT_F8E4M3}, {"float8_e3m4", CJRT_F8E3M4},
    {"float8_e8m0fnu", CJRT_F8E8M0FNU}, {"float4_e2m1fn", CJRT_F4E2M1FN},
    {"float6_e2m3fn", CJRT_F6E2M3FN}, {"float6_e3m2fn", CJRT_F6E3M2FN},
    {"int4", CJRT_S4},         {"uint4", CJRT_U4},        {"int2", CJRT_S2},
    {"uint2", CJRT_U2},        {"int1", CJRT_S1},         {"uint1", CJRT_U1},
    {"i4", CJRT_S4},           {"ui4", CJRT_U4},          {"i2", CJRT_S2},
    {"ui2", CJRT_U2},          {"ui1", CJRT_U1},
};

CJRT_API cjrt_dtype cjrt_dtype_from_name(const char *name) {
  if (!name || !*name) return CJRT_INVALID;
  for (int dt = 1; dt < CJRT_DTYPE_COUNT; dt++) {
    const dtype_row *r = row((cjrt_dtype)dt);
    if (r->kind == CJRT__K_INVALID) continue;
    if (!strcasecmp(name, r->short_name)) return (cjrt_dtype)dt;
    if (r->mlir && !strcasecmp(name, r->mlir)) return (cjrt_dtype)dt;
  }
  for (size_t i = 0; i < sizeof aliases / sizeof aliases[0]; i++)
    if (!strcasecmp(name, aliases[i].name)) return aliases[i].dt;
  return CJRT_INVALID;
}

int cjrt__dtype_xla(cjrt_dtype dt) { return row(dt)->xla; }
