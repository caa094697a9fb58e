/* cjrt bench: runs benchmark programs (StableHLO) through a PJRT plugin and times them.
 *
 *   cjrt bench [--plugin PATH | --core] [--threads N] [--min-time S] [--json] PROGRAM.mlir...
 *
 * For each program: compile time, then executions on deterministic pseudo-random arguments
 * until --min-time seconds (default 1) and at least 3 runs; prints min and median wall time
 * per execution (the execution plus waiting for its outputs). Arguments the program donates
 * (jax.buffer_donor / tf.aliasing_output) are replaced by the outputs that took them over, so a
 * training step runs as a training loop would. --json prints one JSON object per program
 * (bench/bench.py combines them with XLA:CPU, numpy and PyTorch on the same workloads).
 * --core runs in-process through the CPU backend's vtable (a pool of --threads threads)
 * instead of a plugin.
 */
#include <dlfcn.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/threadpool.h"
#include "frontend/frontend.h"
#include "ir/ir.h"
#include "pjrt_c_api.h"
#include "runtime/backend.h"

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static char *slurp(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *b = malloc((size_t)n + 1);
  if (b && fread(b, 1, (size_t)n, f) != (size_t)n) {
    free(b);
    b = NULL;
  }
  fclose(f);
  if (b) {
    b[n] = 0;
    *len = (size_t)n;
  }
  return b;
}

static int cmp_d(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* deterministic argument data: small values of the element type */
static void fill_arg(void *data, cj_dtype dt, int64_t n, uint32_t seed) {
  uint32_t s = seed * 2654435761u + 1;
  for (int64_t i = 0; i < n; i++) {
    s = s * 1664525u + 1013904223u;
    double v = ((double)((s >> 8) & 0xffff) / 65536.0 - 0.5) * 0.2;
    if (cj_dtype_is_float(dt) || cj_dtype_is_complex(dt))
      cj_elem_set_f64(dt, data, (size_t)i, v);
    else
      cj_elem_set_i64(dt, data, (size_t)i, (int64_t)(s >> 28));
  }
}

typedef struct shape {
  cj_dtype dt;
  int32_t rank;
  int64_t dims[16];
  int64_t n, bytes;
} shape;

typedef struct result {
  double compile_ms, min_ms, median_ms;
  int runs;
} result;

/* ======================================================================== core */

static char *bench_core(const char *text, size_t len, const char *name, int threads, double min_time,
                        result *r) {
  cj_module *m = NULL;
  cj_status st = cj_read_program(text, len, name, &m);
  if (!st) st = cj_verify_module(m);
  if (st) {
    char *msg = strdup(cj_status_message(st));
    cj_status_free(st);
    cj_module_free(m);
    return msg;
  }
  cj_backend *b = cj_backend_cpu();
  cj_program *p = NULL;
  cj_compile_options o = {1, 1, NULL, false, false};
  double t0 = now_s();
  st = b->vt->compile(b, m, &o, &p);
  r->compile_ms = (now_s() - t0) * 1e3;
  if (st) {
    char *msg = strdup(cj_status_message(st));
    cj_status_free(st);
    return msg;
  }
  const cj_program_info *in = b->vt->program_info(p);
  cj_threadpool *pool = cj_pool_create(threads, &st);
  cj_status_free(st);
  void **args = calloc((size_t)in->num_args + 1, sizeof(void *));
  void **res = calloc((size_t)in->num_results + 1, sizeof(void *));
  for (int32_t i = 0; i < in->num_args; i++) {
    args[i] = b->vt->alloc(b, in->args[i].nbytes);
    int64_t n = 1;
    for (int32_t d = 0; d < in->args[i].rank; d++) n *= in->args[i].dims[d];
    fill_arg(args[i], in->args[i].dtype, n, (uint32_t)i);
  }
  /* donated arguments are updated in place (the result is written over them), as a framework
   * that donates them would do */
  for (int32_t j = 0; j < in->num_results; j++)
    res[j] = in->result_donor[j] >= 0 ? args[in->result_donor[j]] : b->vt->alloc(b, in->results[j].nbytes);
  double times[100000];
  int nrun = 0;
  double start = now_s();
  cj_exec_args ea;
  memset(&ea, 0, sizeof ea);
  ea.args = args;
  ea.results = res;
  ea.pool = pool;
  char *err = NULL;
  st = b->vt->execute(b, p, &ea); /* warm-up: the scratch arena is allocated here */
  while (!st && nrun < 100000 && (nrun < 3 || now_s() - start < min_time)) {
    double a = now_s();
    st = b->vt->execute(b, p, &ea);
    times[nrun++] = now_s() - a;
  }
  if (st) {
    err = strdup(cj_status_message(st));
    cj_status_free(st);
  }
  qsort(times, (size_t)nrun, sizeof(double), cmp_d);
  r->runs = nrun;
  r->min_ms = nrun ? times[0] * 1e3 : 0;
  r->median_ms = nrun ? times[nrun / 2] * 1e3 : 0;
  for (int32_t j = 0; j < in->num_results; j++)
    if (in->result_donor[j] < 0) b->vt->free(b, res[j]);
  for (int32_t i = 0; i < in->num_args; i++) b->vt->free(b, args[i]);
  free(args);
  free(res);
  cj_pool_destroy(pool);
  b->vt->program_free(p);
  return err;
}

/* ======================================================================== plugin */

typedef struct plug {
  const PJRT_Api *api;
  PJRT_Client *client;
  PJRT_Device *device;
} plug;

static char *perr(const PJRT_Api *api, PJRT_Error *e) {
  PJRT_Error_Message_Args ma = {PJRT_Error_Message_Args_STRUCT_SIZE, NULL, e, NULL, 0};
  api->PJRT_Error_Message(&ma);
  char *m = malloc(ma.message_size + 1);
  if (m) {
    memcpy(m, ma.message ? ma.message : "", ma.message_size);
    m[ma.message_size] = 0;
  }
  PJRT_Error_Destroy_Args da = {PJRT_Error_Destroy_Args_STRUCT_SIZE, NULL, e};
  api->PJRT_Error_Destroy(&da);
  return m;
}

static char *plug_init(plug *P, const char *path, int threads) {
  void *dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!dl) return strdup(dlerror());
  const PJRT_Api *(*get)(void) = (const PJRT_Api *(*)(void))dlsym(dl, "GetPjrtApi");
  if (!get || !(P->api = get())) return strdup("no GetPjrtApi");
  PJRT_Plugin_Initialize_Args ia = {PJRT_Plugin_Initialize_Args_STRUCT_SIZE, NULL};
  PJRT_Error *e = P->api->PJRT_Plugin_Initialize(&ia);
  if (e) return perr(P->api, e);
  (void)threads;
  PJRT_Client_Create_Args ca;
  memset(&ca, 0, sizeof ca);
  ca.struct_size = PJRT_Client_Create_Args_STRUCT_SIZE;
  e = P->api->PJRT_Client_Create(&ca);
  if (e) return perr(P->api, e);
  P->client = ca.client;
  PJRT_Client_AddressableDevices_Args da;
  memset(&da, 0, sizeof da);
  da.struct_size = PJRT_Client_AddressableDevices_Args_STRUCT_SIZE;
  da.client = P->client;
  e = P->api->PJRT_Client_AddressableDevices(&da);
  if (e) return perr(P->api, e);
  if (!da.num_addressable_devices) return strdup("the plugin has no device");
  P->device = da.addressable_devices[0];
  return NULL;
}

static void destroy_buffer(const PJRT_Api *api, PJRT_Buffer *b) {
  if (!b) return;
  PJRT_Buffer_Destroy_Args d = {PJRT_Buffer_Destroy_Args_STRUCT_SIZE, NULL, b};
  PJRT_Error *e = api->PJRT_Buffer_Destroy(&d);
  if (e) free(perr(api, e));
}

static char *bench_plugin(plug *P, const char *text, size_t len, const shape *argsh, int nargs,
                          const shape *ressh, int nres, double min_time, result *r) {
  const PJRT_Api *api = P->api;
  PJRT_Program prog;
  memset(&prog, 0, sizeof prog);
  prog.struct_size = PJRT_Program_STRUCT_SIZE;
  prog.code = (char *)text;
  prog.code_size = len;
  prog.format = "mlir";
  prog.format_size = 4;
  PJRT_Client_Compile_Args ca;
  memset(&ca, 0, sizeof ca);
  ca.struct_size = PJRT_Client_Compile_Args_STRUCT_SIZE;
  ca.client = P->client;
  ca.program = &prog;
  ca.compile_options = "";
  double t0 = now_s();
  PJRT_Error *e = api->PJRT_Client_Compile(&ca);
  r->compile_ms = (now_s() - t0) * 1e3;
  if (e) return perr(api, e);
  PJRT_Buffer **args = calloc((size_t)nargs + 1, sizeof(PJRT_Buffer *));
  PJRT_Buffer **outs = calloc((size_t)nres + 1, sizeof(PJRT_Buffer *));
  char *err = NULL;
  for (int i = 0; i < nargs && !err; i++) {
    void *host = malloc((size_t)argsh[i].bytes + 1);
    fill_arg(host, argsh[i].dt, argsh[i].n, (uint32_t)i);
    PJRT_Client_BufferFromHostBuffer_Args ba;
    memset(&ba, 0, sizeof ba);
    ba.struct_size = PJRT_Client_BufferFromHostBuffer_Args_STRUCT_SIZE;
    ba.client = P->client;
    ba.data = host;
    ba.type = (PJRT_Buffer_Type)argsh[i].dt;
    ba.dims = argsh[i].dims;
    ba.num_dims = (size_t)argsh[i].rank;
    ba.host_buffer_semantics = PJRT_HostBufferSemantics_kImmutableOnlyDuringCall;
    ba.device = P->device;
    e = api->PJRT_Client_BufferFromHostBuffer(&ba);
    if (e) {
      err = perr(api, e);
    } else {
      args[i] = ba.buffer;
      if (ba.done_with_host_buffer) {
        PJRT_Event_Await_Args w = {PJRT_Event_Await_Args_STRUCT_SIZE, NULL, ba.done_with_host_buffer};
        PJRT_Error *e2 = api->PJRT_Event_Await(&w);
        if (e2) free(perr(api, e2));
        PJRT_Event_Destroy_Args d = {PJRT_Event_Destroy_Args_STRUCT_SIZE, NULL, ba.done_with_host_buffer};
        e2 = api->PJRT_Event_Destroy(&d);
        if (e2) free(perr(api, e2));
      }
    }
    free(host);
  }
  double times[100000];
  int nrun = 0, iter = 0;
  double start = now_s();
  while (!err && nrun < 100000 && (nrun < 3 || now_s() - start < min_time)) {
    PJRT_ExecuteOptions eo;
    memset(&eo, 0, sizeof eo);
    eo.struct_size = PJRT_ExecuteOptions_STRUCT_SIZE;
    PJRT_Buffer *const *arg_lists[1] = {args};
    PJRT_Buffer **const out_lists[1] = {outs};
    PJRT_Event *done[1] = {NULL};
    PJRT_LoadedExecutable_Execute_Args xa;
    memset(&xa, 0, sizeof xa);
    xa.struct_size = PJRT_LoadedExecutable_Execute_Args_STRUCT_SIZE;
    xa.executable = ca.executable;
    xa.options = &eo;
    xa.argument_lists = arg_lists;
    xa.num_devices = 1;
    xa.num_args = (size_t)nargs;
    xa.output_lists = out_lists;
    xa.device_complete_events = done;
    double a = now_s();
    e = api->PJRT_LoadedExecutable_Execute(&xa);
    if (!e && done[0]) {
      PJRT_Event_Await_Args w = {PJRT_Event_Await_Args_STRUCT_SIZE, NULL, done[0]};
      e = api->PJRT_Event_Await(&w);
      PJRT_Event_Destroy_Args d = {PJRT_Event_Destroy_Args_STRUCT_SIZE, NULL, done[0]};
      PJRT_Error *e2 = api->PJRT_Event_Destroy(&d);
      if (e2) free(perr(api, e2));
    }
    double t = now_s() - a;
    if (e) {
      err = perr(api, e);
      break;
    }
    if (iter++ > 0) times[nrun++] = t; /* the first run is a warm-up */
    /* donated arguments were consumed: feed the outputs that took them over back in */
    bool used[256] = {false};
    for (int i = 0; i < nargs; i++) {
      PJRT_Buffer_IsDeleted_Args da = {PJRT_Buffer_IsDeleted_Args_STRUCT_SIZE, NULL, args[i], false};
      PJRT_Error *e2 = api->PJRT_Buffer_IsDeleted(&da);
      if (e2) free(perr(api, e2));
      if (!da.is_deleted) continue;
      for (int j = 0; j < nres && j < 256; j++)
        if (!used[j] && ressh[j].dt == argsh[i].dt && ressh[j].bytes == argsh[i].bytes) {
          destroy_buffer(api, args[i]);
          args[i] = outs[j];
          outs[j] = NULL;
          used[j] = true;
          break;
        }
    }
    for (int j = 0; j < nres; j++) {
      destroy_buffer(api, outs[j]);
      outs[j] = NULL;
    }
  }
  qsort(times, (size_t)nrun, sizeof(double), cmp_d);
  r->runs = nrun;
  r->min_ms = nrun ? times[0] * 1e3 : 0;
  r->median_ms = nrun ? times[nrun / 2] * 1e3 : 0;
  for (int i = 0; i < nargs; i++) destroy_buffer(api, args[i]);
  free(args);
  free(outs);
  PJRT_LoadedExecutable_Destroy_Args ld = {PJRT_LoadedExecutable_Destroy_Args_STRUCT_SIZE, NULL, ca.executable};
  e = api->PJRT_LoadedExecutable_Destroy(&ld);
  if (e) free(perr(api, e));
  return err;
}

static int shapes_of(const cj_type *ft, bool results, shape *out, int cap) {
  int n = results ? ft->nresults : ft->rank;
  for (int i = 0; i < n && i < cap; i++) {
    const cj_type *t = results ? cj_type_fn_result(ft, i) : cj_type_fn_input(ft, i);
    shape *s = &out[i];
    memset(s, 0, sizeof *s);
    s->dt = t->dtype;
    s->rank = t->rank;
    s->n = 1;
    for (int32_t d = 0; d < t->rank && d < 16; d++) {
      s->dims[d] = t->dims[d];
      s->n *= t->dims[d];
    }
    s->bytes = s->n * cj_dtype_bytes(t->dtype);
  }
  return n < cap ? n : cap;
}

static void usage(FILE *f) {
  fprintf(f,
          "usage: cjrt bench [--plugin PATH | --core] [--threads N] [--min-time S] [--json]\n"
          "                  PROGRAM.mlir...\n"
          "\n"
          "Compiles each program with a PJRT plugin and times its executions on pseudo-random\n"
          "arguments (donated arguments are fed back from the outputs that replaced them).\n"
          "\n"
          "  --plugin PATH   the PJRT plugin (default: pjrt_c_api_cjrt_plugin.so beside cjrt)\n"
          "  --core          run in-process through the CPU backend (a pool of --threads)\n"
          "  --threads N     threads for --core (default: the number of cores)\n"
          "  --min-time S    time each program at least S seconds (default 1)\n"
          "  --json          one JSON object per program instead of a table\n"
          "  -h, --help      this text\n");
}

int cjrt_cmd_bench(int argc, char **argv) {
  const char *plugin = NULL;
  bool core = false, json = false;
  int threads = 0;
  double min_time = 1.0;
  int first = argc;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
      usage(stdout);
      return 0;
    } else if (!strcmp(argv[i], "--plugin") && i + 1 < argc) {
      plugin = argv[++i];
    } else if (!strcmp(argv[i], "--core")) {
      core = true;
    } else if (!strcmp(argv[i], "--json")) {
      json = true;
    } else if (!strcmp(argv[i], "--threads") && i + 1 < argc) {
      threads = atoi(argv[++i]);
    } else if (!strcmp(argv[i], "--min-time") && i + 1 < argc) {
      min_time = atof(argv[++i]);
    } else if (argv[i][0] == '-') {
      fprintf(stderr, "cjrt bench: unknown option %s\n", argv[i]);
      usage(stderr);
      return 2;
    } else {
      first = i;
      break;
    }
  }
  if (first >= argc) {
    usage(stderr);
    return 2;
  }
  if (threads <= 0) threads = cj_num_cores();
  plug P;
  memset(&P, 0, sizeof P);
  if (!core) {
    char path[PATH_MAX];
    if (!plugin) {
      ssize_t n = readlink("/proc/self/exe", path, sizeof path - 40);
      if (n > 0) {
        path[n] = 0;
        char *slash = strrchr(path, '/');
        strcpy(slash ? slash + 1 : path, "pjrt_c_api_cjrt_plugin.so");
      } else {
        strcpy(path, "pjrt_c_api_cjrt_plugin.so");
      }
      plugin = path;
    }
    char *err = plug_init(&P, plugin, threads);
    if (err) {
      fprintf(stderr, "cjrt bench: %s\n", err);
      free(err);
      return 2;
    }
  }
  if (!json)
    printf("%-28s %12s %12s %12s %7s   (%s, %d threads)\n", "program", "compile ms", "min ms",
           "median ms", "runs", core ? "in-process" : "plugin", threads);
  int failures = 0;
  for (int i = first; i < argc; i++) {
    size_t len;
    char *text = slurp(argv[i], &len);
    const char *base = strrchr(argv[i], '/');
    base = base ? base + 1 : argv[i];
    result r;
    memset(&r, 0, sizeof r);
    char *err = NULL;
    if (!text) {
      err = strdup("cannot read the file");
    } else if (core) {
      err = bench_core(text, len, argv[i], threads, min_time, &r);
    } else {
      cj_module *m = NULL;
      cj_status st = cj_read_program(text, len, argv[i], &m);
      cj_op *main = st ? NULL : cj_module_main(m);
      const cj_type *ft = main ? cj_func_type(main) : NULL;
      if (!ft) {
        err = strdup(st ? cj_status_message(st) : "no entry function");
      } else {
        shape as[256], rs[256];
        int na = shapes_of(ft, false, as, 256), nr = shapes_of(ft, true, rs, 256);
        err = bench_plugin(&P, text, len, as, na, rs, nr, min_time, &r);
      }
      cj_status_free(st);
      cj_module_free(m);
    }
    if (json) {
      printf("{\"program\": \"%s\", \"mode\": \"%s\", \"threads\": %d, \"compile_ms\": %.3f, "
             "\"min_ms\": %.6f, \"median_ms\": %.6f, \"runs\": %d, \"error\": %s%s%s}\n",
             base, core ? "core" : "plugin", threads, r.compile_ms, r.min_ms, r.median_ms, r.runs,
             err ? "\"" : "", err ? "failed" : "null", err ? "\"" : "");
      if (err) fprintf(stderr, "cjrt bench: %s: %s\n", base, err);
    } else if (err) {
      printf("%-28s failed: %s\n", base, err);
    } else {
      printf("%-28s %12.3f %12.4f %12.4f %7d\n", base, r.compile_ms, r.min_ms, r.median_ms, r.runs);
    }
    if (err) failures++;
    free(err);
    free(text);
  }
  if (P.client) {
    PJRT_Client_Destroy_Args d = {PJRT_Client_Destroy_Args_STRUCT_SIZE, NULL, P.client};
    PJRT_Error *e = P.api->PJRT_Client_Destroy(&d);
    if (e) free(perr(P.api, e));
  }
  return failures ? 1 : 0;
}
