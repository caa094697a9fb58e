/* cjrt: spec verifiers of functions, calls and returns, tuples, tokens, composite, custom_call,
 * the check ops and Shardy's identities. */
#include <stdio.h>
#include <string.h>

#include "ir/shape_check.h"
#include "ir/verify_fns.h"

cj_status cj_verify_none(const cj_op *op) {
  (void)op;
  return NULL;
}

/* ======================================================================== func */

static CJ_MUST_USE cj_status check_attr_array(const cj_op *op, const char *name, int32_t n) {
  const cj_attr *a = cjv_attr(op, name);
  if (!a) return NULL;
  if (a->arr.n != n)
    CJV_FAIL(op, "'%s' must hold one dictionary per %s (%d), got %d", name,
             strcmp(name, "arg_attrs") == 0 ? "argument" : "result", n, a->arr.n);
  for (int32_t i = 0; i < a->arr.n; i++)
    if (!a->arr.items[i] || a->arr.items[i]->kind != CJ_ATTR_DICT)
      CJV_FAIL(op, "'%s' entry #%d must be a dictionary", name, i);
  return NULL;
}

cj_status cj_verify_func(const cj_op *op) {
  cjv_tbuf t1, t2;
  const cj_attr *fa = cjv_attr(op, "function_type");
  const cj_type *ft = cjv_func_type(op);
  if (!ft) CJV_FAIL(op, "function_type must be a function type, got %s", CJV_T(fa ? fa->type : NULL, t1));
  const char *name = cjv_func_name(op);
  if (!name || !*name) CJV_FAIL(op, "sym_name must not be empty");
  const cj_attr *vis = cjv_attr(op, "sym_visibility");
  bool is_private = false;
  if (vis) {
    if (strcmp(vis->str.s, "private") == 0)
      is_private = true;
    else if (strcmp(vis->str.s, "public") != 0 && strcmp(vis->str.s, "nested") != 0)
      CJV_FAIL(op, "sym_visibility must be \"public\", \"private\" or \"nested\", got \"%s\"",
               vis->str.s);
  }
  CJV_TRY(check_attr_array(op, "arg_attrs", ft->rank));
  CJV_TRY(check_attr_array(op, "res_attrs", ft->nresults));
  const cj_block *body = cj_func_body(op);
  if (!body) {
    if (!is_private)
      CJV_FAIL(op, "function declaration @%s (no body) must be private", name);
    return NULL;
  }
  if ((int32_t)body->nargs != ft->rank)
    CJV_FAIL(op, "@%s has %d arguments in its type but its body takes %u", name, ft->rank,
             body->nargs);
  for (uint32_t i = 0; i < body->nargs; i++)
    if (body->args[i].type != cj_type_fn_input(ft, (int)i))
      CJV_FAIL(op, "@%s: body argument #%u has type %s but the function type says %s", name, i,
               CJV_T(body->args[i].type, t1), CJV_T(cj_type_fn_input(ft, (int)i), t2));
  return NULL;
}

cj_status cj_verify_return(const cj_op *op) {
  if (op->block && op->block->region && !op->block->region->op)
    CJV_FAIL(op, "cannot appear at module level; it ends the region of an op");
  const cj_op *parent = op->block && op->block->region ? op->block->region->op : NULL;
  if (!parent) return NULL; /* detached */
  if (parent->kind != CJ_OP_FUNC) return NULL; /* the parent op's verifier checks the types */
  const cj_type *ft = cjv_func_type(parent);
  const char *fname = cjv_func_name(parent);
  if (!ft) return NULL;
  cjv_tbuf t1, t2;
  if ((int32_t)op->nopnds != ft->nresults)
    CJV_FAIL(op, "returns %u value%s but function @%s has %d result%s", op->nopnds,
             op->nopnds == 1 ? "" : "s", fname ? fname : "?", ft->nresults,
             ft->nresults == 1 ? "" : "s");
  for (uint32_t i = 0; i < op->nopnds; i++) {
    const cj_type *t = cjv_operand_type(op, i);
    if (t != cj_type_fn_result(ft, (int)i))
      CJV_FAIL(op, "operand #%u has type %s but function @%s returns %s", i, CJV_T(t, t1),
               fname ? fname : "?", CJV_T(cj_type_fn_result(ft, (int)i), t2));
  }
  return NULL;
}

/* Resolves a symbol attribute to a func.func (NULL result and no error when op is detached). */
static CJ_MUST_USE cj_status resolve_func(const cj_op *op, const char *attr, const cj_attr *sym,
                              const cj_op **out) {
  *out = NULL;
  if (!sym || sym->kind != CJ_ATTR_SYMREF) CJV_FAIL(op, "'%s' must be a symbol reference", attr);
  if (sym->sym.nnested)
    CJV_FAIL(op, "'%s' @%s::... is a nested symbol reference; only top-level functions can be "
                 "referenced",
             attr, sym->sym.root);
  bool in_module;
  const cj_op *f = cj_verify_lookup_symbol(op, sym->sym.root, &in_module);
  if (!in_module) return NULL;
  if (!f) CJV_FAIL(op, "'%s' @%s does not name a function in this module", attr, sym->sym.root);
  if (f->kind != CJ_OP_FUNC)
    CJV_FAIL(op, "'%s' @%s names a %s, not a func.func", attr, sym->sym.root, f->name);
  *out = f;
  return NULL;
}

/* Operand and result types must equal the function's signature exactly. */
static CJ_MUST_USE cj_status check_signature(const cj_op *op, const cj_op *f, const char *role) {
  const cj_type *ft = cjv_func_type(f);
  const char *fname = cjv_func_name(f);
  if (!ft) return NULL;
  cjv_tbuf t1, t2;
  if ((int32_t)op->nopnds != ft->rank)
    CJV_FAIL(op, "has %u operand%s but %s @%s takes %d", op->nopnds, op->nopnds == 1 ? "" : "s",
             role, fname, ft->rank);
  if ((int32_t)op->nresults != ft->nresults)
    CJV_FAIL(op, "has %u result%s but %s @%s returns %d", op->nresults,
             op->nresults == 1 ? "" : "s", role, fname, ft->nresults);
  for (uint32_t i = 0; i < op->nopnds; i++)
    if (cjv_operand_type(op, i) != cj_type_fn_input(ft, (int)i))
      CJV_FAIL(op, "operand #%u has type %s but %s @%s expects %s", i,
               CJV_T(cjv_operand_type(op, i), t1), role, fname,
               CJV_T(cj_type_fn_input(ft, (int)i), t2));
  for (uint32_t i = 0; i < op->nresults; i++)
    if (cjv_result_type(op, i) != cj_type_fn_result(ft, (int)i))
      CJV_FAIL(op, "result #%u has type %s but %s @%s returns %s", i,
               CJV_T(cjv_result_type(op, i), t1), role, fname,
               CJV_T(cj_type_fn_result(ft, (int)i), t2));
  return NULL;
}

cj_status cj_verify_call(const cj_op *op) {
  const cj_op *f;
  CJV_TRY(resolve_func(op, "callee", cjv_attr(op, "callee"), &f));
  if (f) CJV_TRY(check_signature(op, f, "callee"));
  return NULL;
}

/* ======================================================================== composite */

static bool ident_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
static bool ident_char(char c) {
  return ident_start(c) || (c >= '0' && c <= '9') || c == '_';
}

/* `dialect.op(.more)*`: a letter, then [A-Za-z0-9_]*, then one or more `.` [A-Za-z0-9_$]+ */
static bool is_namespaced_op_name(const char *s, size_t n) {
  if (!n || !ident_start(s[0])) return false;
  size_t i = 1;
  while (i < n && ident_char(s[i])) i++;
  int parts = 0;
  while (i < n) {
    if (s[i] != '.') return false;
    i++;
    size_t start = i;
    while (i < n && (ident_char(s[i]) || s[i] == '$')) i++;
    if (i == start) return false;
    parts++;
  }
  return parts > 0;
}

cj_status cj_verify_composite(const cj_op *op) {
  const cj_attr *name = cjv_attr(op, "name");
  if (!is_namespaced_op_name(name->str.s, name->str.len))
    CJV_FAIL(op, "name \"%s\" must be a namespaced op name such as \"my_namespace.my_op\"",
             name->str.s);
  int64_t version;
  if (cjv_get_i64(op, "version", &version) && version < 0)
    CJV_FAIL(op, "version must be non-negative, got %lld", (long long)version);
  const cj_op *f;
  CJV_TRY(resolve_func(op, "decomposition", cjv_attr(op, "decomposition"), &f));
  if (f) CJV_TRY(check_signature(op, f, "decomposition"));
  return NULL;
}

/* ======================================================================== custom_call */

static CJ_MUST_USE cj_status check_layouts(const cj_op *op, const char *noun, const cj_attr *layouts,
                               uint32_t ntypes, const cj_type *single, bool from_tuple) {
  if ((uint32_t)layouts->arr.n != ntypes)
    CJV_FAIL(op, "the number of %ss (%u) must match the number of %s layouts (%d)", noun, ntypes,
             noun, layouts->arr.n);
  cjv_tbuf tb;
  for (uint32_t i = 0; i < ntypes; i++) {
    const cj_type *t;
    if (from_tuple)
      t = single->members[i];
    else if (strcmp(noun, "operand") == 0)
      t = cjv_operand_type(op, i);
    else
      t = cjv_result_type(op, i);
    int64_t v[CJV_MAX_DIMS], n;
    if (!cj_attr_get_i64s(layouts->arr.items[i], v, CJV_MAX_DIMS, &n))
      CJV_FAIL(op, "%s layout #%u must be a list of integers", noun, i);
    if (t && t->kind == CJ_TYPE_TUPLE)
      CJV_FAIL(op, "%s #%u: tuple types cannot have layout constraints", noun, i);
    if (!t || t->kind != CJ_TYPE_TENSOR) {
      if (n == 0) continue;
      CJV_FAIL(op, "%s #%u of type %s cannot have a non-empty layout", noun, i, CJV_T(t, tb));
    }
    bool perm = n == t->rank && n <= CJV_MAX_DIMS;
    for (int64_t a = 0; perm && a < n; a++) {
      if (v[a] < 0 || v[a] >= n) perm = false;
      for (int64_t b = 0; perm && b < a; b++)
        if (v[a] == v[b]) perm = false;
    }
    if (!perm)
      CJV_FAIL(op, "%s #%u: layout must be a permutation of [0, %d) for %s", noun, i, t->rank,
               CJV_T(t, tb));
  }
  return NULL;
}

cj_status cj_verify_custom_call(const cj_op *op) {
  int64_t api = 1; /* API_VERSION_ORIGINAL */
  cjv_get_i64(op, "api_version", &api);
  if (api < 0 || api > 4)
    CJV_FAIL(op, "api_version %lld is not one of 0 (unspecified) to 4 (typed FFI)", (long long)api);
  const cj_attr *bc = cjv_attr(op, "backend_config");
  if (bc) {
    const char *vname = cj_enum_case_name(CJ_EK_CUSTOM_CALL_API_VERSION, (int32_t)api);
    if (api == 4 && bc->kind != CJ_ATTR_DICT)
      CJV_FAIL(op, "backend_config for api_version %s must be a dictionary", vname);
    if (api != 4 && bc->kind != CJ_ATTR_STRING)
      CJV_FAIL(op, "backend_config for api_version %s must be a string", vname);
  }
  const cj_attr *ol = cjv_attr(op, "operand_layouts"), *rl = cjv_attr(op, "result_layouts");
  if ((ol != NULL) != (rl != NULL))
    CJV_FAIL(op, "operand_layouts and result_layouts must be given together or not at all");
  if (ol) {
    CJV_TRY(check_layouts(op, "operand", ol, op->nopnds, NULL, false));
    const cj_type *r0 = cjv_result_type(op, 0);
    if (op->nresults == 1 && r0 && r0->kind == CJ_TYPE_TUPLE)
      CJV_TRY(check_layouts(op, "result", rl, (uint32_t)r0->rank, r0, true));
    else
      CJV_TRY(check_layouts(op, "result", rl, op->nresults, NULL, false));
  }
  const cj_attr *aliases = cjv_attr(op, "output_operand_aliases");
  for (int32_t k = 0; aliases && k < aliases->arr.n; k++) {
    const cj_attr *al = aliases->arr.items[k];
    int64_t idx = cj_verify_field_i64(al, CJ_SK_OUTPUT_OPERAND_ALIAS, CJ_SF_OUTPUT_OPERAND_ALIAS_operand_index, 0);
    if (idx < 0 || idx >= (int64_t)op->nopnds)
      CJV_FAIL(op, "output_operand_alias operand_index %lld is out of range [0, %u)",
               (long long)idx, op->nopnds);
    int64_t v[CJV_MAX_DIMS], n;
    CJV_TRY(cj_verify_get_field_i64s(op, al, CJ_SK_OUTPUT_OPERAND_ALIAS,
                               CJ_SF_OUTPUT_OPERAND_ALIAS_operand_tuple_indices,
                               "operand_tuple_indices", v, &n));
    const cj_type *opart = cjv_operand_type(op, (uint32_t)idx);
    for (int64_t i = 0; i < n; i++) {
      if (!opart || opart->kind != CJ_TYPE_TUPLE || v[i] < 0 || v[i] >= opart->rank)
        CJV_FAIL(op, "output_operand_alias operand_tuple_indices are out of bounds");
      opart = opart->members[v[i]];
    }
    CJV_TRY(cj_verify_get_field_i64s(op, al, CJ_SK_OUTPUT_OPERAND_ALIAS,
                               CJ_SF_OUTPUT_OPERAND_ALIAS_output_tuple_indices,
                               "output_tuple_indices", v, &n));
    /* with several results the output is addressed as the tuple of all results */
    const cj_type *rpart = op->nresults == 1 ? cjv_result_type(op, 0) : NULL;
    int64_t start = 0;
    if (op->nresults != 1) {
      if (n == 0 || v[0] < 0 || v[0] >= (int64_t)op->nresults)
        CJV_FAIL(op, "output_operand_alias output_tuple_indices are out of bounds");
      rpart = cjv_result_type(op, (uint32_t)v[0]);
      start = 1;
    }
    for (int64_t i = start; i < n; i++) {
      if (!rpart || rpart->kind != CJ_TYPE_TUPLE || v[i] < 0 || v[i] >= rpart->rank)
        CJV_FAIL(op, "output_operand_alias output_tuple_indices are out of bounds");
      rpart = rpart->members[v[i]];
    }
    cjv_tbuf t1, t2;
    if (opart != rpart)
      CJV_FAIL(op, "output_operand_alias: operand part has type %s but output part has type %s",
               CJV_T(opart, t1), CJV_T(rpart, t2));
  }
  /* called_computations name functions of the module; StableHLO itself does not resolve them
   * (its serialization tests, part of the corpus, name a missing @foo), so a name that resolves
   * must be a func.func and a name that does not is left to the custom call's implementation. */
  const cj_attr *cc = cjv_attr(op, "called_computations");
  for (int32_t i = 0; cc && i < cc->arr.n; i++) {
    const cj_attr *sym = cc->arr.items[i];
    bool in_module;
    const cj_op *f = cj_verify_lookup_symbol(op, sym->sym.root, &in_module);
    if (sym->sym.nnested)
      CJV_FAIL(op, "called_computations @%s::... is a nested symbol reference", sym->sym.root);
    if (f && f->kind != CJ_OP_FUNC)
      CJV_FAIL(op, "called_computations @%s names a %s, not a func.func", sym->sym.root, f->name);
  }
  return NULL;
}

/* ======================================================================== tuples and tokens */

cj_status cj_verify_tuple(const cj_op *op) {
  const cj_type *t = cjv_result_type(op, 0);
  cjv_tbuf tb;
  if (!t || t->kind != CJ_TYPE_TUPLE || (uint32_t)t->rank != op->nopnds)
    CJV_FAIL(op, "result must be a tuple of %u elements, got %s", op->nopnds, CJV_T(t, tb));
  for (uint32_t i = 0; i < op->nopnds; i++)
    if (t->members[i] != cjv_operand_type(op, i)) {
      cjv_tbuf t2;
      CJV_FAIL(op, "tuple element #%u has type %s but operand #%u has type %s", i,
               CJV_T(t->members[i], tb), i, CJV_T(cjv_operand_type(op, i), t2));
    }
  return NULL;
}

cj_status cj_verify_get_tuple_element(const cj_op *op) {
  const cj_type *t = cjv_operand_type(op, 0);
  cjv_tbuf t1, t2;
  if (!t || t->kind != CJ_TYPE_TUPLE) CJV_FAIL(op, "operand must be a tuple, got %s", CJV_T(t, t1));
  int64_t index = 0;
  cjv_get_i64(op, "index", &index);
  if (index < 0 || index >= t->rank)
    CJV_FAIL(op, "index %lld is out of range [0, %d) for %s", (long long)index, t->rank,
             CJV_T(t, t1));
  if (cjv_result_type(op, 0) != t->members[index])
    CJV_FAIL(op, "result has type %s but tuple element #%lld has type %s",
             CJV_T(cjv_result_type(op, 0), t1), (long long)index, CJV_T(t->members[index], t2));
  return NULL;
}

cj_status cj_verify_optimization_barrier(const cj_op *op) {
  if (op->nopnds != op->nresults)
    CJV_FAIL(op, "has %u operands but %u results; they must correspond one to one", op->nopnds,
             op->nresults);
  char wa[32], wb[32];
  for (uint32_t i = 0; i < op->nopnds; i++) {
    const cj_type *t = cjv_operand_type(op, i);
    if (!t || (t->kind != CJ_TYPE_TENSOR && t->kind != CJ_TYPE_TOKEN) ||
        (t->kind == CJ_TYPE_TENSOR && cj_shape_is_per_axis(t->elem))) {
      cjv_tbuf tb;
      CJV_FAIL(op, "operand #%u must be a tensor, a per-tensor quantized tensor or a token, got %s",
               i, CJV_T(t, tb));
    }
    snprintf(wa, sizeof wa, "operand #%u", i);
    snprintf(wb, sizeof wb, "result #%u", i);
    CJV_TRY(cj_verify_check_same_type(op, wa, t, wb, cjv_result_type(op, i)));
  }
  return NULL;
}

cj_status cj_verify_after_all(const cj_op *op) {
  char w[32];
  for (uint32_t i = 0; i < op->nopnds; i++) {
    snprintf(w, sizeof w, "operand #%u", i);
    CJV_TRY(cj_verify_check_token(op, w, cjv_operand_type(op, i)));
  }
  return cj_verify_check_token(op, "result", cjv_result_type(op, 0));
}

cj_status cj_verify_create_token(const cj_op *op) {
  return cj_verify_check_token(op, "result", cjv_result_type(op, 0));
}

cj_status cj_verify_process_id(const cj_op *op) {
  return cj_verify_check_scalar(op, "result must be", cjv_result_type(op, 0), CJ_U32);
}

/* ======================================================================== check, sdy */

cj_status cj_verify_check(const cj_op *op) {
  const cj_type *lhs = cjv_operand_type(op, 0);
  bool float_only = op->kind == CJ_OP_CHECK_EXPECT_ALMOST_EQ ||
                    op->kind == CJ_OP_CHECK_EXPECT_ALMOST_EQ_CONST ||
                    op->kind == CJ_OP_CHECK_EXPECT_CLOSE;
  unsigned mask = float_only ? (CJ_EC_FLOAT | CJ_EC_COMPLEX) : CJ_EC_ANY;
  const char *w0 = op->kind == CJ_OP_CHECK_EXPECT_CLOSE ? "actual" : "lhs";
  const char *w1 = op->kind == CJ_OP_CHECK_EXPECT_CLOSE ? "expected" : "rhs";
  if (op->kind == CJ_OP_CHECK_EXPECT_SERIALIZED_EQ) {
    if (op->nopnds > 1) CJV_FAIL(op, "takes at most one operand, got %u", op->nopnds);
    if (op->nopnds == 1) CJV_TRY(cj_verify_check_tensor(op, "operand", lhs, CJ_EC_ANY));
    return NULL;
  }
  CJV_TRY(cj_verify_check_tensor(op, w0, lhs, mask));
  if (op->nopnds == 2) {
    const cj_type *rhs = cjv_operand_type(op, 1);
    CJV_TRY(cj_verify_check_tensor(op, w1, rhs, mask));
    CJV_TRY(cj_verify_check_exact_type(op, w0, lhs, w1, rhs));
  } else {
    const cj_attr *v = cjv_attr(op, "value");
    cjv_tbuf t1, t2;
    if (v && v->dense.type != lhs)
      CJV_FAIL(op, "value has type %s but lhs has type %s", CJV_T(v->dense.type, t1),
               CJV_T(lhs, t2));
  }
  if (op->kind == CJ_OP_CHECK_EXPECT_CLOSE) {
    /* ui64 attributes, stored as their bits */
    int64_t mx = 0, mn = 0;
    cjv_get_i64(op, "max_ulp_difference", &mx);
    cjv_get_i64(op, "min_ulp_difference", &mn);
    if ((uint64_t)mn > (uint64_t)mx)
      CJV_FAIL(op, "min_ulp_difference (%llu) must not exceed max_ulp_difference (%llu)",
               (unsigned long long)mn, (unsigned long long)mx);
  }
  return NULL;
}

cj_status cj_verify_sdy_identity(const cj_op *op) {
  return cj_verify_check_same_type(op, "input", cjv_operand_type(op, 0), "result",
                             cjv_result_type(op, 0));
}

/* ======================================================================== async */

/* Compares an opaque !stablehlo.future<...> type with the future of `types` (their spelling,
 * whitespace ignored). Returns 1 equal, 0 different, -1 cannot tell (quantized members, whose
 * spelling of scales we do not reproduce). */
static int future_matches(const cj_type *fut, uint32_t n, const cj_type *const *types) {
  char want[1024];
  size_t len = 0;
  len += (size_t)snprintf(want, sizeof want, "!stablehlo.future<");
  for (uint32_t i = 0; i < n && len < sizeof want; i++) {
    if (cj_type_is_quant(types[i])) return -1;
    cjv_tbuf tb;
    len += (size_t)snprintf(want + len, sizeof want - len, "%s%s", i ? "," : "", CJV_T(types[i], tb));
  }
  if (len + 2 >= sizeof want) return -1;
  want[len++] = '>';
  want[len] = 0;
  const char *a = fut->text, *b = want;
  for (;;) {
    while (*a == ' ' || *a == '\n' || *a == '\t') a++;
    while (*b == ' ') b++;
    if (*a != *b) return 0;
    if (!*a) return 1;
    a++;
    b++;
  }
}

static bool is_future(const cj_type *t) {
  return t && t->kind == CJ_TYPE_OPAQUE && t->text && strncmp(t->text, "!stablehlo.future<", 18) == 0;
}

cj_status cj_verify_async_start(const cj_op *op) {
  const cj_block *b;
  const cj_op *ret;
  CJV_TRY(cj_verify_region_return(op, 0, "body", &b, &ret));
  const cj_op *inner = b->first;
  if (b->nops != 2 || inner == ret)
    CJV_FAIL(op, "body region must hold exactly one operation and a return, got %u ops", b->nops);
  switch (inner->kind) {
    case CJ_OP_ALL_REDUCE:
    case CJ_OP_ALL_GATHER:
    case CJ_OP_ALL_TO_ALL:
    case CJ_OP_COLLECTIVE_PERMUTE:
    case CJ_OP_REDUCE_SCATTER:
    case CJ_OP_COLLECTIVE_BROADCAST:
    case CJ_OP_SLICE:
    case CJ_OP_DYNAMIC_SLICE:
    case CJ_OP_DYNAMIC_UPDATE_SLICE: break;
    default:
      CJV_FAIL(op, "body region must hold a collective or slice operation, got %s", inner->name);
  }
  cjv_tbuf t1, t2;
  if (b->nargs != op->nopnds)
    CJV_FAIL(op, "has %u operands but its body region takes %u arguments", op->nopnds, b->nargs);
  for (uint32_t i = 0; i < op->nopnds; i++)
    if (cjv_operand_type(op, i) != b->args[i].type)
      CJV_FAIL(op, "operand #%u has type %s but body argument #%u has type %s", i,
               CJV_T(cjv_operand_type(op, i), t1), i, CJV_T(b->args[i].type, t2));
  const cj_type *r = cjv_result_type(op, 0);
  if (!is_future(r)) CJV_FAIL(op, "result must be a !stablehlo.future, got %s", CJV_T(r, t1));
  const cj_type *types[CJV_MAX_DIMS];
  if (ret->nopnds > CJV_MAX_DIMS) CJV_FAIL(op, "body returns too many values");
  for (uint32_t i = 0; i < ret->nopnds; i++) types[i] = ret->operands[i]->type;
  if (future_matches(r, ret->nopnds, types) == 0)
    CJV_FAIL(op, "result %s must be the future of the body's values (%s%s)", r->text,
             ret->nopnds ? CJV_T(types[0], t2) : "none", ret->nopnds > 1 ? ", ..." : "");
  return NULL;
}

cj_status cj_verify_async_done(const cj_op *op) {
  const cj_type *f = cjv_operand_type(op, 0);
  cjv_tbuf t1;
  if (!is_future(f)) CJV_FAIL(op, "operand must be a !stablehlo.future, got %s", CJV_T(f, t1));
  const cj_type *types[CJV_MAX_DIMS];
  if (op->nresults > CJV_MAX_DIMS) CJV_FAIL(op, "has too many results");
  for (uint32_t i = 0; i < op->nresults; i++) types[i] = cjv_result_type(op, i);
  if (future_matches(f, op->nresults, types) == 0)
    CJV_FAIL(op, "result types must be the types %s holds, got %s%s", f->text,
             op->nresults ? CJV_T(types[0], t1) : "none", op->nresults > 1 ? ", ..." : "");
  return NULL;
}

/* ======================================================================== interpreter */

/* interpreter.run_parallel: programs is a non-empty [replicas][partitions] grid of functions;
 * the op's operands and results are their arguments and results, concatenated in grid order. */
cj_status cj_verify_interp_run_parallel(const cj_op *op) {
  const cj_attr *progs = cjv_attr(op, "programs");
  if (!progs || progs->arr.n == 0 || !progs->arr.items[0] ||
      progs->arr.items[0]->kind != CJ_ATTR_ARRAY || progs->arr.items[0]->arr.n == 0)
    CJV_FAIL(op, "programs must be a non-empty array of non-empty arrays of functions");
  int32_t parts = progs->arr.items[0]->arr.n;
  uint32_t nin = 0, nout = 0;
  cjv_tbuf t1, t2;
  for (int32_t r = 0; r < progs->arr.n; r++) {
    const cj_attr *row = progs->arr.items[r];
    if (!row || row->kind != CJ_ATTR_ARRAY)
      CJV_FAIL(op, "programs entry #%d must be an array of functions", r);
    if (row->arr.n != parts)
      CJV_FAIL(op, "every row of programs must have %d functions, row #%d has %d", parts, r,
               row->arr.n);
    for (int32_t c = 0; c < parts; c++) {
      const cj_op *f;
      CJV_TRY(resolve_func(op, "programs", row->arr.items[c], &f));
      if (!f) return NULL; /* detached: cannot resolve */
      const cj_type *ft = cjv_func_type(f);
      if (!ft) continue;
      for (int32_t i = 0; i < ft->rank; i++, nin++)
        if (nin < op->nopnds && cjv_operand_type(op, nin) != cj_type_fn_input(ft, i))
          CJV_FAIL(op, "operand #%u has type %s but program @%s takes %s", nin,
                   CJV_T(cjv_operand_type(op, nin), t1), cjv_func_name(f),
                   CJV_T(cj_type_fn_input(ft, i), t2));
      for (int32_t i = 0; i < ft->nresults; i++, nout++)
        if (nout < op->nresults && cjv_result_type(op, nout) != cj_type_fn_result(ft, i))
          CJV_FAIL(op, "result #%u has type %s but program @%s returns %s", nout,
                   CJV_T(cjv_result_type(op, nout), t1), cjv_func_name(f),
                   CJV_T(cj_type_fn_result(ft, i), t2));
    }
  }
  if (op->nopnds != nin)
    CJV_FAIL(op, "has %u operands but its programs take %u arguments in all", op->nopnds, nin);
  if (op->nresults != nout)
    CJV_FAIL(op, "has %u results but its programs return %u values in all", op->nresults, nout);
  const cj_attr *infeed = cjv_attr(op, "infeed");
  if (infeed) {
    if (infeed->arr.n == 0) CJV_FAIL(op, "infeed must be absent or name at least one function");
    for (int32_t i = 0; i < infeed->arr.n; i++) {
      const cj_op *f;
      CJV_TRY(resolve_func(op, "infeed", infeed->arr.items[i], &f));
      const cj_type *ft = f ? cjv_func_type(f) : NULL;
      if (ft && (ft->nresults != 1 || cj_type_fn_result(ft, 0)->kind != CJ_TYPE_TENSOR))
        CJV_FAIL(op, "infeed function @%s must return one tensor", cjv_func_name(f));
    }
  }
  return NULL;
}
