/* cjrt: the pass pipeline, inlining, identities, dead code elimination (see compiler.h). */
#include <stdlib.h>
#include <string.h>

#include "compiler/compiler.h"
#include "compiler/spmd.h" /* run_parallel (H1) */

/* ======================================================================== helpers */

cj_op *cj_build_op(cj_module *m, cj_op *before, const cj_op *origin, cj_op_kind kind,
                   uint32_t nopnds, cj_value *const *opnds, const cj_type *rt) {
  cj_op *op = cj_op_create(m, kind, NULL, nopnds, rt ? 1 : 0, 0);
  if (!op) return NULL;
  for (uint32_t i = 0; i < nopnds; i++) op->operands[i] = opnds[i];
  if (rt) op->results[0].type = rt;
  if (origin) {
    op->pos = origin->pos;
    op->loc = origin->loc;
  }
  if (before && before->block) cj_block_insert_before(before->block, before, op);
  return op;
}

cj_status cj_build_combiner(cj_module *m, cj_block *rb, const cj_op *origin, cj_op_kind kind,
                            const cj_type *st) {
  cj_value *args[2] = {&rb->args[0], &rb->args[1]};
  cj_op *c = cj_build_op(m, NULL, origin, kind, 2, args, st);
  if (!c) return cj_oom();
  cj_block_append(rb, c);
  cj_value *r = &c->results[0];
  cj_op *ret = cj_build_op(m, NULL, origin, CJ_OP_RETURN, 1, &r, NULL);
  if (!ret) return cj_oom();
  cj_block_append(rb, ret);
  return NULL;
}

void cj_replace_all_uses(cj_op *scope, cj_value *from, cj_value *to) {
  cj_replace_uses_in_op(scope, from, to);
}

/* replaces results of `op` by `vals` in the function and removes op */
static void replace_op(cj_op *func, cj_op *op, cj_value *const *vals) {
  for (uint32_t i = 0; i < op->nresults; i++) cj_replace_all_uses(func, &op->results[i], vals[i]);
  cj_block_remove(op->block, op);
}

static bool str_is(const cj_attr *a, const char *s) {
  const char *v;
  size_t n;
  return cj_attr_get_str(a, &v, &n) && n == strlen(s) && memcmp(v, s, n) == 0;
}

/* ======================================================================== identities */

static bool identity_custom_call(const cj_op *op) {
  if (op->kind != CJ_OP_CUSTOM_CALL) return false;
  const cj_attr *t = cj_op_attr(op, "call_target_name");
  return str_is(t, "Sharding") || str_is(t, "SPMDFullToShardShape") ||
         str_is(t, "SPMDShardToFullShape") || str_is(t, "annotate_device_placement") ||
         str_is(t, "MoveToHost") || str_is(t, "MoveToDevice") || str_is(t, "xla.sdy.FuncResultSharding") ||
         /* Shardy's round-trip manual computation on one device (several: src/compiler/spmd.c) */
         str_is(t, "xla.sdy.GlobalToLocalShape") || str_is(t, "xla.sdy.LocalToGlobalShape");
}

static CJ_MUST_USE cj_status inline_region_op(cj_module *m, cj_op *func, cj_op *op);

static CJ_MUST_USE cj_status identities_block(cj_module *m, cj_op *func, cj_block *b) {
  for (cj_op *op = b->first; op;) {
    cj_op *next = op->next;
    bool ident = op->kind == CJ_OP_SDY_SHARDING_CONSTRAINT || op->kind == CJ_OP_SDY_RESHARD ||
                 identity_custom_call(op);
    if (ident) {
      if (op->nresults > op->nopnds)
        return cj_op_error(op, CJ_UNIMPLEMENTED, "identity op with more results than operands");
      for (uint32_t i = 0; i < op->nresults; i++)
        if (op->results[i].type != op->operands[i]->type)
          return cj_op_error(op, CJ_UNIMPLEMENTED,
                             "this sharding op changes the shape; multi-device SPMD partitioning "
                             "is not supported");
      replace_op(func, op, op->operands);
    } else if (op->kind == CJ_OP_SDY_MANUAL_COMPUTATION) {
      cj_op *prev = op->prev;
      CJ_RETURN_IF_ERROR(inline_region_op(m, func, op));
      next = prev ? prev->next : b->first; /* revisit the inlined ops */
    } else {
      for (uint32_t r = 0; r < op->nregions; r++)
        for (cj_block *nb = op->regions[r].first; nb; nb = nb->next)
          CJ_RETURN_IF_ERROR(identities_block(m, func, nb));
    }
    op = next;
  }
  return NULL;
}

cj_status cj_pass_identities(cj_module *m, cj_op *func) {
  cj_block *b = cj_func_body(func);
  return b ? identities_block(m, func, b) : NULL;
}

/* ======================================================================== inlining */

/* Clones the ops of `body` (with its arguments mapped to `args`) before `at`; *rets receives the
 * mapped operands of the body's terminator. */
static CJ_MUST_USE cj_status clone_body(cj_module *m, cj_op *at, cj_block *body, cj_value *const *args,
                            cj_value ***rets, uint32_t *nrets) {
  uint32_t cap = body->nargs + 64, n = 0;
  cj_value **from = malloc(sizeof(cj_value *) * cap), **to = malloc(sizeof(cj_value *) * cap);
  if (!from || !to) {
    free(from);
    free(to);
    return cj_oom();
  }
  for (uint32_t i = 0; i < body->nargs; i++) {
    from[n] = &body->args[i];
    to[n++] = args[i];
  }
  cj_status st = NULL;
  for (cj_op *o = body->first; o && !st; o = o->next) {
    if (o == body->last && (cj_op_info_get(o->kind)->flags & CJ_OPF_TERMINATOR)) {
      *nrets = o->nopnds;
      *rets = cj_alloc(m, sizeof(cj_value *) * (o->nopnds ? o->nopnds : 1));
      if (!*rets) {
        st = cj_oom();
        break;
      }
      for (uint32_t i = 0; i < o->nopnds; i++) {
        cj_value *v = o->operands[i];
        cj_value *mv = v;
        for (uint32_t k = n; k-- > 0;)
          if (from[k] == v) {
            mv = to[k];
            break;
          }
        (*rets)[i] = mv;
      }
      break;
    }
    cj_op *c = cj_op_clone_mapped(m, o, &from, &to, &n, &cap);
    if (!c) {
      st = cj_oom();
      break;
    }
    cj_block_insert_before(at->block, at, c);
  }
  if (!st && !*rets) st = cj_internal("inlined body has no terminator");
  free(from);
  free(to);
  return st;
}

/* Replaces op by a copy of body (the region of a region op, or the body of the function
 * @callee a call names: callee is NULL for a region op and names the function in errors). */
static CJ_MUST_USE cj_status inline_body(cj_module *m, cj_op *func, cj_op *op, cj_block *body,
                                         const char *callee) {
  if (body->nargs != op->nopnds)
    return callee ? cj_op_error(op, CJ_INVALID_ARGUMENT, "@%s takes %u arguments, %u given",
                                callee, body->nargs, op->nopnds)
                  : cj_op_error(op, CJ_INVALID_ARGUMENT,
                                "region has %u arguments for %u operands", body->nargs,
                                op->nopnds);
  cj_value **rets = NULL;
  uint32_t nrets = 0;
  CJ_RETURN_IF_ERROR(clone_body(m, op, body, op->operands, &rets, &nrets));
  if (nrets != op->nresults)
    return callee ? cj_op_error(op, CJ_INVALID_ARGUMENT,
                                "@%s returns %u values, the call expects %u", callee, nrets,
                                op->nresults)
                  : cj_op_error(op, CJ_INVALID_ARGUMENT, "region returns %u values for %u results",
                                nrets, op->nresults);
  for (uint32_t i = 0; callee && i < nrets; i++)
    if (rets[i]->type != op->results[i].type)
      return cj_op_error(op, CJ_INVALID_ARGUMENT, "@%s result %u has another type than the call's",
                         callee, i);
  replace_op(func, op, rets);
  return NULL;
}

static CJ_MUST_USE cj_status inline_region_op(cj_module *m, cj_op *func, cj_op *op) {
  cj_block *body = op->nregions ? op->regions[0].first : NULL;
  if (!body) return cj_op_error(op, CJ_INVALID_ARGUMENT, "region op without a body");
  return inline_body(m, func, op, body, NULL);
}

static CJ_MUST_USE cj_status inline_call(cj_module *m, cj_op *func, cj_op *op, const char *callee) {
  cj_op *f = cj_module_lookup_symbol(m, callee);
  if (!f || f->kind != CJ_OP_FUNC)
    return cj_op_error(op, CJ_INVALID_ARGUMENT, "callee @%s is not a function of the module", callee);
  cj_block *body = cj_func_body(f);
  if (!body) return cj_op_error(op, CJ_INVALID_ARGUMENT, "callee @%s has no body", callee);
  return inline_body(m, func, op, body, callee);
}

static const char *callee_of(const cj_op *op) {
  const cj_attr *a = cj_op_attr(op, op->kind == CJ_OP_COMPOSITE ? "decomposition" : "callee");
  if (!a || a->kind != CJ_ATTR_SYMREF || a->sym.nnested) return NULL;
  return a->sym.root;
}

/* A call JAX asks XLA to inline late (jax.jit(f, inline=jax.Inline.XLA_LATE):
 * mhlo.frontend_attributes = {inlineable = "xla_late"}) to a function of static types: the
 * program the compiler shows (OptimizedProgram) keeps it as a call, as XLA:CPU does; it is
 * inlined after that, before lowering (cj_compile_late_inline). */
static bool late_call(cj_module *m, const cj_op *op) {
  if (op->kind != CJ_OP_FUNC_CALL) return false;
  if (!str_is(cj_attr_dict_get(cj_op_attr(op, "mhlo.frontend_attributes"), "inlineable"),
              "xla_late"))
    return false;
  const char *callee = callee_of(op);
  cj_op *f = callee ? cj_module_lookup_symbol(m, callee) : NULL;
  cj_block *body = f && f->kind == CJ_OP_FUNC ? cj_func_body(f) : NULL;
  if (!body || body->nargs != op->nopnds || f == cj_module_main(m)) return false;
  for (uint32_t i = 0; i < op->nopnds; i++)
    if (body->args[i].type != op->operands[i]->type || !cj_type_is_static(op->operands[i]->type))
      return false;
  return true;
}

/* one round: inlines every call found (not the calls the inlined bodies contain); with
 * keep_late, the late calls stay */
static CJ_MUST_USE cj_status inline_block(cj_module *m, cj_op *func, cj_block *b, int *count, bool keep_late) {
  for (cj_op *op = b->first; op;) {
    cj_op *next = op->next;
    if ((op->kind == CJ_OP_FUNC_CALL || op->kind == CJ_OP_COMPOSITE) &&
        !(keep_late && late_call(m, op))) {
      const char *callee = callee_of(op);
      if (!callee) return cj_op_error(op, CJ_INVALID_ARGUMENT, "call without a callee symbol");
      CJ_RETURN_IF_ERROR(inline_call(m, func, op, callee));
      (*count)++;
    } else {
      for (uint32_t r = 0; r < op->nregions; r++)
        for (cj_block *nb = op->regions[r].first; nb; nb = nb->next)
          CJ_RETURN_IF_ERROR(inline_block(m, func, nb, count, keep_late));
    }
    op = next;
  }
  return NULL;
}

static cj_op *find_call(cj_module *m, cj_block *b, bool keep_late) {
  for (cj_op *op = b->first; op; op = op->next) {
    if ((op->kind == CJ_OP_FUNC_CALL || op->kind == CJ_OP_COMPOSITE) &&
        !(keep_late && late_call(m, op)))
      return op;
    for (uint32_t r = 0; r < op->nregions; r++)
      for (cj_block *nb = op->regions[r].first; nb; nb = nb->next) {
        cj_op *c = find_call(m, nb, keep_late);
        if (c) return c;
      }
  }
  return NULL;
}

static CJ_MUST_USE cj_status inline_calls(cj_module *m, cj_op *func, bool keep_late) {
  cj_block *b = cj_func_body(func);
  if (!b) return NULL;
  for (int round = 0; round < 64; round++) {
    int count = 0;
    CJ_RETURN_IF_ERROR(inline_block(m, func, b, &count, keep_late));
    if (!count) return NULL;
  }
  cj_op *c = find_call(m, b, keep_late);
  if (c)
    return cj_op_error(c, CJ_UNIMPLEMENTED, "calls nest more than 64 deep (recursion?) at @%s",
                       callee_of(c) ? callee_of(c) : "?");
  return NULL;
}

cj_status cj_pass_inline(cj_module *m, cj_op *func) { return inline_calls(m, func, false); }

/* ======================================================================== dead code */

typedef struct uses {
  uint32_t *n;
  uint32_t cap;
} uses;

static void count_uses(cj_block *b, uint32_t *u, uint32_t nv) {
  for (cj_op *op = b->first; op; op = op->next) {
    for (uint32_t i = 0; i < op->nopnds; i++)
      if (op->operands[i] && op->operands[i]->id < nv) u[op->operands[i]->id]++;
    for (uint32_t r = 0; r < op->nregions; r++)
      for (cj_block *nb = op->regions[r].first; nb; nb = nb->next) count_uses(nb, u, nv);
  }
}

uint32_t *cj_use_counts(cj_block *b, uint32_t *nv) {
  *nv = 0;
  cj_block_number_values(b, nv);
  uint32_t *u = calloc(*nv ? *nv : 1, sizeof(uint32_t));
  if (u) count_uses(b, u, *nv);
  return u;
}

static bool has_side_effect(const cj_op *op) {
  const cj_op_info *info = cj_op_info_get(op->kind);
  if (info->flags & (CJ_OPF_SIDE_EFFECT | CJ_OPF_TERMINATOR)) return true;
  if (op->kind == CJ_OP_UNKNOWN) return true;
  if (op->kind == CJ_OP_CUSTOM_CALL) {
    bool se = false;
    if (cj_op_get_bool(op, "has_side_effect", &se) && se) return true;
    /* checks are side effects whatever they say */
    const cj_attr *t = cj_op_attr(op, "call_target_name");
    const char *s;
    size_t n;
    if (cj_attr_get_str(t, &s, &n) && n >= 6 && memcmp(s, "check.", 6) == 0) return true;
  }
  for (uint32_t r = 0; r < op->nregions; r++)
    for (cj_block *b = op->regions[r].first; b; b = b->next)
      for (cj_op *o = b->first; o; o = o->next)
        if (has_side_effect(o) && !(cj_op_info_get(o->kind)->flags & CJ_OPF_TERMINATOR)) return true;
  return false;
}

static void uncount(cj_op *op, uint32_t *u, uint32_t nv) {
  for (uint32_t i = 0; i < op->nopnds; i++)
    if (op->operands[i] && op->operands[i]->id < nv && u[op->operands[i]->id]) u[op->operands[i]->id]--;
  for (uint32_t r = 0; r < op->nregions; r++)
    for (cj_block *b = op->regions[r].first; b; b = b->next)
      for (cj_op *o = b->first; o; o = o->next) uncount(o, u, nv);
}

static int dce_block(cj_block *b, uint32_t *u, uint32_t nv) {
  int removed = 0;
  for (cj_op *op = b->last; op;) {
    cj_op *prev = op->prev;
    bool used = false;
    for (uint32_t i = 0; i < op->nresults; i++)
      if (op->results[i].id < nv && u[op->results[i].id]) used = true;
    if (!used && !has_side_effect(op)) {
      uncount(op, u, nv);
      cj_block_remove(b, op);
      removed++;
    } else {
      for (uint32_t r = 0; r < op->nregions; r++)
        for (cj_block *nb = op->regions[r].first; nb; nb = nb->next) removed += dce_block(nb, u, nv);
    }
    op = prev;
  }
  return removed;
}

cj_status cj_pass_dce(cj_module *m, cj_op *func) {
  (void)m;
  cj_block *b = cj_func_body(func);
  if (!b) return NULL;
  uint32_t nv;
  uint32_t *u = cj_use_counts(b, &nv);
  if (!u) return cj_oom();
  while (dce_block(b, u, nv)) {
  }
  free(u);
  return NULL;
}

/* Whether func is among the n first of list */
static bool listed(cj_op *const *list, uint32_t n, const cj_op *func) {
  for (uint32_t i = 0; i < n; i++)
    if (list[i] == func) return true;
  return false;
}

/* Appends to list (room for every function) the functions that the symbol references in b's
 * ops name (a custom call's called_computations, a call's callee), each once. */
static void add_referenced(cj_module *m, const cj_block *b, cj_op **list, uint32_t *n) {
  for (const cj_op *op = b->first; op; op = op->next) {
    for (uint32_t a = 0; a < op->nattrs; a++) {
      const cj_attr *v = op->attrs[a].value;
      int32_t k = v->kind == CJ_ATTR_ARRAY ? v->arr.n : 1;
      for (int32_t i = 0; i < k; i++) {
        const cj_attr *r = v->kind == CJ_ATTR_ARRAY ? v->arr.items[i] : v;
        cj_op *f = r->kind == CJ_ATTR_SYMREF ? cj_module_lookup_symbol(m, r->sym.root) : NULL;
        if (f && f->kind == CJ_OP_FUNC && !listed(list, *n, f)) list[(*n)++] = f;
      }
    }
    for (uint32_t r = 0; r < op->nregions; r++)
      for (const cj_block *nb = op->regions[r].first; nb; nb = nb->next) add_referenced(m, nb, list, n);
  }
}

void cj_pass_strip_functions(cj_module *m, const cj_op *keep) {
  cj_block *b = cj_module_block(m);
  if (!b) return;
  uint32_t nf = 0;
  for (cj_op *op = b->first; op; op = op->next) nf += op->kind == CJ_OP_FUNC;
  /* `keep` and what it references, transitively; without memory for the list, keep them all */
  cj_op **kept = malloc(sizeof(cj_op *) * (nf + 1));
  if (!kept) return;
  uint32_t n = 0;
  kept[n++] = (cj_op *)keep;
  for (uint32_t i = 0; i < n; i++) {
    const cj_block *fb = cj_func_body(kept[i]);
    if (fb) add_referenced(m, fb, kept, &n);
  }
  for (cj_op *op = b->first; op;) {
    cj_op *next = op->next;
    if (op->kind == CJ_OP_FUNC && !listed(kept, n, op)) cj_block_remove(b, op);
    op = next;
  }
  free(kept);
}

/* ======================================================================== late calls */

static bool has_call(const cj_block *b) {
  for (const cj_op *op = b->first; op; op = op->next) {
    if (op->kind == CJ_OP_FUNC_CALL) return true;
    for (uint32_t r = 0; r < op->nregions; r++)
      for (const cj_block *nb = op->regions[r].first; nb; nb = nb->next)
        if (has_call(nb)) return true;
  }
  return false;
}

typedef struct func_list {
  cj_op **f;
  uint32_t n, cap;
} func_list;

/* Appends the callees of the calls in b that the list lacks. */
static CJ_MUST_USE cj_status add_callees(cj_module *m, const cj_block *b, func_list *l) {
  for (const cj_op *op = b->first; op; op = op->next) {
    if (op->kind == CJ_OP_FUNC_CALL) {
      cj_op *f = callee_of(op) ? cj_module_lookup_symbol(m, callee_of(op)) : NULL;
      bool seen = !f;
      for (uint32_t j = 0; j < l->n && !seen; j++) seen = l->f[j] == f;
      if (!seen) {
        if (l->n == l->cap) {
          uint32_t cap = l->cap ? l->cap * 2 : 8;
          cj_op **nf = realloc(l->f, sizeof *nf * cap);
          if (!nf) return cj_oom();
          l->f = nf;
          l->cap = cap;
        }
        l->f[l->n++] = f;
      }
    }
    for (uint32_t r = 0; r < op->nregions; r++)
      for (const cj_block *nb = op->regions[r].first; nb; nb = nb->next)
        CJ_RETURN_IF_ERROR(add_callees(m, nb, l));
  }
  return NULL;
}

/* main, then the functions that the kept late calls reach (callees of callees too), each once. */
static CJ_MUST_USE cj_status late_callees(cj_module *m, cj_op *main, cj_op ***out, uint32_t *n) {
  func_list l = {NULL, 0, 0};
  l.f = malloc(sizeof *l.f * 8);
  if (!l.f) return cj_oom();
  l.cap = 8;
  l.f[l.n++] = main;
  cj_status st = NULL;
  for (uint32_t i = 0; i < l.n && !st; i++) {
    cj_block *b = cj_func_body(l.f[i]);
    if (b) st = add_callees(m, b, &l);
  }
  if (st) {
    free(l.f);
    return st;
  }
  *out = l.f;
  *n = l.n;
  return NULL;
}

/* Removes the functions that are neither `main` nor listed. */
static void strip_except(cj_module *m, cj_op *const *keep, uint32_t n) {
  cj_block *b = cj_module_block(m);
  if (!b) return;
  for (cj_op *op = b->first; op;) {
    cj_op *next = op->next;
    bool kept = false;
    for (uint32_t i = 0; i < n && !kept; i++) kept = keep[i] == op;
    if (op->kind == CJ_OP_FUNC && !kept) cj_block_remove(b, op);
    op = next;
  }
}

cj_status cj_compile_late_inline(cj_module *m, cj_op *main) {
  cj_block *b = cj_func_body(main);
  if (!b || !has_call(b)) return NULL;
  CJ_RETURN_IF_ERROR(cj_pass_inline(m, main));
  CJ_RETURN_IF_ERROR(cj_pass_fold(m, main));
  CJ_RETURN_IF_ERROR(cj_pass_dce(m, main));
  cj_pass_strip_functions(m, main);
  return NULL;
}

/* ======================================================================== pipeline */

cj_status cj_compile_passes(cj_module *m, const cj_compile_hooks *hooks, cj_op **out_main) {
  *out_main = NULL;
  cj_op *main = cj_module_main(m);
  if (!main) return cj_invalid("compile: the module has no @main function (and more than one function)");
  if (!cj_func_body(main)) return cj_op_error(main, CJ_INVALID_ARGUMENT, "the entry function has no body");
  CJ_RETURN_IF_ERROR(cj_pass_run_parallel(m, main)); /* before other functions are dropped */
  CJ_RETURN_IF_ERROR(cj_pass_identities(m, main));
  CJ_RETURN_IF_ERROR(inline_calls(m, main, true));
  /* the late calls' functions (none in most programs) go through the same passes */
  cj_op **fs = NULL;
  uint32_t nf = 0;
  CJ_RETURN_IF_ERROR(late_callees(m, main, &fs, &nf));
  cj_status st = NULL;
  for (uint32_t i = 1; i < nf && !st; i++) {
    st = cj_pass_identities(m, fs[i]);
    if (!st) st = inline_calls(m, fs[i], true);
  }
  for (uint32_t i = 0; i < nf && !st; i++) {
    cj_op *f = fs[i];
    st = cj_pass_identities(m, f);
    if (!st) st = cj_pass_refine(m, f, NULL);
    if (!st) st = cj_pass_quant(m, f);
    if (!st) st = cj_pass_chlo(m, f, hooks);
    if (!st) st = cj_pass_sink_collectives(m, f); /* before fold: transpose(dot) folds */
    if (!st) st = cj_pass_fold(m, f);
    if (!st) st = cj_pass_cse(m, f);
    if (!st) st = cj_pass_licm(m, f);
    if (!st) st = cj_pass_dce(m, f);
  }
  free(fs);
  CJ_RETURN_IF_ERROR(st);
  /* what the late calls reach now that their own calls were inlined */
  CJ_RETURN_IF_ERROR(late_callees(m, main, &fs, &nf));
  strip_except(m, fs, nf);
  free(fs);
  *out_main = main;
  return NULL;
}
