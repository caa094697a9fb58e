/* cjrt: elementwise array kernels of the CPU backend (ew.c, ew_cvt.c).
 *
 * An instruction kernel maps arrays of n elements of one compute type:
 *   fn(out, a, b, c, n, aux)     (b, c unused for unary ops)
 * out may be the same array as an operand (in place), never a partial overlap. Kernels are picked
 * once per instruction at compile time (cj_ew_lookup), so no kernel looks at a dtype per element.
 *
 * Compute types: PRED, S8..S64, U8..U64, F32, F64, C64, C128. Other storage types compute in one
 * of these (cj_ew_compute_type) and are rounded/wrapped back after each op (EW ROUND / WRAP).
 */
#ifndef CJ_CPU_EW_H
#define CJ_CPU_EW_H

#include <stdbool.h>
#include <stdint.h>

#include "base/dtype.h"

typedef enum cj_ew_op {
#define EW(id, arity, result) CJ_EW_##id,
#include "cpu/ew.def"
#undef EW
  CJ_EW_COUNT
} cj_ew_op;

typedef struct cj_ew_aux {
  cj_dtype dt;     /* ROUND: the small float; CVT: destination */
  cj_dtype src;    /* CVT: source */
  int32_t bits;    /* integer ops: the storage width (e.g. 4 for i4 computed in s32) */
  int32_t ebits, mbits; /* REDUCE_PRECISION */
} cj_ew_aux;

typedef void (*cj_ew_fn)(void *out, const void *a, const void *b, const void *c, int64_t n,
                         const cj_ew_aux *aux);

int cj_ew_arity(cj_ew_op op);
const char *cj_ew_name(cj_ew_op op);
/* The compute type of a storage dtype (CJ_INVALID if none). */
cj_dtype cj_ew_compute_type(cj_dtype storage);
/* Result compute type of op on operand compute type ct (for select: of operand 1). */
cj_dtype cj_ew_result_type(cj_ew_op op, cj_dtype ct);
/* The kernel, or NULL if op is not defined on ct. */
cj_ew_fn cj_ew_lookup(cj_ew_op op, cj_dtype ct);

/* Conversions between storage types (any two dtypes, incl. sub-byte, small floats, complex,
 * bool), with convert's semantics: float->int truncates and saturates (NaN -> 0), int->float
 * and float->float round to nearest even, complex->real drops the imaginary part. The aux
 * carries src/dst. NULL if a type is not a value type. */
cj_ew_fn cj_cvt_lookup(cj_dtype src, cj_dtype dst);

/* Bitcast between element types of the same width is a copy; these reinterpret arrays of
 * different widths (little-endian, low part first). */
void cj_bitcast_copy(void *out, const void *in, int64_t nbytes_out, int in_bits, int out_bits,
                     int64_t n_out);

/* Scalar helpers shared with the reducers and checks */
float cj_round_f32_to(cj_dtype dt, float x);

#endif
