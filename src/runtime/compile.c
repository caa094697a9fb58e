/* cjrt: the compile driver (see compile.h). */
#include "runtime/compile.h"

#include <stdlib.h>
#include <string.h>

#include "base/hash.h"
#include "compiler/compiler.h"
#include "frontend/frontend.h"

/* The compiler's "runs it natively" hook, answered by the backend. */
static bool native_op(const cj_op *op, void *ctx) {
  cj_backend *b = ctx;
  return b->vt->supports_op(b, op, NULL);
}

/* Ops the compiler passes handle (calls, composites, functions, terminators) are not asked. */
static CJ_MUST_USE cj_status check_supported(cj_backend *be, cj_block *b) {
  for (cj_op *op = b->first; op; op = op->next) {
    bool passes_handle = op->kind == CJ_OP_FUNC_CALL || op->kind == CJ_OP_COMPOSITE ||
                         op->kind == CJ_OP_FUNC ||
                         (cj_op_info_get(op->kind)->flags & CJ_OPF_TERMINATOR);
    const char *why = NULL;
    if (!passes_handle && !be->vt->supports_op(be, op, &why))
      return cj_op_error(op, CJ_UNIMPLEMENTED, "%s",
                         why ? why : "not supported by this backend");
    for (uint32_t r = 0; r < op->nregions; r++)
      for (cj_block *nb = op->regions[r].first; nb; nb = nb->next)
        CJ_RETURN_IF_ERROR(check_supported(be, nb));
  }
  return NULL;
}

void cj_compiled_free(cj_compiled *c) {
  if (!c) return;
  if (c->program) c->backend->vt->program_free(c->program);
  free(c->text);
  free(c->shown);
  free(c->name);
  cj_compile_options_storage_free(&c->opts);
  free(c);
}

static CJ_MUST_USE cj_status fingerprint(const cj_compiled *c, uint64_t out[2]) {
  void *ob = NULL;
  size_t olen = 0;
  /* without the options the fingerprint could not tell programs apart */
  CJ_RETURN_IF_ERROR(cj_compile_options_write(&c->opts.opts, &ob, &olen));
  uint64_t h1 = cj_fnv64(c->text, c->text_len, CJ_FNV64_SEED);
  h1 = cj_fnv64(ob, olen, h1);
  uint64_t h2 = cj_fnv64(c->text, c->text_len, 0x84222325cbf29ce4ull ^ (uint64_t)c->text_len);
  h2 = cj_fnv64(ob, olen, h2);
  free(ob);
  out[0] = h1;
  out[1] = h2;
  return NULL;
}

static CJ_MUST_USE cj_status compile(cj_backend *b, cj_module *m, const cj_compile_options *opts,
                         cj_compiled *c) {
  CJ_RETURN_IF_ERROR(cj_compile_options_copy(opts, &c->opts));
  cj_op *main = NULL;
  cj_compile_hooks hooks = {native_op, b};
  CJ_RETURN_IF_ERROR(cj_compile_passes(m, &hooks, &main));
  /* the optimized program, printed once: OptimizedProgram, the fingerprint, Serialize */
  CJ_RETURN_IF_ERROR(cj_print_module(m, CJ_PRINT_GENERIC, &c->text, &c->text_len));
  char *pretty = NULL;
  size_t plen = 0;
  cj_status ps = cj_print_module(m, 0, &pretty, &plen);
  if (ps) {
    cj_status_ignore(ps); /* the generic form is enough */
    pretty = NULL;
  }
  const char *shown = pretty ? pretty : c->text;
  size_t slen = pretty ? plen : c->text_len;
  c->shown = malloc(slen + 1);
  c->name = strdup(m->name ? m->name : "main");
  if (c->shown) {
    memcpy(c->shown, shown, slen);
    c->shown[slen] = 0;
  }
  free(pretty);
  if (!c->shown || !c->name) return cj_oom();
  /* late calls were kept for the printed program; lowering wants one function */
  CJ_RETURN_IF_ERROR(cj_compile_late_inline(m, main));
  CJ_RETURN_IF_ERROR(check_supported(b, cj_func_body(main)));
  CJ_RETURN_IF_ERROR(b->vt->lower(b, m, main, &c->opts.opts, &c->program));
  const cj_program_info *bi = b->vt->program_info(c->program);
  if (!bi) return cj_internal("the %s backend gave no description of the compiled program",
                              b->vt->name);
  c->info = *bi;
  c->info.name = c->name;
  c->info.num_replicas = c->opts.opts.num_replicas;
  c->info.num_partitions = c->opts.opts.num_partitions;
  c->info.device_assignment = c->opts.opts.device_assignment;
  c->info.optimized_text = c->shown;
  c->info.optimized_len = slen;
  return fingerprint(c, c->info.fingerprint);
}

cj_status cj_compile_module(cj_backend *backend, cj_module *m, const cj_compile_options *opts,
                            cj_compiled **out) {
  *out = NULL;
  if (!m) return cj_invalid("compile: no module");
  if (!backend) {
    cj_module_free(m);
    return cj_invalid("compile: no backend");
  }
  cj_compiled *c = calloc(1, sizeof *c);
  if (!c) {
    cj_module_free(m);
    return cj_oom();
  }
  c->backend = backend;
  cj_compile_options defaults = {1, 1, NULL, false, false};
  cj_status st = compile(backend, m, opts ? opts : &defaults, c);
  cj_module_free(m);
  if (st) {
    cj_compiled_free(c);
    return st;
  }
  *out = c;
  return NULL;
}

cj_status cj_compile_text(cj_backend *backend, const char *text, size_t len,
                          const cj_compile_options *opts, cj_compiled **out) {
  *out = NULL;
  cj_module *m = NULL;
  cj_status st = cj_parse_mlir_text(text, len, "<serialized program>", &m);
  if (!st) st = cj_verify_module(m);
  if (st) {
    cj_module_free(m);
    return st;
  }
  return cj_compile_module(backend, m, opts, out);
}
