/* cjrt: xla.HloModuleProto (and xla.HloModuleProtoWithConfig) read with our own protobuf
 * wire-format reader into the hlo_module record of hlo.h. Field numbers are those of
 * xla/service/hlo.proto and xla/xla_data.proto; unknown fields are skipped. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/dtype.h"
#include "frontend/hlo.h"
#include "frontend/proto_wire.h"

enum { WT_VARINT = CJ_WT_VARINT, WT_I64 = CJ_WT_I64, WT_LEN = CJ_WT_LEN, WT_SGROUP = CJ_WT_SGROUP,
       WT_EGROUP = CJ_WT_EGROUP, WT_I32 = CJ_WT_I32 };
enum { MAX_DEPTH = 48 };

/* ------------------------------------------------------------------ the module's arena */

hlo_module *cj_hlo_module_new(void) {
  hlo_module *h = calloc(1, sizeof *h);
  if (h) cj_arena_init(&h->arena);
  return h;
}

void cj_hlo_module_free(hlo_module *h) {
  if (!h) return;
  cj_arena_release(&h->arena);
  free(h);
}

void *cj_hlo_push(hlo_module *h, void **items, int32_t *n, int32_t *cap, size_t size) {
  if (*n == *cap) {
    if (*cap >= (1 << 28)) return NULL;
    int32_t ncap = *cap ? *cap * 2 : 4;
    void *p = cj_arena_alloc_aligned(&h->arena, size * (size_t)ncap, 16);
    if (!p) return NULL;
    if (*n) memcpy(p, *items, size * (size_t)*n);
    *items = p;
    *cap = ncap;
  }
  char *slot = (char *)*items + size * (size_t)(*n)++;
  memset(slot, 0, size);
  return slot;
}

bool cj_hlo_push_i64(hlo_module *h, hlo_i64s *a, int64_t v) {
  void *items = a->v;
  int64_t *slot = cj_hlo_push(h, &items, &a->n, &a->cap, sizeof(int64_t));
  if (!slot) return false;
  a->v = items;
  *slot = v;
  return true;
}

#define PUSH(h, arr, n, cap) cj_hlo_push((h), (void **)&(arr), &(n), &(cap), sizeof *(arr))

bool cj_hlo_iota_perm_ok(const hlo_i64s *perm) {
  uint32_t used = 0;
  for (int32_t i = 0; i < perm->n; i++) {
    if (perm->v[i] < 0 || perm->v[i] >= perm->n || (used >> perm->v[i] & 1)) return false;
    used |= 1u << perm->v[i];
  }
  return true;
}

cj_status cj_hlo_iota_groups(hlo_module *h, hlo_instr *in, int64_t ng, int64_t per,
                          const hlo_i64s *dims, const hlo_i64s *perm) {
  /* transposed dims and the source strides */
  int32_t rank = dims->n;
  int64_t tdims[16], tstride[16], stride[16], idx[16] = {0};
  int64_t s = 1;
  for (int32_t d = rank - 1; d >= 0; d--) {
    stride[d] = s;
    s *= dims->v[d];
  }
  for (int32_t d = 0; d < rank; d++) {
    int64_t src = perm->n ? perm->v[d] : d;
    tdims[d] = dims->v[src];
    tstride[d] = stride[src];
  }
  for (int64_t gi = 0; gi < ng; gi++) {
    hlo_i64s *g = PUSH(h, in->groups, in->ngroups, in->gcap);
    if (!g) return cj_oom();
    for (int64_t j = 0; j < per; j++) {
      int64_t v = 0;
      for (int32_t d = 0; d < rank; d++) v += idx[d] * tstride[d];
      if (!rank) v = gi * per + j;
      if (!cj_hlo_push_i64(h, g, v)) return cj_oom();
      for (int32_t d = rank - 1; d >= 0; d--) {
        if (++idx[d] < tdims[d]) break;
        idx[d] = 0;
      }
    }
  }
  return NULL;
}

/* ------------------------------------------------------------------ wire format */

typedef struct rd {
  const uint8_t *p, *end, *base;
  const char *what; /* message being read */
  hlo_module *h;
  int depth;
} rd;

static CJ_MUST_USE cj_status rd_err(const rd *r, const char *msg) {
  return cj_invalid("hlo proto: %s: %s at byte %zu", r->what, msg, (size_t)(r->p - r->base));
}

CJ_PB_READER_PRIMITIVES(rd, rd_err)

static CJ_MUST_USE cj_status rd_sub(rd *r, int wt, rd *sub, const char *what) {
  if (wt != WT_LEN) return rd_err(r, "expected a length-delimited field");
  uint64_t n;
  CJ_RETURN_IF_ERROR(rd_varint(r, &n));
  if (n > (uint64_t)(r->end - r->p)) return rd_err(r, "length runs past the end");
  if (r->depth >= MAX_DEPTH) return rd_err(r, "messages nested too deeply");
  *sub = (rd){r->p, r->p + n, r->base, what, r->h, r->depth + 1};
  r->p += n;
  return NULL;
}

static CJ_MUST_USE cj_status rd_skip(rd *r, uint32_t field, int wt, int depth) {
  /* rd_sub's nesting limit holds for the length-delimited values skipped too */
  cj_pb_err e = cj_pb_skip(&r->p, r->end, field, wt, depth, MAX_DEPTH, r->depth >= MAX_DEPTH);
  return e ? rd_err(r, cj_pb_err_text(e)) : NULL;
}

static CJ_MUST_USE cj_status rd_int(rd *r, int wt, int64_t *out) {
  if (wt != WT_VARINT) return rd_err(r, "expected a varint field");
  uint64_t v = 0;
  CJ_RETURN_IF_ERROR(rd_varint(r, &v));
  *out = (int64_t)v;
  return NULL;
}

static CJ_MUST_USE cj_status rd_bool(rd *r, int wt, bool *out) {
  int64_t v = 0;
  CJ_RETURN_IF_ERROR(rd_int(r, wt, &v));
  *out = v != 0;
  return NULL;
}

/* repeated int64/int32/bool/enum: packed or one at a time */
static CJ_MUST_USE cj_status rd_ints(rd *r, int wt, hlo_i64s *a) {
  if (wt == WT_VARINT) {
    int64_t v = 0;
    CJ_RETURN_IF_ERROR(rd_int(r, wt, &v));
    return cj_hlo_push_i64(r->h, a, v) ? NULL : cj_oom();
  }
  rd sub;
  CJ_RETURN_IF_ERROR(rd_sub(r, wt, &sub, r->what));
  while (sub.p < sub.end) {
    uint64_t v = 0;
    CJ_RETURN_IF_ERROR(rd_varint(&sub, &v));
    if (!cj_hlo_push_i64(r->h, a, (int64_t)v)) return cj_oom();
  }
  return NULL;
}

/* string/bytes into the arena, NUL-terminated */
static CJ_MUST_USE cj_status rd_str(rd *r, int wt, const char **out, size_t *len) {
  rd sub;
  CJ_RETURN_IF_ERROR(rd_sub(r, wt, &sub, r->what));
  size_t n = (size_t)(sub.end - sub.p);
  char *s = cj_arena_strndup(&r->h->arena, (const char *)sub.p, n);
  if (!s) return cj_oom();
  *out = s;
  if (len) *len = n;
  return NULL;
}

#define FIELDS(r, ...)                           \
  while ((r)->p < (r)->end) {                    \
    uint32_t f = 0;                              \
    int wt = 0;                                  \
    CJ_RETURN_IF_ERROR(rd_tag((r), &f, &wt));    \
    switch (f) {                                 \
      __VA_ARGS__ default:                       \
        CJ_RETURN_IF_ERROR(rd_skip((r), f, wt, 0)); \
    }                                            \
  }

/* ------------------------------------------------------------------ xla_data.proto messages */

static CJ_MUST_USE cj_status read_shape(rd *r, hlo_shape *s);

static CJ_MUST_USE cj_status read_layout(rd *r, hlo_shape *s) {
  FIELDS(r, case 1 : CJ_RETURN_IF_ERROR(rd_ints(r, wt, &s->minor_to_major)); break;)
  return NULL;
}

static CJ_MUST_USE cj_status read_shape(rd *r, hlo_shape *s) {
  FIELDS(r, case 2 : {
    int64_t v = 0;
    CJ_RETURN_IF_ERROR(rd_int(r, wt, &v));
    s->etype = (int32_t)v;
    break;
  } case 3 : CJ_RETURN_IF_ERROR(rd_ints(r, wt, &s->dims)); break;
         case 6 : CJ_RETURN_IF_ERROR(rd_ints(r, wt, &s->dynamic)); break;
         case 4 : {
           rd sub;
           CJ_RETURN_IF_ERROR(rd_sub(r, wt, &sub, "ShapeProto.tuple_shapes"));
           hlo_shape *t = PUSH(r->h, s->tuple, s->ntuple, s->cap);
           if (!t) return cj_oom();
           CJ_RETURN_IF_ERROR(read_shape(&sub, t));
           break;
         } case 5 : {
           rd sub;
           CJ_RETURN_IF_ERROR(rd_sub(r, wt, &sub, "LayoutProto"));
           CJ_RETURN_IF_ERROR(read_layout(&sub, s));
           break;
         })
  return NULL;
}

/* A growing byte buffer for literal data */
typedef struct bytes {
  uint8_t *p;
  size_t n, cap;
} bytes;

static bool bytes_put(bytes *b, const void *src, size_t n) {
  if (!n) return true;
  if (b->n + n > b->cap) {
    size_t ncap = b->cap ? b->cap : 64;
    while (ncap < b->n + n) ncap *= 2;
    uint8_t *p = realloc(b->p, ncap);
    if (!p) return false;
    b->p = p;
    b->cap = ncap;
  }
  memcpy(b->p + b->n, src, n);
  b->n += n;
  return true;
}

/* repeated varint field into `size`-byte little-endian elements */
static CJ_MUST_USE cj_status lit_varints(rd *r, int wt, bytes *b, int size) {
  rd sub;
  if (wt == WT_VARINT) {
    sub = *r;
    sub.end = r->end;
  } else {
    CJ_RETURN_IF_ERROR(rd_sub(r, wt, &sub, "LiteralProto"));
  }
  do {
    uint64_t v = 0;
    CJ_RETURN_IF_ERROR(rd_varint(&sub, &v));
    if (size == 1) v = v != 0;
    if (!bytes_put(b, &v, (size_t)size)) return cj_oom();
  } while (wt != WT_VARINT && sub.p < sub.end);
  if (wt == WT_VARINT) r->p = sub.p;
  return NULL;
}

/* repeated fixed32/fixed64 field */
static CJ_MUST_USE cj_status lit_fixed(rd *r, int wt, bytes *b, int size) {
  if ((size == 4 && wt == WT_I32) || (size == 8 && wt == WT_I64)) {
    if (r->end - r->p < size) return rd_err(r, "truncated fixed value");
    if (!bytes_put(b, r->p, (size_t)size)) return cj_oom();
    r->p += size;
    return NULL;
  }
  rd sub;
  CJ_RETURN_IF_ERROR(rd_sub(r, wt, &sub, "LiteralProto"));
  if ((sub.end - sub.p) % size) return rd_err(r, "packed fixed-size values of a partial length");
  return bytes_put(b, sub.p, (size_t)(sub.end - sub.p)) ? NULL : cj_oom();
}

static CJ_MUST_USE cj_status lit_bytes(rd *r, int wt, bytes *b) {
  rd sub;
  CJ_RETURN_IF_ERROR(rd_sub(r, wt, &sub, "LiteralProto"));
  return bytes_put(b, sub.p, (size_t)(sub.end - sub.p)) ? NULL : cj_oom();
}

static CJ_MUST_USE cj_status read_literal_fields(rd *r, hlo_literal *l, bytes *b) {
  FIELDS(r, case 1 : {
    rd sub;
    CJ_RETURN_IF_ERROR(rd_sub(r, wt, &sub, "LiteralProto.shape"));
    CJ_RETURN_IF_ERROR(read_shape(&sub, &l->shape));
    break;
  } case 2 : CJ_RETURN_IF_ERROR(lit_varints(r, wt, b, 1)); break;
         case 4 : case 6 : CJ_RETURN_IF_ERROR(lit_varints(r, wt, b, 4)); break;
         case 5 : case 7 : CJ_RETURN_IF_ERROR(lit_varints(r, wt, b, 8)); break;
         case 8 : case 12 : CJ_RETURN_IF_ERROR(lit_fixed(r, wt, b, 4)); break;
         case 9 : case 18 : CJ_RETURN_IF_ERROR(lit_fixed(r, wt, b, 8)); break;
         case 10 : return rd_err(r, "tuple constants are not supported");
         /* bytes fields: s8s u8s f16s bf16s u16s s16s and the narrow types */
         case 3 : case 11 : case 13 : case 15 : case 16 : case 17 : case 19 : case 20 : case 21 :
         case 22 : case 23 : case 24 : case 25 : case 26 : case 27 : case 28 : case 29 : case 30 :
         case 31 : case 32 : case 33 : CJ_RETURN_IF_ERROR(lit_bytes(r, wt, b)); break;)
  return NULL;
}

/* Reorders `src` (elements in the order of `m2m`, minor to major) into row-major `dst`. */
static void relayout(const hlo_shape *s, const hlo_i64s *m2m, const uint8_t *src, uint8_t *dst,
                     size_t es, int64_t n) {
  int32_t rank = s->dims.n;
  int64_t stride[64], idx[64];
  int64_t st = 1;
  for (int32_t k = 0; k < rank; k++) {
    int64_t d = m2m->v[k];
    stride[d] = st;
    st *= s->dims.v[d];
  }
  memset(idx, 0, sizeof idx);
  for (int64_t i = 0; i < n; i++) {
    int64_t off = 0;
    for (int32_t d = 0; d < rank; d++) off += idx[d] * stride[d];
    memcpy(dst + (size_t)i * es, src + (size_t)off * es, es);
    for (int32_t d = rank - 1; d >= 0; d--) {
      if (++idx[d] < s->dims.v[d]) break;
      idx[d] = 0;
    }
  }
}

/* Checks a layout is a permutation of the dimensions; true if it is not row-major. */
static CJ_MUST_USE cj_status layout_kind(const hlo_shape *s, bool *permuted) {
  *permuted = false;
  const hlo_i64s *m = &s->minor_to_major;
  if (!m->n) return NULL;
  int32_t rank = s->dims.n;
  if (m->n != rank || rank > 64)
    return cj_invalid("hlo proto: a layout of %d dimensions for a shape of rank %d", m->n, rank);
  uint64_t seen = 0;
  for (int32_t k = 0; k < rank; k++) {
    int64_t d = m->v[k];
    if (d < 0 || d >= rank || (seen >> d & 1))
      return cj_invalid("hlo proto: layout minor_to_major is not a permutation");
    seen |= 1ull << d;
    if (d != rank - 1 - k) *permuted = true;
  }
  return NULL;
}

static CJ_MUST_USE cj_status read_literal(rd *r, hlo_literal *l) {
  bytes b = {0};
  cj_status st = read_literal_fields(r, l, &b);
  if (st) {
    free(b.p);
    return st;
  }
  const hlo_shape *s = &l->shape;
  cj_dtype dt = cj_dtype_from_xla(s->etype);
  int64_t n = 1;
  bool bad = dt == CJ_INVALID || s->ntuple || s->dims.n > 64;
  for (int32_t i = 0; i < s->dims.n && !bad; i++) {
    if (s->dims.v[i] < 0 || (s->dims.v[i] && n > INT64_MAX / 16 / s->dims.v[i])) bad = true;
    else n *= s->dims.v[i];
  }
  size_t es = dt == CJ_INVALID ? 0 : (size_t)cj_dtype_bytes(dt);
  if (bad) st = cj_invalid("hlo proto: a constant of element type %d and rank %d is not supported",
                           (int)s->etype, (int)s->dims.n);
  else if (b.n != (size_t)n * es)
    st = cj_invalid("hlo proto: a constant of %lld %s elements holds %zu bytes of data",
                    (long long)n, cj_dtype_get(dt)->id, b.n);
  bool permuted = false;
  if (!st) st = layout_kind(s, &permuted);
  if (!st) {
    l->nbytes = b.n;
    l->data = cj_arena_alloc(&r->h->arena, b.n ? b.n : 1);
    if (!l->data) st = cj_oom();
    else if (permuted) relayout(s, &s->minor_to_major, b.p, l->data, es, n);
    else if (b.n) memcpy(l->data, b.p, b.n);
  }
  /* sub-byte and bool values keep only their bits */
  if (!st && cj_dtype_bits(dt) < 8) {
    uint8_t *d = l->data;
    int bits = cj_dtype_bits(dt);
    bool sgn = cj_dtype_kindof(dt) == CJ_DK_SINT;
    for (int64_t i = 0; i < n; i++) {
      uint8_t v = d[i] & (uint8_t)((1u << bits) - 1);
      if (dt == CJ_PRED) v = d[i] != 0;
      else if (sgn && (v >> (bits - 1))) v |= (uint8_t)(0xffu << bits);
      d[i] = v;
    }
  }
  free(b.p);
  return st;
}

static CJ_MUST_USE cj_status read_window(rd *r, hlo_instr *in) {
  in->has_window = true;
  FIELDS(r, case 1 : {
    rd s;
    CJ_RETURN_IF_ERROR(rd_sub(r, wt, &s, "WindowDimension"));
    hlo_window_dim *w = PUSH(r->h, in->window, in->nwindow, in->wcap);
    if (!w) return cj_oom();
    w->stride = w->win_dil = w->base_dil = 1;
    bool set_stride = false, set_wd = false, set_bd = false;
    int64_t v = 0;
    FIELDS(&s, case 1 : CJ_RETURN_IF_ERROR(rd_int(&s, wt, &w->size)); break;
           case 2 : CJ_RETURN_IF_ERROR(rd_int(&s, wt, &v)); w->stride = v; set_stride = true; break;
           case 3 : CJ_RETURN_IF_ERROR(rd_int(&s, wt, &w->pad_lo)); break;
           case 4 : CJ_RETURN_IF_ERROR(rd_int(&s, wt, &w->pad_hi)); break;
           case 5 : CJ_RETURN_IF_ERROR(rd_int(&s, wt, &v)); w->win_dil = v; set_wd = true; break;
           case 6 : CJ_RETURN_IF_ERROR(rd_int(&s, wt, &v)); w->base_dil = v; set_bd = true; break;
           case 7 : CJ_RETURN_IF_ERROR(rd_bool(&s, wt, &w->reversal)); break;)
    /* proto3 leaves zeros out: a zero stride or dilation reads as the default 1 */
    if (set_stride && !w->stride) w->stride = 1;
    if (set_wd && !w->win_dil) w->win_dil = 1;
    if (set_bd && !w->base_dil) w->base_dil = 1;
    break;
  })
  return NULL;
}

static CJ_MUST_USE cj_status read_conv_dnums(rd *r, hlo_instr *in) {
  in->has_conv_dnums = true;
  FIELDS(r, case 7 : CJ_RETURN_IF_ERROR(rd_int(r, wt, &in->in_batch)); break;
         case 8 : CJ_RETURN_IF_ERROR(rd_int(r, wt, &in->in_feature)); break;
         case 11 : CJ_RETURN_IF_ERROR(rd_ints(r, wt, &in->in_spatial)); break;
         case 3 : CJ_RETURN_IF_ERROR(rd_int(r, wt, &in->k_in_feature)); break;
         case 4 : CJ_RETURN_IF_ERROR(rd_int(r, wt, &in->k_out_feature)); break;
         case 6 : CJ_RETURN_IF_ERROR(rd_ints(r, wt, &in->k_spatial)); break;
         case 9 : CJ_RETURN_IF_ERROR(rd_int(r, wt, &in->out_batch)); break;
         case 10 : CJ_RETURN_IF_ERROR(rd_int(r, wt, &in->out_feature)); break;
         case 12 : CJ_RETURN_IF_ERROR(rd_ints(r, wt, &in->out_spatial)); break;)
  return NULL;
}

static CJ_MUST_USE cj_status read_replica_group(rd *r, hlo_instr *in) {
  hlo_i64s *g = PUSH(r->h, in->groups, in->ngroups, in->gcap);
  if (!g) return cj_oom();
  FIELDS(r, case 1 : CJ_RETURN_IF_ERROR(rd_ints(r, wt, g)); break;)
  return NULL;
}

/* IotaReplicaGroupListProto: iota(prod(dims)) reshaped to dims, transposed by perm, read as
 * num_groups rows of per_group ids. */
static CJ_MUST_USE cj_status read_iota_groups(rd *r, hlo_instr *in) {
  int64_t ng = 0, per = 0;
  hlo_i64s dims = {0}, perm = {0};
  FIELDS(r, case 1 : CJ_RETURN_IF_ERROR(rd_int(r, wt, &ng)); break;
         case 2 : CJ_RETURN_IF_ERROR(rd_int(r, wt, &per)); break;
         case 3 : CJ_RETURN_IF_ERROR(rd_ints(r, wt, &dims)); break;
         case 4 : CJ_RETURN_IF_ERROR(rd_ints(r, wt, &perm)); break;)
  if (ng < 0 || per < 0 || (per && ng > (1 << 20) / per) || dims.n > 16 ||
      (perm.n && perm.n != dims.n))
    return rd_err(r, "a malformed iota replica group list");
  int64_t total = ng * per, prod = 1;
  for (int32_t i = 0; i < dims.n; i++) {
    if (dims.v[i] < 0 || (dims.v[i] && prod > (1 << 20) / dims.v[i]))
      return rd_err(r, "a malformed iota replica group list");
    prod *= dims.v[i];
  }
  if (!dims.n) prod = total;
  if (prod != total) return rd_err(r, "iota replica group dims do not match the group sizes");
  if (!cj_hlo_iota_perm_ok(&perm)) return rd_err(r, "iota_transpose_perm is not a permutation");
  return cj_hlo_iota_groups(r->h, in, ng, per, &dims, &perm);
}

/* xla.OpSharding, rendered as the HloSharding text XLA prints and mhlo.sharding attributes carry
 * ("{devices=[2,1]<=[2]}", "{replicated}", "{maximal device=1}", "{manual}", a tuple as
 * "{{...}, {...}}"): the one form the partitioner reads, whichever way the program came. */
enum { SHARDING_MAX_DEPTH = 8, SHARDING_MAX_LEN = 1 << 16 };

static bool sb_putf(bytes *b, const char *fmt, ...) {
  char tmp[64];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
  va_end(ap);
  return n >= 0 && (size_t)n < sizeof tmp && b->n + (size_t)n < SHARDING_MAX_LEN &&
         bytes_put(b, tmp, (size_t)n);
}

static bool sb_ints(bytes *b, const hlo_i64s *a, const char *sep) {
  for (int32_t i = 0; i < a->n; i++)
    if (!sb_putf(b, "%s%lld", i ? sep : "", (long long)a->v[i])) return false;
  return true;
}

typedef struct sharding_fields {
  int64_t type;
  bool last_replicate;
  hlo_i64s dims, devs, iota, perm, last;
  bytes tuple; /* the rendered tuple elements, ", "-separated (freed by the caller) */
  int32_t ntuple;
} sharding_fields;

static CJ_MUST_USE cj_status render_sharding(rd *r, bytes *out, int depth);

static CJ_MUST_USE cj_status read_sharding_fields(rd *r, sharding_fields *sf, int depth) {
  FIELDS(r, case 1 : CJ_RETURN_IF_ERROR(rd_int(r, wt, &sf->type)); break;
         case 3 : CJ_RETURN_IF_ERROR(rd_ints(r, wt, &sf->dims)); break;
         case 4 : CJ_RETURN_IF_ERROR(rd_ints(r, wt, &sf->devs)); break;
         case 5 : {
           rd sub;
           CJ_RETURN_IF_ERROR(rd_sub(r, wt, &sub, "OpSharding.tuple_shardings"));
           if (sf->ntuple++ && !bytes_put(&sf->tuple, ", ", 2)) return cj_oom();
           CJ_RETURN_IF_ERROR(render_sharding(&sub, &sf->tuple, depth + 1));
           break;
         } case 6 : {
           int64_t v = 0;
           CJ_RETURN_IF_ERROR(rd_int(r, wt, &v));
           sf->last_replicate = v != 0;
           break;
         } case 8 : CJ_RETURN_IF_ERROR(rd_ints(r, wt, &sf->last)); break;
         case 9 : CJ_RETURN_IF_ERROR(rd_ints(r, wt, &sf->iota)); break;
         case 10 : CJ_RETURN_IF_ERROR(rd_ints(r, wt, &sf->perm)); break;)
  return NULL;
}

/* "{devices=[dims]<assignment>[ last_tile_dim_replicate][ last_tile_dims={...}]}" */
static CJ_MUST_USE cj_status render_tiled(rd *r, const sharding_fields *f, bytes *out) {
  static const char *const kinds[] = {"replicate", NULL, NULL, NULL, "manual", "unknown",
                                      "unreduced"};
  if (!f->dims.n) return rd_err(r, "a tiled OpSharding without tile_assignment_dimensions");
  int64_t n = 1;
  for (int32_t i = 0; i < f->dims.n; i++) {
    if (f->dims.v[i] <= 0 || n > (1 << 24) / f->dims.v[i])
      return rd_err(r, "an OpSharding tile assignment of a bad size");
    n *= f->dims.v[i];
  }
  if (f->devs.n && f->devs.n != n)
    return rd_err(r, "an OpSharding whose device list does not fill its tile assignment");
  bool ok = sb_putf(out, "{devices=[") && sb_ints(out, &f->dims, ",") && sb_putf(out, "]");
  if (f->devs.n) {
    ok = ok && sb_ints(out, &f->devs, ",");
  } else if (f->iota.n) {
    ok = ok && sb_putf(out, "<=[") && sb_ints(out, &f->iota, ",") && sb_putf(out, "]");
    if (f->perm.n) ok = ok && sb_putf(out, "T(") && sb_ints(out, &f->perm, ",") && sb_putf(out, ")");
  } else {
    ok = ok && sb_putf(out, "<=[%lld]", (long long)n);
  }
  if (f->last_replicate) ok = ok && sb_putf(out, " last_tile_dim_replicate");
  if (f->last.n) {
    ok = ok && sb_putf(out, " last_tile_dims={");
    for (int32_t i = 0; i < f->last.n; i++) {
      int64_t k = f->last.v[i];
      if (k < 0 || k > 6 || !kinds[k]) return rd_err(r, "an OpSharding last_tile_dims entry of a bad type");
      ok = ok && sb_putf(out, "%s%s", i ? ", " : "", kinds[k]);
    }
    ok = ok && sb_putf(out, "}");
  }
  ok = ok && sb_putf(out, "}");
  return ok ? NULL : rd_err(r, "an OpSharding too large to render");
}

static CJ_MUST_USE cj_status render_sharding(rd *r, bytes *out, int depth) {
  if (depth > SHARDING_MAX_DEPTH) return rd_err(r, "OpSharding nested too deeply");
  sharding_fields f = {0};
  cj_status st = read_sharding_fields(r, &f, depth);
  bool ok = true;
  if (!st) {
    switch (f.type) {
      case 0: ok = sb_putf(out, "{replicated}"); break;
      case 1:
        if (f.devs.n != 1) st = rd_err(r, "a maximal OpSharding without exactly one device");
        else ok = sb_putf(out, "{maximal device=%lld}", (long long)f.devs.v[0]);
        break;
      case 2: ok = sb_putf(out, "{") && bytes_put(out, f.tuple.p, f.tuple.n) && sb_putf(out, "}"); break;
      case 3: st = render_tiled(r, &f, out); break;
      case 4: ok = sb_putf(out, "{manual}"); break;
      case 5: ok = sb_putf(out, "{unknown}"); break;
      case 6: ok = sb_putf(out, "{unreduced}"); break;
      default: st = rd_err(r, "an OpSharding of an unknown type");
    }
  }
  free(f.tuple.p);
  if (!st && !ok) st = rd_err(r, "an OpSharding too large to render");
  return st;
}

static CJ_MUST_USE cj_status read_instr_sharding(rd *r, int wt, hlo_instr *in) {
  rd s;
  CJ_RETURN_IF_ERROR(rd_sub(r, wt, &s, "HloInstructionProto.sharding"));
  bytes b = {0};
  cj_status st = render_sharding(&s, &b, 0);
  if (!st) {
    in->sharding = cj_arena_strndup(&r->h->arena, b.p ? (const char *)b.p : "", b.n);
    if (!in->sharding) st = cj_oom();
  }
  free(b.p);
  return st;
}

static CJ_MUST_USE cj_status read_padding(rd *r, int wt, hlo_instr *in) {
  rd s;
  CJ_RETURN_IF_ERROR(rd_sub(r, wt, &s, "PaddingConfig"));
  in->has_padding = true;
  FIELDS(&s, case 1 : {
    rd d;
    CJ_RETURN_IF_ERROR(rd_sub(&s, wt, &d, "PaddingConfigDimension"));
    int64_t a = 0, b = 0, c = 0;
    FIELDS(&d, case 1 : CJ_RETURN_IF_ERROR(rd_int(&d, wt, &a)); break;
           case 2 : CJ_RETURN_IF_ERROR(rd_int(&d, wt, &b)); break;
           case 3 : CJ_RETURN_IF_ERROR(rd_int(&d, wt, &c)); break;)
    if (!cj_hlo_push_i64(r->h, &in->pad_lo, a) || !cj_hlo_push_i64(r->h, &in->pad_hi, b) ||
        !cj_hlo_push_i64(r->h, &in->pad_interior, c))
      return cj_oom();
    break;
  })
  return NULL;
}

static CJ_MUST_USE cj_status read_instr(rd *r, hlo_instr *in) {
  in->feature_group_count = in->batch_group_count = 1;
  FIELDS(
      r, case 1 : CJ_RETURN_IF_ERROR(rd_str(r, wt, &in->name, NULL)); break;
      case 2 : CJ_RETURN_IF_ERROR(rd_str(r, wt, &in->opcode, NULL)); break;
      case 3 : {
        rd s;
        CJ_RETURN_IF_ERROR(rd_sub(r, wt, &s, "HloInstructionProto.shape"));
        CJ_RETURN_IF_ERROR(read_shape(&s, &in->shape));
        break;
      } case 8 : {
        rd s;
        CJ_RETURN_IF_ERROR(rd_sub(r, wt, &s, "LiteralProto"));
        in->literal = CJ_ARENA_NEW(&r->h->arena, hlo_literal);
        if (!in->literal) return cj_oom();
        CJ_RETURN_IF_ERROR(read_literal(&s, in->literal));
        break;
      } case 9 : CJ_RETURN_IF_ERROR(rd_int(r, wt, &in->parameter_number)); break;
      case 13 : CJ_RETURN_IF_ERROR(rd_int(r, wt, &in->tuple_index)); break;
      case 14 : CJ_RETURN_IF_ERROR(rd_ints(r, wt, &in->dimensions)); break;
      case 15 : {
        rd s;
        CJ_RETURN_IF_ERROR(rd_sub(r, wt, &s, "Window"));
        CJ_RETURN_IF_ERROR(read_window(&s, in));
        break;
      } case 16 : {
        rd s;
        CJ_RETURN_IF_ERROR(rd_sub(r, wt, &s, "ConvolutionDimensionNumbers"));
        CJ_RETURN_IF_ERROR(read_conv_dnums(&s, in));
        break;
      } case 50 : {
        CJ_RETURN_IF_ERROR(rd_int(r, wt, &in->feature_group_count));
        if (!in->feature_group_count) in->feature_group_count = 1;
        break;
      } case 58 : {
        CJ_RETURN_IF_ERROR(rd_int(r, wt, &in->batch_group_count));
        if (!in->batch_group_count) in->batch_group_count = 1;
        break;
      } case 17 : {
        rd s;
        CJ_RETURN_IF_ERROR(rd_sub(r, wt, &s, "SliceDimensions"));
        int64_t a = 0, b = 0, c = 1;
        FIELDS(&s, case 1 : CJ_RETURN_IF_ERROR(rd_int(&s, wt, &a)); break;
               case 2 : CJ_RETURN_IF_ERROR(rd_int(&s, wt, &b)); break;
               case 3 : CJ_RETURN_IF_ERROR(rd_int(&s, wt, &c)); break;)
        if (!cj_hlo_push_i64(r->h, &in->slice_start, a) || !cj_hlo_push_i64(r->h, &in->slice_limit, b) ||
            !cj_hlo_push_i64(r->h, &in->slice_stride, c))
          return cj_oom();
        break;
      } case 18 : CJ_RETURN_IF_ERROR(rd_int(r, wt, &in->exponent_bits)); break;
      case 19 : CJ_RETURN_IF_ERROR(rd_int(r, wt, &in->mantissa_bits)); break;
      case 20 : CJ_RETURN_IF_ERROR(rd_ints(r, wt, &in->dynamic_slice_sizes)); break;
      case 21 : CJ_RETURN_IF_ERROR(read_padding(r, wt, in)); break;
      case 23 : CJ_RETURN_IF_ERROR(rd_int(r, wt, &in->distribution)); break;
      case 24 : {
        if (wt != WT_I32 || r->end - r->p < 4) return rd_err(r, "a malformed epsilon");
        memcpy(&in->epsilon, r->p, 4);
        r->p += 4;
        break;
      } case 25 : CJ_RETURN_IF_ERROR(rd_int(r, wt, &in->feature_index)); break;
      case 26 : CJ_RETURN_IF_ERROR(rd_int(r, wt, &in->channel_id)); break;
      case 28 : CJ_RETURN_IF_ERROR(rd_str(r, wt, &in->custom_call_target, NULL)); break;
      case 30 : {
        rd s;
        CJ_RETURN_IF_ERROR(rd_sub(r, wt, &s, "DotDimensionNumbers"));
        in->has_dot_dnums = true;
        FIELDS(&s, case 1 : CJ_RETURN_IF_ERROR(rd_ints(&s, wt, &in->lhs_contracting)); break;
               case 2 : CJ_RETURN_IF_ERROR(rd_ints(&s, wt, &in->rhs_contracting)); break;
               case 3 : CJ_RETURN_IF_ERROR(rd_ints(&s, wt, &in->lhs_batch)); break;
               case 4 : CJ_RETURN_IF_ERROR(rd_ints(&s, wt, &in->rhs_batch)); break;)
        break;
      } case 31 : CJ_RETURN_IF_ERROR(rd_int(r, wt, &in->fft_type)); break;
      case 32 : CJ_RETURN_IF_ERROR(rd_ints(r, wt, &in->fft_length)); break;
      case 63 : CJ_RETURN_IF_ERROR(rd_str(r, wt, &in->comparison_direction, NULL)); break;
      case 72 : CJ_RETURN_IF_ERROR(rd_str(r, wt, &in->comparison_type, NULL)); break;
      case 102 : { /* comparison order: "TOTAL" is the total order of floats (TOTALORDER) */
        const char *ord = NULL;
        size_t ol = 0;
        CJ_RETURN_IF_ERROR(rd_str(r, wt, &ord, &ol));
        if (ol == 5 && memcmp(ord, "TOTAL", 5) == 0) in->comparison_type = "TOTALORDER";
        break;
      }
      case 33 : {
        rd s;
        CJ_RETURN_IF_ERROR(rd_sub(r, wt, &s, "GatherDimensionNumbers"));
        in->has_gather_dnums = true;
        FIELDS(&s, case 1 : CJ_RETURN_IF_ERROR(rd_ints(&s, wt, &in->offset_dims)); break;
               case 2 : CJ_RETURN_IF_ERROR(rd_ints(&s, wt, &in->collapsed_slice_dims)); break;
               case 3 : CJ_RETURN_IF_ERROR(rd_ints(&s, wt, &in->start_index_map)); break;
               case 4 : CJ_RETURN_IF_ERROR(rd_int(&s, wt, &in->index_vector_dim)); break;
               case 5 : CJ_RETURN_IF_ERROR(rd_ints(&s, wt, &in->operand_batching_dims)); break;
               case 6 : CJ_RETURN_IF_ERROR(rd_ints(&s, wt, &in->start_indices_batching_dims));
               break;)
        break;
      } case 34 : CJ_RETURN_IF_ERROR(rd_ints(r, wt, &in->gather_slice_sizes)); break;
      case 35 : CJ_RETURN_IF_ERROR(rd_int(r, wt, &in->id)); break;
      case 36 : CJ_RETURN_IF_ERROR(rd_ints(r, wt, &in->operand_ids)); break;
      case 38 : CJ_RETURN_IF_ERROR(rd_ints(r, wt, &in->called_ids)); break;
      case 57 : {
        rd s;
        CJ_RETURN_IF_ERROR(rd_sub(r, wt, &s, "HloInstructionProto.operand_shapes_with_layout"));
        hlo_shape *o = PUSH(r->h, in->operand_layouts, in->noperand_layouts, in->olcap);
        if (!o) return cj_oom();
        CJ_RETURN_IF_ERROR(read_shape(&s, o));
        break;
      }
      case 40 : CJ_RETURN_IF_ERROR(read_instr_sharding(r, wt, in)); break;
      case 43 : CJ_RETURN_IF_ERROR(rd_str(r, wt, &in->backend_config, &in->backend_config_len));
      break;
      case 49 : {
        rd s;
        CJ_RETURN_IF_ERROR(rd_sub(r, wt, &s, "ReplicaGroup"));
        in->has_groups = true;
        CJ_RETURN_IF_ERROR(read_replica_group(&s, in));
        break;
      } case 87 : {
        rd s;
        CJ_RETURN_IF_ERROR(rd_sub(r, wt, &s, "CollectiveDeviceListProto"));
        in->has_groups = true;
        FIELDS(&s, case 1 : {
          rd g;
          CJ_RETURN_IF_ERROR(rd_sub(&s, wt, &g, "ReplicaGroup"));
          CJ_RETURN_IF_ERROR(read_replica_group(&g, in));
          break;
        } case 2 : {
          rd g;
          CJ_RETURN_IF_ERROR(rd_sub(&s, wt, &g, "IotaReplicaGroupListProto"));
          CJ_RETURN_IF_ERROR(read_iota_groups(&g, in));
          break;
        })
        break;
      } case 71 : CJ_RETURN_IF_ERROR(rd_bool(r, wt, &in->use_global_device_ids)); break;
      case 60 : CJ_RETURN_IF_ERROR(rd_bool(r, wt, &in->is_stable)); break;
      case 48 : {
        rd s;
        CJ_RETURN_IF_ERROR(rd_sub(r, wt, &s, "ScatterDimensionNumbers"));
        in->has_scatter_dnums = true;
        FIELDS(&s, case 1 : CJ_RETURN_IF_ERROR(rd_ints(&s, wt, &in->update_window_dims)); break;
               case 2 : CJ_RETURN_IF_ERROR(rd_ints(&s, wt, &in->inserted_window_dims)); break;
               case 3 : CJ_RETURN_IF_ERROR(rd_ints(&s, wt, &in->scatter_dims_to_operand_dims));
               break;
               case 4 : CJ_RETURN_IF_ERROR(rd_int(&s, wt, &in->scatter_index_vector_dim)); break;
               case 5 : CJ_RETURN_IF_ERROR(rd_ints(&s, wt, &in->input_batching_dims)); break;
               case 6 : CJ_RETURN_IF_ERROR(rd_ints(&s, wt, &in->scatter_indices_batching_dims));
               break;)
        break;
      } case 51 : {
        rd s;
        CJ_RETURN_IF_ERROR(rd_sub(r, wt, &s, "PrecisionConfig"));
        FIELDS(&s, case 1 : CJ_RETURN_IF_ERROR(rd_ints(&s, wt, &in->precision)); break;)
        break;
      } case 52 : {
        rd s;
        CJ_RETURN_IF_ERROR(rd_sub(r, wt, &s, "SourceTarget"));
        int64_t a = 0, b = 0;
        FIELDS(&s, case 1 : CJ_RETURN_IF_ERROR(rd_int(&s, wt, &a)); break;
               case 2 : CJ_RETURN_IF_ERROR(rd_int(&s, wt, &b)); break;)
        if (!cj_hlo_push_i64(r->h, &in->source_target, a) ||
            !cj_hlo_push_i64(r->h, &in->source_target, b))
          return cj_oom();
        break;
      } case 59 : {
        rd s;
        CJ_RETURN_IF_ERROR(rd_sub(r, wt, &s, "TriangularSolveOptions"));
        FIELDS(&s, case 1 : CJ_RETURN_IF_ERROR(rd_bool(&s, wt, &in->left_side)); break;
               case 2 : CJ_RETURN_IF_ERROR(rd_bool(&s, wt, &in->lower)); break;
               case 3 : CJ_RETURN_IF_ERROR(rd_bool(&s, wt, &in->unit_diagonal)); break;
               case 4 : CJ_RETURN_IF_ERROR(rd_int(&s, wt, &in->transpose_a)); break;)
        break;
      } case 62 : {
        rd s;
        CJ_RETURN_IF_ERROR(rd_sub(r, wt, &s, "CholeskyOptions"));
        FIELDS(&s, case 1 : CJ_RETURN_IF_ERROR(rd_bool(&s, wt, &in->lower)); break;)
        break;
      } case 65 : CJ_RETURN_IF_ERROR(rd_bool(r, wt, &in->custom_call_has_side_effect)); break;
      case 67 : CJ_RETURN_IF_ERROR(rd_bool(r, wt, &in->indices_are_sorted)); break;
      case 69 : CJ_RETURN_IF_ERROR(rd_bool(r, wt, &in->unique_indices)); break;
      case 70 : CJ_RETURN_IF_ERROR(rd_int(r, wt, &in->rng_algorithm)); break;
      case 77 : CJ_RETURN_IF_ERROR(rd_int(r, wt, &in->api_version)); break;
      case 81 : CJ_RETURN_IF_ERROR(rd_int(r, wt, &in->k)); break;
      case 85 : CJ_RETURN_IF_ERROR(rd_bool(r, wt, &in->largest)); break;)
  if (!in->name) in->name = "";
  if (!in->opcode) in->opcode = "";
  return NULL;
}

static CJ_MUST_USE cj_status read_comp(rd *r, hlo_comp *c) {
  FIELDS(r, case 1 : CJ_RETURN_IF_ERROR(rd_str(r, wt, &c->name, NULL)); break;
         case 2 : {
           rd s;
           CJ_RETURN_IF_ERROR(rd_sub(r, wt, &s, "HloInstructionProto"));
           hlo_instr *in = PUSH(r->h, c->instrs, c->n, c->cap);
           if (!in) return cj_oom();
           CJ_RETURN_IF_ERROR(read_instr(&s, in));
           break;
         } case 5 : CJ_RETURN_IF_ERROR(rd_int(r, wt, &c->id)); break;
         case 6 : CJ_RETURN_IF_ERROR(rd_int(r, wt, &c->root_id)); c->has_root = true; break;)
  if (!c->name) c->name = "";
  return NULL;
}

static CJ_MUST_USE cj_status read_module(rd *r, hlo_module *h) {
  FIELDS(r, case 1 : CJ_RETURN_IF_ERROR(rd_str(r, wt, &h->name, NULL)); break;
         case 2 : CJ_RETURN_IF_ERROR(rd_str(r, wt, &h->entry_name, NULL)); break;
         case 6 : CJ_RETURN_IF_ERROR(rd_int(r, wt, &h->entry_id)); h->has_entry_id = true; break;
         case 3 : {
           rd s;
           CJ_RETURN_IF_ERROR(rd_sub(r, wt, &s, "HloComputationProto"));
           hlo_comp *c = PUSH(h, h->comps, h->n, h->cap);
           if (!c) return cj_oom();
           CJ_RETURN_IF_ERROR(read_comp(&s, c));
           break;
         })
  return NULL;
}

/* HloModuleProtoWithConfig: hlo_module = 1, config = 2 (HloModuleConfigProto, not read) */
static CJ_MUST_USE cj_status read_with_config(rd *r, hlo_module *h) {
  bool seen = false;
  FIELDS(r, case 1 : {
    rd s;
    CJ_RETURN_IF_ERROR(rd_sub(r, wt, &s, "HloModuleProto"));
    CJ_RETURN_IF_ERROR(read_module(&s, h));
    seen = true;
    break;
  })
  return seen ? NULL : cj_invalid("hlo proto: the HloModuleProtoWithConfig holds no hlo_module");
}

cj_status cj_hlo_read_proto(const void *data, size_t len, bool with_config, hlo_module **out) {
  *out = NULL;
  if (!data && len) return cj_invalid("hlo proto: data is NULL");
  hlo_module *h = cj_hlo_module_new();
  if (!h) return cj_oom();
  rd r = {data, (const uint8_t *)data + len, data,
          with_config ? "HloModuleProtoWithConfig" : "HloModuleProto", h, 0};
  cj_status st = with_config ? read_with_config(&r, h) : read_module(&r, h);
  if (!st && !h->n) st = cj_invalid("hlo proto: the module has no computations");
  if (st) {
    cj_hlo_module_free(h);
    return st;
  }
  *out = h;
  return NULL;
}
