/* cjrt: modules, interned types and strings, attributes, ops and blocks. */
#include "ir/ir.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ======================================================================== hash sets */

typedef struct hset {
  void **slots;
  uint32_t *hashes;
  uint32_t cap, count;
} hset;

typedef struct interning {
  hset types;
  hset strings;
  const cj_type *elem_types[CJ_DTYPE_LIMIT];
  const cj_type *token, *none;
} interning;

static uint32_t fnv(const void *p, size_t n, uint32_t h) {
  const unsigned char *s = p;
  for (size_t i = 0; i < n; i++) h = (h ^ s[i]) * 16777619u;
  return h;
}

static void hset_free(hset *s) {
  free(s->slots);
  free(s->hashes);
  memset(s, 0, sizeof *s);
}

static bool hset_grow(hset *s) {
  uint32_t ncap = s->cap ? s->cap * 2 : 64;
  void **slots = calloc(ncap, sizeof *slots);
  uint32_t *hashes = calloc(ncap, sizeof *hashes);
  if (!slots || !hashes) {
    free(slots);
    free(hashes);
    return false;
  }
  for (uint32_t i = 0; i < s->cap; i++) {
    if (!s->slots[i]) continue;
    uint32_t j = s->hashes[i] & (ncap - 1);
    while (slots[j]) j = (j + 1) & (ncap - 1);
    slots[j] = s->slots[i];
    hashes[j] = s->hashes[i];
  }
  free(s->slots);
  free(s->hashes);
  s->slots = slots;
  s->hashes = hashes;
  s->cap = ncap;
  return true;
}

/* Finds an entry equal to `key` (by eq) or returns the slot to insert into (*found = false). */
static uint32_t hset_find(const hset *s, uint32_t h, bool (*eq)(const void *, const void *),
                          const void *key, bool *found) {
  uint32_t j = h & (s->cap - 1);
  while (s->slots[j]) {
    if (s->hashes[j] == h && eq(s->slots[j], key)) {
      *found = true;
      return j;
    }
    j = (j + 1) & (s->cap - 1);
  }
  *found = false;
  return j;
}

static interning *get_interning(cj_module *m) { return (interning *)m->interning; }

/* ======================================================================== modules */

cj_module *cj_module_create(const char *filename) {
  cj_module *m = calloc(1, sizeof *m);
  if (!m) return NULL;
  cj_arena_init(&m->arena);
  m->interning = calloc(1, sizeof(interning));
  if (!m->interning) {
    free(m);
    return NULL;
  }
  if (filename) {
    m->filename = cj_arena_strdup(&m->arena, filename);
    if (!m->filename) {
      cj_module_free(m);
      return NULL;
    }
  }
  return m;
}

void cj_module_free(cj_module *m) {
  if (!m) return;
  interning *in = get_interning(m);
  if (in) {
    hset_free(&in->types);
    hset_free(&in->strings);
    free(in);
  }
  cj_arena_release(&m->arena);
  free(m);
}

cj_block *cj_module_block(cj_module *m) {
  if (!m->body.first) {
    if (!cj_region_add_block(m, &m->body, 0, NULL)) return NULL;
  }
  return m->body.first;
}

cj_op *cj_module_lookup_symbol(const cj_module *m, const char *name) {
  if (!m->body.first || !name) return NULL;
  for (cj_op *op = m->body.first->first; op; op = op->next) {
    const cj_attr *a = cj_op_attr(op, "sym_name");
    if (a && a->kind == CJ_ATTR_STRING && strcmp(a->str.s, name) == 0) return op;
  }
  return NULL;
}

cj_op *cj_module_main(const cj_module *m) {
  cj_op *main = cj_module_lookup_symbol(m, "main");
  if (main && main->kind == CJ_OP_FUNC) return main;
  if (!m->body.first) return NULL;
  cj_op *only = NULL;
  for (cj_op *op = m->body.first->first; op; op = op->next) {
    if (op->kind != CJ_OP_FUNC) continue;
    if (only) return NULL;
    only = op;
  }
  return only;
}

const cj_attr *cj_module_attr(const cj_module *m, const char *name) {
  for (uint32_t i = 0; i < m->nattrs; i++)
    if (strcmp(m->attrs[i].name, name) == 0) return m->attrs[i].value;
  return NULL;
}

static CJ_MUST_USE cj_status set_named(cj_module *m, cj_named_attr **attrs, uint32_t *n, const char *name,
                           const cj_attr *value) {
  for (uint32_t i = 0; i < *n; i++) {
    if (strcmp((*attrs)[i].name, name) == 0) {
      if (value) {
        (*attrs)[i].value = value;
      } else {
        memmove(&(*attrs)[i], &(*attrs)[i + 1], sizeof(cj_named_attr) * (*n - i - 1));
        (*n)--;
      }
      return NULL;
    }
  }
  if (!value) return NULL;
  const char *iname = cj_intern(m, name, strlen(name));
  /* grow by copying into the arena (ops have few attributes) */
  cj_named_attr *na = CJ_ARENA_ARRAY(&m->arena, cj_named_attr, *n + 1);
  if (!na || !iname) return cj_oom();
  if (*n) memcpy(na, *attrs, sizeof(cj_named_attr) * *n);
  na[*n].name = iname;
  na[*n].value = value;
  *attrs = na;
  (*n)++;
  return NULL;
}

cj_status cj_module_set_attr(cj_module *m, const char *name, const cj_attr *value) {
  return set_named(m, &m->attrs, &m->nattrs, name, value);
}

/* ======================================================================== strings */

typedef struct istr {
  size_t len;
  char s[];
} istr;

typedef struct str_key {
  const char *s;
  size_t n;
} str_key;

static bool str_eq(const void *entry, const void *key) {
  const istr *e = entry;
  const str_key *k = key;
  return e->len == k->n && memcmp(e->s, k->s, k->n) == 0;
}

const char *cj_intern(cj_module *m, const char *s, size_t len) {
  interning *in = get_interning(m);
  if (in->strings.count * 2 >= in->strings.cap && !hset_grow(&in->strings)) return NULL;
  uint32_t h = fnv(s, len, 2166136261u);
  bool found;
  str_key key = {s, len};
  uint32_t j = hset_find(&in->strings, h, str_eq, &key, &found);
  if (found) return ((istr *)in->strings.slots[j])->s;
  istr *e = cj_arena_alloc_aligned(&m->arena, sizeof(istr) + len + 1, _Alignof(istr));
  if (!e) return NULL;
  e->len = len;
  memcpy(e->s, s, len);
  e->s[len] = 0;
  in->strings.slots[j] = e;
  in->strings.hashes[j] = h;
  in->strings.count++;
  return e->s;
}

/* ======================================================================== types */

static uint32_t type_hash(const cj_type *t) {
  uint32_t h = fnv(&t->kind, sizeof t->kind, 2166136261u);
  h = fnv(&t->dtype, sizeof t->dtype, h);
  h = fnv(&t->rank, sizeof t->rank, h);
  h = fnv(&t->nresults, sizeof t->nresults, h);
  h = fnv(&t->elem, sizeof t->elem, h);
  if (t->dims) h = fnv(t->dims, sizeof(int64_t) * (size_t)t->rank, h);
  if (t->bounds) h = fnv(t->bounds, sizeof(int64_t) * (size_t)t->rank, h);
  if (t->members) {
    int n = t->kind == CJ_TYPE_FUNCTION ? t->rank + t->nresults : t->rank;
    h = fnv(t->members, sizeof(cj_type *) * (size_t)n, h);
  }
  if (t->quant) {
    const cj_quant *q = t->quant;
    h = fnv(&q->storage, sizeof q->storage, h);
    h = fnv(&q->expressed, sizeof q->expressed, h);
    h = fnv(&q->axis, sizeof q->axis, h);
    h = fnv(q->scales, sizeof(double) * (size_t)q->nscales, h);
    h = fnv(q->zero_points, sizeof(int64_t) * (size_t)q->nscales, h);
  }
  if (t->text) h = fnv(t->text, strlen(t->text), h);
  return h;
}

static bool quant_eq(const cj_quant *a, const cj_quant *b) {
  if (a == b) return true;
  if (!a || !b) return false;
  return a->storage == b->storage && a->expressed == b->expressed &&
         a->storage_min == b->storage_min && a->storage_max == b->storage_max &&
         a->axis == b->axis && a->nscales == b->nscales &&
         memcmp(a->scales, b->scales, sizeof(double) * (size_t)a->nscales) == 0 &&
         memcmp(a->zero_points, b->zero_points, sizeof(int64_t) * (size_t)a->nscales) == 0;
}

static bool type_eq(const void *entry, const void *key) {
  const cj_type *a = entry, *b = key;
  if (a->kind != b->kind || a->dtype != b->dtype || a->rank != b->rank ||
      a->nresults != b->nresults || a->elem != b->elem)
    return false;
  if ((a->dims == NULL) != (b->dims == NULL)) return false;
  if (a->dims && memcmp(a->dims, b->dims, sizeof(int64_t) * (size_t)a->rank)) return false;
  if ((a->bounds == NULL) != (b->bounds == NULL)) return false;
  if (a->bounds && memcmp(a->bounds, b->bounds, sizeof(int64_t) * (size_t)a->rank)) return false;
  if (!cj_attr_equal(a->encoding, b->encoding)) return false;
  if ((a->members == NULL) != (b->members == NULL)) return false;
  if (a->members) {
    int n = a->kind == CJ_TYPE_FUNCTION ? a->rank + a->nresults : a->rank;
    if (memcmp(a->members, b->members, sizeof(cj_type *) * (size_t)n)) return false;
  }
  if (!quant_eq(a->quant, b->quant)) return false;
  if ((a->text == NULL) != (b->text == NULL)) return false;
  if (a->text && strcmp(a->text, b->text)) return false;
  return true;
}

/* Interns `proto` (whose arrays may point at caller memory): returns the existing instance or a
 * copy placed in the arena. */
static const cj_type *intern_type(cj_module *m, cj_type *proto) {
  interning *in = get_interning(m);
  if (in->types.count * 2 >= in->types.cap && !hset_grow(&in->types)) return NULL;
  proto->hash = type_hash(proto);
  bool found;
  uint32_t j = hset_find(&in->types, proto->hash, type_eq, proto, &found);
  if (found) return in->types.slots[j];
  cj_type *t = CJ_ARENA_NEW(&m->arena, cj_type);
  if (!t) return NULL;
  *t = *proto;
  if (proto->dims) {
    t->dims = cj_arena_memdup(&m->arena, proto->dims, sizeof(int64_t) * (size_t)proto->rank);
    if (!t->dims) return NULL;
  }
  if (proto->bounds) {
    t->bounds = cj_arena_memdup(&m->arena, proto->bounds, sizeof(int64_t) * (size_t)proto->rank);
    if (!t->bounds) return NULL;
  }
  if (proto->members) {
    int n = proto->kind == CJ_TYPE_FUNCTION ? proto->rank + proto->nresults : proto->rank;
    t->members = cj_arena_memdup(&m->arena, proto->members, sizeof(cj_type *) * (size_t)n);
    if (!t->members) return NULL;
  }
  if (proto->quant) {
    cj_quant *q = CJ_ARENA_NEW(&m->arena, cj_quant);
    if (!q) return NULL;
    *q = *proto->quant;
    q->scales = cj_arena_memdup(&m->arena, proto->quant->scales,
                                sizeof(double) * (size_t)proto->quant->nscales);
    q->zero_points = cj_arena_memdup(&m->arena, proto->quant->zero_points,
                                     sizeof(int64_t) * (size_t)proto->quant->nscales);
    if (!q->scales || !q->zero_points) return NULL;
    t->quant = q;
  }
  if (proto->text) {
    t->text = cj_arena_strdup(&m->arena, proto->text);
    if (!t->text) return NULL;
  }
  in->types.slots[j] = t;
  in->types.hashes[j] = t->hash;
  in->types.count++;
  return t;
}

const cj_type *cj_type_elem(cj_module *m, cj_dtype dt) {
  interning *in = get_interning(m);
  if ((unsigned)dt >= CJ_DTYPE_LIMIT) return NULL;
  if (in->elem_types[dt]) return in->elem_types[dt];
  cj_type p = {0};
  p.kind = CJ_TYPE_ELEM;
  p.dtype = dt;
  const cj_type *t = intern_type(m, &p);
  in->elem_types[dt] = t;
  return t;
}

const cj_type *cj_type_quant(cj_module *m, const cj_quant *q) {
  cj_type p = {0};
  p.kind = CJ_TYPE_QUANT;
  p.dtype = q->storage;
  p.quant = q;
  return intern_type(m, &p);
}

const cj_type *cj_type_tensor(cj_module *m, const cj_type *elem, int32_t rank,
                              const int64_t *dims, const int64_t *bounds,
                              const cj_attr *encoding) {
  if (!elem || rank < 0) return NULL;
  cj_type p = {0};
  p.kind = CJ_TYPE_TENSOR;
  p.elem = elem;
  p.dtype = elem->dtype;
  p.rank = rank;
  static const int64_t no_dims[1] = {0};
  p.dims = rank ? dims : no_dims;
  p.bounds = rank ? bounds : NULL;
  p.encoding = encoding;
  int64_t n = 1;
  for (int32_t i = 0; i < rank; i++) {
    if (dims[i] < 0) {
      n = -1;
      break;
    }
    if (dims[i] && n > INT64_MAX / dims[i]) {
      n = -1;
      break;
    }
    n *= dims[i];
  }
  p.num_elements = n;
  return intern_type(m, &p);
}

const cj_type *cj_type_tensor_of(cj_module *m, cj_dtype dt, int32_t rank, const int64_t *dims) {
  const cj_type *e = cj_type_elem(m, dt);
  return e ? cj_type_tensor(m, e, rank, dims, NULL, NULL) : NULL;
}

const cj_type *cj_type_with_elem(cj_module *m, const cj_type *t, const cj_type *elem) {
  if (!t) return NULL;
  if (t->kind == CJ_TYPE_UNRANKED) return cj_type_unranked(m, elem);
  if (t->kind != CJ_TYPE_TENSOR) return NULL;
  return cj_type_tensor(m, elem, t->rank, t->dims, t->bounds, t->encoding);
}

const cj_type *cj_type_unranked(cj_module *m, const cj_type *elem) {
  cj_type p = {0};
  p.kind = CJ_TYPE_UNRANKED;
  p.elem = elem;
  p.dtype = elem ? elem->dtype : CJ_INVALID;
  p.num_elements = -1;
  return intern_type(m, &p);
}

const cj_type *cj_type_token(cj_module *m) {
  interning *in = get_interning(m);
  if (!in->token) {
    cj_type p = {0};
    p.kind = CJ_TYPE_TOKEN;
    p.dtype = CJ_TOKEN;
    in->token = intern_type(m, &p);
  }
  return in->token;
}

const cj_type *cj_type_none(cj_module *m) {
  interning *in = get_interning(m);
  if (!in->none) {
    cj_type p = {0};
    p.kind = CJ_TYPE_NONE;
    in->none = intern_type(m, &p);
  }
  return in->none;
}

const cj_type *cj_type_tuple(cj_module *m, int32_t n, const cj_type *const *members) {
  cj_type p = {0};
  p.kind = CJ_TYPE_TUPLE;
  p.rank = n;
  static const cj_type *const none[1] = {NULL};
  p.members = n ? members : none;
  return intern_type(m, &p);
}

const cj_type *cj_type_function(cj_module *m, int32_t nin, const cj_type *const *ins,
                                int32_t nout, const cj_type *const *outs) {
  const cj_type *buf[64];
  const cj_type **all = buf;
  if (nin + nout > 64) {
    all = malloc(sizeof(cj_type *) * (size_t)(nin + nout));
    if (!all) return NULL;
  }
  for (int i = 0; i < nin; i++) all[i] = ins[i];
  for (int i = 0; i < nout; i++) all[nin + i] = outs[i];
  cj_type p = {0};
  p.kind = CJ_TYPE_FUNCTION;
  p.rank = nin;
  p.nresults = nout;
  p.members = all;
  const cj_type *t = intern_type(m, &p);
  if (all != buf) free(all);
  return t;
}

const cj_type *cj_type_opaque(cj_module *m, const char *text, size_t len) {
  char *s = cj_arena_strndup(&m->arena, text, len);
  if (!s) return NULL;
  cj_type p = {0};
  p.kind = CJ_TYPE_OPAQUE;
  p.text = s;
  return intern_type(m, &p);
}

/* ======================================================================== attributes */

static cj_attr *new_attr(cj_module *m, cj_attr_kind k) {
  cj_attr *a = CJ_ARENA_NEW(&m->arena, cj_attr);
  if (a) a->kind = k;
  return a;
}

const cj_attr *cj_attr_unit(cj_module *m) { return new_attr(m, CJ_ATTR_UNIT); }

const cj_attr *cj_attr_bool(cj_module *m, bool v) {
  cj_attr *a = new_attr(m, CJ_ATTR_BOOL);
  if (a) a->b = v;
  return a;
}

const cj_attr *cj_attr_int(cj_module *m, int64_t v, const cj_type *type) {
  cj_attr *a = new_attr(m, CJ_ATTR_INT);
  if (a) {
    a->i.v = v;
    a->i.type = type;
  }
  return a;
}

const cj_attr *cj_attr_float(cj_module *m, double v, const cj_type *type) {
  cj_attr *a = new_attr(m, CJ_ATTR_FLOAT);
  if (a) {
    a->f.v = v;
    a->f.type = type;
  }
  return a;
}

const cj_attr *cj_attr_string(cj_module *m, const char *s, size_t len) {
  cj_attr *a = new_attr(m, CJ_ATTR_STRING);
  if (!a) return NULL;
  char *d = cj_arena_strndup(&m->arena, s, len);
  if (!d) return NULL;
  a->str.s = d;
  a->str.len = len;
  return a;
}

const cj_attr *cj_attr_type(cj_module *m, const cj_type *t) {
  cj_attr *a = new_attr(m, CJ_ATTR_TYPE);
  if (a) a->type = t;
  return a;
}

const cj_attr *cj_attr_symref(cj_module *m, const char *root, int32_t nnested,
                              const char *const *nested) {
  cj_attr *a = new_attr(m, CJ_ATTR_SYMREF);
  if (!a) return NULL;
  a->sym.root = cj_intern(m, root, strlen(root));
  if (!a->sym.root) return NULL;
  if (nnested > 0) {
    const char **n = CJ_ARENA_ARRAY(&m->arena, const char *, nnested);
    if (!n) return NULL;
    for (int i = 0; i < nnested; i++) {
      n[i] = cj_intern(m, nested[i], strlen(nested[i]));
      if (!n[i]) return NULL;
    }
    a->sym.nested = n;
    a->sym.nnested = nnested;
  }
  return a;
}

const cj_attr *cj_attr_array(cj_module *m, int32_t n, const cj_attr *const *items) {
  cj_attr *a = new_attr(m, CJ_ATTR_ARRAY);
  if (!a) return NULL;
  a->arr.n = n;
  if (n > 0) {
    a->arr.items = cj_arena_memdup(&m->arena, items, sizeof(cj_attr *) * (size_t)n);
    if (!a->arr.items) return NULL;
  }
  return a;
}

static int cmp_named(const void *x, const void *y) {
  const cj_named_attr *a = x, *b = y;
  return strcmp(a->name, b->name);
}

const cj_attr *cj_attr_dict_get(const cj_attr *dict, const char *name) {
  if (!dict || dict->kind != CJ_ATTR_DICT) return NULL;
  for (int32_t k = 0; k < dict->dict.n; k++)
    if (!strcmp(dict->dict.items[k].name, name)) return dict->dict.items[k].value;
  return NULL;
}

const cj_attr *cj_attr_dict(cj_module *m, int32_t n, const cj_named_attr *items) {
  cj_attr *a = new_attr(m, CJ_ATTR_DICT);
  if (!a) return NULL;
  if (n > 0) {
    cj_named_attr *d = CJ_ARENA_ARRAY(&m->arena, cj_named_attr, n);
    if (!d) return NULL;
    for (int i = 0; i < n; i++) {
      d[i].name = cj_intern(m, items[i].name, strlen(items[i].name));
      if (!d[i].name) return NULL;
      d[i].value = items[i].value;
    }
    /* stable sort by name, then drop earlier duplicates (the last value wins) */
    for (int i = 1; i < n; i++) { /* insertion sort: dictionaries are small */
      cj_named_attr x = d[i];
      int j = i - 1;
      while (j >= 0 && cmp_named(&d[j], &x) > 0) {
        d[j + 1] = d[j];
        j--;
      }
      d[j + 1] = x;
    }
    int w = 0;
    for (int i = 0; i < n; i++) {
      if (w > 0 && d[w - 1].name == d[i].name)
        d[w - 1] = d[i];
      else
        d[w++] = d[i];
    }
    a->dict.items = d;
    a->dict.n = w;
  }
  return a;
}

const cj_attr *cj_attr_dense_array(cj_module *m, cj_dtype dt, int64_t n, const void *data) {
  cj_attr *a = new_attr(m, CJ_ATTR_DENSE_ARRAY);
  if (!a || n < 0) return NULL;
  size_t bytes = (size_t)n * (size_t)cj_dtype_bytes(dt);
  a->darr.dtype = dt;
  a->darr.n = n;
  a->darr.data = cj_arena_memdup(&m->arena, data, bytes);
  if (!a->darr.data) return NULL;
  return a;
}

const cj_attr *cj_attr_i64_array(cj_module *m, int64_t n, const int64_t *v) {
  return cj_attr_dense_array(m, CJ_S64, n, v);
}

const cj_attr *cj_attr_dense(cj_module *m, const cj_type *type, const void *data, size_t nbytes,
                             bool splat) {
  cj_attr *a = new_attr(m, CJ_ATTR_DENSE);
  if (!a) return NULL;
  a->dense.type = type;
  a->dense.nbytes = nbytes;
  a->dense.splat = splat;
  void *d = cj_arena_alloc_aligned(&m->arena, nbytes ? nbytes : 1, 64);
  if (!d) return NULL;
  if (nbytes) memcpy(d, data, nbytes);
  a->dense.data = d;
  return a;
}

const cj_attr *cj_attr_enum(cj_module *m, cj_enum_kind ek, int32_t v) {
  cj_attr *a = new_attr(m, CJ_ATTR_ENUM);
  if (!a) return NULL;
  a->en.ek = ek;
  a->en.v = v;
  return a;
}

const cj_attr *cj_attr_struct(cj_module *m, cj_struct_kind sk, const cj_attr *const *fields) {
  cj_attr *a = new_attr(m, CJ_ATTR_STRUCT);
  if (!a) return NULL;
  int n = cj_struct_num_fields(sk);
  a->st.sk = sk;
  const cj_attr **f = CJ_ARENA_ARRAY(&m->arena, const cj_attr *, n > 0 ? n : 1);
  if (!f) return NULL;
  for (int i = 0; i < n; i++) f[i] = fields ? fields[i] : NULL;
  a->st.fields = f;
  return a;
}

const cj_attr *cj_attr_loc(cj_module *m, cj_loc_kind lk, const char *name, int32_t line,
                           int32_t col, int32_t n, const cj_attr *const *children,
                           const cj_attr *metadata) {
  cj_attr *a = new_attr(m, CJ_ATTR_LOC);
  if (!a) return NULL;
  a->loc.lk = lk;
  if (name) {
    a->loc.name = cj_intern(m, name, strlen(name));
    if (!a->loc.name) return NULL;
  }
  a->loc.line = line;
  a->loc.col = col;
  a->loc.n = n;
  if (n > 0) {
    a->loc.children = cj_arena_memdup(&m->arena, children, sizeof(cj_attr *) * (size_t)n);
    if (!a->loc.children) return NULL;
  }
  a->loc.metadata = metadata;
  return a;
}

const cj_attr *cj_attr_opaque(cj_module *m, const char *text, size_t len) {
  cj_attr *a = new_attr(m, CJ_ATTR_OPAQUE);
  if (!a) return NULL;
  char *d = cj_arena_strndup(&m->arena, text, len);
  if (!d) return NULL;
  a->opaque.text = d;
  a->opaque.len = len;
  return a;
}

static bool type_equal(const cj_type *a, const cj_type *b) {
  /* Types are interned per module; attributes compared across modules (tests) fall back to a
   * structural comparison. */
  if (a == b) return true;
  if (!a || !b) return false;
  if (a->kind != b->kind || a->dtype != b->dtype || a->rank != b->rank ||
      a->nresults != b->nresults)
    return false;
  if (a->dims && b->dims && memcmp(a->dims, b->dims, sizeof(int64_t) * (size_t)a->rank)) return false;
  if ((a->bounds == NULL) != (b->bounds == NULL)) return false;
  if (a->bounds && memcmp(a->bounds, b->bounds, sizeof(int64_t) * (size_t)a->rank)) return false;
  if (!type_equal(a->elem, b->elem)) return false;
  if (!quant_eq(a->quant, b->quant)) return false;
  if (a->members) {
    int n = a->kind == CJ_TYPE_FUNCTION ? a->rank + a->nresults : a->rank;
    for (int i = 0; i < n; i++)
      if (!type_equal(a->members[i], b->members[i])) return false;
  }
  if ((a->text == NULL) != (b->text == NULL)) return false;
  if (a->text && strcmp(a->text, b->text)) return false;
  return cj_attr_equal(a->encoding, b->encoding);
}

bool cj_attr_equal(const cj_attr *a, const cj_attr *b) {
  if (a == b) return true;
  if (!a || !b || a->kind != b->kind) return false;
  switch (a->kind) {
    case CJ_ATTR_UNIT: return true;
    case CJ_ATTR_BOOL: return a->b == b->b;
    case CJ_ATTR_INT: return a->i.v == b->i.v && type_equal(a->i.type, b->i.type);
    case CJ_ATTR_FLOAT:
      return memcmp(&a->f.v, &b->f.v, sizeof(double)) == 0 && type_equal(a->f.type, b->f.type);
    case CJ_ATTR_STRING:
      return a->str.len == b->str.len && memcmp(a->str.s, b->str.s, a->str.len) == 0;
    case CJ_ATTR_TYPE: return type_equal(a->type, b->type);
    case CJ_ATTR_SYMREF:
      if (strcmp(a->sym.root, b->sym.root) || a->sym.nnested != b->sym.nnested) return false;
      for (int i = 0; i < a->sym.nnested; i++)
        if (strcmp(a->sym.nested[i], b->sym.nested[i])) return false;
      return true;
    case CJ_ATTR_ARRAY:
      if (a->arr.n != b->arr.n) return false;
      for (int i = 0; i < a->arr.n; i++)
        if (!cj_attr_equal(a->arr.items[i], b->arr.items[i])) return false;
      return true;
    case CJ_ATTR_DICT:
      if (a->dict.n != b->dict.n) return false;
      for (int i = 0; i < a->dict.n; i++)
        if (strcmp(a->dict.items[i].name, b->dict.items[i].name) ||
            !cj_attr_equal(a->dict.items[i].value, b->dict.items[i].value))
          return false;
      return true;
    case CJ_ATTR_DENSE_ARRAY:
      return a->darr.dtype == b->darr.dtype && a->darr.n == b->darr.n &&
             memcmp(a->darr.data, b->darr.data,
                    (size_t)a->darr.n * (size_t)cj_dtype_bytes(a->darr.dtype)) == 0;
    case CJ_ATTR_DENSE:
      return a->dense.splat == b->dense.splat && a->dense.nbytes == b->dense.nbytes &&
             type_equal(a->dense.type, b->dense.type) &&
             memcmp(a->dense.data, b->dense.data, a->dense.nbytes) == 0;
    case CJ_ATTR_ENUM: return a->en.ek == b->en.ek && a->en.v == b->en.v;
    case CJ_ATTR_STRUCT: {
      if (a->st.sk != b->st.sk) return false;
      int n = cj_struct_num_fields(a->st.sk);
      for (int i = 0; i < n; i++)
        if (!cj_attr_equal(a->st.fields[i], b->st.fields[i])) return false;
      return true;
    }
    case CJ_ATTR_LOC:
      if (a->loc.lk != b->loc.lk || a->loc.line != b->loc.line || a->loc.col != b->loc.col ||
          a->loc.n != b->loc.n)
        return false;
      if ((a->loc.name == NULL) != (b->loc.name == NULL)) return false;
      if (a->loc.name && strcmp(a->loc.name, b->loc.name)) return false;
      for (int i = 0; i < a->loc.n; i++)
        if (!cj_attr_equal(a->loc.children[i], b->loc.children[i])) return false;
      return cj_attr_equal(a->loc.metadata, b->loc.metadata);
    case CJ_ATTR_OPAQUE:
      return a->opaque.len == b->opaque.len &&
             memcmp(a->opaque.text, b->opaque.text, a->opaque.len) == 0;
  }
  return false;
}

bool cj_attr_get_i64(const cj_attr *a, int64_t *out) {
  if (!a) return false;
  if (a->kind == CJ_ATTR_INT) {
    *out = a->i.v;
    return true;
  }
  if (a->kind == CJ_ATTR_DENSE && cj_dense_num_elements(a) == 1 && a->dense.type &&
      cj_dtype_is_int(a->dense.type->dtype)) {
    *out = cj_dense_get_i64(a, 0);
    return true;
  }
  return false;
}

bool cj_attr_get_bool(const cj_attr *a, bool *out) {
  if (!a) return false;
  if (a->kind == CJ_ATTR_BOOL) {
    *out = a->b;
    return true;
  }
  if (a->kind == CJ_ATTR_UNIT) {
    *out = true;
    return true;
  }
  return false;
}

bool cj_attr_get_f64(const cj_attr *a, double *out) {
  if (!a) return false;
  if (a->kind == CJ_ATTR_FLOAT) {
    *out = a->f.v;
    return true;
  }
  if (a->kind == CJ_ATTR_INT) {
    *out = (double)a->i.v;
    return true;
  }
  return false;
}

bool cj_attr_get_str(const cj_attr *a, const char **out, size_t *len) {
  if (!a || a->kind != CJ_ATTR_STRING) return false;
  *out = a->str.s;
  if (len) *len = a->str.len;
  return true;
}

bool cj_attr_get_i64s(const cj_attr *a, int64_t *out, int64_t cap, int64_t *n) {
  if (!a) return false;
  switch (a->kind) {
    case CJ_ATTR_DENSE_ARRAY:
      if (!cj_dtype_is_int(a->darr.dtype) && a->darr.dtype != CJ_PRED) return false;
      *n = a->darr.n;
      for (int64_t i = 0; i < a->darr.n && i < cap; i++)
        out[i] = cj_elem_get_i64(a->darr.dtype, a->darr.data, (size_t)i);
      return true;
    case CJ_ATTR_DENSE: {
      if (!a->dense.type || (!cj_dtype_is_int(a->dense.type->dtype) &&
                             a->dense.type->dtype != CJ_PRED))
        return false;
      int64_t cnt = cj_dense_num_elements(a);
      if (cnt < 0) return false;
      *n = cnt;
      for (int64_t i = 0; i < cnt && i < cap; i++) out[i] = cj_dense_get_i64(a, i);
      return true;
    }
    case CJ_ATTR_ARRAY:
      for (int i = 0; i < a->arr.n; i++) {
        int64_t v;
        if (!cj_attr_get_i64(a->arr.items[i], &v)) return false;
        if (i < cap) out[i] = v;
      }
      *n = a->arr.n;
      return true;
    default: return false;
  }
}

bool cj_attr_get_enum(const cj_attr *a, cj_enum_kind ek, int32_t *out) {
  if (!a || a->kind != CJ_ATTR_ENUM || a->en.ek != ek) return false;
  *out = a->en.v;
  return true;
}

const cj_attr *cj_attr_field(const cj_attr *a, cj_struct_kind sk, int field) {
  if (!a || a->kind != CJ_ATTR_STRUCT || a->st.sk != sk) return NULL;
  if (field < 0 || field >= cj_struct_num_fields(sk)) return NULL;
  return a->st.fields[field];
}

int64_t cj_dense_num_elements(const cj_attr *a) {
  if (!a || a->kind != CJ_ATTR_DENSE || !a->dense.type) return -1;
  return a->dense.type->num_elements;
}

double cj_dense_get_f64(const cj_attr *a, int64_t i) {
  if (a->dense.splat) i = 0;
  return cj_elem_get_f64(a->dense.type->dtype, a->dense.data, (size_t)i);
}

int64_t cj_dense_get_i64(const cj_attr *a, int64_t i) {
  if (a->dense.splat) i = 0;
  return cj_elem_get_i64(a->dense.type->dtype, a->dense.data, (size_t)i);
}

/* ======================================================================== ops and blocks */

cj_op *cj_op_create(cj_module *m, cj_op_kind kind, const char *name, uint32_t nopnds,
                    uint32_t nresults, uint32_t nregions) {
  cj_op *op = CJ_ARENA_NEW(&m->arena, cj_op);
  if (!op) return NULL;
  op->kind = kind;
  if (!name || !*name) name = cj_op_info_get(kind)->name;
  op->name = cj_intern(m, name, strlen(name));
  if (!op->name) return NULL;
  op->nopnds = nopnds;
  op->nresults = nresults;
  op->nregions = nregions;
  if (nopnds) {
    op->operands = CJ_ARENA_ARRAY(&m->arena, cj_value *, nopnds);
    if (!op->operands) return NULL;
  }
  if (nresults) {
    op->results = CJ_ARENA_ARRAY(&m->arena, cj_value, nresults);
    if (!op->results) return NULL;
    for (uint32_t i = 0; i < nresults; i++) {
      op->results[i].def = op;
      op->results[i].index = i;
    }
  }
  if (nregions) {
    op->regions = CJ_ARENA_ARRAY(&m->arena, cj_region, nregions);
    if (!op->regions) return NULL;
    for (uint32_t i = 0; i < nregions; i++) op->regions[i].op = op;
  }
  return op;
}

void cj_op_set_operand(cj_op *op, uint32_t i, cj_value *v) {
  if (i < op->nopnds) op->operands[i] = v;
}

cj_status cj_op_set_attr(cj_module *m, cj_op *op, const char *name, const cj_attr *value) {
  return set_named(m, &op->attrs, &op->nattrs, name, value);
}

const cj_attr *cj_op_attr(const cj_op *op, const char *name) {
  for (uint32_t i = 0; i < op->nattrs; i++)
    if (strcmp(op->attrs[i].name, name) == 0) return op->attrs[i].value;
  return NULL;
}

/* Links node at the end of the first/last/next list `list` (a region's blocks, a block's ops). */
#define LIST_APPEND(list, node)     \
  do {                              \
    (node)->next = NULL;            \
    if ((list)->last)               \
      (list)->last->next = (node);  \
    else                            \
      (list)->first = (node);       \
    (list)->last = (node);          \
  } while (0)

void cj_region_append_block(cj_region *r, cj_block *b) {
  b->region = r;
  LIST_APPEND(r, b);
  r->nblocks++;
}

cj_block *cj_region_add_block(cj_module *m, cj_region *r, uint32_t nargs,
                              const cj_type *const *arg_types) {
  cj_block *b = CJ_ARENA_NEW(&m->arena, cj_block);
  if (!b) return NULL;
  b->region = r;
  b->nargs = nargs;
  if (nargs) {
    b->args = CJ_ARENA_ARRAY(&m->arena, cj_value, nargs);
    if (!b->args) return NULL;
    for (uint32_t i = 0; i < nargs; i++) {
      b->args[i].type = arg_types ? arg_types[i] : NULL;
      b->args[i].block = b;
      b->args[i].index = i;
    }
  }
  cj_region_append_block(r, b);
  return b;
}

void cj_block_append(cj_block *b, cj_op *op) { cj_block_insert_before(b, NULL, op); }

void cj_block_number_values(cj_block *b, uint32_t *n) {
  for (uint32_t i = 0; i < b->nargs; i++) b->args[i].id = (*n)++;
  for (cj_op *op = b->first; op; op = op->next) {
    for (uint32_t i = 0; i < op->nresults; i++) op->results[i].id = (*n)++;
    for (uint32_t r = 0; r < op->nregions; r++)
      for (cj_block *nb = op->regions[r].first; nb; nb = nb->next) cj_block_number_values(nb, n);
  }
}

void cj_block_insert_before(cj_block *b, cj_op *before, cj_op *op) {
  op->block = b;
  if (!before) {
    op->prev = b->last;
    LIST_APPEND(b, op);
  } else {
    op->next = before;
    op->prev = before->prev;
    if (before->prev)
      before->prev->next = op;
    else
      b->first = op;
    before->prev = op;
  }
  b->nops++;
}

void cj_block_remove(cj_block *b, cj_op *op) {
  if (op->prev)
    op->prev->next = op->next;
  else
    b->first = op->next;
  if (op->next)
    op->next->prev = op->prev;
  else
    b->last = op->prev;
  op->prev = op->next = NULL;
  op->block = NULL;
  b->nops--;
}

static void replace_in_block(cj_block *b, cj_value *from, cj_value *to);

void cj_replace_uses_in_op(cj_op *op, cj_value *from, cj_value *to) {
  for (uint32_t i = 0; i < op->nopnds; i++)
    if (op->operands[i] == from) op->operands[i] = to;
  for (uint32_t r = 0; r < op->nregions; r++)
    for (cj_block *b = op->regions[r].first; b; b = b->next) replace_in_block(b, from, to);
}

static void replace_in_block(cj_block *b, cj_value *from, cj_value *to) {
  for (cj_op *op = b->first; op; op = op->next) cj_replace_uses_in_op(op, from, to);
}

/* ---- cloning ---- */

typedef struct vmap {
  cj_value **from, **to;
  uint32_t n, cap;
} vmap;

/* Grows the two arrays of a value map (*cap entries each) to hold `need` entries; false on
 * out-of-memory, the arrays staying valid. */
static bool value_map_reserve(cj_value ***from, cj_value ***to, uint32_t *cap, uint32_t need) {
  if (need <= *cap) return true;
  if (need > UINT32_MAX / 2) return false;
  uint32_t nc = *cap ? *cap * 2 : 64;
  while (nc < need) nc *= 2;
  cj_value **nf = realloc(*from, sizeof(cj_value *) * nc);
  if (nf) *from = nf;
  cj_value **nt = realloc(*to, sizeof(cj_value *) * nc);
  if (nt) *to = nt;
  if (!nf || !nt) return false;
  *cap = nc;
  return true;
}

static bool vmap_add(vmap *vm, cj_value *from, cj_value *to) {
  if (!value_map_reserve(&vm->from, &vm->to, &vm->cap, vm->n + 1)) return false;
  vm->from[vm->n] = from;
  vm->to[vm->n] = to;
  vm->n++;
  return true;
}

static cj_value *vmap_get(const vmap *vm, cj_value *v) {
  for (uint32_t i = vm->n; i-- > 0;)
    if (vm->from[i] == v) return vm->to[i];
  return v;
}

static cj_op *clone_rec(cj_module *m, const cj_op *op, vmap *vm) {
  cj_op *c = cj_op_create(m, op->kind, op->name, op->nopnds, op->nresults, op->nregions);
  if (!c) return NULL;
  for (uint32_t i = 0; i < op->nopnds; i++) c->operands[i] = vmap_get(vm, op->operands[i]);
  for (uint32_t i = 0; i < op->nresults; i++) {
    c->results[i].type = op->results[i].type;
    c->results[i].name = op->results[i].name;
    if (!vmap_add(vm, &op->results[i], &c->results[i])) return NULL;
  }
  if (op->nattrs) {
    c->attrs = cj_arena_memdup(&m->arena, op->attrs, sizeof(cj_named_attr) * op->nattrs);
    if (!c->attrs) return NULL;
    c->nattrs = op->nattrs;
  }
  c->loc = op->loc;
  c->pos = op->pos;
  for (uint32_t r = 0; r < op->nregions; r++) {
    for (cj_block *b = op->regions[r].first; b; b = b->next) {
      const cj_type *types[64];
      const cj_type **tp = types;
      if (b->nargs > 64) {
        tp = malloc(sizeof(cj_type *) * b->nargs);
        if (!tp) return NULL;
      }
      for (uint32_t i = 0; i < b->nargs; i++) tp[i] = b->args[i].type;
      cj_block *nb = cj_region_add_block(m, &c->regions[r], b->nargs, tp);
      if (tp != types) free(tp);
      if (!nb) return NULL;
      nb->label = b->label;
      for (uint32_t i = 0; i < b->nargs; i++) {
        nb->args[i].name = b->args[i].name;
        nb->args[i].loc = b->args[i].loc;
        if (!vmap_add(vm, &b->args[i], &nb->args[i])) return NULL;
      }
    }
    cj_block *nb = c->regions[r].first;
    for (cj_block *b = op->regions[r].first; b; b = b->next, nb = nb->next) {
      for (cj_op *o = b->first; o; o = o->next) {
        cj_op *oc = clone_rec(m, o, vm);
        if (!oc) return NULL;
        cj_block_append(nb, oc);
      }
    }
  }
  return c;
}

bool cj_value_map_add_results(cj_value ***from, cj_value ***to, uint32_t *n, uint32_t *cap,
                              cj_op *orig, cj_op *clone) {
  if (!value_map_reserve(from, to, cap, *n + orig->nresults)) return false;
  for (uint32_t i = 0; i < orig->nresults; i++) {
    (*from)[*n] = &orig->results[i];
    (*to)[(*n)++] = &clone->results[i];
  }
  return true;
}

cj_op *cj_op_clone(cj_module *m, const cj_op *op, uint32_t nmap, cj_value *const *map_from,
                   cj_value *const *map_to) {
  vmap vm = {0};
  cj_op *c = NULL;
  for (uint32_t i = 0; i < nmap; i++)
    if (!vmap_add(&vm, map_from[i], map_to[i])) goto done;
  c = clone_rec(m, op, &vm);
  /* Operands that referred forward to values defined later in the copied regions were mapped
   * before those values existed; fix them up in a second pass. */
  if (c) {
    for (uint32_t r = 0; r < c->nregions; r++)
      for (cj_block *b = c->regions[r].first; b; b = b->next)
        for (uint32_t k = 0; k < vm.n; k++) replace_in_block(b, vm.from[k], vm.to[k]);
  }
done:
  free(vm.from);
  free(vm.to);
  return c;
}

cj_op *cj_op_clone_mapped(cj_module *m, cj_op *op, cj_value ***from, cj_value ***to, uint32_t *n,
                          uint32_t *cap) {
  cj_op *c = cj_op_clone(m, op, *n, *from, *to);
  return c && cj_value_map_add_results(from, to, n, cap, op, c) ? c : NULL;
}

/* ---- normalized attribute reads ---- */

bool cj_op_get_i64(const cj_op *op, const char *name, int64_t *out) {
  return cj_attr_get_i64(cj_op_attr(op, name), out);
}
bool cj_op_get_bool(const cj_op *op, const char *name, bool *out) {
  return cj_attr_get_bool(cj_op_attr(op, name), out);
}
bool cj_op_get_i64s(const cj_op *op, const char *name, int64_t *out, int64_t cap, int64_t *n) {
  return cj_attr_get_i64s(cj_op_attr(op, name), out, cap, n);
}
bool cj_op_get_enum(const cj_op *op, const char *name, cj_enum_kind ek, int32_t *out) {
  return cj_attr_get_enum(cj_op_attr(op, name), ek, out);
}

/* ---- func.func ---- */

const char *cj_func_name(const cj_op *func) {
  const cj_attr *a = cj_op_attr(func, "sym_name");
  return a && a->kind == CJ_ATTR_STRING ? a->str.s : NULL;
}

const cj_type *cj_func_type(const cj_op *func) {
  const cj_attr *a = cj_op_attr(func, "function_type");
  return a && a->kind == CJ_ATTR_TYPE && a->type && a->type->kind == CJ_TYPE_FUNCTION ? a->type
                                                                                       : NULL;
}

static const cj_attr *array_item_dict(const cj_attr *arr, uint32_t i) {
  if (!arr || arr->kind != CJ_ATTR_ARRAY || i >= (uint32_t)arr->arr.n) return NULL;
  const cj_attr *d = arr->arr.items[i];
  return d && d->kind == CJ_ATTR_DICT ? d : NULL;
}

const cj_attr *cj_func_arg_attrs(const cj_op *func, uint32_t i) {
  return array_item_dict(cj_op_attr(func, "arg_attrs"), i);
}
const cj_attr *cj_func_res_attrs(const cj_op *func, uint32_t i) {
  return array_item_dict(cj_op_attr(func, "res_attrs"), i);
}
cj_block *cj_func_body(const cj_op *func) {
  return func->nregions ? func->regions[0].first : NULL;
}

static bool arg_has(const cj_op *func, int32_t i, const char *name, int64_t *out_i) {
  const cj_attr *d = cj_func_arg_attrs(func, (uint32_t)i);
  for (int32_t k = 0; d && k < d->dict.n; k++) {
    if (strcmp(d->dict.items[k].name, name) != 0) continue;
    bool bv = false;
    if (out_i) return cj_attr_get_i64(d->dict.items[k].value, out_i);
    return cj_attr_get_bool(d->dict.items[k].value, &bv) && bv;
  }
  return false;
}

/* The memory kind an argument or result attribute dictionary names (mhlo.memory_kind), or
 * "device" when it names none. */
static const char *memory_kind_of(const cj_attr *d) {
  const cj_attr *a = d ? cj_attr_dict_get(d, "mhlo.memory_kind") : NULL;
  return a && a->kind == CJ_ATTR_STRING ? a->str.s : "device";
}

/* Bytes of a static tensor, or -1. */
static int64_t static_bytes(const cj_type *t) {
  if (!cj_type_is_static(t) || !cj_dtype_is_valid(t->dtype)) return -1;
  return t->num_elements * (int64_t)cj_dtype_bytes(t->dtype);
}

cj_status cj_func_result_donors(const cj_op *func, int32_t nargs, int32_t nres, int32_t *out) {
  const cj_type *ft = cj_func_type(func);
  bool *taken = calloc((size_t)(nargs > 0 ? nargs : 1), sizeof(bool));
  if (!taken) return cj_oom();
  for (int32_t j = 0; j < nres; j++) out[j] = -1;
  /* 1: tf.aliasing_output = j on an argument */
  for (int32_t j = 0; j < nres; j++)
    for (int32_t i = 0; i < nargs && out[j] < 0; i++) {
      int64_t v = -1;
      if (!taken[i] && arg_has(func, i, "tf.aliasing_output", &v) && v == j) {
        out[j] = i;
        taken[i] = true;
      }
    }
  /* 2: jax.buffer_donor = true of result j's type; 3: of result j's byte size and memory kind
   * (XLA's OptimizeInputOutputBufferAlias matches by size: a donated f32[8,1] serves an f32[8]
   * or an i32[8]), each result in order taking the first such donor left */
  for (int stage = 2; stage <= 3; stage++)
    for (int32_t j = 0; j < nres && ft; j++) {
      const cj_type *rt = cj_type_fn_result(ft, j);
      int64_t rb = static_bytes(rt);
      for (int32_t i = 0; i < nargs && out[j] < 0 && i < ft->rank; i++) {
        if (taken[i] || !arg_has(func, i, "jax.buffer_donor", NULL)) continue;
        const cj_type *at = cj_type_fn_input(ft, i);
        bool fits = stage == 2 ? at == rt
                               : rb >= 0 && static_bytes(at) == rb &&
                                     strcmp(memory_kind_of(cj_func_arg_attrs(func, (uint32_t)i)),
                                            memory_kind_of(cj_func_res_attrs(func, (uint32_t)j))) == 0;
        if (fits) {
          out[j] = i;
          taken[i] = true;
        }
      }
    }
  free(taken);
  return NULL;
}

/* ---- walking ---- */

cj_status cj_walk_block(cj_block *b, cj_walk_fn fn, void *ctx) {
  for (cj_op *op = b ? b->first : NULL; op;) {
    cj_op *next = op->next; /* fn may detach op */
    CJ_RETURN_IF_ERROR(fn(op, ctx));
    for (uint32_t r = 0; r < op->nregions; r++)
      for (cj_block *nb = op->regions[r].first; nb; nb = nb->next)
        CJ_RETURN_IF_ERROR(cj_walk_block(nb, fn, ctx));
    op = next;
  }
  return NULL;
}

cj_status cj_walk_module(cj_module *m, cj_walk_fn fn, void *ctx) {
  for (cj_block *b = m->body.first; b; b = b->next) CJ_RETURN_IF_ERROR(cj_walk_block(b, fn, ctx));
  return NULL;
}

/* ---- messages ---- */

static const cj_attr *file_loc_at(const cj_attr *loc, int depth, int max_depth) {
  if (!loc || loc->kind != CJ_ATTR_LOC || depth > max_depth) return NULL;
  if (loc->loc.lk == CJ_LOC_FILE) return loc;
  /* for a call site, the callee's position is where the op is */
  for (int i = 0; i < loc->loc.n; i++) {
    const cj_attr *f = file_loc_at(loc->loc.children[i], depth + 1, max_depth);
    if (f) return f;
  }
  return NULL;
}

const cj_attr *cj_loc_first_file(const cj_attr *loc, int max_depth) {
  return file_loc_at(loc, 0, max_depth);
}

void cj_op_where(const cj_op *op, char *buf, size_t cap) {
  if (!cap) return;
  if (op && op->pos.line > 0) {
    snprintf(buf, cap, "%s:%d:%d", op->pos.file ? op->pos.file : "<input>", op->pos.line,
             op->pos.col);
    return;
  }
  const cj_attr *f = op ? cj_loc_first_file(op->loc, 32) : NULL;
  if (f) {
    snprintf(buf, cap, "%s:%d:%d", f->loc.name ? f->loc.name : "", f->loc.line, f->loc.col);
    return;
  }
  snprintf(buf, cap, "unknown location");
}

void cj_op_describev(const cj_op *op, char *buf, size_t cap, const char *fmt, va_list ap) {
  char where[512];
  cj_op_where(op, where, sizeof where);
  char msg[1024];
  vsnprintf(msg, sizeof msg, fmt, ap);
  snprintf(buf, cap, "%s at %s: %s", op && op->name ? op->name : "<op>", where, msg);
}

cj_status cj_op_error(const cj_op *op, cj_code code, const char *fmt, ...) {
  char text[2048];
  va_list ap;
  va_start(ap, fmt);
  cj_op_describev(op, text, sizeof text, fmt, ap);
  va_end(ap);
  return cj_status_make(code, "%s", text);
}
