/* cjrt reference backend: lowering the prepared module into a cj_program.
 *
 * The compile driver (runtime/compile.c) has run the passes, printed and fingerprinted the
 * program, inlined what was kept for printing and checked every op with supports_op. What is
 * left is the backend's own: a copy of the entry function (copy.c: the driver frees its module),
 * the numbering of its values (the interpreter's environment slots), and the description of the
 * program: argument and result shapes, donation, a cost estimate.
 */
#include <stdlib.h>
#include <string.h>

#include "reference/ref.h"

static CJ_MUST_USE cj_status shape_of(cj_program *p, const cj_type *t, cj_shape *out, const char *what, int32_t i) {
  if (t && t->kind == CJ_TYPE_TOKEN) {
    out->dtype = CJ_TOKEN;
    out->rank = 0;
    out->dims = NULL;
    out->nbytes = 0;
    return NULL;
  }
  if (!cj_type_is_static(t))
    return cj_unimplemented("%s %d of the entry function must be a static tensor", what, i);
  if (cj_type_is_quant(t))
    return cj_unimplemented("%s %d of the entry function has a quantized type", what, i);
  out->dtype = t->dtype;
  out->rank = t->rank;
  int64_t *d = cj_arena_alloc(&p->arena, sizeof(int64_t) * (size_t)(t->rank ? t->rank : 1));
  if (!d) return cj_oom();
  memcpy(d, t->dims, sizeof(int64_t) * (size_t)t->rank);
  out->dims = d;
  out->nbytes = (size_t)t->num_elements * (size_t)cj_dtype_bytes(t->dtype);
  return NULL;
}

/* ---- GetCostAnalysis: a plain count over the program (regions counted once) ---- */

static double elems(const cj_type *t) { return cj_type_is_static(t) ? (double)t->num_elements : 0; }
static double bytes(const cj_type *t) { return elems(t) * (cj_type_is_static(t) ? cj_dtype_bytes(t->dtype) : 0); }

static void cost_block(const cj_block *b, cj_program_info *in) {
  for (const cj_op *op = b->first; op; op = op->next) {
    double out = op->nresults ? elems(op->results[0].type) : 0;
    for (uint32_t i = 0; i < op->nopnds; i++) in->bytes_accessed += bytes(op->operands[i]->type);
    for (uint32_t i = 0; i < op->nresults; i++) in->bytes_accessed += bytes(op->results[i].type);
    if (op->kind == CJ_OP_DOT_GENERAL || op->kind == CJ_OP_DOT) {
      /* 2 x result elements x the contracted size (lhs elements / lhs elements kept) */
      const cj_type *l = op->operands[0]->type;
      int64_t lb[16], lc[16], nb = 0, nc = 0;
      const cj_attr *dn = cj_op_attr(op, "dot_dimension_numbers");
      if (dn) {
        cj_attr_get_i64s(cj_attr_field(dn, CJ_SK_DOT, CJ_SF_DOT_lhs_batching_dimensions), lb, 16, &nb);
        cj_attr_get_i64s(cj_attr_field(dn, CJ_SK_DOT, CJ_SF_DOT_lhs_contracting_dimensions), lc, 16, &nc);
      } else if (cj_type_is_static(l) && l->rank) {
        lc[0] = l->rank - 1;
        nc = 1;
      }
      double k = 1;
      for (int64_t i = 0; i < nc && cj_type_is_static(l); i++) k *= (double)l->dims[lc[i]];
      in->flops += 2 * out * k;
    } else if (op->kind == CJ_OP_CONVOLUTION) {
      const cj_type *r = op->operands[1]->type;
      double kin = elems(r), of = 1;
      const cj_attr *dn = cj_op_attr(op, "dimension_numbers");
      int64_t kof = 0;
      if (dn && cj_attr_get_i64(cj_attr_field(dn, CJ_SK_CONV, CJ_SF_CONV_kernel_output_feature_dimension), &kof) &&
          cj_type_is_static(r))
        of = (double)r->dims[kof];
      in->flops += 2 * out * (of ? kin / of : 0);
    } else if (cj_rf_is_ew(op->kind) || op->kind == CJ_OP_REDUCE || op->kind == CJ_OP_REDUCE_WINDOW) {
      in->flops += op->kind == CJ_OP_REDUCE ? elems(op->operands[0]->type) : out;
      if (cj_rf_is_transcendental(op->kind)) in->transcendentals += out;
    }
    for (uint32_t r = 0; r < op->nregions; r++)
      for (const cj_block *nb = op->regions[r].first; nb; nb = nb->next) cost_block(nb, in);
  }
}

void cj_rf_program_free(cj_program *p) {
  if (!p) return;
  cj_module_free(p->module);
  free(p->probe_dir);
  cj_arena_release(&p->arena);
  free(p);
}

static CJ_MUST_USE cj_status describe(cj_program *p, const cj_compile_options *opts) {
  cj_program_info *in = &p->info;
  cj_block *body = cj_func_body(p->main);
  const cj_type *ft = cj_func_type(p->main);
  if (!body || !ft) return cj_invalid("the entry function has no body");
  int32_t nargs = (int32_t)body->nargs, nres = ft->nresults;
  cj_shape *args = cj_arena_alloc(&p->arena, sizeof(cj_shape) * (size_t)(nargs ? nargs : 1));
  cj_shape *res = cj_arena_alloc(&p->arena, sizeof(cj_shape) * (size_t)(nres ? nres : 1));
  int32_t *donor = cj_arena_alloc(&p->arena, sizeof(int32_t) * (size_t)(nres ? nres : 1));
  cj_status st = (!args || !res || !donor) ? cj_oom() : NULL;
  for (int32_t i = 0; i < nargs && !st; i++) st = shape_of(p, body->args[i].type, &args[i], "argument", i);
  for (int32_t j = 0; j < nres && !st; j++) st = shape_of(p, cj_type_fn_result(ft, j), &res[j], "result", j);
  if (!st) st = cj_func_result_donors(p->main, nargs, nres, donor);
  if (st) return st;
  in->num_args = nargs;
  in->num_results = nres;
  in->args = args;
  in->results = res;
  in->result_donor = donor;
  /* (the driver fills these in its copy too; launches and executions read them here) */
  in->num_replicas = opts->num_replicas;
  in->num_partitions = opts->num_partitions;
  return NULL;
}

cj_status cj_rf_lower(cj_module *m, cj_op *main, const cj_compile_options *opts, cj_program **out) {
  *out = NULL;
  cj_program *p = calloc(1, sizeof *p);
  if (!p) return cj_oom();
  cj_arena_init(&p->arena);
  cj_status st = cj_rf_copy_main(m, main, &p->module, &p->main);
  if (!st) st = cj_rf_number_values(p);
  const char *pd = getenv("CJRT_PROBE_DIR");
  if (!st && pd && *pd) {
    p->probe_dir = malloc(strlen(pd) + 1);
    if (!p->probe_dir) st = cj_oom();
    else memcpy(p->probe_dir, pd, strlen(pd) + 1);
  }
  if (!st) st = describe(p, opts);
  if (!st) cost_block(cj_func_body(p->main), &p->info);
  if (st) {
    cj_rf_program_free(p);
    return st;
  }
  *out = p;
  return NULL;
}
