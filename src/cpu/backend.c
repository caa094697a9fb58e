/* cjrt: the CPU backend: every slot of src/runtime/backend.h.
 *
 * compile = the compiler passes (src/compiler/) + the lowering into a plan (lower.c) + the
 * program's description (shapes, donation, fingerprint, cost, memory, optimized text).
 * execute = take a scratch arena from the program's pool (allocated only the first time a
 * concurrency level is reached), fix the bases, run the plan.
 * serialize = a versioned container of ours holding the compile options and the optimized
 * module as generic MLIR text, with a checksum; deserialize re-parses and recompiles it (a few
 * milliseconds) and rejects corrupted bytes with INVALID_ARGUMENT.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/hash.h"
#include "compiler/compiler.h"
#include "cpu/alloc.h"
#include "cpu/launch.h"
#include "cpu/lower.h"
#include "cpu/program.h"
#include "frontend/compile_options.h"
#include "frontend/frontend.h"
#include "runtime/backend.h"

bool cj_cpu_can_lower(const cj_op *op, const char **why);

/* ======================================================================== memory */

/* Device memory: 64-byte aligned blocks; freed large blocks are cached by size class (bounded,
 * trimmed when idle) so that fresh result buffers do not page-fault (alloc.c). */
static void *cpu_alloc(cj_backend *b, size_t bytes) {
  (void)b;
  return cj_mem_alloc(bytes);
}

static void cpu_free(cj_backend *b, void *p) {
  (void)b;
  cj_mem_free(p);
}

static CJ_MUST_USE cj_status cpu_copy(cj_backend *b, void *dst, const void *src, size_t n) {
  (void)b;
  if (n) memmove(dst, src, n);
  return NULL;
}

/* ======================================================================== ops */

static bool native_op(const cj_op *op, void *ctx) {
  (void)ctx;
  return cj_lw_ew_is_fusible(op);
}

static bool cpu_supports_op(cj_backend *b, const cj_op *op, const char **why) {
  (void)b;
  if (op->kind == CJ_OP_FUNC_CALL || op->kind == CJ_OP_COMPOSITE || op->kind == CJ_OP_FUNC ||
      (cj_op_info_get(op->kind)->flags & CJ_OPF_TERMINATOR))
    return true; /* handled by the compiler passes */
  return cj_cpu_can_lower(op, why);
}

/* ======================================================================== hashing */


/* ======================================================================== programs */

static void program_free(cj_program *p) {
  if (!p) return;
  cj_scratch *s = p->free_scratch;
  while (s) {
    cj_scratch *next = s->next;
    for (int i = 0; i < s->ntls; i++) free(s->tls[i].mem);
    free(s->tls);
    free(s->arena);
    free(s->bases);
    free(s);
    s = next;
  }
  pthread_mutex_destroy(&p->mu);
  free(p->consts);
  free(p->text);
  cj_compile_options_storage_free(&p->opts);
  cj_arena_release(&p->arena);
  free(p);
}

static CJ_MUST_USE cj_status check_supported(cj_block *b) {
  for (cj_op *op = b->first; op; op = op->next) {
    const char *why = NULL;
    if (!cpu_supports_op(NULL, op, &why))
      return cj_op_error(op, CJ_UNIMPLEMENTED, "%s", why ? why : "not supported by the CPU backend");
    for (uint32_t r = 0; r < op->nregions; r++)
      for (cj_block *nb = op->regions[r].first; nb; nb = nb->next) CJ_RETURN_IF_ERROR(check_supported(nb));
  }
  return NULL;
}

static CJ_MUST_USE cj_status compile_module(cj_module *m, const cj_compile_options *opts, cj_program **out) {
  *out = NULL;
  cj_program *p = calloc(1, sizeof *p);
  if (!p) return cj_oom();
  pthread_mutex_init(&p->mu, NULL);
  cj_arena_init(&p->arena);
  cj_status st = cj_compile_options_copy(opts, &p->opts);
  cj_op *main = NULL;
  cj_compile_hooks hooks = {native_op, NULL};
  if (!st) st = cj_compile_passes(m, &hooks, &main);
  /* the optimized program, printed once: OptimizedProgram, the fingerprint, Serialize */
  char *text = NULL;
  size_t tlen = 0;
  if (!st) st = cj_print_module(m, CJ_PRINT_GENERIC, &text, &tlen);
  if (!st) {
    p->text = text;
    p->text_len = tlen;
  } else {
    free(text);
  }
  char *pretty = NULL;
  size_t plen = 0;
  if (!st) {
    cj_status ps = cj_print_module(m, 0, &pretty, &plen);
    if (ps) { /* the generic form is enough */
      cj_status_ignore(ps); /* the generic form is enough */
      pretty = NULL;
    }
  }
  /* late calls were kept for the printed program; lowering wants one function */
  if (!st) st = cj_compile_late_inline(m, main);
  if (!st) st = check_supported(cj_func_body(main));
  cj_lower_result lr;
  memset(&lr, 0, sizeof lr);
  if (!st) st = cj_cpu_lower(m, main, &p->arena, &lr);
  if (!st) {
    cj_program_info *in = &p->info;
    in->name = cj_arena_strdup(&p->arena, m->name ? m->name : "main");
    in->num_args = lr.nargs;
    in->num_results = lr.nresults;
    in->args = lr.args;
    in->results = lr.results;
    in->result_donor = lr.result_donor;
    in->num_replicas = p->opts.opts.num_replicas;
    in->num_partitions = p->opts.opts.num_partitions;
    in->device_assignment = p->opts.opts.device_assignment;
    void *ob = NULL;
    size_t olen = 0;
    cj_status os = cj_compile_options_write(&p->opts.opts, &ob, &olen);
    if (!st) st = os; /* without the options the fingerprint could not tell programs apart */
    else cj_status_ignore(os); /* the first error is the one to report */
    uint64_t h1 = cj_fnv64(p->text, p->text_len, CJ_FNV64_SEED);
    h1 = cj_fnv64(ob, olen, h1);
    uint64_t h2 = cj_fnv64(p->text, p->text_len, 0x84222325cbf29ce4ull ^ (uint64_t)p->text_len);
    h2 = cj_fnv64(ob, olen, h2);
    free(ob);
    in->fingerprint[0] = h1;
    in->fingerprint[1] = h2;
    in->flops = lr.flops;
    in->bytes_accessed = lr.bytes_accessed;
    in->transcendentals = lr.transcendentals;
    in->temp_bytes = lr.scratch_bytes;
    in->constant_bytes = lr.const_bytes;
    in->code_bytes = (int64_t)(lr.plan.nsteps * sizeof(cj_step));
    const char *shown = pretty ? pretty : p->text;
    size_t slen = pretty ? plen : p->text_len;
    char *ot = cj_arena_alloc(&p->arena, slen + 1);
    if (!ot || !in->name) {
      st = cj_oom();
    } else {
      memcpy(ot, shown, slen);
      ot[slen] = 0;
      in->optimized_text = ot;
      in->optimized_len = slen;
    }
    p->plan = lr.plan;
    p->consts = lr.consts;
    p->const_bytes = lr.const_bytes;
    p->scratch_bytes = lr.scratch_bytes;
    p->tls_bytes = lr.tls_bytes;
    p->nargs = lr.nargs;
    p->nresults = lr.nresults;
    lr.consts = NULL;
  }
  free(lr.consts);
  free(pretty);
  cj_module_free(m);
  if (st) {
    program_free(p);
    return st;
  }
  *out = p;
  return NULL;
}

static CJ_MUST_USE cj_status cpu_compile(cj_backend *b, cj_module *m, const cj_compile_options *opts,
                             cj_program **out) {
  (void)b;
  *out = NULL;
  if (!m) return cj_invalid("compile: no module");
  cj_compile_options defaults = {1, 1, NULL, false, false};
  return compile_module(m, opts ? opts : &defaults, out);
}

static const cj_program_info *cpu_program_info(const cj_program *p) { return p ? &p->info : NULL; }

static void cpu_program_free(cj_program *p) { program_free(p); }

/* ======================================================================== serialization */

/* Layout (little-endian):
 *   "CJRTPRG\0"  magic (8 bytes)
 *   u32 version (1), u32 flags (0)
 *   u64 options length, options bytes (xla.CompileOptionsProto, our writer)
 *   u64 text length, text bytes (the optimized module, generic MLIR)
 *   u64 FNV-1a checksum of everything before it */
static const char kMagic[8] = {'C', 'J', 'R', 'T', 'P', 'R', 'G', 0};
enum { kVersion = 1 };

static CJ_MUST_USE cj_status cpu_program_serialize(const cj_program *p, void **out, size_t *len) {
  *out = NULL;
  *len = 0;
  if (!p) return cj_invalid("serialize: no program");
  void *ob = NULL;
  size_t olen = 0;
  CJ_RETURN_IF_ERROR(cj_compile_options_write(&p->opts.opts, &ob, &olen));
  size_t total = 8 + 4 + 4 + 8 + olen + 8 + p->text_len + 8;
  unsigned char *buf = malloc(total);
  if (!buf) {
    free(ob);
    return cj_oom();
  }
  size_t k = 0;
  memcpy(buf, kMagic, 8);
  k = 8;
  uint32_t ver = kVersion, flags = 0;
  memcpy(buf + k, &ver, 4);
  k += 4;
  memcpy(buf + k, &flags, 4);
  k += 4;
  uint64_t v = olen;
  memcpy(buf + k, &v, 8);
  k += 8;
  if (olen) memcpy(buf + k, ob, olen);
  k += olen;
  v = p->text_len;
  memcpy(buf + k, &v, 8);
  k += 8;
  if (p->text_len) memcpy(buf + k, p->text, p->text_len);
  k += p->text_len;
  uint64_t h = cj_fnv64(buf, k, CJ_FNV64_SEED);
  memcpy(buf + k, &h, 8);
  k += 8;
  free(ob);
  *out = buf;
  *len = k;
  return NULL;
}

static CJ_MUST_USE cj_status cpu_program_deserialize(cj_backend *b, const void *data, size_t len,
                                         cj_program **out) {
  (void)b;
  *out = NULL;
  const unsigned char *d = data;
  if (!d || len < 8 + 4 + 4 + 8 + 8 + 8)
    return cj_invalid("deserialize: %zu bytes is too short for a cjrt program", len);
  if (memcmp(d, kMagic, 8) != 0) return cj_invalid("deserialize: not a cjrt program (bad magic)");
  uint32_t ver;
  memcpy(&ver, d + 8, 4);
  if (ver != kVersion)
    return cj_invalid("deserialize: program format version %u, this build reads version %u", ver,
                      (unsigned)kVersion);
  uint64_t h;
  memcpy(&h, d + len - 8, 8);
  if (cj_fnv64(d, len - 8, CJ_FNV64_SEED) != h)
    return cj_invalid("deserialize: checksum mismatch (corrupted program bytes)");
  size_t k = 16;
  uint64_t olen, tlen;
  memcpy(&olen, d + k, 8);
  k += 8;
  if (olen > len - k - 16) return cj_invalid("deserialize: bad options length");
  const unsigned char *ob = d + k;
  k += olen;
  memcpy(&tlen, d + k, 8);
  k += 8;
  if (tlen != len - k - 8) return cj_invalid("deserialize: bad program text length");
  const char *text = (const char *)d + k;
  cj_compile_options_storage os;
  CJ_RETURN_IF_ERROR(cj_compile_options_read(ob, olen, &os));
  cj_module *m = NULL;
  cj_status st = cj_parse_mlir_text(text, tlen, "<serialized program>", &m);
  if (!st) st = cj_verify_module(m);
  if (st) {
    cj_module_free(m);
    cj_compile_options_storage_free(&os);
    return cj_status_annotate(st, "deserialize");
  }
  st = compile_module(m, &os.opts, out);
  cj_compile_options_storage_free(&os);
  return st;
}

/* ======================================================================== launches */

static CJ_MUST_USE cj_status cpu_launch_create(cj_backend *b, const cj_program *p, int32_t n, cj_launch **out) {
  (void)b;
  *out = NULL;
  /* the grid of the program (src/cpu/launch.c: meetings and mailboxes for collectives) */
  int64_t nr = p ? p->info.num_replicas : 1, np = p ? p->info.num_partitions : 1;
  if (nr < 1 || np < 1 || nr * np != n)
    return cj_internal("launch: %d devices for a program of %lld replicas x %lld partitions", n,
                       (long long)nr, (long long)np);
  return cj_cpu_launch_new((int32_t)nr, (int32_t)np, out);
}

static void cpu_launch_destroy(cj_launch *l) { cj_cpu_launch_free(l); }
static void cpu_launch_abort(cj_launch *l, cj_status why) { cj_cpu_launch_abort(l, why); }

/* ======================================================================== execution */

static cj_scratch *scratch_new(const cj_program *p, int ntls) {
  cj_scratch *s = calloc(1, sizeof *s);
  if (!s) return NULL;
  size_t ab = (size_t)((p->scratch_bytes + 63) & ~(int64_t)63);
  s->arena = aligned_alloc(64, ab ? ab : 64);
  s->arena_bytes = ab;
  s->bases = calloc((size_t)(2 + p->nargs + p->nresults), sizeof(char *));
  if (ntls > 64) ntls = 64;
  s->ntls = p->tls_bytes > 0 ? ntls : 0;
  s->tls = calloc((size_t)(s->ntls ? s->ntls : 1), sizeof(cj_tls_area));
  bool ok = s->arena && s->bases && s->tls;
  for (int i = 0; ok && i < s->ntls; i++) {
    size_t tb = (size_t)((p->tls_bytes + 63) & ~(int64_t)63);
    s->tls[i].mem = aligned_alloc(64, tb);
    s->tls[i].bytes = tb;
    if (!s->tls[i].mem) ok = false;
  }
  if (!ok) {
    for (int i = 0; i < s->ntls; i++) free(s->tls[i].mem);
    free(s->tls);
    free(s->arena);
    free(s->bases);
    free(s);
    return NULL;
  }
  return s;
}

static CJ_MUST_USE cj_status cpu_execute(cj_backend *b, const cj_program *cp, const cj_exec_args *args) {
  (void)b;
  cj_program *p = (cj_program *)cp;
  if (!p || !args) return cj_invalid("execute: no program or arguments");
  if ((p->nargs && !args->args) || (p->nresults && !args->results))
    return cj_invalid("execute: missing argument or result pointers");
  int ntls = args->pool ? cj_pool_size(args->pool) + 1 : 2;
  pthread_mutex_lock(&p->mu);
  cj_scratch *s = p->free_scratch, *prev = NULL;
  while (s && s->ntls && s->ntls < ntls) { /* a pool with more threads needs more areas */
    prev = s;
    s = s->next;
  }
  if (s) {
    if (prev)
      prev->next = s->next;
    else
      p->free_scratch = s->next;
  }
  pthread_mutex_unlock(&p->mu);
  if (!s) {
    s = scratch_new(p, ntls);
    if (!s) return cj_oom();
  }
  atomic_store(&s->tls_busy, 0);
  s->bases[CJ_BASE_SCRATCH] = s->arena;
  s->bases[CJ_BASE_CONST] = p->consts;
  for (int32_t i = 0; i < p->nargs; i++) s->bases[CJ_BASE_ARG0 + i] = args->args[i];
  for (int32_t j = 0; j < p->nresults; j++) s->bases[CJ_BASE_ARG0 + p->nargs + j] = args->results[j];
  cj_exec_ctx ctx;
  ctx.bases = s->bases;
  ctx.nbases = 2 + p->nargs + p->nresults;
  ctx.scratch = s;
  ctx.pool = args->pool;
  ctx.args = args;
  cj_status st = cj_plan_run(&ctx, &p->plan);
  if (args->launch) /* peers still waiting for this device at a collective fail, naming it */
    cj_cpu_launch_finished(args->launch,
                           args->replica * cj_cpu_launch_partitions(args->launch) + args->partition);
  pthread_mutex_lock(&p->mu);
  s->next = p->free_scratch;
  p->free_scratch = s;
  pthread_mutex_unlock(&p->mu);
  return st;
}

static const cj_backend_vtable cpu_vtable = {
    .name = "cpu",
    .memory_is_host = true,
    .alloc = cpu_alloc,
    .free = cpu_free,
    .copy_to_device = cpu_copy,
    .copy_to_host = cpu_copy,
    .supports_op = cpu_supports_op,
    .compile = cpu_compile,
    .program_info = cpu_program_info,
    .program_free = cpu_program_free,
    .program_serialize = cpu_program_serialize,
    .program_deserialize = cpu_program_deserialize,
    .launch_create = cpu_launch_create,
    .launch_destroy = cpu_launch_destroy,
    .launch_abort = cpu_launch_abort,
    .execute = cpu_execute,
};

static cj_backend cpu_backend = {&cpu_vtable};

cj_backend *cj_backend_cpu(void) { return &cpu_backend; }
