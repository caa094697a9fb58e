/* cjrt: executables, loading and execution (see executable.h). */
#include "base/hash.h"
#include "runtime/executable.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "compiler/compiler.h"
#include "compiler/spmd.h"
#include "runtime/compile.h"
#include "frontend/compile_options.h"
#include "frontend/frontend.h"
#include "frontend/proto_wire.h"
#include "ir/ir.h"

/* ------------------------------------------------------------------------------------------ */
/* Small helpers                                                                               */


/* The writers below append to a protobuf writer's buffer (frontend/proto_wire.h). */
typedef cj_pb_buf wbuf;

static void w_u32(wbuf *w, uint32_t v) {
  unsigned char b[4];
  for (int i = 0; i < 4; i++) b[i] = (unsigned char)(v >> (8 * i));
  cj_pb_put_bytes(w, b, 4);
}

static void w_u64(wbuf *w, uint64_t v) {
  unsigned char b[8];
  for (int i = 0; i < 8; i++) b[i] = (unsigned char)(v >> (8 * i));
  cj_pb_put_bytes(w, b, 8);
}

static uint32_t rd_u32(const unsigned char *p) {
  uint32_t v = 0;
  for (int i = 3; i >= 0; i--) v = (v << 8) | p[i];
  return v;
}

static uint64_t rd_u64(const unsigned char *p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; i--) v = (v << 8) | p[i];
  return v;
}

/* ------------------------------------------------------------------------------------------ */
/* Executables                                                                                 */

bool cj_executable_check(const void *p) { return cj_object_is(p, CJ_TAG_EXECUTABLE); }

void cj_executable_retain(cj_executable *e) { cj_object_retain(&e->hdr); }

static void executable_free(cj_executable *e) {
  if (e->front_free) e->front_free(e->front);
  cj_compiled_free(e->compiled);
  free(e->options);
  free(e->assignment);
  free(e);
}

void cj_executable_release(cj_executable *e) {
  if (e && cj_object_release(&e->hdr)) executable_free(e);
}

void cj_executable_set_front(cj_executable *e, void *front, void (*free_fn)(void *)) {
  e->front = front;
  e->front_free = free_fn;
}

/* Wraps a compiled program (consumed) with the options it was compiled from (copied). The
 * device assignment is `assignment` (copied; NULL = none) for `nr` x `np` devices. */
static CJ_MUST_USE cj_status executable_new(cj_compiled *compiled, const void *options, size_t options_len,
                                const int64_t *assignment, cj_executable **out) {
  *out = NULL;
  cj_executable *e = calloc(1, sizeof *e);
  if (!e) {
    cj_compiled_free(compiled);
    return cj_oom();
  }
  cj_object_init(&e->hdr, CJ_TAG_EXECUTABLE);
  e->compiled = compiled;
  e->backend = compiled->backend;
  e->program = compiled->program;
  e->info = &compiled->info;
  e->num_replicas = e->info->num_replicas > 0 ? e->info->num_replicas : 1;
  e->num_partitions = e->info->num_partitions > 0 ? e->info->num_partitions : 1;
  if (options_len) {
    e->options = malloc(options_len);
    if (!e->options) {
      executable_free(e);
      return cj_oom();
    }
    memcpy(e->options, options, options_len);
    e->options_len = options_len;
  }
  if (assignment) {
    size_t n = (size_t)(e->num_replicas * e->num_partitions);
    e->assignment = malloc(n * sizeof(int64_t));
    if (!e->assignment) {
      executable_free(e);
      return cj_oom();
    }
    memcpy(e->assignment, assignment, n * sizeof(int64_t));
  }
  snprintf(e->fingerprint, sizeof e->fingerprint, "%016llx%016llx",
           (unsigned long long)e->info->fingerprint[0],
           (unsigned long long)e->info->fingerprint[1]);
  *out = e;
  return NULL;
}

/* Checks that the client can run nr x np devices with `ids` (replica-major global ids; NULL =
 * the client's default assignment) and writes the devices to out_devices (may be NULL). */
static CJ_MUST_USE cj_status resolve_assignment(cj_client *c, int64_t nr, int64_t np, const int64_t *ids,
                                    int64_t *out_ids, cj_device **out_devices) {
  if (nr < 1 || np < 1)
    return cj_invalid("%lld replicas x %lld partitions is not a valid device assignment",
                      (long long)nr, (long long)np);
  int64_t n = nr * np;
  if (n > c->nall_devices)
    return cj_invalid("the program needs %lld replicas x %lld partitions = %lld devices, but the "
                      "client has only %d",
                      (long long)nr, (long long)np, (long long)n, c->nall_devices);
  if (!ids) {
    int *def = malloc(sizeof(int) * (size_t)n);
    if (!def) return cj_oom();
    cj_status st = cj_client_default_assignment(c, (int)nr, (int)np, def);
    for (int64_t i = 0; !st && i < n; i++) {
      if (out_ids) out_ids[i] = def[i];
      if (out_devices) out_devices[i] = cj_client_lookup_device(c, def[i]);
    }
    free(def);
    return st;
  }
  bool *seen = calloc((size_t)c->nall_devices, sizeof(bool));
  if (!seen) return cj_oom();
  cj_status st = NULL;
  for (int64_t i = 0; i < n && !st; i++) {
    cj_device *d = ids[i] >= 0 && ids[i] <= INT32_MAX ? cj_client_lookup_device(c, (int)ids[i])
                                                        : NULL;
    if (!d)
      st = cj_invalid("the device assignment names device %lld (replica %lld, partition %lld), "
                      "which the client does not have (it has devices 0..%d)",
                      (long long)ids[i], (long long)(i / np), (long long)(i % np),
                      c->nall_devices - 1);
    else if (seen[d->index])
      st = cj_invalid("the device assignment names device %lld twice", (long long)ids[i]);
    else {
      seen[d->index] = true;
      if (out_ids) out_ids[i] = ids[i];
      if (out_devices) out_devices[i] = d;
    }
  }
  free(seen);
  return st;
}

/* ---- what the module needs, looked at before the backend consumes it ---- */

/* Whether a sharding attribute splits its value across devices: an mhlo.sharding string with a
 * tile assignment of more than one tile (a replicated last dim aside), or an #sdy.sharding
 * naming a mesh axis on some dimension. */
static bool sharding_splits(const cj_attr *a) {
  if (!a) return false;
  const char *t = NULL;
  size_t n = 0;
  if (a->kind == CJ_ATTR_OPAQUE) {
    t = a->opaque.text;
    n = a->opaque.len;
    for (size_t i = 0; i + 1 < n; i++)
      if (t[i] == '{' && t[i + 1] == '"') return true;
    return false;
  }
  if (!cj_attr_get_str(a, &t, &n)) return false;
  char buf[512];
  size_t k = n < sizeof buf - 1 ? n : sizeof buf - 1;
  memcpy(buf, t, k);
  buf[k] = 0;
  const char *d = strstr(buf, "devices=[");
  if (!d) return false;
  d += 9;
  int64_t dims[32];
  int nd = 0;
  while (*d && *d != ']' && nd < 32) {
    dims[nd++] = strtoll(d, (char **)&d, 10);
    if (*d == ',') d++;
    else if (*d != ']') break;
  }
  if (strstr(buf, "last_tile_dim_replicate") && nd > 0) nd--;
  int64_t tiles = 1;
  for (int i = 0; i < nd; i++) tiles *= dims[i] > 0 ? dims[i] : 1;
  return tiles > 1;
}

static bool dict_splits(const cj_attr *dict, const char **which) {
  if (!dict || dict->kind != CJ_ATTR_DICT) return false;
  for (int32_t k = 0; k < dict->dict.n; k++) {
    const char *nm = dict->dict.items[k].name;
    if ((!strcmp(nm, "mhlo.sharding") || !strcmp(nm, "sdy.sharding")) &&
        sharding_splits(dict->dict.items[k].value)) {
      *which = nm;
      return true;
    }
  }
  return false;
}

typedef struct module_scan {
  bool has_loop;
  bool has_collectives; /* devices meet (collectives, send/recv between devices) */
  const cj_op *spmd_op; /* an op that only means something to an SPMD partitioner */
} module_scan;

static CJ_MUST_USE cj_status scan_op(cj_op *op, void *ctx) {
  module_scan *s = ctx;
  if (op->kind == CJ_OP_WHILE) s->has_loop = true;
  switch (op->kind) {
    case CJ_OP_ALL_GATHER:
    case CJ_OP_ALL_REDUCE:
    case CJ_OP_REDUCE_SCATTER:
    case CJ_OP_ALL_TO_ALL:
    case CJ_OP_COLLECTIVE_PERMUTE:
    case CJ_OP_COLLECTIVE_BROADCAST:
    case CJ_OP_COLLECTIVE_REDUCE:
    case CJ_OP_SEND:
    case CJ_OP_RECV:
      s->has_collectives = true;
      break;
    default:
      break;
  }
  if (!s->spmd_op) {
    if (op->kind == CJ_OP_SDY_MANUAL_COMPUTATION) s->spmd_op = op;
    if (op->kind == CJ_OP_CUSTOM_CALL) {
      const cj_attr *t = cj_op_attr(op, "call_target_name");
      const char *v;
      size_t n;
      if (t && cj_attr_get_str(t, &v, &n) &&
          ((n == 20 && !memcmp(v, "SPMDFullToShardShape", 20)) ||
           (n == 20 && !memcmp(v, "SPMDShardToFullShape", 20))))
        s->spmd_op = op;
    }
  }
  return NULL;
}

/* cjrt runs every partition of a multi-partition program on the program as written: right for
 * replicated programs, wrong for programs over global shapes that an SPMD partitioner would
 * split. Those fail here, naming what is missing, rather than at execution with shapes that do
 * not match. */
static CJ_MUST_USE cj_status check_partitioning(cj_module *m, const cj_compile_options *o, module_scan *scan) {
  CJ_RETURN_IF_ERROR(cj_walk_module(m, scan_op, scan));
  if (o->num_partitions <= 1 || !o->use_spmd_partitioning) return NULL;
  if (scan->spmd_op)
    return cj_op_error(scan->spmd_op, CJ_UNIMPLEMENTED,
                       "SPMD partitioning is not implemented by cjrt: this program is written "
                       "for %lld partitions with manual sharding (run it on one device, or "
                       "replicate its inputs)",
                       (long long)o->num_partitions);
  cj_op *main = cj_module_main(m);
  const cj_type *ft = main ? cj_func_type(main) : NULL;
  if (!ft) return NULL;
  for (int side = 0; side < 2; side++) {
    bool res = side == 1;
    for (int32_t i = 0; i < (res ? ft->nresults : ft->rank); i++) {
      const char *which = NULL;
      const cj_attr *attrs =
          res ? cj_func_res_attrs(main, (uint32_t)i) : cj_func_arg_attrs(main, (uint32_t)i);
      if (dict_splits(attrs, &which))
        return cj_unimplemented("SPMD partitioning is not implemented by cjrt: %s %d of "
                                "@main is sharded (%s) across the program's %lld partitions; "
                                "replicate the %s or run on one device",
                                res ? "result" : "argument", i, which,
                                (long long)o->num_partitions, res ? "outputs" : "inputs");
    }
  }
  return NULL;
}

/* Short programs: loop-free and under this cost (flops + bytes accessed; 2^25 is about
 * 0.2-0.6 ms on one core here). They run on the thread that starts them when their arguments are
 * ready, and their parallel loops never wake a sleeping pool worker: each hand-off (to a task
 * thread, back to the caller, to a worker) costs a futex wake-up of ~70 us on these VMs, as much
 * as a second core can save on such a program (docs/PERFORMANCE.md, "short programs and
 * wake-ups"). */
#define CJ_INLINE_COST 33554432.0
/* The estimate can be far off (a sort, a custom call): a short program whose executions take
 * over CJ_SHORT_NS CJ_SHORT_STRIKES times in a row (so that one preempted run does not count) is
 * not short after all. */
#define CJ_SHORT_NS 2000000u
#define CJ_SHORT_STRIKES 3
/* ... and a program that is not short by its estimate (it has a loop, whose trip count the
 * estimate cannot know, or it was overestimated) is short after all when CJ_PROMOTE_RUNS of its
 * executions in a row on a task thread took under CJ_PROMOTE_NS each (a conjugate-gradient
 * while loop that converges in 0.2 ms paid two hand-offs of ~70 us per execution). A quarter of
 * CJ_SHORT_NS: a promoted program that loses the sleeping workers' help still stays below it. A
 * long loop (JAX's dispatch must stay asynchronous for it) is never promoted. */
#define CJ_PROMOTE_NS 500000u
#define CJ_PROMOTE_RUNS 3

static bool exec_short(const cj_executable *e) {
  return (e->run_inline || atomic_load_explicit(&e->proven_short, memory_order_relaxed)) &&
         !atomic_load_explicit(&e->not_short, memory_order_relaxed);
}

static uint64_t mono_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* One execution of a short program took `ns`. */
static void note_short_run(cj_executable *e, uint64_t ns) {
  if (ns <= CJ_SHORT_NS) {
    if (atomic_load_explicit(&e->long_runs, memory_order_relaxed))
      atomic_store_explicit(&e->long_runs, 0, memory_order_relaxed);
  } else if (atomic_fetch_add_explicit(&e->long_runs, 1, memory_order_relaxed) + 1 >=
             CJ_SHORT_STRIKES) {
    atomic_store_explicit(&e->not_short, true, memory_order_relaxed);
  }
}

/* One execution of a program that is not (yet) short took `ns` on a task thread. */
static void note_task_run(cj_executable *e, uint64_t ns) {
  if (ns > CJ_PROMOTE_NS) {
    if (atomic_load_explicit(&e->quick_runs, memory_order_relaxed))
      atomic_store_explicit(&e->quick_runs, 0, memory_order_relaxed);
  } else if (atomic_fetch_add_explicit(&e->quick_runs, 1, memory_order_relaxed) + 1 >=
                 CJ_PROMOTE_RUNS &&
             !atomic_load_explicit(&e->not_short, memory_order_relaxed)) {
    atomic_store_explicit(&e->proven_short, true, memory_order_relaxed);
  }
}

/* CJRT_DUMP_DIR=<dir>: every program compiled is written there as it was received,
 * <dir>/cjrt_<pid>_<n>.mlir (text or bytecode; .hlo.pb / .hlo_with_config.pb for HLO) and <dir>/cjrt_<pid>_<n>.options.pb (the
 * xla.CompileOptionsProto bytes), for debugging what a framework sends. Failures are ignored. */
static void dump_program(const void *code, size_t len, const void *options, size_t options_len,
                         const char *ext) {
  const char *dir = getenv("CJRT_DUMP_DIR");
  if (!dir || !*dir) return;
  static atomic_int counter;
  int n = atomic_fetch_add(&counter, 1);
  char path[4096];
  snprintf(path, sizeof path, "%s/cjrt_%ld_%d.%s", dir, (long)getpid(), n, ext);
  FILE *f = fopen(path, "wb");
  if (f) {
    if (len) fwrite(code, 1, len, f);
    fclose(f);
  }
  snprintf(path, sizeof path, "%s/cjrt_%ld_%d.options.pb", dir, (long)getpid(), n);
  f = fopen(path, "wb");
  if (f) {
    if (options_len) fwrite(options, 1, options_len, f);
    fclose(f);
  }
}

/* A shape-polymorphic program (entry arguments such as tensor<4x?xf32>) given the shapes it
 * will run with (the compile options' argument_layouts, which `cjrt run` sends) is refined to
 * them, as JAX refines its exports before compiling. Only dynamic arguments take the given
 * shape; static ones are left to the usual argument checks at execution. */
static CJ_MUST_USE cj_status refine_to_argument_shapes(cj_module *m, const cj_compile_options_storage *os) {
  if (os->nargs < 0) return NULL;
  cj_op *main = cj_module_main(m);
  cj_block *body = main ? cj_func_body(main) : NULL;
  if (!body) return NULL;
  bool dynamic = false;
  for (uint32_t i = 0; i < body->nargs; i++) {
    const cj_type *t = body->args[i].type;
    if (t->kind == CJ_TYPE_UNRANKED || (t->kind == CJ_TYPE_TENSOR && !cj_type_is_static(t)))
      dynamic = true;
  }
  if (!dynamic) return NULL;
  if ((uint32_t)os->nargs != body->nargs)
    return cj_op_error(main, CJ_INVALID_ARGUMENT,
                       "the entry function has dynamic argument shapes and takes %u arguments, "
                       "but the compile options give the shapes of %d",
                       body->nargs, os->nargs);
  const cj_type **types = calloc(body->nargs ? body->nargs : 1, sizeof *types);
  if (!types) return cj_oom();
  cj_status st = NULL;
  for (uint32_t i = 0; i < body->nargs && !st; i++) {
    const cj_type *t = body->args[i].type;
    if (t->kind == CJ_TYPE_TENSOR && cj_type_is_static(t)) continue;
    const cj_shape *a = &os->args[i];
    types[i] = cj_type_tensor_of(m, a->dtype, a->rank, a->dims);
    if (!types[i]) st = cj_oom();
  }
  cj_refine_args ra = {(int32_t)body->nargs, types, NULL};
  if (!st) st = cj_pass_refine(m, main, &ra);
  free(types);
  return st;
}

cj_status cj_executable_compile(cj_backend *backend, cj_client *client, const void *code,
                                size_t len, const void *options, size_t options_len,
                                cj_executable **out) {
  return cj_executable_compile_format(backend, client, CJ_PROGRAM_MLIR, code, len, options,
                                      options_len, out);
}

cj_status cj_executable_compile_format(cj_backend *backend, cj_client *client,
                                       cj_program_format format, const void *code, size_t len,
                                       const void *options, size_t options_len,
                                       cj_executable **out) {
  *out = NULL;
  if (!backend) return cj_invalid("no backend to compile with");
  if (!code && len) return cj_invalid("the program code is NULL but its size is %zu", len);
  if (!len) return cj_invalid("the program is empty");
  if (!options && options_len)
    return cj_invalid("compile_options is NULL but its size is %zu", options_len);
  dump_program(code, len, options, options_len,
               format == CJ_PROGRAM_MLIR ? "mlir" : format == CJ_PROGRAM_HLO ? "hlo.pb" : "hlo_with_config.pb");
  cj_compile_options_storage os;
  CJ_RETURN_IF_ERROR(cj_compile_options_read(options, options_len, &os));
  cj_status st = NULL;
  if (client)
    st = resolve_assignment(client, os.opts.num_replicas, os.opts.num_partitions,
                            os.opts.device_assignment, NULL, NULL);
  cj_module *m = NULL;
  if (!st && format == CJ_PROGRAM_MLIR) st = cj_read_program(code, len, "program", &m);
  else if (!st)
    st = cj_read_hlo_program(code, len,
                             format == CJ_PROGRAM_HLO ? CJ_HLO_PROTO : CJ_HLO_PROTO_WITH_CONFIG,
                             "program", &m);
  if (!st) st = cj_verify_module(m);
  if (!st) st = refine_to_argument_shapes(m, &os);
  /* the per-device program of shard_map/pmap programs (src/compiler/spmd.c) */
  if (!st) st = cj_spmd_partition(m, os.opts.num_replicas, os.opts.num_partitions);
  /* the partitioner rewrote types and attributes: a mistake of its own fails here, not later */
  if (!st && os.opts.num_replicas * os.opts.num_partitions > 1) st = cj_verify_module(m);
  module_scan scan = {false, false, NULL};
  if (!st) st = check_partitioning(m, &os.opts, &scan);
  if (st) {
    cj_module_free(m);
    cj_compile_options_storage_free(&os);
    return st;
  }
  cj_compiled *compiled = NULL;
  st = cj_compile_module(backend, m, &os.opts, &compiled); /* consumes m */
  if (!st) st = executable_new(compiled, options, options_len, os.opts.device_assignment, out);
  if (!st) {
    (*out)->run_inline = !scan.has_loop &&
                         (*out)->info->flops + (*out)->info->bytes_accessed < CJ_INLINE_COST;
    (*out)->has_collectives = scan.has_collectives;
  }
  cj_compile_options_storage_free(&os);
  return st;
}

/* Serialized executable (little-endian), written and read here for every backend:
 *   "CJRTEXEC"                 magic
 *   u32 version (2), u32 flags (bit 0: run_inline; bit 1: no collectives, so that bytes
 *                              written before the bit existed read as "may have collectives")
 *   u32 n, n bytes             the backend's name
 *   u64 n, n bytes             the compile options as received
 *   u64 n, n bytes             the optimized program (generic MLIR text, runtime/compile.h)
 *   u64                        FNV-1a 64 of everything before it
 * Reading compiles the text again through the compile driver (a few milliseconds): the passes
 * leave an optimized program as it is, so the fingerprint and the plan come out the same.
 * (Version 1 held the CPU backend's own container instead of the text.) */
static const char kExecMagic[8] = {'C', 'J', 'R', 'T', 'E', 'X', 'E', 'C'};
enum { kExecVersion = 2, kFlagInline = 1, kFlagNoCollectives = 2 };

cj_status cj_executable_serialize(const cj_executable *e, void **out, size_t *len) {
  *out = NULL;
  *len = 0;
  const cj_compiled *c = e->compiled;
  const char *bname = e->backend->vt->name;
  wbuf w = {0};
  cj_pb_put_bytes(&w, kExecMagic, 8);
  w_u32(&w, kExecVersion);
  w_u32(&w, (e->run_inline ? kFlagInline : 0) | (e->has_collectives ? 0 : kFlagNoCollectives));
  w_u32(&w, (uint32_t)strlen(bname));
  cj_pb_put_bytes(&w, bname, strlen(bname));
  w_u64(&w, e->options_len);
  cj_pb_put_bytes(&w, e->options, e->options_len);
  w_u64(&w, c->text_len);
  cj_pb_put_bytes(&w, c->text, c->text_len);
  if (!w.oom) w_u64(&w, cj_fnv64(w.p, w.n, CJ_FNV64_SEED));
  if (w.oom) {
    free(w.p);
    return cj_oom();
  }
  *out = w.p;
  *len = w.n;
  return NULL;
}

cj_status cj_executable_deserialize(cj_backend *backend, const void *data, size_t len,
                                    const void *override_options, size_t override_len,
                                    cj_executable **out) {
  *out = NULL;
  const unsigned char *d = data;
  const size_t fixed = 8 + 4 + 4 + 4 + 8 + 8 + 8;
  if (!d && len) return cj_invalid("the serialized executable is NULL but its size is %zu", len);
  if (len < 8 || memcmp(d, kExecMagic, 8) != 0)
    return cj_invalid("these %zu bytes are not a serialized cjrt executable (bad magic)", len);
  if (len < fixed)
    return cj_invalid("%zu bytes are too few for a serialized cjrt executable", len);
  uint32_t version = rd_u32(d + 8);
  if (version != kExecVersion)
    return cj_invalid("the executable was serialized in format version %u; this cjrt reads "
                      "version %d",
                      version, kExecVersion);
  if (cj_fnv64(d, len - 8, CJ_FNV64_SEED) != rd_u64(d + len - 8))
    return cj_invalid("the serialized executable is corrupted (checksum mismatch)");
  size_t k = 16, end = len - 8;
  uint32_t nlen = rd_u32(d + k);
  k += 4;
  if (nlen > end - k) return cj_invalid("the serialized executable is truncated (backend name)");
  const char *bname = backend->vt->name;
  if (nlen != strlen(bname) || memcmp(d + k, bname, nlen) != 0)
    return cj_invalid("the executable was serialized for backend '%.*s', not '%s'",
                      (int)(nlen < 64 ? nlen : 64), (const char *)d + k, bname);
  k += nlen;
  if (end - k < 8) return cj_invalid("the serialized executable is truncated (options)");
  uint64_t olen = rd_u64(d + k);
  k += 8;
  if (olen > end - k) return cj_invalid("the serialized executable is truncated (options)");
  const unsigned char *opts = d + k;
  k += (size_t)olen;
  if (end - k < 8) return cj_invalid("the serialized executable is truncated (program)");
  uint64_t plen = rd_u64(d + k);
  k += 8;
  if (plen != end - k) return cj_invalid("the serialized executable has a bad program length");

  /* The program is compiled again under the stored options; the options to keep are the
   * override's, once it agrees with the program. */
  cj_compile_options_storage stored;
  cj_status st = cj_compile_options_read(opts, (size_t)olen, &stored);
  if (st) return cj_status_annotate(st, "the serialized executable's compile options");
  cj_compiled *compiled = NULL;
  st = cj_compile_text(backend, (const char *)d + k, (size_t)plen, &stored.opts, &compiled);
  cj_compile_options_storage_free(&stored);
  if (st) return cj_status_annotate(st, "the serialized executable's program");
  const void *keep = opts;
  size_t keep_len = (size_t)olen;
  cj_compile_options_storage os;
  if (override_options) {
    st = cj_compile_options_read(override_options, override_len, &os);
    if (st) {
      cj_compiled_free(compiled);
      return cj_status_annotate(st, "overridden compile options");
    }
    keep = override_options;
    keep_len = override_len;
  } else {
    st = cj_compile_options_read(opts, (size_t)olen, &os);
    if (st) {
      cj_compiled_free(compiled);
      return cj_status_annotate(st, "the serialized executable's compile options");
    }
  }
  const cj_program_info *info = &compiled->info;
  int64_t nr = info->num_replicas, np = info->num_partitions;
  if (os.opts.num_replicas != nr || os.opts.num_partitions != np) {
    st = cj_invalid("the %s compile options ask for %lld replicas x %lld partitions, but the "
                    "executable was compiled for %lld x %lld",
                    override_options ? "overridden" : "stored", (long long)os.opts.num_replicas,
                    (long long)os.opts.num_partitions, (long long)nr, (long long)np);
    cj_compiled_free(compiled);
    cj_compile_options_storage_free(&os);
    return st;
  }
  const int64_t *assignment = os.opts.device_assignment;
  if (!assignment) assignment = info->device_assignment;
  st = executable_new(compiled, keep, keep_len, assignment, out);
  if (!st) {
    uint32_t flags = rd_u32(d + 12);
    (*out)->run_inline = (flags & kFlagInline) != 0;
    (*out)->has_collectives = (flags & kFlagNoCollectives) == 0;
  }
  cj_compile_options_storage_free(&os);
  return st;
}

/* ------------------------------------------------------------------------------------------ */
/* Loaded executables                                                                          */

bool cj_loaded_check(const void *p) { return cj_object_is(p, CJ_TAG_LOADED); }

void cj_loaded_retain(cj_loaded *l) { cj_object_retain(&l->hdr); }

/* A group: the per-device executions (execute_device) of one launch of a multi-device program
 * with collectives, which must run together. Guarded by the loaded executable's groups_mu. */
typedef struct exec_group {
  struct exec_group *next; /* in le->groups while open */
  cj_loaded *le;           /* not retained: every member's run retains it */
  int64_t launch_id;
  int ndev;           /* the assignment's devices */
  int arrived;        /* devices that joined */
  int refs;           /* members that have not finished */
  bool open;          /* in le->groups: some device has not joined yet */
  bool complete;      /* every device joined: the members may run */
  bool *joined;       /* ndev, by argument-list index */
  /* Set when a member gave up waiting or failed before running: every member fails with it,
   * latecomers included (a dead group stays open until every device came, so that later
   * launches still pair the right calls; the loaded executable frees what is left). */
  cj_status dead;
  cj_launch *launch;  /* shared by the members (collectives meet here) */
  pthread_cond_t cv;  /* broadcast when complete or dead */
} exec_group;

static void group_free(cj_backend *b, exec_group *g);

static void loaded_free(cj_loaded *l) {
  /* what is left are dead groups some device never joined (their members are gone: each
   * member's run holds the loaded executable) */
  while (l->groups) {
    exec_group *g = l->groups;
    l->groups = g->next;
    group_free(l->exec->backend, g);
  }
  pthread_mutex_destroy(&l->groups_mu);
  cj_executable_release(l->exec);
  free(l->assignment);
  free(l->devices);
  free(l->logical);
  free((int32_t *)l->xproc.proc_of);
  free(l->assignment_proto);
  cj_client *c = l->client;
  free(l);
  cj_client_release(c); /* last: it may free the client */
}

void cj_loaded_release(cj_loaded *l) {
  if (l && cj_object_release(&l->hdr)) loaded_free(l);
}

void cj_loaded_delete(cj_loaded *l) { atomic_store(&l->deleted, true); }
bool cj_loaded_is_deleted(cj_loaded *l) { return atomic_load(&l->deleted); }

void cj_loaded_destroy(cj_loaded *l) {
  if (!l) return;
  cj_loaded_delete(l);
  cj_loaded_release(l);
}

/* xla.DeviceAssignmentProto{replica_count = 1, computation_count = 2,
 * computation_devices = 3 {replica_device_ids = 1 (packed)}}, indexed [partition][replica]. */
static CJ_MUST_USE cj_status write_assignment_proto(int64_t nr, int64_t np, const int64_t *ids, void **out,
                                        size_t *len) {
  wbuf w = {0};
  cj_pb_put_key(&w, 1, 0);
  cj_pb_put_varint(&w, (uint64_t)nr);
  cj_pb_put_key(&w, 2, 0);
  cj_pb_put_varint(&w, (uint64_t)np);
  for (int64_t p = 0; p < np; p++) {
    wbuf packed = {0}, comp = {0};
    for (int64_t r = 0; r < nr; r++) cj_pb_put_varint(&packed, (uint64_t)ids[r * np + p]);
    cj_pb_put_sub(&comp, 1, &packed);
    cj_pb_put_sub(&w, 3, &comp);
    free(packed.p);
    free(comp.p);
  }
  if (w.oom) {
    free(w.p);
    return cj_oom();
  }
  *out = w.p;
  *len = w.n;
  return NULL;
}

cj_status cj_loaded_create(cj_client *c, cj_executable *e, const void *options,
                           size_t options_len, cj_loaded **out) {
  *out = NULL;
  if (e->backend != c->backend)
    return cj_invalid("the executable was compiled for backend '%s', the client runs '%s'",
                      e->backend->vt->name, c->backend->vt->name);
  int64_t nr = e->num_replicas, np = e->num_partitions;
  cj_compile_options_storage os;
  bool have_os = false;
  const int64_t *ids = e->assignment;
  if (options) {
    CJ_RETURN_IF_ERROR(cj_compile_options_read(options, options_len, &os));
    have_os = true;
    if (os.opts.num_replicas != nr || os.opts.num_partitions != np) {
      cj_status st = cj_invalid("the compile options ask for %lld replicas x %lld partitions, but "
                                "the executable was compiled for %lld x %lld",
                                (long long)os.opts.num_replicas,
                                (long long)os.opts.num_partitions, (long long)nr, (long long)np);
      cj_compile_options_storage_free(&os);
      return st;
    }
    if (os.opts.device_assignment) ids = os.opts.device_assignment;
  }
  cj_loaded *l = calloc(1, sizeof *l);
  size_t n = (size_t)(nr * np);
  cj_status st = NULL;
  if (!l) {
    st = cj_oom();
  } else {
    l->assignment = malloc(n * sizeof(int64_t));
    l->devices = malloc(n * sizeof(cj_device *));
    l->logical = malloc(n * sizeof(cj_logical_id));
    if (!l->assignment || !l->devices || !l->logical) st = cj_oom();
  }
  if (!st) st = resolve_assignment(c, nr, np, ids, l->assignment, l->devices);
  if (!st)
    st = write_assignment_proto(nr, np, l->assignment, &l->assignment_proto,
                                &l->assignment_proto_len);
  if (!st && pthread_mutex_init(&l->groups_mu, NULL) != 0) {
    free(l->assignment_proto);
    st = cj_oom();
  }
  if (have_os) cj_compile_options_storage_free(&os);
  if (st) {
    if (l) {
      free(l->assignment);
      free(l->devices);
      free(l->logical);
      free(l);
    }
    return st;
  }
  cj_object_init(&l->hdr, CJ_TAG_LOADED);
  atomic_init(&l->deleted, false);
  l->client = c;
  cj_client_retain(c);
  l->exec = e;
  cj_executable_retain(e);
  l->num_replicas = nr;
  l->num_partitions = np;
  /* The argument lists follow the assignment, replica-major, keeping this process's devices
   * (all of them in a single process). */
  int nlocal = 0;
  bool remote = false;
  for (size_t i = 0; i < n; i++) {
    if (!cj_device_is_local(l->devices[i])) {
      remote = true;
      continue;
    }
    l->devices[nlocal] = l->devices[i];
    l->logical[nlocal].replica = (int)(i / (size_t)np);
    l->logical[nlocal].partition = (int)(i % (size_t)np);
    nlocal++;
  }
  l->ndevices = nlocal;
  if (remote) {
    /* The grid's other processes, for cross-process collectives (runtime/backend.h). */
    int32_t *proc_of = malloc(sizeof(int32_t) * n);
    if (!proc_of) {
      cj_loaded_release(l);
      return cj_oom();
    }
    for (size_t i = 0; i < n; i++)
      proc_of[i] = cj_client_lookup_device(c, (int)l->assignment[i])->process_index;
    l->xproc.ops = &c->mp->ops;
    l->xproc.ctx = c->mp;
    l->xproc.self = c->opts.process_index;
    l->xproc.ngrid = (int32_t)n;
    l->xproc.proc_of = proc_of;
  }
  *out = l;
  return NULL;
}

/* ------------------------------------------------------------------------------------------ */
/* Execution                                                                                   */

typedef struct exec_run exec_run;

/* One argument event being waited for. */
typedef struct arg_wait {
  exec_run *run;
  int dev, arg;
} arg_wait;

/* One device's share. */
typedef struct dev_run {
  exec_run *run;
  int replica, partition;
  cj_device *dev;       /* the device running this share */
  cj_exec_args args;    /* what the backend gets (alive until the share finished) */
  void **argp;          /* nargs device pointers */
  void **resp;          /* nres device pointers */
  cj_storage **pins;    /* nargs: the arguments' storages (NULL for error buffers) */
  bool *pin_writer;     /* nargs: pins[i] is a writer reference (a donated argument) */
  cj_storage **out_pins; /* nres: writer references to fresh result storages (NULL if donated) */
  cj_buffer **outs;     /* nres, retained */
  int32_t *res_donor;   /* nres: the argument whose storage the result took, or -1 */
  void **aligned;       /* nargs: aligned copies of unaligned arguments (align_arguments) */
  bool *consumed;       /* nargs: pins[i] is a donated buffer's storage that is only read */
  cj_event *done;       /* retained: the outputs' ready event */
  /* The poison registry (cj_device_poison): unfinished shares by device, oldest first. */
  struct dev_run *reg_prev, *reg_next;
  cj_device *reg_dev;
  int64_t reg_launch;
  bool registered;
  cj_status poisoned; /* set by cj_device_poison; the share then fails with it */
} dev_run;

/* Every unfinished device share of every execution, in the order they were made, so that
 * cj_device_poison can find the earliest one of a device and launch id. */
static pthread_mutex_t poison_mu = PTHREAD_MUTEX_INITIALIZER;
static dev_run *poison_head, *poison_tail;

static void poison_register(dev_run *dv, cj_device *dev, int64_t launch_id) {
  dv->reg_dev = dev;
  dv->reg_launch = launch_id;
  pthread_mutex_lock(&poison_mu);
  dv->reg_prev = poison_tail;
  dv->reg_next = NULL;
  if (poison_tail)
    poison_tail->reg_next = dv;
  else
    poison_head = dv;
  poison_tail = dv;
  dv->registered = true;
  pthread_mutex_unlock(&poison_mu);
}

/* Takes the share out of the registry; returns its poison (owned by the caller), if any.
 * `registered` is written before the share can start (see cj_loaded_execute) and only cleared
 * here, by the share's own thread, so reading it unlocked is safe. */
static CJ_MUST_USE cj_status poison_unregister(dev_run *dv) {
  if (!dv->registered) return NULL; /* small inline runs are never registered */
  pthread_mutex_lock(&poison_mu);
  if (dv->registered) {
    if (dv->reg_prev)
      dv->reg_prev->reg_next = dv->reg_next;
    else
      poison_head = dv->reg_next;
    if (dv->reg_next)
      dv->reg_next->reg_prev = dv->reg_prev;
    else
      poison_tail = dv->reg_prev;
    dv->registered = false;
  }
  cj_status p = dv->poisoned;
  dv->poisoned = NULL;
  pthread_mutex_unlock(&poison_mu);
  return p;
}

/* Whether the share has been poisoned (it then need not run). */
static bool poison_pending(dev_run *dv) {
  if (!dv->registered) return false;
  pthread_mutex_lock(&poison_mu);
  bool p = dv->poisoned != NULL;
  pthread_mutex_unlock(&poison_mu);
  return p;
}

bool cj_device_poison(cj_device *d, int64_t launch_id, cj_status error) {
  bool done = false;
  pthread_mutex_lock(&poison_mu);
  for (dev_run *dv = poison_head; dv; dv = dv->reg_next) {
    if (dv->reg_dev != d || dv->reg_launch != launch_id || dv->poisoned) continue;
    dv->poisoned = error;
    error = NULL;
    done = true;
    break;
  }
  pthread_mutex_unlock(&poison_mu);
  cj_status_ignore(error); /* consumed; no running share of that launch on d to carry it */
  return done;
}


struct exec_run {
  cj_loaded *le; /* retained: keeps the program and the client alive */
  exec_group *group; /* a member of this group (one device's share of a grouped launch), or NULL */
  int group_dev;     /* then: the device's index in the assignment */
  cj_client *client;
  cj_backend *backend;
  const cj_program *prog;
  int ndev, nargs, nres;
  dev_run *devs;
  cj_event **ready; /* ndev * nargs argument ready events, retained */
  arg_wait *waits;  /* ndev * nargs */
  atomic_int waiting; /* argument events not yet ready, plus one held by the caller */
  atomic_int running; /* devices not finished */
  pthread_mutex_t mu;
  cj_status poison; /* the first argument error */
  cj_launch *launch;
  cj_threadpool *pool;
  bool short_run; /* exec_short when it was issued (one answer for the whole run) */
  /* a copy of the execute context's FFI user data (the context may go before the run ends) */
  cj_ffi_user_data ud_items[CJ_EXEC_MAX_USER_DATA];
  cj_ffi_user_data_list ud;
};

/* Carves aligned pieces out of one allocation. */
typedef struct carve {
  char *base;
  size_t off;
} carve;

static void *carve_take(carve *c, size_t bytes) {
  c->off = (c->off + 15) & ~(size_t)15;
  void *p = c->base ? c->base + c->off : NULL;
  c->off += bytes;
  return p;
}

/* ---- groups ---- */

/* Under groups_mu: takes an open group out of the list. */
static void group_close_locked(cj_loaded *l, exec_group *g) {
  if (!g->open) return;
  exec_group **pp = &l->groups;
  while (*pp && *pp != g) pp = &(*pp)->next;
  if (*pp) *pp = g->next;
  g->next = NULL;
  g->open = false;
}

static void group_free(cj_backend *b, exec_group *g) {
  if (!g) return;
  if (g->launch) b->vt->launch_destroy(g->launch);
  cj_status_free(g->dead);
  pthread_cond_destroy(&g->cv);
  free(g->joined);
  free(g);
}

/* A fresh group for `l`'s devices, with its launch (joined by group_join). */
static CJ_MUST_USE cj_status group_new(cj_loaded *l, int64_t launch_id, exec_group **out) {
  *out = NULL;
  exec_group *g = calloc(1, sizeof *g);
  if (!g) return cj_oom();
  g->joined = calloc((size_t)l->ndevices, sizeof(bool));
  pthread_condattr_t ca;
  bool cv_ok = false;
  if (g->joined && pthread_condattr_init(&ca) == 0) {
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    cv_ok = pthread_cond_init(&g->cv, &ca) == 0;
    pthread_condattr_destroy(&ca);
  }
  if (!cv_ok) {
    free(g->joined);
    free(g);
    return cj_oom();
  }
  g->le = l;
  g->launch_id = launch_id;
  g->ndev = l->ndevices;
  cj_backend *b = l->exec->backend;
  cj_status st = b->vt->launch_create
                     ? b->vt->launch_create(b, l->exec->program,
                                            (int32_t)(l->num_replicas * l->num_partitions),
                                            &g->launch)
                     : NULL;
  if (st) {
    group_free(b, g);
    return st;
  }
  *out = g;
  return NULL;
}

/* Device d joins the oldest open group of launch_id it is not yet a member of, or `*spare`
 * (which it then takes: *spare becomes NULL). Cannot fail. */
static exec_group *group_join(cj_loaded *l, int64_t launch_id, int d, exec_group **spare) {
  pthread_mutex_lock(&l->groups_mu);
  exec_group *g = l->groups, *tail = NULL;
  for (; g; tail = g, g = g->next)
    if (g->launch_id == launch_id && !g->joined[d]) break;
  if (!g) {
    g = *spare;
    *spare = NULL;
    g->open = true;
    if (tail)
      tail->next = g;
    else
      l->groups = g;
  }
  g->joined[d] = true;
  g->arrived++;
  g->refs++;
  if (g->arrived == g->ndev) { /* takes no more members */
    g->complete = true;
    group_close_locked(l, g);
    pthread_cond_broadcast(&g->cv);
  }
  pthread_mutex_unlock(&l->groups_mu);
  return g;
}

/* Marks g dead with `why` (consumed) unless it already is, and cancels its launch so that
 * members already at a collective fail instead of waiting. */
static void group_fail(exec_group *g, cj_backend *b, cj_status why) {
  cj_loaded *l = g->le;
  if (!why) why = cj_oom();
  pthread_mutex_lock(&l->groups_mu);
  if (!g->dead) {
    g->dead = why;
    why = NULL;
    pthread_cond_broadcast(&g->cv);
  }
  pthread_mutex_unlock(&l->groups_mu);
  cj_status_ignore(why); /* g is dead already: its first reason stands */
  if (g->launch && b->vt->launch_abort) {
    cj_status st = cj_status_copy(g->dead); /* g->dead is set once and lives with g */
    b->vt->launch_abort(g->launch, st ? st : cj_oom());
  }
}

/* How long a grouped share waits for its peers: CJRT_COLLECTIVE_TIMEOUT_MS, else 5 minutes. */
static int64_t group_timeout_ms(void) {
  const char *v = getenv("CJRT_COLLECTIVE_TIMEOUT_MS");
  if (v && *v) {
    char *end;
    long long ms = strtoll(v, &end, 10);
    if (!*end && ms >= 0) return ms;
  }
  return 300000;
}

/* Device d of group g waits until every device joined: NULL, or the reason it never will. */
static CJ_MUST_USE cj_status group_wait(exec_group *g, int d) {
  cj_loaded *l = g->le;
  int64_t ms = group_timeout_ms();
  struct timespec deadline;
  clock_gettime(CLOCK_MONOTONIC, &deadline);
  deadline.tv_sec += (time_t)(ms / 1000);
  deadline.tv_nsec += (long)(ms % 1000) * 1000000L;
  if (deadline.tv_nsec >= 1000000000L) {
    deadline.tv_sec++;
    deadline.tv_nsec -= 1000000000L;
  }
  pthread_mutex_lock(&l->groups_mu);
  while (!g->complete && !g->dead)
    if (pthread_cond_timedwait(&g->cv, &l->groups_mu, &deadline) != 0 && !g->complete &&
        !g->dead) {
      /* gave up: name the devices that never came */
      char missing[256];
      size_t n = 0;
      int nmissing = 0;
      for (int k = 0; k < g->ndev; k++) {
        if (g->joined[k]) continue;
        if (n < sizeof missing)
          n += (size_t)snprintf(missing + n, sizeof missing - n, "%s%d (replica %d, partition %d)",
                                nmissing ? ", " : "", l->devices[k]->id, l->logical[k].replica,
                                l->logical[k].partition);
        nmissing++;
      }
      g->dead = cj_status_make(
          CJ_DEADLINE_EXCEEDED,
          "the program's collectives need all %d devices of its assignment, executed with "
          "execute_device and launch_id %lld; device %d waited %lld ms but device%s %s never "
          "executed it (execute every device's share with the same launch_id; "
          "CJRT_COLLECTIVE_TIMEOUT_MS sets the wait)",
          g->ndev, (long long)g->launch_id, l->devices[d]->id, (long long)ms,
          nmissing == 1 ? "" : "s", missing);
      pthread_cond_broadcast(&g->cv);
    }
  cj_status st = NULL;
  if (g->dead) {
    st = cj_status_copy(g->dead);
    if (!st) st = cj_oom();
  }
  pthread_mutex_unlock(&l->groups_mu);
  return st;
}

/* A member finished; the last frees the group once no device can still join it (an open group
 * with no member left is dead: loaded_free frees it). */
static void group_leave(exec_group *g, cj_backend *b) {
  cj_loaded *l = g->le;
  pthread_mutex_lock(&l->groups_mu);
  bool last = --g->refs == 0 && !g->open;
  pthread_mutex_unlock(&l->groups_mu);
  if (last) group_free(b, g);
}

static void run_finish(exec_run *run) {
  if (run->group) /* the launch is the group's */
    group_leave(run->group, run->backend);
  else if (run->launch)
    run->backend->vt->launch_destroy(run->launch);
  for (int k = 0; k < run->ndev * run->nargs; k++) cj_event_release(run->ready[k]);
  cj_client_inflight_release(run->client);
  cj_status_free(run->poison);
  pthread_mutex_destroy(&run->mu);
  cj_loaded *le = run->le;
  free(run);
  cj_loaded_release(le); /* last: it may free the client */
}

/* Ends one device's share with `st` (consumed; NULL = success). Everything the run holds is
 * released before the device's completion event fires, and the last device frees the run before
 * its event fires: a caller that waits for the events and then destroys its buffers,
 * executable and client drops the last references on its own thread, so the client (and its
 * pool) is freed there rather than on one of the pool's task threads (which would need a
 * helper thread racing process exit). */
static void finish_dev(dev_run *dv, cj_status st) {
  exec_run *run = dv->run;
  cj_status poison = poison_unregister(dv);
  if (poison) { /* PoisonExecution: the share's outputs carry that error instead */
    cj_status_ignore(st); /* the poison is what the outputs must report */
    st = poison;
  }
  for (int i = 0; i < run->nargs; i++) {
    if (dv->pin_writer[i])
      cj_storage_writer_unref(dv->pins[i]);
    else
      cj_storage_unpin(dv->pins[i]);
    dv->pins[i] = NULL;
  }
  for (int j = 0; j < run->nres; j++) {
    if (st) cj_buffer_drop_storage(dv->outs[j]);
    cj_storage_writer_unref(dv->out_pins[j]);
    dv->out_pins[j] = NULL;
  }
  for (int j = 0; j < run->nres; j++) cj_buffer_release(dv->outs[j]);
  cj_event *done = dv->done; /* dv dies with the run */
  if (atomic_fetch_sub_explicit(&run->running, 1, memory_order_acq_rel) == 1) run_finish(run);
  cj_status_ignore(cj_event_set(done, st)); /* `done` is set once, here: cannot fail */
  cj_event_release(done);
}

/* The backend promises (and its kernels may assume) 64-byte aligned device memory. Views of
 * foreign memory (PJRT_Client_CreateViewOfDeviceBuffer, DLPack) may be anywhere: such an
 * argument is copied into an aligned temporary for the execution (it is never donated: only
 * storages cjrt allocated are). dv->argp[i] then points at the copy; dv->aligned[i] owns it. */
static CJ_MUST_USE cj_status align_arguments(exec_run *run, dev_run *dv) {
  cj_backend *b = run->backend;
  if (!b->vt->memory_is_host) return NULL;
  const cj_program_info *info = run->le->exec->info;
  for (int i = 0; i < run->nargs; i++) {
    size_t n = info->args[i].nbytes;
    dv->aligned[i] = NULL;
    if (!n || !dv->argp[i] || ((uintptr_t)dv->argp[i] & 63) == 0) continue;
    void *copy = b->vt->alloc(b, dv->dev->local_hardware_id, CJ_MEMORY_DEVICE, n);
    if (!copy)
      return cj_status_make(CJ_RESOURCE_EXHAUSTED,
                            "out of memory copying unaligned argument %d (%zu bytes)", i, n);
    memcpy(copy, dv->argp[i], n);
    dv->aligned[i] = copy;
    dv->argp[i] = copy;
  }
  return NULL;
}

static void free_aligned_copies(exec_run *run, dev_run *dv) {
  for (int i = 0; i < run->nargs; i++)
    if (dv->aligned[i]) {
      run->backend->vt->free(run->backend, dv->dev->local_hardware_id, CJ_MEMORY_DEVICE,
                             dv->aligned[i]);
      dv->aligned[i] = NULL;
    }
}

/* The backend finished one device's share (synchronously, or from an execute_async
 * completion on any thread). */
static void dev_share_done(void *ctx, cj_status st) {
  dev_run *dv = ctx;
  exec_run *run = dv->run;
  if (st && run->launch) run->backend->vt->launch_abort(run->launch, cj_status_copy(st));
  free_aligned_copies(run, dv);
  finish_dev(dv, st); /* dv and run may be gone after this */
}

/* Runs one device's share; `on_pool` when on one of the client's task threads. */
static void dev_run_share(dev_run *dv, bool on_pool) {
  exec_run *run = dv->run;
  cj_client *prev = cj_client_current_task();
  if (on_pool) cj_client_enter_task(run->client);
  cj_exec_args *a = &dv->args;
  memset(a, 0, sizeof *a);
  a->replica = dv->replica;
  a->partition = dv->partition;
  a->args = dv->argp;
  a->results = dv->resp;
  a->launch = run->launch;
  /* as many devices as threads (or more) run at once: each device's kernels stay on its own
   * thread, one core each, instead of one device taking the pool while the others run alone */
  a->pool = run->ndev >= cj_pool_size(run->pool) ? NULL : run->pool;
  a->xproc = run->le->xproc.ops ? &run->le->xproc : NULL;
  a->ffi_user_data = run->ud.n ? &run->ud : NULL;
  /* one device's share of a grouped launch: every peer must have come */
  cj_status st = run->group ? group_wait(run->group, run->group_dev) : NULL;
  if (!st && poison_pending(dv)) /* poisoned before it ran: skip the work (finish_dev reports) */
    st = cj_status_make(CJ_ABORTED, "the execution was poisoned");
  if (!st) st = align_arguments(run, dv);
  cj_backend *b = run->backend;
  /* a short program uses only the pool workers that are awake (CJ_INLINE_COST) */
  cj_executable *e = run->le->exec; /* (alive until dev_share_done) */
  bool short_run = run->short_run;
  bool waking = cj_pool_set_waking(!short_run);
  if (!st && b->vt->execute_async) {
    /* the backend completes the share through dev_share_done, maybe on another thread and
     * maybe already before this returns: dv is not touched afterwards */
    b->vt->execute_async(b, run->prog, a, (cj_backend_done){dev_share_done, dv});
  } else {
    uint64_t t0 = mono_ns();
    if (!st) st = b->vt->execute(b, run->prog, a);
    if (!st) {
      if (short_run)
        note_short_run(e, mono_ns() - t0);
      else if (!run->group)
        note_task_run(e, mono_ns() - t0);
    }
    dev_share_done(dv, st);
  }
  cj_pool_set_waking(waking); /* (run may be gone: only locals here) */
  if (on_pool) cj_client_enter_task(prev);
}

static void dev_task(void *ctx) { dev_run_share(ctx, true); }

/* Every argument is ready: run the devices, or fail them all if an argument was an error.
 * `in_execute`: called by Execute itself (every argument was ready then), the only place where a
 * small program runs inline; from an argument's callback it always goes to the pool, so chains
 * of dependent executions never nest on one stack. */
static void run_start(exec_run *run, bool in_execute) {
  int ndev = run->ndev;
  dev_run *devs = run->devs;
  cj_threadpool *pool = run->pool;
  cj_status fail = run->poison ? cj_status_copy(run->poison) : NULL;
  /* (a multi-process execution meets its other processes' devices through the launch too) */
  if (!fail && (ndev > 1 || run->le->xproc.ops) && run->backend->vt->launch_create)
    fail = run->backend->vt->launch_create(
        run->backend, run->prog, (int32_t)(run->le->num_replicas * run->le->num_partitions),
        &run->launch);
  if (fail) {
    if (run->group) { /* its peers must not wait for this device */
      cj_status why = cj_status_annotate(
          cj_status_copy(fail),
          "device %d (replica %d, partition %d) of launch_id %lld failed before running its share",
          run->le->devices[run->group_dev]->id, devs[0].replica, devs[0].partition,
          (long long)run->group->launch_id);
      group_fail(run->group, run->backend, why);
    }
    for (int d = 0; d < ndev; d++) finish_dev(&devs[d], d + 1 < ndev ? cj_status_copy(fail) : fail);
    return;
  }
  /* (a grouped share may wait for its peers: never on the caller's thread) */
  if (in_execute && ndev == 1 && run->short_run && !run->group) {
    dev_run_share(&devs[0], false);
    return;
  }
  cj_backend *backend = run->backend;
  cj_launch *launch = run->launch;
  exec_group *group = run->group; /* alive while this run holds it */
  /* Once the last device is submitted the run may finish and be freed at any moment: only
   * locals are touched from here on. */
  for (int d = 0; d < ndev; d++) {
    cj_status st = cj_pool_submit(pool, dev_task, &devs[d]);
    if (st) {
      if (group)
        group_fail(group, backend, cj_status_copy(st));
      else if (launch)
        backend->vt->launch_abort(launch, cj_status_copy(st));
      finish_dev(&devs[d], st);
    }
  }
}

static void run_arrive(exec_run *run, bool in_execute) {
  if (atomic_fetch_sub_explicit(&run->waiting, 1, memory_order_acq_rel) == 1)
    run_start(run, in_execute);
}

/* Multi-process executions with cross-process collectives run one after the other, in the order
 * they were issued: MPI matches the collectives of one communicator by order, and two
 * executions whose collectives share a device group would otherwise interleave differently in
 * different processes (mixing their data, or deadlocking). Issue order is the same everywhere
 * (every process runs the same program). Each waits for the previous one's devices to finish,
 * like an argument (whatever its outcome), so no thread blocks. */
typedef struct order_wait {
  exec_run *run;
  cj_event *ev;
} order_wait;

static void order_ready(void *ctx, cj_status st) {
  (void)st;
  order_wait *w = ctx;
  exec_run *run = w->run;
  cj_event *ev = w->ev;
  free(w);
  run_arrive(run, false);
  cj_event_release(ev);
}

/* Takes the client's previous events (*prev, *nprev: references for the caller) and leaves
 * this run's done events in their place. */
static CJ_MUST_USE cj_status order_swap(cj_client *c, exec_run *run, cj_event ***prev, int *nprev) {
  cj_event **mine = malloc(sizeof(cj_event *) * (size_t)run->ndev);
  if (!mine) return cj_oom();
  for (int d = 0; d < run->ndev; d++) {
    cj_event_retain(run->devs[d].done);
    mine[d] = run->devs[d].done;
  }
  pthread_mutex_lock(&c->exec_mu);
  *prev = c->mp_prev;
  *nprev = c->mp_nprev;
  c->mp_prev = mine;
  c->mp_nprev = run->ndev;
  pthread_mutex_unlock(&c->exec_mu);
  return NULL;
}

static void arg_ready(void *ctx, cj_status st) {
  arg_wait *w = ctx;
  exec_run *run = w->run;
  if (st) {
    pthread_mutex_lock(&run->mu);
    if (!run->poison) {
      run->poison = cj_status_copy(st);
      if (run->ndev > 1)
        run->poison = cj_status_annotate(run->poison, "argument %d of device %d is an error buffer",
                                         w->arg, w->dev);
      else
        run->poison = cj_status_annotate(run->poison, "argument %d is an error buffer", w->arg);
    }
    pthread_mutex_unlock(&run->mu);
  }
  run_arrive(run, false);
}

/* "tensor<2x3xf32>", as the program writes it. */
static void shape_text(cj_dtype dt, int rank, const int64_t *dims, char *buf, size_t size) {
  const cj_dtype_info *di = cj_dtype_get(dt);
  size_t n = (size_t)snprintf(buf, size, "tensor<");
  for (int i = 0; i < rank && n < size; i++)
    n += (size_t)snprintf(buf + n, size - n, "%lldx", (long long)dims[i]);
  if (n < size) snprintf(buf + n, size - n, "%s>", di->mlir ? di->mlir : di->id);
}

/* Names argument i of device d in messages. */
static void arg_name(char *buf, size_t size, size_t i, int d, int ndev) {
  if (ndev > 1)
    snprintf(buf, size, "argument %zu of device list %d", i, d);
  else
    snprintf(buf, size, "argument %zu", i);
}

static CJ_MUST_USE cj_status check_argument(cj_loaded *l, const cj_program_info *info, cj_buffer *b,
                                size_t i, int d, int ndev, cj_device *dev) {
  char name[64];
  arg_name(name, sizeof name, i, d, ndev);
  if (!b) return cj_invalid("%s is NULL", name);
  if (!cj_buffer_check(b)) return cj_invalid("%s is not a live cjrt buffer", name);
  if (cj_buffer_client(b) != l->client)
    return cj_invalid("%s belongs to another client", name);
  const cj_shape *want = &info->args[i];
  int rank = cj_buffer_rank(b);
  const int64_t *dims = cj_buffer_dims(b);
  bool same = cj_buffer_dtype(b) == want->dtype && rank == want->rank;
  for (int k = 0; same && k < rank; k++) same = dims[k] == want->dims[k];
  /* A token argument carries no data: frameworks pass any empty buffer for it (JAX passes the
   * bool[0] array behind a jax.lax.create_token()). */
  if (!same && want->dtype == CJ_TOKEN && cj_buffer_nbytes(b) == 0) same = true;
  if (!same) {
    char got[256], exp[256];
    shape_text(cj_buffer_dtype(b), rank, dims, got, sizeof got);
    shape_text(want->dtype, want->rank, want->dims, exp, sizeof exp);
    return cj_invalid("%s is %s but the program expects %s", name, got, exp);
  }
  if (cj_buffer_device(b) != dev)
    return cj_invalid("%s is on device %d but must be on device %d, where it runs", name,
                      cj_buffer_device(b)->id, dev->id);
  if (cj_buffer_is_deleted(b))
    return cj_invalid("%s was deleted or donated", name);
  return NULL;
}

/* The index of `dev` among the loaded executable's devices (argument-list order), or -1. */
static int loaded_device_index(const cj_loaded *l, const cj_device *dev) {
  for (int d = 0; d < l->ndevices; d++)
    if (l->devices[d] == dev) return d;
  return -1;
}

cj_status cj_loaded_check_call(cj_loaded *l, cj_device *execute_device, size_t ndevices,
                               size_t nargs) {
  if (cj_loaded_is_deleted(l))
    return cj_status_make(CJ_FAILED_PRECONDITION, "the executable was deleted");
  if (l->ndevices == 0)
    return cj_status_make(CJ_FAILED_PRECONDITION,
                          "the executable's device assignment has no device of this process (%d)",
                          l->client->opts.process_index);
  const cj_program_info *info = l->exec->info;
  if (execute_device) {
    if (ndevices != 1)
      return cj_invalid("with execute_device, num_devices must be 1, not %zu", ndevices);
    if (!cj_device_check(execute_device) || execute_device->client != l->client)
      return cj_invalid("execute_device is not a device of the executable's client");
    if (!cj_device_is_local(execute_device))
      return cj_invalid("execute_device %d belongs to process %d, not this one (%d)",
                        execute_device->id, execute_device->process_index,
                        l->client->opts.process_index);
    if (l->ndevices != 1 && loaded_device_index(l, execute_device) < 0) {
      char ids[256];
      size_t n = 0;
      for (int d = 0; d < l->ndevices && n < sizeof ids; d++)
        n += (size_t)snprintf(ids + n, sizeof ids - n, "%s%d", d ? ", " : "", l->devices[d]->id);
      return cj_invalid("execute_device is device %d, which is not in the executable's device "
                        "assignment (%lld replicas x %lld partitions on devices %s)",
                        execute_device->id, (long long)l->num_replicas,
                        (long long)l->num_partitions, ids);
    }
  } else if (ndevices != (size_t)l->ndevices) {
    return cj_invalid("num_devices is %zu but the executable runs on %d device%s", ndevices,
                      l->ndevices, l->ndevices == 1 ? "" : "s");
  }
  if (nargs != (size_t)info->num_args)
    return cj_invalid("num_args is %zu but the program takes %d argument%s", nargs,
                      info->num_args, info->num_args == 1 ? "" : "s");
  return NULL;
}

/* The run of one execution and its per-device arrays, in one allocation (freed with run). */
static CJ_MUST_USE cj_status exec_run_new(cj_loaded *l, cj_device *single, int ndev, size_t nargs, int share,
                              cj_threadpool *pool, const cj_execute_options *opts,
                              exec_run **out_run, int32_t **out_candidate) {
  cj_executable *e = l->exec;
  cj_client *c = l->client;
  const cj_program_info *info = e->info;
  int na = (int)nargs, nr = info->num_results;
  size_t nk = (size_t)ndev * nargs;
  carve cv = {NULL, 0};
  for (int pass = 0; pass < 2; pass++) {
    cv.off = 0;
    carve_take(&cv, sizeof(exec_run));
    carve_take(&cv, sizeof(dev_run) * (size_t)ndev);
    carve_take(&cv, sizeof(cj_event *) * nk);
    carve_take(&cv, sizeof(arg_wait) * nk);
    carve_take(&cv, sizeof(int32_t) * (size_t)nr);
    for (int d = 0; d < ndev; d++) {
      carve_take(&cv, sizeof(void *) * nargs);
      carve_take(&cv, sizeof(void *) * (size_t)nr);
      carve_take(&cv, sizeof(cj_storage *) * nargs);
      carve_take(&cv, sizeof(bool) * nargs);
      carve_take(&cv, sizeof(cj_storage *) * (size_t)nr);
      carve_take(&cv, sizeof(cj_buffer *) * (size_t)nr);
      carve_take(&cv, sizeof(int32_t) * (size_t)nr);
      carve_take(&cv, sizeof(void *) * nargs);
      carve_take(&cv, sizeof(bool) * nargs);
    }
    if (pass == 0) {
      cv.base = calloc(1, cv.off);
      if (!cv.base) return cj_oom();
    }
  }
  cv.off = 0;
  exec_run *run = carve_take(&cv, sizeof(exec_run));
  run->devs = carve_take(&cv, sizeof(dev_run) * (size_t)ndev);
  run->ready = carve_take(&cv, sizeof(cj_event *) * nk);
  run->waits = carve_take(&cv, sizeof(arg_wait) * nk);
  *out_candidate = carve_take(&cv, sizeof(int32_t) * (size_t)nr);
  for (int d = 0; d < ndev; d++) {
    dev_run *dv = &run->devs[d];
    dv->run = run;
    int place = share >= 0 ? share : single ? -1 : d;
    dv->replica = place >= 0 ? l->logical[place].replica : 0;
    dv->partition = place >= 0 ? l->logical[place].partition : 0;
    dv->dev = single ? single : l->devices[d];
    dv->argp = carve_take(&cv, sizeof(void *) * nargs);
    dv->resp = carve_take(&cv, sizeof(void *) * (size_t)nr);
    dv->pins = carve_take(&cv, sizeof(cj_storage *) * nargs);
    dv->pin_writer = carve_take(&cv, sizeof(bool) * nargs);
    dv->out_pins = carve_take(&cv, sizeof(cj_storage *) * (size_t)nr);
    dv->outs = carve_take(&cv, sizeof(cj_buffer *) * (size_t)nr);
    dv->res_donor = carve_take(&cv, sizeof(int32_t) * (size_t)nr);
    dv->aligned = carve_take(&cv, sizeof(void *) * nargs);
    dv->consumed = carve_take(&cv, sizeof(bool) * nargs);
  }
  run->client = c;
  run->backend = e->backend;
  run->prog = e->program;
  run->ndev = ndev;
  run->nargs = na;
  run->nres = nr;
  run->pool = pool;
  if (opts && opts->user_data && opts->user_data->n > 0) {
    if (opts->user_data->n > CJ_EXEC_MAX_USER_DATA) {
      free(run);
      return cj_invalid("the execute context carries %d FFI user data entries; cjrt takes at "
                        "most %d", opts->user_data->n, CJ_EXEC_MAX_USER_DATA);
    }
    memcpy(run->ud_items, opts->user_data->items,
           (size_t)opts->user_data->n * sizeof run->ud_items[0]);
    run->ud.n = opts->user_data->n;
  }
  run->ud.items = run->ud_items;
  if (pthread_mutex_init(&run->mu, NULL) != 0) {
    free(run);
    return cj_oom();
  }
  *out_run = run;
  return NULL;
}

/* Undoes steps A-C of cj_loaded_execute after a failure: gives donated storages back, drops
 * pins, storages, buffers and events, and frees the run. */
static void exec_run_undo(cj_loaded *l, exec_run *run, cj_buffer *const *args, size_t nargs,
                          exec_group *spare) {
  cj_executable *e = l->exec;
  cj_client *c = l->client;
  int ndev = run->ndev, na = run->nargs, nr = run->nres;
  /* Undo: give donated storages back, drop pins, storages, buffers and events. */
  for (int d = 0; d < ndev; d++) {
    dev_run *dv = &run->devs[d];
    cj_buffer *const *list = args + (size_t)d * nargs;
    for (int i = 0; i < na; i++) {
      if (dv->pin_writer[i]) {
        cj_storage *s = dv->pins[i];
        cj_storage_writer_unref(s);
        cj_buffer_undo_donate(list[i], s);
      } else if (dv->consumed[i]) {
        cj_buffer_undo_donate(list[i], dv->pins[i]);
      } else {
        cj_storage_unpin(dv->pins[i]);
      }
      cj_event_release(run->ready[(size_t)d * nargs + (size_t)i]);
    }
    for (int j = 0; j < nr; j++) {
      cj_storage_unpin(dv->out_pins[j]);
      cj_buffer_release(dv->outs[j]);
    }
    cj_event_release(dv->done);
  }
  cj_client_inflight_release(c);
  group_free(e->backend, spare);
  pthread_mutex_destroy(&run->mu);
  free(run);
}

/* Results that may take their donor argument's storage: the program allows it, the caller
 * does not forbid it, the byte sizes agree (the element types may differ: XLA aliases by size too),
 * and no other result already claimed that argument.
 * candidate[j] becomes result j's donor argument, or -1. */
static CJ_MUST_USE cj_status choose_donors(const cj_program_info *info, const cj_execute_options *opts,
                               size_t nargs, int32_t *candidate) {
  int na = (int)nargs, nr = info->num_results;
  cj_status st = NULL;
  bool *claimed = calloc(nargs ? nargs : 1, sizeof(bool));
  if (!claimed) st = cj_oom();
  for (int j = 0; j < nr && !st; j++) {
    int32_t i = info->result_donor ? info->result_donor[j] : -1;
    candidate[j] = -1;
    if (i < 0 || i >= na || claimed[i]) continue;
    bool forbidden = false;
    if (opts && opts->non_donatable)
      for (size_t k = 0; k < opts->num_non_donatable && !forbidden; k++)
        forbidden = opts->non_donatable[k] == i;
    if (forbidden || info->args[i].nbytes != info->results[j].nbytes)
      continue;
    claimed[i] = true;
    candidate[j] = i;
  }
  free(claimed);
  return st;
}

/* Step D of cj_loaded_execute, once nothing can fail: results take their storages (a fresh one,
 * whose allocation reference the buffer keeps and whose writer reference the run keeps, or the
 * donor's), and the caller gets its references to the results and the completion events. */
static void exec_run_attach(exec_run *run, int ndev, int nr, cj_buffer **out, cj_event **out_done) {
  for (int d = 0; d < ndev; d++) {
    dev_run *dv = &run->devs[d];
    for (int j = 0; j < nr; j++) {
      cj_storage *s;
      if (dv->res_donor[j] >= 0) {
        s = dv->pins[dv->res_donor[j]];
      } else {
        s = dv->out_pins[j];
        cj_storage_writer_ref(s);
        dv->out_pins[j] = s; /* now the writer reference */
      }
      cj_buffer_attach_storage(dv->outs[j], s);
    }
  }
  for (int d = 0; d < ndev; d++) {
    dev_run *dv = &run->devs[d];
    for (int j = 0; j < nr; j++) {
      cj_buffer_retain(dv->outs[j]);
      out[(size_t)d * (size_t)nr + (size_t)j] = dv->outs[j];
    }
    if (out_done) {
      cj_event_retain(dv->done);
      out_done[d] = dv->done;
    }
  }
}

/* Step E of cj_loaded_execute across processes: the run waits (one count of `waiting` each) for
 * the previous executions it must follow; prev holds one reference each, which the callbacks
 * take. Out of memory drops a wait: that run is then unordered. */
static void exec_run_wait_prev(exec_run *run, cj_event **prev, int nprev) {
  for (int i = 0; i < nprev; i++) {
    order_wait *w = malloc(sizeof *w);
    if (!w) { /* out of memory: do not wait for this one */
      cj_event_release(prev[i]);
      run_arrive(run, false);
      continue;
    }
    w->run = run;
    w->ev = prev[i]; /* the reference goes to the callback */
    cj_event_retain(prev[i]); /* (kept while registering) */
    cj_status ws = cj_event_on_ready(prev[i], order_ready, w);
    cj_event *keep = prev[i];
    if (ws) {
      cj_status_ignore(ws); /* out of memory: do not wait for the previous execution */
      order_ready(w, NULL);
    }
    cj_event_release(keep);
  }
}

cj_status cj_loaded_execute(cj_loaded *l, cj_device *execute_device, cj_buffer *const *args,
                            size_t ndevices, size_t nargs, const cj_execute_options *opts,
                            cj_buffer **out, cj_event **out_done) {
  CJ_RETURN_IF_ERROR(cj_loaded_check_call(l, execute_device, ndevices, nargs));
  cj_executable *e = l->exec;
  const cj_program_info *info = e->info;
  cj_client *c = l->client;
  cj_device *single = execute_device;
  int ndev = (int)ndevices;
  /* execute_device on a multi-device executable: that device's share (its place in the
   * assignment), grouped with its peers' calls when the program has collectives */
  int share = single && l->ndevices > 1 ? loaded_device_index(l, single) : -1;
  bool grouped = share >= 0 && e->has_collectives;
  if (nargs && !args) return cj_invalid("argument_lists is NULL");
  for (int d = 0; d < ndev; d++) {
    cj_device *dev = single ? single : l->devices[d];
    for (size_t i = 0; i < nargs; i++)
      CJ_RETURN_IF_ERROR(check_argument(l, info, args[(size_t)d * nargs + i], i, d, ndev, dev));
  }
  cj_threadpool *pool;
  CJ_RETURN_IF_ERROR(cj_client_pool(c, &pool));

  int na = (int)nargs, nr = info->num_results;
  size_t nk = (size_t)ndev * nargs;
  exec_run *run = NULL;
  int32_t *candidate = NULL;
  CJ_RETURN_IF_ERROR(exec_run_new(l, single, ndev, nargs, share, pool, opts, &run, &candidate));

  cj_status st = choose_donors(info, opts, nargs, candidate);
  /* a group to start when this call opens a new one (joined below, once nothing can fail) */
  exec_group *spare = NULL;
  if (!st && grouped) st = group_new(l, opts ? opts->launch_id : 0, &spare);
  if (st) {
    pthread_mutex_destroy(&run->mu);
    free(run);
    return st;
  }

  cj_client_inflight_acquire(c);

  /* A: per device, the completion event and the output buffers, without storage yet. */
  for (int d = 0; d < ndev && !st; d++) {
    dev_run *dv = &run->devs[d];
    cj_device *dev = single ? single : l->devices[d];
    cj_memory *mem = dev->memories[CJ_MEMORY_DEVICE];
    dv->done = cj_event_create(false);
    if (!dv->done) st = cj_oom();
    for (int j = 0; j < nr && !st; j++) {
      const cj_shape *rs = &info->results[j];
      dv->res_donor[j] = -1;
      cj_event_retain(dv->done);
      st = cj_buffer_create_with_storage(mem, rs->dtype, rs->dims, rs->rank, NULL, dv->done,
                                         &dv->outs[j]);
    }
  }
  /* B: donations (they mark the donors deleted; undone if anything below fails), then pins of
   * the other arguments. A donated buffer that the list also passes as another argument is an
   * error, as in XLA: the program may overwrite it while the other argument still reads it. */
  for (int d = 0; d < ndev && !st; d++) {
    dev_run *dv = &run->devs[d];
    cj_buffer *const *list = args + (size_t)d * nargs;
    for (int j = 0; j < nr && !st; j++) {
      int32_t i = candidate[j];
      if (i < 0) continue;
      int other = -1;
      for (int k = 0; k < na && other < 0; k++)
        if (k != i && list[k] == list[i]) other = k;
      if (other >= 0) {
        char name[64];
        arg_name(name, sizeof name, (size_t)i, d, ndev);
        st = cj_invalid("%s is donated, and the same buffer is also passed as argument %d of the "
                        "same call (f(donate(a), a)): a donated buffer can be used only once",
                        name, other);
        break;
      }
      cj_storage *s;
      cj_event *ready;
      int how = cj_buffer_try_donate(list[i], &s, &ready);
      if (how == CJ_NOT_DONATED) continue;
      if (how == CJ_CONSUMED) {
        /* the caller gave the buffer up but its memory is not ours to write (a view, zero-copy
         * host data): read it, let it go at the end; the result gets fresh memory in step C */
        dv->pins[i] = s;
        dv->consumed[i] = true;
        run->ready[(size_t)d * nargs + (size_t)i] = ready;
        dv->argp[i] = cj_storage_data(s);
        continue;
      }
      /* s carries the donor's reference, which the result takes in step D; the pin is ours. */
      cj_storage_writer_ref(s);
      dv->pins[i] = s;
      dv->pin_writer[i] = true;
      run->ready[(size_t)d * nargs + (size_t)i] = ready;
      dv->argp[i] = cj_storage_data(s);
      dv->resp[j] = cj_storage_data(s);
      dv->res_donor[j] = i;
    }
    for (int i = 0; i < na && !st; i++) {
      if (dv->pin_writer[i] || dv->consumed[i]) continue;
      st = cj_buffer_acquire(list[i], &dv->pins[i], &run->ready[(size_t)d * nargs + (size_t)i]);
      if (st) {
        char name[64];
        arg_name(name, sizeof name, (size_t)i, d, ndev);
        st = cj_status_annotate(st, "%s", name);
      } else {
        dv->argp[i] = dv->pins[i] ? cj_storage_data(dv->pins[i]) : NULL;
      }
    }
  }
  /* C: fresh storage for the results that did not get a donor's. */
  for (int d = 0; d < ndev && !st; d++) {
    dev_run *dv = &run->devs[d];
    cj_device *dev = single ? single : l->devices[d];
    cj_memory *mem = dev->memories[CJ_MEMORY_DEVICE];
    for (int j = 0; j < nr && !st; j++) {
      if (dv->res_donor[j] >= 0) continue;
      st = cj_storage_alloc(mem, info->results[j].nbytes, &dv->out_pins[j]);
      if (!st) dv->resp[j] = cj_storage_data(dv->out_pins[j]);
    }
  }
  if (st) {
    exec_run_undo(l, run, args, nargs, spare);
    return st;
  }
  exec_run_attach(run, ndev, nr, out, out_done);
  cj_loaded_retain(l);
  run->le = l;
  run->short_run = exec_short(e);
  if (grouped) {
    run->group = group_join(l, opts ? opts->launch_id : 0, share, &spare);
    run->group_dev = share;
    run->launch = run->group->launch;
    group_free(e->backend, spare); /* NULL when this call opened the group */
  }
  /* E: wait for every argument (and, across processes, the previous execution), then start. */
  cj_event **prev = NULL;
  int nprev = 0;
  if (l->xproc.ops && e->has_collectives && !grouped) {
    cj_status os = order_swap(l->client, run, &prev, &nprev);
    if (os) {
      cj_status_ignore(os); /* out of memory: this one runs unordered */
      prev = NULL;
      nprev = 0;
    }
  }
  atomic_init(&run->running, ndev);
  atomic_init(&run->waiting, (int)nk + 1 + nprev);
  exec_run_wait_prev(run, prev, nprev);
  free(prev);
  for (int d = 0; d < ndev; d++)
    for (int i = 0; i < na; i++) {
      size_t k = (size_t)d * nargs + (size_t)i;
      arg_wait *w = &run->waits[k];
      w->run = run;
      w->dev = d;
      w->arg = i;
      cj_status ws = cj_event_on_ready(run->ready[k], arg_ready, w);
      if (ws) { /* out of memory: counts as an argument failing */
        arg_ready(w, ws);
        cj_status_free(ws);
      }
    }
  /* Poisonable from now until each share finishes: registered while this call still holds the
   * run back (its count in `waiting`), so no share can have started. A small run whose
   * arguments are all ready runs on this thread right below and finishes before Execute returns:
   * there is nothing to poison, so it skips the registry (and its lock). */
  bool inline_now = ndev == 1 && run->short_run && !grouped &&
                    atomic_load_explicit(&run->waiting, memory_order_acquire) == 1;
  if (!inline_now)
    for (int d = 0; d < ndev; d++)
      poison_register(&run->devs[d], single ? single : l->devices[d], opts ? opts->launch_id : 0);
  run_arrive(run, true);
  return NULL;
}
