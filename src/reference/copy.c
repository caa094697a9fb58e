/* cjrt reference backend: a deep copy of the entry function into a module of the program's own.
 *
 * The interpreter walks the IR, but `lower` only borrows the prepared module (the compile driver
 * frees it when lower returns, runtime/backend.h). So the program keeps a copy: the entry
 * function with its regions, types re-interned and attributes rebuilt in the new module through
 * the IR's constructors (which copy their inputs), strings interned there too. Values are mapped
 * through cj_value.id, numbered over the source first (the source is the driver's, about to be
 * freed: its scratch ids are free to use).
 */
#include <stdlib.h>
#include <string.h>

#include "reference/ref.h"

typedef struct copier {
  cj_module *m;     /* destination */
  cj_value **map;   /* source value id -> copy */
  uint32_t nvalues;
} copier;

static const char *str(copier *c, const char *s) { return s ? cj_intern(c->m, s, strlen(s)) : NULL; }

static const cj_attr *copy_attr(copier *c, const cj_attr *a);

static const cj_type *copy_type(copier *c, const cj_type *t) {
  if (!t) return NULL;
  cj_module *m = c->m;
  switch (t->kind) {
    case CJ_TYPE_ELEM: return cj_type_elem(m, t->dtype);
    case CJ_TYPE_QUANT: return cj_type_quant(m, t->quant);
    case CJ_TYPE_TENSOR: {
      const cj_type *e = copy_type(c, t->elem);
      const cj_attr *enc = t->encoding ? copy_attr(c, t->encoding) : NULL;
      if (!e || (t->encoding && !enc)) return NULL;
      return cj_type_tensor(m, e, t->rank, t->dims, t->bounds, enc);
    }
    case CJ_TYPE_UNRANKED: {
      const cj_type *e = copy_type(c, t->elem);
      return e ? cj_type_unranked(m, e) : NULL;
    }
    case CJ_TYPE_TOKEN: return cj_type_token(m);
    case CJ_TYPE_NONE: return cj_type_none(m);
    case CJ_TYPE_OPAQUE: return cj_type_opaque(m, t->text, strlen(t->text));
    case CJ_TYPE_TUPLE:
    case CJ_TYPE_FUNCTION: {
      int32_t n = t->kind == CJ_TYPE_TUPLE ? t->rank : t->rank + t->nresults;
      const cj_type **mem = calloc((size_t)(n ? n : 1), sizeof *mem);
      if (!mem) return NULL;
      bool ok = true;
      for (int32_t i = 0; i < n && ok; i++) ok = (mem[i] = copy_type(c, t->members[i])) != NULL;
      const cj_type *r = !ok ? NULL
                         : t->kind == CJ_TYPE_TUPLE
                             ? cj_type_tuple(m, n, mem)
                             : cj_type_function(m, t->rank, mem, t->nresults, mem + t->rank);
      free(mem);
      return r;
    }
  }
  return NULL;
}

/* n attributes (any of which may be NULL) copied into a malloc'ed array; NULL on failure. */
static const cj_attr **copy_attrs(copier *c, int32_t n, const cj_attr *const *src) {
  const cj_attr **out = calloc((size_t)(n > 0 ? n : 1), sizeof *out);
  if (!out) return NULL;
  for (int32_t i = 0; i < n; i++)
    if (src[i] && !(out[i] = copy_attr(c, src[i]))) {
      free(out);
      return NULL;
    }
  return out;
}

static const cj_attr *copy_dict(copier *c, const cj_attr *a) {
  cj_named_attr *items = calloc((size_t)(a->dict.n > 0 ? a->dict.n : 1), sizeof *items);
  if (!items) return NULL;
  bool ok = true;
  for (int32_t i = 0; i < a->dict.n && ok; i++) {
    items[i].name = a->dict.items[i].name;
    ok = (items[i].value = copy_attr(c, a->dict.items[i].value)) != NULL;
  }
  const cj_attr *r = ok ? cj_attr_dict(c->m, a->dict.n, items) : NULL;
  free(items);
  return r;
}

static const cj_attr *copy_attr(copier *c, const cj_attr *a) {
  if (!a) return NULL;
  cj_module *m = c->m;
  switch (a->kind) {
    case CJ_ATTR_UNIT: return cj_attr_unit(m);
    case CJ_ATTR_BOOL: return cj_attr_bool(m, a->b);
    case CJ_ATTR_INT: {
      const cj_type *t = a->i.type ? copy_type(c, a->i.type) : NULL;
      return a->i.type && !t ? NULL : cj_attr_int(m, a->i.v, t);
    }
    case CJ_ATTR_FLOAT: {
      const cj_type *t = a->f.type ? copy_type(c, a->f.type) : NULL;
      return a->f.type && !t ? NULL : cj_attr_float(m, a->f.v, t);
    }
    case CJ_ATTR_STRING: return cj_attr_string(m, a->str.s, a->str.len);
    case CJ_ATTR_TYPE: {
      const cj_type *t = copy_type(c, a->type);
      return t ? cj_attr_type(m, t) : NULL;
    }
    case CJ_ATTR_SYMREF: return cj_attr_symref(m, a->sym.root, a->sym.nnested, a->sym.nested);
    case CJ_ATTR_ARRAY: {
      const cj_attr **items = copy_attrs(c, a->arr.n, a->arr.items);
      const cj_attr *r = items ? cj_attr_array(m, a->arr.n, items) : NULL;
      free(items);
      return r;
    }
    case CJ_ATTR_DICT: return copy_dict(c, a);
    case CJ_ATTR_DENSE_ARRAY: return cj_attr_dense_array(m, a->darr.dtype, a->darr.n, a->darr.data);
    case CJ_ATTR_DENSE: {
      const cj_type *t = copy_type(c, a->dense.type);
      return t ? cj_attr_dense(m, t, a->dense.data, a->dense.nbytes, a->dense.splat) : NULL;
    }
    case CJ_ATTR_ENUM: return cj_attr_enum(m, a->en.ek, a->en.v);
    case CJ_ATTR_STRUCT: {
      const cj_attr **f = copy_attrs(c, cj_struct_num_fields(a->st.sk), a->st.fields);
      const cj_attr *r = f ? cj_attr_struct(m, a->st.sk, f) : NULL;
      free(f);
      return r;
    }
    case CJ_ATTR_LOC: {
      const cj_attr **ch = copy_attrs(c, a->loc.n, a->loc.children);
      const cj_attr *md = a->loc.metadata ? copy_attr(c, a->loc.metadata) : NULL;
      const cj_attr *r = ch && (!a->loc.metadata || md)
                             ? cj_attr_loc(m, a->loc.lk, a->loc.name, a->loc.line, a->loc.col,
                                           a->loc.n, ch, md)
                             : NULL;
      free(ch);
      return r;
    }
    case CJ_ATTR_OPAQUE: return cj_attr_opaque(m, a->opaque.text, a->opaque.len);
  }
  return NULL;
}

static CJ_MUST_USE cj_status copy_op(copier *c, const cj_op *op, cj_op **out);

static CJ_MUST_USE cj_status copy_region(copier *c, const cj_region *src, cj_region *dst) {
  for (cj_block *b = src->first; b; b = b->next) {
    const cj_type **types = calloc(b->nargs ? b->nargs : 1, sizeof *types);
    if (!types) return cj_oom();
    bool ok = true;
    for (uint32_t i = 0; i < b->nargs && ok; i++) ok = (types[i] = copy_type(c, b->args[i].type)) != NULL;
    cj_block *nb = ok ? cj_region_add_block(c->m, dst, b->nargs, types) : NULL;
    free(types);
    if (!nb) return cj_oom();
    nb->label = str(c, b->label);
    for (uint32_t i = 0; i < b->nargs; i++) {
      nb->args[i].name = str(c, b->args[i].name);
      nb->args[i].loc = b->args[i].loc ? copy_attr(c, b->args[i].loc) : NULL;
      c->map[b->args[i].id] = &nb->args[i];
    }
    for (cj_op *o = b->first; o; o = o->next) {
      cj_op *no = NULL;
      CJ_RETURN_IF_ERROR(copy_op(c, o, &no));
      cj_block_append(nb, no);
    }
  }
  return NULL;
}

static CJ_MUST_USE cj_status copy_op(copier *c, const cj_op *op, cj_op **out) {
  if (op->nsuccessors)
    return cj_op_error(op, CJ_UNIMPLEMENTED, "an op with successors is not supported by the reference backend");
  cj_op *n = cj_op_create(c->m, op->kind, str(c, op->name), op->nopnds, op->nresults, op->nregions);
  if (!n) return cj_oom();
  for (uint32_t i = 0; i < op->nopnds; i++) {
    uint32_t id = op->operands[i]->id;
    if (id >= c->nvalues || !c->map[id])
      return cj_op_error(op, CJ_INTERNAL, "operand %u is defined outside the entry function", i);
    cj_op_set_operand(n, i, c->map[id]);
  }
  for (uint32_t i = 0; i < op->nresults; i++) {
    n->results[i].type = copy_type(c, op->results[i].type);
    n->results[i].name = str(c, op->results[i].name);
    n->results[i].loc = op->results[i].loc ? copy_attr(c, op->results[i].loc) : NULL;
    if (!n->results[i].type) return cj_oom();
    c->map[op->results[i].id] = &n->results[i];
  }
  for (uint32_t i = 0; i < op->nattrs; i++) {
    const cj_attr *v = copy_attr(c, op->attrs[i].value);
    if (!v) return cj_oom();
    CJ_RETURN_IF_ERROR(cj_op_set_attr(c->m, n, op->attrs[i].name, v));
  }
  n->loc = op->loc ? copy_attr(c, op->loc) : NULL;
  n->pos = op->pos;
  n->pos.file = str(c, op->pos.file);
  for (uint32_t r = 0; r < op->nregions; r++) CJ_RETURN_IF_ERROR(copy_region(c, &op->regions[r], &n->regions[r]));
  *out = n;
  return NULL;
}

cj_status cj_rf_copy_main(const cj_module *src, cj_op *main, cj_module **out_m, cj_op **out_main) {
  *out_m = NULL;
  *out_main = NULL;
  cj_block *body = cj_func_body(main);
  if (!body) return cj_invalid("reference backend: the entry function has no body");
  copier c = {0};
  cj_block_number_values(body, &c.nvalues);
  c.m = cj_module_create(src->filename);
  c.map = calloc(c.nvalues ? c.nvalues : 1, sizeof *c.map);
  cj_status st = (!c.m || !c.map) ? cj_oom() : NULL;
  if (!st && src->name) {
    c.m->name = str(&c, src->name);
    if (!c.m->name) st = cj_oom();
  }
  cj_op *f = NULL;
  if (!st) st = copy_op(&c, main, &f);
  if (!st) {
    cj_block *mb = cj_module_block(c.m);
    if (!mb) st = cj_oom();
    else cj_block_append(mb, f);
  }
  free(c.map);
  if (st) {
    cj_module_free(c.m);
    return st;
  }
  *out_m = c.m;
  *out_main = f;
  return NULL;
}
