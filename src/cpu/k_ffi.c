/* cjrt: custom calls to XLA FFI handlers registered with the plugin (PJRT FFI extension, or
 * XLA_FFI_Handler_Register), as jax.ffi.ffi_call emits them: `stablehlo.custom_call @target`
 * with api_version 4 (typed FFI) and the handler's attributes in `mhlo.backend_config` (a
 * dictionary; JAX 0.8 on leaves api_version at its default there).
 *
 * Lowering looks the handler up (a target registered after the program was compiled does not
 * change it, as in XLA, which also binds handlers at compile time), checks that operands and
 * results are dense arrays or tokens in the default (row-major) layout, and builds the parts of
 * the call frame that never change: each buffer's element type, rank and dimensions, and the
 * attributes. Each run fills in the data pointers and calls the handler on the executing thread.
 * Results that alias an operand (output_operand_aliases) start as a copy of it, and the handler
 * sees one buffer for both, as XLA gives it. An error the handler returns fails the execution
 * with a message naming the target and the handler's own message.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/lower.h"
#include "runtime/ffi.h"

enum { FFI_STACK_BUFFERS = 16 };

typedef struct ffi_params {
  XLA_FFI_Handler *execute;
  const char *what; /* "custom_call @target (stablehlo.custom_call at ...)" */
  int32_t nargs, nrets;
  const XLA_FFI_Buffer *arg_tmpl, *ret_tmpl; /* dtype, rank, dims; data filled per run */
  const int32_t *ret_alias;                  /* per result: the operand it aliases, or -1 */
  const int64_t *ret_bytes;                  /* per result: bytes (for the alias copy) */
  XLA_FFI_Attrs attrs;
} ffi_params;

static CJ_MUST_USE cj_status k_ffi_call(cj_exec_ctx *ctx, const cj_step *st) {
  const ffi_params *p = st->params;
  int32_t na = p->nargs, nr = p->nrets, nall = na + nr;
  XLA_FFI_Buffer stack_bufs[FFI_STACK_BUFFERS];
  void *stack_ptrs[FFI_STACK_BUFFERS];
  XLA_FFI_Buffer *bufs = stack_bufs;
  void **ptrs = stack_ptrs;
  if (nall > FFI_STACK_BUFFERS) {
    bufs = malloc((size_t)nall * sizeof *bufs);
    ptrs = malloc((size_t)nall * sizeof *ptrs);
    if (!bufs || !ptrs) {
      free(bufs);
      free(ptrs);
      return cj_oom();
    }
  }
  for (int32_t i = 0; i < na; i++) {
    bufs[i] = p->arg_tmpl[i];
    bufs[i].data = CJ_PTR(ctx, st->in[i]);
    ptrs[i] = &bufs[i];
  }
  for (int32_t j = 0; j < nr; j++) {
    XLA_FFI_Buffer *b = &bufs[na + j];
    *b = p->ret_tmpl[j];
    b->data = CJ_PTR(ctx, st->out[j]);
    ptrs[na + j] = b;
    int32_t a = p->ret_alias[j];
    if (a >= 0) {
      if (bufs[a].data != b->data && p->ret_bytes[j] > 0)
        memmove(b->data, bufs[a].data, (size_t)p->ret_bytes[j]);
      bufs[a].data = b->data;
    }
  }
  /* every entry of the type arrays is BUFFER (1) */
  XLA_FFI_ArgType stack_types[FFI_STACK_BUFFERS];
  XLA_FFI_ArgType *types = stack_types;
  if (nall > FFI_STACK_BUFFERS && !(types = malloc((size_t)nall * sizeof *types))) {
    free(bufs);
    free(ptrs);
    return cj_oom();
  }
  for (int32_t i = 0; i < nall; i++) types[i] = XLA_FFI_ArgType_BUFFER;

  XLA_FFI_CallFrame frame;
  memset(&frame, 0, sizeof frame);
  frame.struct_size = XLA_FFI_CallFrame_STRUCT_SIZE;
  frame.stage = XLA_FFI_ExecutionStage_EXECUTE;
  frame.args = (XLA_FFI_Args){XLA_FFI_Args_STRUCT_SIZE, NULL, na, types, ptrs};
  frame.rets = (XLA_FFI_Rets){XLA_FFI_Rets_STRUCT_SIZE, NULL, nr, (XLA_FFI_RetType *)types,
                              ptrs + na};
  frame.attrs = p->attrs;
  cj_ffi_invoke_ctx ic = {
      .user_data = ctx->args ? ctx->args->ffi_user_data : NULL,
      .pool = ctx->pool,
      .state = NULL,
      .device_ordinal = ctx->args ? ctx->args->replica : 0,
      .run_id = 0,
  };
  cj_status s = cj_ffi_call(p->execute, &frame, &ic, p->what);
  if (bufs != stack_bufs) {
    free(bufs);
    free(ptrs);
    free(types);
  }
  return s;
}

static void *lw_alloc(void *actx, size_t n) { return cj_lw_alloc((cj_lw *)actx, n); }

/* True when `layout` (minor-to-major dims) is the default row-major one for `rank`. */
static bool default_layout(const cj_attr *layout, int32_t rank) {
  int64_t d[CJ_MAX_RANK], n = 0;
  if (!cj_attr_get_i64s(layout, d, CJ_MAX_RANK, &n) || n != rank) return false;
  for (int32_t k = 0; k < rank; k++)
    if (d[k] != rank - 1 - k) return false;
  return true;
}

static CJ_MUST_USE cj_status describe(cj_lw *L, cj_op *op, const char *T, bool is_arg, uint32_t i,
                          XLA_FFI_Buffer *b, int32_t *buf, int64_t *bytes) {
  cj_value *v = is_arg ? op->operands[i] : &op->results[i];
  const char *what = is_arg ? "operand" : "result";
  memset(b, 0, sizeof *b);
  b->struct_size = XLA_FFI_Buffer_STRUCT_SIZE;
  if (v->type->kind == CJ_TYPE_TOKEN) {
    /* a token is an empty buffer of type TOKEN (jaxlib's callbacks skip them) */
    b->dtype = XLA_FFI_DataType_TOKEN;
    if (is_arg) {
      int32_t n = 0;
      const int32_t *leaves = NULL;
      CJ_RETURN_IF_ERROR(cj_lw_leaves(L, op, v, &n, &leaves));
      if (n != 1) return cj_op_error(op, CJ_INTERNAL, "%s: a token operand has %d buffers", T, n);
      *buf = leaves[0];
    } else {
      cj_lw_tensor t;
      CJ_RETURN_IF_ERROR(cj_lw_result(L, op, i, &t));
      *buf = t.buf;
    }
    *bytes = 0;
    return NULL;
  }
  if (v->type->kind != CJ_TYPE_TENSOR)
    return cj_op_error(op, CJ_UNIMPLEMENTED, "%s: %s %u is not an array or a token (FFI calls "
                       "take arrays)", T, what, i);
  cj_lw_tensor t;
  CJ_RETURN_IF_ERROR(is_arg ? cj_lw_operand(L, op, i, &t) : cj_lw_result(L, op, i, &t));
  XLA_FFI_DataType xt = cj_ffi_dtype(t.dtype);
  if (xt == XLA_FFI_DataType_INVALID)
    return cj_op_error(op, CJ_UNIMPLEMENTED, "%s: %s %u has element type %s, which XLA FFI "
                       "cannot pass", T, what, i, cj_dtype_get(t.dtype)->id);
  int64_t *dims = cj_lw_alloc(L, (size_t)(t.rank ? t.rank : 1) * sizeof *dims);
  if (!dims) return cj_oom();
  for (int32_t k = 0; k < t.rank; k++) dims[k] = t.dims[k];
  b->dtype = xt;
  b->rank = t.rank;
  b->dims = dims;
  *buf = t.buf;
  *bytes = t.nbytes;
  const cj_attr *lays = cj_op_attr(op, is_arg ? "operand_layouts" : "result_layouts");
  if (lays && lays->kind == CJ_ATTR_ARRAY && (int32_t)i < lays->arr.n &&
      !default_layout(lays->arr.items[i], t.rank))
    return cj_op_error(op, CJ_UNIMPLEMENTED, "%s: %s %u asks for a layout other than the default "
                       "row-major one, which cjrt does not pass to FFI handlers", T, what, i);
  return NULL;
}

cj_status cj_lower_cc_ffi(cj_lw *L, cj_op *op, const char *target, size_t len) {
  char T[160];
  snprintf(T, sizeof T, "custom_call @%.*s", (int)(len < 120 ? len : 120), target);
  XLA_FFI_Handler_Bundle bundle;
  if (!cj_ffi_find_handler(target, len, &bundle))
    return cj_op_error(op, CJ_UNIMPLEMENTED, "%s is not supported by the CPU backend", T);
  int64_t api_version = 0;
  const cj_attr *av = cj_op_attr(op, "api_version");
  if (av && av->kind == CJ_ATTR_INT) api_version = av->i.v;
  else if (av && av->kind == CJ_ATTR_ENUM) api_version = av->en.v;
  /* JAX emits typed FFI calls as api_version 4, or (0.8 on) leaves the default and puts the
   * attributes in an mhlo.backend_config dictionary, which XLA reads as typed FFI too. The
   * status-returning versions 2 and 3 are the untyped ABI, which registered handlers are not. */
  if (api_version == 2 || api_version == 3)
    return cj_op_error(op, CJ_UNIMPLEMENTED,
                       "%s: the call uses the untyped custom-call ABI (api_version %lld); the "
                       "handler registered for it is a typed XLA FFI handler (api_version 4)",
                       T, (long long)api_version);
  ffi_params *p = cj_lw_alloc(L, sizeof *p);
  if (!p) return cj_oom();
  p->execute = bundle.execute;
  int32_t na = (int32_t)op->nopnds, nr = (int32_t)op->nresults;
  p->nargs = na;
  p->nrets = nr;
  XLA_FFI_Buffer *at = cj_lw_alloc(L, (size_t)(na ? na : 1) * sizeof *at);
  XLA_FFI_Buffer *rt = cj_lw_alloc(L, (size_t)(nr ? nr : 1) * sizeof *rt);
  int32_t *ins = cj_lw_alloc(L, (size_t)(na ? na : 1) * sizeof *ins);
  int32_t *outs = cj_lw_alloc(L, (size_t)(nr ? nr : 1) * sizeof *outs);
  int32_t *alias = cj_lw_alloc(L, (size_t)(nr ? nr : 1) * sizeof *alias);
  int64_t *rbytes = cj_lw_alloc(L, (size_t)(nr ? nr : 1) * sizeof *rbytes);
  int64_t *abytes = cj_lw_alloc(L, (size_t)(na ? na : 1) * sizeof *abytes);
  if (!at || !rt || !ins || !outs || !alias || !rbytes || !abytes) return cj_oom();
  for (int32_t i = 0; i < na; i++)
    CJ_RETURN_IF_ERROR(describe(L, op, T, true, (uint32_t)i, &at[i], &ins[i], &abytes[i]));
  for (int32_t j = 0; j < nr; j++) {
    CJ_RETURN_IF_ERROR(describe(L, op, T, false, (uint32_t)j, &rt[j], &outs[j], &rbytes[j]));
    alias[j] = -1;
  }
  /* output_operand_aliases: [#stablehlo.output_operand_alias<output_tuple_indices = [j],
   * operand_index = i, operand_tuple_indices = []>, ...] */
  const cj_attr *oa = cj_op_attr(op, "output_operand_aliases");
  for (int32_t k = 0; oa && oa->kind == CJ_ATTR_ARRAY && k < oa->arr.n; k++) {
    const cj_attr *a = oa->arr.items[k];
    if (a->kind != CJ_ATTR_STRUCT || a->st.sk != CJ_SK_OUTPUT_OPERAND_ALIAS) continue;
    int64_t outi[4], nouti = 0, opi = -1, nopt = 0, opt[4];
    const cj_attr *fo = a->st.fields[CJ_SF_OUTPUT_OPERAND_ALIAS_output_tuple_indices];
    const cj_attr *fi = a->st.fields[CJ_SF_OUTPUT_OPERAND_ALIAS_operand_index];
    const cj_attr *ft = a->st.fields[CJ_SF_OUTPUT_OPERAND_ALIAS_operand_tuple_indices];
    if (fo && !cj_attr_get_i64s(fo, outi, 4, &nouti)) nouti = -1;
    if (ft && !cj_attr_get_i64s(ft, opt, 4, &nopt)) nopt = -1;
    if (fi && fi->kind == CJ_ATTR_INT) opi = fi->i.v;
    int64_t j = nouti == 1 ? outi[0] : (nouti == 0 && nr == 1 ? 0 : -1);
    if (j < 0 || j >= nr || opi < 0 || opi >= na || nopt != 0 || rbytes[j] != abytes[opi])
      return cj_op_error(op, CJ_UNIMPLEMENTED, "%s: output_operand_aliases entry %d is not one "
                         "result aliasing an operand of its size", T, k);
    alias[j] = (int32_t)opi;
  }
  const cj_attr *cfg = cj_op_attr(op, "mhlo.backend_config");
  if (cfg && cfg->kind != CJ_ATTR_DICT) cfg = NULL;
  if (!cfg) {
    const cj_attr *bc = cj_op_attr(op, "backend_config");
    if (bc && bc->kind == CJ_ATTR_DICT) cfg = bc;
  }
  cj_status st = cj_ffi_attrs_build(cfg, lw_alloc, L, &p->attrs);
  if (st) {
    cj_status e = cj_op_error(op, cj_status_code(st), "%s: %s", T, cj_status_message(st));
    cj_status_free(st);
    return e;
  }
  p->arg_tmpl = at;
  p->ret_tmpl = rt;
  p->ret_alias = alias;
  p->ret_bytes = rbytes;
  const char *where = cj_lw_what(L, op);
  size_t wl = strlen(T) + strlen(where) + 4;
  char *w = cj_lw_alloc(L, wl);
  if (!w) return cj_oom();
  snprintf(w, wl, "%s (%s)", T, where);
  p->what = w;
  cj_step *s = cj_lw_emit(L, op, k_ffi_call, p, (uint32_t)na, ins, (uint32_t)nr, outs);
  if (!s) return cj_oom();
  return NULL;
}
