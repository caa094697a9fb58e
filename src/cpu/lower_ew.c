/* cjrt: elementwise fusion. Consecutive elementwise ops of one shape become one step that runs
 * a small instruction list over blocks of the index space (2 KiB per operand, so the
 * intermediate values stay in L1), calling one array kernel per instruction and block.
 * Inputs are read in place, or gathered per block when they are broadcasts or slices
 * (broadcast_in_dim, splat constants and static slices whose users are all elementwise stay
 * virtual: no step, no buffer; a slice is its operand's buffer at an offset, with strides), or
 * pads (and slices of them): bounded views, whose elements outside a box are the constant
 * padding value.
 * Small floats compute in f32 and are rounded after every op; sub-byte integers compute in
 * s32/u32 and wrap. Large groups run in parallel over blocks.
 * Runs of f32/f64 arithmetic where each result is used only by the next instruction become one
 * chain instruction (ew_chain.h, make_chains) that keeps its intermediate values in vector
 * registers: a Jacobi sweep's 0.25 * (a + b + c + d + e) loads each operand once and stores once.
 * In bf16/f16 groups the roundings after each op are chain steps too, and the converts of 16-bit
 * inputs that only a chain reads, and of its result to a 16-bit output, fold into it (fold_h16):
 * bias + relu on bf16 is one pass that loads bf16 and stores bf16, with the same bits.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/ew_chain.h"
#include "cpu/lower.h"
#include "cpu/vmath.h"


enum { MAX_OPS = 32, MAX_INPUTS = 24, MAX_TAB = 128, MAX_INSTR = 160 };
_Static_assert(MAX_INPUTS * 2 <= CJ_EW_SRC_MAX_IN, "a source's inputs (cpu/lower.h)");
/* Row mode: views whose rows are contiguous are read in place, a row at a time, when rows are at
 * least this many bytes and the views' ranks (collapsed) at most ROW_RANK. Shorter rows cost
 * more in instruction calls per row than a gather per block (a 64x64 f32 stencil: 1.5x slower
 * read in place by rows of 256 bytes; 256x256 in rows of 1 KiB: ~8% faster). */
enum { ROW_MIN_BYTES = 1024, ROW_RANK = 4 };
/* groups of fewer elements keep one array kernel per instruction (make_chains) */
enum { CHAIN_MIN_ELEMS = 128 };
/* groups of at most this many bytes per register run as one block, when all their registers
 * take at most SMALL_GROUP_TLS bytes */
enum { SMALL_GROUP_BYTES = 16384, SMALL_GROUP_TLS = 512 * 1024 };

/* ======================================================================== runtime */

typedef struct ew_instr {
  cj_ew_fn fn;
  cj_ew_chain *chain; /* a chain of instructions (ew_chain.h): runs instead of fn */
  cj_ew_chain *boxed; /* flat mode's in-place rows (flat_boxed): chain with boxed steps */
  cj_ew_aux aux;
  uint8_t dst, src[3]; /* indices into the pointer table */
} ew_instr;

enum { IN_FULL = 0, IN_BCAST = 1, IN_SCALAR = 2 };

typedef struct ew_input {
  uint8_t mode;
  uint8_t esize;
  uint8_t reg; /* BCAST/SCALAR: table index of the register it is gathered into */
  bool prefilled; /* SCALAR: the buffer already holds a block of copies (a constant) */
  bool one;       /* SCALAR: only chains read it, element 0: one copy is enough */
  bool bounded;   /* BCAST: a bounded view (a pad): lo/hi/padv apply, off is not added to the
                   * buffer's address (it may be negative) */
  int32_t rank;
  int64_t off; /* elements from the start of the buffer (a slice read in place) */
  int64_t dims[CJ_MAX_RANK];
  int64_t strides[CJ_MAX_RANK]; /* elements */
  int64_t *lo, *hi;             /* bounded: the box read from the buffer */
  int64_t src_elems;            /* bounded: elements in the buffer (reads stay below) */
  char padv[16];                /* bounded: the padding value */
  bool flat;       /* flat mode: a bounded view whose element e is read at off + e */
  int64_t clo, chi; /* flat: the columns of its box (the others read the padding value) */
  int64_t fr0, fr1; /* flat: the rows read in place (inside its box and its buffer) */
} ew_input;

typedef struct ew_params {
  int64_t n, block;
  int64_t row; /* > 0: row mode, rows of this many elements (run_rows) */
  /* > 0: flat mode (run_flat) over rows of this many elements: rows [flat_g0, flat_g1) read
   * the flat views in place; columns [0, flat_a) and [flat_b, flat_w) are then recomputed */
  int64_t flat_w, flat_g0, flat_g1, flat_a, flat_b;
  bool flat_boxed; /* flat mode: chains' boxed steps pad the flat views, no edge columns pass */
  bool flat_bulk;  /* flat_boxed, every instruction a chain and every view flat: the rows read
                    * in place run as one call, not a block at a time (no registers) */
  int32_t ninstr, ninputs, noutputs, nregs;
  int64_t reg_bytes;
  int64_t flops_per_elem;
  ew_instr *instr;
  ew_input *inputs;
  uint8_t esize[MAX_TAB]; /* per table entry: element bytes (inputs, outputs); 0 for registers */
} ew_params;

/* The fill loops below are vectorized (as ew.c's kernels): a scalar input of a fused group is
 * written out to a block-sized register on every call, and a plain store loop is not
 * vectorized at -O2. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__SANITIZE_ADDRESS__)
#define EW_FILL_CLONES \
  __attribute__((target_clones("avx512f", "avx2", "default"), optimize("tree-vectorize")))
#else
#define EW_FILL_CLONES
#endif

/* dst[0..m) = *src: 64-byte groups of a fixed count (which the vectorizer takes at -O2; the
 * plain loop stayed one scalar store per element), then the tail */
#define FILL(T)                                                        \
  do {                                                                 \
    T v;                                                               \
    memcpy(&v, src, sizeof v);                                         \
    T *d = (T *)(void *)dst;                                           \
    int64_t i = 0;                                                     \
    for (; i + 64 / (int64_t)sizeof v <= m; i += 64 / (int64_t)sizeof v) \
      for (int k = 0; k < 64 / (int)sizeof v; k++) d[i + k] = v;      \
    for (; i < m; i++) d[i] = v;                                       \
  } while (0)
EW_FILL_CLONES void cj_fill_elems(char *dst, const char *src, int es, int64_t m) {
  switch (es) {
    case 1: memset(dst, *src, (size_t)m); break;
    case 2: FILL(uint16_t); break;
    case 4: FILL(uint32_t); break;
    case 8: FILL(uint64_t); break;
    default:
      for (int64_t i = 0; i < m; i++) memcpy(dst + i * es, src, (size_t)es);
  }
}
#undef FILL

static void strided_elems(char *dst, const char *src, int es, int64_t stride, int64_t m) {
  switch (es) {
    case 1:
      for (int64_t i = 0; i < m; i++) dst[i] = src[i * stride];
      break;
    case 2:
      for (int64_t i = 0; i < m; i++) ((uint16_t *)dst)[i] = ((const uint16_t *)src)[i * stride];
      break;
    case 4:
      for (int64_t i = 0; i < m; i++) ((uint32_t *)dst)[i] = ((const uint32_t *)src)[i * stride];
      break;
    case 8:
      for (int64_t i = 0; i < m; i++) ((uint64_t *)dst)[i] = ((const uint64_t *)src)[i * stride];
      break;
    default:
      for (int64_t i = 0; i < m; i++) memcpy(dst + i * es, src + i * stride * es, (size_t)es);
  }
}

/* rows elements of src (stride s2 elements) each repeated k times into dst: a broadcast along a
 * short innermost dim ([.., n, 1] -> [.., n, 3]) in one loop instead of a fill per element. */
#define REP_ROWS(T)                                                       \
  do {                                                                    \
    T *d = (T *)dst;                                                      \
    const T *sp = (const T *)src;                                         \
    if (k == 2)                                                           \
      for (int64_t j = 0; j < rows; j++, d += 2) d[0] = d[1] = sp[j * s2]; \
    else if (k == 3)                                                      \
      for (int64_t j = 0; j < rows; j++, d += 3) d[0] = d[1] = d[2] = sp[j * s2]; \
    else                                                                  \
      for (int64_t j = 0; j < rows; j++, d += k)                          \
        for (int64_t i = 0; i < k; i++) d[i] = sp[j * s2];                \
  } while (0)

/* d[3j + i] = s[j], i < 3: contiguous values repeated 3 times, 8 values per 3 shuffles of a
 * 32-byte vector (one permute each with AVX2 or AVX-512; 16 values through a 64-byte array
 * went through the stack on AVX2: 30% of cloth's elementwise time there) */
typedef uint32_t ew_v8u32 __attribute__((vector_size(32)));
#if defined(__clang__)
#define EW_SHUF8(v, a, b, c, d, e, f, g, h) __builtin_shufflevector(v, v, a, b, c, d, e, f, g, h)
#else
#define EW_SHUF8(v, a, b, c, d, e, f, g, h) __builtin_shuffle(v, (ew_v8u32){a, b, c, d, e, f, g, h})
#endif
static inline void rep3_u32(uint32_t *restrict d, const uint32_t *restrict s, int64_t rows) {
  int64_t j = 0;
  for (; j + 8 <= rows; j += 8) {
    ew_v8u32 v, o[3];
    memcpy(&v, s + j, sizeof v);
    o[0] = EW_SHUF8(v, 0, 0, 0, 1, 1, 1, 2, 2);
    o[1] = EW_SHUF8(v, 2, 3, 3, 3, 4, 4, 4, 5);
    o[2] = EW_SHUF8(v, 5, 5, 6, 6, 6, 7, 7, 7);
    memcpy(d + 3 * j, o, sizeof o);
  }
  for (; j < rows; j++)
    for (int i = 0; i < 3; i++) d[j * 3 + i] = s[j];
}
#undef EW_SHUF8

/* es-byte elements repeated k times where es * k is 2, 4 or 8 bytes: one multiply of the
 * element by 1 + 2^(8 es) + ... per output word (jnp.unpackbits broadcasts each byte 8 times;
 * a byte at a time cost 10x XLA's time) */
#define REP_MUL(WT, ET)                                                                \
  do {                                                                                 \
    WT mult = 0;                                                                       \
    for (int64_t i = 0; i < k; i++) mult = (WT)(mult | (WT)1 << (i * es * 8));         \
    WT *d = (WT *)(void *)dst;                                                         \
    const ET *sp = (const ET *)(const void *)src;                                      \
    for (int64_t j = 0; j < rows; j++) d[j] = (WT)((WT)sp[j * s2] * mult);             \
  } while (0)

EW_FILL_CLONES static void rep_rows(char *dst, const char *src, int es, int64_t s2, int64_t rows, int64_t k) {
  if (es == 4 && k == 3 && s2 == 1) {
    rep3_u32((uint32_t *)(void *)dst, (const uint32_t *)(const void *)src, rows);
    return;
  }
  switch (es * 16 + k) {
    case 24: REP_MUL(uint64_t, uint8_t); return;   /* 1 byte, 8 times */
    case 20: REP_MUL(uint32_t, uint8_t); return;
    case 18: REP_MUL(uint16_t, uint8_t); return;
    case 36: REP_MUL(uint64_t, uint16_t); return;  /* 2 bytes, 4 times */
    case 34: REP_MUL(uint32_t, uint16_t); return;
    case 66: REP_MUL(uint64_t, uint32_t); return;  /* 4 bytes, twice */
    default: break;
  }
  switch (es) {
    case 1: REP_ROWS(uint8_t); break;
    case 2: REP_ROWS(uint16_t); break;
    case 4: REP_ROWS(uint32_t); break;
    case 8: REP_ROWS(uint64_t); break;
    default:
      for (int64_t j = 0; j < rows; j++)
        for (int64_t i = 0; i < k; i++) memcpy(dst + (j * k + i) * es, src + j * s2 * es, (size_t)es);
  }
}
#undef REP_ROWS
#undef REP_MUL

/* idx[j] (offset off) has reached the end of dimension j: back to 0, carrying into the outer
 * dimensions */
static inline void carry(const ew_input *in, int64_t *idx, int64_t *off, int j) {
  int64_t o = *off - in->dims[j] * in->strides[j];
  idx[j] = 0;
  for (int d = j - 1; d >= 0; d--) {
    idx[d]++;
    o += in->strides[d];
    if (idx[d] < in->dims[d]) break;
    o -= in->dims[d] * in->strides[d];
    idx[d] = 0;
  }
  *off = o;
}

/* nb bytes from s to d (not overlapping) in 64-byte moves, the last one overlapping the one
 * before: the rows of a view are short (a stencil's 64 floats), where a memcpy call per row
 * cost more than the copy */
static inline void copy_bytes(char *d, const char *s, int64_t nb) {
  if (nb < 64 || nb > 4096) {
    memcpy(d, s, (size_t)nb);
    return;
  }
  int64_t i = 0;
  for (; i + 64 <= nb; i += 64) memcpy(d + i, s + i, 64);
  if (i < nb) memcpy(d + nb - 64, s + nb - 64, 64);
}

/* Gathers elements [start, start+m) of a broadcast view into dst; returns where they are: dst,
 * or the view's own buffer when they are one contiguous run of it (a broadcast along leading
 * dims: read in place). */
EW_FILL_CLONES static const char *gather(char *dst, const char *src, const ew_input *in,
                                         int64_t start, int64_t m) {
  int es = in->esize, r = in->rank;
  if (r == 0) {
    cj_fill_elems(dst, src, es, m);
    return dst;
  }
  char *out = dst;
  int64_t idx[CJ_MAX_RANK], off = 0, rem = start;
  for (int d = r - 1; d >= 0; d--) {
    idx[d] = rem % in->dims[d];
    rem /= in->dims[d];
    off += idx[d] * in->strides[d];
  }
  int64_t inner = in->dims[r - 1], sin = in->strides[r - 1];
  if (sin == 1 && inner - idx[r - 1] >= m) return src + off * es;
  while (m > 0) {
    if (sin == 0 && inner <= 16 && r >= 2 && idx[r - 1] == 0 && m >= inner) {
      /* whole rows of a short broadcast innermost dim, up to the end of dim r-2 */
      int64_t rows = in->dims[r - 2] - idx[r - 2];
      if (rows > m / inner) rows = m / inner;
      int64_t s2 = in->strides[r - 2];
      rep_rows(dst, src + off * es, es, s2, rows, inner);
      dst += rows * inner * es;
      m -= rows * inner;
      off += rows * s2;
      idx[r - 2] += rows;
      if (idx[r - 2] == in->dims[r - 2]) carry(in, idx, &off, r - 2);
      continue;
    }
    if (sin <= 1 && r >= 2 && idx[r - 1] == 0 && m >= inner) {
      /* whole rows (copied, or filled: a broadcast innermost dim) up to the end of dim r-2,
       * without the carry per row (a reduce's result broadcast along a middle or the last
       * dim: [.., 1, 32] -> [.., 32, 32], [.., 1] -> [.., 32]) */
      int64_t rows = in->dims[r - 2] - idx[r - 2];
      if (rows > m / inner) rows = m / inner;
      int64_t s2 = in->strides[r - 2];
      for (int64_t j = 0; j < rows; j++, dst += inner * es) {
        const char *s = src + (off + j * s2) * es;
        if (sin == 1)
          copy_bytes(dst, s, inner * es);
        else
          cj_fill_elems(dst, s, es, inner);
      }
      m -= rows * inner;
      off += rows * s2;
      idx[r - 2] += rows;
      if (idx[r - 2] == in->dims[r - 2]) carry(in, idx, &off, r - 2);
      continue;
    }
    int64_t run = inner - idx[r - 1];
    if (run > m) run = m;
    const char *s = src + off * es;
    if (sin == 1)
      copy_bytes(dst, s, run * es);
    else if (sin == 0)
      cj_fill_elems(dst, s, es, run);
    else
      strided_elems(dst, s, es, sin, run);
    dst += run * es;
    m -= run;
    off += run * sin;
    idx[r - 1] += run;
    if (idx[r - 1] == inner) carry(in, idx, &off, r - 1);
  }
  return out;
}

/* n copies of the es-byte value v at dst: one element (a stencil row's edge) without a call */
static inline void fill_pad(char *dst, const char *v, int es, int64_t n) {
  if (n == 1 && es == 4)
    memcpy(dst, v, 4);
  else if (n == 1 && es == 8)
    memcpy(dst, v, 8);
  else
    cj_fill_elems(dst, v, es, n);
}

/* n copies of the padding value: the short edges of a row (a pad along [n, m, 3]'s middle dim
 * leaves 3 elements per row) without a call */
static inline void fill_edge(char *dst, const char *v, int es, int64_t n) {
  if (es == 4 && n <= 16) {
    for (int64_t i = 0; i < n; i++) memcpy(dst + i * 4, v, 4);
  } else if (es == 8 && n <= 8) {
    for (int64_t i = 0; i < n; i++) memcpy(dst + i * 8, v, 8);
  } else {
    cj_fill_elems(dst, v, es, n);
  }
}

/* Whole rows [row, row + rows) of a rank-2 bounded view with contiguous rows: the box's columns
 * copied, the edges filled, without gather_bounded's index walk per row (a pad of [24, 23, 3]
 * into [24, 24, 3], collapsed to rows of 72 with 69 inside: the walk cost more than the copy). */
EW_FILL_CLONES static void bounded_rows2(char *dst, const char *src, const ew_input *in, int64_t row, int64_t rows) {
  int es = in->esize;
  int64_t w = in->dims[1], s0 = in->strides[0];
  int64_t c0 = in->lo[1] > 0 ? in->lo[1] : 0, c1 = in->hi[1] < w ? in->hi[1] : w;
  for (int64_t i = row; i < row + rows; i++, dst += w * es) {
    if (i < in->lo[0] || i >= in->hi[0] || c1 <= c0) {
      cj_fill_elems(dst, in->padv, es, w);
      continue;
    }
    copy_bytes(dst + c0 * es, src + (in->off + i * s0 + c0) * es, (c1 - c0) * es);
    if (c0 > 0) fill_edge(dst, in->padv, es, c0);
    if (c1 < w) fill_edge(dst + c1 * es, in->padv, es, w - c1);
  }
}

/* Gathers elements [start, start+m) of a bounded view: per row of the innermost dim, the part
 * inside the box is copied and the rest filled with the padding value. */
EW_FILL_CLONES static void gather_bounded(char *dst, const char *src, const ew_input *in, int64_t start,
                                          int64_t m) {
  int es = in->esize, r = in->rank;
  int64_t idx[CJ_MAX_RANK], rem = start;
  for (int d = r - 1; d >= 0; d--) {
    idx[d] = rem % in->dims[d];
    rem /= in->dims[d];
  }
  int64_t inner = in->dims[r - 1], sin = in->strides[r - 1];
  if (r == 2 && sin == 1 && idx[1] == 0 && m >= inner) {
    int64_t rows = m / inner;
    bounded_rows2(dst, src, in, idx[0], rows);
    dst += rows * inner * es;
    m -= rows * inner;
    idx[0] += rows;
  }
  int64_t ilo = in->lo[r - 1], ihi = in->hi[r - 1];
  while (m > 0) {
    int64_t a = idx[r - 1], run = inner - a;
    if (run > m) run = m;
    int64_t b = a + run, c0 = b, c1 = b, off = in->off;
    bool rows_in = true;
    for (int d = 0; d < r - 1; d++) {
      if (idx[d] < in->lo[d] || idx[d] >= in->hi[d]) rows_in = false;
      off += idx[d] * in->strides[d];
    }
    if (rows_in && ilo < b && ihi > a) {
      c0 = a > ilo ? a : ilo;
      c1 = b < ihi ? b : ihi;
    }
    int64_t first = off + a * sin, last = off + (b - 1) * sin;
    if (c1 > c0 && sin == 1 && first >= 0 && last < in->src_elems) {
      /* the whole run read from the buffer (rows of a shifted stencil: stores stay aligned),
       * then the padding written over the parts outside the box */
      copy_bytes(dst, src + first * es, run * es);
    } else if (c1 > c0) {
      const char *s = src + (off + c0 * sin) * es;
      if (sin == 1)
        copy_bytes(dst + (c0 - a) * es, s, (c1 - c0) * es);
      else
        strided_elems(dst + (c0 - a) * es, s, es, sin, c1 - c0);
    }
    if (c0 > a) fill_pad(dst, in->padv, es, c0 - a);
    if (b > c1) fill_pad(dst + (c1 - a) * es, in->padv, es, b - c1);
    dst += run * es;
    m -= run;
    idx[r - 1] = b;
    for (int d = r - 1; d > 0 && idx[d] == in->dims[d]; d--) {
      idx[d] = 0;
      idx[d - 1]++;
    }
  }
}

typedef struct ew_run {
  const ew_params *p;
  cj_exec_ctx *ctx;
  int64_t origin; /* the element the outputs' bases stand for (a source's run: its start) */
  char *base[MAX_TAB];
} ew_run;

/* a view input's position in row mode: its index (collapsed dims) and element offset */
typedef struct row_pos {
  int64_t idx[ROW_RANK], off;
} row_pos;

static void row_pos_init(const ew_input *in, row_pos *rp, int64_t start) {
  int64_t rem = start;
  rp->off = in->bounded ? in->off : 0;
  for (int d = in->rank - 1; d >= 0; d--) {
    rp->idx[d] = rem % in->dims[d];
    rem /= in->dims[d];
    rp->off += rp->idx[d] * in->strides[d];
  }
}

/* whether the m elements from rp lie in a bounded view's box (unbounded views: always) */
static bool row_in_box(const ew_input *in, const row_pos *rp, int64_t m) {
  if (!in->bounded) return true;
  int r = in->rank;
  for (int d = 0; d < r - 1; d++)
    if (rp->idx[d] < in->lo[d] || rp->idx[d] >= in->hi[d]) return false;
  return rp->idx[r - 1] >= in->lo[r - 1] && rp->idx[r - 1] + m <= in->hi[r - 1];
}

static void row_pos_advance(const ew_input *in, row_pos *rp, int64_t m) {
  int r = in->rank;
  rp->idx[r - 1] += m;
  rp->off += m * in->strides[r - 1];
  if (rp->idx[r - 1] == in->dims[r - 1]) carry(in, rp->idx, &rp->off, r - 1);
}

/* boxed: the chains with boxed steps where there are (flat mode's rows read in place) */
static void run_instrs_as(const ew_params *p, char *const *t, int64_t m, bool boxed) {
  for (int i = 0; i < p->ninstr; i++) {
    const ew_instr *e = &p->instr[i];
    if (boxed && e->boxed)
      e->boxed->fn(e->boxed, t, m);
    else if (e->chain)
      e->chain->fn(e->chain, t, m);
    else
      e->fn(t[e->dst], t[e->src[0]], t[e->src[1]], t[e->src[2]], m, &e->aux);
  }
}
static void run_instrs(const ew_params *p, char *const *t, int64_t m) {
  run_instrs_as(p, t, m, false);
}

/* Row mode: runs of at most a block that never cross a row of the innermost dim; the views
 * (contiguous along it) are read in place, except runs of a bounded view that leave its box,
 * which are gathered into the input's register. */
static void run_rows(ew_run *R, int64_t b0, int64_t b1, char **cur, char *const *regs) {
  const ew_params *p = R->p;
  int nio = p->ninputs + p->noutputs;
  row_pos rp[MAX_INPUTS * 2];
  for (int k = 0; k < p->ninputs; k++)
    if (p->inputs[k].mode == IN_BCAST) row_pos_init(&p->inputs[k], &rp[k], b0);
  int64_t col = b0 % p->row;
  for (int64_t bs = b0; bs < b1;) {
    int64_t m = p->row - col;
    if (m > p->block) m = p->block;
    if (m > b1 - bs) m = b1 - bs;
    /* (outputs are relative to R->origin: a reduce's input run, see cj_ew_src_eval) */
    for (int k = 0; k < nio; k++)
      cur[k] = R->base[k] + (k < p->ninputs ? bs : bs - R->origin) * p->esize[k];
    for (int k = 0; k < p->ninputs; k++) {
      const ew_input *in = &p->inputs[k];
      if (in->mode != IN_BCAST) continue;
      if (row_in_box(in, &rp[k], m)) {
        cur[in->reg] = R->base[k] + rp[k].off * in->esize;
      } else {
        cur[in->reg] = regs[k];
        gather_bounded(regs[k], R->base[k], in, bs, m);
      }
      row_pos_advance(in, &rp[k], m);
    }
    run_instrs(p, cur, m);
    bs += m;
    col += m;
    if (col == p->row) col = 0;
  }
}

/* elements [bs, bs+m) of view input `in` (buffer src) into reg; returns where they are: reg, or
 * the view's own buffer when gather reads them in place */
static char *gather_view(char *reg, const char *src, const ew_input *in, int64_t bs, int64_t m) {
  if (in->bounded) {
    gather_bounded(reg, src, in, bs, m);
    return reg;
  }
  return (char *)(uintptr_t)gather(reg, src, in, bs, m);
}

/* a rank-1 bounded view read in place where its elements are contiguous in its buffer */
static bool run_view(const ew_input *in) {
  return in->mode == IN_BCAST && in->bounded && in->rank == 1 && in->strides[0] == 1;
}

/* the pieces of block [bs, bs + m) that run_blocks runs apart: cut where a rank-1 bounded view
 * enters or leaves its box when that view's box holds at least half the block (a row-shifted
 * padded view: one call inside the box reads it in place, the short pieces outside pad it),
 * so that it is not copied whole; the cuts ascending in cuts, their number returned */
enum { BLOCK_CUTS = 8, CUT_MIN_ELEMS = 64 };
static int block_cuts(const ew_params *p, int64_t bs, int64_t m, int64_t *cuts) {
  int nc = 0;
  for (int k = 0; k < p->ninputs; k++) {
    const ew_input *in = &p->inputs[k];
    if (!run_view(in)) continue;
    int64_t lo = in->lo[0] > bs ? in->lo[0] : bs, hi = in->hi[0] < bs + m ? in->hi[0] : bs + m;
    if (hi - lo < CUT_MIN_ELEMS || (hi - lo) * 2 < m) continue;
    int64_t c2[2] = {lo, hi};
    for (int j = 0; j < 2; j++) {
      int64_t c = c2[j];
      if (c <= bs || c >= bs + m || nc == BLOCK_CUTS) continue;
      int at = 0;
      while (at < nc && cuts[at] < c) at++;
      if (at < nc && cuts[at] == c) continue;
      memmove(cuts + at + 1, cuts + at, sizeof(int64_t) * (size_t)(nc - at));
      cuts[at] = c;
      nc++;
    }
  }
  return nc;
}

/* Blocks of [b0, b1): views gathered into their registers, except a rank-1 bounded view
 * inside its box (read in place); a block is run in pieces at the edges of such views' boxes
 * (block_cuts). */
static void run_blocks(ew_run *R, int64_t b0, int64_t b1, char **cur, char *const *regs) {
  const ew_params *p = R->p;
  for (int64_t bb = b0; bb < b1; bb += p->block) {
    int64_t mb = b1 - bb < p->block ? b1 - bb : p->block;
    int64_t cuts[BLOCK_CUTS + 1];
    int nc = block_cuts(p, bb, mb, cuts);
    cuts[nc] = bb + mb;
    for (int64_t bs = bb, c = 0; c <= nc; bs = cuts[c++]) {
      int64_t m = cuts[c] - bs;
      for (int k = 0; k < p->ninputs + p->noutputs; k++)
        cur[k] = R->base[k] + (k < p->ninputs ? bs : bs - R->origin) * p->esize[k];
      for (int k = 0; k < p->ninputs; k++) {
        const ew_input *in = &p->inputs[k];
        if (in->mode != IN_BCAST) continue;
        if (run_view(in) && bs >= in->lo[0] && bs + m <= in->hi[0]) {
          cur[in->reg] = R->base[k] + (in->off + bs) * in->esize; /* inside the box: in place */
          continue;
        }
        cur[in->reg] = gather_view(regs[k], R->base[k], in, bs, m);
      }
      run_instrs(p, cur, m);
    }
  }
}

/* Flat mode: the elements of columns [0, a) and [b, w) of `rows` rows of w elements at src,
 * packed by columns into dst (column j of them at dst + j * ld elements); columns outside
 * [clo, chi) are *pad instead (a flat view's padding). */
#define FLAT_COL(T)                                                            \
  do {                                                                         \
    T *d = (T *)(void *)dst;                                                   \
    const T *s = (const T *)(const void *)src + c;                             \
    for (int64_t i = 0; i < rows; i++) d[i] = s[i * w];                        \
  } while (0)
/* whether the column copies go through AVX-512 gathers and scatters (ew_chain.h) */
static bool cols_avx512(int es, int64_t w) {
#ifdef CJ_EW_COLS_AVX512
  return (es == 4 || es == 8) && w <= INT32_MAX / 16 && cj_vm_get_isa() == CJ_VM_ISA_AVX512;
#else
  (void)es;
  (void)w;
  return false;
#endif
}
static void flat_pick(char *dst, const char *src, int es, int64_t rows, int64_t w, int64_t a,
                      int64_t b, int64_t clo, int64_t chi, const char *pad, int64_t ld) {
  bool vx = cols_avx512(es, w);
  (void)vx; /* (no AVX-512 build: unused) */
  for (int64_t c = a ? 0 : b; c < w; c = c + 1 == a ? b : c + 1, dst += ld * es) {
    if (c < clo || c >= chi) {
      cj_fill_elems(dst, pad, es, rows);
      continue;
    }
#ifdef CJ_EW_COLS_AVX512
    if (vx) {
      cj_ew_col_copy_avx512((char *)(uintptr_t)src + c * es, dst, es, rows, w, false);
      continue;
    }
#endif
    switch (es) {
      case 4: FLAT_COL(uint32_t); break;
      case 8: FLAT_COL(uint64_t); break;
      case 2: FLAT_COL(uint16_t); break;
      default: strided_elems(dst, src + c * es, es, w, rows);
    }
  }
}
#undef FLAT_COL

/* the inverse of flat_pick (no padding): packed columns back in place */
#define FLAT_UNCOL(T)                                                          \
  do {                                                                         \
    T *d = (T *)(void *)dst + c;                                               \
    const T *s = (const T *)(const void *)src;                                 \
    for (int64_t i = 0; i < rows; i++) d[i * w] = s[i];                        \
  } while (0)
static void flat_put(char *dst, const char *src, int es, int64_t rows, int64_t w, int64_t a,
                     int64_t b) {
  bool vx = cols_avx512(es, w);
  (void)vx; /* (no AVX-512 build: unused) */
  for (int64_t c = a ? 0 : b; c < w; c = c + 1 == a ? b : c + 1, src += rows * es) {
#ifdef CJ_EW_COLS_AVX512
    if (vx) {
      cj_ew_col_copy_avx512(dst + c * es, (char *)(uintptr_t)src, es, rows, w, true);
      continue;
    }
#endif
    switch (es) {
      case 4: FLAT_UNCOL(uint32_t); break;
      case 8: FLAT_UNCOL(uint64_t); break;
      case 2: FLAT_UNCOL(uint16_t); break;
      default:
        for (int64_t i = 0; i < rows; i++) memcpy(dst + (i * w + c) * es, src + i * es, (size_t)es);
    }
  }
}
#undef FLAT_UNCOL

/* packs input k's edge columns of `rows` rows (cur_k: the first) at row q of its packed
 * columns of ld rows */
static void flat_pack_input(const ew_params *p, int k, char *pack, const char *cur_k, int64_t rows,
                            int64_t q, int64_t ld) {
  const ew_input *in = &p->inputs[k];
  int64_t w = p->flat_w;
  char *pk = pack + (int64_t)k * p->reg_bytes + q * in->esize;
  /* (other inputs: every column inside) */
  flat_pick(pk, cur_k, in->esize, rows, w, p->flat_a, p->flat_b, in->flat ? in->clo : 0,
            in->flat ? in->chi : w, in->padv, ld);
}


/* Flat mode over whole rows [r0, r1) inside [flat_g0, flat_g1): every flat view is read in
 * place at its offset (the columns outside its box then read a neighbouring row's elements),
 * the other views are gathered, block by block; then the columns where some flat view pads
 * ([0, a), [b, w)) are computed again, for as many rows as a register holds, from packed copies
 * of every input and written over. Full inputs and flat views are packed before the blocks run
 * (an output may share a full input's buffer), gathered views as their blocks are gathered. */
static void run_flat(ew_run *R, int64_t r0, int64_t r1, char **cur, char *const *regs,
                     char *pack) {
  const ew_params *p = R->p;
  int nin = p->ninputs, nio = nin + p->noutputs;
  int64_t w = p->flat_w, per = p->flat_bulk ? r1 - r0 : p->block / w;
  int64_t edge = p->flat_a + w - p->flat_b;
  /* rows whose edges one packed register holds (boxed: no edges to compute again) */
  int64_t span = p->flat_boxed ? r1 - r0 : p->block / edge;
  char *alt[MAX_TAB];
  for (int64_t s0 = r0; s0 < r1; s0 += span) {
    int64_t s1 = r1 - s0 < span ? r1 : s0 + span;
    for (int k = 0; k < nin && !p->flat_boxed; k++) {
      const ew_input *in = &p->inputs[k];
      if (in->mode == IN_FULL)
        flat_pack_input(p, k, pack, R->base[k] + s0 * w * in->esize, s1 - s0, 0, s1 - s0);
      else if (in->flat)
        flat_pack_input(p, k, pack, R->base[k] + (in->off + s0 * w) * in->esize, s1 - s0, 0,
                        s1 - s0);
    }
    for (int64_t rs = s0; rs < s1; rs += per) {
      int64_t rows = s1 - rs < per ? s1 - rs : per, bs = rs * w, m = rows * w;
      for (int k = 0; k < nio; k++) cur[k] = R->base[k] + bs * p->esize[k];
      for (int k = 0; k < nin; k++) {
        const ew_input *in = &p->inputs[k];
        if (in->mode != IN_BCAST) continue;
        if (in->flat) {
          cur[in->reg] = R->base[k] + (in->off + bs) * in->esize;
          continue;
        }
        cur[in->reg] = gather_view(regs[k], R->base[k], in, bs, m);
        if (!p->flat_boxed) flat_pack_input(p, k, pack, cur[in->reg], rows, rs - s0, s1 - s0);
      }
      run_instrs_as(p, cur, m, p->flat_boxed);
    }
    if (p->flat_boxed) continue;
    memcpy(alt, cur, sizeof(char *) * (size_t)(nio + p->nregs));
    for (int k = 0; k < nio; k++) {
      const ew_input *in = k < nin ? &p->inputs[k] : NULL;
      if (in && in->mode == IN_SCALAR) continue; /* its register holds a block of copies */
      alt[in && in->mode == IN_BCAST ? in->reg : k] = pack + (int64_t)k * p->reg_bytes;
    }
    run_instrs(p, alt, (s1 - s0) * edge);
    for (int k = nin; k < nio; k++)
      flat_put(R->base[k] + s0 * w * p->esize[k], pack + (int64_t)k * p->reg_bytes, p->esize[k],
               s1 - s0, w, p->flat_a, p->flat_b);
  }
}

/* row r of flat view `in` (rows of w elements) into reg: the part inside its box (rank 2: its
 * box's columns, none outside its rows; rank 1: the elements in its range) copied between
 * padding */
static void flat_row(char *reg, const char *src, const ew_input *in, int64_t r, int64_t w) {
  int es = in->esize;
  int64_t e0 = r * w, c0 = e0 + in->clo, c1 = e0 + in->chi; /* elements of the part inside */
  if (in->rank == 1) {
    c0 = in->lo[0] > e0 ? in->lo[0] : e0;
    c1 = in->hi[0] < e0 + w ? in->hi[0] : e0 + w;
  } else if (r < in->lo[0] || r >= in->hi[0]) {
    c1 = c0;
  }
  if (c1 <= c0) c0 = c1 = e0 + w;
  if (c0 > e0) cj_fill_elems(reg, in->padv, es, c0 - e0);
  if (c1 > c0) copy_bytes(reg + (c0 - e0) * es, src + (in->off + c0) * es, (c1 - c0) * es);
  if (c1 < e0 + w) cj_fill_elems(reg + (c1 - e0) * es, in->padv, es, e0 + w - c1);
}

/* Flat boxed mode's rows [r0, r1) outside [flat_g0, flat_g1), a block of rows at a time: a
 * flat view is read in place where those rows of it are (fr0..fr1), else its rows are copied
 * (with their padding), and the other views gathered; the boxed chains pad the columns. */
static void run_flat_rows(ew_run *R, int64_t r0, int64_t r1, char **cur, char *const *regs) {
  const ew_params *p = R->p;
  int64_t w = p->flat_w, per = p->block / w;
  for (int64_t r = r0; r < r1; r += per) {
    int64_t rows = r1 - r < per ? r1 - r : per, bs = r * w;
    for (int k = 0; k < p->ninputs + p->noutputs; k++) cur[k] = R->base[k] + bs * p->esize[k];
    for (int k = 0; k < p->ninputs; k++) {
      const ew_input *in = &p->inputs[k];
      if (in->mode != IN_BCAST) continue;
      if (in->flat && r >= in->fr0 && r + rows <= in->fr1) {
        cur[in->reg] = R->base[k] + (in->off + bs) * in->esize;
      } else if (in->flat) {
        for (int64_t q = 0; q < rows; q++)
          flat_row(regs[k] + q * w * in->esize, R->base[k], in, r + q, w);
        cur[in->reg] = regs[k];
      } else {
        cur[in->reg] = gather_view(regs[k], R->base[k], in, bs, rows * w);
      }
    }
    run_instrs_as(p, cur, rows * w, true);
  }
}

/* the rows [b0, b1) of flat mode outside [flat_g0, flat_g1) */
static void run_flat_edge(ew_run *R, int64_t b0, int64_t b1, char **cur, char *const *regs) {
  if (R->p->flat_boxed)
    run_flat_rows(R, b0 / R->p->flat_w, (b1 + R->p->flat_w - 1) / R->p->flat_w, cur, regs);
  else
    run_blocks(R, b0, b1, cur, regs);
}

static void run_range(ew_run *R, int64_t b0, int64_t b1) {
  const ew_params *p = R->p;
  char *cur[MAX_TAB];
  cj_tls_area *tls = NULL;
  if (p->nregs) {
    tls = cj_tls_claim(R->ctx);
    if (!tls) return; /* cannot happen: areas are sized for every thread */
  }
  for (int k = 0; k < p->ninputs + p->noutputs; k++) cur[k] = R->base[k];
  for (int k = 0; k < p->nregs; k++)
    cur[p->ninputs + p->noutputs + k] = tls->mem + (int64_t)k * p->reg_bytes;
  /* scalar inputs: fill their registers once */
  for (int k = 0; k < p->ninputs; k++) {
    const ew_input *in = &p->inputs[k];
    if (in->mode == IN_SCALAR && in->prefilled) {
      cur[in->reg] = R->base[k];
    } else if (in->mode == IN_SCALAR) {
      int64_t m = p->block < b1 - b0 ? p->block : b1 - b0; /* a source's short run: less */
      cj_fill_elems(cur[in->reg], R->base[k], in->esize, in->one ? 1 : m);
    }
  }
  char *regs[MAX_INPUTS * 2];
  for (int k = 0; k < p->ninputs; k++) regs[k] = cur[p->inputs[k].reg];
  int64_t w = p->flat_w;
  if (p->row > 0) {
    run_rows(R, b0, b1, cur, regs);
  } else if (w > 0 && R->origin == 0 && b0 % w == 0 && (b1 % w == 0 || b1 == p->n)) {
    /* flat mode: the rows outside [flat_g0, flat_g1) as blocks */
    int64_t f0 = p->flat_g0 * w, f1 = p->flat_g1 * w;
    if (f0 < b0) f0 = b0;
    if (f1 > b1) f1 = b1;
    if (f1 <= f0) {
      run_flat_edge(R, b0, b1, cur, regs);
    } else {
      run_flat_edge(R, b0, f0, cur, regs);
      run_flat(R, f0 / w, f1 / w, cur, regs, tls->mem + (int64_t)p->nregs * p->reg_bytes);
      run_flat_edge(R, f1, b1, cur, regs);
    }
  } else {
    run_blocks(R, b0, b1, cur, regs);
  }
  if (tls) cj_tls_release(R->ctx, tls);
}

static void par_body(void *ctx, int64_t b, int64_t e) {
  ew_run *R = ctx;
  int64_t B = R->p->block;
  int64_t hi = e * B < R->p->n ? e * B : R->p->n;
  run_range(R, b * B, hi);
}

static CJ_MUST_USE cj_status k_ew(cj_exec_ctx *ctx, const cj_step *st) {
  const ew_params *p = st->params;
  if (p->n == 0) return NULL; /* an empty result: nothing to compute, and inputs may be NULL */
  ew_run R;
  R.p = p;
  R.ctx = ctx;
  R.origin = 0;
  for (int k = 0; k < p->ninputs; k++)
    R.base[k] = CJ_PTR(ctx, st->in[k]) + (p->inputs[k].bounded ? 0 : p->inputs[k].off * p->esize[k]);
  for (int k = 0; k < p->noutputs; k++) R.base[p->ninputs + k] = CJ_PTR(ctx, st->out[k]);
  if (p->n * (p->flops_per_elem + 1) >= CJ_PAR_MIN_ELEMS * 2 && ctx->pool &&
      cj_pool_size(ctx->pool) > 1) {
    int64_t nblocks = (p->n + p->block - 1) / p->block;
    int64_t grain = (CJ_PAR_MIN_ELEMS / 2) / (p->block * (p->flops_per_elem + 1));
    if (grain < 1) grain = 1;
    cj_pool_parallel_for(ctx->pool, nblocks, grain, par_body, &R);
  } else {
    run_range(&R, 0, p->n);
  }
  return NULL;
}

/* ======================================================================== op mapping */

static bool ew_op_of(cj_op_kind k, cj_ew_op *out) {
  switch (k) {
#define M(a, b)    \
  case CJ_OP_##a:  \
    *out = CJ_EW_##b; \
    return true;
    M(ABS, ABS)
    M(CBRT, CBRT)
    M(CEIL, CEIL)
    M(COSINE, COS)
    M(EXPONENTIAL, EXP)
    M(EXPONENTIAL_MINUS_ONE, EXPM1)
    M(FLOOR, FLOOR)
    M(IMAG, IMAG)
    M(IS_FINITE, IS_FINITE)
    M(LOG, LOG)
    M(LOG_PLUS_ONE, LOG1P)
    M(LOGISTIC, LOGISTIC)
    M(NOT, NOT)
    M(NEGATE, NEG)
    M(POPCNT, POPCNT)
    M(COUNT_LEADING_ZEROS, CLZ)
    M(REAL, REAL)
    M(ROUND_NEAREST_AFZ, ROUND_AFZ)
    M(ROUND_NEAREST_EVEN, ROUND_EVEN)
    M(RSQRT, RSQRT)
    M(SIGN, SIGN)
    M(SINE, SIN)
    M(SQRT, SQRT)
    M(TAN, TAN)
    M(TANH, TANH)
    M(ADD, ADD)
    M(ATAN2, ATAN2)
    M(COMPLEX, COMPLEX)
    M(DIVIDE, DIV)
    M(MAXIMUM, MAX)
    M(MINIMUM, MIN)
    M(MULTIPLY, MUL)
    M(POWER, POW)
    M(REMAINDER, REM)
    M(SHIFT_LEFT, SHL)
    M(SHIFT_RIGHT_ARITHMETIC, SHRA)
    M(SHIFT_RIGHT_LOGICAL, SHRL)
    M(SUBTRACT, SUB)
    M(AND, AND)
    M(OR, OR)
    M(XOR, XOR)
    M(COMPARE, EQ) /* refined by direction */
    M(SELECT, SELECT)
    M(CLAMP, CLAMP)
    M(REDUCE_PRECISION, REDUCE_PRECISION)
    M(CONVERT, COPY) /* special */
    M(CHLO_NEXT_AFTER, NEXT_AFTER)
    M(CHLO_MULHI, MULHI)
    M(CHLO_ZETA, ZETA)
    M(CHLO_POLYGAMMA, POLYGAMMA)
    M(CHLO_ASIN_ACOS_KERNEL, ASIN_ACOS_KERNEL)
    M(CHLO_ACOS, ACOS)
    M(CHLO_ACOSH, ACOSH)
    M(CHLO_ASIN, ASIN)
    M(CHLO_ASINH, ASINH)
    M(CHLO_ATAN, ATAN)
    M(CHLO_ATANH, ATANH)
    M(CHLO_BESSEL_I1E, BESSEL_I1E)
    M(CHLO_CONJ, CONJ)
    M(CHLO_COSH, COSH)
    M(CHLO_SINH, SINH)
    M(CHLO_TAN, TAN)
    M(CHLO_DIGAMMA, DIGAMMA)
    M(CHLO_ERF, ERF)
    M(CHLO_ERF_INV, ERF_INV)
    M(CHLO_ERFC, ERFC)
    M(CHLO_IS_INF, IS_INF)
    M(CHLO_IS_NEG_INF, IS_NEG_INF)
    M(CHLO_IS_POS_INF, IS_POS_INF)
    M(CHLO_LGAMMA, LGAMMA)
    M(CHLO_SQUARE, SQUARE)
#undef M
    default: return false;
  }
}

static bool same_dims(const cj_type *a, const cj_type *b) {
  if (a->rank != b->rank) return false;
  for (int32_t d = 0; d < a->rank; d++)
    if (a->dims[d] != b->dims[d]) return false;
  return true;
}

static bool plain_static_tensor(const cj_type *t) {
  return cj_type_is_static(t) && !cj_type_is_quant(t) && cj_ew_compute_type(t->dtype) != CJ_INVALID;
}

bool cj_lw_ew_is_fusible(const cj_op *op) {
  cj_ew_op e;
  if (!ew_op_of(op->kind, &e)) return false;
  if (op->nresults != 1 || op->nregions) return false;
  const cj_type *rt = op->results[0].type;
  if (!plain_static_tensor(rt)) return false;
  for (uint32_t i = 0; i < op->nopnds; i++) {
    const cj_type *t = op->operands[i]->type;
    if (!plain_static_tensor(t)) return false;
    if (!same_dims(t, rt) && t->rank != 0) return false;
  }
  return op->nopnds >= 1 && op->nopnds <= 3;
}

/* ======================================================================== building */

typedef struct ew_state {
  cj_op *ops[MAX_OPS];
  int nops;
  cj_value *ext[MAX_INPUTS * 2];
  int next;
  const cj_type *shape;
  cj_value *sink;  /* cj_lw_ew_take: the value the flush leaves to its taker */
  cj_ew_src taken; /* what the flush left there */
} ew_state;

void *cj_lw_ew_state_new(void) { return calloc(1, sizeof(ew_state)); }
void cj_lw_ew_state_free(void *s) { free(s); }

bool cj_lw_ew_pending_value(cj_lw *L, cj_value *v) {
  ew_state *S = cj_lw_ew_state(L);
  return S->nops && v->def && v->def->scratch == S && v->def->block == S->ops[0]->block;
}

static bool is_member(ew_state *S, const cj_op *op) {
  for (int i = 0; i < S->nops; i++)
    if (S->ops[i] == op) return true;
  return false;
}

cj_status cj_lw_ew_add(cj_lw *L, cj_op *op) {
  ew_state *S = cj_lw_ew_state(L);
  const cj_type *rt = op->results[0].type;
  if (S->nops && (!same_dims(rt, S->shape) || S->nops >= MAX_OPS ||
                  S->ops[0]->block != op->block))
    CJ_RETURN_IF_ERROR(cj_lw_ew_flush(L));
  /* count new external operands */
  int add = 0;
  for (uint32_t i = 0; i < op->nopnds; i++) {
    cj_value *v = op->operands[i];
    bool known = (v->def && is_member(S, v->def));
    for (int k = 0; k < S->next && !known; k++)
      if (S->ext[k] == v) known = true;
    if (!known) add++;
  }
  if (S->nops && S->next + add > MAX_INPUTS) CJ_RETURN_IF_ERROR(cj_lw_ew_flush(L));
  if (!S->nops) S->shape = rt;
  for (uint32_t i = 0; i < op->nopnds; i++) {
    cj_value *v = op->operands[i];
    bool known = (v->def && is_member(S, v->def));
    for (int k = 0; k < S->next && !known; k++)
      if (S->ext[k] == v) known = true;
    if (!known) S->ext[S->next++] = v;
  }
  op->scratch = S;
  S->ops[S->nops++] = op;
  return NULL;
}

/* per-value bookkeeping while generating instructions */
typedef struct gv {
  cj_value *v;
  uint8_t loc;      /* table index of its compute-type location, 0xff = not yet */
  cj_dtype storage, ct;
  int last_op;      /* last member op (index) using it */
  int internal_uses;
  bool output;
  int out_index;
} gv;

typedef struct gen {
  cj_lw *L;
  ew_state *S;
  gv vals[MAX_OPS + MAX_INPUTS * 2];
  int nvals;
  ew_instr instr[MAX_INSTR];
  int ninstr;
  int ninputs, noutputs;
  int obase; /* table index of output 0 (= number of external inputs) */
  int32_t in_buf[MAX_INPUTS * 2], out_buf[MAX_OPS];
  int64_t block; /* elements per block */
  ew_input inputs[MAX_INPUTS * 2];
  uint8_t esize[MAX_TAB];
  /* registers: free list by liveness */
  bool reg_used[MAX_TAB];
  bool reg_pinned[MAX_TAB];
  int nregs;
  int64_t flops, trans;
  /* in-place bookkeeping: last instruction reading each input's raw table entry */
  int in_last_read[MAX_INPUTS * 2];
  int out_written_by[MAX_OPS];
  /* per instruction: its operands, and its op when a chain may take it (f32/f64 arithmetic
   * on one compute type; -1 otherwise) */
  uint8_t nsrc[MAX_INSTR];
  int16_t iop[MAX_INSTR];
  cj_dtype ict[MAX_INSTR];
} gen;

static gv *find_gv(gen *G, cj_value *v) {
  for (int i = 0; i < G->nvals; i++)
    if (G->vals[i].v == v) return &G->vals[i];
  return NULL;
}

/* table layout: [inputs][outputs][registers]; register table indices are assigned after the
 * counts of inputs and outputs are known, so registers are numbered from REG0 and remapped. */
enum { REG0 = 64 };

static int new_reg(gen *G) {
  for (int r = 0; r < G->nregs; r++)
    if (!G->reg_used[r]) {
      G->reg_used[r] = true;
      return REG0 + r;
    }
  if (G->nregs >= MAX_TAB - REG0) return -1;
  G->reg_used[G->nregs] = true;
  return REG0 + G->nregs++;
}

static void free_reg(gen *G, int t) {
  if (t >= REG0 && !G->reg_pinned[t - REG0]) G->reg_used[t - REG0] = false;
}

static CJ_MUST_USE cj_status emit(gen *G, const cj_op *op, cj_ew_fn fn, const cj_ew_aux *aux, int dst, int s0,
                      int s1, int s2) {
  if (G->ninstr >= MAX_INSTR) return cj_op_error(op, CJ_INTERNAL, "fusion group too large");
  if (!fn) return cj_op_error(op, CJ_UNIMPLEMENTED, "no kernel for this element type");
  ew_instr *e = &G->instr[G->ninstr];
  memset(e, 0, sizeof *e);
  e->fn = fn;
  if (aux) e->aux = *aux;
  e->dst = (uint8_t)dst;
  e->src[0] = (uint8_t)(s0 < 0 ? dst : s0);
  e->src[1] = (uint8_t)(s1 < 0 ? e->src[0] : s1);
  e->src[2] = (uint8_t)(s2 < 0 ? e->src[0] : s2);
  G->nsrc[G->ninstr] = (uint8_t)((s0 >= 0) + (s1 >= 0) + (s2 >= 0));
  G->iop[G->ninstr] = -1;
  int srcs[3] = {s0, s1, s2};
  for (int k = 0; k < 3; k++)
    if (srcs[k] >= 0 && srcs[k] < G->obase) G->in_last_read[srcs[k]] = G->ninstr;
  if (dst >= G->obase && dst < REG0) G->out_written_by[dst - G->obase] = G->ninstr;
  G->ninstr++;
  return NULL;
}

/* *out = a new register holding register src converted from `from` to `to` */
static CJ_MUST_USE cj_status emit_cvt(gen *G, const cj_op *op, cj_dtype from, cj_dtype to, int src, int *out) {
  int r = new_reg(G);
  if (r < 0) return cj_op_error(op, CJ_INTERNAL, "fusion: out of registers");
  cj_ew_aux aux = {0};
  aux.src = from;
  aux.dt = to;
  CJ_RETURN_IF_ERROR(emit(G, op, cj_cvt_lookup(from, to), &aux, r, src, -1, -1));
  *out = r;
  return NULL;
}

/* the 16-bit chain type (ew_chain.h) of storage type dt, CJ_CH_H_NONE when it has none */
static int h16_kind(cj_dtype dt) {
  return dt == CJ_BF16 ? CJ_CH_H_BF16 : dt == CJ_F16 ? CJ_CH_H_F16 : CJ_CH_H_NONE;
}

/* the compute-type location of an operand value (loading external inputs on first use) */
static CJ_MUST_USE cj_status operand_loc(gen *G, const cj_op *op, cj_value *v, int *out) {
  gv *g = find_gv(G, v);
  if (!g) return cj_op_error(op, CJ_INTERNAL, "fusion: unknown operand");
  if (g->loc != 0xff) {
    *out = g->loc;
    return NULL;
  }
  return cj_op_error(op, CJ_INTERNAL, "fusion: operand not available");
}

/* A constant scalar input of a group whose whole index space is one block is expanded at
 * compile time into a constant array of that block: no fill on every call (the scalars of a
 * small loop body's arithmetic). */
static CJ_MUST_USE cj_status prefill_const(gen *G, ew_input *in, int32_t *buf) {
  int64_t n = G->S->shape->num_elements;
  const char *v = cj_lw_const_bytes(G->L, *buf);
  if (!v || n > G->block) return NULL;
  char val[16];
  if (in->esize > sizeof val) return NULL;
  memcpy(val, v + in->off * in->esize, in->esize);
  char *arr = malloc((size_t)(n * in->esize));
  if (!arr) return cj_oom();
  cj_fill_elems(arr, val, in->esize, n);
  *buf = cj_lw_const(G->L, arr, n * in->esize);
  free(arr);
  in->off = 0;
  in->prefilled = true;
  return NULL;
}

/* the bounds and padding value of input `in` when view v is bounded (a pad): its dims are kept
 * as they are (not collapsed) */
static CJ_MUST_USE cj_status bounded_input(gen *G, const cj_op *op, cj_value *v, ew_input *in,
                                           cj_dtype sdt, int32_t buf) {
  const int64_t *lo, *hi;
  int32_t pad;
  if (!cj_lw_view_bounds(G->L, v, &lo, &hi, &pad)) return NULL;
  const char *pv = cj_lw_const_bytes(G->L, pad);
  int es = cj_dtype_bytes(sdt);
  if (!pv || es < 1 || es > (int)sizeof in->padv || v->type->rank < 1)
    return cj_op_error(op, CJ_INTERNAL, "fusion: bad bounded view");
  size_t bytes = sizeof(int64_t) * (size_t)v->type->rank;
  in->lo = cj_lw_alloc(G->L, bytes);
  in->hi = cj_lw_alloc(G->L, bytes);
  if (!in->lo || !in->hi) return cj_oom();
  memcpy(in->lo, lo, bytes);
  memcpy(in->hi, hi, bytes);
  memcpy(in->padv, pv, (size_t)es);
  in->bounded = true;
  in->src_elems = cj_lw_buf_at(G->L, buf)->size / es;
  return NULL;
}

/* Collapses the dims of a bounded view where it stays exact: dims of size 1 inside the box
 * go, and a dim whose box is whole merges into the one before it when the two are contiguous
 * (a stencil's row-shifted slice becomes one run, read in place away from its edges). */
static void collapse_bounded(ew_input *in) {
  int32_t r = 0;
  for (int32_t d = 0; d < in->rank; d++) {
    int64_t n = in->dims[d], st = in->strides[d], lo = in->lo[d], hi = in->hi[d];
    if (n == 1 && lo == 0 && hi == 1 && in->rank > 1) continue;
    if (r > 0 && lo == 0 && hi == n && in->strides[r - 1] == st * n) {
      in->dims[r - 1] *= n;
      in->strides[r - 1] = st;
      in->lo[r - 1] *= n;
      in->hi[r - 1] *= n;
      continue;
    }
    in->dims[r] = n;
    in->strides[r] = st;
    in->lo[r] = lo;
    in->hi[r] = hi;
    r++;
  }
  if (r == 0) { /* every dim of size 1 and inside: one element */
    in->dims[0] = 1;
    in->lo[0] = 0;
    in->hi[0] = 1;
    r = 1;
  }
  in->rank = r;
}

static CJ_MUST_USE cj_status add_input(gen *G, const cj_op *op, gv *g) {
  cj_lw *L = G->L;
  int k = G->ninputs;
  if (k >= MAX_INPUTS * 2) return cj_op_error(op, CJ_INTERNAL, "fusion: too many inputs");
  ew_input *in = &G->inputs[k];
  memset(in, 0, sizeof *in);
  cj_value *v = g->v;
  const cj_type *t = v->type;
  int64_t n = G->S->shape->num_elements;
  cj_dtype sdt = t->dtype;
  int32_t buf;
  if (cj_lw_value_is_view(L, v)) {
    const int64_t *strides;
    cj_lw_virtual_view(L, v, &buf, &sdt, &strides);
    in->off = cj_lw_view_offset(L, v);
    in->mode = IN_BCAST;
    in->rank = t->rank;
    for (int32_t d = 0; d < t->rank; d++) {
      in->dims[d] = t->dims[d];
      in->strides[d] = strides[d];
    }
    CJ_RETURN_IF_ERROR(bounded_input(G, op, v, in, sdt, buf));
    if (in->bounded) collapse_bounded(in);
  } else {
    int32_t nl;
    const int32_t *lv;
    CJ_RETURN_IF_ERROR(cj_lw_leaves(L, op, v, &nl, &lv));
    buf = lv[0];
    if (t->num_elements == n && n > 0) {
      in->mode = IN_FULL;
    } else {
      in->mode = IN_BCAST; /* a rank-0 operand of select/clamp */
      in->rank = 0;
    }
  }
  if (in->mode == IN_BCAST && !in->bounded) {
    /* collapse dims; all-zero strides make a scalar */
    int32_t r = 0;
    int64_t dims[CJ_MAX_RANK], str[CJ_MAX_RANK];
    for (int32_t d = 0; d < in->rank; d++) {
      if (in->dims[d] == 1) continue;
      if (r > 0 && str[r - 1] == in->strides[d] * in->dims[d]) {
        dims[r - 1] *= in->dims[d];
        str[r - 1] = in->strides[d];
      } else {
        dims[r] = in->dims[d];
        str[r] = in->strides[d];
        r++;
      }
    }
    bool scalar = true;
    for (int32_t d = 0; d < r; d++)
      if (str[d] != 0) scalar = false;
    if (scalar) {
      in->mode = IN_SCALAR;
      r = 0;
    } else if (r == 1 && str[0] == 1 && dims[0] == n) {
      in->mode = IN_FULL;
      r = 0;
    }
    in->rank = r;
    for (int32_t d = 0; d < r; d++) {
      in->dims[d] = dims[d];
      in->strides[d] = str[d];
    }
  }
  in->esize = (uint8_t)cj_dtype_bytes(sdt);
  if (in->mode == IN_SCALAR) CJ_RETURN_IF_ERROR(prefill_const(G, in, &buf));
  G->esize[k] = in->esize;
  G->in_buf[k] = buf;
  G->in_last_read[k] = -1;
  G->ninputs++;
  int raw = k;
  if (in->mode != IN_FULL) {
    int r = new_reg(G);
    if (r < 0) return cj_op_error(op, CJ_INTERNAL, "fusion: out of registers");
    in->reg = (uint8_t)r;
    G->reg_pinned[r - REG0] = true; /* gathered at every block start: never reused */
    raw = r;
  }
  g->storage = sdt;
  if (sdt == g->ct) {
    g->loc = (uint8_t)raw;
  } else {
    int r;
    CJ_RETURN_IF_ERROR(emit_cvt(G, op, sdt, g->ct, raw, &r));
    g->loc = (uint8_t)r;
  }
  return NULL;
}

/* places the result of an instruction computing value g in its compute type: returns the table
 * index the instruction should write */
static int result_dst(gen *G, gv *g) {
  if (g->output && g->storage == g->ct) return G->obase + g->out_index; /* read back from out */
  return new_reg(G);
}

/* after the instruction wrote `dst`: round/wrap and store as needed */
static CJ_MUST_USE cj_status finish_value(gen *G, const cj_op *op, gv *g, int dst) {
  if (dst < 0) return cj_op_error(op, CJ_INTERNAL, "fusion: out of registers");
  g->loc = (uint8_t)dst;
  if (g->storage != g->ct) {
    const cj_dtype_info *si = cj_dtype_get(g->storage);
    if (g->internal_uses > 0) {
      cj_ew_aux aux = {0};
      if (si->kind == CJ_DK_FLOAT) {
        aux.dt = g->storage;
        CJ_RETURN_IF_ERROR(emit(G, op, cj_ew_lookup(CJ_EW_ROUND, g->ct), &aux, dst, dst, -1, -1));
        if (g->ct == CJ_F32 && cj_ew_chain_pick_h(h16_kind(g->storage))) { /* a 16-bit chain's step */
          G->iop[G->ninstr - 1] = CJ_EW_ROUND;
          G->ict[G->ninstr - 1] = CJ_F32;
        }
      } else if (si->kind == CJ_DK_SINT || si->kind == CJ_DK_UINT) {
        aux.bits = si->bits;
        CJ_RETURN_IF_ERROR(emit(G, op, cj_ew_lookup(CJ_EW_WRAP, g->ct), &aux, dst, dst, -1, -1));
      }
    }
    if (g->output) {
      cj_ew_aux aux = {0};
      aux.src = g->ct;
      aux.dt = g->storage;
      CJ_RETURN_IF_ERROR(emit(G, op, cj_cvt_lookup(g->ct, g->storage), &aux,
                              G->obase + g->out_index, dst, -1, -1));
    }
  }
  return NULL;
}

/* ======================================================================== chains */

/* The step code (ew_chain.h) of ew op e, with the accumulator second (rev) for binary ops; -1
 * when a chain cannot take it */
static int chain_op(cj_ew_op e, bool rev) {
  int r = rev ? 2 : 0;
  switch (e) {
    case CJ_EW_ADD: return CJ_CH_ADD + r;
    case CJ_EW_SUB: return CJ_CH_SUB + r;
    case CJ_EW_MUL: return CJ_CH_MUL + r;
    case CJ_EW_DIV: return CJ_CH_DIV + r;
    case CJ_EW_MAX: return CJ_CH_MAX + r;
    case CJ_EW_MIN: return CJ_CH_MIN + r;
    case CJ_EW_NEG: return CJ_CH_NEG;
    case CJ_EW_ABS: return CJ_CH_ABS;
    case CJ_EW_SQRT: return CJ_CH_SQRT;
    case CJ_EW_SQUARE: return CJ_CH_SQUARE;
    default: return -1;
  }
}

/* whether chain c reads table entry t */
static bool chain_reads(const cj_ew_chain *c, int t) {
  if (c->first == t) return true;
  for (int s = 0; s < c->nsteps; s++)
    if (cj_ch_reads(c->step[s].op) && c->step[s].src == t) return true;
  return false;
}

/* whether instruction k reads table entry t */
static bool instr_reads(const gen *G, int k, int t) {
  const ew_instr *e = &G->instr[k];
  if (e->chain) return chain_reads(e->chain, t);
  for (int j = 0; j < G->nsrc[k]; j++)
    if (e->src[j] == t) return true;
  return false;
}

/* whether instruction k writes table entry t (its result, or a chain's tee) */
static bool instr_writes(const gen *G, int k, int t) {
  const ew_instr *e = &G->instr[k];
  if (e->dst == t) return true;
  if (e->chain)
    for (int s = 0; s < e->chain->nsteps; s++)
      if (cj_ch_writes(e->chain->step[s].op) && e->chain->step[s].src == t) return true;
  return false;
}

/* the one instruction after k that reads register d (k's result) before d is written again;
 * -1 when none or several do */
static int sole_reader(const gen *G, int k, int d) {
  int j = -1;
  for (int q = k + 1; q < G->ninstr; q++) {
    if (instr_reads(G, q, d)) {
      if (j >= 0) return -1;
      j = q;
    }
    if (instr_writes(G, q, d)) return j;
  }
  return j;
}

/* the first instruction after k that reads entry d before d is written again (-1: none), and
 * in *next the first one after that which reads or writes d (ninstr: none) */
static int first_reader(const gen *G, int k, int d, int *next) {
  int j = -1;
  *next = G->ninstr;
  for (int q = k + 1; q < G->ninstr; q++) {
    bool r = instr_reads(G, q, d);
    if (j >= 0 && (r || instr_writes(G, q, d))) {
      *next = q;
      break;
    }
    if (r) j = q;
    if (instr_writes(G, q, d)) break;
  }
  return j;
}

/* appends instruction k's step to chain c, the accumulator in entry acc; false when k does
 * not read acc in exactly one operand (acc * acc: a square) */
static bool chain_append(const gen *G, cj_ew_chain *c, int k, int acc, const bool *scalar) {
  const ew_instr *e = &G->instr[k];
  cj_ew_op op = (cj_ew_op)G->iop[k];
  cj_ew_chain_step *st = &c->step[c->nsteps];
  if (c->nsteps + 2 > CJ_EW_CHAIN_MAX) return false;
  st->src = 0;
  if (op == CJ_EW_CLAMP) { /* clamp(lo, acc, hi): min(max(acc, lo), hi), as its kernel */
    if (e->src[1] != acc || e->src[0] == acc || e->src[2] == acc) return false;
    c->step[c->nsteps++] = (cj_ew_chain_step){(uint8_t)(CJ_CH_MAX + scalar[e->src[0]]), e->src[0]};
    c->step[c->nsteps++] = (cj_ew_chain_step){(uint8_t)(CJ_CH_MIN + scalar[e->src[2]]), e->src[2]};
    return true;
  }
  if (op == CJ_EW_SELECT) { /* select(pred, x, acc) or select(pred, acc, x) */
    int m = e->src[0], x = e->src[2] == acc ? e->src[1] : e->src[2];
    bool t = e->src[2] == acc; /* acc is the false operand */
    if (m == acc || scalar[m] || x == acc || (!t && e->src[1] != acc)) return false;
    c->step[c->nsteps++] = (cj_ew_chain_step){CJ_CH_MASK, (uint8_t)m, 0};
    c->step[c->nsteps++] = (cj_ew_chain_step){
        (uint8_t)((t ? CJ_CH_SELT : CJ_CH_SELF) + (scalar[x] ? 1 : 0)), (uint8_t)x, 0};
    return true;
  }
  if (op == CJ_EW_ROUND) { /* a 16-bit chain's rounding: one type a chain */
    int hk = h16_kind(e->aux.dt);
    if (e->src[0] != acc || !hk || (c->hk && c->hk != hk)) return false;
    c->hk = (uint8_t)hk;
    st->op = CJ_CH_ROUND;
  } else if (G->nsrc[k] == 1) {
    if (e->src[0] != acc) return false;
    st->op = (uint8_t)chain_op(op, false);
  } else if (e->src[0] == acc && e->src[1] == acc) {
    if (op != CJ_EW_MUL) return false;
    st->op = CJ_CH_SQUARE;
  } else if (e->src[0] == acc || e->src[1] == acc) {
    bool rev = e->src[1] == acc;
    st->src = rev ? e->src[0] : e->src[1];
    st->op = (uint8_t)(chain_op(op, rev) + (scalar[st->src] ? 1 : 0));
  } else {
    return false;
  }
  c->nsteps++;
  return true;
}

/* whether an instruction in (a, b) writes an entry that chain c's first nsteps steps read */
static bool chain_clobbered(const gen *G, const cj_ew_chain *c, int nsteps, int a, int b) {
  for (int q = a + 1; q < b; q++) { /* (its result, or a chain's tees) */
    if (instr_writes(G, q, c->first)) return true;
    for (int s = 0; s < nsteps; s++)
      if (cj_ch_reads(c->step[s].op) && instr_writes(G, q, c->step[s].src)) return true;
  }
  return false;
}

/* chain c = instruction k0 alone (false when a chain cannot start with it) */
static bool chain_start(const gen *G, int k0, cj_ew_chain *c, const bool *scalar) {
  const ew_instr *e = &G->instr[k0];
  int x = G->iop[k0] == CJ_EW_CLAMP ? e->src[1] : G->iop[k0] == CJ_EW_SELECT ? e->src[2] : e->src[0];
  c->nsteps = 0;
  memset(c->step, 0, sizeof c->step);
  c->first = (uint8_t)x;
  c->first_scalar = scalar[x];
  c->hk = CJ_CH_H_NONE;
  c->first_h = c->dst_h = false;
  c->box_w = 0;
  c->kb_stride = 0;
  c->kbits = NULL;
  c->first_box = -1;
  c->nbox = 0;
  if (G->nsrc[k0] == 1 || G->iop[k0] == CJ_EW_CLAMP || G->iop[k0] == CJ_EW_SELECT)
    return chain_append(G, c, k0, x, scalar);
  cj_ew_chain_step *st = &c->step[0];
  st->src = e->src[1];
  st->op = (uint8_t)(chain_op((cj_ew_op)G->iop[k0], false) + (scalar[st->src] ? 1 : 0));
  if (e->src[1] == e->src[0]) { /* x * x: a square; x + x: left to its kernel */
    if (G->iop[k0] != CJ_EW_MUL) return false;
    st->op = CJ_CH_SQUARE;
  }
  c->nsteps = 1;
  return true;
}

/* whether chain c reads a predicate (a MASK step) at entry t: the chain may not write t (its
 * strips would store 4 or 8 bytes per element over predicate bytes not read yet) */
static bool mask_written(const cj_ew_chain *c, int t) {
  for (int s = 0; s < c->nsteps; s++)
    if (c->step[s].op == CJ_CH_MASK && c->step[s].src == t) return true;
  return false;
}

/* Grows a chain from instruction k0: each next member is the sole reader of the previous one's
 * result (a register), of the same type, and the entries the chain reads are not written
 * before its last member, where it runs. Returns the number of members (their indices in
 * mem). */
static int chain_grow(const gen *G, int k0, cj_ew_chain *c, int *mem, const bool *scalar) {
  if (!chain_start(G, k0, c, scalar)) return 0;
  int n = 0, k = k0, limit = G->ninstr; /* members lie before limit: tees' other users */
  mem[n++] = k0;
  for (;;) {
    int d = G->instr[k].dst, next = G->ninstr;
    if (d >= REG0 && G->reg_pinned[d - REG0]) break;
    int j = d >= REG0 ? sole_reader(G, k, d) : -1;
    bool tee = j < 0; /* d also read elsewhere, or a group output: stored, the chain goes on */
    if (tee) j = first_reader(G, k, d, &next);
    if (j < 0 || j >= limit || G->iop[j] < 0 || G->instr[j].chain || G->ict[j] != G->ict[k0] ||
        (tee && c->nsteps + 3 > CJ_EW_CHAIN_MAX))
      break;
    int saved = c->nsteps;
    if (tee) c->step[c->nsteps++] = (cj_ew_chain_step){CJ_CH_TEE, (uint8_t)d, 0};
    if (!chain_append(G, c, j, d, scalar)) {
      c->nsteps = saved;
      break;
    }
    if (tee && next < limit) limit = next;
    if (chain_clobbered(G, c, saved, k, j) || /* (j's own operands: read at j, as before) */
        mask_written(c, G->instr[j].dst) || (tee && mask_written(c, d))) {
      c->nsteps = saved;
      break;
    }
    mem[n++] = j;
    k = j;
  }
  return n;
}

/* removes the instructions at the n ascending indices mem */
static void drop_instrs(gen *G, const int *mem, int n) {
  int w = 0, m = 0;
  for (int q = 0; q < G->ninstr; q++) {
    if (m < n && q == mem[m]) {
      m++;
      continue;
    }
    G->instr[w] = G->instr[q];
    G->nsrc[w] = G->nsrc[q];
    G->iop[w] = G->iop[q];
    G->ict[w] = G->ict[q];
    w++;
  }
  G->ninstr = w;
}

/* instruction x as a chain without a side accumulator of its own (a chain instruction, or one
 * a chain can take), nor a select (its predicate goes through the side accumulator) */
static bool side_chain(const gen *G, int x, cj_dtype ct, cj_ew_chain *cx, const bool *scalar) {
  const ew_instr *e = &G->instr[x];
  if (e->chain) {
    *cx = *e->chain;
    if (e->chain->fn != cj_ew_chain_pick(ct)) return false;
  } else if (G->iop[x] < 0 || G->ict[x] != ct || !chain_start(G, x, cx, scalar)) {
    return false;
  }
  for (int s = 0; s < cx->nsteps; s++)
    if (cx->step[s].op >= CJ_CH_PUSH) return false;
  return true;
}

/* Step m of chain y reads an array that another chain (or chainable instruction) x computes
 * for it alone, and the entries x reads are not written before y: x's steps move into y, on
 * the accumulator, the one of y going to the side (push x's start; x's steps; y's op with the
 * side). Returns x's index, or -1. */
static int side_fold(gen *G, int y, int m, const bool *scalar) {
  cj_ew_chain *c = G->instr[y].chain;
  int op = c->step[m].op, t = c->step[m].src;
  if (op >= CJ_CH_NEG || ((op & 7) != 0 && (op & 7) != 2) || t < REG0 || G->reg_pinned[t - REG0])
    return -1;
  int x = y - 1, reads = c->first == t;
  for (int s = 0; s < c->nsteps; s++) reads += cj_ch_reads(c->step[s].op) && c->step[s].src == t;
  while (x >= 0 && !instr_writes(G, x, t)) x--;
  cj_ew_chain cx;
  if (x < 0 || reads != 1 || sole_reader(G, x, t) != y ||
      !side_chain(G, x, G->ict[y], &cx, scalar) || chain_clobbered(G, &cx, cx.nsteps, x, y) ||
      c->nsteps + cx.nsteps + 1 > CJ_EW_CHAIN_MAX)
    return -1;
  for (int s = 0; s < m; s++) /* x's steps run after y's tees before m: none may write x's reads */
    if (cj_ch_writes(c->step[s].op) && chain_reads(&cx, c->step[s].src)) return -1;
  if (cx.hk && c->hk && cx.hk != c->hk) return -1; /* (16-bit chains: one type) */
  if (cx.hk) c->hk = cx.hk;
  cj_ew_chain_step rest[CJ_EW_CHAIN_MAX];
  int nrest = c->nsteps - m - 1;
  memcpy(rest, &c->step[m + 1], sizeof(cj_ew_chain_step) * (size_t)nrest);
  int w = m;
  c->step[w++] = (cj_ew_chain_step){(uint8_t)(cx.first_scalar ? CJ_CH_PUSH_SCALAR : CJ_CH_PUSH), cx.first};
  for (int s = 0; s < cx.nsteps; s++) c->step[w++] = cx.step[s];
  /* acc OP x becomes side OP acc, x OP acc becomes acc OP side */
  c->step[w++] = (cj_ew_chain_step){(uint8_t)((op & ~7) + ((op & 7) == 0 ? 5 : 4)), 0};
  memcpy(&c->step[w], rest, sizeof(cj_ew_chain_step) * (size_t)nrest);
  c->nsteps = w + nrest;
  return x;
}

/* whether step m of chain c lies between a push and the step that takes the side back */
static bool in_side(const cj_ew_chain *c, int m) {
  bool open = false;
  for (int s = 0; s < m; s++) {
    int op = c->step[s].op;
    if (op == CJ_CH_PUSH || op == CJ_CH_PUSH_SCALAR) open = true;
    else if (op < CJ_CH_NEG && (op & 7) >= 4) open = false;
  }
  return open;
}

static uint8_t remap_entry(uint8_t t, int rbase) {
  return t >= REG0 ? (uint8_t)(t - REG0 + rbase) : t;
}
static void chain_remap(cj_ew_chain *c, int rbase) {
  c->dst = remap_entry(c->dst, rbase);
  c->first = remap_entry(c->first, rbase);
  for (int s = 0; s < c->nsteps; s++) c->step[s].src = remap_entry(c->step[s].src, rbase);
}

/* ---- 16-bit chains (ew_chain.h): the converts around them folded in ---- */

/* whether instruction k converts 16-bit type hk (any when CJ_CH_H_NONE) to f32 (in) or f32 to it */
static bool is_h16_cvt(const gen *G, int k, int hk, bool in) {
  const ew_instr *e = &G->instr[k];
  if (e->chain || G->iop[k] >= 0) return false;
  cj_dtype h = in ? e->aux.src : e->aux.dt, f = in ? e->aux.dt : e->aux.src;
  int kh = h16_kind(h);
  return kh && (!hk || kh == hk) && f == CJ_F32 && e->fn == cj_cvt_lookup(e->aux.src, e->aux.dt) &&
         cj_ew_chain_pick_h(kh);
}

/* the instruction before y that last writes entry t, when it is a convert from 16-bit type hk
 * read by y alone whose source is not written again before y reads it; else -1 */
static int h16_cvt_in(const gen *G, int y, int t, int hk) {
  if (t < REG0 || G->reg_pinned[t - REG0]) return -1;
  int x = y - 1;
  while (x >= 0 && !instr_writes(G, x, t)) x--;
  if (x < 0 || !is_h16_cvt(G, x, hk, true) || sole_reader(G, x, t) != y) return -1;
  int src = G->instr[x].src[0];
  if (src == G->instr[y].dst) return -1; /* (read as 16-bit where y stores f32: a reused register) */
  for (int q = x + 1; q < y; q++)
    if (instr_writes(G, q, src)) return -1;
  const cj_ew_chain *c = G->instr[y].chain;
  for (int s = 0; c && s < c->nsteps; s++) /* (a tee of y) */
    if (cj_ch_writes(c->step[s].op) && c->step[s].src == src) return -1;
  return x;
}

/* the instruction after y that alone reads y's result (a register) and converts it to 16-bit
 * type hk (any when CJ_CH_H_NONE) into an entry nothing reads or writes in between; else -1 */
static int h16_cvt_out(const gen *G, int y, int hk) {
  int d = G->instr[y].dst;
  if (d < REG0 || G->reg_pinned[d - REG0]) return -1;
  int j = sole_reader(G, y, d);
  if (j < 0 || !is_h16_cvt(G, j, hk, false)) return -1;
  int o = G->instr[j].dst;
  if (G->instr[y].chain && chain_reads(G->instr[y].chain, o)) return -1;
  for (int q = y + 1; q < j; q++)
    if (instr_reads(G, q, o) || instr_writes(G, q, o)) return -1;
  return j;
}

/* whether instruction k alone, as a chain, would take a convert of its operands or result
 * (then a one-member chain saves passes: an add of two bf16 arrays to bf16 is one) */
static bool h16_single(const gen *G, int k) {
  if (G->ict[k] != CJ_F32) return false;
  if (h16_cvt_out(G, k, CJ_CH_H_NONE) >= 0) return true;
  for (int j = 0; j < G->nsrc[k]; j++)
    if (h16_cvt_in(G, k, G->instr[k].src[j], CJ_CH_H_NONE) >= 0) return true;
  return false;
}

/* Folds into each f32 chain the converts from 16-bit arrays that only it reads (its steps read
 * the 16-bit entries, converting on load) and the convert of its result to a 16-bit entry (it
 * stores that), one 16-bit type a chain; such chains run the 16-bit kernel. */
static void fold_h16(gen *G, const bool *scalar) {
  for (int y = 0; y < G->ninstr; y++) {
    cj_ew_chain *c = G->instr[y].chain;
    if (!c || c->fn != cj_ew_chain_pick(CJ_F32)) continue;
    for (int s = -1; s < c->nsteps; s++) {
      int t = s < 0 ? c->first : c->step[s].src;
      if (s < 0 ? c->first_h : (!cj_ch_reads(c->step[s].op) || c->step[s].h)) continue;
      int x = h16_cvt_in(G, y, t, c->hk);
      if (x < 0) continue;
      int src = G->instr[x].src[0];
      c->hk = (uint8_t)h16_kind(G->instr[x].aux.src);
      /* every read of t: of src, converted (a scalar input's element 0) */
      if (c->first == t) {
        c->first = (uint8_t)src;
        c->first_h = true;
        c->first_scalar = scalar[src];
      }
      for (int r = 0; r < c->nsteps; r++) {
        cj_ew_chain_step *st = &c->step[r];
        if (!cj_ch_reads(st->op) || st->src != t) continue;
        st->src = (uint8_t)src;
        st->h = 1;
        if (scalar[src] && st->op == CJ_CH_PUSH) st->op = CJ_CH_PUSH_SCALAR;
        else if (scalar[src] && st->op < CJ_CH_NEG && ((st->op & 7) == 0 || (st->op & 7) == 2))
          st->op = (uint8_t)(st->op + 1);
      }
      drop_instrs(G, &x, 1);
      y--;
    }
    int j = h16_cvt_out(G, y, c->hk);
    if (j >= 0) {
      c->hk = (uint8_t)h16_kind(G->instr[j].aux.dt);
      c->dst_h = true;
      c->dst = G->instr[y].dst = G->instr[j].dst;
      drop_instrs(G, &j, 1);
    }
  }
  for (int y = 0; y < G->ninstr; y++) {
    cj_ew_chain *c = G->instr[y].chain;
    if (c && c->hk) c->fn = cj_ew_chain_pick_h(c->hk);
  }
}

/* Merges the chains of the instruction list into chain instructions, each where its last
 * member was (the others removed); then redoes the in-place bookkeeping. */
static CJ_MUST_USE cj_status make_chains(gen *G) {
  bool scalar[MAX_TAB] = {false};
  for (int k = 0; k < G->ninputs; k++)
    if (G->inputs[k].mode == IN_SCALAR) scalar[G->inputs[k].reg] = true;
  cj_ew_chain c;
  int mem[MAX_INSTR];
  for (int k = 0; k < G->ninstr; k++) {
    if (G->iop[k] < 0 || G->instr[k].chain) continue;
    cj_ew_chain_fn fn = cj_ew_chain_pick(G->ict[k]);
    if (!fn) continue;
    int n = chain_grow(G, k, &c, mem, scalar);
    if (n < 1 || (n < 2 && !h16_single(G, k))) continue;
    cj_ew_chain *cc = cj_lw_alloc(G->L, sizeof *cc);
    if (!cc) return cj_oom();
    *cc = c;
    cc->fn = fn;
    ew_instr *last = &G->instr[mem[n - 1]];
    cc->dst = last->dst;
    last->chain = cc;
    last->fn = NULL;
    G->iop[mem[n - 1]] = -1;
    drop_instrs(G, mem, n - 1); /* the other members */
    k--;                        /* the instruction now at k is another one */
  }
  /* a chain's array operand computed for it alone by another chain: one chain */
  for (int y = 0; y < G->ninstr; y++) {
    if (!G->instr[y].chain) continue;
    for (int m = 0; m < G->instr[y].chain->nsteps; m++) {
      if (in_side(G->instr[y].chain, m)) continue;
      int x = side_fold(G, y, m, scalar);
      if (x < 0) continue;
      drop_instrs(G, &x, 1);
      y--;
      m = -1; /* (the steps moved: look again from the start) */
    }
  }
  fold_h16(G, scalar);
  for (int j = 0; j < G->ninputs; j++) {
    ew_input *in = &G->inputs[j];
    G->in_last_read[j] = -1;
    in->one = in->mode == IN_SCALAR && !in->prefilled;
    for (int q = 0; q < G->ninstr && in->one; q++)
      if (!G->instr[q].chain && instr_reads(G, q, in->reg)) in->one = false;
  }
  for (int q = 0; q < G->ninstr; q++) {
    for (int j = 0; j < G->ninputs; j++)
      if (instr_reads(G, q, j)) G->in_last_read[j] = q;
    int d = G->instr[q].dst;
    if (d >= G->obase && d < REG0) G->out_written_by[d - G->obase] = q;
    const cj_ew_chain *c = G->instr[q].chain;
    for (int s = 0; c && s < c->nsteps; s++) /* a tee's output: before the chain's reads */
      if (cj_ch_writes(c->step[s].op) && c->step[s].src >= G->obase && c->step[s].src < REG0)
        G->out_written_by[c->step[s].src - G->obase] = q - 1;
  }
  return NULL;
}

static bool is_transcendental(cj_ew_op e) {
  switch (e) {
    case CJ_EW_SQRT: case CJ_EW_RSQRT: case CJ_EW_CBRT: case CJ_EW_EXP: case CJ_EW_EXPM1:
    case CJ_EW_LOG: case CJ_EW_LOG1P: case CJ_EW_LOGISTIC: case CJ_EW_SIN: case CJ_EW_COS:
    case CJ_EW_TAN: case CJ_EW_TANH: case CJ_EW_POW: case CJ_EW_ATAN2: case CJ_EW_ERF:
    case CJ_EW_ERFC: case CJ_EW_ERF_INV: case CJ_EW_LGAMMA: case CJ_EW_DIGAMMA:
    case CJ_EW_BESSEL_I1E: case CJ_EW_ASIN: case CJ_EW_ACOS: case CJ_EW_ATAN: case CJ_EW_ASINH:
    case CJ_EW_ACOSH: case CJ_EW_ATANH: case CJ_EW_SINH: case CJ_EW_COSH: case CJ_EW_ZETA:
    case CJ_EW_POLYGAMMA: case CJ_EW_ASIN_ACOS_KERNEL:
      return true;
    default: return false;
  }
}

static CJ_MUST_USE cj_status gen_op(gen *G, int oi) {
  cj_op *op = G->S->ops[oi];
  cj_ew_op e;
  ew_op_of(op->kind, &e);
  gv *res = find_gv(G, &op->results[0]);
  int src[3] = {-1, -1, -1};
  cj_dtype ct_in = CJ_INVALID;
  for (uint32_t i = 0; i < op->nopnds; i++) {
    gv *g = find_gv(G, op->operands[i]);
    if (!g) return cj_op_error(op, CJ_INTERNAL, "fusion: unknown operand");
    if (g->loc == 0xff) CJ_RETURN_IF_ERROR(add_input(G, op, g));
    CJ_RETURN_IF_ERROR(operand_loc(G, op, op->operands[i], &src[i]));
  }
  /* the operand compute type that selects the kernel */
  uint32_t key = (op->kind == CJ_OP_SELECT) ? 1 : 0;
  ct_in = find_gv(G, op->operands[key])->ct;
  cj_ew_aux aux = {0};
  aux.bits = cj_dtype_bits(op->operands[key]->type->dtype);
  cj_ew_fn fn = NULL;
  if (op->kind == CJ_OP_CONVERT) {
    /* value conversion from the operand's (exact) compute value to the result's storage */
    cj_dtype sd = res->storage;
    aux.src = ct_in;
    aux.dt = sd;
    fn = cj_cvt_lookup(ct_in, sd);
    if (!fn) return cj_op_error(op, CJ_UNIMPLEMENTED, "unsupported conversion");
    int dst;
    if (sd == res->ct) {
      dst = result_dst(G, res);
      CJ_RETURN_IF_ERROR(emit(G, op, fn, &aux, dst, src[0], -1, -1));
      CJ_RETURN_IF_ERROR(finish_value(G, op, res, dst));
    } else {
      int raw = res->output ? G->obase + res->out_index : new_reg(G);
      if (raw < 0) return cj_op_error(op, CJ_INTERNAL, "fusion: out of registers");
      CJ_RETURN_IF_ERROR(emit(G, op, fn, &aux, raw, src[0], -1, -1));
      if (res->internal_uses > 0) {
        int comp;
        CJ_RETURN_IF_ERROR(emit_cvt(G, op, sd, res->ct, raw, &comp));
        res->loc = (uint8_t)comp;
      } else {
        res->loc = (uint8_t)raw;
      }
      if (raw >= REG0 && res->internal_uses > 0) free_reg(G, raw);
    }
  } else {
    if (op->kind == CJ_OP_COMPARE) {
      int32_t dir = 0, ctype = -1;
      cj_op_get_enum(op, "comparison_direction", CJ_EK_COMPARISON_DIRECTION, &dir);
      cj_op_get_enum(op, "compare_type", CJ_EK_COMPARISON_TYPE, &ctype);
      bool total = ctype == CJ_COMPARISON_TYPE_TOTALORDER &&
                   (ct_in == CJ_F32 || ct_in == CJ_F64);
      static const cj_ew_op dirs[6] = {CJ_EW_EQ, CJ_EW_NE, CJ_EW_GE, CJ_EW_GT, CJ_EW_LE, CJ_EW_LT};
      static const cj_ew_op tdirs[6] = {CJ_EW_TEQ, CJ_EW_TNE, CJ_EW_TGE,
                                        CJ_EW_TGT, CJ_EW_TLE, CJ_EW_TLT};
      if (dir < 0 || dir > 5) return cj_op_error(op, CJ_INVALID_ARGUMENT, "bad comparison");
      e = total ? tdirs[dir] : dirs[dir];
    } else if (op->kind == CJ_OP_REDUCE_PRECISION) {
      int64_t eb = 0, mb = 0;
      cj_op_get_i64(op, "exponent_bits", &eb);
      cj_op_get_i64(op, "mantissa_bits", &mb);
      aux.ebits = (int32_t)eb;
      aux.mbits = (int32_t)mb;
    } else if (op->kind == CJ_OP_CHLO_SQUARE && ct_in != CJ_F32 && ct_in != CJ_F64 &&
               ct_in != CJ_C64 && ct_in != CJ_C128) {
      e = CJ_EW_MUL;
      src[1] = src[0];
    }
    fn = cj_ew_lookup(e, ct_in);
    if (!fn) {
      char tb[64];
      const char *tn = cj_dtype_get(op->operands[key]->type->dtype)->mlir;
      snprintf(tb, sizeof tb, "%s", tn ? tn : "?");
      return cj_op_error(op, CJ_UNIMPLEMENTED, "no CPU kernel for %s on %s", cj_ew_name(e), tb);
    }
    int dst = result_dst(G, res);
    CJ_RETURN_IF_ERROR(emit(G, op, fn, &aux, dst, src[0], src[1], src[2]));
    if ((ct_in == CJ_F32 || ct_in == CJ_F64) && res->ct == ct_in &&
        (chain_op(e, false) >= 0 || e == CJ_EW_CLAMP || e == CJ_EW_SELECT)) {
      G->iop[G->ninstr - 1] = (int16_t)e;
      G->ict[G->ninstr - 1] = ct_in;
    }
    CJ_RETURN_IF_ERROR(finish_value(G, op, res, dst));
    G->flops += 1;
    if (is_transcendental(e)) G->trans += 1;
  }
  /* free registers of operands whose last use was this op */
  for (uint32_t i = 0; i < op->nopnds; i++) {
    gv *g = find_gv(G, op->operands[i]);
    if (g->last_op == oi && g->loc >= REG0) {
      bool still = false; /* the same value twice in this op */
      for (uint32_t j = 0; j < i; j++)
        if (op->operands[j] == op->operands[i]) still = true;
      if (!still) free_reg(G, g->loc);
    }
  }
  if (res->internal_uses == 0 && res->loc >= REG0) free_reg(G, res->loc);
  return NULL;
}

/* Input j is a view with an offset, or another input reads the same buffer (a slice or a
 * broadcast of it, at other indices): writing an output over it in place would change what the
 * other reads, block after block. */
static bool shares_buffer(const gen *G, int nin, int j) {
  if (G->inputs[j].off != 0) return true;
  for (int k = 0; k < nin; k++)
    if (k != j && G->in_buf[k] == G->in_buf[j]) return true;
  return false;
}

/* The row length for row mode (run_rows) when the group reads a view of rows long enough and
 * every view it reads is contiguous along whole rows; else 0 (blocks, views gathered). */
static int64_t row_mode(const cj_type *shape, const ew_input *inp, int nin, int64_t max_es) {
  if (shape->rank < 1) return 0;
  int64_t w = shape->dims[shape->rank - 1];
  if (w <= 0 || w * max_es < ROW_MIN_BYTES) return 0;
  bool any = false;
  for (int k = 0; k < nin; k++) {
    const ew_input *in = &inp[k];
    if (in->mode != IN_BCAST) continue;
    int r = in->rank;
    if (r < 1 || r > ROW_RANK || in->strides[r - 1] != 1 || in->dims[r - 1] % w != 0) return 0;
    any = true;
  }
  return any ? w : 0;
}

/* Flat mode (run_flat) for a group whose rows are short and which reads bounded views whose
 * element e lies at offset off + e of their buffer (a stencil's shifted slices of a pad: rank 1,
 * or rows as long as the group's with columns cut off): rows where they stay inside their
 * buffer are read in place, and the few columns outside some view's box computed again.
 * Marks the flat views and sets the block to whole rows; no change when it does not apply. */
static void flat_mode(ew_params *p, ew_input *inp, int nin, const cj_type *shape, int nregs) {
  p->flat_w = 0;
  if (p->row > 0 || shape->rank < 1 || nregs == 0) return;
  int64_t n = p->n, w = shape->dims[shape->rank - 1];
  if (w < 2 || n < w || w > p->block) return; /* (blocks of whole rows, never longer) */
  int64_t g0 = 0, g1 = n / w, a = 0, b = w;
  bool cols = false;
  for (int k = 0; k < nin; k++) {
    ew_input *in = &inp[k];
    if (in->mode != IN_BCAST || !in->bounded) continue;
    int64_t r0, r1, clo = 0, chi = w;
    if (in->rank == 1 && in->strides[0] == 1 && in->dims[0] == n) {
      r0 = (in->lo[0] + w - 1) / w;
      r1 = in->hi[0] / w;
    } else if (in->rank == 2 && in->dims[1] == w && in->strides[1] == 1 && in->strides[0] == w) {
      r0 = in->lo[0];
      r1 = in->hi[0];
      clo = in->lo[1];
      chi = in->hi[1];
    } else {
      continue; /* gathered, as in the other modes */
    }
    /* whole rows read in place stay inside the buffer */
    int64_t m0 = in->off >= 0 ? 0 : (-in->off + w - 1) / w, m1 = (in->src_elems - in->off) / w;
    if (r0 < m0) r0 = m0;
    if (r1 > m1) r1 = m1;
    in->flat = true;
    in->clo = clo;
    in->chi = chi;
    in->fr0 = r0;
    in->fr1 = r1;
    if (r0 > g0) g0 = r0;
    if (r1 < g1) g1 = r1;
    if (clo > a) a = clo;
    if (chi < b) b = chi;
    if (clo > 0 || chi < w) cols = true;
  }
  if (!cols || g1 <= g0 || a >= b || (a + w - b) * 4 > w) {
    for (int k = 0; k < nin; k++) inp[k].flat = false;
    return;
  }
  int64_t per = p->block / w;
  p->block = (per > 1 ? per : 1) * w;
  p->flat_w = w;
  p->flat_g0 = g0;
  p->flat_g1 = g1;
  p->flat_a = a;
  p->flat_b = b;
}

/* whether chain c reads the flat views (flat_of: the input of an entry, -1: none) only where a
 * boxed operand can: an array operand of a binary step, or its start */
static bool box_readable(const cj_ew_chain *c, const int *flat_of) {
  if (flat_of[c->first] >= 0 && c->first_scalar) return false;
  for (int s = 0; s < c->nsteps; s++) {
    int op = c->step[s].op;
    if (!cj_ch_reads(op) || flat_of[c->step[s].src] < 0) continue;
    if (op >= CJ_CH_NEG || ((op & 7) != 0 && (op & 7) != 2)) return false;
  }
  return true;
}

/* chain c's boxed copy (ew_chain.h): its array operands that are flat views with padded
 * columns read through boxes, with their table of lane bits; false when it needs more boxes
 * than a chain has */
static CJ_MUST_USE cj_status box_chain(cj_lw *L, cj_ew_chain *c, const ew_params *p,
                                       const int *flat_of, bool *ok) {
  int8_t box_of[MAX_INPUTS];
  memset(box_of, -1, sizeof box_of);
  *ok = false;
  if (c->hk) return NULL; /* (16-bit chains read no boxes) */
  c->box_w = (int32_t)p->flat_w;
  c->nbox = 0;
  int es = 0;
  for (int s = -1; s < c->nsteps; s++) {
    int t = s < 0 ? c->first : c->step[s].src, op = s < 0 ? 0 : c->step[s].op;
    int k = flat_of[t];
    if (k < 0 || (s >= 0 && !cj_ch_reads(op))) continue;
    const ew_input *in = &p->inputs[k];
    if (in->clo <= 0 && in->chi >= p->flat_w) continue; /* no padded column */
    es = in->esize;
    if (box_of[k] < 0) {
      if (c->nbox == CJ_EW_CHAIN_BOXES) return NULL;
      cj_ew_chain_box *b = &c->box[c->nbox];
      b->clo = (int32_t)in->clo;
      b->chi = (int32_t)in->chi;
      b->pad = 0;
      memcpy(&b->pad, in->padv, in->esize);
      box_of[k] = c->nbox++;
    }
    if (s < 0) {
      c->first_box = box_of[k];
    } else {
      c->step[s].op = (uint8_t)((op & ~7) + ((op & 7) == 0 ? 6 : 7));
      c->step[s].box = (uint8_t)box_of[k];
    }
  }
  *ok = true;
  if (!c->nbox) return NULL;
  int lanes, strip;
  cj_ew_chain_shape(es, &lanes, &strip);
  uint16_t *kt = cj_lw_alloc(L, sizeof(uint16_t) * (size_t)cj_ew_chain_box_entries(c, lanes, strip));
  if (!kt) return cj_oom();
  cj_ew_chain_box_table(c, kt, lanes, strip);
  return NULL;
}

/* Flat mode without the edge columns pass (flat_boxed): when every instruction that reads a
 * flat view with padded columns is a chain that can read it through a box, each such chain
 * gets a boxed copy, which the rows read in place run (rows of any length: a vector may hold
 * the end of one and the start of the next, ew_chain.h: kbits). */
static CJ_MUST_USE cj_status flat_boxes(cj_lw *L, ew_params *p, ew_input *inp, int nin) {
  p->flat_boxed = false;
  p->flat_bulk = false;
  if (!p->flat_w || p->flat_w > INT32_MAX) return NULL;
  int flat_of[MAX_TAB];
  for (int t = 0; t < MAX_TAB; t++) flat_of[t] = -1;
  for (int k = 0; k < nin; k++)
    if (inp[k].flat && (inp[k].esize == 4 || inp[k].esize == 8))
      flat_of[inp[k].reg] = k;
    else if (inp[k].flat)
      return NULL;
  for (int i = 0; i < p->ninstr; i++) {
    const ew_instr *e = &p->instr[i];
    if (e->chain ? !box_readable(e->chain, flat_of)
                 : flat_of[e->src[0]] >= 0 || flat_of[e->src[1]] >= 0 || flat_of[e->src[2]] >= 0)
      return NULL;
  }
  cj_ew_chain *bx[MAX_INSTR] = {NULL};
  for (int i = 0; i < p->ninstr; i++) {
    if (!p->instr[i].chain) continue;
    bx[i] = cj_lw_alloc(L, sizeof *bx[i]);
    if (!bx[i]) return cj_oom();
    *bx[i] = *p->instr[i].chain;
    bool ok;
    CJ_RETURN_IF_ERROR(box_chain(L, bx[i], p, flat_of, &ok));
    if (!ok) return NULL;
  }
  for (int i = 0; i < p->ninstr; i++) p->instr[i].boxed = bx[i];
  p->flat_boxed = true;
  p->flat_bulk = true;
  for (int i = 0; i < p->ninstr; i++) p->flat_bulk = p->flat_bulk && bx[i];
  for (int k = 0; k < nin; k++) p->flat_bulk = p->flat_bulk && (inp[k].mode != IN_BCAST || inp[k].flat);
  return NULL;
}

/* How the group reads its views: flat mode with boxes where it applies, also over rows long
 * enough for row mode (which gathers every row of a view shifted along its rows: a 256-wide
 * stencil's column-shifted slices); else row mode, flat mode (edge columns computed again) or
 * blocks. Sets p's mode, block and register bytes. */
static CJ_MUST_USE cj_status pick_mode(cj_lw *L, ew_params *p, ew_input *inp, int nin,
                                       const cj_type *shape, int64_t max_es) {
  int64_t row = row_mode(shape, inp, nin, max_es), block = p->block;
  p->row = 0;
  flat_mode(p, inp, nin, shape, p->nregs);
  p->reg_bytes = p->block * max_es;
  CJ_RETURN_IF_ERROR(flat_boxes(L, p, inp, nin));
  if (row > 0 && !p->flat_boxed) {
    for (int k = 0; k < nin; k++) inp[k].flat = false;
    p->flat_w = 0;
    p->row = row;
    p->block = block;
    p->reg_bytes = block * max_es;
  }
  return NULL;
}

cj_status cj_lw_ew_flush(cj_lw *L) {
  ew_state *S = cj_lw_ew_state(L);
  if (!S || !S->nops) return NULL;
  gen *G = calloc(1, sizeof(gen));
  if (!G) return cj_oom();
  G->L = L;
  G->S = S;
  cj_status st = NULL;
  /* values: externals then members */
  for (int k = 0; k < S->next; k++) {
    gv *g = &G->vals[G->nvals++];
    g->v = S->ext[k];
    g->loc = 0xff;
    g->storage = S->ext[k]->type->dtype;
    g->ct = cj_ew_compute_type(g->storage);
    g->last_op = -1;
  }
  for (int i = 0; i < S->nops; i++) {
    gv *g = &G->vals[G->nvals++];
    g->v = &S->ops[i]->results[0];
    g->loc = 0xff;
    g->storage = g->v->type->dtype;
    g->ct = cj_ew_compute_type(g->storage);
    g->last_op = -1;
  }
  for (int i = 0; i < S->nops; i++) {
    cj_op *op = S->ops[i];
    for (uint32_t k = 0; k < op->nopnds; k++) {
      gv *g = find_gv(G, op->operands[k]);
      if (!g) continue;
      g->last_op = i;
      g->internal_uses++;
    }
  }
  /* outputs: members with uses outside the group */
  for (int i = 0; i < S->nops && !st; i++) {
    cj_value *v = &S->ops[i]->results[0];
    gv *g = find_gv(G, v);
    uint32_t total = cj_lw_num_uses(L, v);
    if (total > (uint32_t)g->internal_uses || total == 0) {
      if (total == 0) continue; /* dead: should have been removed; computed but not stored */
      g->output = true;
      g->out_index = G->noutputs++;
    }
  }
  int nin = S->next;
  G->obase = nin;
  int64_t max_es = 1;
  for (int i = 0; i < G->nvals; i++) {
    int es = cj_dtype_bytes(G->vals[i].storage), ec = cj_dtype_bytes(G->vals[i].ct);
    if (es > max_es) max_es = es;
    if (ec > max_es) max_es = ec;
  }
  G->block = 2048 / max_es; /* 2 KiB per register: a group's registers stay in L1 */
  if (G->block < 64) G->block = 64;
  int64_t small_block = G->block;
  /* a small group runs as one block: each block costs a pass of instruction calls and view
   * gathers, which cost more than L1 misses here (cloth_physics_fori's [24, 24, 3] groups in
   * one block instead of four: 1.52 -> 1.35 of XLA's time); see also below */
  if (S->shape->num_elements * max_es <= SMALL_GROUP_BYTES) G->block = S->shape->num_elements;
  /* load every external input first (in table order), so that the registers of broadcast
   * inputs, gathered at each block start, are never reused by earlier instructions */
  for (int k = 0; k < S->next && !st; k++) {
    gv *g = &G->vals[k];
    st = add_input(G, S->ops[0], g);
  }
  for (int i = 0; i < S->nops && !st; i++) st = gen_op(G, i);
  /* below a strip of vectors a chain runs its steps once per vector, which costs more than one
   * array kernel call per instruction: [64] vectors in rk4_pendulum_fori's loop were 8% slower */
  if (!st && S->shape->num_elements >= CHAIN_MIN_ELEMS) st = make_chains(G);
  if (!st && G->ninputs != nin) st = cj_internal("fusion: input count mismatch");
  if (!st && G->nregs + nin + G->noutputs > MAX_TAB)
    st = cj_op_error(S->ops[0], CJ_INTERNAL, "fusion group too large");
  cj_step *step = NULL;
  if (!st) {
    int nout = G->noutputs;
    ew_params *p = cj_lw_alloc(L, sizeof *p);
    ew_instr *ins = cj_lw_alloc(L, sizeof(ew_instr) * (size_t)(G->ninstr ? G->ninstr : 1));
    ew_input *inp = cj_lw_alloc(L, sizeof(ew_input) * (size_t)(nin ? nin : 1));
    if (!p || !ins || !inp) st = cj_oom();
    if (!st) {
      /* remap register indices REG0+r -> nin + nout + r */
      int rbase = nin + nout;
      for (int i = 0; i < G->ninstr; i++) {
        ins[i] = G->instr[i];
        if (ins[i].dst >= REG0) ins[i].dst = (uint8_t)(ins[i].dst - REG0 + rbase);
        for (int k = 0; k < 3; k++)
          if (ins[i].src[k] >= REG0) ins[i].src[k] = (uint8_t)(ins[i].src[k] - REG0 + rbase);
        if (ins[i].chain) chain_remap(ins[i].chain, rbase);
      }
      for (int k = 0; k < nin; k++) {
        inp[k] = G->inputs[k];
        if (inp[k].mode != IN_FULL) inp[k].reg = (uint8_t)(inp[k].reg - REG0 + rbase);
        p->esize[k] = G->esize[k];
      }
      for (int k = 0; k < nout; k++) {
        for (int i = 0; i < G->nvals; i++)
          if (G->vals[i].output && G->vals[i].out_index == k)
            p->esize[nin + k] = (uint8_t)cj_dtype_bytes(G->vals[i].storage);
      }
      p->n = S->shape->num_elements;
      p->flops_per_elem = G->flops + 8 * G->trans;
      p->block = G->block;
      /* ... unless it is worth splitting across threads (by blocks), or its registers would
       * take more than SMALL_GROUP_TLS per thread (a prefilled constant of the whole group still
       * serves smaller blocks) */
      if (p->block > small_block && (p->n * (p->flops_per_elem + 1) >= CJ_PAR_MIN_ELEMS * 2 ||
                                     G->nregs * p->block * max_es > SMALL_GROUP_TLS))
        p->block = small_block;
      p->ninstr = G->ninstr;
      p->ninputs = nin;
      p->noutputs = nout;
      p->nregs = G->nregs;
      p->instr = ins;
      p->inputs = inp;
      st = pick_mode(L, p, inp, nin, S->shape, max_es);
      /* flat mode: a packed copy of every input and output after the registers */
      cj_lw_set_tls_bytes(L, (int64_t)(G->nregs + (p->flat_w ? nin + nout : 0)) * p->reg_bytes);
      cj_lw_add_cost(L, (double)G->flops * (double)p->n, (double)G->trans * (double)p->n);
      /* output buffers */
      for (int i = 0; i < G->nvals && !st && !S->sink; i++) {
        gv *g = &G->vals[i];
        if (!g->output) continue;
        int32_t b = cj_lw_new_buf(L, cj_lw_type_bytes(g->v->type), CJ_BK_ARENA);
        G->out_buf[g->out_index] = b;
        st = cj_lw_bind(L, g->v, 1, &b);
      }
      /* dead members still need a place to write if an instruction targets them: they never
       * do (result_dst only returns output slots for outputs) */
      if (!st) {
        /* in-place hints: output k may reuse input j's buffer when j is a full-size input of
         * the same byte size last read no later than the instruction writing output k */
        for (int k = 0; k < nout && !S->sink; k++)
          for (int j = 0; j < nin; j++) {
            if (inp[j].mode != IN_FULL || p->esize[j] != p->esize[nin + k]) continue;
            if (G->in_last_read[j] > G->out_written_by[k] || shares_buffer(G, nin, j)) continue;
            cj_lw_hint_inplace(L, G->out_buf[k], G->in_buf[j]);
          }
        if (S->sink) { /* cj_lw_ew_take: no step; the taker computes the value */
          int32_t *bufs = cj_lw_alloc(L, sizeof(int32_t) * (size_t)(nin ? nin : 1));
          if (!bufs) st = cj_oom();
          else memcpy(bufs, G->in_buf, sizeof(int32_t) * (size_t)nin);
          S->taken = (cj_ew_src){p, nin, bufs};
        } else {
          step = cj_lw_emit(L, S->ops[S->nops - 1], k_ew, p, (uint32_t)nin, G->in_buf,
                            (uint32_t)nout, G->out_buf);
          if (!step) st = cj_oom();
        }
      }
    }
  }
  for (int i = 0; i < S->nops; i++) S->ops[i]->scratch = NULL;
  S->nops = 0;
  S->next = 0;
  free(G);
  return st;
}

/* ======================================================================== input fusion */

/* uses of w by the group's members */
static uint32_t member_uses(const ew_state *S, const cj_value *w) {
  uint32_t n = 0;
  for (int i = 0; i < S->nops; i++)
    for (uint32_t k = 0; k < S->ops[i]->nopnds; k++) n += S->ops[i]->operands[k] == w;
  return n;
}

cj_status cj_lw_ew_take(cj_lw *L, cj_value *v, cj_ew_src *src, bool *taken) {
  ew_state *S = cj_lw_ew_state(L);
  *taken = false;
  *src = (cj_ew_src){NULL, 0, NULL};
  bool ok = cj_lw_ew_pending_value(L, v) && cj_lw_num_uses(L, v) == 1;
  for (int i = 0; ok && i < S->nops; i++) { /* every other member is used inside only */
    cj_value *w = &S->ops[i]->results[0];
    if (w != v && cj_lw_num_uses(L, w) > member_uses(S, w)) ok = false;
  }
  if (!ok) return cj_lw_ew_flush(L);
  S->sink = v;
  cj_status st = cj_lw_ew_flush(L);
  S->sink = NULL;
  if (st) return st;
  *src = S->taken;
  *taken = true;
  return NULL;
}

void cj_ew_src_eval(const void *prog, cj_exec_ctx *ctx, char *const *ins, int64_t start,
                    int64_t m, char *dst) {
  const ew_params *p = prog;
  ew_run R;
  R.p = p;
  R.ctx = ctx;
  R.origin = start;
  for (int k = 0; k < p->ninputs; k++) /* as the group's own step sets them (bounded: no offset) */
    R.base[k] = ins[k] + (p->inputs[k].bounded ? 0 : p->inputs[k].off * p->esize[k]);
  R.base[p->ninputs] = dst;
  run_range(&R, start, start + m);
}

/* ======================================================================== the TLS areas */

cj_tls_area *cj_tls_claim(cj_exec_ctx *ctx) {
  cj_scratch *s = ctx->scratch;
  for (;;) {
    uint64_t busy = atomic_load(&s->tls_busy);
    for (int i = 0; i < s->ntls; i++) {
      if (busy & (1ull << i)) continue;
      if (atomic_compare_exchange_weak(&s->tls_busy, &busy, busy | (1ull << i))) return &s->tls[i];
      break; /* reload */
    }
    if (s->ntls == 0) return NULL;
  }
}

void cj_tls_release(cj_exec_ctx *ctx, cj_tls_area *a) {
  cj_scratch *s = ctx->scratch;
  int i = (int)(a - s->tls);
  atomic_fetch_and(&s->tls_busy, ~(1ull << i));
}
