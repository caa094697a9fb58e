/* cjrt: private interface between the MLIR bytecode container reader (mlir_bytecode.c) and the
 * VHLO dialect reader (vhlo.c). Not a public header.
 *
 * The container reader owns the input bytes (borrowed for the call), the string, dialect,
 * attribute/type, properties and resource tables, and builds the IR. Dialect-specific payloads
 * (VHLO attributes, types and ops) are decoded by vhlo.c through the primitives below.
 *
 * Every read is bounds-checked against its cursor; the first failure is recorded in
 * bc_reader.err (with the byte offset) and every later read fails fast, so callers may chain
 * reads and test once.
 */
#ifndef CJ_FRONTEND_BYTECODE_INTERNAL_H
#define CJ_FRONTEND_BYTECODE_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/status.h"
#include "ir/ir.h"

/* Dialects the reader knows by name. */
typedef enum bc_dialect_kind {
  BC_DL_OTHER = 0,
  BC_DL_BUILTIN,
  BC_DL_VHLO,
  BC_DL_FUNC,
  BC_DL_STABLEHLO,
  BC_DL_CHLO,
  BC_DL_SDY,
  BC_DL_QUANT,
} bc_dialect_kind;

/* A cursor over a range of the input. */
typedef struct bc_cur {
  const uint8_t *p, *end;
} bc_cur;

/* A lazily decoded attribute or type entry. */
typedef struct bc_entry {
  const uint8_t *data;
  uint32_t size;
  uint32_t dialect;  /* index into bc_reader.dialects */
  uint8_t custom;    /* custom (dialect) encoding, else NUL-terminated text */
  uint8_t state;     /* 0 = not decoded, 1 = being decoded (cycle guard), 2 = done */
  const void *value; /* const cj_attr * or const cj_type * once decoded */
} bc_entry;

typedef struct bc_dialect {
  const char *name;
  size_t len;
  bc_dialect_kind kind;
} bc_dialect;

/* What vhlo.c needs to know about one op name. */
typedef struct bc_opname {
  uint32_t dialect;
  const char *name; /* without the dialect prefix */
  size_t len;
  int8_t registered; /* -1 unknown (bytecode < 5), else 0/1 */
  int16_t vhlo;      /* index into the VHLO op table, -1 if none / not resolved */
  uint8_t resolved;
  const char *full; /* "dialect.name", interned in the module */
} bc_opname;

typedef struct bc_reader {
  cj_module *m;
  const uint8_t *base; /* the input */
  size_t len;
  const char *filename;
  cj_status err; /* the first failure */

  uint64_t version;     /* bytecode container version */
  const char *producer; /* NUL-terminated, inside the input */
  bool vhlo;            /* the vhlo dialect is present */
  int vver[3];          /* the StableHLO version of a VHLO artifact (from the producer) */

  /* string section */
  uint64_t nstrings;
  const char **strs;
  uint32_t *strlens;

  /* dialect section */
  uint64_t ndialects;
  bc_dialect *dialects;
  uint64_t nopnames;
  bc_opname *opnames;

  /* attribute / type section */
  uint64_t nattrs, ntypes;
  bc_entry *attrs, *types;

  /* properties section: offsets of each entry ({size, bytes}) */
  uint64_t nprops;
  const uint8_t **props;
  const uint8_t *props_end;

  /* dialect resources in declaration order (blobs; NULL data for non-blob entries) */
  uint64_t nresources;
  const uint8_t **res_data;
  uint64_t *res_size;

  int depth;     /* attribute/type nesting depth (bounded) */
  bool saw_cast; /* a builtin.unrealized_conversion_cast was read */

  /* interned copies of the attribute names we use, keyed by the (stable) pointer we hold */
  const char *icache_key[64];
  const char *icache_val[64];
} bc_reader;

enum { BC_MAX_ATTR_DEPTH = 200, BC_MAX_REGION_DEPTH = 256 };

/* The module's interned copy of a NUL-terminated name whose pointer stays valid and unchanged
 * for the whole read (static strings, strings of the input, interned strings); NULL on
 * out-of-memory. */
const char *cj_bc_intern_name(bc_reader *r, const char *s);

/* qsort comparator of cj_named_attr by name. */
int cj_bc_cmp_named(const void *x, const void *y);

/* Sets the op's attributes at once (names interned through cj_bc_intern_name; no duplicates). */
CJ_MUST_USE cj_status cj_bc_set_attrs(bc_reader *r, cj_op *op, const cj_named_attr *attrs, uint32_t n);

/* ---- errors ---- */
/* Records an error at the cursor position (or at the start when c is NULL) unless one is set.
 * Always returns false. */
bool cj_bc_fail(bc_reader *r, const bc_cur *c, const char *fmt, ...) CJ_PRINTF(3, 4);
static inline bool bc_ok(const bc_reader *r) { return r->err == NULL; }

/* ---- primitives (false on failure, with the error recorded) ---- */
bool cj_bc_byte(bc_reader *r, bc_cur *c, uint8_t *out);
bool cj_bc_varint(bc_reader *r, bc_cur *c, uint64_t *out);
bool cj_bc_svarint(bc_reader *r, bc_cur *c, int64_t *out);
bool cj_bc_bytes(bc_reader *r, bc_cur *c, uint64_t n, const uint8_t **out);
/* size varint + bytes */
bool cj_bc_blob(bc_reader *r, bc_cur *c, const uint8_t **out, uint64_t *len);
/* a string-table reference */
bool cj_bc_string(bc_reader *r, bc_cur *c, const char **s, size_t *len);
/* APInt of a known bit width, as its low 64 bits (wider values: the low word) */
bool cj_bc_apint(bc_reader *r, bc_cur *c, unsigned width, uint64_t *out);
/* A list count that cannot exceed the remaining bytes (each element takes >= 1 byte). */
bool cj_bc_count(bc_reader *r, bc_cur *c, uint64_t *out);
/* A list of dimension sizes (each >= 0 or CJ_DYN): in stack when it holds nstack, else malloc'ed
 * (free *dims when it is not stack). */
bool cj_bc_dims(bc_reader *r, bc_cur *c, int64_t **dims, uint64_t *rank, int64_t *stack,
             size_t nstack);
/* A list of type references into *out (malloc'ed; NULL after a failure). */
bool cj_bc_type_list(bc_reader *r, bc_cur *c, const cj_type ***out, uint64_t *n);
/* A function type: its input type list, then its result type list. */
const cj_type *cj_bc_function_type(bc_reader *r, bc_cur *c);
/* A tuple type: its member type list. */
const cj_type *cj_bc_tuple_type(bc_reader *r, bc_cur *c);
/* A dictionary attribute: a count, then (name, attribute) pairs, each name read by key (a string
 * attribute, or NULL after failing with the dialect's own message). */
typedef const cj_attr *(*bc_attr_reader)(bc_reader *r, bc_cur *c);
const cj_attr *cj_bc_dict_attr(bc_reader *r, bc_cur *c, bc_attr_reader key);

/* attribute / type references (an index into the tables, decoded on first use) */
const cj_attr *cj_bc_attr_ref(bc_reader *r, bc_cur *c);
const cj_type *cj_bc_type_ref(bc_reader *r, bc_cur *c);
const cj_attr *cj_bc_attr_at(bc_reader *r, uint64_t idx);
const cj_type *cj_bc_type_at(bc_reader *r, uint64_t idx);
/* An optional attribute reference ((idx << 1) | present); *out NULL when absent. */
bool cj_bc_opt_attr_ref(bc_reader *r, bc_cur *c, const cj_attr **out);

/* Dense element data: converts MLIR's raw buffer layout of `type`'s elements into ours (tf32
 * widened to 4 bytes, i1 possibly bit-packed). A buffer of one element, or of elements all
 * equal, is stored as a splat: MLIR's attribute for such data is a splat whenever it comes from
 * text, so the two forms read the same. */
const cj_attr *cj_bc_make_dense(bc_reader *r, bc_cur *c, const cj_type *type, const uint8_t *data,
                             uint64_t len, bool vhlo_i1_rule);

/* ---- vhlo.c ---- */

/* Decodes a VHLO attribute / type entry (the whole entry is in c). NULL on failure. */
const cj_attr *cj_vhlo_read_attr(bc_reader *r, bc_cur *c);
const cj_type *cj_vhlo_read_type(bc_reader *r, bc_cur *c);

/* Native (non-VHLO) encodings of the stablehlo and chlo dialects. */
const cj_attr *cj_stablehlo_read_attr(bc_reader *r, bc_cur *c);
const cj_type *cj_stablehlo_read_type(bc_reader *r, bc_cur *c);
const cj_attr *cj_chlo_read_attr(bc_reader *r, bc_cur *c);
const cj_type *cj_quant_read_type(bc_reader *r, bc_cur *c);

/* Decodes an sdy (Shardy) attribute entry of a mixed artifact into its textual form. */
const cj_attr *cj_sdy_read_attr(bc_reader *r, bc_cur *c);

/* Looks a VHLO op name ("add_v1") up; -1 if unknown. */
int cj_vhlo_op_lookup(const char *name, size_t len);
/* The attribute names of a VHLO op in properties order (sorted), terminated by NULL. */
const char *const *cj_vhlo_op_attr_names(int vop);
const char *cj_vhlo_op_name(int vop);

/* Builds the StableHLO op for VHLO op `vop`. attrs/nattrs are the op's attributes (inherent and
 * discardable) in their generic decoded form; the function converts them (defaults dropped,
 * dimension numbers assembled, spellings normalized) and creates the op with room for operands,
 * results and regions (filled by the caller). parent_kind is the kind of the op whose region
 * holds this op (CJ_OP_COUNT at module level). */
CJ_MUST_USE cj_status cj_vhlo_build_op(bc_reader *r, int vop, const cj_named_attr *attrs, uint32_t nattrs,
                        uint32_t nopnds, uint32_t nresults, uint32_t nregions,
                        cj_op_kind parent_kind, cj_op **out);

/* Normalizes an op's attributes to the kinds the op table declares (shared with the plain
 * bytecode path). */
CJ_MUST_USE cj_status cj_bc_normalize_op_attrs(cj_module *m, cj_op *op);

#endif
