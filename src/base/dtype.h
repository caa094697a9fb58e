/* cjrt: element types (dtypes) and conversions between the small float formats and f32/f64.
 *
 * The table is dtypes.def; every per-dtype fact comes from it. Host representation is
 * little-endian with `bytes` per element; sub-byte integers and floats take one byte each,
 * holding the value in the low bits with the high bits zero (as ml_dtypes and MLIR store them;
 * readers mask, so a sign-extended byte reads the same).
 * Complex values are (re, im) pairs of f32 (C64) or f64 (C128).
 */
#ifndef CJ_BASE_DTYPE_H
#define CJ_BASE_DTYPE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

typedef enum cj_dtype_kind {
  CJ_DK_INVALID,
  CJ_DK_BOOL,
  CJ_DK_SINT,
  CJ_DK_UINT,
  CJ_DK_FLOAT,
  CJ_DK_COMPLEX,
  CJ_DK_TOKEN,
} cj_dtype_kind;

/* Float format families (fflags):
 *   IEEE    all-ones exponent: infinity (mantissa 0) or NaN; signed zero.
 *   FN      no infinity; NaN is only all-ones exponent and mantissa; signed zero.
 *   FNUZ    no infinity, no negative zero; the pattern of -0 (sign bit only) is the one NaN.
 *   FINITE  no infinity, no NaN (f4/f6): overflow saturates.
 *   E8M0    unsigned power of two, no zero, 0xFF is NaN. */
enum { CJ_FF_IEEE = 1, CJ_FF_FN = 2, CJ_FF_FNUZ = 3, CJ_FF_FINITE = 4, CJ_FF_E8M0 = 5 };

typedef enum cj_dtype {
#define X(id, code, name, bits, bytes, kind, eb, mb, bias, ff, xla) CJ_##id = code,
#include "base/dtypes.def"
#undef X
  CJ_DTYPE_LIMIT = 66 /* one past the largest code */
} cj_dtype;

typedef struct cj_dtype_info {
  const char *id;   /* "F32" */
  const char *mlir; /* "f32", NULL if none */
  int bits, bytes;
  cj_dtype_kind kind;
  int ebits, mbits, bias, fflags;
  int xla; /* xla::PrimitiveType number, 0 if none */
} cj_dtype_info;

/* The dtype of an xla::PrimitiveType number; CJ_INVALID for 0, tuples, opaque and unknown. */
cj_dtype cj_dtype_from_xla(int64_t primitive_type);

/* Info for any code; an unknown code yields the INVALID row. */
const cj_dtype_info *cj_dtype_get(cj_dtype dt);
static inline int cj_dtype_bytes(cj_dtype dt) { return cj_dtype_get(dt)->bytes; }
static inline int cj_dtype_bits(cj_dtype dt) { return cj_dtype_get(dt)->bits; }
static inline cj_dtype_kind cj_dtype_kindof(cj_dtype dt) { return cj_dtype_get(dt)->kind; }
static inline bool cj_dtype_is_float(cj_dtype dt) { return cj_dtype_kindof(dt) == CJ_DK_FLOAT; }
static inline bool cj_dtype_is_complex(cj_dtype dt) { return cj_dtype_kindof(dt) == CJ_DK_COMPLEX; }
static inline bool cj_dtype_is_int(cj_dtype dt) {
  cj_dtype_kind k = cj_dtype_kindof(dt);
  return k == CJ_DK_SINT || k == CJ_DK_UINT;
}
static inline bool cj_dtype_is_valid(cj_dtype dt) { return cj_dtype_kindof(dt) != CJ_DK_INVALID; }
/* The MLIR spelling ("bf16", "ui8", "complex<f32>") to a dtype; CJ_INVALID if none. `si8` etc.
 * (VHLO/builtin signed spellings) are accepted as the signless ones. */
cj_dtype cj_dtype_from_mlir(const char *s, size_t n);
/* The real component type of a complex dtype (C64 -> F32, C128 -> F64); others unchanged. */
cj_dtype cj_dtype_component(cj_dtype dt);

/* ---- scalar conversions ----
 * Encoding into a float format rounds to nearest, ties to even, once (from the exact double).
 * Overflow follows ml_dtypes / XLA: IEEE formats give infinity; FN and FNUZ formats give NaN;
 * FINITE formats saturate to the largest finite value; E8M0 saturates, and gives NaN for
 * negative, zero... see dtype.c. NaN maps to the format's NaN (sign kept where it can be). */
double cj_float_decode(cj_dtype dt, uint64_t bits);
uint64_t cj_float_encode(cj_dtype dt, double v);

/* Fast paths for the common 16-bit formats. */
static inline float cj_bf16_to_f32(uint16_t h) {
  uint32_t u = (uint32_t)h << 16;
  float f;
  memcpy(&f, &u, 4);
  return f;
}
static inline uint16_t cj_f32_to_bf16(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((u >> 16) | 0x40); /* quiet NaN */
  u += 0x7fffu + ((u >> 16) & 1u);
  return (uint16_t)(u >> 16);
}
float cj_f16_to_f32(uint16_t h);
uint16_t cj_f32_to_f16(float f);

/* Reads element `i` of a dense host array of dtype `dt` as double / int64 / uint64 (for
 * constant folding, printing and tests, not for kernels). Complex reads the real part. */
double cj_elem_get_f64(cj_dtype dt, const void *data, size_t i);
int64_t cj_elem_get_i64(cj_dtype dt, const void *data, size_t i);
/* Writes element `i` from a double (floats: rounded; ints: truncated toward zero and wrapped). */
void cj_elem_set_f64(cj_dtype dt, void *data, size_t i, double v);
void cj_elem_set_i64(cj_dtype dt, void *data, size_t i, int64_t v);
/* The bits of element `i` of a dense host array of dtype `dt` (at most 8 bytes; sub-byte types
 * masked to their width), for bitwise comparison. */
uint64_t cj_elem_get_bits(cj_dtype dt, const void *data, int64_t i);
/* How many representable values of the real float dtype `dt` lie between elements `i` of the
 * arrays a and b (the sign-magnitude distance of their bits; 0 for two NaNs, UINT64_MAX when one
 * is NaN or infinite and they differ), for the checks of the check ops and of the reference. */
uint64_t cj_elem_ulp_distance(cj_dtype dt, const void *a, const void *b, int64_t i);

#endif
