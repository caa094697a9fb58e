/* cjrt: the MLIR bytecode container (versions 0..6) read into our IR.
 *
 * Layout (see ../shared/reference/stablehlo-formats.md section 4): magic "ML\xEFR", version,
 * producer, then sections: strings (0), dialects and op names (1), attribute/type payloads (2)
 * and their offsets (3), the IR (4), resources (5, 6) and op properties (8). Attributes and
 * types are decoded lazily by index and cached; builtin ones here, VHLO ones in vhlo.c, others
 * stored as text go through the text parser's attribute/type parser.
 *
 * The IR section is a tree of blocks and ops; values are numbered per isolated-from-above scope
 * and may be used before they are defined (forward references are patched when the definition
 * is read). Everything is bounds-checked; errors name the file and the byte offset.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frontend/bytecode_internal.h"
#include "frontend/frontend.h"


enum {
  BC_VERSION_MAX = 6,
  BCV_DIALECT_VERSIONING = 1,
  BCV_LAZY_LOADING = 2,
  BCV_USE_LIST_ORDERING = 3,
  BCV_ELIDE_UNKNOWN_BLOCK_ARG_LOC = 4,
  BCV_NATIVE_PROPERTIES = 5,
};

enum {
  SEC_STRING = 0,
  SEC_DIALECT = 1,
  SEC_ATTRTYPE = 2,
  SEC_ATTRTYPE_OFFSET = 3,
  SEC_IR = 4,
  SEC_RESOURCE = 5,
  SEC_RESOURCE_OFFSET = 6,
  SEC_DIALECT_VERSIONS = 7,
  SEC_PROPERTIES = 8,
  SEC_COUNT = 9,
};

enum {
  OPM_ATTRS = 0x01,
  OPM_RESULTS = 0x02,
  OPM_OPERANDS = 0x04,
  OPM_SUCCESSORS = 0x08,
  OPM_REGIONS = 0x10,
  OPM_USELIST = 0x20,
  OPM_PROPERTIES = 0x40,
};

static const int64_t kCurrentVersion[3] = {1, 20, 0};
static const int64_t kMinimumVersion[3] = {0, 9, 0};

void cj_stablehlo_version_current(int64_t out[3]) {
  memcpy(out, kCurrentVersion, sizeof kCurrentVersion);
}
void cj_stablehlo_version_minimum(int64_t out[3]) {
  memcpy(out, kMinimumVersion, sizeof kMinimumVersion);
}

int cj_is_mlir_bytecode(const void *data, size_t len) {
  return data && len >= 4 && memcmp(data, "ML\xEFR", 4) == 0;
}

/* ======================================================================== errors, primitives */

bool cj_bc_fail(bc_reader *r, const bc_cur *c, const char *fmt, ...) {
  if (r->err) return false;
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  size_t off = c && c->p >= r->base && c->p <= r->base + r->len ? (size_t)(c->p - r->base) : 0;
  r->err = cj_status_make(CJ_INVALID_ARGUMENT, "%s: bytecode offset %zu: %s",
                          r->filename ? r->filename : "<bytecode>", off, msg);
  return false;
}

static bool truncated(bc_reader *r, bc_cur *c) {
  return cj_bc_fail(r, c, "unexpected end of data (truncated or corrupted bytecode)");
}

bool cj_bc_byte(bc_reader *r, bc_cur *c, uint8_t *out) {
  *out = 0; /* outputs are always written, so callers never see indeterminate values */
  if (r->err) return false;
  if (c->p >= c->end) return truncated(r, c);
  *out = *c->p++;
  return true;
}

bool cj_bc_varint(bc_reader *r, bc_cur *c, uint64_t *out) {
  *out = 0;
  if (r->err) return false;
  if (c->p >= c->end) return truncated(r, c);
  uint8_t b = *c->p;
  if (b & 1) { /* the common one-byte case */
    c->p++;
    *out = b >> 1;
    return true;
  }
  if (b == 0) { /* 8 raw little-endian bytes follow */
    if (c->end - c->p < 9) return truncated(r, c);
    uint64_t v = 0;
    for (int i = 8; i >= 1; i--) v = (v << 8) | c->p[i];
    c->p += 9;
    *out = v;
    return true;
  }
  unsigned n = (unsigned)__builtin_ctz(b); /* extra bytes, 1..7 */
  if ((size_t)(c->end - c->p) < n + 1) return truncated(r, c);
  uint64_t v = 0;
  for (int i = (int)n; i >= 0; i--) v = (v << 8) | c->p[i];
  c->p += n + 1;
  *out = v >> (n + 1);
  return true;
}

bool cj_bc_svarint(bc_reader *r, bc_cur *c, int64_t *out) {
  uint64_t u;
  *out = 0;
  if (!cj_bc_varint(r, c, &u)) return false;
  *out = (int64_t)((u >> 1) ^ (~(u & 1) + 1));
  return true;
}

bool cj_bc_bytes(bc_reader *r, bc_cur *c, uint64_t n, const uint8_t **out) {
  *out = NULL;
  if (r->err) return false;
  if ((uint64_t)(c->end - c->p) < n) return truncated(r, c);
  *out = c->p;
  c->p += n;
  return true;
}

bool cj_bc_blob(bc_reader *r, bc_cur *c, const uint8_t **out, uint64_t *len) {
  *out = NULL;
  return cj_bc_varint(r, c, len) && cj_bc_bytes(r, c, *len, out);
}

bool cj_bc_count(bc_reader *r, bc_cur *c, uint64_t *out) {
  if (!cj_bc_varint(r, c, out)) return false;
  if (*out > (uint64_t)(c->end - c->p))
    return cj_bc_fail(r, c, "count %llu exceeds the remaining %zu bytes", (unsigned long long)*out,
                   (size_t)(c->end - c->p));
  return true;
}

bool cj_bc_dims(bc_reader *r, bc_cur *c, int64_t **dims, uint64_t *rank, int64_t *stack,
             size_t nstack) {
  if (!cj_bc_count(r, c, rank)) return false;
  if (*rank > INT32_MAX) return cj_bc_fail(r, c, "rank too large");
  *dims = *rank <= nstack ? stack : malloc(sizeof(int64_t) * (size_t)*rank);
  if (!*dims) return cj_bc_fail(r, c, "out of memory");
  for (uint64_t i = 0; i < *rank; i++) {
    bool ok = cj_bc_svarint(r, c, &(*dims)[i]);
    if (ok && (*dims)[i] < 0 && (*dims)[i] != CJ_DYN)
      ok = cj_bc_fail(r, c, "invalid dimension size %lld", (long long)(*dims)[i]);
    if (!ok) {
      if (*dims != stack) free(*dims);
      return false;
    }
  }
  return true;
}

bool cj_bc_type_list(bc_reader *r, bc_cur *c, const cj_type ***out, uint64_t *n) {
  if (!cj_bc_count(r, c, n)) return false;
  *out = malloc(sizeof(cj_type *) * (size_t)(*n ? *n : 1));
  if (!*out) return cj_bc_fail(r, c, "out of memory");
  for (uint64_t i = 0; i < *n; i++) {
    (*out)[i] = cj_bc_type_ref(r, c);
    if (!(*out)[i]) {
      free(*out);
      *out = NULL;
      return false;
    }
  }
  return true;
}

const cj_type *cj_bc_function_type(bc_reader *r, bc_cur *c) {
  const cj_type **ins = NULL, **outs = NULL;
  uint64_t nin, nout;
  if (!cj_bc_type_list(r, c, &ins, &nin)) return NULL;
  if (!cj_bc_type_list(r, c, &outs, &nout)) {
    free(ins);
    return NULL;
  }
  const cj_type *t = cj_type_function(r->m, (int32_t)nin, ins, (int32_t)nout, outs);
  free(ins);
  free(outs);
  if (!t) cj_bc_fail(r, c, "out of memory");
  return t;
}

const cj_type *cj_bc_tuple_type(bc_reader *r, bc_cur *c) {
  const cj_type **mem = NULL;
  uint64_t n;
  if (!cj_bc_type_list(r, c, &mem, &n)) return NULL;
  const cj_type *t = cj_type_tuple(r->m, (int32_t)n, mem);
  free(mem);
  if (!t) cj_bc_fail(r, c, "out of memory");
  return t;
}

bool cj_bc_string(bc_reader *r, bc_cur *c, const char **s, size_t *len) {
  uint64_t i;
  *s = "";
  if (len) *len = 0;
  if (!cj_bc_varint(r, c, &i)) return false;
  if (i >= r->nstrings)
    return cj_bc_fail(r, c, "string index %llu out of range (%llu strings)", (unsigned long long)i,
                   (unsigned long long)r->nstrings);
  *s = r->strs[i];
  if (len) *len = r->strlens[i];
  return true;
}

bool cj_bc_apint(bc_reader *r, bc_cur *c, unsigned width, uint64_t *out) {
  *out = 0;
  if (width <= 8) {
    uint8_t b;
    if (!cj_bc_byte(r, c, &b)) return false;
    *out = b;
    return true;
  }
  if (width <= 64) {
    int64_t v;
    if (!cj_bc_svarint(r, c, &v)) return false;
    *out = (uint64_t)v;
    return true;
  }
  uint64_t nwords;
  if (!cj_bc_count(r, c, &nwords)) return false;
  *out = 0;
  for (uint64_t i = 0; i < nwords; i++) {
    int64_t w;
    if (!cj_bc_svarint(r, c, &w)) return false;
    if (i == 0) *out = (uint64_t)w;
  }
  return true;
}

const char *cj_bc_intern_name(bc_reader *r, const char *s) {
  uintptr_t h = ((uintptr_t)s >> 3) * 0x9E3779B97F4A7C15ull;
  unsigned k = (unsigned)(h >> 58); /* 6 bits */
  if (r->icache_key[k] == s) return r->icache_val[k];
  const char *v = cj_intern(r->m, s, strlen(s));
  if (v) {
    r->icache_key[k] = s;
    r->icache_val[k] = v;
  }
  return v;
}

cj_status cj_bc_set_attrs(bc_reader *r, cj_op *op, const cj_named_attr *attrs, uint32_t n) {
  if (!n) return NULL;
  cj_named_attr *a = CJ_ARENA_ARRAY(&r->m->arena, cj_named_attr, n);
  if (!a) return cj_oom();
  for (uint32_t i = 0; i < n; i++) {
    a[i].name = cj_bc_intern_name(r, attrs[i].name);
    a[i].value = attrs[i].value;
    if (!a[i].name) return cj_oom();
  }
  op->attrs = a;
  op->nattrs = n;
  return NULL;
}

int cj_bc_cmp_named(const void *x, const void *y) {
  return strcmp(((const cj_named_attr *)x)->name, ((const cj_named_attr *)y)->name);
}

/* ======================================================================== sections */

static bool read_section(bc_reader *r, bc_cur *c, uint8_t *id, bc_cur *data) {
  uint8_t idb;
  uint64_t len;
  if (!cj_bc_byte(r, c, &idb) || !cj_bc_varint(r, c, &len)) return false;
  *id = idb & 0x7f;
  if (*id >= SEC_COUNT) return cj_bc_fail(r, c, "invalid section id %u", (unsigned)*id);
  if (idb & 0x80) {
    uint64_t align;
    if (!cj_bc_varint(r, c, &align)) return false;
    if (align == 0 || (align & (align - 1)) || align > 4096)
      return cj_bc_fail(r, c, "invalid section alignment %llu", (unsigned long long)align);
    while ((size_t)(c->p - r->base) & (align - 1)) {
      uint8_t pad;
      if (!cj_bc_byte(r, c, &pad)) return false;
      if (pad != 0xCB) return cj_bc_fail(r, c, "expected alignment byte 0xCB, found 0x%02X", pad);
    }
  }
  const uint8_t *p;
  if (!cj_bc_bytes(r, c, len, &p)) return false;
  data->p = p;
  data->end = p + len;
  return true;
}

static bool parse_strings(bc_reader *r, bc_cur sec) {
  bc_cur c = sec;
  uint64_t n;
  if (!cj_bc_count(r, &c, &n)) return false;
  r->nstrings = n;
  r->strs = calloc(n ? n : 1, sizeof *r->strs);
  r->strlens = calloc(n ? n : 1, sizeof *r->strlens);
  if (!r->strs || !r->strlens) return cj_bc_fail(r, &c, "out of memory");
  size_t end = (size_t)(sec.end - sec.p);
  for (uint64_t k = n; k-- > 0;) { /* sizes are stored last string first */
    uint64_t sz;
    if (!cj_bc_varint(r, &c, &sz)) return false;
    if (sz == 0 || sz > end)
      return cj_bc_fail(r, &c, "string size %llu out of range", (unsigned long long)sz);
    size_t off = end - (size_t)sz;
    if (sec.p[off + sz - 1] != 0)
      return cj_bc_fail(r, &c, "string %llu is not NUL-terminated", (unsigned long long)k);
    r->strs[k] = (const char *)sec.p + off;
    r->strlens[k] = (uint32_t)(sz - 1);
    end = off;
  }
  if ((size_t)(c.p - sec.p) != end)
    return cj_bc_fail(r, &c, "unexpected data between the string sizes and the string data");
  return true;
}

static bc_dialect_kind dialect_kind(const char *s, size_t n) {
  static const struct {
    const char *name;
    bc_dialect_kind kind;
  } known[] = {{"builtin", BC_DL_BUILTIN},     {"vhlo", BC_DL_VHLO}, {"func", BC_DL_FUNC},
               {"stablehlo", BC_DL_STABLEHLO}, {"chlo", BC_DL_CHLO}, {"sdy", BC_DL_SDY},
               {"quant", BC_DL_QUANT}};
  for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
    if (strlen(known[i].name) == n && memcmp(known[i].name, s, n) == 0) return known[i].kind;
  return BC_DL_OTHER;
}

static bool dialect_ref(bc_reader *r, bc_cur *c, uint64_t *out) {
  if (!cj_bc_varint(r, c, out)) return false;
  if (*out >= r->ndialects)
    return cj_bc_fail(r, c, "dialect index %llu out of range", (unsigned long long)*out);
  return true;
}

static bool parse_dialects(bc_reader *r, bc_cur sec) {
  bc_cur c = sec;
  uint64_t n;
  if (!cj_bc_count(r, &c, &n)) return false;
  r->ndialects = n;
  r->dialects = calloc(n ? n : 1, sizeof *r->dialects);
  if (!r->dialects) return cj_bc_fail(r, &c, "out of memory");
  for (uint64_t i = 0; i < n; i++) {
    bc_dialect *d = &r->dialects[i];
    if (r->version < BCV_DIALECT_VERSIONING) {
      if (!cj_bc_string(r, &c, &d->name, &d->len)) return false;
    } else {
      uint64_t v;
      if (!cj_bc_varint(r, &c, &v)) return false;
      uint64_t idx = v >> 1;
      if (idx >= r->nstrings) return cj_bc_fail(r, &c, "dialect name index out of range");
      d->name = r->strs[idx];
      d->len = r->strlens[idx];
      if (v & 1) { /* a dialect version section: we do not need it */
        uint8_t id;
        bc_cur ver;
        if (!read_section(r, &c, &id, &ver)) return false;
        if (id != SEC_DIALECT_VERSIONS) return cj_bc_fail(r, &c, "expected a dialect version section");
      }
    }
    d->kind = dialect_kind(d->name, d->len);
    if (d->kind == BC_DL_VHLO) r->vhlo = true;
  }
  uint64_t cap = 0;
  if (r->version >= BCV_ELIDE_UNKNOWN_BLOCK_ARG_LOC) {
    if (!cj_bc_count(r, &c, &cap)) return false;
  }
  if (cap < 16) cap = 16;
  r->opnames = calloc(cap, sizeof *r->opnames);
  if (!r->opnames) return cj_bc_fail(r, &c, "out of memory");
  uint64_t nops = 0;
  while (c.p < c.end) {
    uint64_t d, cnt;
    if (!dialect_ref(r, &c, &d) || !cj_bc_count(r, &c, &cnt)) return false;
    for (uint64_t k = 0; k < cnt; k++) {
      if (nops == cap) {
        bc_opname *grown = realloc(r->opnames, sizeof *r->opnames * cap * 2);
        if (!grown) return cj_bc_fail(r, &c, "out of memory");
        memset(grown + cap, 0, sizeof *grown * cap);
        r->opnames = grown;
        cap *= 2;
      }
      bc_opname *o = &r->opnames[nops];
      o->dialect = (uint32_t)d;
      o->vhlo = -1;
      if (r->version < BCV_NATIVE_PROPERTIES) {
        if (!cj_bc_string(r, &c, &o->name, &o->len)) return false;
        o->registered = -1;
      } else {
        uint64_t v;
        if (!cj_bc_varint(r, &c, &v)) return false;
        if ((v >> 1) >= r->nstrings) return cj_bc_fail(r, &c, "op name index out of range");
        o->name = r->strs[v >> 1];
        o->len = r->strlens[v >> 1];
        o->registered = (int8_t)(v & 1);
      }
      nops++;
    }
  }
  r->nopnames = nops;
  return true;
}

static bool parse_properties(bc_reader *r, bc_cur sec) {
  if (sec.p == sec.end) return true;
  bc_cur c = sec;
  uint64_t n;
  if (!cj_bc_count(r, &c, &n)) return false;
  r->props = calloc(n ? n : 1, sizeof *r->props);
  if (!r->props) return cj_bc_fail(r, &c, "out of memory");
  for (uint64_t i = 0; i < n; i++) {
    r->props[i] = c.p;
    uint64_t sz;
    const uint8_t *d;
    if (!cj_bc_varint(r, &c, &sz) || !cj_bc_bytes(r, &c, sz, &d)) return false;
  }
  if (c.p != c.end) return cj_bc_fail(r, &c, "unexpected trailing data in the properties section");
  r->nprops = n;
  r->props_end = c.end;
  return true;
}

static bool push_resource(bc_reader *r, bc_cur *c, const uint8_t *data, uint64_t size) {
  uint64_t n = r->nresources;
  if ((n & (n - 1)) == 0) { /* grow at powers of two */
    uint64_t cap = n ? n * 2 : 8;
    const uint8_t **d = realloc(r->res_data, sizeof *d * cap);
    if (!d) return cj_bc_fail(r, c, "out of memory");
    r->res_data = d;
    uint64_t *s = realloc(r->res_size, sizeof *s * cap);
    if (!s) return cj_bc_fail(r, c, "out of memory");
    r->res_size = s;
  }
  r->res_data[n] = data;
  r->res_size[n] = size;
  r->nresources = n + 1;
  return true;
}

/* One resource group: count, then {key, size, kind} entries whose values follow one another in
 * the resource section. Dialect resources (keep = true) are recorded in order; blob values are
 * {alignment, size, padding, bytes}. */
static bool parse_resource_group(bc_reader *r, bc_cur *off, bc_cur *res, bool keep) {
  uint64_t n;
  if (!cj_bc_count(r, off, &n)) return false;
  for (uint64_t i = 0; i < n; i++) {
    const char *key;
    uint64_t size;
    uint8_t kind;
    const uint8_t *data;
    if (!cj_bc_string(r, off, &key, NULL) || !cj_bc_varint(r, off, &size) || !cj_bc_byte(r, off, &kind) ||
        !cj_bc_bytes(r, res, size, &data))
      return false;
    if (!keep) continue;
    const uint8_t *blob = NULL;
    uint64_t blen = 0;
    if (kind == 0 && size > 0) { /* blob */
      bc_cur e = {data, data + size};
      uint64_t align;
      if (!cj_bc_varint(r, &e, &align) || !cj_bc_varint(r, &e, &blen)) return false;
      if (align == 0 || (align & (align - 1)) || align > 4096)
        return cj_bc_fail(r, &e, "invalid resource alignment");
      while ((size_t)(e.p - r->base) & (align - 1)) {
        uint8_t pad;
        if (!cj_bc_byte(r, &e, &pad)) return false;
        if (pad != 0xCB) return cj_bc_fail(r, &e, "expected alignment byte 0xCB");
      }
      if (!cj_bc_bytes(r, &e, blen, &blob)) return false;
    }
    if (!push_resource(r, off, blob, blen)) return false;
  }
  return true;
}

static bool parse_resources(bc_reader *r, bc_cur res, bc_cur off) {
  uint64_t next;
  if (!cj_bc_count(r, &off, &next)) return false;
  for (uint64_t i = 0; i < next; i++) {
    const char *key;
    if (!cj_bc_string(r, &off, &key, NULL) || !parse_resource_group(r, &off, &res, false))
      return false;
  }
  while (off.p < off.end) {
    uint64_t d;
    if (!dialect_ref(r, &off, &d) || !parse_resource_group(r, &off, &res, true)) return false;
  }
  return true;
}

static bool parse_attrtype_offsets(bc_reader *r, bc_cur data, bc_cur off) {
  uint64_t na, nt;
  if (!cj_bc_varint(r, &off, &na) || !cj_bc_varint(r, &off, &nt)) return false;
  uint64_t avail = (uint64_t)(off.end - off.p);
  if (na > avail || nt > avail || na + nt > avail)
    return cj_bc_fail(r, &off, "attribute/type counts exceed the offset section");
  r->nattrs = na;
  r->ntypes = nt;
  r->attrs = calloc(na ? na : 1, sizeof *r->attrs);
  r->types = calloc(nt ? nt : 1, sizeof *r->types);
  if (!r->attrs || !r->types) return cj_bc_fail(r, &off, "out of memory");
  uint64_t cur = 0, total = (uint64_t)(data.end - data.p);
  for (int pass = 0; pass < 2; pass++) {
    bc_entry *ents = pass == 0 ? r->attrs : r->types;
    uint64_t count = pass == 0 ? na : nt, i = 0;
    while (i < count) {
      uint64_t d, cnt;
      if (!dialect_ref(r, &off, &d) || !cj_bc_varint(r, &off, &cnt)) return false;
      if (cnt > count - i) return cj_bc_fail(r, &off, "attribute/type group overruns its table");
      for (uint64_t k = 0; k < cnt; k++, i++) {
        uint64_t v;
        if (!cj_bc_varint(r, &off, &v)) return false;
        uint64_t sz = v >> 1;
        if (cur > total || sz > total - cur)
          return cj_bc_fail(r, &off, "attribute/type entry points past the end of its section");
        ents[i].data = data.p + cur;
        ents[i].size = (uint32_t)sz;
        ents[i].dialect = (uint32_t)d;
        ents[i].custom = (uint8_t)(v & 1);
        cur += sz;
      }
    }
  }
  if (off.p != off.end)
    return cj_bc_fail(r, &off, "unexpected trailing data in the attribute/type offsets");
  return true;
}

/* ======================================================================== builtin attributes/types
 */

static const cj_attr *oom_attr(bc_reader *r, bc_cur *c) {
  cj_bc_fail(r, c, "out of memory");
  return NULL;
}

static const cj_type *int_type(bc_reader *r, bc_cur *c, unsigned width, unsigned signedness) {
  cj_dtype dt = CJ_INVALID;
  bool u = signedness == 2;
  switch (width) {
    case 1: dt = u ? CJ_U1 : CJ_PRED; break;
    case 2: dt = u ? CJ_U2 : CJ_S2; break;
    case 4: dt = u ? CJ_U4 : CJ_S4; break;
    case 8: dt = u ? CJ_U8 : CJ_S8; break;
    case 16: dt = u ? CJ_U16 : CJ_S16; break;
    case 32: dt = u ? CJ_U32 : CJ_S32; break;
    case 64: dt = u ? CJ_U64 : CJ_S64; break;
    default: break;
  }
  if (dt == CJ_INVALID) {
    cj_bc_fail(r, c, "unsupported integer type of width %u", width);
    return NULL;
  }
  const cj_type *t = cj_type_elem(r->m, dt);
  if (!t) cj_bc_fail(r, c, "out of memory");
  return t;
}

/* A ranked tensor from an encoding attribute (or NULL), dims and an element type. */
static const cj_type *make_tensor(bc_reader *r, bc_cur *c, const cj_attr *enc, int64_t *dims,
                                  uint64_t rank, const cj_type *elem) {
  if (!elem) return NULL;
  if (elem->kind != CJ_TYPE_ELEM && elem->kind != CJ_TYPE_QUANT && elem->kind != CJ_TYPE_OPAQUE) {
    cj_bc_fail(r, c, "invalid tensor element type");
    return NULL;
  }
  const int64_t *bounds = NULL;
  int64_t bstack[16];
  int64_t *bheap = NULL;
  if (enc && enc->kind == CJ_ATTR_STRUCT && enc->st.sk == CJ_SK_TYPE_EXTENSIONS) {
    const cj_attr *b = enc->st.fields[CJ_SF_TYPE_EXTENSIONS_bounds];
    int64_t nb = 0;
    int64_t *dst = rank <= 16 ? bstack : (bheap = malloc(sizeof(int64_t) * (size_t)rank));
    if (!dst) {
      cj_bc_fail(r, c, "out of memory");
      return NULL;
    }
    if (!b || !cj_attr_get_i64s(b, dst, (int64_t)rank, &nb) || (uint64_t)nb != rank) {
      free(bheap);
      cj_bc_fail(r, c, "tensor bounds do not match the rank");
      return NULL;
    }
    bounds = dst;
    enc = NULL;
  }
  const cj_type *t = cj_type_tensor(r->m, elem, (int32_t)rank, dims, bounds, enc);
  free(bheap);
  if (!t) cj_bc_fail(r, c, "out of memory");
  return t;
}

/* The textual form of an element type for carried types. */
static bool put_elem_name(char *buf, size_t cap, size_t *k, const cj_type *e) {
  const char *n = e->kind == CJ_TYPE_ELEM     ? cj_dtype_get(e->dtype)->mlir
                  : e->kind == CJ_TYPE_OPAQUE ? e->text
                                              : NULL;
  if (!n) return false;
  int w = snprintf(buf + *k, cap - *k, "%s", n);
  if (w < 0 || (size_t)w >= cap - *k) return false;
  *k += (size_t)w;
  return true;
}

/* MemRefType (StableHLO's buffer type): shape, element type, layout. Carried as its text,
 * memref<2x?xf32>; a layout other than the identity map is kept in the text as written. */
static const cj_type *memref_type(bc_reader *r, bc_cur *c) {
  int64_t stack[8], *dims;
  uint64_t rank;
  if (!cj_bc_dims(r, c, &dims, &rank, stack, 8)) return NULL;
  const cj_type *e = cj_bc_type_ref(r, c);
  uint64_t li = 0;
  bool ok = e && cj_bc_varint(r, c, &li);
  if (ok && li >= r->nattrs) ok = cj_bc_fail(r, c, "attribute index out of range");
  char buf[512];
  size_t k = 0;
  if (ok) {
    k = (size_t)snprintf(buf, sizeof buf, "memref<");
    for (uint64_t i = 0; ok && i < rank; i++) {
      int w = dims[i] == CJ_DYN ? snprintf(buf + k, sizeof buf - k, "?x")
                                : snprintf(buf + k, sizeof buf - k, "%lldx", (long long)dims[i]);
      if (w < 0 || (size_t)w >= sizeof buf - k)
        ok = cj_bc_fail(r, c, "memref type too long");
      else
        k += (size_t)w;
    }
    if (ok && !put_elem_name(buf, sizeof buf, &k, e))
      ok = cj_bc_fail(r, c, "unsupported memref element type");
  }
  if (ok) { /* the layout: an affine map stored as text; the identity map is not printed */
    const bc_entry *le = &r->attrs[li];
    const char *t = (const char *)le->data;
    size_t n = le->custom ? 0 : strnlen(t, le->size);
    bool identity = false;
    if (n > 11 && memcmp(t, "affine_map<", 11) == 0) {
      const char *arrow = memchr(t, '-', n);
      if (arrow && arrow + 2 < t + n && arrow[1] == '>') {
        size_t lhs = (size_t)(arrow - (t + 11)), rhs = n - (size_t)(arrow + 3 - t) - 1;
        identity = lhs >= 1 && rhs == lhs - 1 && memcmp(t + 11, arrow + 3, rhs) == 0;
      }
    }
    if (!identity) {
      if (!n || k + n + 3 >= sizeof buf) {
        ok = cj_bc_fail(r, c, "unsupported memref layout");
      } else {
        memcpy(buf + k, ", ", 2);
        memcpy(buf + k + 2, t, n);
        k += n + 2;
      }
    }
  }
  if (dims != stack) free(dims);
  if (!ok) return NULL;
  buf[k++] = '>';
  const cj_type *t = cj_type_opaque(r->m, buf, k);
  if (!t) cj_bc_fail(r, c, "out of memory");
  return t;
}

static const cj_type *builtin_type(bc_reader *r, bc_cur *c) {
  uint64_t code;
  if (!cj_bc_varint(r, c, &code)) return NULL;
  cj_module *m = r->m;
  switch (code) {
    case 0: { /* IntegerType: (width << 2) | signedness */
      uint64_t v;
      if (!cj_bc_varint(r, c, &v)) return NULL;
      return int_type(r, c, (unsigned)(v >> 2), (unsigned)(v & 3));
    }
    case 1: return cj_type_elem(m, CJ_INDEX);
    case 2: return cj_bc_function_type(r, c); /* FunctionType */
    case 3: return cj_type_elem(m, CJ_BF16);
    case 4: return cj_type_elem(m, CJ_F16);
    case 5: return cj_type_elem(m, CJ_F32);
    case 6: return cj_type_elem(m, CJ_F64);
    case 9: { /* ComplexType */
      const cj_type *e = cj_bc_type_ref(r, c);
      if (!e) return NULL;
      if (e->kind == CJ_TYPE_ELEM && e->dtype == CJ_F32) return cj_type_elem(m, CJ_C64);
      if (e->kind == CJ_TYPE_ELEM && e->dtype == CJ_F64) return cj_type_elem(m, CJ_C128);
      cj_bc_fail(r, c, "unsupported complex element type");
      return NULL;
    }
    case 10: return memref_type(r, c);
    case 12: return cj_type_none(m);
    case 13:   /* RankedTensorType */
    case 14: { /* RankedTensorType with encoding */
      const cj_attr *enc = NULL;
      if (code == 14 && !(enc = cj_bc_attr_ref(r, c))) return NULL;
      int64_t stack[8], *dims;
      uint64_t rank;
      if (!cj_bc_dims(r, c, &dims, &rank, stack, 8)) return NULL;
      const cj_type *e = cj_bc_type_ref(r, c);
      const cj_type *t = e ? make_tensor(r, c, enc, dims, rank, e) : NULL;
      if (dims != stack) free(dims);
      return t;
    }
    case 15: return cj_bc_tuple_type(r, c); /* TupleType */
    case 18: { /* UnrankedTensorType */
      const cj_type *e = cj_bc_type_ref(r, c);
      return e ? cj_type_unranked(m, e) : NULL;
    }
    /* newer writers give the small float formats codes of their own (older ones wrote them as
     * text, e.g. "f8E4M3FN") */
    case 21: return cj_type_elem(m, CJ_TF32);
    case 22: return cj_type_elem(m, CJ_F8E5M2);
    case 23: return cj_type_elem(m, CJ_F8E4M3);
    case 24: return cj_type_elem(m, CJ_F8E4M3FN);
    case 25: return cj_type_elem(m, CJ_F8E5M2FNUZ);
    case 26: return cj_type_elem(m, CJ_F8E4M3FNUZ);
    case 27: return cj_type_elem(m, CJ_F8E4M3B11FNUZ);
    case 28: return cj_type_elem(m, CJ_F8E3M4);
    case 29: return cj_type_elem(m, CJ_F4E2M1FN);
    case 30: return cj_type_elem(m, CJ_F6E2M3FN);
    case 31: return cj_type_elem(m, CJ_F6E3M2FN);
    case 32: return cj_type_elem(m, CJ_F8E8M0FNU);
    default:
      cj_bc_fail(r, c, "unsupported builtin type (code %llu)", (unsigned long long)code);
      return NULL;
  }
}

static const cj_attr *loc_ref(bc_reader *r, bc_cur *c) {
  const cj_attr *a = cj_bc_attr_ref(r, c);
  if (a && a->kind != CJ_ATTR_LOC) {
    cj_bc_fail(r, c, "expected a location attribute");
    return NULL;
  }
  return a;
}

static const cj_attr *string_ref(bc_reader *r, bc_cur *c) {
  const cj_attr *a = cj_bc_attr_ref(r, c);
  if (a && a->kind != CJ_ATTR_STRING) {
    cj_bc_fail(r, c, "expected a string attribute");
    return NULL;
  }
  return a;
}

const cj_attr *cj_bc_dict_attr(bc_reader *r, bc_cur *c, bc_attr_reader key) {
  uint64_t n;
  if (!cj_bc_count(r, c, &n)) return NULL;
  cj_named_attr *items = malloc(sizeof(cj_named_attr) * (size_t)(n ? n : 1));
  if (!items) return oom_attr(r, c);
  for (uint64_t i = 0; i < n; i++) {
    const cj_attr *k = key(r, c);
    const cj_attr *v = k ? cj_bc_attr_ref(r, c) : NULL;
    if (!v) {
      free(items);
      return NULL;
    }
    items[i].name = k->str.s;
    items[i].value = v;
  }
  /* sorted here in O(n log n): cj_attr_dict's insertion sort is then linear */
  qsort(items, (size_t)n, sizeof *items, cj_bc_cmp_named);
  const cj_attr *a = cj_attr_dict(r->m, (int32_t)n, items);
  free(items);
  return a ? a : oom_attr(r, c);
}

static const cj_attr *read_locs(bc_reader *r, bc_cur *c, cj_loc_kind lk, bool meta) {
  uint64_t n;
  if (!cj_bc_count(r, c, &n)) return NULL;
  const cj_attr **locs = malloc(sizeof(cj_attr *) * (size_t)(n ? n : 1));
  if (!locs) return oom_attr(r, c);
  for (uint64_t i = 0; i < n; i++) {
    if (!(locs[i] = loc_ref(r, c))) {
      free(locs);
      return NULL;
    }
  }
  const cj_attr *md = NULL;
  if (meta && !(md = cj_bc_attr_ref(r, c))) {
    free(locs);
    return NULL;
  }
  const cj_attr *a = cj_attr_loc(r->m, lk, NULL, 0, 0, (int32_t)n, locs, md);
  free(locs);
  return a ? a : oom_attr(r, c);
}

/* Element storage in MLIR's dense raw buffers: ceil(bits / 8) bytes (tf32 takes 3). */
static size_t mlir_elem_bytes(cj_dtype dt) {
  if (dt == CJ_TF32) return 3;
  if (dt == CJ_C64) return 8;
  if (dt == CJ_C128) return 16;
  return (size_t)(cj_dtype_bits(dt) + 7) / 8;
}

/* True if the n elements of `size` bytes at p are all the same. */
static bool all_equal(const uint8_t *p, uint64_t n, size_t size) {
  for (uint64_t i = 1; i < n; i++)
    if (memcmp(p, p + i * size, size) != 0) return false;
  return true;
}

const cj_attr *cj_bc_make_dense(bc_reader *r, bc_cur *c, const cj_type *type, const uint8_t *data,
                             uint64_t len, bool vhlo_i1_rule) {
  if (!type || type->kind != CJ_TYPE_TENSOR) {
    cj_bc_fail(r, c, "dense elements need a ranked tensor type");
    return NULL;
  }
  cj_dtype dt = type->dtype;
  if (!cj_dtype_is_valid(dt) || dt == CJ_TOKEN) {
    cj_bc_fail(r, c, "unsupported dense element type");
    return NULL;
  }
  int64_t n = type->num_elements;
  if (n < 0) {
    cj_bc_fail(r, c, "dense elements need a static shape");
    return NULL;
  }
  size_t ours = (size_t)cj_dtype_bytes(dt), theirs = mlir_elem_bytes(dt);
  if (dt == CJ_PRED) {
    /* i1 data comes in three layouts: one byte per element; a single byte (a splat); bit-packed,
     * LSB first, in ceil(n / 8) bytes. VHLO writers (>= 1.x) pack and write a true splat as 0xFF
     * (upstream's reading rule: one byte 0xFF = splat true; ceil(n / 8) bytes, when that is not
     * n, = packed; else one byte per element). Builtin dense attributes hold MLIR's own buffer,
     * bit-packed the same way, with a splat as one byte 0x00 or 0xFF. */
    uint64_t packed = ((uint64_t)n + 7) / 8;
    uint8_t *u = NULL;
    const cj_attr *a = NULL;
    if (n == 0 && len == 0) {
      a = cj_attr_dense(r->m, type, "", 0, false);
    } else if (len == 1 && (data[0] == 0xFF || (!vhlo_i1_rule && data[0] == 0))) {
      uint8_t v = data[0] ? 1 : 0; /* a splat (n == 1 included) */
      a = cj_attr_dense(r->m, type, &v, 1, true);
    } else if ((len == packed && len != (uint64_t)n) || len == (uint64_t)n) {
      if (!(u = malloc((size_t)n))) return oom_attr(r, c);
      if (len == (uint64_t)n)
        for (int64_t i = 0; i < n; i++) u[i] = data[i] ? 1 : 0;
      else
        for (int64_t i = 0; i < n; i++) u[i] = (data[i / 8] >> (i % 8)) & 1;
      bool same = all_equal(u, (uint64_t)n, 1);
      a = cj_attr_dense(r->m, type, u, same ? 1 : (size_t)n, same);
    } else if (len == 1) {
      uint8_t v = data[0] ? 1 : 0;
      a = cj_attr_dense(r->m, type, &v, 1, true);
    } else {
      cj_bc_fail(r, c, "dense i1 data has %llu bytes for %lld elements", (unsigned long long)len,
              (long long)n);
      return NULL;
    }
    free(u);
    return a ? a : oom_attr(r, c);
  }
  bool splat;
  uint64_t count;
  if (n == 0 && (len == 0 || len == theirs)) {
    /* no elements: writers store an empty buffer, or a splat of one element that fills none */
    const cj_attr *a = cj_attr_dense(r->m, type, "", 0, false);
    return a ? a : oom_attr(r, c);
  }
  if (len == theirs && n >= 1) {
    splat = true;
    count = 1;
  } else if (theirs && len == theirs * (uint64_t)n) {
    splat = false;
    count = (uint64_t)n;
  } else {
    cj_bc_fail(r, c, "dense data has %llu bytes, expected %llu for %lld elements",
            (unsigned long long)len, (unsigned long long)(theirs * (uint64_t)n), (long long)n);
    return NULL;
  }
  if (!splat && count > 1 && all_equal(data, count, theirs)) { /* MLIR's splat, as text gives it */
    splat = true;
    count = 1;
    len = theirs;
  }
  if (ours == theirs) {
    const cj_attr *a = cj_attr_dense(r->m, type, data, (size_t)len, splat);
    return a ? a : oom_attr(r, c);
  }
  /* tf32: 3 bytes holding the 19-bit pattern -> an f32 with the low 13 mantissa bits zero */
  uint8_t *w = malloc(count ? (size_t)(count * ours) : 1);
  if (!w) return oom_attr(r, c);
  for (uint64_t i = 0; i < count; i++) {
    uint32_t bits = (uint32_t)data[3 * i] | ((uint32_t)data[3 * i + 1] << 8) |
                    ((uint32_t)data[3 * i + 2] << 16);
    uint32_t f = (bits & 0x7ffff) << 13;
    memcpy(w + 4 * i, &f, 4);
  }
  const cj_attr *a = cj_attr_dense(r->m, type, w, (size_t)(count * ours), splat);
  free(w);
  return a ? a : oom_attr(r, c);
}

/* The value of a FloatAttr of type t from its APFloat bits. */
static double float_value(cj_dtype dt, uint64_t bits) {
  if (dt == CJ_TF32) {
    uint32_t f = (uint32_t)(bits & 0x7ffff) << 13;
    float v;
    memcpy(&v, &f, 4);
    return v;
  }
  return cj_float_decode(dt, bits);
}

static int64_t int_value(cj_dtype dt, uint64_t raw) {
  int bits = cj_dtype_bits(dt);
  if (bits >= 64 || bits <= 0) return (int64_t)raw;
  uint64_t mask = (1ull << bits) - 1;
  raw &= mask;
  if (cj_dtype_kindof(dt) == CJ_DK_SINT && (raw >> (bits - 1)) & 1) raw |= ~mask;
  return (int64_t)raw;
}

static const cj_attr *builtin_attr(bc_reader *r, bc_cur *c) {
  uint64_t code;
  if (!cj_bc_varint(r, c, &code)) return NULL;
  cj_module *m = r->m;
  switch (code) {
    case 0: { /* ArrayAttr */
      uint64_t n;
      if (!cj_bc_count(r, c, &n)) return NULL;
      const cj_attr **items = malloc(sizeof(cj_attr *) * (size_t)(n ? n : 1));
      if (!items) return oom_attr(r, c);
      for (uint64_t i = 0; i < n; i++)
        if (!(items[i] = cj_bc_attr_ref(r, c))) {
          free(items);
          return NULL;
        }
      const cj_attr *a = cj_attr_array(m, (int32_t)n, items);
      free(items);
      return a ? a : oom_attr(r, c);
    }
    case 1: return cj_bc_dict_attr(r, c, string_ref); /* DictionaryAttr */
    case 2:   /* StringAttr */
    case 3: { /* StringAttr with a type */
      const char *s;
      size_t n;
      if (!cj_bc_string(r, c, &s, &n)) return NULL;
      if (code == 3 && !cj_bc_type_ref(r, c)) return NULL;
      const cj_attr *a = cj_attr_string(m, s, n);
      return a ? a : oom_attr(r, c);
    }
    case 4:   /* FlatSymbolRefAttr */
    case 5: { /* SymbolRefAttr */
      const cj_attr *root = string_ref(r, c);
      if (!root) return NULL;
      uint64_t n = 0;
      const char **nested = NULL;
      if (code == 5) {
        if (!cj_bc_count(r, c, &n)) return NULL;
        nested = malloc(sizeof(char *) * (size_t)(n ? n : 1));
        if (!nested) return oom_attr(r, c);
        for (uint64_t i = 0; i < n; i++) {
          const cj_attr *s = cj_bc_attr_ref(r, c);
          if (!s || s->kind != CJ_ATTR_SYMREF) {
            free(nested);
            if (s) cj_bc_fail(r, c, "expected a symbol reference");
            return NULL;
          }
          nested[i] = s->sym.root;
        }
      }
      const cj_attr *a = cj_attr_symref(m, root->str.s, (int32_t)n, nested);
      free(nested);
      return a ? a : oom_attr(r, c);
    }
    case 6: { /* TypeAttr */
      const cj_type *t = cj_bc_type_ref(r, c);
      if (!t) return NULL;
      const cj_attr *a = cj_attr_type(m, t);
      return a ? a : oom_attr(r, c);
    }
    case 7: return cj_attr_unit(m);
    case 8: { /* IntegerAttr: type, APInt (BoolAttr when the type is i1) */
      const cj_type *t = cj_bc_type_ref(r, c);
      if (!t) return NULL;
      if (t->kind != CJ_TYPE_ELEM || (!cj_dtype_is_int(t->dtype) && t->dtype != CJ_PRED)) {
        cj_bc_fail(r, c, "integer attribute of a non-integer type");
        return NULL;
      }
      uint64_t raw;
      if (!cj_bc_apint(r, c, (unsigned)cj_dtype_bits(t->dtype), &raw)) return NULL;
      if (t->dtype == CJ_PRED) return cj_attr_bool(m, raw & 1);
      const cj_attr *a = cj_attr_int(m, int_value(t->dtype, raw), t);
      return a ? a : oom_attr(r, c);
    }
    case 9: { /* FloatAttr: type, APFloat */
      const cj_type *t = cj_bc_type_ref(r, c);
      if (!t) return NULL;
      if (t->kind != CJ_TYPE_ELEM || !cj_dtype_is_float(t->dtype)) {
        cj_bc_fail(r, c, "float attribute of a non-float type");
        return NULL;
      }
      uint64_t raw;
      if (!cj_bc_apint(r, c, (unsigned)cj_dtype_bits(t->dtype), &raw)) return NULL;
      const cj_attr *a = cj_attr_float(m, float_value(t->dtype, raw), t);
      return a ? a : oom_attr(r, c);
    }
    case 10: { /* CallSiteLoc */
      const cj_attr *kids[2];
      if (!(kids[0] = loc_ref(r, c)) || !(kids[1] = loc_ref(r, c))) return NULL;
      const cj_attr *a = cj_attr_loc(m, CJ_LOC_CALLSITE, NULL, 0, 0, 2, kids, NULL);
      return a ? a : oom_attr(r, c);
    }
    case 11: { /* FileLineColLoc */
      const cj_attr *f = string_ref(r, c);
      uint64_t line, col;
      if (!f || !cj_bc_varint(r, c, &line) || !cj_bc_varint(r, c, &col)) return NULL;
      const cj_attr *a = cj_attr_loc(m, CJ_LOC_FILE, f->str.s, (int32_t)(line & 0x7fffffff),
                                     (int32_t)(col & 0x7fffffff), 0, NULL, NULL);
      return a ? a : oom_attr(r, c);
    }
    case 12: return read_locs(r, c, CJ_LOC_FUSED, false);
    case 13: return read_locs(r, c, CJ_LOC_FUSED, true);
    case 14: { /* NameLoc */
      const cj_attr *name = string_ref(r, c);
      const cj_attr *child = name ? loc_ref(r, c) : NULL;
      if (!child) return NULL;
      int32_t nk = child->loc.lk == CJ_LOC_UNKNOWN ? 0 : 1;
      const cj_attr *a = cj_attr_loc(m, CJ_LOC_NAME, name->str.s, 0, 0, nk, &child, NULL);
      return a ? a : oom_attr(r, c);
    }
    case 15: {
      const cj_attr *a = cj_attr_loc(m, CJ_LOC_UNKNOWN, NULL, 0, 0, 0, NULL, NULL);
      return a ? a : oom_attr(r, c);
    }
    case 16: { /* DenseResourceElementsAttr: type, resource handle */
      const cj_type *t = cj_bc_type_ref(r, c);
      uint64_t h;
      if (!t || !cj_bc_varint(r, c, &h)) return NULL;
      if (h >= r->nresources || !r->res_data[h]) {
        cj_bc_fail(r, c, "dense resource handle %llu does not name a blob", (unsigned long long)h);
        return NULL;
      }
      return cj_bc_make_dense(r, c, t, r->res_data[h], r->res_size[h], false);
    }
    case 17: { /* DenseArrayAttr: element type, count, raw data */
      const cj_type *t = cj_bc_type_ref(r, c);
      uint64_t n;
      const uint8_t *d;
      uint64_t len;
      if (!t || !cj_bc_varint(r, c, &n) || !cj_bc_blob(r, c, &d, &len)) return NULL;
      if (t->kind != CJ_TYPE_ELEM || t->dtype == CJ_TF32 || !cj_dtype_is_valid(t->dtype)) {
        cj_bc_fail(r, c, "unsupported dense array element type");
        return NULL;
      }
      size_t eb = (size_t)cj_dtype_bytes(t->dtype);
      if (n > len || len != n * eb) {
        cj_bc_fail(r, c, "dense array of %llu elements has %llu bytes", (unsigned long long)n,
                (unsigned long long)len);
        return NULL;
      }
      const cj_attr *a = cj_attr_dense_array(m, t->dtype, (int64_t)n, d);
      return a ? a : oom_attr(r, c);
    }
    case 18: { /* DenseIntOrFPElementsAttr: type, raw data */
      const cj_type *t = cj_bc_type_ref(r, c);
      const uint8_t *d;
      uint64_t len;
      if (!t || !cj_bc_blob(r, c, &d, &len)) return NULL;
      return cj_bc_make_dense(r, c, t, d, len, false);
    }
    case 21: /* DistinctAttr: the referenced attribute (distinctness is not kept) */
      return cj_bc_attr_ref(r, c);
    case 22: { /* FileLineColRange: filename, then [line [, col [, end col | end line, end col]]] */
      const cj_attr *f = string_ref(r, c);
      uint64_t n, v[4] = {0, 0, 0, 0};
      if (!f || !cj_bc_count(r, c, &n)) return NULL;
      if (n > 4) {
        cj_bc_fail(r, c, "file location range with %llu numbers", (unsigned long long)n);
        return NULL;
      }
      for (uint64_t i = 0; i < n; i++)
        if (!cj_bc_varint(r, c, &v[i])) return NULL;
      const cj_attr *a = cj_attr_loc(m, CJ_LOC_FILE, f->str.s, (int32_t)(v[0] & 0x7fffffff),
                                     (int32_t)(v[1] & 0x7fffffff), 0, NULL, NULL);
      return a ? a : oom_attr(r, c);
    }
    default:
      cj_bc_fail(r, c, "unsupported builtin attribute (code %llu)", (unsigned long long)code);
      return NULL;
  }
}

/* ======================================================================== attribute/type table */

static const void *decode_text_entry(bc_reader *r, bc_cur *c, bool is_type) {
  const uint8_t *nul = memchr(c->p, 0, (size_t)(c->end - c->p));
  if (!nul) {
    cj_bc_fail(r, c, "textual %s entry is not NUL-terminated", is_type ? "type" : "attribute");
    return NULL;
  }
  const char *text = (const char *)c->p;
  size_t n = (size_t)(nul - c->p);
  c->p = nul + 1;
  if (is_type) {
    cj_dtype dt = cj_dtype_from_mlir(text, n); /* f8E4M3FN and friends are stored as text */
    if (dt != CJ_INVALID && dt != CJ_TOKEN) {
      const cj_type *t = cj_type_elem(r->m, dt);
      if (!t) cj_bc_fail(r, c, "out of memory");
      return t;
    }
  }
  /* the text parser's attribute and type parsers (src/frontend/mlir_text.c) */
  cj_status st;
  const void *out = NULL;
  if (is_type) {
    const cj_type *t = NULL;
    st = cj_parse_type_text(r->m, text, n, &t);
    out = t;
  } else {
    const cj_attr *a = NULL;
    st = cj_parse_attr_text(r->m, text, n, &a);
    out = a;
  }
  if (st) {
    cj_bc_fail(r, c, "textual %s '%.*s': %s", is_type ? "type" : "attribute", (int)(n > 200 ? 200 : n),
            text, cj_status_message(st));
    cj_status_free(st);
    return NULL;
  }
  return out;
}

static const void *decode_entry(bc_reader *r, bc_entry *e, bool is_type, uint64_t idx) {
  if (e->state == 2) return e->value;
  bc_cur c = {e->data, e->data + e->size};
  if (e->state == 1) {
    cj_bc_fail(r, &c, "%s %llu refers to itself", is_type ? "type" : "attribute",
            (unsigned long long)idx);
    return NULL;
  }
  if (r->depth >= BC_MAX_ATTR_DEPTH) {
    cj_bc_fail(r, &c, "attributes/types nested too deeply");
    return NULL;
  }
  e->state = 1;
  r->depth++;
  const void *v = NULL;
  if (!e->custom) {
    v = decode_text_entry(r, &c, is_type);
  } else {
    const bc_dialect *d = &r->dialects[e->dialect];
    switch (d->kind) {
      case BC_DL_BUILTIN:
        v = is_type ? (const void *)builtin_type(r, &c) : (const void *)builtin_attr(r, &c);
        break;
      case BC_DL_VHLO:
        v = is_type ? (const void *)cj_vhlo_read_type(r, &c) : (const void *)cj_vhlo_read_attr(r, &c);
        break;
      case BC_DL_STABLEHLO:
        v = is_type ? (const void *)cj_stablehlo_read_type(r, &c)
                    : (const void *)cj_stablehlo_read_attr(r, &c);
        break;
      case BC_DL_QUANT:
        if (is_type) {
          v = cj_quant_read_type(r, &c);
          break;
        }
        cj_bc_fail(r, &c, "unsupported quant attribute");
        break;
      case BC_DL_CHLO:
        if (!is_type) {
          v = cj_chlo_read_attr(r, &c);
          break;
        }
        cj_bc_fail(r, &c, "unsupported chlo type");
        break;
      case BC_DL_SDY:
        if (!is_type) {
          v = cj_sdy_read_attr(r, &c);
          break;
        }
        cj_bc_fail(r, &c, "unsupported sdy type");
        break;
      default:
        cj_bc_fail(r, &c, "cannot decode %s %llu of dialect '%.*s' (custom encoding not supported)",
                is_type ? "type" : "attribute", (unsigned long long)idx, (int)d->len, d->name);
        break;
    }
  }
  r->depth--;
  if (v && c.p != c.end) {
    cj_bc_fail(r, &c, "%zu unexpected trailing bytes after %s %llu", (size_t)(c.end - c.p),
            is_type ? "type" : "attribute", (unsigned long long)idx);
    v = NULL;
  }
  if (!v) {
    if (bc_ok(r))
      cj_bc_fail(r, &c, "cannot decode %s %llu", is_type ? "type" : "attribute",
              (unsigned long long)idx);
    e->state = 0;
    return NULL;
  }
  e->value = v;
  e->state = 2;
  return v;
}

const cj_attr *cj_bc_attr_at(bc_reader *r, uint64_t idx) {
  if (r->err) return NULL;
  if (idx >= r->nattrs) {
    cj_bc_fail(r, NULL, "attribute index %llu out of range (%llu attributes)", (unsigned long long)idx,
            (unsigned long long)r->nattrs);
    return NULL;
  }
  bc_entry *e = &r->attrs[idx];
  if (e->state == 2) return e->value;
  return decode_entry(r, e, false, idx);
}

const cj_type *cj_bc_type_at(bc_reader *r, uint64_t idx) {
  if (r->err) return NULL;
  if (idx >= r->ntypes) {
    cj_bc_fail(r, NULL, "type index %llu out of range (%llu types)", (unsigned long long)idx,
            (unsigned long long)r->ntypes);
    return NULL;
  }
  bc_entry *e = &r->types[idx];
  if (e->state == 2) return e->value;
  return decode_entry(r, e, true, idx);
}

const cj_attr *cj_bc_attr_ref(bc_reader *r, bc_cur *c) {
  uint64_t i;
  if (!cj_bc_varint(r, c, &i)) return NULL;
  if (i >= r->nattrs) {
    cj_bc_fail(r, c, "attribute index %llu out of range (%llu attributes)", (unsigned long long)i,
            (unsigned long long)r->nattrs);
    return NULL;
  }
  return cj_bc_attr_at(r, i);
}

const cj_type *cj_bc_type_ref(bc_reader *r, bc_cur *c) {
  uint64_t i;
  if (!cj_bc_varint(r, c, &i)) return NULL;
  if (i >= r->ntypes) {
    cj_bc_fail(r, c, "type index %llu out of range (%llu types)", (unsigned long long)i,
            (unsigned long long)r->ntypes);
    return NULL;
  }
  return cj_bc_type_at(r, i);
}

bool cj_bc_opt_attr_ref(bc_reader *r, bc_cur *c, const cj_attr **out) {
  uint64_t v;
  *out = NULL;
  if (!cj_bc_varint(r, c, &v)) return false;
  if (!(v & 1)) return true;
  if ((v >> 1) >= r->nattrs) return cj_bc_fail(r, c, "attribute index out of range");
  *out = cj_bc_attr_at(r, v >> 1);
  return *out != NULL;
}

/* ======================================================================== the IR */

/* One isolated-from-above value scope: slots for values, and for each slot the list of operand
 * places waiting for its definition (forward references). */
typedef struct vscope {
  cj_value **vals;
  int32_t *pending; /* head index into ir.fix, -1 = none */
  uint64_t size, cap;
} vscope;

typedef struct fixup {
  cj_value **where;
  int32_t next;
} fixup;

typedef struct ir_state {
  bc_reader *r;
  vscope *scopes;
  uint32_t nscopes, capscopes;
  fixup *fix;
  uint32_t nfix, capfix, freefix; /* freefix: head of reusable entries, -1 none */
  int region_depth;
  /* scratch for one op header (consumed before nested regions are read) */
  uint64_t *opnd_ids;
  size_t cap_opnds;
  const cj_type **res_types;
  size_t cap_res;
  cj_named_attr *attrs;
  size_t cap_attrs;
} ir_state;

static bool push_scope(ir_state *s, bc_cur *c) {
  if (s->nscopes == s->capscopes) {
    uint32_t ncap = s->capscopes ? s->capscopes * 2 : 8;
    vscope *n = realloc(s->scopes, sizeof *n * ncap);
    if (!n) return cj_bc_fail(s->r, c, "out of memory");
    s->scopes = n;
    s->capscopes = ncap;
  }
  memset(&s->scopes[s->nscopes++], 0, sizeof(vscope));
  return true;
}

static void pop_scope(ir_state *s) {
  vscope *v = &s->scopes[--s->nscopes];
  free(v->vals);
  free(v->pending);
}

/* Reserves n slots in the innermost scope; returns the first slot index. */
static bool reserve_values(ir_state *s, bc_cur *c, uint64_t n, uint64_t *first) {
  vscope *v = &s->scopes[s->nscopes - 1];
  if (n > (uint64_t)(c->end - c->p) + 1) /* every value is defined by at least one byte */
    return cj_bc_fail(s->r, c, "region declares %llu values, more than its data can define",
                   (unsigned long long)n);
  uint64_t need = v->size + n;
  if (need > v->cap) {
    uint64_t ncap = v->cap ? v->cap : 64;
    while (ncap < need) ncap *= 2;
    cj_value **vals = realloc(v->vals, sizeof *vals * ncap);
    if (!vals) return cj_bc_fail(s->r, c, "out of memory");
    v->vals = vals;
    int32_t *pend = realloc(v->pending, sizeof *pend * ncap);
    if (!pend) return cj_bc_fail(s->r, c, "out of memory");
    v->pending = pend;
    v->cap = ncap;
  }
  for (uint64_t i = v->size; i < need; i++) {
    v->vals[i] = NULL;
    v->pending[i] = -1;
  }
  *first = v->size;
  v->size = need;
  return true;
}

static bool release_values(ir_state *s, bc_cur *c, uint64_t first) {
  vscope *v = &s->scopes[s->nscopes - 1];
  for (uint64_t i = first; i < v->size; i++)
    if (v->pending[i] >= 0)
      return cj_bc_fail(s->r, c, "an operand refers to value #%llu, which is never defined",
                     (unsigned long long)i);
  v->size = first;
  return true;
}

static bool define_value(ir_state *s, bc_cur *c, uint64_t *next, uint64_t limit, cj_value *val) {
  vscope *v = &s->scopes[s->nscopes - 1];
  if (*next >= limit) return cj_bc_fail(s->r, c, "more values defined than the region declared");
  uint64_t id = (*next)++;
  v->vals[id] = val;
  for (int32_t f = v->pending[id]; f >= 0;) {
    *s->fix[f].where = val;
    int32_t nx = s->fix[f].next;
    s->fix[f].next = (int32_t)s->freefix;
    s->freefix = (uint32_t)f;
    f = nx;
  }
  v->pending[id] = -1;
  return true;
}

static bool use_value(ir_state *s, bc_cur *c, uint64_t id, cj_value **where) {
  vscope *v = &s->scopes[s->nscopes - 1];
  if (id >= v->size)
    return cj_bc_fail(s->r, c, "operand refers to value #%llu, outside its scope (%llu values)",
                   (unsigned long long)id, (unsigned long long)v->size);
  if (v->vals[id]) {
    *where = v->vals[id];
    return true;
  }
  int32_t f;
  if (s->freefix != UINT32_MAX) {
    f = (int32_t)s->freefix;
    s->freefix = (uint32_t)s->fix[f].next;
  } else {
    if (s->nfix == s->capfix) {
      uint32_t ncap = s->capfix ? s->capfix * 2 : 64;
      fixup *n = realloc(s->fix, sizeof *n * ncap);
      if (!n) return cj_bc_fail(s->r, c, "out of memory");
      s->fix = n;
      s->capfix = ncap;
    }
    if (s->nfix >= INT32_MAX) return cj_bc_fail(s->r, c, "too many forward references");
    f = (int32_t)s->nfix++;
  }
  s->fix[f].where = where;
  s->fix[f].next = v->pending[id];
  v->pending[id] = f;
  *where = NULL;
  return true;
}

static bool grow(void **p, size_t *cap, size_t need, size_t elem) {
  if (need <= *cap) return true;
  size_t n = *cap ? *cap : 16;
  while (n < need) n *= 2;
  void *q = realloc(*p, n * elem);
  if (!q) return false;
  *p = q;
  *cap = n;
  return true;
}

static bool skip_use_list_orders(bc_reader *r, bc_cur *c, uint64_t nvalues) {
  uint64_t nentries = 1;
  if (nvalues > 1 && !cj_bc_count(r, c, &nentries)) return false;
  for (uint64_t i = 0; i < nentries; i++) {
    uint64_t idx, n, x;
    if (nvalues > 1 && !cj_bc_varint(r, c, &idx)) return false;
    if (!cj_bc_count(r, c, &n)) return false;
    n >>= 1;
    (void)n;
    /* (count << 1) | isPair; the count was validated before the shift */
    for (uint64_t k = 0; k < n; k++)
      if (!cj_bc_varint(r, c, &x)) return false;
  }
  return true;
}

static void set_loc(cj_op *op, const cj_attr *loc) {
  if (!loc || loc->loc.lk == CJ_LOC_UNKNOWN) return;
  op->loc = loc;
  /* where the op was read from: the first FileLineColLoc in its location */
  const cj_attr *f = cj_loc_first_file(loc, 64);
  if (f) {
    op->pos.file = f->loc.name;
    op->pos.line = f->loc.line;
    op->pos.col = f->loc.col;
  }
}

/* Properties layouts of the non-VHLO ops we build from plain bytecode: attribute names in
 * properties (sorted) order and whether each is optional. Ops not listed carry their
 * properties as an attribute (unregistered) or are rejected. */
enum { PROP_MAX = 16 };
typedef struct prop_layout {
  const char *op;
  const char *names[PROP_MAX];
  uint8_t optional[PROP_MAX];
} prop_layout;

static const prop_layout kPropLayouts[] = {
    {"builtin.module", {"sym_name", "sym_visibility"}, {1, 1}},
    {"func.func",
     {"arg_attrs", "function_type", "no_inline", "res_attrs", "sym_name", "sym_visibility"},
     {1, 0, 1, 1, 0, 1}},
    {"func.call", {"arg_attrs", "callee", "no_inline", "res_attrs"}, {1, 0, 1, 1}},
    {"sdy.mesh", {"mesh", "sym_name"}, {0, 0}},
    {"sdy.sharding_constraint", {"sharding"}, {0}},
    {"sdy.reshard", {"sharding"}, {0}},
    {"sdy.manual_computation", {"in_shardings", "manual_axes", "out_shardings"}, {0, 0, 0}},
    {"sdy.sharding_group", {"group_id"}, {0}},
    {"sdy.constant", {"value"}, {0}},
    {"sdy.data_flow_edge", {"sharding"}, {1}},
    {"sdy.propagation_barrier", {"allowed_direction"}, {0}},
    {"sdy.named_computation", {"in_shardings", "name", "out_shardings"}, {1, 0, 1}},
    {"stablehlo.cross-replica-sum", {"replica_groups"}, {0}},
};

static const prop_layout *find_layout(const char *full) {
  for (size_t i = 0; i < sizeof kPropLayouts / sizeof kPropLayouts[0]; i++)
    if (strcmp(kPropLayouts[i].op, full) == 0) return &kPropLayouts[i];
  return NULL;
}

/* Attributes StableHLO ops gained after their first version: plain bytecode of an older writer
 * does not have them in its properties. */
static bool late_attribute(const char *op, const char *attr) {
  static const char *const late[][2] = {
      {"stablehlo.custom_call", "result_tilings"},
      {"stablehlo.collective_broadcast", "has_dynamic_root"},
      {"stablehlo.send", "source_target_pairs"},
      {"stablehlo.recv", "source_target_pairs"},
      {"stablehlo.dot_general", "algorithm"},
      {NULL, "result_accuracy"},
  };
  for (size_t i = 0; i < sizeof late / sizeof late[0]; i++)
    if ((!late[i][0] || strcmp(late[i][0], op) == 0) && strcmp(late[i][1], attr) == 0) return true;
  return false;
}

/* The number of varints in a properties blob (each attribute takes exactly one: an index, or
 * an index with a presence flag); -1 if the blob is not a sequence of varints. */
static int count_varints(const uint8_t *p, const uint8_t *end) {
  int n = 0;
  while (p < end) {
    unsigned extra = *p == 0 ? 8 : (unsigned)__builtin_ctz(*p);
    if ((size_t)(end - p) < extra + 1) return -1;
    p += extra + 1;
    n++;
  }
  return n;
}

/* The properties of the ops in our table (stablehlo, chlo, ...): their inherent attributes in
 * sorted order, the optional (and default-valued) ones with a presence flag. `written` is the
 * number of attributes the blob holds: when it is smaller, the writer predates attributes the
 * op gained later, which are left out. */
static bool table_layout(const char *full, int written, prop_layout *out) {
  cj_op_kind kind = cj_op_kind_from_name(full, strlen(full));
  if (kind == CJ_OP_UNKNOWN) return false;
  int total = 0;
  for (const cj_attr_spec *sp = cj_op_info_get(kind)->attrs; sp && sp->name; sp++) total++;
  bool drop_late = written >= 0 && written < total;
  memset(out, 0, sizeof *out);
  out->op = full;
  int n = 0;
  for (const cj_attr_spec *sp = cj_op_info_get(kind)->attrs; sp && sp->name; sp++) {
    if (drop_late && late_attribute(full, sp->name)) continue;
    if (n == PROP_MAX - 1) return false;
    int k = n++;
    while (k > 0 && strcmp(out->names[k - 1], sp->name) > 0) {
      out->names[k] = out->names[k - 1];
      out->optional[k] = out->optional[k - 1];
      k--;
    }
    out->names[k] = sp->name;
    out->optional[k] = sp->flags != CJ_AF_REQUIRED;
  }
  return true;
}

static bool add_attr(ir_state *s, bc_cur *c, uint32_t *n, const char *name, const cj_attr *v) {
  if (!grow((void **)&s->attrs, &s->cap_attrs, *n + 1, sizeof *s->attrs))
    return cj_bc_fail(s->r, c, "out of memory");
  s->attrs[*n].name = name;
  s->attrs[*n].value = v;
  (*n)++;
  return true;
}

static const char *opname_full(bc_reader *r, bc_opname *o, bc_cur *c) {
  if (o->full) return o->full;
  const bc_dialect *d = &r->dialects[o->dialect];
  size_t n = d->len + 1 + o->len;
  char buf[256];
  char *tmp = n < sizeof buf ? buf : malloc(n + 1);
  if (!tmp) {
    cj_bc_fail(r, c, "out of memory");
    return NULL;
  }
  memcpy(tmp, d->name, d->len);
  size_t k = d->len;
  if (o->len) {
    tmp[k++] = '.';
    memcpy(tmp + k, o->name, o->len);
    k += o->len;
  }
  o->full = cj_intern(r->m, tmp, k);
  if (tmp != buf) free(tmp);
  if (!o->full) cj_bc_fail(r, c, "out of memory");
  return o->full;
}

static bool read_regions(ir_state *s, bc_cur *c, cj_op *op, bool isolated);

/* The values a region defines: the next slot to assign and the end of its reservation. A region
 * that declares no values (the top level) does not number op results. */
typedef struct region_values {
  uint64_t next, limit;
  bool numbered;
  cj_block **blocks; /* the region's blocks, for successor references */
  uint64_t nblocks;
} region_values;

/* The properties of an op (the inherent attributes MLIR stores apart): an unregistered op's
 * one dictionary, a VHLO op's attributes in its table order, or a known op's layout. */
static bool read_op_props(ir_state *s, bc_cur *c, bc_opname *on, const char *full, bool is_vhlo,
                          int vop, uint32_t *nattrs) {
  bc_reader *r = s->r;
  if (on->registered < 0)
    return cj_bc_fail(r, c, "op '%s' has properties but its name carries no registration flag",
                   full);
  if (!on->registered) { /* an unregistered op: properties stored as one attribute */
    const cj_attr *p = cj_bc_attr_ref(r, c);
    if (!p) return false;
    if (p->kind == CJ_ATTR_DICT) {
      for (int32_t i = 0; i < p->dict.n; i++)
        if (!add_attr(s, c, nattrs, p->dict.items[i].name, p->dict.items[i].value)) return false;
    }
  } else {
    uint64_t pi;
    if (!cj_bc_varint(r, c, &pi)) return false;
    if (pi >= r->nprops)
      return cj_bc_fail(r, c, "properties index %llu out of range", (unsigned long long)pi);
    bc_cur pc = {r->props[pi], r->props_end};
    const uint8_t *pd;
    uint64_t plen;
    if (!cj_bc_blob(r, &pc, &pd, &plen)) return false;
    bc_cur p = {pd, pd + plen};
    if (is_vhlo) {
      const char *const *names = cj_vhlo_op_attr_names(vop);
      for (int i = 0; names[i]; i++) {
        if (p.p >= p.end)
          return cj_bc_fail(r, &p, "the properties of '%s' end before its attribute '%s'", full,
                         names[i]);
        const cj_attr *v = cj_bc_attr_ref(r, &p);
        if (!v) return false;
        if (!add_attr(s, c, nattrs, names[i], v)) return false;
      }
    } else {
      const prop_layout *lay = find_layout(full);
      prop_layout from_table;
      if (!lay && table_layout(full, count_varints(p.p, p.end), &from_table)) lay = &from_table;
      if (!lay)
        return cj_bc_fail(r, c, "cannot read the properties of op '%s' (unsupported op)", full);
      for (int i = 0; i < PROP_MAX && lay->names[i]; i++) {
        const cj_attr *v = NULL;
        if (p.p >= p.end) {
          /* written by an older version of the op that did not have this attribute yet: the
           * optional attributes that would follow are absent */
          bool rest_optional = true;
          for (int k = i; k < PROP_MAX && lay->names[k]; k++)
            rest_optional &= lay->optional[k] != 0;
          if (rest_optional) break;
          return cj_bc_fail(r, &p, "the properties of '%s' end before its attribute '%s'", full,
                         lay->names[i]);
        }
        if (lay->optional[i]) {
          if (!cj_bc_opt_attr_ref(r, &p, &v)) return false;
        } else if (!(v = cj_bc_attr_ref(r, &p))) {
          return false;
        }
        if (v && !add_attr(s, c, nattrs, lay->names[i], v)) return false;
      }
    }
    if (p.p != p.end)
      return cj_bc_fail(r, &p, "unexpected trailing bytes in the properties of '%s'", full);
  }
  return true;
}

static bool read_op(ir_state *s, bc_cur *c, cj_block *block, region_values *rv,
                    cj_op_kind parent_kind) {
  bc_reader *r = s->r;
  const uint8_t *op_start = c->p;
  uint64_t ni;
  if (!cj_bc_varint(r, c, &ni)) return false;
  if (ni >= r->nopnames)
    return cj_bc_fail(r, c, "op name index %llu out of range", (unsigned long long)ni);
  bc_opname *on = &r->opnames[ni];
  uint8_t mask;
  if (!cj_bc_byte(r, c, &mask)) return false;
  const cj_attr *loc = loc_ref(r, c);
  if (!loc) return false;
  const char *full = opname_full(r, on, c);
  if (!full) return false;
  const bc_dialect *dl = &r->dialects[on->dialect];
  bool is_vhlo = dl->kind == BC_DL_VHLO;
  int vop = -1;
  if (is_vhlo) {
    if (!on->resolved) {
      on->vhlo = (int16_t)cj_vhlo_op_lookup(on->name, on->len);
      on->resolved = 1;
    }
    vop = on->vhlo;
    if (vop < 0) {
      bc_cur at = {op_start, c->end};
      return cj_bc_fail(r, &at, "unknown VHLO op '%s' (this reader supports StableHLO %d.%d.%d)", full,
                     (int)kCurrentVersion[0], (int)kCurrentVersion[1], (int)kCurrentVersion[2]);
    }
  }

  uint32_t nattrs = 0;
  if (mask & OPM_ATTRS) {
    const cj_attr *d = cj_bc_attr_ref(r, c);
    if (!d) return false;
    if (d->kind != CJ_ATTR_DICT) return cj_bc_fail(r, c, "op attributes are not a dictionary");
    for (int32_t i = 0; i < d->dict.n; i++)
      if (!add_attr(s, c, &nattrs, d->dict.items[i].name, d->dict.items[i].value)) return false;
  }
  if ((mask & OPM_PROPERTIES) && !read_op_props(s, c, on, full, is_vhlo, vop, &nattrs))
    return false;
  uint64_t nres = 0;
  if (mask & OPM_RESULTS) {
    if (!cj_bc_count(r, c, &nres)) return false;
    if (!grow((void **)&s->res_types, &s->cap_res, nres, sizeof *s->res_types))
      return cj_bc_fail(r, c, "out of memory");
    for (uint64_t i = 0; i < nres; i++)
      if (!(s->res_types[i] = cj_bc_type_ref(r, c))) return false;
  }
  uint64_t nopnds = 0;
  if (mask & OPM_OPERANDS) {
    if (!cj_bc_count(r, c, &nopnds)) return false;
    if (!grow((void **)&s->opnd_ids, &s->cap_opnds, nopnds, sizeof *s->opnd_ids))
      return cj_bc_fail(r, c, "out of memory");
    for (uint64_t i = 0; i < nopnds; i++)
      if (!cj_bc_varint(r, c, &s->opnd_ids[i])) return false;
  }
  uint64_t nsucc = 0;
  uint64_t succ_stack[4], *succ = succ_stack;
  if (mask & OPM_SUCCESSORS) {
    if (!cj_bc_count(r, c, &nsucc)) return false;
    if (nsucc > 4 && !(succ = malloc(sizeof *succ * nsucc))) return cj_bc_fail(r, c, "out of memory");
    for (uint64_t i = 0; i < nsucc; i++)
      if (!cj_bc_varint(r, c, &succ[i])) {
        if (succ != succ_stack) free(succ);
        return false;
      }
  }
  if (r->version >= BCV_USE_LIST_ORDERING && (mask & OPM_USELIST)) {
    if (!skip_use_list_orders(r, c, nres)) goto fail_succ;
  }
  uint64_t nregions = 0;
  bool isolated = false;
  if (mask & OPM_REGIONS) {
    uint64_t v;
    if (!cj_bc_varint(r, c, &v)) goto fail_succ;
    nregions = v >> 1;
    isolated = v & 1;
    if (nregions > (uint64_t)(c->end - c->p) + 1) {
      cj_bc_fail(r, c, "op '%s' declares %llu regions", full, (unsigned long long)nregions);
      goto fail_succ;
    }
  }

  /* Build the op. */
  cj_op *op = NULL;
  if (is_vhlo) {
    cj_status st = cj_vhlo_build_op(r, vop, s->attrs, nattrs, (uint32_t)nopnds, (uint32_t)nres,
                                 (uint32_t)nregions, parent_kind, &op);
    if (st) {
      bc_cur at = {op_start, c->end};
      cj_bc_fail(r, &at, "%s", cj_status_message(st));
      cj_status_free(st);
      goto fail_succ;
    }
  } else {
    cj_op_kind kind = cj_op_kind_from_name(full, strlen(full));
    if (kind == CJ_OP_UNKNOWN && strcmp(full, "builtin.unrealized_conversion_cast") == 0)
      r->saw_cast = true;
    op = cj_op_create(r->m, kind, full, (uint32_t)nopnds, (uint32_t)nres, (uint32_t)nregions);
    if (!op) {
      cj_bc_fail(r, c, "out of memory");
      goto fail_succ;
    }
    /* names are distinct (the dictionary's among themselves; properties hold inherent ones; a
     * name repeated in damaged input is harmless: lookups take the first) */
    cj_status st = cj_bc_set_attrs(r, op, s->attrs, nattrs);
    if (!st) st = cj_bc_normalize_op_attrs(r->m, op);
    if (st) {
      cj_bc_fail(r, c, "op '%s': %s", full, cj_status_message(st));
      cj_status_free(st);
      goto fail_succ;
    }
  }
  set_loc(op, loc);
  for (uint64_t i = 0; i < nres; i++) op->results[i].type = s->res_types[i];
  for (uint64_t i = 0; i < nopnds; i++)
    if (!use_value(s, c, s->opnd_ids[i], &op->operands[i])) goto fail_succ;
  if (nsucc) {
    op->successors = CJ_ARENA_ARRAY(&r->m->arena, cj_block *, nsucc);
    if (!op->successors) {
      cj_bc_fail(r, c, "out of memory");
      goto fail_succ;
    }
    op->nsuccessors = (uint32_t)nsucc;
    for (uint64_t i = 0; i < nsucc; i++) {
      if (succ[i] >= rv->nblocks) {
        cj_bc_fail(r, c, "successor block %llu out of range", (unsigned long long)succ[i]);
        goto fail_succ;
      }
      op->successors[i] = rv->blocks[succ[i]];
    }
  }
  if (succ != succ_stack) free(succ);
  succ = succ_stack;
  cj_block_append(block, op);
  if (rv->numbered)
    for (uint64_t i = 0; i < nres; i++)
      if (!define_value(s, c, &rv->next, rv->limit, &op->results[i])) return false;
  if (nregions) return read_regions(s, c, op, isolated);
  return true;
fail_succ:
  if (succ != succ_stack) free(succ);
  return false;
}

/* Block header: (numOps << 1) | hasArgs, then the arguments and their use-list orders. */
static bool read_block_header(ir_state *s, bc_cur *c, cj_block *b, uint64_t *nops,
                              region_values *rv) {
  bc_reader *r = s->r;
  uint64_t v;
  if (!cj_bc_varint(r, c, &v)) return false;
  *nops = v >> 1;
  if (*nops > (uint64_t)(c->end - c->p))
    return cj_bc_fail(r, c, "block declares %llu ops", (unsigned long long)*nops);
  if (!(v & 1)) return true;
  uint64_t nargs;
  if (!cj_bc_count(r, c, &nargs)) return false;
  b->nargs = (uint32_t)nargs;
  if (nargs) {
    b->args = CJ_ARENA_ARRAY(&r->m->arena, cj_value, nargs);
    if (!b->args) return cj_bc_fail(r, c, "out of memory");
  }
  for (uint64_t i = 0; i < nargs; i++) {
    cj_value *a = &b->args[i];
    a->block = b;
    a->index = (uint32_t)i;
    const cj_attr *loc = NULL;
    if (r->version >= BCV_ELIDE_UNKNOWN_BLOCK_ARG_LOC) {
      uint64_t tv;
      if (!cj_bc_varint(r, c, &tv)) return false;
      if ((tv >> 1) >= r->ntypes) return cj_bc_fail(r, c, "type index out of range");
      if (!(a->type = cj_bc_type_at(r, tv >> 1))) return false;
      if ((tv & 1) && !(loc = loc_ref(r, c))) return false;
    } else {
      if (!(a->type = cj_bc_type_ref(r, c)) || !(loc = loc_ref(r, c))) return false;
    }
    if (loc && loc->loc.lk != CJ_LOC_UNKNOWN) a->loc = loc;
    if (!define_value(s, c, &rv->next, rv->limit, a)) return false;
  }
  if (r->version >= BCV_USE_LIST_ORDERING) {
    uint8_t has;
    if (!cj_bc_byte(r, c, &has)) return false;
    if (has && !skip_use_list_orders(r, c, nargs)) return false;
  }
  return true;
}

static bool read_region(ir_state *s, bc_cur *c, cj_region *reg, cj_op_kind owner) {
  bc_reader *r = s->r;
  uint64_t nblocks;
  if (!cj_bc_count(r, c, &nblocks)) return false;
  if (nblocks == 0) return true;
  uint64_t nvalues = 0, first = 0;
  if (!cj_bc_varint(r, c, &nvalues) || !reserve_values(s, c, nvalues, &first)) return false;
  cj_block **blocks = CJ_ARENA_ARRAY(&r->m->arena, cj_block *, nblocks);
  if (!blocks) return cj_bc_fail(r, c, "out of memory");
  for (uint64_t i = 0; i < nblocks; i++)
    if (!(blocks[i] = cj_region_add_block(r->m, reg, 0, NULL))) return cj_bc_fail(r, c, "out of memory");
  region_values rv = {first, first + nvalues, nvalues != 0, blocks, nblocks};
  for (cj_block *b = reg->first; b; b = b->next) {
    uint64_t nops;
    if (!read_block_header(s, c, b, &nops, &rv)) return false;
    for (uint64_t i = 0; i < nops; i++)
      if (!read_op(s, c, b, &rv, owner)) return false;
  }
  return release_values(s, c, first);
}

static bool read_regions(ir_state *s, bc_cur *c, cj_op *op, bool isolated) {
  bc_reader *r = s->r;
  if (++s->region_depth > BC_MAX_REGION_DEPTH) return cj_bc_fail(r, c, "regions nested too deeply");
  bc_cur sec = *c, *rc = c;
  if (isolated && r->version >= BCV_LAZY_LOADING) {
    uint8_t id;
    if (!read_section(r, c, &id, &sec)) return false;
    if (id != SEC_IR) return cj_bc_fail(r, c, "expected an IR section for an isolated region");
    rc = &sec;
  }
  if (isolated && !push_scope(s, c)) return false;
  bool ok = true;
  for (uint32_t i = 0; ok && i < op->nregions; i++)
    ok = read_region(s, rc, &op->regions[i], op->kind);
  if (ok && rc == &sec && sec.p != sec.end)
    ok = cj_bc_fail(r, &sec, "unexpected trailing data in an isolated region");
  if (isolated) pop_scope(s);
  s->region_depth--;
  return ok;
}

/* Mixed artifacts wrap the ops of other dialects in builtin.unrealized_conversion_cast ops that
 * convert between VHLO and builtin types. Both map onto the same types here, so, as upstream's
 * legalization does, every cast whose operand and result types are equal is folded away. */
static cj_value *cast_source(cj_value *v, const char *cast_name) {
  for (int guard = 0; guard < 64 && v && v->def; guard++) {
    cj_op *d = v->def;
    if (d->name != cast_name || d->nopnds != 1 || d->nresults != 1 || !d->operands[0] ||
        d->operands[0]->type != v->type)
      break;
    v = d->operands[0];
  }
  return v;
}

static void fold_casts_in_block(cj_block *b, const char *cast_name, int depth) {
  if (depth > BC_MAX_REGION_DEPTH) return;
  for (cj_op *op = b->first; op;) {
    cj_op *next = op->next;
    for (uint32_t i = 0; i < op->nopnds; i++)
      op->operands[i] = cast_source(op->operands[i], cast_name);
    for (uint32_t r = 0; r < op->nregions; r++)
      for (cj_block *nb = op->regions[r].first; nb; nb = nb->next)
        fold_casts_in_block(nb, cast_name, depth + 1);
    op = next;
  }
  for (cj_op *op = b->first; op;) {
    cj_op *next = op->next;
    if (op->name == cast_name && op->nopnds == 1 && op->nresults == 1 && op->operands[0] &&
        op->operands[0]->type == op->results[0].type)
      cj_block_remove(b, op);
    op = next;
  }
}

/* The top-level block of the IR section; ops go into the module body. A single builtin.module
 * op is then unwrapped into the module. */
static bool read_ir(bc_reader *r, bc_cur sec) {
  ir_state s;
  memset(&s, 0, sizeof s);
  s.r = r;
  s.freefix = UINT32_MAX;
  cj_module *m = r->m;
  cj_block *top = cj_module_block(m);
  bool ok = top != NULL;
  if (!ok) cj_bc_fail(r, &sec, "out of memory");
  bc_cur c = sec;
  if (ok) ok = push_scope(&s, &c);
  if (ok) {
    uint64_t nops;
    region_values rv = {0, 0, false, &top, 1};
    ok = read_block_header(&s, &c, top, &nops, &rv);
    for (uint64_t i = 0; ok && i < nops; i++) ok = read_op(&s, &c, top, &rv, CJ_OP_COUNT);
    if (ok && c.p != c.end) ok = cj_bc_fail(r, &c, "unexpected trailing data in the IR section");
    if (ok) ok = release_values(&s, &c, 0);
  }
  while (s.nscopes) pop_scope(&s);
  free(s.scopes);
  free(s.fix);
  free(s.opnd_ids);
  free(s.res_types);
  free(s.attrs);
  if (!ok) return false;

  if (r->saw_cast) {
    const char *cast_name = cj_intern(m, "builtin.unrealized_conversion_cast",
                                      strlen("builtin.unrealized_conversion_cast"));
    if (!cast_name) return cj_bc_fail(r, NULL, "out of memory");
    fold_casts_in_block(top, cast_name, 0);
  }

  /* unwrap `builtin.module` */
  cj_op *mod = top->first;
  if (mod && mod == top->last && mod->kind == CJ_OP_UNKNOWN &&
      strcmp(mod->name, "builtin.module") == 0 && mod->nregions == 1 && mod->nresults == 0 &&
      mod->nopnds == 0) {
    /* one array for all (cj_module_set_attr per attribute would copy the list each time) */
    cj_named_attr *ma = mod->nattrs ? CJ_ARENA_ARRAY(&m->arena, cj_named_attr, mod->nattrs) : NULL;
    if (mod->nattrs && !ma) return cj_bc_fail(r, NULL, "out of memory");
    uint32_t nm = 0;
    for (uint32_t i = 0; i < mod->nattrs; i++) {
      const char *n = mod->attrs[i].name;
      const cj_attr *v = mod->attrs[i].value;
      if (strcmp(n, "sym_name") == 0 && v->kind == CJ_ATTR_STRING) {
        m->name = v->str.s;
        continue;
      }
      if (strcmp(n, "sym_visibility") == 0) continue;
      ma[nm++] = mod->attrs[i];
    }
    m->attrs = ma;
    m->nattrs = nm;
    m->loc = mod->loc;
    m->pos = mod->pos;
    cj_region *inner = &mod->regions[0];
    m->body.first = inner->first;
    m->body.last = inner->last;
    m->body.nblocks = inner->nblocks;
    m->body.op = NULL;
    for (cj_block *b = m->body.first; b; b = b->next) b->region = &m->body;
    if (!m->body.first && !cj_module_block(m)) return cj_bc_fail(r, NULL, "out of memory");
  }
  return true;
}

/* ======================================================================== attribute normalization
 */

static const cj_attr *dense_to_array(cj_module *m, const cj_attr *a, cj_dtype want) {
  int64_t n = cj_dense_num_elements(a);
  if (n < 0) return NULL;
  if (want == CJ_PRED) {
    uint8_t *v = malloc((size_t)(n ? n : 1));
    if (!v) return NULL;
    for (int64_t i = 0; i < n; i++) v[i] = cj_dense_get_i64(a, i) ? 1 : 0;
    const cj_attr *out = cj_attr_dense_array(m, CJ_PRED, n, v);
    free(v);
    return out;
  }
  int64_t *v = malloc(sizeof(int64_t) * (size_t)(n ? n : 1));
  if (!v) return NULL;
  for (int64_t i = 0; i < n; i++) v[i] = cj_dense_get_i64(a, i);
  const cj_attr *out = cj_attr_i64_array(m, n, v);
  free(v);
  return out;
}

static bool all_empty_dicts(const cj_attr *a) {
  if (!a || a->kind != CJ_ATTR_ARRAY) return false;
  for (int32_t i = 0; i < a->arr.n; i++)
    if (a->arr.items[i]->kind != CJ_ATTR_DICT || a->arr.items[i]->dict.n) return false;
  return true;
}

cj_status cj_bc_normalize_op_attrs(cj_module *m, cj_op *op) {
  if (!op->nattrs) return NULL;
  if (op->kind == CJ_OP_FUNC) {
    /* argument/result attribute lists of empty dictionaries say nothing: the text form has no
     * way to write them, and MLIR drops them when it sets them through the function interface */
    for (uint32_t i = 0; i < op->nattrs; i++) {
      const char *n = op->attrs[i].name;
      if ((strcmp(n, "arg_attrs") == 0 || strcmp(n, "res_attrs") == 0) &&
          all_empty_dicts(op->attrs[i].value)) {
        op->attrs[i--] = op->attrs[--op->nattrs];
      }
    }
  }
  for (uint32_t i = 0; i < op->nattrs; i++) {
    const cj_attr *a = op->attrs[i].value;
    const cj_attr_spec *sp = cj_op_attr_spec(op->kind, op->attrs[i].name);
    if (!sp || !a) continue;
    const cj_attr *n = NULL;
    switch (sp->kind) {
      case CJ_AK_I64ARR:
        if (a->kind == CJ_ATTR_DENSE && a->dense.type && cj_dtype_is_int(a->dense.type->dtype))
          n = dense_to_array(m, a, CJ_S64);
        else if (a->kind == CJ_ATTR_DENSE_ARRAY && a->darr.dtype != CJ_S64 &&
                 cj_dtype_is_int(a->darr.dtype)) {
          int64_t cnt = a->darr.n;
          int64_t *v = malloc(sizeof(int64_t) * (size_t)(cnt ? cnt : 1));
          if (!v) return cj_oom();
          for (int64_t k = 0; k < cnt; k++)
            v[k] = cj_elem_get_i64(a->darr.dtype, a->darr.data, (size_t)k);
          n = cj_attr_i64_array(m, cnt, v);
          free(v);
        } else {
          continue;
        }
        break;
      case CJ_AK_BOOLARR:
        if (a->kind != CJ_ATTR_DENSE || !a->dense.type || a->dense.type->dtype != CJ_PRED) continue;
        n = dense_to_array(m, a, CJ_PRED);
        break;
      case CJ_AK_I32:
      case CJ_AK_I64:
        if (a->kind == CJ_ATTR_ENUM) {
          n = cj_attr_int(m, a->en.v, cj_type_elem(m, sp->kind == CJ_AK_I32 ? CJ_S32 : CJ_S64));
          break;
        }
        continue;
      case CJ_AK_SYM:
        if (a->kind != CJ_ATTR_STRING) continue;
        n = cj_attr_symref(m, a->str.s, 0, NULL);
        break;
      case CJ_AK_SYMARR: {
        if (a->kind != CJ_ATTR_ARRAY) continue;
        bool any = false;
        for (int32_t k = 0; k < a->arr.n; k++) any |= a->arr.items[k]->kind == CJ_ATTR_STRING;
        if (!any) continue;
        const cj_attr **items = malloc(sizeof(cj_attr *) * (size_t)(a->arr.n ? a->arr.n : 1));
        if (!items) return cj_oom();
        for (int32_t k = 0; k < a->arr.n; k++) {
          const cj_attr *it = a->arr.items[k];
          items[k] = it->kind == CJ_ATTR_STRING ? cj_attr_symref(m, it->str.s, 0, NULL) : it;
          if (!items[k]) {
            free(items);
            return cj_oom();
          }
        }
        n = cj_attr_array(m, a->arr.n, items);
        free(items);
        break;
      }
      case CJ_AK_UNIT:
        if (a->kind != CJ_ATTR_BOOL) continue;
        if (!a->b) { /* false means absent */
          op->attrs[i] = op->attrs[op->nattrs - 1];
          op->nattrs--;
          i--;
          continue;
        }
        n = cj_attr_unit(m);
        break;
      default: continue;
    }
    if (!n) return cj_oom();
    op->attrs[i].value = n;
  }
  return NULL;
}

/* ======================================================================== entry point */

static bool parse_stablehlo_version(const char *p, int out[3]) {
  if (strncmp(p, "StableHLO_v", 11) != 0) return false;
  p += 11;
  for (int i = 0; i < 3; i++) {
    if (*p < '0' || *p > '9') return false;
    long v = 0;
    while (*p >= '0' && *p <= '9') {
      v = v * 10 + (*p++ - '0');
      if (v > 1000000) return false;
    }
    out[i] = (int)v;
    if (i < 2) {
      if (*p != '.') return false;
      p++;
    }
  }
  return *p == 0;
}

static int version_cmp(const int a[3], const int64_t b[3]) {
  for (int i = 0; i < 3; i++)
    if (a[i] != b[i]) return a[i] < b[i] ? -1 : 1;
  return 0;
}

static void reader_free(bc_reader *r) {
  free(r->strs);
  free(r->strlens);
  free(r->dialects);
  free(r->opnames);
  free(r->attrs);
  free(r->types);
  free(r->props);
  free(r->res_data);
  free(r->res_size);
}

static bool read_all(bc_reader *r) {
  bc_cur c = {r->base, r->base + r->len};
  if (!cj_is_mlir_bytecode(r->base, r->len)) return cj_bc_fail(r, &c, "not MLIR bytecode (bad magic)");
  c.p += 4;
  if (!cj_bc_varint(r, &c, &r->version)) return false;
  if (r->version > BC_VERSION_MAX)
    return cj_bc_fail(r, &c,
                   "bytecode version %llu is newer than the newest this reader supports (%d)",
                   (unsigned long long)r->version, BC_VERSION_MAX);
  const uint8_t *nul = memchr(c.p, 0, (size_t)(c.end - c.p));
  if (!nul) return cj_bc_fail(r, &c, "unterminated producer string");
  r->producer = (const char *)c.p;
  c.p = nul + 1;

  bool versioned = parse_stablehlo_version(r->producer, r->vver);
  if (versioned) {
    if (version_cmp(r->vver, kCurrentVersion) > 0)
      return cj_bc_fail(r, NULL,
                     "the portable artifact was written by StableHLO %d.%d.%d, newer than the "
                     "newest version this reader supports (%d.%d.%d)",
                     r->vver[0], r->vver[1], r->vver[2], (int)kCurrentVersion[0],
                     (int)kCurrentVersion[1], (int)kCurrentVersion[2]);
    if (version_cmp(r->vver, kMinimumVersion) < 0)
      return cj_bc_fail(r, NULL,
                     "the portable artifact was written by StableHLO %d.%d.%d, older than the "
                     "oldest version this reader supports (%d.%d.%d)",
                     r->vver[0], r->vver[1], r->vver[2], (int)kMinimumVersion[0],
                     (int)kMinimumVersion[1], (int)kMinimumVersion[2]);
  }

  bc_cur secs[SEC_COUNT];
  bool have[SEC_COUNT] = {false};
  while (c.p < c.end) {
    uint8_t id;
    bc_cur d;
    if (!read_section(r, &c, &id, &d)) return false;
    if (id == SEC_DIALECT_VERSIONS) return cj_bc_fail(r, &c, "dialect version section at top level");
    if (have[id]) return cj_bc_fail(r, &c, "duplicate section %u", (unsigned)id);
    have[id] = true;
    secs[id] = d;
  }
  static const char *const names[] = {"string", "dialect", "attribute/type",
                                      "attribute/type offset", "IR"};
  for (int i = 0; i <= SEC_IR; i++)
    if (!have[i]) return cj_bc_fail(r, &c, "missing the %s section", names[i]);
  if (r->version >= BCV_NATIVE_PROPERTIES && !have[SEC_PROPERTIES])
    return cj_bc_fail(r, &c, "missing the properties section");
  if (have[SEC_RESOURCE] != have[SEC_RESOURCE_OFFSET])
    return cj_bc_fail(r, &c, "resource and resource offset sections must come together");

  if (!parse_strings(r, secs[SEC_STRING])) return false;
  if (have[SEC_PROPERTIES] && !parse_properties(r, secs[SEC_PROPERTIES])) return false;
  if (!parse_dialects(r, secs[SEC_DIALECT])) return false;
  if (r->vhlo && !versioned)
    return cj_bc_fail(r, NULL, "VHLO artifact with producer '%.60s', which names no StableHLO version",
                   r->producer);
  if (have[SEC_RESOURCE] && !parse_resources(r, secs[SEC_RESOURCE], secs[SEC_RESOURCE_OFFSET]))
    return false;
  if (!parse_attrtype_offsets(r, secs[SEC_ATTRTYPE], secs[SEC_ATTRTYPE_OFFSET])) return false;
  return read_ir(r, secs[SEC_IR]);
}

cj_status cj_read_mlir_bytecode(const void *data, size_t len, const char *filename,
                                cj_module **out) {
  if (out) *out = NULL;
  if (!out) return cj_invalid("cj_read_mlir_bytecode: out is NULL");
  if (!data && len) return cj_invalid("cj_read_mlir_bytecode: data is NULL");
  cj_module *m = cj_module_create(filename);
  if (!m) return cj_oom();
  bc_reader r;
  memset(&r, 0, sizeof r);
  r.m = m;
  r.base = data ? data : (const uint8_t *)"";
  r.len = len;
  r.filename = filename;
  bool ok = read_all(&r);
  reader_free(&r);
  if (!ok) {
    cj_module_free(m);
    return r.err ? r.err : cj_internal("bytecode reader failed without a message");
  }
  if (r.producer) {
    char *p = cj_arena_strdup(&m->arena, r.producer);
    if (!p) {
      cj_module_free(m);
      return cj_oom();
    }
    m->producer = p;
  }
  *out = m;
  return NULL;
}
