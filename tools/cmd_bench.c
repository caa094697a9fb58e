/* cjrt bench: runs benchmark programs (StableHLO) through a PJRT plugin and times them, alone or
 * side by side with a peer plugin.
 *
 *   cjrt bench [--plugin P] [--peer Q] [--min-time S] [--json] PROGRAM...
 *   cjrt bench --core [--threads N] [--min-time S] [--json] PROGRAM...
 *
 * Everything goes through libcjrt (include/cjrt/cjrt.h), so any PJRT plugin can be measured
 * (ours, XLA's CPU plugin, ...). For each program: the compile time, then executions on
 * deterministic pseudo-random arguments until --min-time seconds (default 1) and at least 3
 * runs; prints min and median wall time per execution (the execution plus waiting for it).
 * Arguments the program donates (jax.buffer_donor / tf.aliasing_output) are replaced by the
 * outputs that took them over, so a training step runs as a training loop would.
 *
 * With --peer Q both plugins get the same arguments: the outputs of their first executions are
 * compared (a tolerance per element type), then executions alternate in rounds (P for a slice
 * of time, Q for a slice, P, Q ...: these machines are noisy, so both see the same noise), and
 * each program's row shows both medians and the ratio P/Q, for compile times too; a summary
 * line gives the geometric means and the worst ratios.
 *
 * --json prints one JSON object per program (bench/bench.py combines them with XLA:CPU, numpy
 * and PyTorch on the same workloads). --core runs in-process through the CPU backend's vtable (a
 * pool of --threads threads) instead of a plugin.
 *
 * The argument shapes are read from the program's entry function with cjrt's own reader (PJRT
 * has no call that tells an executable's parameter shapes).
 */
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/threadpool.h"
#include "cjrt/cjrt.h"
#include "frontend/frontend.h"
#include "ir/ir.h"
#include "runtime/backend.h"
#include "runtime/compile.h"

enum { MAX_RUNS = 1 << 20, MAX_IO = 4096, BENCH_MAX_RANK = 64 };

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static char *xstrdup(const char *s) {
  size_t n = strlen(s);
  char *d = malloc(n + 1);
  if (d) memcpy(d, s, n + 1);
  return d;
}

static char *fmt(const char *f, ...) __attribute__((format(printf, 1, 2)));
static char *fmt(const char *f, ...) {
  va_list ap;
  va_start(ap, f);
  char *s = NULL;
  if (vasprintf(&s, f, ap) < 0) s = NULL;
  va_end(ap);
  return s;
}

/* Takes a cjrt error: its message prefixed with `what` (malloc'd), and frees it. */
static char *take_error(cjrt_error *e, const char *what) {
  char *m = fmt("%s: %s", what, cjrt_error_message(e));
  cjrt_error_free(e);
  return m;
}

static char *slurp(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  char *b = NULL;
  long n = -1;
  if (fseek(f, 0, SEEK_END) == 0) n = ftell(f);
  if (n >= 0 && fseek(f, 0, SEEK_SET) == 0) b = malloc((size_t)n + 1);
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

/* Deterministic argument data: small values of the element type (floats in [-0.1, 0.1),
 * integers in [0, 8) or what the type holds, pred 0/1). */
static void fill_arg(void *data, cj_dtype dt, int64_t n, uint32_t seed) {
  uint32_t s = seed * 2654435761u + 1;
  int bits = cj_dtype_bits(dt);
  bool is_float = cj_dtype_is_float(dt) || cj_dtype_is_complex(dt);
  if (cj_dtype_is_complex(dt)) {
    dt = cj_dtype_component(dt);
    n *= 2;
  }
  for (int64_t i = 0; i < n; i++) {
    s = s * 1664525u + 1013904223u;
    if (is_float) {
      cj_elem_set_f64(dt, data, (size_t)i, ((double)((s >> 8) & 0xffff) / 65536.0 - 0.5) * 0.2);
    } else {
      int64_t v = (int64_t)(s >> 29); /* 0..7 */
      if (dt == CJ_PRED || bits <= 1) v &= 1;
      else if (bits == 2) v &= 1;
      cj_elem_set_i64(dt, data, (size_t)i, v);
    }
  }
}

/* The entry function's parameters, read with cjrt's own reader. */
typedef struct shape {
  cj_dtype dt;
  int32_t rank;
  int64_t dims[BENCH_MAX_RANK];
  int64_t n, bytes;
} shape;

static char *read_params(const char *text, size_t len, const char *name, shape **out, int *nout) {
  *out = NULL;
  *nout = 0;
  cj_module *m = NULL;
  cj_status st = cj_read_program(text, len, name, &m);
  cj_op *main = st ? NULL : cj_module_main(m);
  const cj_type *ft = main ? cj_func_type(main) : NULL;
  char *err = NULL;
  if (!ft) {
    err = xstrdup(st ? cj_status_message(st) : "no entry function");
  } else if (ft->rank > MAX_IO) {
    err = fmt("%d parameters is more than cjrt bench handles", (int)ft->rank);
  } else {
    shape *sh = calloc((size_t)ft->rank + 1, sizeof *sh);
    if (!sh) err = xstrdup("out of memory");
    for (int32_t i = 0; sh && i < ft->rank && !err; i++) {
      const cj_type *t = cj_type_fn_input(ft, i);
      if (!cj_type_is_static(t) || t->dtype == CJ_TOKEN || !cj_dtype_is_valid(t->dtype) ||
          t->rank > BENCH_MAX_RANK) {
        err = fmt("parameter %d is not a static tensor (cjrt bench makes arguments only for "
                  "static shapes)", (int)i);
        break;
      }
      sh[i].dt = t->dtype;
      sh[i].rank = t->rank;
      sh[i].n = 1;
      for (int32_t d = 0; d < t->rank; d++) {
        sh[i].dims[d] = t->dims[d];
        sh[i].n *= t->dims[d];
      }
      sh[i].bytes = sh[i].n * cj_dtype_bytes(t->dtype);
    }
    if (err) {
      free(sh);
    } else {
      *out = sh;
      *nout = ft->rank;
    }
  }
  cj_status_free(st);
  cj_module_free(m);
  return err;
}

/* ======================================================================== core */

typedef struct result {
  double compile_ms, min_ms, median_ms;
  int runs;
} result;

static void summarize(double *times, int n, result *r) {
  qsort(times, (size_t)n, sizeof(double), cmp_d);
  r->runs = n;
  r->min_ms = n ? times[0] * 1e3 : 0;
  r->median_ms = n ? (n % 2 ? times[n / 2] : 0.5 * (times[n / 2 - 1] + times[n / 2])) * 1e3 : 0;
}

static char *bench_core(const char *text, size_t len, const char *name, int threads, double min_time,
                        result *r) {
  cj_module *m = NULL;
  cj_status st = cj_read_program(text, len, name, &m);
  if (!st) st = cj_verify_module(m);
  if (st) {
    char *msg = xstrdup(cj_status_message(st));
    cj_status_free(st);
    cj_module_free(m);
    return msg;
  }
  cj_backend *b = cj_backend_cpu();
  cj_compiled *cp = NULL;
  cj_compile_options o = {1, 1, NULL, false, false};
  double t0 = now_s();
  st = cj_compile_module(b, m, &o, &cp);
  r->compile_ms = (now_s() - t0) * 1e3;
  if (st) {
    char *msg = xstrdup(cj_status_message(st));
    cj_status_free(st);
    return msg;
  }
  const cj_program *p = cp->program;
  const cj_program_info *in = &cp->info;
  cj_threadpool *pool = cj_pool_create(threads, &st);
  cj_status_free(st);
  void **args = calloc((size_t)in->num_args + 1, sizeof(void *));
  void **res = calloc((size_t)in->num_results + 1, sizeof(void *));
  double *times = malloc(MAX_RUNS * sizeof(double));
  char *err = NULL;
  if (!args || !res || !times) {
    err = xstrdup("out of memory");
  } else {
    for (int32_t i = 0; i < in->num_args; i++) {
      args[i] = b->vt->alloc(b, 0, CJ_MEMORY_DEVICE, in->args[i].nbytes);
      int64_t n = 1;
      for (int32_t d = 0; d < in->args[i].rank; d++) n *= in->args[i].dims[d];
      fill_arg(args[i], in->args[i].dtype, n, (uint32_t)i);
    }
    /* donated arguments are updated in place (the result is written over them), as a framework
     * that donates them would do */
    for (int32_t j = 0; j < in->num_results; j++)
      res[j] = in->result_donor[j] >= 0 ? args[in->result_donor[j]] : b->vt->alloc(b, 0, CJ_MEMORY_DEVICE, in->results[j].nbytes);
    int nrun = 0;
    cj_exec_args ea;
    memset(&ea, 0, sizeof ea);
    ea.args = args;
    ea.results = res;
    ea.pool = pool;
    st = b->vt->execute(b, p, &ea); /* warm-up: the scratch arena is allocated here */
    double start = now_s();
    while (!st && nrun < MAX_RUNS && (nrun < 3 || now_s() - start < min_time)) {
      double a = now_s();
      st = b->vt->execute(b, p, &ea);
      times[nrun++] = now_s() - a;
    }
    if (st) {
      err = xstrdup(cj_status_message(st));
      cj_status_free(st);
    }
    summarize(times, nrun, r);
    for (int32_t j = 0; j < in->num_results; j++)
      if (in->result_donor[j] < 0) b->vt->free(b, 0, CJ_MEMORY_DEVICE, res[j]);
    for (int32_t i = 0; i < in->num_args; i++) b->vt->free(b, 0, CJ_MEMORY_DEVICE, args[i]);
  }
  free(times);
  free(args);
  free(res);
  cj_pool_destroy(pool);
  cj_compiled_free(cp);
  return err;
}

/* ======================================================================== plugins (libcjrt) */

typedef struct engine {
  const char *label; /* "A" or "B" in messages */
  cjrt_plugin *plugin;
  cjrt_client *client;
} engine;

static char *engine_open(engine *e, const char *path_or_name) {
  cjrt_error *err = cjrt_plugin_open(path_or_name, &e->plugin);
  if (!err) err = cjrt_client_create(e->plugin, NULL, 0, &e->client);
  return err ? take_error(err, path_or_name ? path_or_name : "the default plugin") : NULL;
}

static void engine_close(engine *e) {
  cjrt_client_free(e->client);
  cjrt_plugin_close(e->plugin);
}

/* One program on one plugin: its executable, its current arguments (the outputs that replaced
 * donated ones), and the times measured so far. */
typedef struct session {
  engine *eng;
  cjrt_executable *exe;
  cjrt_buffer **args, **outs;
  size_t nargs, nouts;
  double compile_ms, busy_s;
  double *times;
  int nrun;
  /* the outputs of the first execution, copied to the host */
  void **first;
  size_t *first_bytes;
  cjrt_dtype *first_dt;
  int64_t **first_dims;
  size_t *first_rank;
} session;

static void session_free(session *s) {
  for (size_t i = 0; s->args && i < s->nargs; i++) cjrt_buffer_free(s->args[i]);
  for (size_t j = 0; s->outs && j < s->nouts; j++) cjrt_buffer_free(s->outs[j]);
  for (size_t j = 0; s->first && j < s->nouts; j++) free(s->first[j]);
  for (size_t j = 0; s->first_dims && j < s->nouts; j++) free(s->first_dims[j]);
  free(s->args);
  free(s->outs);
  free(s->first);
  free(s->first_bytes);
  free(s->first_dt);
  free(s->first_dims);
  free(s->first_rank);
  free(s->times);
  cjrt_executable_free(s->exe);
  memset(s, 0, sizeof *s);
}

/* Compiles (timed) and uploads the arguments. */
static char *session_start(session *s, engine *e, const char *code, size_t len, const shape *sh,
                           void *const *host, int nargs) {
  memset(s, 0, sizeof *s);
  s->eng = e;
  double t0 = now_s();
  cjrt_error *err = cjrt_compile(e->client, code, len, NULL, &s->exe);
  s->compile_ms = (now_s() - t0) * 1e3;
  if (err) return take_error(err, "compile");
  s->nargs = (size_t)nargs;
  s->nouts = cjrt_executable_num_outputs(s->exe);
  size_t no = s->nouts + 1;
  s->args = calloc(s->nargs + 1, sizeof *s->args);
  s->outs = calloc(no, sizeof *s->outs);
  s->times = malloc(MAX_RUNS * sizeof *s->times);
  s->first = calloc(no, sizeof *s->first);
  s->first_bytes = calloc(no, sizeof *s->first_bytes);
  s->first_dt = calloc(no, sizeof *s->first_dt);
  s->first_dims = calloc(no, sizeof *s->first_dims);
  s->first_rank = calloc(no, sizeof *s->first_rank);
  if (!s->args || !s->outs || !s->times || !s->first || !s->first_bytes || !s->first_dt ||
      !s->first_dims || !s->first_rank)
    return xstrdup("out of memory");
  if (cjrt_executable_num_devices(s->exe) != 1)
    return fmt("the executable runs on %zu devices; cjrt bench runs single-device programs",
               cjrt_executable_num_devices(s->exe));
  cjrt_device *dev = cjrt_executable_device(s->exe, 0);
  for (int i = 0; i < nargs; i++) {
    err = cjrt_buffer_from_host(e->client, dev, (cjrt_dtype)sh[i].dt, sh[i].dims, (size_t)sh[i].rank,
                                host[i], NULL, &s->args[i]);
    if (err) {
      char what[48];
      snprintf(what, sizeof what, "argument %d", i);
      return take_error(err, what);
    }
  }
  return NULL;
}

/* One execution (timed into *t): donated arguments are replaced by the outputs that took them
 * over (same element type and size, in order), the other outputs are kept in s->outs until the
 * next call (or copied to the host when keep_first). */
static char *session_exec(session *s, double *t, bool keep_first) {
  for (size_t j = 0; j < s->nouts; j++) {
    cjrt_buffer_free(s->outs[j]);
    s->outs[j] = NULL;
  }
  double a = now_s();
  cjrt_error *err = cjrt_execute(s->exe, s->args, s->nargs, s->outs, s->nouts);
  *t = now_s() - a;
  if (err) return take_error(err, "execute");
  for (size_t j = 0; keep_first && j < s->nouts; j++) {
    cjrt_buffer *o = s->outs[j];
    size_t nb = cjrt_buffer_nbytes(o), rank = cjrt_buffer_rank(o);
    s->first[j] = malloc(nb ? nb : 1);
    s->first_dims[j] = malloc((rank ? rank : 1) * sizeof(int64_t));
    if (!s->first[j] || !s->first_dims[j]) return xstrdup("out of memory");
    s->first_bytes[j] = nb;
    s->first_dt[j] = cjrt_buffer_dtype(o);
    s->first_rank[j] = rank;
    if (rank) memcpy(s->first_dims[j], cjrt_buffer_dims(o), rank * sizeof(int64_t));
    if (cjrt_buffer_dtype(o) == CJRT_TOKEN) continue;
    err = cjrt_buffer_to_host(o, s->first[j], nb);
    if (err) {
      char what[48];
      snprintf(what, sizeof what, "output %zu", j);
      return take_error(err, what);
    }
  }
  for (size_t i = 0; i < s->nargs; i++) {
    if (!cjrt_buffer_is_deleted(s->args[i])) continue;
    size_t j = 0;
    for (; j < s->nouts; j++)
      if (s->outs[j] && cjrt_buffer_dtype(s->outs[j]) == cjrt_buffer_dtype(s->args[i]) &&
          cjrt_buffer_nbytes(s->outs[j]) == cjrt_buffer_nbytes(s->args[i]))
        break;
    if (j == s->nouts)
      return fmt("argument %zu was donated and no output of its type and size replaces it", i);
    cjrt_buffer_free(s->args[i]);
    s->args[i] = s->outs[j];
    s->outs[j] = NULL;
  }
  return NULL;
}

/* Runs for `slice` seconds (at least one execution), recording the times. */
static char *session_run_for(session *s, double slice) {
  double start = now_s();
  do {
    double t;
    char *err = session_exec(s, &t, false);
    if (err) return err;
    s->times[s->nrun++] = t;
    s->busy_s += t;
  } while (s->nrun < MAX_RUNS && now_s() - start < slice);
  return NULL;
}

/* ---- comparing outputs ---- */

/* Relative tolerance per element type (0: exact). An element agrees when
 * |a - b| <= rtol * (max(|a|, |b|) + s), s the largest finite magnitude in either output:
 * reductions and dots sum in different orders on different plugins, so small elements of a
 * large-valued output get the output's scale. NaN agrees with NaN, infinities must be equal. */
static double rtol_of(cjrt_dtype dt) {
  switch (dt) {
  case CJRT_F64:
  case CJRT_C128: return 1e-9;
  case CJRT_F32:
  case CJRT_C64: return 1e-4;
  case CJRT_F16: return 4e-3;
  case CJRT_BF16: return 3e-2;
  case CJRT_F8E4M3FN:
  case CJRT_F8E4M3B11FNUZ:
  case CJRT_F8E4M3FNUZ:
  case CJRT_F8E4M3:
  case CJRT_F8E3M4: return 0.13;
  case CJRT_F8E5M2:
  case CJRT_F8E5M2FNUZ:
  case CJRT_F8E8M0FNU:
  case CJRT_F6E2M3FN:
  case CJRT_F6E3M2FN:
  case CJRT_F4E2M1FN: return 0.26;
  default: return 0;
  }
}

static void index_text(char *buf, size_t cap, int64_t flat, const int64_t *dims, size_t rank) {
  int64_t idx[BENCH_MAX_RANK];
  for (size_t d = rank; d-- > 0;) {
    int64_t n = dims[d] ? dims[d] : 1;
    idx[d] = flat % n;
    flat /= n;
  }
  size_t k = (size_t)snprintf(buf, cap, "[");
  for (size_t d = 0; d < rank && k < cap; d++)
    k += (size_t)snprintf(buf + k, cap - k, "%s%lld", d ? "," : "", (long long)idx[d]);
  if (k < cap) snprintf(buf + k, cap - k, "]");
}

/* NULL when the first outputs of a and b agree, else what differs (malloc'd). */
static char *compare_outputs(const session *a, const session *b) {
  if (a->nouts != b->nouts) return fmt("A has %zu outputs, B %zu", a->nouts, b->nouts);
  for (size_t j = 0; j < a->nouts; j++) {
    cjrt_dtype dt = a->first_dt[j];
    if (dt != b->first_dt[j])
      return fmt("output %zu: A is %s, B is %s", j, cjrt_dtype_name(dt), cjrt_dtype_name(b->first_dt[j]));
    if (a->first_rank[j] != b->first_rank[j] ||
        (a->first_rank[j] && memcmp(a->first_dims[j], b->first_dims[j], a->first_rank[j] * sizeof(int64_t))) ||
        a->first_bytes[j] != b->first_bytes[j])
      return fmt("output %zu: the shapes differ", j);
    if (dt == CJRT_TOKEN) continue;
    const int64_t *dims = a->first_dims[j];
    size_t rank = a->first_rank[j];
    int64_t n = 1;
    for (size_t d = 0; d < rank; d++) n *= dims[d];
    double rtol = rtol_of(dt);
    cj_dtype c = (cj_dtype)dt;
    int64_t m = n; /* scalars compared */
    if (cj_dtype_is_complex(c)) {
      c = cj_dtype_component(c);
      m = 2 * n;
    }
    const void *pa = a->first[j], *pb = b->first[j];
    int64_t bad = 0, first_bad = -1;
    double worst_a = 0, worst_b = 0, worst_tol = 0;
    if (rtol == 0) {
      for (int64_t i = 0; i < m; i++)
        if (cj_elem_get_i64(c, pa, (size_t)i) != cj_elem_get_i64(c, pb, (size_t)i)) {
          if (first_bad < 0) {
            first_bad = i;
            worst_a = (double)cj_elem_get_i64(c, pa, (size_t)i);
            worst_b = (double)cj_elem_get_i64(c, pb, (size_t)i);
          }
          bad++;
        }
    } else {
      double scale = 0;
      for (int64_t i = 0; i < m; i++) {
        double u = fabs(cj_elem_get_f64(c, pa, (size_t)i)), v = fabs(cj_elem_get_f64(c, pb, (size_t)i));
        if (isfinite(u) && u > scale) scale = u;
        if (isfinite(v) && v > scale) scale = v;
      }
      for (int64_t i = 0; i < m; i++) {
        double x = cj_elem_get_f64(c, pa, (size_t)i), y = cj_elem_get_f64(c, pb, (size_t)i);
        bool ok;
        if (isnan(x) || isnan(y)) ok = isnan(x) && isnan(y);
        else if (isinf(x) || isinf(y)) ok = x == y;
        else ok = fabs(x - y) <= rtol * (fmax(fabs(x), fabs(y)) + scale);
        if (!ok) {
          if (first_bad < 0) {
            first_bad = i;
            worst_a = x;
            worst_b = y;
            worst_tol = rtol * (fmax(fabs(x), fabs(y)) + scale);
          }
          bad++;
        }
      }
    }
    if (bad) {
      char at[256];
      int64_t elem = cj_dtype_is_complex((cj_dtype)dt) ? first_bad / 2 : first_bad;
      index_text(at, sizeof at, elem, dims, rank);
      const char *part = !cj_dtype_is_complex((cj_dtype)dt) ? "" : first_bad % 2 ? " (imaginary)" : " (real)";
      if (rtol == 0)
        return fmt("output %zu (%s) element %s%s: A %.17g vs B %.17g (exact for %s); %lld of %lld "
                   "elements differ", j, cjrt_dtype_name(dt), at, part, worst_a, worst_b,
                   cjrt_dtype_name(dt), (long long)bad, (long long)m);
      return fmt("output %zu (%s) element %s%s: A %.9g vs B %.9g (|A-B| %.3g > tolerance %.3g: "
                 "rtol %g of max(|A|,|B|) + the output's largest magnitude); %lld of %lld values differ", j, cjrt_dtype_name(dt), at,
                 part, worst_a, worst_b, fabs(worst_a - worst_b), worst_tol, rtol, (long long)bad,
                 (long long)m);
    }
  }
  return NULL;
}

/* ---- one program on one or two plugins ---- */

typedef struct row {
  result r[2];
  bool compared, agree;
  char *mismatch;
} row;

static char *bench_plugins(engine *eng, int neng, const char *code, size_t len, const char *name,
                           double min_time, row *out) {
  shape *sh = NULL;
  int nargs = 0;
  char *err = read_params(code, len, name, &sh, &nargs);
  if (err) return err;
  void **host = calloc((size_t)nargs + 1, sizeof(void *));
  session s[2];
  memset(s, 0, sizeof s);
  if (!host) err = xstrdup("out of memory");
  for (int i = 0; !err && i < nargs; i++) {
    host[i] = malloc((size_t)sh[i].bytes + 1);
    if (!host[i]) err = xstrdup("out of memory");
    else fill_arg(host[i], sh[i].dt, sh[i].n, (uint32_t)i);
  }
  /* compile on each, then the first (warm-up) execution, whose outputs are compared */
  for (int k = 0; k < neng && !err; k++) {
    char *e = session_start(&s[k], &eng[k], code, len, sh, host, nargs);
    double t;
    if (!e) e = session_exec(&s[k], &t, neng > 1);
    if (e) {
      err = neng > 1 ? fmt("%s: %s", eng[k].label, e) : xstrdup(e);
      free(e);
    }
    out->r[k].compile_ms = s[k].compile_ms;
  }
  for (int i = 0; host && i < nargs; i++) free(host[i]);
  free(host);
  free(sh);
  if (!err && neng > 1) {
    out->compared = true;
    out->mismatch = compare_outputs(&s[0], &s[1]);
    out->agree = !out->mismatch;
  }
  /* timed rounds, alternating between the plugins, until each has min_time of executions */
  double slice = neng > 1 ? min_time / 10 : min_time;
  while (!err) {
    bool done = true;
    for (int k = 0; k < neng; k++)
      if (s[k].nrun < MAX_RUNS && (s[k].nrun < 3 || s[k].busy_s < min_time)) done = false;
    if (done) break;
    for (int k = 0; k < neng && !err; k++) {
      if (s[k].nrun >= MAX_RUNS) continue;
      char *e = session_run_for(&s[k], slice);
      if (e) {
        err = neng > 1 ? fmt("%s: %s", eng[k].label, e) : xstrdup(e);
        free(e);
      }
    }
  }
  for (int k = 0; k < neng; k++) {
    if (!err) summarize(s[k].times, s[k].nrun, &out->r[k]);
    session_free(&s[k]);
  }
  return err;
}

/* ======================================================================== command */

static void usage(FILE *f) {
  fprintf(f,
          "usage: cjrt bench [--plugin P] [--peer Q] [--min-time S] [--json] PROGRAM...\n"
          "       cjrt bench --core [--threads N] [--min-time S] [--json] PROGRAM...\n"
          "\n"
          "Compiles each program (StableHLO: MLIR text or bytecode) with a PJRT plugin and times\n"
          "its executions on pseudo-random arguments (donated arguments are fed back from the\n"
          "outputs that replaced them). Prints per program the compile time and the min and\n"
          "median time per execution.\n"
          "\n"
          "  --plugin P      the PJRT plugin measured: a path to its .so or a name (default:\n"
          "                  $CJRT_PLUGIN, else the cjrt plugin next to libcjrt)\n"
          "  --peer Q        also run every program on plugin Q, side by side: the same\n"
          "                  arguments, the first outputs compared (tolerance per element type;\n"
          "                  a mismatch is reported and makes the exit status 1), executions\n"
          "                  alternating P, Q, P, Q in rounds of --min-time/10 seconds; prints\n"
          "                  both medians and the ratio P/Q (compile times too), then a summary\n"
          "                  line with the geometric mean and the worst ratio\n"
          "  --core          run in-process through cjrt's CPU backend (no plugin)\n"
          "  --threads N     threads for --core (default: the number of cores; plugins choose\n"
          "                  their own)\n"
          "  --min-time S    time each program at least S seconds per plugin (default 1)\n"
          "  --json          one JSON object per program instead of a table\n"
          "  -h, --help      this text\n"
          "\n"
          "Exit status: 0 when every program ran (and agreed with the peer), 1 otherwise, 2 on\n"
          "bad usage or a plugin that cannot be loaded.\n");
}

static const char *base_name(const char *p) {
  const char *s = strrchr(p, '/');
  return s ? s + 1 : p;
}

/* A JSON string (no quotes needed beyond these: \ " and control characters escaped). */
static void json_str(const char *s) {
  putchar('"');
  for (; *s; s++) {
    unsigned char c = (unsigned char)*s;
    if (c == '"' || c == '\\') printf("\\%c", c);
    else if (c < 0x20) printf("\\u%04x", c);
    else putchar(c);
  }
  putchar('"');
}

int cjrt_cmd_bench(int argc, char **argv) {
  const char *plugin = NULL, *peer = NULL;
  bool core = false, json = false;
  int threads = 0;
  double min_time = 1.0;
  int first = argc;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    bool has_value = i + 1 < argc;
    if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
      usage(stdout);
      return 0;
    } else if (!strcmp(a, "--plugin") || !strcmp(a, "--peer") || !strcmp(a, "--threads") ||
               !strcmp(a, "--min-time")) {
      if (!has_value) {
        fprintf(stderr, "cjrt bench: %s needs a value\n", a);
        return 2;
      }
      const char *v = argv[++i];
      if (!strcmp(a, "--plugin")) plugin = v;
      else if (!strcmp(a, "--peer")) peer = v;
      else if (!strcmp(a, "--threads")) threads = atoi(v);
      else min_time = atof(v);
    } else if (!strcmp(a, "--core")) {
      core = true;
    } else if (!strcmp(a, "--json")) {
      json = true;
    } else if (a[0] == '-') {
      fprintf(stderr, "cjrt bench: unknown option %s\n", a);
      usage(stderr);
      return 2;
    } else {
      first = i;
      break;
    }
  }
  if (first >= argc) {
    fprintf(stderr, "cjrt bench: no program given\n");
    usage(stderr);
    return 2;
  }
  if (core && (plugin || peer)) {
    fprintf(stderr, "cjrt bench: --core runs without a plugin; drop --plugin/--peer\n");
    return 2;
  }
  if (!(min_time >= 0)) min_time = 0;
  if (threads <= 0) threads = cj_num_cores();
  engine eng[2] = {{"A", NULL, NULL}, {"B", NULL, NULL}};
  int neng = core ? 0 : peer ? 2 : 1;
  for (int k = 0; k < neng; k++) {
    char *err = engine_open(&eng[k], k ? peer : plugin);
    if (err) {
      fprintf(stderr, "cjrt bench: %s\n", err);
      free(err);
      engine_close(&eng[0]);
      engine_close(&eng[1]);
      return 2;
    }
  }
  int w = neng == 2 ? 26 : 28; /* the program column: as wide as the longest name */
  for (int i = first; i < argc; i++)
    if ((int)strlen(base_name(argv[i])) > w) w = (int)strlen(base_name(argv[i]));
  if (!json) {
    if (neng == 2) {
      for (int k = 0; k < 2; k++)
        printf("%s: %s (platform %s %s)\n", eng[k].label, cjrt_plugin_path(eng[k].plugin),
               cjrt_client_platform_name(eng[k].client), cjrt_client_platform_version(eng[k].client));
      printf("%-*s %11s %11s %8s %11s %11s %8s %13s  %s\n", w, "program", "compile A", "compile B",
             "A/B", "median A", "median B", "A/B", "runs A/B", "outputs");
      printf("%-*s %11s %11s %8s %11s %11s %8s\n", w, "", "ms", "ms", "", "ms", "ms", "");
    } else {
      if (neng == 1)
        printf("plugin: %s (platform %s %s)\n", cjrt_plugin_path(eng[0].plugin),
               cjrt_client_platform_name(eng[0].client), cjrt_client_platform_version(eng[0].client));
      else
        printf("in-process CPU backend, %d threads\n", threads);
      printf("%-*s %12s %12s %12s %7s\n", w, "program", "compile ms", "min ms", "median ms", "runs");
    }
  }
  int failures = 0, nratio = 0, ncratio = 0;
  double log_sum = 0, clog_sum = 0, worst = 0, cworst = 0;
  const char *worst_name = "", *cworst_name = "";
  for (int i = first; i < argc; i++) {
    size_t len = 0;
    char *text = slurp(argv[i], &len);
    const char *base = base_name(argv[i]);
    row rw;
    memset(&rw, 0, sizeof rw);
    char *err = NULL;
    if (!text) err = xstrdup("cannot read the file");
    else if (core) err = bench_core(text, len, argv[i], threads, min_time, &rw.r[0]);
    else err = bench_plugins(eng, neng, text, len, argv[i], min_time, &rw);
    result *a = &rw.r[0], *b = &rw.r[1];
    double ratio = !err && neng == 2 && b->median_ms > 0 ? a->median_ms / b->median_ms : 0;
    double cratio = !err && neng == 2 && b->compile_ms > 0 ? a->compile_ms / b->compile_ms : 0;
    if (ratio > 0) {
      log_sum += log(ratio);
      nratio++;
      if (ratio > worst) {
        worst = ratio;
        worst_name = base;
      }
    }
    if (cratio > 0) {
      clog_sum += log(cratio);
      ncratio++;
      if (cratio > cworst) {
        cworst = cratio;
        cworst_name = base;
      }
    }
    if (json) {
      printf("{\"program\": ");
      json_str(base);
      printf(", \"mode\": \"%s\", \"threads\": %d, \"compile_ms\": %.3f, \"min_ms\": %.6f, "
             "\"median_ms\": %.6f, \"runs\": %d",
             core ? "core" : "plugin", threads, a->compile_ms, a->min_ms, a->median_ms, a->runs);
      if (neng == 2)
        printf(", \"peer_compile_ms\": %.3f, \"peer_min_ms\": %.6f, \"peer_median_ms\": %.6f, "
               "\"peer_runs\": %d, \"ratio\": %.6f, \"compile_ratio\": %.6f, \"outputs_agree\": %s",
               b->compile_ms, b->min_ms, b->median_ms, b->runs, ratio, cratio,
               rw.compared ? (rw.agree ? "true" : "false") : "null");
      printf(", \"error\": ");
      if (err) json_str(err);
      else if (rw.mismatch) json_str(rw.mismatch);
      else printf("null");
      printf("}\n");
      if (err) fprintf(stderr, "cjrt bench: %s: %s\n", base, err);
      if (rw.mismatch) fprintf(stderr, "cjrt bench: %s: outputs differ: %s\n", base, rw.mismatch);
    } else if (err) {
      printf("%-*s failed: %s\n", w, base, err);
    } else if (neng == 2) {
      char runs[32];
      snprintf(runs, sizeof runs, "%d/%d", a->runs, b->runs);
      printf("%-*s %11.3f %11.3f %7.3gx %11.4f %11.4f %7.3gx %13s  %s\n", w, base, a->compile_ms,
             b->compile_ms, cratio, a->median_ms, b->median_ms, ratio, runs,
             rw.agree ? "agree" : "DIFFER");
      if (rw.mismatch) printf("  MISMATCH %s: %s\n", base, rw.mismatch);
    } else {
      printf("%-*s %12.3f %12.4f %12.4f %7d\n", w, base, a->compile_ms, a->min_ms, a->median_ms, a->runs);
    }
    fflush(stdout);
    if (err || rw.mismatch) failures++;
    free(err);
    free(rw.mismatch);
    free(text);
  }
  if (neng == 2 && !json) {
    if (nratio)
      printf("execute A/B: geometric mean %.3gx over %d programs, worst %.3gx (%s); compile A/B: "
             "geometric mean %.3gx, worst %.3gx (%s)\n",
             exp(log_sum / nratio), nratio, worst, worst_name, ncratio ? exp(clog_sum / ncratio) : 0,
             cworst, cworst_name);
    else
      printf("execute A/B: no program ran on both plugins\n");
  }
  engine_close(&eng[0]);
  engine_close(&eng[1]);
  return failures ? 1 : 0;
}
