/* cjrt: the in-memory form of a StableHLO module.
 *
 * Everything cjrt compiles passes through this one representation: the text parser and the
 * bytecode/VHLO reader produce it, the verifier checks it, the printer prints it, and the compiler
 * lowers it to a plan. It knows nothing of PJRT.
 *
 * Shape of the IR (MLIR's, simplified):
 *   module  -> a top-level block of ops (func.func, sdy.mesh, ...) + module attributes
 *   op      -> kind (a row of ops.def), operands (values), results (values), attributes
 *              (named), regions, a location
 *   region  -> blocks (StableHLO regions have exactly one)
 *   block   -> arguments (values) + a list of ops, the last one its terminator
 *   value   -> an op result or a block argument, with a type
 *
 * Ownership: everything (types, attributes, values, ops, strings) lives in the module's arena
 * and dies with cj_module_free(). Nothing is freed individually. Pointers handed out by this API
 * are borrowed and valid as long as the module.
 *
 * Types are interned per module: two types are equal iff their pointers are equal. Attributes are
 * not interned (compare with cj_attr_equal).
 *
 * Dense data (constants, dense<...>) is kept as raw little-endian bytes, one element after the
 * other in row-major order, each element in cj_dtype_bytes() bytes (i1 and sub-byte types take one
 * byte, complex is (re, im)); a splat holds one element. Never per-element objects.
 */
#ifndef CJ_IR_IR_H
#define CJ_IR_IR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/arena.h"
#include "base/dtype.h"
#include "base/status.h"

typedef struct cj_module cj_module;
typedef struct cj_type cj_type;
typedef struct cj_attr cj_attr;
typedef struct cj_value cj_value;
typedef struct cj_op cj_op;
typedef struct cj_block cj_block;
typedef struct cj_region cj_region;

/* ======================================================================== types */

typedef enum cj_type_kind {
  CJ_TYPE_ELEM,     /* a scalar element type: i32, f32, complex<f32>, ... (dtype) */
  CJ_TYPE_QUANT,    /* !quant.uniform<...>, an element type */
  CJ_TYPE_TENSOR,   /* ranked tensor<d0 x d1 x ... x elem> */
  CJ_TYPE_UNRANKED, /* tensor<* x elem> */
  CJ_TYPE_TOKEN,    /* !stablehlo.token */
  CJ_TYPE_TUPLE,    /* tuple<...> */
  CJ_TYPE_FUNCTION, /* (ins) -> (outs) */
  CJ_TYPE_NONE,     /* none (builtin) / !vhlo.none_v1 */
  CJ_TYPE_OPAQUE,   /* a type of a dialect we only carry, kept as its text: !sdy.foo<...> */
} cj_type_kind;

#define CJ_DYN INT64_MIN /* a dynamic dimension, '?' */

/* !quant.uniform<storage<min:max>:expressed[:axis], scale:zero_point | {s:z, ...}> */
typedef struct cj_quant {
  cj_dtype storage;     /* S8, U8, S4, S16, S32, ... */
  cj_dtype expressed;   /* F32, F16, BF16, ... */
  int64_t storage_min;  /* defaults to the storage type's range */
  int64_t storage_max;
  int32_t axis;         /* quantized dimension, -1 for per-tensor */
  int32_t nscales;      /* 1 for per-tensor */
  const double *scales; /* nscales entries */
  const int64_t *zero_points;
} cj_quant;

struct cj_type {
  cj_type_kind kind;
  cj_dtype dtype;  /* ELEM: itself. QUANT: storage. TENSOR/UNRANKED: storage dtype of the element
                    * (so kernels never look through elem). TOKEN: CJ_TOKEN. Else CJ_INVALID. */
  int32_t rank;    /* TENSOR: rank. TUPLE: member count. FUNCTION: number of inputs. */
  int32_t nresults; /* FUNCTION: number of results */
  const cj_type *elem;      /* TENSOR/UNRANKED: the element type (kind ELEM or QUANT) */
  const int64_t *dims;      /* TENSOR: rank sizes, CJ_DYN for '?' */
  const int64_t *bounds;    /* TENSOR: NULL, or rank bounds (CJ_DYN = unbounded) from
                             * #stablehlo.bounds / #stablehlo.type_extensions */
  const cj_attr *encoding;  /* TENSOR: any other encoding attribute, else NULL */
  const cj_type *const *members; /* TUPLE: members. FUNCTION: inputs then results. */
  const cj_quant *quant;    /* QUANT */
  const char *text;         /* OPAQUE: the full spelling, e.g. "!sdy.mesh<...>" */
  int64_t num_elements;     /* TENSOR: product of dims, or -1 if any is dynamic */
  uint32_t hash;
};

/* Constructors return the module's unique instance (NULL only on out-of-memory). */
const cj_type *cj_type_elem(cj_module *m, cj_dtype dt);
const cj_type *cj_type_quant(cj_module *m, const cj_quant *q); /* q is copied */
const cj_type *cj_type_tensor(cj_module *m, const cj_type *elem, int32_t rank,
                              const int64_t *dims, const int64_t *bounds,
                              const cj_attr *encoding);
const cj_type *cj_type_unranked(cj_module *m, const cj_type *elem);
const cj_type *cj_type_token(cj_module *m);
const cj_type *cj_type_none(cj_module *m);
const cj_type *cj_type_tuple(cj_module *m, int32_t n, const cj_type *const *members);
const cj_type *cj_type_function(cj_module *m, int32_t nin, const cj_type *const *ins,
                                int32_t nout, const cj_type *const *outs);
const cj_type *cj_type_opaque(cj_module *m, const char *text, size_t len);
/* tensor<dims x dt>, a shorthand */
const cj_type *cj_type_tensor_of(cj_module *m, cj_dtype dt, int32_t rank, const int64_t *dims);
/* The same tensor shape with another element type. */
const cj_type *cj_type_with_elem(cj_module *m, const cj_type *tensor, const cj_type *elem);

static inline bool cj_type_is_tensor(const cj_type *t) { return t && t->kind == CJ_TYPE_TENSOR; }
static inline bool cj_type_is_static(const cj_type *t) {
  return t && t->kind == CJ_TYPE_TENSOR && t->num_elements >= 0;
}
static inline bool cj_type_is_quant(const cj_type *t) {
  return t && (t->kind == CJ_TYPE_QUANT ||
               ((t->kind == CJ_TYPE_TENSOR || t->kind == CJ_TYPE_UNRANKED) && t->elem &&
                t->elem->kind == CJ_TYPE_QUANT));
}
/* FUNCTION accessors */
static inline const cj_type *cj_type_fn_input(const cj_type *f, int i) { return f->members[i]; }
static inline const cj_type *cj_type_fn_result(const cj_type *f, int i) {
  return f->members[f->rank + i];
}

/* ======================================================================== attributes */

typedef enum cj_attr_kind {
  CJ_ATTR_UNIT,        /* a unit attribute (present, no value) */
  CJ_ATTR_BOOL,        /* true / false */
  CJ_ATTR_INT,         /* 42 : i64  (type may be NULL = untyped/default i64) */
  CJ_ATTR_FLOAT,       /* 1.0 : f32 */
  CJ_ATTR_STRING,      /* "text" (may hold NUL bytes; len is authoritative) */
  CJ_ATTR_TYPE,        /* a type used as an attribute (function_type = (...) -> ...) */
  CJ_ATTR_SYMREF,      /* @sym or @a::@b */
  CJ_ATTR_ARRAY,       /* [a, b, ...] */
  CJ_ATTR_DICT,        /* {name = value, ...} */
  CJ_ATTR_DENSE_ARRAY, /* array<i64: 1, 2>, array<i1: true>, array<f32: ...> */
  CJ_ATTR_DENSE,       /* dense<...> : tensor<...> (DenseElementsAttr) */
  CJ_ATTR_ENUM,        /* #stablehlo<comparison_direction GT>, #chlo<...>, ... */
  CJ_ATTR_STRUCT,      /* #stablehlo.gather<...>, #stablehlo.conv<...>, ... (see cj_struct_kind) */
  CJ_ATTR_LOC,         /* a location: loc(...) */
  CJ_ATTR_OPAQUE,      /* an attribute of a dialect we only carry, kept as text: #sdy.sharding<...> */
} cj_attr_kind;

/* ---- enums: every enumerated attribute, declared once in enums.def ---- */
typedef enum cj_enum_kind {
#define EK(id, dialect, keyword) CJ_EK_##id,
#define EV(kind, id, name, value)
#include "ir/enums.def"
#undef EK
#undef EV
  CJ_EK_COUNT
} cj_enum_kind;

/* enumerator values (the numbers StableHLO and VHLO use) */
enum {
#define EK(id, dialect, keyword)
#define EV(kind, id, name, value) CJ_##kind##_##id = value,
#include "ir/enums.def"
#undef EK
#undef EV
};

/* ---- structured attributes: #dialect.<mnemonic><field = value, ...>, fields in structs.def ---- */
typedef enum cj_struct_kind {
#define SK(id, dialect, mnemonic) CJ_SK_##id,
#define SF(sk, field, fkind)
#define SK_END(id)
#include "ir/structs.def"
#undef SK
#undef SF
#undef SK_END
  CJ_SK_COUNT
} cj_struct_kind;

/* field indices: CJ_SF_<STRUCT>_<field>, and CJ_SF_<STRUCT>__COUNT */
#define SK(id, dialect, mnemonic) enum { CJ_SF_##id##__FIRST = -1,
#define SF(sk, field, fkind) CJ_SF_##sk##_##field,
#define SK_END(id) CJ_SF_##id##__COUNT };
#include "ir/structs.def"
#undef SK
#undef SF
#undef SK_END

/* field kinds */
typedef enum cj_field_kind {
  CJ_FK_I64,
  CJ_FK_I64ARR,
  CJ_FK_BOOL,
  CJ_FK_F64,
  CJ_FK_TYPE,
  CJ_FK_ENUM_RESULT_ACCURACY_MODE,
} cj_field_kind;

typedef enum cj_loc_kind {
  CJ_LOC_UNKNOWN,  /* loc(unknown) */
  CJ_LOC_FILE,     /* loc("file":line:col) */
  CJ_LOC_NAME,     /* loc("name"(child)) or loc("name") */
  CJ_LOC_CALLSITE, /* loc(callsite(callee at caller)) */
  CJ_LOC_FUSED,    /* loc(fused[a, b]) or loc(fused<meta>[...]) */
} cj_loc_kind;

typedef struct cj_named_attr {
  const char *name; /* interned in the module: equal names are equal pointers */
  const cj_attr *value;
} cj_named_attr;

struct cj_attr {
  cj_attr_kind kind;
  union {
    bool b;                                       /* BOOL */
    struct { int64_t v; const cj_type *type; } i; /* INT (ui64 values stored as their bits) */
    struct { double v; const cj_type *type; } f;  /* FLOAT (value rounded to the type) */
    struct { const char *s; size_t len; } str;    /* STRING (NUL-terminated too) */
    const cj_type *type;                          /* TYPE */
    struct {                                      /* SYMREF: @root::@nested[0]::... */
      const char *root;
      int32_t nnested;
      const char *const *nested;
    } sym;
    struct { int32_t n; const cj_attr *const *items; } arr;  /* ARRAY */
    struct { int32_t n; const cj_named_attr *items; } dict;  /* DICT (sorted by name) */
    struct {                                                 /* DENSE_ARRAY */
      cj_dtype dtype; /* S64, S32, PRED (1 byte each), F32, F64, ... */
      int64_t n;
      const void *data; /* n elements of cj_dtype_bytes(dtype) */
    } darr;
    struct {            /* DENSE */
      const cj_type *type; /* a static TENSOR type (or a dynamic one, for splats) */
      const void *data;
      size_t nbytes;       /* element bytes * (splat ? 1 : num_elements) */
      bool splat;
    } dense;
    struct { cj_enum_kind ek; int32_t v; } en;               /* ENUM */
    struct { cj_struct_kind sk; const cj_attr *const *fields; } st; /* STRUCT; NULL field = absent */
    struct {                                                 /* LOC */
      cj_loc_kind lk;
      const char *name;  /* FILE: file name; NAME: the name */
      int32_t line, col; /* FILE */
      int32_t n;         /* NAME: 0/1 child; CALLSITE: 2 (callee, caller); FUSED: n */
      const cj_attr *const *children;
      const cj_attr *metadata; /* FUSED: optional */
    } loc;
    struct { const char *text; size_t len; } opaque;         /* OPAQUE: "#sdy.sharding<...>" */
  };
};

/* Constructors (allocate in the module's arena; NULL only on out-of-memory). Inputs are copied. */
const cj_attr *cj_attr_unit(cj_module *m);
const cj_attr *cj_attr_bool(cj_module *m, bool v);
const cj_attr *cj_attr_int(cj_module *m, int64_t v, const cj_type *type);
const cj_attr *cj_attr_float(cj_module *m, double v, const cj_type *type);
const cj_attr *cj_attr_string(cj_module *m, const char *s, size_t len);
const cj_attr *cj_attr_type(cj_module *m, const cj_type *t);
const cj_attr *cj_attr_symref(cj_module *m, const char *root, int32_t nnested,
                              const char *const *nested);
const cj_attr *cj_attr_array(cj_module *m, int32_t n, const cj_attr *const *items);
/* The dictionary is sorted by name; a duplicate name keeps the last value. */
const cj_attr *cj_attr_dict(cj_module *m, int32_t n, const cj_named_attr *items);
/* The value named `name` in a DICT attribute; NULL when absent or when dict is not a DICT. */
const cj_attr *cj_attr_dict_get(const cj_attr *dict, const char *name);
const cj_attr *cj_attr_dense_array(cj_module *m, cj_dtype dt, int64_t n, const void *data);
const cj_attr *cj_attr_i64_array(cj_module *m, int64_t n, const int64_t *v); /* array<i64: ...> */
const cj_attr *cj_attr_dense(cj_module *m, const cj_type *type, const void *data, size_t nbytes,
                             bool splat);
const cj_attr *cj_attr_enum(cj_module *m, cj_enum_kind ek, int32_t v);
/* fields: CJ_SF_<kind>__COUNT entries (NULL = absent), copied */
const cj_attr *cj_attr_struct(cj_module *m, cj_struct_kind sk, const cj_attr *const *fields);
const cj_attr *cj_attr_loc(cj_module *m, cj_loc_kind lk, const char *name, int32_t line,
                           int32_t col, int32_t n, const cj_attr *const *children,
                           const cj_attr *metadata);
/* The first file location (CJ_LOC_FILE) in location loc, children in order (for a call site,
 * the callee first), looking no deeper than max_depth levels; NULL if none. */
const cj_attr *cj_loc_first_file(const cj_attr *loc, int max_depth);
const cj_attr *cj_attr_opaque(cj_module *m, const char *text, size_t len);

bool cj_attr_equal(const cj_attr *a, const cj_attr *b);

/* Reading attributes. Each returns false (and leaves the outputs alone) if `a` is NULL or of
 * another kind. Integer lists are accepted in every spelling StableHLO has used: array<i64: ...>,
 * dense<...> : tensor<Nxi64>, and [1, 2] arrays of integers. */
bool cj_attr_get_i64(const cj_attr *a, int64_t *out);
bool cj_attr_get_bool(const cj_attr *a, bool *out);
bool cj_attr_get_f64(const cj_attr *a, double *out);
bool cj_attr_get_str(const cj_attr *a, const char **out, size_t *len);
/* Copies up to `cap` values; *n is set to the full count. */
bool cj_attr_get_i64s(const cj_attr *a, int64_t *out, int64_t cap, int64_t *n);
/* For ENUM attributes of kind `ek`. */
bool cj_attr_get_enum(const cj_attr *a, cj_enum_kind ek, int32_t *out);
/* STRUCT field (NULL if absent or if `a` is not a struct of kind `sk`). */
const cj_attr *cj_attr_field(const cj_attr *a, cj_struct_kind sk, int field);

/* DENSE element count (of the type; 1 for a splat's stored data) and element i as double/int64
 * (splats return their single value for any i). */
int64_t cj_dense_num_elements(const cj_attr *a);
double cj_dense_get_f64(const cj_attr *a, int64_t i);
int64_t cj_dense_get_i64(const cj_attr *a, int64_t i);

/* Names of enums and their cases ("comparison_direction", "GT"), NULL if out of range. */
const char *cj_enum_keyword(cj_enum_kind ek);
const char *cj_enum_dialect(cj_enum_kind ek); /* "stablehlo", "chlo" */
const char *cj_enum_case_name(cj_enum_kind ek, int32_t v);
bool cj_enum_from_name(cj_enum_kind ek, const char *s, size_t n, int32_t *out);
/* Struct kinds: dialect ("stablehlo"), mnemonic ("gather"), field names and kinds (structs.def) */
const char *cj_struct_dialect(cj_struct_kind sk);
const char *cj_struct_mnemonic(cj_struct_kind sk);
cj_field_kind cj_struct_field_kind(cj_struct_kind sk, int field);
int cj_struct_num_fields(cj_struct_kind sk);
const char *cj_struct_field_name(cj_struct_kind sk, int field);
int cj_struct_field_index(cj_struct_kind sk, const char *name, size_t n); /* -1 if unknown */

/* ======================================================================== ops */

/* Op kinds: one per row of ops.def. CJ_OP_UNKNOWN is an op we only carry (any dialect). */
typedef enum cj_op_kind {
#define OP(id, name, nopnds, nres, nreg, syntax, flags, verify, attrs) CJ_OP_##id,
#include "ir/ops.def"
#undef OP
  CJ_OP_COUNT
} cj_op_kind;

/* Pretty-syntax forms (the SYNTAX column of ops.def). The parser and printer switch on this. */
typedef enum cj_syntax {
#define SYN(id, doc) CJ_SYN_##id,
#include "ir/syntax.def"
#undef SYN
  CJ_SYN_COUNT
} cj_syntax;

/* The forms `$operand, ..., kw = [i64, ...] attr-dict : T` (DYNAMIC_SLICE, BROADCAST,
 * BROADCAST_IN_DIM, DYNAMIC_BROADCAST_IN_DIM, TRANSPOSE, REVERSE), shared by the printer and the
 * text parser: nlead operands lead (0: all of them), then `kw = [..]` spells the attribute attr;
 * the type is written in the same-type form when same_type, else as a function type. NULL for
 * the other forms. */
typedef struct cj_dims_form {
  uint32_t nlead;
  bool same_type;
  const char *kw, *attr;
} cj_dims_form;
const cj_dims_form *cj_syntax_dims_form(cj_syntax syn);

/* Flags (the FLAGS column of ops.def). */
enum {
  CJ_OPF_ELEMENTWISE = 1u << 0, /* elementwise over same-shaped tensors */
  CJ_OPF_TERMINATOR = 1u << 1,  /* ends a block (return ops) */
  CJ_OPF_SIDE_EFFECT = 1u << 2, /* not removable even if unused (collectives, send, custom_call
                                 * with has_side_effect, check ops, ...) */
  CJ_OPF_COMMUTATIVE = 1u << 3,
  CJ_OPF_SAME_TYPE = 1u << 4,   /* SameOperandsAndResultType */
  CJ_OPF_ISOLATED = 1u << 5,    /* regions are isolated from above (func.func, sdy.manual...) */
  CJ_OPF_SYMBOL = 1u << 6,      /* defines a symbol (func.func, sdy.mesh) */
  CJ_OPF_CARRIED = 1u << 7,     /* an op of a dialect we only carry as data (sdy, ...): kept,
                                 * printed, never executed directly */
  CJ_OPF_DEPRECATED = 1u << 8,
};

/* Attribute kinds for the op table (the ATTRS column): what an attribute of that name must hold
 * once normalized. Producers convert older spellings into these (e.g. dense<[1,2]> : tensor<2xi64>
 * into array<i64: 1, 2> for I64ARR), so that consumers read one form. */
typedef enum cj_attr_spec_kind {
  CJ_AK_ANY,        /* anything */
  CJ_AK_BOOL,       /* BOOL */
  CJ_AK_UNIT,       /* UNIT (presence is the value) */
  CJ_AK_I64,        /* INT of type i64 */
  CJ_AK_I32,        /* INT of type i32 */
  CJ_AK_F32,        /* FLOAT of type f32 */
  CJ_AK_STR,        /* STRING */
  CJ_AK_SYM,        /* SYMREF */
  CJ_AK_SYMARR,     /* ARRAY of SYMREF */
  CJ_AK_I64ARR,     /* DENSE_ARRAY of S64 */
  CJ_AK_BOOLARR,    /* DENSE_ARRAY of PRED */
  CJ_AK_I64DENSE,   /* DENSE of an i64 tensor (padding, replica_groups, source_target_pairs) */
  CJ_AK_ELEMENTS,   /* DENSE of any type (constant values) */
  CJ_AK_TYPE,       /* TYPE */
  CJ_AK_DICT,       /* DICT */
  CJ_AK_ARRAY,      /* ARRAY of anything */
  CJ_AK_STR_OR_DICT,/* STRING or DICT (custom_call backend_config) */
  CJ_AK_ENUM,       /* ENUM of the kind given in the spec */
  CJ_AK_ENUMARR,    /* ARRAY of ENUM of the kind given (precision_config) */
  CJ_AK_STRUCT,     /* STRUCT of the kind given */
  CJ_AK_STRUCTARR,  /* ARRAY of STRUCT of the kind given (output_operand_aliases) */
} cj_attr_spec_kind;

enum { CJ_AF_REQUIRED = 1, CJ_AF_OPTIONAL = 0 };

typedef struct cj_attr_spec {
  const char *name;
  cj_attr_spec_kind kind;
  int sub;   /* CJ_AK_ENUM/ENUMARR: the cj_enum_kind; CJ_AK_STRUCT/STRUCTARR: the cj_struct_kind */
  int flags; /* CJ_AF_REQUIRED or CJ_AF_OPTIONAL */
} cj_attr_spec;

typedef struct cj_op_info {
  const char *name;    /* "stablehlo.add" */
  int16_t nopnds;      /* fixed operand count, or -1 = variadic */
  int16_t nresults;    /* fixed result count, or -1 = variadic */
  int16_t nregions;    /* fixed region count, or -1 = variadic */
  cj_syntax syntax;
  uint32_t flags;      /* CJ_OPF_* */
  /* The spec verifier: checks the op against the StableHLO specification (operand/result
   * types, attribute ranges, region signatures). NULL = nothing beyond arity and attributes. */
  cj_status (*verify)(const cj_op *op);
  const cj_attr_spec *attrs; /* inherent attributes, terminated by a {NULL} row */
} cj_op_info;

const cj_op_info *cj_op_info_get(cj_op_kind kind);
/* Looks an op name up in the table ("stablehlo.add" -> CJ_OP_ADD); CJ_OP_UNKNOWN if absent. */
cj_op_kind cj_op_kind_from_name(const char *name, size_t len);
/* The spec of an inherent attribute of `kind` by name, NULL if it is not one. */
const cj_attr_spec *cj_op_attr_spec(cj_op_kind kind, const char *name);

/* ======================================================================== values, ops, blocks */

/* Where something was read from: the file name given to the parser and a 1-based line and column
 * (line 0 = unknown). For bytecode, line/col come from the op's FileLineColLoc if any. */
typedef struct cj_srcpos {
  const char *file;
  int32_t line, col;
} cj_srcpos;

struct cj_value {
  const cj_type *type;
  cj_op *def;         /* the defining op, or NULL for a block argument */
  cj_block *block;    /* for a block argument: its block */
  uint32_t index;     /* result index in def, or argument index in block */
  uint32_t id;        /* scratch: free for a pass to number values */
  const char *name;   /* the SSA name it was read with, without '%' (may be NULL) */
  const cj_attr *loc; /* block arguments may carry a location */
};

struct cj_op {
  cj_op_kind kind;
  const char *name;        /* always set: the full op name ("stablehlo.add", "foo.bar") */
  uint32_t nopnds, nresults, nregions, nattrs, nsuccessors;
  cj_value **operands;     /* nopnds pointers */
  cj_value *results;       /* nresults values, owned by this op */
  cj_region *regions;      /* nregions regions, owned by this op */
  cj_named_attr *attrs;    /* nattrs: inherent and discardable attributes, in no set order */
  cj_block **successors;   /* only for ops we carry; StableHLO has no branches */
  const cj_attr *loc;      /* the op's MLIR location (CJ_ATTR_LOC), or NULL */
  cj_srcpos pos;           /* where it was read */
  cj_op *prev, *next;      /* siblings in the block */
  cj_block *block;         /* the block it is in (NULL while detached) */
  void *scratch;           /* free for a pass */
};

struct cj_block {
  cj_region *region;  /* the region it belongs to */
  cj_block *next;     /* next block in the region */
  uint32_t nargs;
  cj_value *args;     /* nargs block arguments */
  cj_op *first, *last;
  uint32_t nops;
  const char *label;  /* "bb0" if it was written, else NULL */
};

struct cj_region {
  cj_op *op;          /* the op that owns it (NULL for the module body) */
  cj_block *first, *last;
  uint32_t nblocks;
};

struct cj_module {
  cj_arena arena;
  const char *name;          /* "jit_main" from `module @jit_main`, or NULL */
  cj_named_attr *attrs;      /* module attributes: mhlo.num_partitions, ... */
  uint32_t nattrs;
  cj_region body;            /* one block holding func.func ops etc. */
  const cj_attr *loc;
  cj_srcpos pos;
  const char *filename;      /* the name given to the reader, for messages */
  const char *producer;      /* bytecode producer ("StableHLO_v1.20.0"), or NULL */
  void *interning;           /* private: type and string tables */
};

/* ---- modules ---- */
cj_module *cj_module_create(const char *filename); /* NULL on out-of-memory */
void cj_module_free(cj_module *m);                 /* NULL is fine */
cj_block *cj_module_block(cj_module *m);           /* the body's block (created on demand) */
/* A func.func (or any symbol op) by name in the module body, NULL if none. */
cj_op *cj_module_lookup_symbol(const cj_module *m, const char *name);
/* The entry function: @main, else the only func.func, else NULL. */
cj_op *cj_module_main(const cj_module *m);
const cj_attr *cj_module_attr(const cj_module *m, const char *name);
CJ_MUST_USE cj_status cj_module_set_attr(cj_module *m, const char *name, const cj_attr *value);

/* Interned strings (names of attributes, symbols, SSA names): equal strings give equal
 * pointers within one module. NULL only on out-of-memory. */
const char *cj_intern(cj_module *m, const char *s, size_t len);
static inline void *cj_alloc(cj_module *m, size_t size) { return cj_arena_alloc(&m->arena, size); }

/* ---- building ops ----
 * cj_op_create allocates an op with room for its operands, results and regions (each region
 * gets no block yet) and zero attributes; the caller fills operands (cj_op_set_operand), result
 * types (op->results[i].type), attributes (cj_op_set_attr) and regions, then inserts it. */
cj_op *cj_op_create(cj_module *m, cj_op_kind kind, const char *name, uint32_t nopnds,
                    uint32_t nresults, uint32_t nregions);
void cj_op_set_operand(cj_op *op, uint32_t i, cj_value *v);
/* Sets (or replaces) an attribute; NULL value removes it. */
CJ_MUST_USE cj_status cj_op_set_attr(cj_module *m, cj_op *op, const char *name, const cj_attr *value);
const cj_attr *cj_op_attr(const cj_op *op, const char *name); /* NULL if absent */
/* Appends block b (made elsewhere, not yet in a region) to r. */
void cj_region_append_block(cj_region *r, cj_block *b);
cj_block *cj_region_add_block(cj_module *m, cj_region *r, uint32_t nargs,
                              const cj_type *const *arg_types);
static inline cj_block *cj_region_block(const cj_region *r) { return r->first; }
void cj_block_append(cj_block *b, cj_op *op);
void cj_block_insert_before(cj_block *b, cj_op *before, cj_op *op); /* before NULL = append */
/* Numbers the values of block b and of every region nested in it (their `id`s) in program
 * order, block arguments before their ops' results, from *n on; *n ends past the last. */
void cj_block_number_values(cj_block *b, uint32_t *n);
void cj_block_remove(cj_block *b, cj_op *op);                       /* detaches, frees nothing */
static inline cj_op *cj_block_terminator(const cj_block *b) { return b ? b->last : NULL; }
/* Replaces every use of `from` by `to` inside `scope` (an op, including its nested regions) */
void cj_replace_uses_in_op(cj_op *scope, cj_value *from, cj_value *to);
/* Deep-copies `op` with its regions into module `m`; operands found in `map_from[i]` are mapped
 * to `map_to[i]`, others kept. Used by inlining. NULL on out-of-memory. */
cj_op *cj_op_clone(cj_module *m, const cj_op *op, uint32_t nmap, cj_value *const *map_from,
                   cj_value *const *map_to);
/* The map a pass keeps while it clones ops one by one: appends "results of `orig` -> results of
 * `clone`" to the malloc'ed arrays *from / *to (*n entries, *cap allocated; grown with realloc,
 * the caller frees both). false on out-of-memory, the arrays staying valid. */
bool cj_value_map_add_results(cj_value ***from, cj_value ***to, uint32_t *n, uint32_t *cap,
                              cj_op *orig, cj_op *clone);
/* The step of such a pass: clones `op` through the map (cj_op_clone) and adds its results to it
 * (cj_value_map_add_results); the caller places the clone. NULL on out-of-memory. */
cj_op *cj_op_clone_mapped(cj_module *m, cj_op *op, cj_value ***from, cj_value ***to, uint32_t *n,
                          uint32_t *cap);

/* ---- reading op attributes in their normalized form (see CJ_AK_*) ---- */
bool cj_op_get_i64(const cj_op *op, const char *name, int64_t *out);
bool cj_op_get_bool(const cj_op *op, const char *name, bool *out); /* UNIT reads as true */
bool cj_op_get_i64s(const cj_op *op, const char *name, int64_t *out, int64_t cap, int64_t *n);
bool cj_op_get_enum(const cj_op *op, const char *name, cj_enum_kind ek, int32_t *out);

/* ---- func.func helpers ---- */
const char *cj_func_name(const cj_op *func);            /* sym_name */
const cj_type *cj_func_type(const cj_op *func);         /* function_type (a FUNCTION type) */
const cj_attr *cj_func_arg_attrs(const cj_op *func, uint32_t i); /* DICT or NULL */
const cj_attr *cj_func_res_attrs(const cj_op *func, uint32_t i); /* DICT or NULL */
cj_block *cj_func_body(const cj_op *func);              /* NULL for a declaration */
/* out[j] (nres entries) = the argument whose storage result j may reuse when the caller donates
 * it, or -1; each argument serves one result at most: the argument marked tf.aliasing_output = j,
 * else the first argument marked jax.buffer_donor of result j's type, else (once every result
 * had its pick by type) the first such argument of result j's byte size and memory kind. */
CJ_MUST_USE cj_status cj_func_result_donors(const cj_op *func, int32_t nargs, int32_t nres,
                                            int32_t *out);

/* ---- walking ---- */
/* Calls fn on every op nested in `b` (pre-order, including ops inside regions); stops and returns
 * the first non-NULL status. */
typedef cj_status (*cj_walk_fn)(cj_op *op, void *ctx);
CJ_MUST_USE cj_status cj_walk_block(cj_block *b, cj_walk_fn fn, void *ctx);
CJ_MUST_USE cj_status cj_walk_module(cj_module *m, cj_walk_fn fn, void *ctx);

/* ---- messages ----
 * Makes an error naming the op, its position and the reason:
 *   "stablehlo.dot_general at prog.mlir:12:5: lhs contracting dim 1 has size 3, ..."
 * The position is op->pos if known, else the op's FileLineColLoc, else "unknown location". */
CJ_MUST_USE cj_status cj_op_error(const cj_op *op, cj_code code, const char *fmt, ...) CJ_PRINTF(3, 4);
/* Writes "file:line:col" (or "unknown location") for op into buf. */
void cj_op_where(const cj_op *op, char *buf, size_t cap);
/* Writes cj_op_error's text ("<op name> at <where>: <message>") into buf (cap > 0). */
void cj_op_describev(const cj_op *op, char *buf, size_t cap, const char *fmt, va_list ap);

/* ======================================================================== verify, print */

/* Verifies the module: arity against the op table, attribute kinds, SSA dominance and use of
 * undefined values, terminators, symbol references, then each op's spec verifier. Returns the
 * first failure (src/ir/verify.c). */
CJ_MUST_USE cj_status cj_verify_module(const cj_module *m);
CJ_MUST_USE cj_status cj_verify_op(const cj_op *op);

/* Prints the module in the pretty form upstream's printer uses (src/ir/print.c). The output is
 * appended to *buf (malloc'ed, grown as needed; *len is its length without the NUL). Flags:
 * CJ_PRINT_GENERIC prints every op in generic form; CJ_PRINT_LOCS prints locations. */
enum { CJ_PRINT_GENERIC = 1, CJ_PRINT_LOCS = 2 };
CJ_MUST_USE cj_status cj_print_module(const cj_module *m, unsigned flags, char **buf, size_t *len);
CJ_MUST_USE cj_status cj_print_type(const cj_type *t, char **buf, size_t *len);
CJ_MUST_USE cj_status cj_print_attr(const cj_attr *a, char **buf, size_t *len);
CJ_MUST_USE cj_status cj_print_op(const cj_op *op, unsigned flags, char **buf, size_t *len);

#endif
