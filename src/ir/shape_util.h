/* cjrt: small facts about types and shapes shared by the verifier (and usable by the compiler).
 *
 * Everything here is pure: no allocation, no module, only the interned types of ir.h.
 * Dynamic dimensions (CJ_DYN) are compatible with any size, as the StableHLO spec's
 * shape-compatibility rules say; a bound (#stablehlo.bounds) on a dynamic dimension caps the
 * static sizes it is compatible with.
 */
#ifndef CJ_IR_SHAPE_UTIL_H
#define CJ_IR_SHAPE_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ir/ir.h"

/* ---- element types ---- */

/* The element type of a tensor (ELEM or QUANT), or the type itself if it is an element type;
 * NULL for anything else. */
const cj_type *cj_shape_elem(const cj_type *t);

/* Categories of element types, as the spec's operand tables name them. */
enum {
  CJ_EC_BOOL = 1u << 0,     /* i1 */
  CJ_EC_SINT = 1u << 1,     /* si2..si64 (signless iN reads as signed), index */
  CJ_EC_UINT = 1u << 2,     /* ui2..ui64 */
  CJ_EC_FLOAT = 1u << 3,    /* every float type, tf32 included */
  CJ_EC_COMPLEX = 1u << 4,  /* complex<f32>, complex<f64> */
  CJ_EC_QTENSOR = 1u << 5,  /* per-tensor quantized */
  CJ_EC_QAXIS = 1u << 6,    /* per-axis quantized */
  CJ_EC_INT = CJ_EC_SINT | CJ_EC_UINT,
  CJ_EC_QUANT = CJ_EC_QTENSOR | CJ_EC_QAXIS,
  CJ_EC_ANY = 0x7f,
};
/* The category bit of an element type (0 for NULL/invalid). */
unsigned cj_shape_elem_category(const cj_type *elem);
/* "signed integer, floating-point or complex type or per-tensor quantized" for messages. */
const char *cj_shape_category_name(unsigned mask, char *buf, size_t cap);

static inline bool cj_shape_is_quant_elem(const cj_type *e) { return e && e->kind == CJ_TYPE_QUANT; }
static inline bool cj_shape_is_per_axis(const cj_type *e) {
  return e && e->kind == CJ_TYPE_QUANT && e->quant && e->quant->axis >= 0;
}
/* Bit width of an element type (storage width for quantized, 2x component for complex). */
int cj_shape_bitwidth(const cj_type *elem);

/* Element equality ignoring quantization scales and zero points (spec `baseline_element_type`):
 * for quantized types storage type, range, expressed type and quantization dimension must match. */
bool cj_shape_baseline_elem_equal(const cj_type *a, const cj_type *b);
/* Spec `is_promotable(x, y)`: same family and bitwidth(x) <= bitwidth(y) (quantized: same
 * expressed type, storage widths). */
bool cj_shape_is_promotable(const cj_type *from_elem, const cj_type *to_elem);

/* ---- shapes ---- */

static inline bool cj_shape_dim_compatible(int64_t a, int64_t b) {
  return a == b || a == CJ_DYN || b == CJ_DYN;
}
/* Bound of dimension d of a TENSOR, CJ_DYN if none. */
static inline int64_t cj_shape_bound(const cj_type *t, int d) {
  return t->bounds ? t->bounds[d] : CJ_DYN;
}
/* Same rank and every dimension compatible (a static size must also not exceed the other's
 * bound). Non-tensors: false. */
bool cj_shape_compatible(const cj_type *a, const cj_type *b);
/* Compatible shapes and equal element types. */
bool cj_shape_type_compatible(const cj_type *a, const cj_type *b);
/* Compatible shapes and baseline-equal element types (spec `baseline_type(a) = baseline_type(b)`
 * with dynamic dimensions allowed). */
bool cj_shape_baseline_compatible(const cj_type *a, const cj_type *b);

/* Window arithmetic of reduce_window / convolution / select_and_scatter:
 * dilated size ((n - 1) * dilation + 1, 0 stays 0), and the number of windows. CJ_DYN in, CJ_DYN
 * out. */
int64_t cj_shape_dilated(int64_t n, int64_t dilation);
int64_t cj_shape_num_windows(int64_t padded, int64_t window, int64_t stride);

/* ---- printing (for messages) ---- */

/* Writes MLIR's spelling of t ("tensor<2x?xf32>", "!quant.uniform<i8:f32, 0.1:3>", ...) into buf
 * (truncated with "..." if it does not fit) and returns buf. NULL prints "<null>". */
const char *cj_shape_type_str(const cj_type *t, char *buf, size_t cap);
/* "[1, 2, 3]" */
const char *cj_shape_dims_str(const int64_t *v, int64_t n, char *buf, size_t cap);

#endif
