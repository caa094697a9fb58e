/* cjrt: the op, enum and struct tables, built from ops.def, enums.def and structs.def. */
#include <string.h>

#include "ir/ir.h"
#include "ir/verify_fns.h"

/* short names used in the FLAGS column of ops.def */
#define V (-1)
#define EW CJ_OPF_ELEMENTWISE
#define SAME CJ_OPF_SAME_TYPE
#define COMM CJ_OPF_COMMUTATIVE
#define TERM CJ_OPF_TERMINATOR
#define SIDE CJ_OPF_SIDE_EFFECT
#define ISO CJ_OPF_ISOLATED
#define SYM CJ_OPF_SYMBOL
#define CARRY CJ_OPF_CARRIED
#define DEPR CJ_OPF_DEPRECATED
#define REQ CJ_AF_REQUIRED
#define OPT CJ_AF_OPTIONAL
#define EK_(x) CJ_EK_##x
#define SK_(x) CJ_SK_##x

/* per-op attribute spec arrays */
#define A(n, kind, sub, req) {#n, CJ_AK_##kind, (int)(sub), req},
#define EK_COMPARISON_DIRECTION CJ_EK_COMPARISON_DIRECTION
#define EK_COMPARISON_TYPE CJ_EK_COMPARISON_TYPE
#define EK_PRECISION CJ_EK_PRECISION
#define EK_TRANSPOSE CJ_EK_TRANSPOSE
#define EK_FFT_TYPE CJ_EK_FFT_TYPE
#define EK_RNG_DISTRIBUTION CJ_EK_RNG_DISTRIBUTION
#define EK_RNG_ALGORITHM CJ_EK_RNG_ALGORITHM
#define EK_CHLO_COMPARISON_DIRECTION CJ_EK_CHLO_COMPARISON_DIRECTION
#define EK_CHLO_COMPARISON_TYPE CJ_EK_CHLO_COMPARISON_TYPE
#define EK_CHLO_PRECISION CJ_EK_CHLO_PRECISION
#define SK_RESULT_ACCURACY CJ_SK_RESULT_ACCURACY
#define SK_GATHER CJ_SK_GATHER
#define SK_SCATTER CJ_SK_SCATTER
#define SK_DOT CJ_SK_DOT
#define SK_DOT_ALGORITHM CJ_SK_DOT_ALGORITHM
#define SK_CONV CJ_SK_CONV
#define SK_CHANNEL_HANDLE CJ_SK_CHANNEL_HANDLE
#define SK_OUTPUT_OPERAND_ALIAS CJ_SK_OUTPUT_OPERAND_ALIAS
#define SK_RAGGED_DOT CJ_SK_RAGGED_DOT

#define OP(id, name, no, nr, ng, syn, fl, vf, attrs) \
  static const cj_attr_spec attrs_##id[] = {attrs{NULL, CJ_AK_ANY, 0, 0}};
#include "ir/ops.def"
#undef OP

static const cj_op_info op_table[CJ_OP_COUNT] = {
#define OP(id, name, no, nr, ng, syn, fl, vf, attrs) \
  {name, no, nr, ng, CJ_SYN_##syn, (uint32_t)(fl), vf, attrs_##id},
#include "ir/ops.def"
#undef OP
};
#undef A

/* opfacts.def has one row per op, in ops.def order: each row's position must be its op's kind
 * (a missing, repeated or misplaced row fails here, when this file compiles). */
enum {
#define OPF(id, ...) CJ_FACTROW_##id,
#include "ir/opfacts.def"
#undef OPF
  CJ_FACTROWS
};
_Static_assert((int)CJ_FACTROWS == (int)CJ_OP_COUNT, "opfacts.def must have one row per op of ops.def");
#define OPF(id, ...) \
  _Static_assert((int)CJ_FACTROW_##id == (int)CJ_OP_##id, "opfacts.def: row " #id " is not where ops.def has it");
#include "ir/opfacts.def"
#undef OPF

const cj_op_info *cj_op_info_get(cj_op_kind kind) {
  if ((unsigned)kind >= CJ_OP_COUNT) return &op_table[CJ_OP_UNKNOWN];
  return &op_table[kind];
}

/* A small open-addressing index from op name to kind, built on first use. */
#define NAME_SLOTS 512
static int16_t name_index[NAME_SLOTS];
static int name_index_ready;

static uint32_t hash_bytes(const char *s, size_t n) {
  uint32_t h = 2166136261u;
  for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)s[i]) * 16777619u;
  return h;
}

static void build_name_index(void) {
  int16_t local[NAME_SLOTS];
  for (int i = 0; i < NAME_SLOTS; i++) local[i] = -1;
  for (int k = 1; k < CJ_OP_COUNT; k++) {
    const char *n = op_table[k].name;
    uint32_t h = hash_bytes(n, strlen(n)) & (NAME_SLOTS - 1);
    while (local[h] >= 0) h = (h + 1) & (NAME_SLOTS - 1);
    local[h] = (int16_t)k;
  }
  memcpy(name_index, local, sizeof local);
  __atomic_store_n(&name_index_ready, 1, __ATOMIC_RELEASE);
}

cj_op_kind cj_op_kind_from_name(const char *name, size_t len) {
  if (!__atomic_load_n(&name_index_ready, __ATOMIC_ACQUIRE)) build_name_index();
  uint32_t h = hash_bytes(name, len) & (NAME_SLOTS - 1);
  while (name_index[h] >= 0) {
    const char *n = op_table[name_index[h]].name;
    if (strlen(n) == len && memcmp(n, name, len) == 0) return (cj_op_kind)name_index[h];
    h = (h + 1) & (NAME_SLOTS - 1);
  }
  return CJ_OP_UNKNOWN;
}

const cj_attr_spec *cj_op_attr_spec(cj_op_kind kind, const char *name) {
  const cj_attr_spec *s = cj_op_info_get(kind)->attrs;
  for (; s && s->name; s++)
    if (strcmp(s->name, name) == 0) return s;
  return NULL;
}

/* ---- enums ---- */

typedef struct enum_case {
  const char *name;
  int32_t value;
} enum_case;

#define EK(id, dialect, keyword)
#define EV(kind, id, name, value) {name, value},
static const enum_case enum_cases[] = {
#include "ir/enums.def"
    {NULL, 0}};
#undef EK
#undef EV

typedef struct enum_info {
  const char *dialect, *keyword;
  int first, count;
} enum_info;

static enum_info enum_infos[CJ_EK_COUNT];
static int enum_infos_ready;

static void build_enum_infos(void) {
  static const struct {
    int kind;
    const char *dialect, *keyword;
  } kinds[] = {
#define EK(id, dialect, keyword) {CJ_EK_##id, dialect, keyword},
#define EV(kind, id, name, value)
#include "ir/enums.def"
#undef EK
#undef EV
  };
  static const int case_kind[] = {
#define EK(id, dialect, keyword)
#define EV(kind, id, name, value) CJ_EK_##kind,
#include "ir/enums.def"
#undef EK
#undef EV
  };
  enum_info local[CJ_EK_COUNT];
  memset(local, 0, sizeof local);
  for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
    local[kinds[i].kind].dialect = kinds[i].dialect;
    local[kinds[i].kind].keyword = kinds[i].keyword;
    local[kinds[i].kind].first = -1;
  }
  for (int i = 0; i < (int)(sizeof case_kind / sizeof case_kind[0]); i++) {
    enum_info *e = &local[case_kind[i]];
    if (e->first < 0) e->first = i;
    e->count++;
  }
  memcpy(enum_infos, local, sizeof local);
  __atomic_store_n(&enum_infos_ready, 1, __ATOMIC_RELEASE);
}

static const enum_info *get_enum(cj_enum_kind ek) {
  if (!__atomic_load_n(&enum_infos_ready, __ATOMIC_ACQUIRE)) build_enum_infos();
  if ((unsigned)ek >= CJ_EK_COUNT) return NULL;
  return &enum_infos[ek];
}

const char *cj_enum_keyword(cj_enum_kind ek) {
  const enum_info *e = get_enum(ek);
  return e ? e->keyword : NULL;
}

const char *cj_enum_dialect(cj_enum_kind ek) {
  const enum_info *e = get_enum(ek);
  return e ? e->dialect : NULL;
}

const char *cj_enum_case_name(cj_enum_kind ek, int32_t v) {
  const enum_info *e = get_enum(ek);
  if (!e) return NULL;
  for (int i = 0; i < e->count; i++)
    if (enum_cases[e->first + i].value == v) return enum_cases[e->first + i].name;
  return NULL;
}

bool cj_enum_from_name(cj_enum_kind ek, const char *s, size_t n, int32_t *out) {
  const enum_info *e = get_enum(ek);
  if (!e) return false;
  for (int i = 0; i < e->count; i++) {
    const char *c = enum_cases[e->first + i].name;
    if (strlen(c) == n && memcmp(c, s, n) == 0) {
      *out = enum_cases[e->first + i].value;
      return true;
    }
  }
  return false;
}

/* ---- structs ---- */

typedef struct field_info {
  const char *name;
  cj_field_kind kind;
} field_info;

#define FK_I64 CJ_FK_I64
#define FK_I64ARR CJ_FK_I64ARR
#define FK_BOOL CJ_FK_BOOL
#define FK_F64 CJ_FK_F64
#define FK_TYPE CJ_FK_TYPE
#define FK_ENUM_RESULT_ACCURACY_MODE CJ_FK_ENUM_RESULT_ACCURACY_MODE

#define SK(id, dialect, mnemonic) static const field_info fields_##id[] = {
#define SF(sk, field, fkind) {#field, FK_##fkind},
#define SK_END(id) {NULL, 0}};
#include "ir/structs.def"
#undef SK
#undef SF
#undef SK_END

static const struct {
  const char *dialect, *mnemonic;
  const field_info *fields;
  int nfields;
} struct_table[CJ_SK_COUNT] = {
#define SK(id, dialect, mnemonic) {dialect, mnemonic, fields_##id, CJ_SF_##id##__COUNT},
#define SF(sk, field, fkind)
#define SK_END(id)
#include "ir/structs.def"
#undef SK
#undef SF
#undef SK_END
};

const char *cj_struct_dialect(cj_struct_kind sk) {
  return (unsigned)sk < CJ_SK_COUNT ? struct_table[sk].dialect : NULL;
}
const char *cj_struct_mnemonic(cj_struct_kind sk) {
  return (unsigned)sk < CJ_SK_COUNT ? struct_table[sk].mnemonic : NULL;
}
int cj_struct_num_fields(cj_struct_kind sk) {
  return (unsigned)sk < CJ_SK_COUNT ? struct_table[sk].nfields : 0;
}
const char *cj_struct_field_name(cj_struct_kind sk, int field) {
  if ((unsigned)sk >= CJ_SK_COUNT || field < 0 || field >= struct_table[sk].nfields) return NULL;
  return struct_table[sk].fields[field].name;
}
cj_field_kind cj_struct_field_kind(cj_struct_kind sk, int field) {
  if ((unsigned)sk >= CJ_SK_COUNT || field < 0 || field >= struct_table[sk].nfields)
    return CJ_FK_I64;
  return struct_table[sk].fields[field].kind;
}
int cj_struct_field_index(cj_struct_kind sk, const char *name, size_t n) {
  if ((unsigned)sk >= CJ_SK_COUNT) return -1;
  for (int i = 0; i < struct_table[sk].nfields; i++) {
    const char *f = struct_table[sk].fields[i].name;
    if (strlen(f) == n && memcmp(f, name, n) == 0) return i;
  }
  return -1;
}
