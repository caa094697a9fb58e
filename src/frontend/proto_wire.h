/* cjrt: the protobuf wire format's primitives, shared by our readers of serialized protos
 * (compile_options.c: xla.CompileOptionsProto; hlo_proto.c: xla.HloModuleProto). Each reader
 * keeps its own cursor and turns a cj_pb_err into a message naming what it was reading. The
 * writers (compile_options.c; runtime/executable.c, serialized executables) share cj_pb_buf. */
#ifndef CJ_FRONTEND_PROTO_WIRE_H
#define CJ_FRONTEND_PROTO_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/grow.h"

enum { CJ_WT_VARINT = 0, CJ_WT_I64 = 1, CJ_WT_LEN = 2, CJ_WT_SGROUP = 3, CJ_WT_EGROUP = 4,
       CJ_WT_I32 = 5 };

typedef enum cj_pb_err {
  CJ_PB_OK = 0,
  CJ_PB_TRUNCATED,     /* "truncated varint" */
  CJ_PB_OVER_64_BITS,  /* "varint longer than 64 bits" */
  CJ_PB_OVER_10_BYTES, /* "varint longer than 10 bytes" */
  CJ_PB_BAD_FIELD,     /* "invalid field number" */
  CJ_PB_SHORT_I64,     /* "truncated fixed64" */
  CJ_PB_SHORT_I32,     /* "truncated fixed32" */
  CJ_PB_PAST_END,      /* "length runs past the end" */
  CJ_PB_DEEP_MESSAGE,  /* "messages nested too deeply" */
  CJ_PB_DEEP_GROUP,    /* "groups nested too deeply" */
  CJ_PB_OPEN_GROUP,    /* "unterminated group" */
  CJ_PB_BAD_END_GROUP, /* "mismatched end-group" */
  CJ_PB_END_GROUP,     /* "unexpected end-group" */
  CJ_PB_BAD_WIRE_TYPE, /* "invalid wire type" */
} cj_pb_err;

static inline const char *cj_pb_err_text(cj_pb_err e) {
  switch (e) {
    case CJ_PB_TRUNCATED: return "truncated varint";
    case CJ_PB_OVER_64_BITS: return "varint longer than 64 bits";
    case CJ_PB_OVER_10_BYTES: return "varint longer than 10 bytes";
    case CJ_PB_BAD_FIELD: return "invalid field number";
    case CJ_PB_SHORT_I64: return "truncated fixed64";
    case CJ_PB_SHORT_I32: return "truncated fixed32";
    case CJ_PB_PAST_END: return "length runs past the end";
    case CJ_PB_DEEP_MESSAGE: return "messages nested too deeply";
    case CJ_PB_DEEP_GROUP: return "groups nested too deeply";
    case CJ_PB_OPEN_GROUP: return "unterminated group";
    case CJ_PB_BAD_END_GROUP: return "mismatched end-group";
    case CJ_PB_END_GROUP: return "unexpected end-group";
    case CJ_PB_BAD_WIRE_TYPE: return "invalid wire type";
    default: return "";
  }
}

/* Reads a varint at *p (never past end), advancing *p. */
static inline cj_pb_err cj_pb_varint(const uint8_t **p, const uint8_t *end, uint64_t *out) {
  uint64_t v = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    if (*p >= end) return CJ_PB_TRUNCATED;
    uint8_t b = *(*p)++;
    if (shift == 63 && (b & 0x7e)) return CJ_PB_OVER_64_BITS;
    v |= (uint64_t)(b & 0x7f) << shift;
    if (!(b & 0x80)) {
      *out = v;
      return CJ_PB_OK;
    }
  }
  return CJ_PB_OVER_10_BYTES;
}

/* Reads a field tag: its number (1 .. 2^29 - 1) and wire type. */
static inline cj_pb_err cj_pb_tag(const uint8_t **p, const uint8_t *end, uint32_t *field,
                                  int *wt) {
  uint64_t t;
  cj_pb_err e = cj_pb_varint(p, end, &t);
  if (e) return e;
  *wt = (int)(t & 7);
  uint64_t f = t >> 3;
  if (f == 0 || f > 0x1fffffff) return CJ_PB_BAD_FIELD;
  *field = (uint32_t)f;
  return CJ_PB_OK;
}

/* Skips the value of a field numbered `field` of wire type wt at *p (never past end), advancing
 * *p. Groups nest up to max_depth (depth: the groups around this one). With no_len, a
 * length-delimited value is refused once its length is read and checked (a reader whose
 * messages are nested as deep as it allows). */
static inline cj_pb_err cj_pb_skip(const uint8_t **p, const uint8_t *end, uint32_t field, int wt,
                                   int depth, int max_depth, bool no_len) {
  uint64_t v;
  cj_pb_err e;
  switch (wt) {
    case CJ_WT_VARINT: return cj_pb_varint(p, end, &v);
    case CJ_WT_I64:
      if (end - *p < 8) return CJ_PB_SHORT_I64;
      *p += 8;
      return CJ_PB_OK;
    case CJ_WT_I32:
      if (end - *p < 4) return CJ_PB_SHORT_I32;
      *p += 4;
      return CJ_PB_OK;
    case CJ_WT_LEN:
      if ((e = cj_pb_varint(p, end, &v))) return e;
      if (v > (uint64_t)(end - *p)) return CJ_PB_PAST_END;
      if (no_len) return CJ_PB_DEEP_MESSAGE;
      *p += v;
      return CJ_PB_OK;
    case CJ_WT_SGROUP:
      if (depth >= max_depth) return CJ_PB_DEEP_GROUP;
      for (;;) {
        if (*p >= end) return CJ_PB_OPEN_GROUP;
        uint32_t f = 0;
        int w = 0;
        if ((e = cj_pb_tag(p, end, &f, &w))) return e;
        if (w == CJ_WT_EGROUP) return f == field ? CJ_PB_OK : CJ_PB_BAD_END_GROUP;
        if ((e = cj_pb_skip(p, end, f, w, depth + 1, max_depth, no_len))) return e;
      }
    case CJ_WT_EGROUP: return CJ_PB_END_GROUP;
    default: return CJ_PB_BAD_WIRE_TYPE;
  }
}

/* Defines a reader's rd_varint(RD *r, uint64_t *out) and rd_tag(RD *r, uint32_t *field, int *wt)
 * over cj_pb_varint and cj_pb_tag, for its cursor type RD (with members p and end) and its error
 * maker ERR(const RD *r, const char *msg), which names what the reader was reading. */
#define CJ_PB_READER_PRIMITIVES(RD, ERR)                                      \
  static CJ_MUST_USE cj_status rd_varint(RD *r, uint64_t *out) {             \
    cj_pb_err e = cj_pb_varint(&r->p, r->end, out);                          \
    return e ? ERR(r, cj_pb_err_text(e)) : NULL;                             \
  }                                                                           \
  static CJ_MUST_USE cj_status rd_tag(RD *r, uint32_t *field, int *wt) {     \
    cj_pb_err e = cj_pb_tag(&r->p, r->end, field, wt);                       \
    return e ? ERR(r, cj_pb_err_text(e)) : NULL;                             \
  }

/* A growable byte buffer the writers append to; on allocation failure oom is set and further
 * writes are dropped. The caller frees p. */
typedef struct cj_pb_buf {
  uint8_t *p;
  size_t n, cap;
  bool oom;
} cj_pb_buf;

static inline void cj_pb_put_bytes(cj_pb_buf *w, const void *d, size_t n) {
  if (w->oom || !n) return;
  if (!cj_grow(&w->p, &w->cap, w->n + n, 64)) {
    w->oom = true;
    return;
  }
  memcpy(w->p + w->n, d, n);
  w->n += n;
}

static inline void cj_pb_put_varint(cj_pb_buf *w, uint64_t v) {
  uint8_t b[10];
  size_t n = 0;
  do {
    b[n] = (uint8_t)(v & 0x7f);
    v >>= 7;
    if (v) b[n] |= 0x80;
    n++;
  } while (v);
  cj_pb_put_bytes(w, b, n);
}

/* a field's key: its number and wire type */
static inline void cj_pb_put_key(cj_pb_buf *w, uint32_t field, int wire_type) {
  cj_pb_put_varint(w, ((uint64_t)field << 3) | (uint64_t)wire_type);
}

/* a length-delimited field holding what sub holds (sub running out of memory counts as w) */
static inline void cj_pb_put_sub(cj_pb_buf *w, uint32_t field, const cj_pb_buf *sub) {
  if (sub->oom) w->oom = true;
  cj_pb_put_key(w, field, CJ_WT_LEN);
  cj_pb_put_varint(w, sub->n);
  cj_pb_put_bytes(w, sub->p, sub->n);
}

#endif
