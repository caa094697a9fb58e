/* cjrt: the protobuf wire format's primitives, shared by our readers of serialized protos
 * (compile_options.c: xla.CompileOptionsProto; hlo_proto.c: xla.HloModuleProto). Each reader
 * keeps its own cursor and turns a cj_pb_err into a message naming what it was reading. */
#ifndef CJ_FRONTEND_PROTO_WIRE_H
#define CJ_FRONTEND_PROTO_WIRE_H

#include <stdint.h>

enum { CJ_WT_VARINT = 0, CJ_WT_I64 = 1, CJ_WT_LEN = 2, CJ_WT_SGROUP = 3, CJ_WT_EGROUP = 4,
       CJ_WT_I32 = 5 };

typedef enum cj_pb_err {
  CJ_PB_OK = 0,
  CJ_PB_TRUNCATED,     /* "truncated varint" */
  CJ_PB_OVER_64_BITS,  /* "varint longer than 64 bits" */
  CJ_PB_OVER_10_BYTES, /* "varint longer than 10 bytes" */
  CJ_PB_BAD_FIELD,     /* "invalid field number" */
} cj_pb_err;

static inline const char *cj_pb_err_text(cj_pb_err e) {
  switch (e) {
    case CJ_PB_TRUNCATED: return "truncated varint";
    case CJ_PB_OVER_64_BITS: return "varint longer than 64 bits";
    case CJ_PB_OVER_10_BYTES: return "varint longer than 10 bytes";
    case CJ_PB_BAD_FIELD: return "invalid field number";
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

#endif
