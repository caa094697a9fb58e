/* cjrt: chain instructions of the fused elementwise engine (lower_ew.c).
 *
 * A chain is a run of f32 or f64 instructions where each one's result is used only by the next,
 * as one of its operands: acc = x0; acc = acc OP x1; acc = x2 OP acc; acc = sqrt(acc); ...
 * A 16-bit chain (hk: bf16 or f16, computed in f32) also rounds its accumulator to that type
 * where the instruction list rounds (ROUND), reads the entries of its steps marked h as arrays
 * of that type (converted on load: the converts of 16-bit inputs folded in) and stores its
 * result in that type when dst_h (the convert to a 16-bit output folded in).
 * Its kernel keeps the accumulators of a strip of vectors in registers across the steps, so
 * that the intermediate values are never stored: one load per operand and one store per element,
 * where the instruction list loaded and stored every intermediate value. Every step computes what
 * the array kernel of its instruction (ew.c) computes, bit for bit: no contraction into fused
 * multiply-adds, maximum/minimum as cj_maxf/cj_minf (NaN and signed zeros), sqrt correctly
 * rounded (the hardware's, as the vector library's).
 */
#ifndef CJ_CPU_EW_CHAIN_H
#define CJ_CPU_EW_CHAIN_H

#include <stdbool.h>
#include <stdint.h>

#include "base/dtype.h"

enum { CJ_EW_CHAIN_MAX = 48 };

/* A step's operation. A binary one has six forms: the operand an array (read from its table
 * entry at the strip's elements), a scalar (its element 0 broadcast) or the side accumulator,
 * each with the accumulator first or second (x - acc):
 *   code + 0: acc OP x[i]   + 1: acc OP x[0]   + 2: x[i] OP acc   + 3: x[0] OP acc
 *   code + 4: acc OP side   + 5: side OP acc
 * PUSH moves the accumulator to the side accumulator and starts another from an operand (a
 * tree's other branch: a + b * c as a; push b; * c; + side). TEE stores the accumulator to its
 * entry and goes on (a result that is also used elsewhere, or a group output). */
typedef enum cj_ch_op {
  CJ_CH_ADD = 0, CJ_CH_SUB = 8, CJ_CH_MUL = 16, CJ_CH_DIV = 24, CJ_CH_MAX = 32, CJ_CH_MIN = 40,
  CJ_CH_NEG = 48, CJ_CH_ABS, CJ_CH_SQRT, CJ_CH_SQUARE, /* acc * acc */
  CJ_CH_PUSH, CJ_CH_PUSH_SCALAR, CJ_CH_TEE,
  CJ_CH_ROUND /* acc rounded to the chain's 16-bit type (hk), kept in f32: EW ROUND */,
  /* a select on a predicate array (bytes, nonzero: true), as the select kernel, on the bits:
   * MASK loads the predicate of the strip's elements from its entry into the side accumulator
   * (never inside a push's span: the next step takes it); then SELT (acc the false
   * operand): acc = pred ? x[i] : acc, SELT_SCALAR: pred ? x[0] : acc; SELF (acc the true
   * operand): acc = pred ? acc : x[i], SELF_SCALAR: pred ? acc : x[0] */
  CJ_CH_MASK, CJ_CH_SELT, CJ_CH_SELT_SCALAR, CJ_CH_SELF, CJ_CH_SELF_SCALAR
} cj_ch_op;
/* whether a step reads its operand's table entry */
static inline bool cj_ch_reads(int op) {
  return op < CJ_CH_NEG ? (op & 7) < 4 || (op & 7) >= 6
                        : op == CJ_CH_PUSH || op == CJ_CH_PUSH_SCALAR || op >= CJ_CH_MASK;
}
/* whether a step writes its operand's table entry */
static inline bool cj_ch_writes(int op) { return op == CJ_CH_TEE; }

/* Boxed operands (flat mode's in-place reads of a stencil's shifted views, lower_ew.c): forms
 * code + 6: acc OP box(x[i]), code + 7: box(x[i]) OP acc, where box(x[i]) is x[i] when element
 * i's column (i mod box_w: the call starts at a row's column 0) lies in [clo, chi) of the
 * step's box, else the box's padding value (its bits). The kernel reads the columns as a table
 * of lane bits (cj_ew_chain_box_table): kbits[b * kb_stride + j], bit l set when lane l of a
 * vector starting at column j of a row lies in box b (lanes past the row's end: the next row's
 * first columns); the entries repeat after the first box_w, so that the vectors of a strip index
 * it from its first element's column without a wrap. */
enum { CJ_EW_CHAIN_BOXES = 8 };
typedef struct cj_ew_chain_box {
  int32_t clo, chi;
  uint64_t pad;
} cj_ew_chain_box;

typedef struct cj_ew_chain_step {
  uint8_t op;  /* cj_ch_op */
  uint8_t src; /* table entry of the operand (binary steps) */
  uint8_t box; /* boxed forms: the box */
  uint8_t h;   /* 16-bit chains: the operand's entry holds elements of the chain's hk */
} cj_ew_chain_step;

/* a chain's 16-bit type: none (f32/f64 entries only), bf16, f16 */
enum { CJ_CH_H_NONE = 0, CJ_CH_H_BF16 = 1, CJ_CH_H_F16 = 2 };

struct cj_ew_chain;
/* runs chain c over elements [0, n) of the table's entries (the operands at tab[src], the result
 * at tab[dst]); the result may be an operand's entry (in place) */
typedef void (*cj_ew_chain_fn)(const struct cj_ew_chain *c, char *const *tab, int64_t n);

typedef struct cj_ew_chain {
  cj_ew_chain_fn fn;
  int32_t nsteps;
  uint8_t dst, first;  /* table entries: the result, the accumulator's start */
  bool first_scalar;   /* first: element 0 broadcast */
  uint8_t hk;          /* CJ_CH_H_*: the 16-bit type of ROUND and of the h entries (f32 chains) */
  bool first_h, dst_h; /* first / dst: an entry of hk elements */
  int32_t box_w;       /* > 0: boxed steps read boxes of rows of this many elements */
  int32_t kb_stride;   /* boxed: the entries of a box in kbits */
  const uint16_t *kbits; /* boxed: the lanes inside the boxes (cj_ew_chain_box_table) */
  int8_t first_box;    /* >= 0: first is boxed, by this box */
  int8_t nbox;
  cj_ew_chain_box box[CJ_EW_CHAIN_BOXES];
  cj_ew_chain_step step[CJ_EW_CHAIN_MAX];
} cj_ew_chain;

/* the kernel for f32 or f64 chains on this CPU; NULL for other types, or when chains are off
 * (CJ_EW_CHAIN=off in the environment, read once) */
cj_ew_chain_fn cj_ew_chain_pick(cj_dtype dt);
/* the kernel for f32 chains with 16-bit type hk (CJ_CH_H_BF16 / F16) on this CPU; NULL when
 * there is none (f16 without F16C's instruction sets), or chains are off */
cj_ew_chain_fn cj_ew_chain_pick_h(int hk);

/* the lanes of a vector and the vectors of a strip of the kernel that cj_ew_chain_pick picks
 * for elements of es bytes (4: f32, 8: f64) */
void cj_ew_chain_shape(int es, int *lanes, int *strip);
/* the number of kbits entries chain c's boxes (c->box_w, c->nbox) need for that kernel */
int64_t cj_ew_chain_box_entries(const cj_ew_chain *c, int lanes, int strip);
/* fills kt (cj_ew_chain_box_entries of them) with the lane bits of chain c's boxes and sets
 * c->kbits to it and c->kb_stride */
void cj_ew_chain_box_table(cj_ew_chain *c, uint16_t *kt, int lanes, int strip);

/* the kernels of each instruction set (ew_chain_isa_*.c), [0]: f32, [1]: f64, [2]: f32 with
 * bf16, [3]: f32 with f16 (NULL: none) */
extern const cj_ew_chain_fn cj_ew_chain_avx512[4], cj_ew_chain_avx2[4], cj_ew_chain_generic[4];
/* and their vector bytes and strip vectors */
extern const int cj_ew_chain_avx512_shape[2], cj_ew_chain_avx2_shape[2], cj_ew_chain_generic_shape[2];

/* flat mode's strided column copies (ew_chain_cols_isa_avx512.c), es 4 or 8, 16 * w < 2^31:
 * element i of packed to element i * w of col (put), or back, for i in [0, rows) */
#if defined(__x86_64__) && defined(__GNUC__)
#define CJ_EW_COLS_AVX512 1
void cj_ew_col_copy_avx512(void *col, void *packed, int es, int64_t rows, int64_t w, bool put);
#endif

#endif
