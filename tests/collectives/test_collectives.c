/* cjrt collective suite, through the built plugin only (dlopen + GetPjrtApi): multi-device
 * executions (num_replicas x num_partitions up to 8) whose devices meet at collectives.
 *
 *   - the same data-parallel program on 1, 2 and 8 devices gives the same answer
 *   - every collective (all_reduce, all_gather, reduce_scatter, all_to_all, collective_permute,
 *     collective_broadcast, collective_reduce, send/recv, replica_id/partition_id) in every mode
 *     (cross_replica, cross_partition, cross_replica_and_partition, flattened_ids, empty groups,
 *     groups of different sizes), over many element types, with fast and general reduction
 *     bodies, inside while loops, and donated operands
 *   - failures: a device failing before a collective cancels its peers, devices taking
 *     different paths fail instead of hanging, bad groups at run time, unsupported forms at
 *     compile time
 *   - replica groups given as mesh axes (sdy.mesh or inline #stablehlo.mesh, device ids, axis
 *     order), resolved to explicit groups at compile time
 *   - the partitioning of shard_map/pmap programs (sdy meshes, shardings, manual computations):
 *     per-device shapes, output shardings in the optimized program, what is refused
 *   - many executions in flight at once
 * Expected values are computed here, independently of the plugin.
 *
 * Usage: test_collectives <plugin.so>
 */
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>

#include "../pjrt_exec/exec_util.h"

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

static PJRT_Client *client; /* 8 devices */

/* ---- running one program on a grid ---- */

typedef struct spec {
  int nr, np;
  PJRT_Buffer_Type t; /* argument type; no argument when abytes == 0 */
  int rank;
  int64_t dims[4];
  const void *arg; /* device d's argument at arg + d * abytes */
  size_t abytes;
} spec;

static void opts_for(pb *o, int nr, int np) { compile_options(o, nr, np, NULL); }

/* Compiles `text` for s->nr x s->np devices, runs it, waits, copies output j of device d to
 * outs[j] + d * obytes[j]. Returns the first error (compile, execute or a device's), or NULL.
 * Device errors are also kept per device in errs[d] when errs is given (caller frees). */
static PJRT_Error *run_le(PJRT_LoadedExecutable *le, const spec *s, int nout, void *const *outs,
                          const size_t *obytes, PJRT_Error **errs) {
  PJRT_Error *e;
  int ndev = s->nr * s->np;
  size_t nargs = s->abytes ? 1 : 0;
  PJRT_Buffer *args[64] = {0};
  for (int d = 0; d < ndev && nargs; d++)
    args[d] = buffer_from_host(client, device_at(client, (size_t)d), s->t, s->dims, (size_t)s->rank,
                               (const char *)s->arg + (size_t)d * s->abytes);
  size_t n = num_outputs(le);
  PJRT_Buffer **res = calloc((size_t)ndev * (n ? n : 1), sizeof *res);
  PJRT_Event *ev[64] = {0};
  exec_opts eo = {NULL, 0, NULL, 1};
  e = execute_raw(le, args, (size_t)ndev, nargs, res, n, ev, &eo);
  PJRT_Error *first = e;
  if (!e) {
    for (int d = 0; d < ndev; d++) {
      PJRT_Error *de = event_wait_free(ev[d]);
      if (errs)
        errs[d] = de;
      else if (de && !first)
        first = de;
      else
        err_free(de);
    }
    for (int d = 0; d < ndev && !first; d++)
      for (int j = 0; j < nout && j < (int)n; j++) {
        if (errs && errs[d]) continue;
        PJRT_Error *re = buffer_to_host(res[(size_t)d * n + (size_t)j],
                                        (char *)outs[j] + (size_t)d * obytes[j], obytes[j], NULL);
        if (re && !first) first = re;
        else if (re) err_free(re);
      }
    for (size_t k = 0; k < (size_t)ndev * n; k++) buffer_free(res[k]);
  }
  free(res);
  for (int d = 0; d < ndev && nargs; d++) buffer_free(args[d]);
  return first;
}

static PJRT_Error *run(const char *text, const spec *s, int nout, void *const *outs,
                       const size_t *obytes, PJRT_Error **errs) {
  pb o;
  opts_for(&o, s->nr, s->np);
  PJRT_LoadedExecutable *le;
  PJRT_Error *e = compile_err(client, text, o.b, o.n, &le);
  if (e) return e;
  e = run_le(le, s, nout, outs, obytes, errs);
  loaded_free(le);
  return e;
}

static void xprintf(char *buf, size_t cap, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, cap, fmt, ap);
  va_end(ap);
}

/* ---- all_reduce ---- */

static const char kSumBody[] =
    "({\n  ^bb0(%%a: tensor<%s>, %%b: tensor<%s>):\n    %%s = stablehlo.add %%a, %%b : tensor<%s>\n"
    "    stablehlo.return %%s : tensor<%s>\n  })";

/* all_reduce(add) of tensor<4xi32> with the given attribute text on a grid; x_d[i] = 10 d + i. */
static void check_all_reduce_mode(int nr, int np, const char *attrs,
                                  const int *group_of /* ndev: group index */, const char *what) {
  char body[512], text[2048];
  xprintf(body, sizeof body, kSumBody, "i32", "i32", "i32", "i32");
  xprintf(text, sizeof text,
          "func.func @main(%%x: tensor<4xi32>) -> tensor<4xi32> {\n"
          "  %%r = \"stablehlo.all_reduce\"(%%x) %s {%s} : (tensor<4xi32>) -> tensor<4xi32>\n"
          "  return %%r : tensor<4xi32>\n}\n",
          body, attrs);
  int ndev = nr * np;
  int32_t x[64 * 4], out[64 * 4], want[64 * 4];
  for (int d = 0; d < ndev; d++)
    for (int i = 0; i < 4; i++) x[d * 4 + i] = 10 * d + i;
  for (int d = 0; d < ndev; d++)
    for (int i = 0; i < 4; i++) {
      int32_t s = 0;
      for (int e = 0; e < ndev; e++)
        if (group_of[e] == group_of[d]) s += x[e * 4 + i];
      want[d * 4 + i] = s;
    }
  spec s = {nr, np, PJRT_Buffer_Type_S32, 1, {4}, x, 16};
  void *outs[1] = {out};
  size_t ob[1] = {16};
  PJRT_Error *e = run(text, &s, 1, outs, ob, NULL);
  CHECK_MSG(!e, "%s: %s", what, e ? err_msg(e) : "");
  if (e) {
    err_free(e);
    return;
  }
  CHECK_MSG(!memcmp(out, want, (size_t)ndev * 16), "%s: wrong sums", what);
}

/* stablehlo.cross-replica-sum (outside the spec, still emitted by JAX 0.7 for a psum over a
 * nested pmap axis): an all_reduce(add) over replica groups, per partition */
static void test_cross_replica_sum(void) {
  static const char text[] =
      "func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {\n"
      "  %r = \"stablehlo.cross-replica-sum\"(%x) {replica_groups = dense<[[0, 1]]> : "
      "tensor<1x2xi64>} : (tensor<4xf32>) -> tensor<4xf32>\n"
      "  return %r : tensor<4xf32>\n}\n";
  /* 2 replicas x 2 partitions, device d = r * 2 + p: replicas 0 and 1 of one partition sum */
  float x[16], out[16], want[16];
  for (int d = 0; d < 4; d++)
    for (int i = 0; i < 4; i++) x[d * 4 + i] = (float)(10 * d + i) + 0.5f;
  for (int d = 0; d < 4; d++)
    for (int i = 0; i < 4; i++) want[d * 4 + i] = x[(d % 2) * 4 + i] + x[(d % 2 + 2) * 4 + i];
  spec s = {2, 2, PJRT_Buffer_Type_F32, 1, {4}, x, 16};
  void *outs[1] = {out};
  size_t ob[1] = {16};
  PJRT_Error *e = run(text, &s, 1, outs, ob, NULL);
  CHECK_MSG(!e, "cross-replica-sum: %s", e ? err_msg(e) : "");
  if (e) {
    err_free(e);
    return;
  }
  CHECK_MSG(!memcmp(out, want, sizeof want), "cross-replica-sum: wrong sums");
  /* without replica_groups it is refused, by name */
  static const char bad[] =
      "func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {\n"
      "  %r = \"stablehlo.cross-replica-sum\"(%x) : (tensor<4xf32>) -> tensor<4xf32>\n"
      "  return %r : tensor<4xf32>\n}\n";
  e = run(bad, &s, 1, outs, ob, NULL);
  CHECK(e != NULL);
  if (e) CHECK_CONTAINS(err_msg(e), "cross-replica-sum takes one operand, one result and replica_groups");
  err_free(e);
}

static void test_all_reduce_modes(void) {
  /* 2 replicas x 2 partitions; device d = r * 2 + p */
  {
    int g[4] = {0, 1, 0, 1}; /* cross_replica: same partition */
    check_all_reduce_mode(2, 2, "replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>", g,
                          "cross_replica");
  }
  {
    int g[4] = {0, 0, 0, 0}; /* cross_replica_and_partition: all */
    check_all_reduce_mode(2, 2,
                          "replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>, channel_handle = "
                          "#stablehlo.channel_handle<handle = 1, type = 0>",
                          g, "cross_replica_and_partition");
  }
  {
    int g[4] = {0, 1, 1, 0}; /* flattened ids [[0, 3], [1, 2]] */
    check_all_reduce_mode(2, 2,
                          "replica_groups = dense<[[0, 3], [1, 2]]> : tensor<2x2xi64>, "
                          "channel_handle = #stablehlo.channel_handle<handle = 1, type = 0>, "
                          "use_global_device_ids",
                          g, "flattened_ids");
  }
  {
    int g[8] = {0, 1, 0, 1, 0, 1, 0, 1}; /* empty groups: every replica, per partition */
    check_all_reduce_mode(4, 2, "replica_groups = dense<> : tensor<0x0xi64>", g, "empty groups");
  }
  {
    int g[4] = {0, 0, 0, 1}; /* groups of different sizes, -1 padded */
    check_all_reduce_mode(4, 1, "replica_groups = dense<[[0, 1, 2], [3, -1, -1]]> : tensor<2x3xi64>",
                          g, "padded groups");
  }
  {
    int g[8] = {0, 1, 2, 3, 0, 1, 2, 3}; /* replica groups reordered, 2 x 4 */
    check_all_reduce_mode(2, 4, "replica_groups = dense<[[1, 0]]> : tensor<1x2xi64>", g,
                          "cross_replica 2x4");
  }
  {
    int g[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    check_all_reduce_mode(1, 8,
                          "replica_groups = dense<[[0, 1, 2, 3, 4, 5, 6, 7]]> : tensor<1x8xi64>, "
                          "channel_handle = #stablehlo.channel_handle<handle = 1, type = 0>, "
                          "use_global_device_ids",
                          g, "8 partitions");
  }
  {
    int g[1] = {0}; /* one device: no launch, a group of one */
    check_all_reduce_mode(1, 1, "replica_groups = dense<[[0]]> : tensor<1x1xi64>", g, "one device");
  }
}

/* all_reduce over many element types, fast bodies (add/mul/max/min/and/or/xor) and a general
 * one (maximum written as compare + select), 4 partitions, flattened ids. Values are small
 * integers so every order of reduction gives the same exact result. */
typedef struct dtcase {
  PJRT_Buffer_Type t;
  const char *mlir;
  size_t esize;
} dtcase;

static double get_elem(const void *p, PJRT_Buffer_Type t, int i) {
  switch (t) {
    case PJRT_Buffer_Type_S8: return ((const int8_t *)p)[i];
    case PJRT_Buffer_Type_S16: return ((const int16_t *)p)[i];
    case PJRT_Buffer_Type_S32: return ((const int32_t *)p)[i];
    case PJRT_Buffer_Type_S64: return (double)((const int64_t *)p)[i];
    case PJRT_Buffer_Type_U8: return ((const uint8_t *)p)[i];
    case PJRT_Buffer_Type_U16: return ((const uint16_t *)p)[i];
    case PJRT_Buffer_Type_U32: return ((const uint32_t *)p)[i];
    case PJRT_Buffer_Type_U64: return (double)((const uint64_t *)p)[i];
    case PJRT_Buffer_Type_F32: return ((const float *)p)[i];
    case PJRT_Buffer_Type_F64: return ((const double *)p)[i];
    case PJRT_Buffer_Type_PRED: return ((const uint8_t *)p)[i];
    case PJRT_Buffer_Type_C64: return ((const float *)p)[2 * i] + 1000.0 * ((const float *)p)[2 * i + 1];
    case PJRT_Buffer_Type_C128:
      return ((const double *)p)[2 * i] + 1000.0 * ((const double *)p)[2 * i + 1];
    case PJRT_Buffer_Type_BF16: {
      uint16_t h = ((const uint16_t *)p)[i];
      uint32_t u = (uint32_t)h << 16;
      float f;
      memcpy(&f, &u, 4);
      return f;
    }
    case PJRT_Buffer_Type_F16: {
      uint16_t h = ((const uint16_t *)p)[i];
      int ex = (h >> 10) & 31, m = h & 1023;
      double v = ex == 0 ? ldexp(m, -24) : ldexp(1024 + m, ex - 25);
      return (h & 0x8000) ? -v : v;
    }
    default: return NAN;
  }
}

static void set_elem(void *p, PJRT_Buffer_Type t, int i, int v) {
  switch (t) {
    case PJRT_Buffer_Type_S8: ((int8_t *)p)[i] = (int8_t)v; break;
    case PJRT_Buffer_Type_S16: ((int16_t *)p)[i] = (int16_t)v; break;
    case PJRT_Buffer_Type_S32: ((int32_t *)p)[i] = v; break;
    case PJRT_Buffer_Type_S64: ((int64_t *)p)[i] = v; break;
    case PJRT_Buffer_Type_U8: ((uint8_t *)p)[i] = (uint8_t)v; break;
    case PJRT_Buffer_Type_U16: ((uint16_t *)p)[i] = (uint16_t)v; break;
    case PJRT_Buffer_Type_U32: ((uint32_t *)p)[i] = (uint32_t)v; break;
    case PJRT_Buffer_Type_U64: ((uint64_t *)p)[i] = (uint64_t)v; break;
    case PJRT_Buffer_Type_F32: ((float *)p)[i] = (float)v; break;
    case PJRT_Buffer_Type_F64: ((double *)p)[i] = v; break;
    case PJRT_Buffer_Type_PRED: ((uint8_t *)p)[i] = (uint8_t)(v & 1); break;
    case PJRT_Buffer_Type_C64: ((float *)p)[2 * i] = (float)v, ((float *)p)[2 * i + 1] = (float)(v % 3); break;
    case PJRT_Buffer_Type_C128: ((double *)p)[2 * i] = v, ((double *)p)[2 * i + 1] = v % 3; break;
    case PJRT_Buffer_Type_BF16: {
      float f = (float)v;
      uint32_t u;
      memcpy(&u, &f, 4);
      ((uint16_t *)p)[i] = (uint16_t)(u >> 16); /* exact: small integers */
      break;
    }
    case PJRT_Buffer_Type_F16: {
      /* small non-negative integers < 2048 */
      uint16_t h = 0;
      if (v > 0) {
        int e = 0;
        while ((1 << (e + 1)) <= v) e++;
        h = (uint16_t)(((e + 15) << 10) | ((v << (10 - e)) & 1023));
      }
      ((uint16_t *)p)[i] = h;
      break;
    }
    default: break;
  }
}

/* reference: op over the values v[0..n) (complex: re + 1000 im encoding, only add) */
static double ref_reduce(const char *op, const double *v, int n, PJRT_Buffer_Type t) {
  double r = v[0];
  for (int k = 1; k < n; k++) {
    if (!strcmp(op, "add")) r += v[k];
    else if (!strcmp(op, "multiply")) r *= v[k];
    else if (!strcmp(op, "maximum") || !strcmp(op, "or")) r = v[k] > r ? v[k] : r;
    else if (!strcmp(op, "minimum") || !strcmp(op, "and")) r = v[k] < r ? v[k] : r;
  }
  if (t == PJRT_Buffer_Type_PRED && !strcmp(op, "add")) r = r > 0; /* boolean add is or */
  return r;
}

static void check_reduce_dtype(const dtcase *dc, const char *op, bool general) {
  char body[1024], text[3072];
  if (general) /* maximum as compare + select: not a pattern the fast path knows */
    xprintf(body, sizeof body,
            "({\n  ^bb0(%%a: tensor<%s>, %%b: tensor<%s>):\n"
            "    %%c = stablehlo.compare GT, %%a, %%b : (tensor<%s>, tensor<%s>) -> tensor<i1>\n"
            "    %%s = stablehlo.select %%c, %%a, %%b : tensor<i1>, tensor<%s>\n"
            "    stablehlo.return %%s : tensor<%s>\n  })",
            dc->mlir, dc->mlir, dc->mlir, dc->mlir, dc->mlir, dc->mlir);
  else
    xprintf(body, sizeof body,
            "({\n  ^bb0(%%a: tensor<%s>, %%b: tensor<%s>):\n    %%s = stablehlo.%s %%a, %%b : tensor<%s>\n"
            "    stablehlo.return %%s : tensor<%s>\n  })",
            dc->mlir, dc->mlir, op, dc->mlir, dc->mlir);
  xprintf(text, sizeof text,
          "func.func @main(%%x: tensor<3x5x%s>) -> tensor<3x5x%s> {\n"
          "  %%r = \"stablehlo.all_reduce\"(%%x) %s {replica_groups = dense<[[0, 1, 2, 3]]> : "
          "tensor<1x4xi64>, channel_handle = #stablehlo.channel_handle<handle = 1, type = 0>, "
          "use_global_device_ids} : (tensor<3x5x%s>) -> tensor<3x5x%s>\n"
          "  return %%r : tensor<3x5x%s>\n}\n",
          dc->mlir, dc->mlir, body, dc->mlir, dc->mlir, dc->mlir);
  enum { N = 15, D = 4 };
  unsigned char x[D * N * 16], out[D * N * 16];
  for (int d = 0; d < D; d++)
    for (int i = 0; i < N; i++) {
      int v = op && !strcmp(op, "multiply") ? 1 + (i + d) % 3 : (7 * d + 3 * i) % 23;
      set_elem(x + (size_t)d * N * dc->esize, dc->t, i, v);
    }
  spec s = {1, D, dc->t, 2, {3, 5}, x, N * dc->esize};
  void *outs[1] = {out};
  size_t ob[1] = {N * dc->esize};
  PJRT_Error *e = run(text, &s, 1, outs, ob, NULL);
  CHECK_MSG(!e, "all_reduce %s %s%s: %s", op, dc->mlir, general ? " (general)" : "",
            e ? err_msg(e) : "");
  if (e) {
    err_free(e);
    return;
  }
  int bad = 0;
  for (int d = 0; d < D; d++)
    for (int i = 0; i < N; i++) {
      double v[D];
      for (int k = 0; k < D; k++) v[k] = get_elem(x + (size_t)k * N * dc->esize, dc->t, i);
      double want = ref_reduce(general ? "maximum" : op, v, D, dc->t);
      if (dc->t == PJRT_Buffer_Type_C64 || dc->t == PJRT_Buffer_Type_C128) { /* add only */
        double re = 0, im = 0;
        for (int k = 0; k < D; k++) {
          const void *xp = x + (size_t)k * N * dc->esize;
          re += dc->t == PJRT_Buffer_Type_C64 ? ((const float *)xp)[2 * i] : ((const double *)xp)[2 * i];
          im += dc->t == PJRT_Buffer_Type_C64 ? ((const float *)xp)[2 * i + 1]
                                              : ((const double *)xp)[2 * i + 1];
        }
        want = re + 1000.0 * im;
      }
      double got = get_elem(out + (size_t)d * N * dc->esize, dc->t, i);
      if (got != want && bad++ < 3)
        fprintf(stderr, "all_reduce %s %s: device %d element %d: got %g, want %g\n", op, dc->mlir,
                d, i, got, want);
    }
  CHECK_MSG(bad == 0, "all_reduce %s %s%s: %d wrong elements", op, dc->mlir,
            general ? " (general)" : "", bad);
}

static void test_all_reduce_dtypes(void) {
  static const dtcase ints[] = {
      {PJRT_Buffer_Type_S8, "i8", 1},   {PJRT_Buffer_Type_S16, "i16", 2},
      {PJRT_Buffer_Type_S32, "i32", 4}, {PJRT_Buffer_Type_S64, "i64", 8},
      {PJRT_Buffer_Type_U8, "ui8", 1},  {PJRT_Buffer_Type_U16, "ui16", 2},
      {PJRT_Buffer_Type_U32, "ui32", 4}, {PJRT_Buffer_Type_U64, "ui64", 8},
  };
  static const dtcase floats[] = {
      {PJRT_Buffer_Type_F32, "f32", 4},
      {PJRT_Buffer_Type_F64, "f64", 8},
      {PJRT_Buffer_Type_BF16, "bf16", 2},
      {PJRT_Buffer_Type_F16, "f16", 2},
  };
  static const char *int_ops[] = {"add", "multiply", "maximum", "minimum"};
  static const char *float_ops[] = {"add", "multiply", "maximum", "minimum"};
  for (size_t k = 0; k < COUNT(ints); k++) {
    for (size_t o = 0; o < COUNT(int_ops); o++) check_reduce_dtype(&ints[k], int_ops[o], false);
    check_reduce_dtype(&ints[k], NULL, true);
  }
  for (size_t k = 0; k < COUNT(floats); k++) {
    for (size_t o = 0; o < COUNT(float_ops); o++) check_reduce_dtype(&floats[k], float_ops[o], false);
    check_reduce_dtype(&floats[k], NULL, true);
  }
  static const dtcase pred = {PJRT_Buffer_Type_PRED, "i1", 1};
  check_reduce_dtype(&pred, "or", false);
  check_reduce_dtype(&pred, "and", false);
  check_reduce_dtype(&pred, "add", false);
  static const dtcase c64 = {PJRT_Buffer_Type_C64, "complex<f32>", 8};
  static const dtcase c128 = {PJRT_Buffer_Type_C128, "complex<f64>", 16};
  check_reduce_dtype(&c64, "add", false);
  check_reduce_dtype(&c128, "add", false);
}

/* Two operands in one all_reduce, and a large operand (parallel slices). */
static void test_all_reduce_variadic_large(void) {
  char body[512], text[2048];
  xprintf(body, sizeof body, kSumBody, "f32", "f32", "f32", "f32");
  xprintf(text, sizeof text,
          "func.func @main(%%x: tensor<70000xf32>) -> (tensor<70000xf32>, tensor<7xf32>) {\n"
          "  %%y = stablehlo.slice %%x [3:10] : (tensor<70000xf32>) -> tensor<7xf32>\n"
          "  %%r:2 = \"stablehlo.all_reduce\"(%%x, %%y) %s {replica_groups = dense<[[0, 1, 2]]> : "
          "tensor<1x3xi64>} : (tensor<70000xf32>, tensor<7xf32>) -> (tensor<70000xf32>, tensor<7xf32>)\n"
          "  return %%r#0, %%r#1 : tensor<70000xf32>, tensor<7xf32>\n}\n",
          body);
  enum { N = 70000, D = 3 };
  float *x = malloc(sizeof(float) * N * D), *o0 = malloc(sizeof(float) * N * D), o1[7 * D];
  for (int d = 0; d < D; d++)
    for (int i = 0; i < N; i++) x[d * N + i] = (float)((i * 7 + d * 13) % 1000);
  spec s = {D, 1, PJRT_Buffer_Type_F32, 1, {N}, x, sizeof(float) * N};
  void *outs[2] = {o0, o1};
  size_t ob[2] = {sizeof(float) * N, sizeof(float) * 7};
  PJRT_Error *e = run(text, &s, 2, outs, ob, NULL);
  CHECK_MSG(!e, "variadic: %s", e ? err_msg(e) : "");
  if (!e) {
    int bad = 0;
    for (int d = 0; d < D; d++) {
      for (int i = 0; i < N; i++)
        bad += o0[d * N + i] != x[i] + x[N + i] + x[2 * N + i];
      for (int i = 0; i < 7; i++) bad += o1[d * 7 + i] != x[3 + i] + x[N + 3 + i] + x[2 * N + 3 + i];
    }
    CHECK_EQ_INT(bad, 0);
  }
  err_free(e);
  free(x);
  free(o0);
}

/* ---- all_gather, reduce_scatter, all_to_all ---- */

static void test_all_gather(void) {
  /* 1 x 4, flattened, gather dim 1 of tensor<2x3xi32> -> tensor<2x12xi32> */
  {
    const char *text =
        "func.func @main(%x: tensor<2x3xi32>) -> tensor<2x12xi32> {\n"
        "  %r = \"stablehlo.all_gather\"(%x) {all_gather_dim = 1 : i64, replica_groups = "
        "dense<[[0, 1, 2, 3]]> : tensor<1x4xi64>, channel_handle = "
        "#stablehlo.channel_handle<handle = 1, type = 0>, use_global_device_ids} : "
        "(tensor<2x3xi32>) -> tensor<2x12xi32>\n"
        "  return %r : tensor<2x12xi32>\n}\n";
    int32_t x[4 * 6], out[4 * 24];
    for (int d = 0; d < 4; d++)
      for (int i = 0; i < 6; i++) x[d * 6 + i] = 100 * d + i;
    spec s = {1, 4, PJRT_Buffer_Type_S32, 2, {2, 3}, x, 24};
    void *outs[1] = {out};
    size_t ob[1] = {96};
    PJRT_Error *e = run(text, &s, 1, outs, ob, NULL);
    CHECK_MSG(!e, "all_gather: %s", e ? err_msg(e) : "");
    if (!e) {
      int bad = 0;
      for (int d = 0; d < 4; d++)
        for (int row = 0; row < 2; row++)
          for (int k = 0; k < 4; k++)
            for (int c = 0; c < 3; c++)
              bad += out[d * 24 + row * 12 + k * 3 + c] != x[k * 6 + row * 3 + c];
      CHECK_EQ_INT(bad, 0);
    }
    err_free(e);
  }
  /* 2 x 2 cross_replica with the group reversed: slot 0 is replica 1; two operands, dim 0 */
  {
    const char *full =
        "func.func @main(%x: tensor<2xi32>) -> (tensor<4xi32>, tensor<2x3xi32>) {\n"
        "  %m = stablehlo.constant dense<-1> : tensor<i32>\n"
        "  %y = stablehlo.broadcast_in_dim %x, dims = [1] : (tensor<2xi32>) -> tensor<1x2xi32>\n"
        "  %z = stablehlo.pad %y, %m, low = [0, 0], high = [0, 1], interior = [0, 0] : "
        "(tensor<1x2xi32>, tensor<i32>) -> tensor<1x3xi32>\n"
        "  %r:2 = \"stablehlo.all_gather\"(%x, %z) {all_gather_dim = 0 : i64, replica_groups = "
        "dense<[[1, 0]]> : tensor<1x2xi64>} : (tensor<2xi32>, tensor<1x3xi32>) -> "
        "(tensor<4xi32>, tensor<2x3xi32>)\n"
        "  return %r#0, %r#1 : tensor<4xi32>, tensor<2x3xi32>\n}\n";
    int32_t x[4 * 2], o0[4 * 4], o1[4 * 6];
    for (int d = 0; d < 4; d++)
      for (int i = 0; i < 2; i++) x[d * 2 + i] = 10 * d + i;
    spec s = {2, 2, PJRT_Buffer_Type_S32, 1, {2}, x, 8};
    void *outs[2] = {o0, o1};
    size_t ob[2] = {16, 24};
    PJRT_Error *e = run(full, &s, 2, outs, ob, NULL);
    CHECK_MSG(!e, "all_gather 2x2: %s", e ? err_msg(e) : "");
    if (!e) {
      int bad = 0;
      for (int d = 0; d < 4; d++) {
        int p = d % 2, first = 1 * 2 + p, second = 0 * 2 + p; /* replica 1 then replica 0 */
        int32_t want0[4] = {x[first * 2], x[first * 2 + 1], x[second * 2], x[second * 2 + 1]};
        int32_t want1[6] = {x[first * 2], x[first * 2 + 1], -1, x[second * 2], x[second * 2 + 1], -1};
        bad += memcmp(o0 + d * 4, want0, 16) != 0;
        bad += memcmp(o1 + d * 6, want1, 24) != 0;
      }
      CHECK_EQ_INT(bad, 0);
    }
    err_free(e);
  }
}

static void test_reduce_scatter(void) {
  /* 1 x 4, flattened groups [[0, 1], [2, 3]], scatter dim 0 of tensor<4x2xi32> -> tensor<2x2xi32> */
  char body[512], text[2048];
  xprintf(body, sizeof body, kSumBody, "i32", "i32", "i32", "i32");
  xprintf(text, sizeof text,
          "func.func @main(%%x: tensor<4x2xi32>) -> tensor<2x2xi32> {\n"
          "  %%r = \"stablehlo.reduce_scatter\"(%%x) %s {scatter_dimension = 0 : i64, "
          "replica_groups = dense<[[0, 1], [3, 2]]> : tensor<2x2xi64>, channel_handle = "
          "#stablehlo.channel_handle<handle = 1, type = 0>, use_global_device_ids} : "
          "(tensor<4x2xi32>) -> tensor<2x2xi32>\n"
          "  return %%r : tensor<2x2xi32>\n}\n",
          body);
  int32_t x[4 * 8], out[4 * 4];
  for (int d = 0; d < 4; d++)
    for (int i = 0; i < 8; i++) x[d * 8 + i] = 100 * d + i;
  spec s = {1, 4, PJRT_Buffer_Type_S32, 2, {4, 2}, x, 32};
  void *outs[1] = {out};
  size_t ob[1] = {16};
  PJRT_Error *e = run(text, &s, 1, outs, ob, NULL);
  CHECK_MSG(!e, "reduce_scatter: %s", e ? err_msg(e) : "");
  if (!e) {
    int bad = 0;
    static const int peer[4] = {1, 0, 3, 2}, rank[4] = {0, 1, 1, 0};
    for (int d = 0; d < 4; d++)
      for (int i = 0; i < 4; i++) /* block rank[d] (rows 2 r .. 2 r + 1) summed over the pair */
        bad += out[d * 4 + i] != x[d * 8 + rank[d] * 4 + i] + x[peer[d] * 8 + rank[d] * 4 + i];
    CHECK_EQ_INT(bad, 0);
  }
  err_free(e);
}

static void test_all_to_all(void) {
  /* 2 x 4 grid, cross_partition (channel 1), groups [[0, 1, 2, 3]]: split dim 0 (4 rows -> 1
   * row each), concat dim 1 (3 -> 12 columns) */
  const char *text =
      "func.func @main(%x: tensor<4x3xi32>) -> tensor<1x12xi32> {\n"
      "  %r = \"stablehlo.all_to_all\"(%x) {split_dimension = 0 : i64, concat_dimension = 1 : i64, "
      "split_count = 4 : i64, replica_groups = dense<[[0, 1, 2, 3]]> : tensor<1x4xi64>, "
      "channel_handle = #stablehlo.channel_handle<handle = 1, type = 0>} : (tensor<4x3xi32>) -> "
      "tensor<1x12xi32>\n"
      "  return %r : tensor<1x12xi32>\n}\n";
  int32_t x[8 * 12], out[8 * 12];
  for (int d = 0; d < 8; d++)
    for (int i = 0; i < 12; i++) x[d * 12 + i] = 100 * d + i;
  spec s = {2, 4, PJRT_Buffer_Type_S32, 2, {4, 3}, x, 48};
  void *outs[1] = {out};
  size_t ob[1] = {48};
  PJRT_Error *e = run(text, &s, 1, outs, ob, NULL);
  CHECK_MSG(!e, "all_to_all: %s", e ? err_msg(e) : "");
  if (!e) {
    int bad = 0;
    for (int d = 0; d < 8; d++) {
      int r = d / 4, p = d % 4;
      for (int snd = 0; snd < 4; snd++)
        for (int c = 0; c < 3; c++) /* row p of sender (r, snd) at columns 3 snd .. */
          bad += out[d * 12 + snd * 3 + c] != x[(r * 4 + snd) * 12 + p * 3 + c];
    }
    CHECK_EQ_INT(bad, 0);
  }
  err_free(e);
}

/* ---- permute, broadcast, reduce to a root, send/recv, ids ---- */

static void test_permute_broadcast(void) {
  int32_t x[8 * 2], out[8 * 2];
  for (int d = 0; d < 8; d++) x[d * 2] = 10 * d, x[d * 2 + 1] = 10 * d + 1;
  spec s4 = {4, 1, PJRT_Buffer_Type_S32, 1, {2}, x, 8};
  void *outs[1] = {out};
  size_t ob[1] = {8};
  /* permute over replicas: 0 -> 1 -> 2 -> 0, replica 3 gets zeros */
  {
    const char *text =
        "func.func @main(%x: tensor<2xi32>) -> tensor<2xi32> {\n"
        "  %r = \"stablehlo.collective_permute\"(%x) {source_target_pairs = dense<[[0, 1], [1, 2], "
        "[2, 0]]> : tensor<3x2xi64>} : (tensor<2xi32>) -> tensor<2xi32>\n"
        "  return %r : tensor<2xi32>\n}\n";
    PJRT_Error *e = run(text, &s4, 1, outs, ob, NULL);
    CHECK_MSG(!e, "permute: %s", e ? err_msg(e) : "");
    if (!e) {
      static const int src[4] = {2, 0, 1, -1};
      int bad = 0;
      for (int d = 0; d < 4; d++)
        for (int i = 0; i < 2; i++) bad += out[d * 2 + i] != (src[d] < 0 ? 0 : x[src[d] * 2 + i]);
      CHECK_EQ_INT(bad, 0);
    }
    err_free(e);
  }
  /* permute over partitions on a 2 x 2 grid: swap the partitions of each replica */
  {
    const char *text =
        "func.func @main(%x: tensor<2xi32>) -> tensor<2xi32> {\n"
        "  %r = \"stablehlo.collective_permute\"(%x) {source_target_pairs = dense<[[0, 1], [1, 0]]> "
        ": tensor<2x2xi64>, channel_handle = #stablehlo.channel_handle<handle = 2, type = 0>} : "
        "(tensor<2xi32>) -> tensor<2xi32>\n"
        "  return %r : tensor<2xi32>\n}\n";
    spec s22 = {2, 2, PJRT_Buffer_Type_S32, 1, {2}, x, 8};
    PJRT_Error *e = run(text, &s22, 1, outs, ob, NULL);
    CHECK_MSG(!e, "permute partitions: %s", e ? err_msg(e) : "");
    if (!e) {
      int bad = 0;
      for (int d = 0; d < 4; d++)
        for (int i = 0; i < 2; i++) bad += out[d * 2 + i] != x[(d ^ 1) * 2 + i];
      CHECK_EQ_INT(bad, 0);
    }
    err_free(e);
  }
  /* broadcast from replica 2 to replicas 2 and 1; 0 and 3 are in no group: zeros */
  {
    const char *text =
        "func.func @main(%x: tensor<2xi32>) -> tensor<2xi32> {\n"
        "  %r = \"stablehlo.collective_broadcast\"(%x) {replica_groups = dense<[[2, 1]]> : "
        "tensor<1x2xi64>} : (tensor<2xi32>) -> tensor<2xi32>\n"
        "  return %r : tensor<2xi32>\n}\n";
    PJRT_Error *e = run(text, &s4, 1, outs, ob, NULL);
    CHECK_MSG(!e, "broadcast: %s", e ? err_msg(e) : "");
    if (!e) {
      int bad = 0;
      for (int d = 0; d < 4; d++)
        for (int i = 0; i < 2; i++) bad += out[d * 2 + i] != (d == 1 || d == 2 ? x[4 + i] : 0);
      CHECK_EQ_INT(bad, 0);
    }
    err_free(e);
  }
  /* collective_reduce to the root (the group's first member, replica 1) */
  {
    char body[512], text[2048];
    xprintf(body, sizeof body, kSumBody, "i32", "i32", "i32", "i32");
    xprintf(text, sizeof text,
            "func.func @main(%%x: tensor<2xi32>) -> tensor<2xi32> {\n"
            "  %%r = \"stablehlo.collective_reduce\"(%%x) %s {replica_groups = dense<[[1, 0, 2, "
            "3]]> : tensor<1x4xi64>} : (tensor<2xi32>) -> tensor<2xi32>\n"
            "  return %%r : tensor<2xi32>\n}\n",
            body);
    PJRT_Error *e = run(text, &s4, 1, outs, ob, NULL);
    CHECK_MSG(!e, "collective_reduce: %s", e ? err_msg(e) : "");
    if (!e) {
      int bad = 0;
      for (int d = 0; d < 4; d++)
        for (int i = 0; i < 2; i++)
          bad += out[d * 2 + i] != (d == 1 ? x[i] + x[2 + i] + x[4 + i] + x[6 + i] : 0);
      CHECK_EQ_INT(bad, 0);
    }
    err_free(e);
  }
}

static void test_send_recv_ids(void) {
  /* a ring: every partition sends to the next, then receives from the previous (a blocking
   * send would deadlock here) */
  const char *text =
      "func.func @main(%x: tensor<3xf32>) -> (tensor<3xf32>, tensor<ui32>, tensor<ui32>) {\n"
      "  %t = stablehlo.create_token : !stablehlo.token\n"
      "  %s = \"stablehlo.send\"(%x, %t) {channel_handle = #stablehlo.channel_handle<handle = 7, "
      "type = 1>, is_host_transfer = false, source_target_pairs = dense<[[0, 1], [1, 2], [2, 3], "
      "[3, 0]]> : tensor<4x2xi64>} : (tensor<3xf32>, !stablehlo.token) -> !stablehlo.token\n"
      "  %v, %t2 = \"stablehlo.recv\"(%s) {channel_handle = #stablehlo.channel_handle<handle = 7, "
      "type = 1>, is_host_transfer = false, source_target_pairs = dense<[[0, 1], [1, 2], [2, 3], "
      "[3, 0]]> : tensor<4x2xi64>} : (!stablehlo.token) -> (tensor<3xf32>, !stablehlo.token)\n"
      "  %r = stablehlo.replica_id : tensor<ui32>\n"
      "  %p = stablehlo.partition_id : tensor<ui32>\n"
      "  return %v, %r, %p : tensor<3xf32>, tensor<ui32>, tensor<ui32>\n}\n";
  float x[8 * 3], out[8 * 3];
  uint32_t rid[8], pid[8];
  for (int d = 0; d < 8; d++)
    for (int i = 0; i < 3; i++) x[d * 3 + i] = (float)(10 * d + i);
  spec s = {2, 4, PJRT_Buffer_Type_F32, 1, {3}, x, 12};
  void *outs[3] = {out, rid, pid};
  size_t ob[3] = {12, 4, 4};
  PJRT_Error *e = run(text, &s, 3, outs, ob, NULL);
  CHECK_MSG(!e, "send/recv: %s", e ? err_msg(e) : "");
  if (!e) {
    int bad = 0;
    for (int d = 0; d < 8; d++) {
      int r = d / 4, p = d % 4, from = r * 4 + (p + 3) % 4;
      for (int i = 0; i < 3; i++) bad += out[d * 3 + i] != x[from * 3 + i];
      bad += rid[d] != (uint32_t)r;
      bad += pid[d] != (uint32_t)p;
    }
    CHECK_EQ_INT(bad, 0);
  }
  err_free(e);
}

/* ---- the same program on 1, 2 and 8 devices ---- */

/* The rows of a 16 x 4 matrix split over n partitions: each device squares its rows, sums them
 * (all_reduce over all devices), gathers the rows back, and scatters the column sums. Every
 * device count must give the same answers (integers: exact in f32). */
static void run_data_parallel(int n, float *sum_out, float *gathered, float *scattered) {
  int rows = 16 / n;
  char groups[256] = "[[";
  for (int d = 0; d < n; d++) {
    char t[16];
    snprintf(t, sizeof t, "%s%d", d ? ", " : "", d);
    strcat(groups, t);
  }
  strcat(groups, "]]");
  char body[512], text[4096];
  xprintf(body, sizeof body, kSumBody, "f32", "f32", "f32", "f32");
  xprintf(text, sizeof text,
          "func.func @main(%%x: tensor<%dx4xf32>) -> (tensor<4xf32>, tensor<16x4xf32>, tensor<%dxf32>) {\n"
          "  %%sq = stablehlo.multiply %%x, %%x : tensor<%dx4xf32>\n"
          "  %%z = stablehlo.constant dense<0.0> : tensor<f32>\n"
          "  %%loc = stablehlo.reduce(%%sq init: %%z) applies stablehlo.add across dimensions = [0] : "
          "(tensor<%dx4xf32>, tensor<f32>) -> tensor<4xf32>\n"
          "  %%tot = \"stablehlo.all_reduce\"(%%loc) %s {replica_groups = dense<%s> : tensor<1x%dxi64>, "
          "channel_handle = #stablehlo.channel_handle<handle = 1, type = 0>, use_global_device_ids} : "
          "(tensor<4xf32>) -> tensor<4xf32>\n"
          "  %%all = \"stablehlo.all_gather\"(%%x) {all_gather_dim = 0 : i64, replica_groups = "
          "dense<%s> : tensor<1x%dxi64>, channel_handle = #stablehlo.channel_handle<handle = 2, "
          "type = 0>, use_global_device_ids} : (tensor<%dx4xf32>) -> tensor<16x4xf32>\n"
          "  %%cols = stablehlo.reduce(%%all init: %%z) applies stablehlo.add across dimensions = "
          "[1] : (tensor<16x4xf32>, tensor<f32>) -> tensor<16xf32>\n"
          "  %%sc = \"stablehlo.reduce_scatter\"(%%cols) %s {scatter_dimension = 0 : i64, "
          "replica_groups = dense<%s> : tensor<1x%dxi64>, channel_handle = "
          "#stablehlo.channel_handle<handle = 3, type = 0>, use_global_device_ids} : "
          "(tensor<16xf32>) -> tensor<%dxf32>\n"
          "  return %%tot, %%all, %%sc : tensor<4xf32>, tensor<16x4xf32>, tensor<%dxf32>\n}\n",
          rows, rows, rows, rows, body, groups, n, groups, n, rows, body, groups, n, rows, rows);
  float x[64];
  for (int i = 0; i < 64; i++) x[i] = (float)((i * 5) % 17) - 8;
  float out0[8 * 4], out1[8 * 64], out2[64];
  spec s = {1, n, PJRT_Buffer_Type_F32, 2, {rows, 4}, x, sizeof(float) * (size_t)rows * 4};
  void *outs[3] = {out0, out1, out2};
  size_t ob[3] = {16, 256, sizeof(float) * (size_t)rows};
  PJRT_Error *e = run(text, &s, 3, outs, ob, NULL);
  CHECK_MSG(!e, "data parallel on %d devices: %s", n, e ? err_msg(e) : "");
  memset(sum_out, 0, 16);
  memset(gathered, 0, 256);
  memset(scattered, 0, 64);
  if (!e) {
    /* every device holds the same total and the same gathered matrix */
    for (int d = 1; d < n; d++) {
      CHECK(!memcmp(out0, out0 + d * 4, 16));
      CHECK(!memcmp(out1, out1 + d * 64, 256));
    }
    memcpy(sum_out, out0, 16);
    memcpy(gathered, out1, 256);
    /* the scattered pieces in device order make up the whole vector */
    memcpy(scattered, out2, 64);
  }
  err_free(e);
}

static void test_device_counts(void) {
  float s1[4], g1[64], c1[16], s2[4], g2[64], c2[16], s8[4], g8[64], c8[16];
  run_data_parallel(1, s1, g1, c1);
  run_data_parallel(2, s2, g2, c2);
  run_data_parallel(8, s8, g8, c8);
  /* independent reference */
  float x[64], ws[4] = {0}, wc[16] = {0};
  for (int i = 0; i < 64; i++) x[i] = (float)((i * 5) % 17) - 8;
  for (int r = 0; r < 16; r++)
    for (int c = 0; c < 4; c++) {
      ws[c] += x[r * 4 + c] * x[r * 4 + c];
      wc[r] += x[r * 4 + c];
    }
  /* the scatter sums columns across devices: each device's gathered matrix is the whole one, so
   * the reduce_scatter sum is n times the row sums */
  CHECK(!memcmp(s1, ws, 16));
  CHECK(!memcmp(s2, ws, 16));
  CHECK(!memcmp(s8, ws, 16));
  CHECK(!memcmp(g1, x, 256) && !memcmp(g2, x, 256) && !memcmp(g8, x, 256));
  int bad = 0;
  for (int r = 0; r < 16; r++) {
    bad += c1[r] != wc[r];
    bad += c2[r] != 2 * wc[r];
    bad += c8[r] != 8 * wc[r];
  }
  CHECK_EQ_INT(bad, 0);
}

/* ---- loops and donation ---- */

static void test_loop_and_donation(void) {
  /* three all_reduces in a while loop: x <- sum over 4 partitions, three times */
  char body[512], text[4096];
  xprintf(body, sizeof body, kSumBody, "i64", "i64", "i64", "i64");
  xprintf(text, sizeof text,
          "func.func @main(%%x: tensor<5xi64> {jax.buffer_donor = true}) -> tensor<5xi64> {\n"
          "  %%i0 = stablehlo.constant dense<0> : tensor<i32>\n"
          "  %%one = stablehlo.constant dense<1> : tensor<i32>\n"
          "  %%three = stablehlo.constant dense<3> : tensor<i32>\n"
          "  %%r:2 = stablehlo.while(%%i = %%i0, %%v = %%x) : tensor<i32>, tensor<5xi64>\n"
          "  cond {\n"
          "    %%c = stablehlo.compare LT, %%i, %%three : (tensor<i32>, tensor<i32>) -> tensor<i1>\n"
          "    stablehlo.return %%c : tensor<i1>\n"
          "  } do {\n"
          "    %%s = \"stablehlo.all_reduce\"(%%v) %s {replica_groups = dense<[[0, 1, 2, 3]]> : "
          "tensor<1x4xi64>, channel_handle = #stablehlo.channel_handle<handle = 1, type = 0>, "
          "use_global_device_ids} : (tensor<5xi64>) -> tensor<5xi64>\n"
          "    %%n = stablehlo.add %%i, %%one : tensor<i32>\n"
          "    stablehlo.return %%n, %%s : tensor<i32>, tensor<5xi64>\n"
          "  }\n"
          "  %%f = \"stablehlo.all_reduce\"(%%r#1) %s {replica_groups = dense<[[0, 1, 2, 3]]> : "
          "tensor<1x4xi64>, channel_handle = #stablehlo.channel_handle<handle = 2, type = 0>, "
          "use_global_device_ids} : (tensor<5xi64>) -> tensor<5xi64>\n"
          "  return %%f : tensor<5xi64>\n}\n",
          body, body);
  pb o;
  opts_for(&o, 1, 4);
  PJRT_LoadedExecutable *le = compile_ok(client, text, o.b, o.n);
  if (!le) return;
  int64_t x[4 * 5], out[5];
  for (int d = 0; d < 4; d++)
    for (int i = 0; i < 5; i++) x[d * 5 + i] = 3 * d + i;
  PJRT_Buffer *args[4], *res[4] = {0};
  int64_t dims[1] = {5};
  for (int d = 0; d < 4; d++)
    args[d] = buffer_from_host(client, device_at(client, (size_t)d), PJRT_Buffer_Type_S64, dims, 1,
                               x + d * 5);
  PJRT_Event *ev[4] = {0};
  exec_opts eo = {NULL, 0, NULL, 1};
  if (OK(execute_raw(le, args, 4, 1, res, 1, ev, &eo))) {
    for (int d = 0; d < 4; d++) OK(event_wait_free(ev[d]));
    for (int d = 0; d < 4; d++) {
      /* the donated arguments now read as deleted */
      CHECK_EQ_INT(buffer_is_deleted(args[d]), 1);
      if (OK(buffer_to_host(res[d], out, sizeof out, NULL))) {
        int bad = 0;
        for (int i = 0; i < 5; i++) {
          int64_t s = 0;
          for (int k = 0; k < 4; k++) s += x[k * 5 + i];
          bad += out[i] != s * 4 * 4 * 4; /* 4 sums of 4 devices */
        }
        CHECK_EQ_INT(bad, 0);
      }
      buffer_free(res[d]);
    }
  }
  for (int d = 0; d < 4; d++) buffer_free(args[d]);
  loaded_free(le);
}

/* ---- failures ---- */

static void test_failures(void) {
  char body[512], text[4096];
  xprintf(body, sizeof body, kSumBody, "f32", "f32", "f32", "f32");
  float x[8 * 4] = {0}, out[8 * 4];
  void *outs[1] = {out};
  size_t ob[1] = {16};
  /* partition 1 fails a check before the all_reduce partition 0 waits at: 0 is cancelled */
  {
    xprintf(text, sizeof text,
            "func.func @main(%%x: tensor<4xf32>) -> tensor<4xf32> {\n"
            "  %%p = stablehlo.partition_id : tensor<ui32>\n"
            "  check.expect_eq_const %%p, dense<0> : tensor<ui32>\n"
            "  %%r = \"stablehlo.all_reduce\"(%%x) %s {replica_groups = dense<[[0, 1]]> : "
            "tensor<1x2xi64>, channel_handle = #stablehlo.channel_handle<handle = 1, type = 0>, "
            "use_global_device_ids} : (tensor<4xf32>) -> tensor<4xf32>\n"
            "  return %%r : tensor<4xf32>\n}\n",
            body);
    spec s = {1, 2, PJRT_Buffer_Type_F32, 1, {4}, x, 16};
    PJRT_Error *errs[2] = {0};
    PJRT_Error *e = run(text, &s, 1, outs, ob, errs);
    CHECK(!e);
    err_free(e);
    CHECK(errs[0] && errs[1]);
    if (errs[0]) CHECK_CONTAINS(err_msg(errs[0]), "cancelled because another device failed");
    if (errs[1]) CHECK_CONTAINS(err_msg(errs[1]), "check.expect_eq_const");
    err_free(errs[0]);
    err_free(errs[1]);
  }
  /* partition 1 skips the all_reduce: partition 0 fails, naming it, instead of hanging */
  {
    xprintf(text, sizeof text,
            "func.func @main(%%x: tensor<4xf32>) -> tensor<4xf32> {\n"
            "  %%p = stablehlo.partition_id : tensor<ui32>\n"
            "  %%z = stablehlo.constant dense<0> : tensor<ui32>\n"
            "  %%c = stablehlo.compare EQ, %%p, %%z : (tensor<ui32>, tensor<ui32>) -> tensor<i1>\n"
            "  %%r = \"stablehlo.if\"(%%c) ({\n"
            "    %%s = \"stablehlo.all_reduce\"(%%x) %s {replica_groups = dense<[[0, 1]]> : "
            "tensor<1x2xi64>, channel_handle = #stablehlo.channel_handle<handle = 1, type = 0>, "
            "use_global_device_ids} : (tensor<4xf32>) -> tensor<4xf32>\n"
            "    stablehlo.return %%s : tensor<4xf32>\n"
            "  }, {\n"
            "    stablehlo.return %%x : tensor<4xf32>\n"
            "  }) : (tensor<i1>) -> tensor<4xf32>\n"
            "  return %%r : tensor<4xf32>\n}\n",
            body);
    spec s = {1, 2, PJRT_Buffer_Type_F32, 1, {4}, x, 16};
    PJRT_Error *errs[2] = {0};
    PJRT_Error *e = run(text, &s, 1, outs, ob, errs);
    CHECK(!e);
    err_free(e);
    CHECK(errs[0] != NULL);
    if (errs[0]) CHECK_CONTAINS(err_msg(errs[0]), "partition 1 ended its program without reaching");
    err_free(errs[0]);
    err_free(errs[1]);
  }
  /* a recv whose sender never sends */
  {
    const char *t =
        "func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {\n"
        "  %t = stablehlo.create_token : !stablehlo.token\n"
        "  %v, %t2 = \"stablehlo.recv\"(%t) {channel_handle = #stablehlo.channel_handle<handle = 3, "
        "type = 1>, is_host_transfer = false, source_target_pairs = dense<[[1, 0]]> : "
        "tensor<1x2xi64>} : (!stablehlo.token) -> (tensor<4xf32>, !stablehlo.token)\n"
        "  return %v : tensor<4xf32>\n}\n";
    spec s = {1, 2, PJRT_Buffer_Type_F32, 1, {4}, x, 16};
    PJRT_Error *errs[2] = {0};
    PJRT_Error *e = run(t, &s, 1, outs, ob, errs);
    CHECK(!e);
    err_free(e);
    CHECK(errs[0] != NULL);
    if (errs[0]) CHECK_CONTAINS(err_msg(errs[0]), "ended its program without sending it");
    CHECK(errs[1] == NULL); /* partition 1 is no target: zeros */
    err_free(errs[0]);
    err_free(errs[1]);
  }
  /* groups naming a replica the execution does not have: a run-time error on every device */
  {
    xprintf(text, sizeof text,
            "func.func @main(%%x: tensor<4xf32>) -> tensor<4xf32> {\n"
            "  %%r = \"stablehlo.all_reduce\"(%%x) %s {replica_groups = dense<[[0, 1, 2]]> : "
            "tensor<1x3xi64>} : (tensor<4xf32>) -> tensor<4xf32>\n"
            "  return %%r : tensor<4xf32>\n}\n",
            body);
    spec s = {2, 1, PJRT_Buffer_Type_F32, 1, {4}, x, 16};
    PJRT_Error *e = run(text, &s, 1, outs, ob, NULL);
    ERR(e, INVALID_ARGUMENT, "replica_groups names replica 2 but the execution has 2 replicas");
  }
  /* an all_gather written for 4 devices run on a group of 2 */
  {
    const char *t =
        "func.func @main(%x: tensor<4xf32>) -> tensor<16xf32> {\n"
        "  %r = \"stablehlo.all_gather\"(%x) {all_gather_dim = 0 : i64, replica_groups = "
        "dense<[[0, 1]]> : tensor<1x2xi64>} : (tensor<4xf32>) -> tensor<16xf32>\n"
        "  return %r : tensor<16xf32>\n}\n";
    spec s = {2, 1, PJRT_Buffer_Type_F32, 1, {4}, x, 16};
    float big[2 * 16];
    void *bo[1] = {big};
    size_t bob[1] = {64};
    PJRT_Error *e = run(t, &s, 1, bo, bob, NULL);
    ERR(e, INVALID_ARGUMENT, "the process group has 2 members");
  }
  /* compile-time refusals */
  pb o;
  opts_for(&o, 1, 2);
  PJRT_LoadedExecutable *le;
  ERR(compile_err(client,
                  "func.func @main(%x: tensor<4xf32>) -> !stablehlo.token {\n"
                  "  %t = stablehlo.create_token : !stablehlo.token\n"
                  "  %s = \"stablehlo.send\"(%x, %t) {channel_handle = "
                  "#stablehlo.channel_handle<handle = 1, type = 2>, is_host_transfer = true} : "
                  "(tensor<4xf32>, !stablehlo.token) -> !stablehlo.token\n"
                  "  return %s : !stablehlo.token\n}\n",
                  o.b, o.n, &le),
      UNIMPLEMENTED, "is_host_transfer");
  ERR(compile_err(client,
                  "func.func @main(%x: tensor<4xf32>) -> (tensor<4xf32>, !stablehlo.token) {\n"
                  "  %t = stablehlo.create_token : !stablehlo.token\n"
                  "  %v:2 = \"stablehlo.infeed\"(%t) : (!stablehlo.token) -> (tensor<4xf32>, "
                  "!stablehlo.token)\n"
                  "  return %v#0, %v#1 : tensor<4xf32>, !stablehlo.token\n}\n",
                  o.b, o.n, &le),
      UNIMPLEMENTED, "infeed is not supported");
}

/* ---- shard_map / pmap programs: the partitioning of manual computations ---- */

static char *optimized_text(PJRT_LoadedExecutable *le) {
  PJRT_Executable *e = get_executable(le);
  PJRT_Program prog;
  memset(&prog, 0, sizeof prog);
  prog.struct_size = PJRT_Program_STRUCT_SIZE;
  ARGS(PJRT_Executable_OptimizedProgram, op);
  op.executable = e;
  op.program = &prog;
  char *text = NULL;
  if (OK(api->PJRT_Executable_OptimizedProgram(&op))) {
    text = calloc(1, prog.code_size + 1);
    prog.code = text;
    if (!OK(api->PJRT_Executable_OptimizedProgram(&op))) {
      free(text);
      text = NULL;
    }
  }
  executable_free(e);
  return text;
}

/* compiles program with the options o and checks that its optimized program's text contains
 * `want` */
static void expect_optimized(PJRT_Client *client, const char *program, const pb *o,
                             const char *want) {
  PJRT_LoadedExecutable *le = compile_ok(client, program, o->b, o->n);
  if (!le) return;
  char *text = optimized_text(le);
  if (text) CHECK_CONTAINS(text, want);
  free(text);
  loaded_free(le);
}

static const char kShardMap[] =
    "module @jit_f attributes {mhlo.num_partitions = 4 : i32, mhlo.num_replicas = 1 : i32} {\n"
    "  sdy.mesh @mesh = <[\"i\"=4]>\n"
    "  func.func public @main(%arg0: tensor<8x3xf32> {sdy.sharding = #sdy.sharding<@mesh, "
    "[{\"i\"}, {}]>}) -> (tensor<3xf32>, tensor<8x3xf32>) {\n"
    "    %0:2 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{\"i\"}, {}]>] "
    "out_shardings=[<@mesh, [{}]>, <@mesh, [{\"i\"}, {}]>] manual_axes={\"i\"} "
    "(%arg1: tensor<2x3xf32>) {\n"
    "      %z = stablehlo.constant dense<0.0> : tensor<f32>\n"
    "      %s = stablehlo.reduce(%arg1 init: %z) applies stablehlo.add across dimensions = [0] : "
    "(tensor<2x3xf32>, tensor<f32>) -> tensor<3xf32>\n"
    "      %t = \"stablehlo.all_reduce\"(%s) <{channel_handle = #stablehlo.channel_handle<handle = 1, "
    "type = 0>, replica_groups = dense<[[0, 1, 2, 3]]> : tensor<1x4xi64>, use_global_device_ids}> "
    "({\n"
    "      ^bb0(%a: tensor<f32>, %b: tensor<f32>):\n"
    "        %c = stablehlo.add %a, %b : tensor<f32>\n"
    "        stablehlo.return %c : tensor<f32>\n"
    "      }) : (tensor<3xf32>) -> tensor<3xf32>\n"
    "      %d = stablehlo.add %arg1, %arg1 : tensor<2x3xf32>\n"
    "      sdy.return %t, %d : tensor<3xf32>, tensor<2x3xf32>\n"
    "    } : (tensor<8x3xf32>) -> (tensor<3xf32>, tensor<8x3xf32>)\n"
    "    return %0#0, %0#1 : tensor<3xf32>, tensor<8x3xf32>\n"
    "  }\n"
    "}\n";

static PJRT_LoadedExecutable *round_trip(PJRT_LoadedExecutable *le) {
  PJRT_Executable *e = get_executable(le);
  ARGS(PJRT_Executable_Serialize, sa);
  sa.executable = e;
  PJRT_LoadedExecutable *back = NULL;
  if (OK(api->PJRT_Executable_Serialize(&sa))) {
    ARGS(PJRT_Executable_DeserializeAndLoad, d);
    d.client = client;
    d.serialized_executable = sa.serialized_bytes;
    d.serialized_executable_size = sa.serialized_bytes_size;
    if (OK(api->PJRT_Executable_DeserializeAndLoad(&d))) back = d.loaded_executable;
    sa.serialized_executable_deleter(sa.serialized_executable);
  }
  executable_free(e);
  return back;
}

static void check_shard_map_results(PJRT_LoadedExecutable *le, const char *what) {
  float x[32], t[4 * 3], d2[4 * 6];
  for (int i = 0; i < 32; i++) x[i] = (float)(i % 11);
  spec s = {1, 4, PJRT_Buffer_Type_F32, 2, {2, 3}, x, 24};
  void *outs[2] = {t, d2};
  size_t ob[2] = {12, 24};
  PJRT_Error *e = run_le(le, &s, 2, outs, ob, NULL);
  CHECK_MSG(!e, "%s: %s", what, e ? err_msg(e) : "");
  if (!e) {
    int bad = 0;
    for (int dv = 0; dv < 4; dv++) {
      for (int c = 0; c < 3; c++) {
        float w = 0;
        for (int r = 0; r < 8; r++) w += x[r * 3 + c];
        bad += t[dv * 3 + c] != w;
      }
      for (int i = 0; i < 6; i++) bad += d2[dv * 6 + i] != 2 * x[dv * 6 + i];
    }
    CHECK_MSG(bad == 0, "%s: %d wrong values", what, bad);
  }
  err_free(e);
}

/* The partitioner (src/compiler/spmd_partition.c): x (8x4) split by rows over 4 devices;
 * x^T x contracts the split dim (local dot + all_reduce), a column sum reduces it (local
 * reduce + all_reduce), a constraint reshards x by columns (all_gather + slice), a row max
 * keeps the split (and the result stays split: nothing asks otherwise), and a constraint that
 * cannot split evenly leaves its value whole. */
static const char kPartitioned[] =
    "module @jit_f attributes {mhlo.num_partitions = 4 : i32, mhlo.num_replicas = 1 : i32} {\n"
    "  sdy.mesh @mesh = <[\"i\"=4]>\n"
    "  func.func public @main(%x: tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, "
    "[{\"i\"}, {}]>}) -> (tensor<4x4xf32>, tensor<4xf32>, tensor<8x4xf32> {sdy.sharding = "
    "#sdy.sharding<@mesh, [{}, {\"i\"}]>}, tensor<8xf32>, tensor<3x8xf32>) {\n"
    "    %t = stablehlo.transpose %x, dims = [1, 0] : (tensor<8x4xf32>) -> tensor<4x8xf32>\n"
    "    %0 = stablehlo.dot_general %t, %x, contracting_dims = [1] x [0] : "
    "(tensor<4x8xf32>, tensor<8x4xf32>) -> tensor<4x4xf32>\n"
    "    %z = stablehlo.constant dense<0.0> : tensor<f32>\n"
    "    %m = stablehlo.constant dense<0xFF800000> : tensor<f32>\n"
    "    %1 = stablehlo.reduce(%x init: %z) applies stablehlo.add across dimensions = [0] : "
    "(tensor<8x4xf32>, tensor<f32>) -> tensor<4xf32>\n"
    "    %2 = sdy.sharding_constraint %x <@mesh, [{}, {\"i\"}]> : tensor<8x4xf32>\n"
    "    %3 = stablehlo.reduce(%x init: %m) applies stablehlo.maximum across dimensions = [1] : "
    "(tensor<8x4xf32>, tensor<f32>) -> tensor<8xf32>\n"
    "    %s = stablehlo.slice %t [0:3, 0:8] : (tensor<4x8xf32>) -> tensor<3x8xf32>\n"
    "    %4 = sdy.sharding_constraint %s <@mesh, [{\"i\"}, {}]> : tensor<3x8xf32>\n"
    "    return %0, %1, %2, %3, %4 : tensor<4x4xf32>, tensor<4xf32>, tensor<8x4xf32>, "
    "tensor<8xf32>, tensor<3x8xf32>\n"
    "  }\n"
    "}\n";

static void test_partitioner(void) {
  pb o;
  opts_for(&o, 1, 4);
  PJRT_LoadedExecutable *le = compile_ok(client, kPartitioned, o.b, o.n);
  if (!le) return;
  float x[32], r0[4 * 16], r1[4 * 4], r2[4 * 8], r3[4 * 2], r4[4 * 24];
  for (int i = 0; i < 32; i++) x[i] = (float)((i * 7) % 13) - 6.0f;
  spec s = {1, 4, PJRT_Buffer_Type_F32, 2, {2, 4}, x, 32};
  void *outs[5] = {r0, r1, r2, r3, r4};
  size_t ob[5] = {64, 16, 32, 8, 96};
  PJRT_Error *e = run_le(le, &s, 5, outs, ob, NULL);
  CHECK_MSG(!e, "partitioned program: %s", e ? err_msg(e) : "");
  if (!e) {
    int bad = 0;
    for (int dv = 0; dv < 4; dv++) {
      for (int a = 0; a < 4; a++)
        for (int b = 0; b < 4; b++) {
          float w = 0;
          for (int r = 0; r < 8; r++) w += x[r * 4 + a] * x[r * 4 + b];
          bad += r0[dv * 16 + a * 4 + b] != w;
        }
      for (int c = 0; c < 4; c++) {
        float w = 0;
        for (int r = 0; r < 8; r++) w += x[r * 4 + c];
        bad += r1[dv * 4 + c] != w;
      }
      for (int r = 0; r < 8; r++) bad += r2[dv * 8 + r] != x[r * 4 + dv]; /* column dv */
      for (int k = 0; k < 2; k++) {
        int r = dv * 2 + k;
        float w = x[r * 4];
        for (int c = 1; c < 4; c++) w = x[r * 4 + c] > w ? x[r * 4 + c] : w;
        bad += r3[dv * 2 + k] != w;
      }
      for (int a = 0; a < 3; a++)
        for (int r = 0; r < 8; r++) bad += r4[dv * 24 + a * 8 + r] != x[r * 4 + a];
    }
    CHECK_MSG(bad == 0, "partitioned program: %d wrong values", bad);
  }
  err_free(e);
  char *text = optimized_text(le);
  if (text) {
    CHECK_CONTAINS(text, "mhlo.spmd_output_sharding = \"{{replicated}, {replicated}, "
                         "{devices=[1,4]0,1,2,3}, {devices=[4]0,1,2,3}, {replicated}}\"");
    CHECK_CONTAINS(text, "stablehlo.all_reduce");
    CHECK(!strstr(text, "sdy.sharding_constraint"));
  }
  free(text);
  loaded_free(le);
  /* Shardy's round-trip spelling: meshes and shardings in frontend attributes, the constraint
   * a custom_call @Sharding. x (8) split over 4; the constraint gathers it; doubled. */
  le = compile_ok(client,
                  "module @m attributes {mhlo.frontend_attributes = {xla.sdy.meshes = "
                  "\"{mesh = #sdy.mesh<[\\22i\\22=4]>}\"}} {\n"
                  "  func.func @main(%x: tensor<8xf32> {mhlo.frontend_attributes = "
                  "{xla.sdy.sharding = \"#sdy.sharding<@mesh, [{\\22i\\22}]>\"}, "
                  "mhlo.sharding = \"{devices=[4]<=[4]}\"}) -> tensor<8xf32> {\n"
                  "    %0 = stablehlo.custom_call @Sharding(%x) {mhlo.frontend_attributes = "
                  "{xla.sdy.sharding = \"#sdy.sharding_per_value<[<@mesh, [{}]>]>\"}, "
                  "mhlo.sharding = \"{replicated}\"} : (tensor<8xf32>) -> tensor<8xf32>\n"
                  "    %1 = stablehlo.add %0, %0 : tensor<8xf32>\n"
                  "    return %1 : tensor<8xf32>\n  }\n}\n",
                  o.b, o.n);
  if (le) {
    float y[4 * 8];
    spec s1 = {1, 4, PJRT_Buffer_Type_F32, 1, {2}, x, 8};
    void *o1[1] = {y};
    size_t b1[1] = {32};
    e = run_le(le, &s1, 1, o1, b1, NULL);
    CHECK_MSG(!e, "round-trip form: %s", e ? err_msg(e) : "");
    int bad = 0;
    for (int dv = 0; !e && dv < 4; dv++)
      for (int i = 0; i < 8; i++) bad += y[dv * 8 + i] != 2 * x[i];
    CHECK_MSG(bad == 0, "round-trip form: %d wrong values", bad);
    err_free(e);
    loaded_free(le);
  }
  /* a loop: x split, the accumulator starts whole (zeros) and the body adds split values to
   * it: it is split from the start (a dry run of the body finds it) and stays split */
  le = compile_ok(client,
                  "module {\n  sdy.mesh @mesh = <[\"i\"=4]>\n"
                  "  func.func @main(%x: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, "
                  "[{\"i\"}]>}) -> (tensor<8xf32>, tensor<f32>) {\n"
                  "    %z = stablehlo.constant dense<0.0> : tensor<8xf32>\n"
                  "    %c0 = stablehlo.constant dense<0> : tensor<i32>\n"
                  "    %0:3 = stablehlo.while(%i = %c0, %acc = %z, %v = %x) : tensor<i32>, "
                  "tensor<8xf32>, tensor<8xf32>\n"
                  "    cond {\n"
                  "      %c3 = stablehlo.constant dense<3> : tensor<i32>\n"
                  "      %p = stablehlo.compare LT, %i, %c3 : (tensor<i32>, tensor<i32>) -> tensor<i1>\n"
                  "      stablehlo.return %p : tensor<i1>\n"
                  "    } do {\n"
                  "      %c1 = stablehlo.constant dense<1> : tensor<i32>\n"
                  "      %n = stablehlo.add %i, %c1 : tensor<i32>\n"
                  "      %d = stablehlo.add %v, %v : tensor<8xf32>\n"
                  "      %a = stablehlo.add %acc, %d : tensor<8xf32>\n"
                  "      stablehlo.return %n, %a, %v : tensor<i32>, tensor<8xf32>, tensor<8xf32>\n"
                  "    }\n"
                  "    %s0 = stablehlo.constant dense<0.0> : tensor<f32>\n"
                  "    %s = stablehlo.reduce(%0#1 init: %s0) applies stablehlo.add across dimensions "
                  "= [0] : (tensor<8xf32>, tensor<f32>) -> tensor<f32>\n"
                  "    return %0#1, %s : tensor<8xf32>, tensor<f32>\n  }\n}\n",
                  o.b, o.n);
  if (le) {
    float acc[4 * 2], sum[4];
    spec s2 = {1, 4, PJRT_Buffer_Type_F32, 1, {2}, x, 8};
    void *o2[2] = {acc, sum};
    size_t b2[2] = {8, 4};
    e = run_le(le, &s2, 2, o2, b2, NULL);
    CHECK_MSG(!e, "loop: %s", e ? err_msg(e) : "");
    int bad = 0;
    float total = 0;
    for (int i = 0; i < 8; i++) total += 6 * x[i];
    for (int dv = 0; !e && dv < 4; dv++) {
      for (int k = 0; k < 2; k++) bad += acc[dv * 2 + k] != 6 * x[dv * 2 + k];
      bad += sum[dv] != total;
    }
    CHECK_MSG(bad == 0, "loop: %d wrong values", bad);
    err_free(e);
    char *lt = optimized_text(le);
    if (lt) CHECK_CONTAINS(lt, "mhlo.spmd_output_sharding = \"{{devices=[4]0,1,2,3}, {replicated}}\"");
    free(lt);
    loaded_free(le);
  }
  /* sub-axes are refused, naming them */
  ERR(compile_err(client,
                  "module {\n  sdy.mesh @mesh = <[\"i\"=4]>\n"
                  "  func.func @main(%x: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, "
                  "[{\"i\":(1)2}]>}) -> tensor<8xf32> {\n"
                  "    %0 = sdy.sharding_constraint %x <@mesh, [{\"i\"}]> : tensor<8xf32>\n"
                  "    return %0 : tensor<8xf32>\n  }\n}\n",
                  o.b, o.n, &le),
      UNIMPLEMENTED, "sub-axes");
}

/* Unreduced values made inside a program (docs/SPMD.md): a split value asked for unreduced keeps
 * its tile among zeros; a loop carries an accumulator of it as partial values and its result is
 * summed once after the loop (the only all_reduce left); a scatter-add of split updates asked for
 * unreduced keeps each device's own sums. x = [1, 2, 3, 4] split over "x". */
static void test_unreduced_made_inside(void) {
  const char *text =
      "module {\n"
      "  sdy.mesh @mesh = <[\"x\"=2]>\n"
      "  func.func @main(%arg0: tensor<4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"x\"}]>}) -> ("
      "tensor<4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}], unreduced={\"x\"}>}, "
      "tensor<4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}], unreduced={\"x\"}>}, "
      "tensor<4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}]>}, "
      "tensor<2xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}], unreduced={\"x\"}>}) {\n"
      "    %0 = sdy.sharding_constraint %arg0 <@mesh, [{}], unreduced={\"x\"}> : tensor<4xf32>\n"
      "    %z = stablehlo.constant dense<0.0> : tensor<4xf32>\n"
      "    %u = sdy.sharding_constraint %z <@mesh, [{}], unreduced={\"x\"}> : tensor<4xf32>\n"
      "    %c0 = stablehlo.constant dense<0> : tensor<i32>\n"
      "    %w:2 = stablehlo.while(%i = %c0, %acc = %u) : tensor<i32>, tensor<4xf32>\n"
      "     cond {\n"
      "      %c2 = stablehlo.constant dense<2> : tensor<i32>\n"
      "      %p = stablehlo.compare LT, %i, %c2 : (tensor<i32>, tensor<i32>) -> tensor<i1>\n"
      "      stablehlo.return %p : tensor<i1>\n"
      "    } do {\n"
      "      %a = sdy.sharding_constraint %acc <@mesh, [{}], unreduced={\"x\"}> : tensor<4xf32>\n"
      "      %t = stablehlo.add %a, %0 : tensor<4xf32>\n"
      "      %t2 = sdy.sharding_constraint %t <@mesh, [{}], unreduced={\"x\"}> : tensor<4xf32>\n"
      "      %one = stablehlo.constant dense<1> : tensor<i32>\n"
      "      %i2 = stablehlo.add %i, %one : tensor<i32>\n"
      "      stablehlo.return %i2, %t2 : tensor<i32>, tensor<4xf32>\n"
      "    }\n"
      "    %r = sdy.sharding_constraint %w#1 <@mesh, [{}], unreduced={\"x\"}> : tensor<4xf32>\n"
      "    %zz = stablehlo.constant dense<0.0> : tensor<2xf32>\n"
      "    %ix = stablehlo.constant dense<[[0], [1], [0], [1]]> : tensor<4x1xi32>\n"
      "    %s = \"stablehlo.scatter\"(%zz, %ix, %arg0) <{scatter_dimension_numbers = "
      "#stablehlo.scatter<inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], "
      "index_vector_dim = 1>}> ({\n"
      "    ^bb0(%x: tensor<f32>, %y: tensor<f32>):\n"
      "      %q = stablehlo.add %x, %y : tensor<f32>\n"
      "      stablehlo.return %q : tensor<f32>\n"
      "    }) : (tensor<2xf32>, tensor<4x1xi32>, tensor<4xf32>) -> tensor<2xf32>\n"
      "    %su = sdy.sharding_constraint %s <@mesh, [{}], unreduced={\"x\"}> : tensor<2xf32>\n"
      "    return %0, %r, %r, %su : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<2xf32>\n"
      "  }\n"
      "}\n";
  float x[2][2] = {{1, 2}, {3, 4}}, tiles[2][4], acc[2][4], sum[2][4], sc[2][2];
  spec s = {1, 2, PJRT_Buffer_Type_F32, 1, {2}, x, sizeof x[0]};
  void *outs[4] = {tiles, acc, sum, sc};
  size_t ob[4] = {sizeof tiles[0], sizeof acc[0], sizeof sum[0], sizeof sc[0]};
  PJRT_Error *e = run(text, &s, 4, outs, ob, NULL);
  CHECK_MSG(e == NULL, "unreduced inside: %s", e ? err_msg(e) : "");
  for (int d = 0; !e && d < 2; d++) {
    for (int k = 0; k < 4; k++) {
      float mine = k / 2 == d ? (float)(k + 1) : 0.0f;
      CHECK_MSG(tiles[d][k] == mine, "tile among zeros: device %d [%d] = %g", d, k, tiles[d][k]);
      CHECK_MSG(acc[d][k] == 2 * mine, "partial accumulator: device %d [%d] = %g", d, k, acc[d][k]);
      CHECK_MSG(sum[d][k] == (float)(2 * (k + 1)), "summed: device %d [%d] = %g", d, k, sum[d][k]);
    }
    for (int k = 0; k < 2; k++)
      CHECK_MSG(sc[d][k] == x[d][k], "scatter partial: device %d [%d] = %g", d, k, sc[d][k]);
  }
  err_free(e);
  pb o;
  opts_for(&o, 1, 2);
  PJRT_LoadedExecutable *le = compile_ok(client, text, o.b, o.n);
  char *t = le ? optimized_text(le) : NULL;
  const char *first = t ? strstr(t, "stablehlo.all_reduce") : NULL;
  CHECK_MSG(first && !strstr(first + 1, "stablehlo.all_reduce"), "one all_reduce: %s", t ? t : "");
  free(t);
  if (le) loaded_free(le);
}

static void test_partitioning(void) {
  pb o;
  opts_for(&o, 1, 4);
  PJRT_LoadedExecutable *le = compile_ok(client, kShardMap, o.b, o.n);
  if (le) {
    /* it runs on the shards, also after a serialization round trip */
    check_shard_map_results(le, "shard_map program");
    PJRT_LoadedExecutable *back = round_trip(le);
    if (back) check_shard_map_results(back, "deserialized shard_map program");
    loaded_free(back);
    /* per-device result shapes */
    PJRT_Executable *e = get_executable(le);
    ARGS(PJRT_Executable_OutputDimensions, od);
    od.executable = e;
    if (OK(api->PJRT_Executable_OutputDimensions(&od))) {
      CHECK_EQ_INT(od.num_outputs, 2);
      CHECK(od.dim_sizes[0] == 1 && od.dims[0] == 3);
      CHECK(od.dim_sizes[1] == 2 && od.dims[1] == 2 && od.dims[2] == 3);
    }
    executable_free(e);
    char *text = optimized_text(le);
    if (text) {
      CHECK_CONTAINS(text, "mhlo.spmd_output_sharding = \"{{replicated}, {devices=[4,1]0,1,2,3}}\"");
      CHECK_CONTAINS(text, "mhlo.spmd_parameters_shardings = [\"{devices=[4,1]0,1,2,3}\"]");
      CHECK(!strstr(text, "sdy.manual_computation"));
    }
    free(text);
    loaded_free(le);
  }
  /* a mesh with explicit device ids: the output sharding lists the partitions at each mesh
   * position; a 2-d mesh with a replicated axis */
  {
    const char *ids =
        "module {\n"
        "  sdy.mesh @mesh = <[\"a\"=2, \"b\"=2], device_ids=[3, 1, 2, 0]>\n"
        "  func.func @main(%arg0: tensor<4x6xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"b\"}, "
        "{}]>}) -> tensor<4x6xf32> {\n"
        "    return %arg0 : tensor<4x6xf32>\n"
        "  }\n"
        "}\n";
    /* tile t along dim 0 is mesh coordinate b = t; a (the replicated axis) is the last tile
     * dimension: positions (a, b) = (0, 0), (1, 0), (0, 1), (1, 1) are devices 3, 2, 1, 0 */
    expect_optimized(client, ids, &o, "mhlo.spmd_output_sharding = \"{devices=[2,1,2]3,2,1,0 "
                                      "last_tile_dim_replicate}\"");
  }
  /* shard_map over part of a 2 x 2 mesh ("a" manual, "b" automatic): the body holds its
   * values whole along "b" and runs as written; its psum over "a" ([[0, 2], [1, 3]]); a nested
   * manual computation over "b" (as JAX nests one for axis_index) takes shards along "b" and
   * its result is gathered back whole. x = [0, 1, 2, 3]: 2 * (x[0:2] + x[2:4]) on every device */
  const char *partial =
      "module {\n"
      "  sdy.mesh @mesh = <[\"a\"=2, \"b\"=2]>\n"
      "  func.func @main(%arg0: tensor<4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"a\"}]>}) "
      "-> (tensor<4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"a\"}]>}) {\n"
      "    %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{\"a\", ?}]>] "
      "out_shardings=[<@mesh, [{\"a\", ?}]>] manual_axes={\"a\"} (%arg1: tensor<2xf32>) {\n"
      "      %s = \"stablehlo.all_reduce\"(%arg1) <{replica_groups = dense<[[0, 2], [1, 3]]> : "
      "tensor<2x2xi64>, channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, "
      "use_global_device_ids}> ({\n  ^bb0(%p: tensor<f32>, %q: tensor<f32>):\n"
      "        %w = stablehlo.add %p, %q : tensor<f32>\n        stablehlo.return %w : tensor<f32>\n"
      "      }) : (tensor<2xf32>) -> tensor<2xf32>\n"
      "      %n = sdy.manual_computation(%s) in_shardings=[<@mesh, [{\"b\"}]>] "
      "out_shardings=[<@mesh, [{\"b\"}]>] manual_axes={\"b\"} (%arg2: tensor<1xf32>) {\n"
      "        %d = stablehlo.add %arg2, %arg2 : tensor<1xf32>\n"
      "        sdy.return %d : tensor<1xf32>\n"
      "      } : (tensor<2xf32>) -> tensor<2xf32>\n"
      "      sdy.return %n : tensor<2xf32>\n"
      "    } : (tensor<4xf32>) -> tensor<4xf32>\n"
      "    return %0 : tensor<4xf32>\n"
      "  }\n"
      "}\n";
  {
    float xs[4][2] = {{0, 1}, {0, 1}, {2, 3}, {2, 3}}, pgot[4][2]; /* device d: a = d / 2 */
    spec ps = {1, 4, PJRT_Buffer_Type_F32, 1, {2}, xs, sizeof xs[0]};
    void *pouts[1] = {pgot};
    size_t pob[1] = {sizeof pgot[0]};
    PJRT_Error *pe = run(partial, &ps, 1, pouts, pob, NULL);
    CHECK_MSG(pe == NULL, "partly manual: %s", pe ? err_msg(pe) : "");
    for (int d = 0; !pe && d < 4; d++)
      CHECK_MSG(pgot[d][0] == 4.0f && pgot[d][1] == 8.0f, "partly manual: device %d got [%g, %g]",
                d, pgot[d][0], pgot[d][1]);
    err_free(pe);
  }
  /* unreduced axes: an argument held as partial sums is summed once for its other uses
   * ((1 + 10)^2, ...); a whole value returned unreduced is itself on the first device along the
   * axis and zeros on the other (their sum is the value) */
  {
    const char *unred_in =
        "module {\n"
        "  sdy.mesh @mesh = <[\"x\"=2]>\n"
        "  func.func @main(%arg0: tensor<4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}], "
        "unreduced={\"x\"}>}) -> (tensor<4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}]>}, "
        "tensor<4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}], unreduced={\"x\"}>}, "
        "tensor<4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}], unreduced={\"x\"}>}) {\n"
        "    %0 = stablehlo.multiply %arg0, %arg0 : tensor<4xf32>\n"
        "    return %0, %arg0, %0 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>\n"
        "  }\n"
        "}\n";
    float parts[2][4] = {{1, 2, 3, 4}, {10, 20, 30, 40}}, sq[2][4], same[2][4], made[2][4];
    spec us = {1, 2, PJRT_Buffer_Type_F32, 1, {4}, parts, sizeof parts[0]};
    void *uouts[3] = {sq, same, made};
    size_t uob[3] = {sizeof sq[0], sizeof same[0], sizeof made[0]};
    PJRT_Error *ue = run(unred_in, &us, 3, uouts, uob, NULL);
    CHECK_MSG(ue == NULL, "unreduced argument: %s", ue ? err_msg(ue) : "");
    for (int d = 0; !ue && d < 2; d++)
      for (int k = 0; k < 4; k++) {
        float w = (float)((k + 1) * 11) * (float)((k + 1) * 11);
        CHECK_MSG(sq[d][k] == w, "unreduced argument: device %d [%d] = %g, not %g", d, k, sq[d][k], w);
        CHECK_MSG(same[d][k] == parts[d][k], "unreduced passed through: device %d [%d] = %g", d, k,
                  same[d][k]);
        CHECK_MSG(made[d][k] == (d ? 0.0f : w), "made unreduced: device %d [%d] = %g", d, k,
                  made[d][k]);
      }
    err_free(ue);
  }
  /* a scalar unreduced over "x" and whole along "y": its output sharding has only the trailing
   * tile dims (unreduced, then replicated), with no comma before them (the text jaxlib's
   * conversion crashed on) */
  const char *unred_scalar =
      "module {\n"
      "  sdy.mesh @mesh = <[\"x\"=2, \"y\"=2]>\n"
      "  func.func @main(%arg0: tensor<f32>) -> (tensor<f32> {sdy.sharding = "
      "#sdy.sharding<@mesh, [], unreduced={\"x\"}>}) {\n"
      "    return %arg0 : tensor<f32>\n"
      "  }\n"
      "}\n";
  expect_optimized(client, unred_scalar, &o, "mhlo.spmd_output_sharding = \"{devices=[2,2]0,1,2,3 "
                                             "last_tile_dims={unreduced, replicated}}\"");
  /* the mesh must span the partitions */
  pb o2;
  opts_for(&o2, 1, 2);
  ERR(compile_err(client, kShardMap, o2.b, o2.n, &le), INVALID_ARGUMENT,
      "the mesh @mesh has 4 devices but the program runs on 2");
  /* a replicated value passed where shards are expected (jit(shard_map(f))(x) with x not
   * sharded): each device slices its own shard out of its whole copy, by its position in the
   * mesh (device_ids permuted here, so partition p sits at the position where ids[k] == p) */
  const char *repl =
      "module {\n"
      "  sdy.mesh @mesh = <[\"i\"=2, \"j\"=2], device_ids=[0, 2, 1, 3]>\n"
      "  func.func @main(%arg0: tensor<4x2xf32>) -> tensor<4x2xf32> {\n"
      "    %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{\"i\"}, {\"j\"}]>] "
      "out_shardings=[<@mesh, [{\"i\"}, {\"j\"}]>] manual_axes={\"i\", \"j\"} "
      "(%arg1: tensor<2x1xf32>) {\n"
      "      sdy.return %arg1 : tensor<2x1xf32>\n"
      "    } : (tensor<4x2xf32>) -> tensor<4x2xf32>\n"
      "    return %0 : tensor<4x2xf32>\n"
      "  }\n"
      "}\n";
  float whole[4][8], got[4][2];
  for (int d = 0; d < 4; d++)
    for (int k = 0; k < 8; k++) whole[d][k] = (float)k; /* x[r][c] = 2 r + c, on every device */
  spec rs = {1, 4, PJRT_Buffer_Type_F32, 2, {4, 2}, whole, sizeof whole[0]};
  void *routs[1] = {got};
  size_t rob[1] = {sizeof got[0]};
  PJRT_Error *re = run(repl, &rs, 1, routs, rob, NULL);
  CHECK_MSG(re == NULL, "replicated into shards: %s", re ? err_msg(re) : "");
  if (!re) {
    /* partition p at mesh position k (ids[k] == p): i = k / 2, j = k % 2; its shard is rows
     * 2i, 2i+1 of column j */
    static const int pos_of[4] = {0, 2, 1, 3};
    for (int p = 0; p < 4; p++) {
      int i = pos_of[p] / 2, j = pos_of[p] % 2;
      CHECK_MSG(got[p][0] == (float)(2 * (2 * i) + j) && got[p][1] == (float)(2 * (2 * i + 1) + j),
                "partition %d got [%g, %g]", p, got[p][0], got[p][1]);
    }
  }
  err_free(re);

  /* Shardy's round-trip form (what jaxlib's serialize_portable_artifact writes): meshes and
   * shardings in mhlo.frontend_attributes, the manual computation as GlobalToLocalShape, a call
   * of its body, LocalToGlobalShape. x = [0..7] sharded over 2 devices, psum'd: [4, 6, 8, 10]. */
  const char *round_trip =
      "module @m attributes {mhlo.frontend_attributes = {xla.sdy.meshes = "
      "\"{mesh = #sdy.mesh<[\\22x\\22=2]>}\"}} {\n"
      "  func.func public @main(%arg0: tensor<8xf32> {mhlo.frontend_attributes = "
      "{xla.sdy.sharding = \"#sdy.sharding<@mesh, [{\\22x\\22}]>\"}}) -> tensor<4xf32> {\n"
      "    %0 = stablehlo.custom_call @xla.sdy.GlobalToLocalShape(%arg0) {has_side_effect = true, "
      "mhlo.frontend_attributes = {xla.sdy.in_shardings = "
      "\"#sdy.sharding_per_value<[<@mesh, [{\\22x\\22}]>]>\", xla.sdy.manual_axes = "
      "\"#sdy<manual_axes{\\22x\\22}>\"}} : (tensor<8xf32>) -> tensor<4xf32>\n"
      "    %1 = call @xla.sdy.manual_computation_body(%0) : (tensor<4xf32>) -> tensor<4xf32>\n"
      "    %2 = stablehlo.custom_call @xla.sdy.LocalToGlobalShape(%1) {has_side_effect = true, "
      "mhlo.frontend_attributes = {xla.sdy.manual_axes = \"#sdy<manual_axes{\\22x\\22}>\", "
      "xla.sdy.out_shardings = \"#sdy.sharding_per_value<[<@mesh, [{}]>]>\"}} : "
      "(tensor<4xf32>) -> tensor<4xf32>\n"
      "    return %2 : tensor<4xf32>\n"
      "  }\n"
      "  func.func @xla.sdy.manual_computation_body(%a: tensor<4xf32>) -> tensor<4xf32> {\n"
      "    %r = \"stablehlo.all_reduce\"(%a) <{replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>, "
      "channel_handle = #stablehlo.channel_handle<handle = 1, type = 0>, use_global_device_ids}> "
      "({\n  ^bb0(%p: tensor<f32>, %q: tensor<f32>):\n"
      "    %s = stablehlo.add %p, %q : tensor<f32>\n    stablehlo.return %s : tensor<f32>\n"
      "  }) : (tensor<4xf32>) -> tensor<4xf32>\n"
      "    return %r : tensor<4xf32>\n"
      "  }\n"
      "}\n";
  float shards[2][4] = {{0, 1, 2, 3}, {4, 5, 6, 7}}, summed[2][4];
  spec ts = {1, 2, PJRT_Buffer_Type_F32, 1, {4}, shards, sizeof shards[0]};
  void *touts[1] = {summed};
  size_t tob[1] = {sizeof summed[0]};
  re = run(round_trip, &ts, 1, touts, tob, NULL);
  CHECK_MSG(re == NULL, "round-trip form: %s", re ? err_msg(re) : "");
  for (int d = 0; !re && d < 2; d++)
    for (int k = 0; k < 4; k++)
      CHECK_MSG(summed[d][k] == (float)(4 + 2 * k), "round trip: device %d [%d] = %g", d, k,
                summed[d][k]);
  err_free(re);
}

/* ---- replica groups given as mesh axes ---- */

/* all_reduce(add) over 8 partitions with replica_groups = the mesh-axes form `groups`, in a
 * module defining `mesh` (an sdy.mesh line, or ""); group_of[d] is device d's group. */
static void check_mesh_axes_reduce(const char *mesh, const char *groups, const int *group_of,
                                   const char *what) {
  char body[512], text[4096];
  xprintf(body, sizeof body, kSumBody, "i32", "i32", "i32", "i32");
  xprintf(text, sizeof text,
          "module {\n  %s\n"
          "  func.func @main(%%x: tensor<4xi32>) -> tensor<4xi32> {\n"
          "    %%r = \"stablehlo.all_reduce\"(%%x) %s {replica_groups = %s, channel_handle = "
          "#stablehlo.channel_handle<handle = 1, type = 1>, use_global_device_ids} : "
          "(tensor<4xi32>) -> tensor<4xi32>\n"
          "    return %%r : tensor<4xi32>\n  }\n}\n",
          mesh, body, groups);
  int32_t x[8 * 4], out[8 * 4], want[8 * 4];
  for (int d = 0; d < 8; d++)
    for (int i = 0; i < 4; i++) x[d * 4 + i] = 1 << (d + 4 * (i % 2)); /* one bit per device */
  for (int d = 0; d < 8; d++)
    for (int i = 0; i < 4; i++) {
      int32_t s = 0;
      for (int e = 0; e < 8; e++)
        if (group_of[e] == group_of[d]) s += x[e * 4 + i];
      want[d * 4 + i] = s;
    }
  spec s = {1, 8, PJRT_Buffer_Type_S32, 1, {4}, x, 16};
  void *outs[1] = {out};
  size_t ob[1] = {16};
  PJRT_Error *e = run(text, &s, 1, outs, ob, NULL);
  CHECK_MSG(!e, "%s: %s", what, e ? err_msg(e) : "");
  if (!e) CHECK_MSG(!memcmp(out, want, sizeof want), "%s: wrong sums", what);
  err_free(e);
}

#define AXIS(n) "#stablehlo.axis_ref<name = \"" n "\">"

static void test_mesh_axes_groups(void) {
  static const char m24[] = "sdy.mesh @m = <[\"a\"=2, \"b\"=4]>";
  /* grouped by "b": one group per position along "a" (devices 0-3 and 4-7) */
  static const int by_a[8] = {0, 0, 0, 0, 1, 1, 1, 1}, by_b[8] = {0, 1, 2, 3, 0, 1, 2, 3};
  static const int one[8] = {0};
  check_mesh_axes_reduce(m24, "#stablehlo.replica_group_mesh_axes<mesh = @m, axes = [" AXIS("b") "]>",
                         by_a, "mesh axes [b]");
  check_mesh_axes_reduce(m24, "#stablehlo.replica_group_mesh_axes<mesh = @m, axes = [" AXIS("a") "]>",
                         by_b, "mesh axes [a]");
  check_mesh_axes_reduce(m24, "#stablehlo.replica_group_mesh_axes<mesh = @m, axes = [" AXIS("b") ", "
                         AXIS("a") "]>", one, "mesh axes [b, a]");
  /* no axes: every device alone */
  static const int alone[8] = {0, 1, 2, 3, 4, 5, 6, 7};
  check_mesh_axes_reduce(m24, "#stablehlo.replica_group_mesh_axes<mesh = @m, axes = []>", alone,
                         "mesh axes []");
  /* device ids: position p holds device 7 - p */
  static const int rev_by_a[8] = {1, 1, 1, 1, 0, 0, 0, 0};
  check_mesh_axes_reduce("sdy.mesh @m = <[\"a\"=2, \"b\"=4], device_ids=[7, 6, 5, 4, 3, 2, 1, 0]>",
                         "#stablehlo.replica_group_mesh_axes<mesh = @m, axes = [" AXIS("b") "]>",
                         rev_by_a, "mesh with device ids");
  /* a 3-d mesh grouped by its outer axes: one group per position along "b" */
  static const int by_mid[8] = {0, 0, 1, 1, 0, 0, 1, 1};
  check_mesh_axes_reduce("sdy.mesh @m = <[\"a\"=2, \"b\"=2, \"c\"=2]>",
                         "#stablehlo.replica_group_mesh_axes<mesh = @m, axes = [" AXIS("a") ", "
                         AXIS("c") "]>", by_mid, "3-d mesh axes [a, c]");
  /* an inline StableHLO mesh, with device ids */
  check_mesh_axes_reduce("", "#stablehlo.replica_group_mesh_axes<mesh = #stablehlo.mesh<axes = "
                         "[#stablehlo.mesh_axis<name = \"x\", size = 2>, #stablehlo.mesh_axis<name "
                         "= \"y\", size = 4>], device_ids = dense<[7, 6, 5, 4, 3, 2, 1, 0]> : "
                         "tensor<8xi64>>, axes = [" AXIS("y") "]>",
                         rev_by_a, "inline mesh");
  /* the order of the axes is the order within a group: all_gather over [b, a] of a 2 x 4 mesh
   * gathers positions (a, b) = (0, 0), (1, 0), (0, 1), (1, 1), ... : devices 0, 4, 1, 5, ... */
  {
    const char *text =
        "module {\n  sdy.mesh @m = <[\"a\"=2, \"b\"=4]>\n"
        "  func.func @main(%x: tensor<1xi32>) -> tensor<8xi32> {\n"
        "    %r = \"stablehlo.all_gather\"(%x) {all_gather_dim = 0 : i64, replica_groups = "
        "#stablehlo.replica_group_mesh_axes<mesh = @m, axes = [" AXIS("b") ", " AXIS("a") "]>, "
        "channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, "
        "use_global_device_ids} : (tensor<1xi32>) -> tensor<8xi32>\n"
        "    return %r : tensor<8xi32>\n  }\n}\n";
    int32_t x[8], out[8 * 8];
    for (int d = 0; d < 8; d++) x[d] = 10 * d;
    spec s = {1, 8, PJRT_Buffer_Type_S32, 1, {1}, x, 4};
    void *outs[1] = {out};
    size_t ob[1] = {32};
    PJRT_Error *e = run(text, &s, 1, outs, ob, NULL);
    CHECK_MSG(!e, "all_gather over mesh axes [b, a]: %s", e ? err_msg(e) : "");
    static const int order[8] = {0, 4, 1, 5, 2, 6, 3, 7};
    for (int d = 0; !e && d < 8; d++)
      for (int k = 0; k < 8; k++)
        CHECK_MSG(out[d * 8 + k] == 10 * order[k], "device %d slot %d: %d", d, k, out[d * 8 + k]);
    err_free(e);
  }
  /* what is refused, at compile time */
  char body[512], text[4096];
  xprintf(body, sizeof body, kSumBody, "i32", "i32", "i32", "i32");
  static const struct {
    const char *groups, *msg;
    PJRT_Error_Code code;
  } bad[] = {
      {"#stablehlo.replica_group_mesh_axes<mesh = @m, axes = [#stablehlo.axis_ref<name = \"b\", "
       "sub_axis_info = #stablehlo.sub_axis_info(1)2>]>",
       "groups by a sub-axis", PJRT_Error_Code_UNIMPLEMENTED},
      {"#stablehlo.replica_group_mesh_axes<mesh = @m, axes = [" AXIS("z") "]>",
       "groups by the axis \"z\", which its mesh does not have", PJRT_Error_Code_UNIMPLEMENTED},
      {"#stablehlo.replica_group_mesh_axes<mesh = @m, axes = [" AXIS("a") ", " AXIS("a") "]>",
       "names the axis \"a\" twice", PJRT_Error_Code_UNIMPLEMENTED},
  };
  pb o;
  opts_for(&o, 1, 8);
  for (size_t i = 0; i < COUNT(bad); i++) {
    xprintf(text, sizeof text,
            "module {\n  %s\n  func.func @main(%%x: tensor<4xi32>) -> tensor<4xi32> {\n"
            "    %%r = \"stablehlo.all_reduce\"(%%x) %s {replica_groups = %s, channel_handle = "
            "#stablehlo.channel_handle<handle = 1, type = 1>, use_global_device_ids} : "
            "(tensor<4xi32>) -> tensor<4xi32>\n    return %%r : tensor<4xi32>\n  }\n}\n",
            m24, body, bad[i].groups);
    PJRT_LoadedExecutable *le = NULL;
    check_err_at(compile_err(client, text, o.b, o.n, &le), bad[i].code, bad[i].msg,
                 bad[i].groups, __FILE__, __LINE__);
  }
}

/* ---- many executions in flight ---- */

static void test_many_in_flight(void) {
  char body[512], text[2048];
  xprintf(body, sizeof body, kSumBody, "i32", "i32", "i32", "i32");
  xprintf(text, sizeof text,
          "func.func @main(%%x: tensor<6xi32>) -> tensor<6xi32> {\n"
          "  %%r = \"stablehlo.all_reduce\"(%%x) %s {replica_groups = dense<[[0, 1, 2, 3]]> : "
          "tensor<1x4xi64>, channel_handle = #stablehlo.channel_handle<handle = 1, type = 0>, "
          "use_global_device_ids} : (tensor<6xi32>) -> tensor<6xi32>\n"
          "  %%g = \"stablehlo.all_gather\"(%%r) {all_gather_dim = 0 : i64, replica_groups = "
          "dense<[[0, 1, 2, 3]]> : tensor<1x4xi64>, channel_handle = #stablehlo.channel_handle<handle "
          "= 2, type = 0>, use_global_device_ids} : (tensor<6xi32>) -> tensor<24xi32>\n"
          "  %%s = \"stablehlo.reduce_scatter\"(%%g) %s {scatter_dimension = 0 : i64, replica_groups "
          "= dense<[[0, 1, 2, 3]]> : tensor<1x4xi64>, channel_handle = "
          "#stablehlo.channel_handle<handle = 3, type = 0>, use_global_device_ids} : "
          "(tensor<24xi32>) -> tensor<6xi32>\n"
          "  return %%s : tensor<6xi32>\n}\n",
          body, body);
  pb o;
  opts_for(&o, 1, 4);
  PJRT_LoadedExecutable *le = compile_ok(client, text, o.b, o.n);
  if (!le) return;
  enum { RUNS = 24 };
  PJRT_Buffer *args[RUNS][4], *res[RUNS][4];
  PJRT_Event *ev[RUNS][4];
  int32_t x[RUNS][4][6];
  int64_t dims[1] = {6};
  exec_opts eo = {NULL, 0, NULL, 1};
  int started[RUNS] = {0};
  for (int k = 0; k < RUNS; k++) {
    for (int d = 0; d < 4; d++) {
      for (int i = 0; i < 6; i++) x[k][d][i] = k * 100 + d * 10 + i;
      args[k][d] = buffer_from_host(client, device_at(client, (size_t)d), PJRT_Buffer_Type_S32, dims,
                                    1, x[k][d]);
    }
    started[k] = OK(execute_raw(le, &args[k][0], 4, 1, &res[k][0], 1, &ev[k][0], &eo));
  }
  int bad = 0;
  for (int k = 0; k < RUNS; k++) {
    for (int d = 0; d < 4 && started[k]; d++) {
      OK(event_wait_free(ev[k][d]));
      int32_t out[6];
      if (OK(buffer_to_host(res[k][d], out, sizeof out, NULL)))
        for (int i = 0; i < 6; i++) {
          int32_t s = 0;
          for (int e2 = 0; e2 < 4; e2++) s += x[k][e2][i];
          /* gathered [S, S, S, S]; summed over 4 devices and scattered: block d is 4 S */
          bad += out[i] != 4 * s;
        }
      buffer_free(res[k][d]);
    }
    for (int d = 0; d < 4; d++) buffer_free(args[k][d]);
  }
  CHECK_EQ_INT(bad, 0);
  loaded_free(le);
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s <plugin.so>\n", argv[0]);
    return 2;
  }
  void *h = plugin_open(argv[1]);
  if (!h) return 1;
  client = client_create_n(8);
  if (client) {
    test_all_reduce_modes();
    test_cross_replica_sum();
    test_all_reduce_dtypes();
    test_all_reduce_variadic_large();
    test_all_gather();
    test_reduce_scatter();
    test_all_to_all();
    test_permute_broadcast();
    test_send_recv_ids();
    test_device_counts();
    test_loop_and_donation();
    test_failures();
    test_partitioning();
    test_unreduced_made_inside();
    test_partitioner();
    test_mesh_axes_groups();
    test_many_in_flight();
    client_free(client);
  }
  CHECK(dlclose(h) == 0);
  return check_report("collectives");
}
