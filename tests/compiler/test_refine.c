/* Tests for shape refinement (src/compiler/refine.c):
 *   1. the corpus' shape-polymorphic programs (testdata/dynamic, parse-only upstream) compile
 *      once given static argument shapes: every '?' of @main's signature becomes N, and the
 *      leading scalar integer arguments (JAX's dimension variables of that export format) are
 *      known to hold N; each compiled program then runs once on zero-filled arguments;
 *   2. hand-written programs: refinement through while/if bodies, the dynamic ops becoming their
 *      static forms with values checked, JAX's shape-assertion custom call (dropped when it holds
 *      at compile time, a run-time error naming the message when not), and the errors for what
 *      stays dynamic.
 *   3. JAX's shape-polymorphic export (a fixture of tests/bytecode) refined and run against JAX.
 * Usage: test_refine [DYNAMIC_CORPUS_DIR [JAX_FIXTURES_DIR]] */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/check.h"
#include "../cpu/prog_util.h"

/* prog_util.h helpers this test does not use */
static void unused_helpers(void) { (void)tu_expect_bytes; }
#include "compiler/compiler.h"

static int N = 3;

static char *read_text(const char *path, size_t *len) {
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
  if (b) b[n] = 0;
  fclose(f);
  *len = (size_t)n;
  return b;
}

/* Compiles one corpus program with '?' = N; returns NULL or the error (caller frees). */
static CJ_MUST_USE cj_status compile_dynamic(const char *path, int *ran, bool *refined) {
  size_t len;
  char *text = read_text(path, &len);
  if (!text) return cj_invalid("cannot read %s", path);
  cj_module *m = NULL;
  cj_status st = cj_parse_mlir_text(text, len, path, &m);
  free(text);
  if (!st) st = cj_verify_module(m);
  cj_op *main = st ? NULL : cj_module_main(m);
  if (!st && !main) st = cj_invalid("no entry function");
  cj_block *body = main ? cj_func_body(main) : NULL;
  const cj_type **types = NULL;
  const cj_attr **vals = NULL;
  if (!st && body) {
    types = calloc(body->nargs + 1, sizeof *types);
    vals = calloc(body->nargs + 1, sizeof *vals);
    bool leading = true;
    for (uint32_t i = 0; i < body->nargs; i++) {
      const cj_type *t = body->args[i].type;
      if (t->kind != CJ_TYPE_TENSOR) {
        leading = false;
        continue;
      }
      int64_t d[16];
      for (int32_t k = 0; k < t->rank && k < 16; k++) d[k] = t->dims[k] < 0 ? N : t->dims[k];
      types[i] = cj_type_tensor(m, t->elem, t->rank, d, NULL, NULL);
      bool dimvar = leading && t->rank == 0 && cj_dtype_is_int(t->dtype);
      if (dimvar) {
        unsigned char buf[8] = {0};
        cj_elem_set_i64(t->dtype, buf, 0, N);
        vals[i] = cj_attr_dense(m, types[i], buf, (size_t)cj_dtype_bytes(t->dtype), false);
      } else {
        leading = false;
      }
    }
    cj_refine_args ra = {(int32_t)body->nargs, types, vals};
    st = cj_pass_identities(m, main);
    if (!st) st = cj_pass_inline(m, main);
    if (!st) st = cj_pass_refine(m, main, &ra);
    *refined = !st;
  }
  free(types);
  free(vals);
  if (st) {
    cj_module_free(m);
    return st;
  }
  cj_compiled *p = NULL;
  st = tu_compile_module(m, &p);
  if (st) return st;
  /* run once on zeros */
  const cj_program_info *in = &p->info;
  void *args[64] = {0}, *res[64] = {0};
  if (in->num_args <= 64 && in->num_results <= 64) {
    for (int32_t i = 0; i < in->num_args; i++) args[i] = calloc(1, in->args[i].nbytes + 64);
    st = tu_run(p, args, res, tu_pool());
    for (int32_t i = 0; i < in->num_args; i++) free(args[i]);
    for (int32_t i = 0; i < in->num_results; i++) free(res[i]);
    if (!st) (*ran)++;
  }
  cj_compiled_free(p);
  return st;
}

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static void corpus(const char *dir) {
  DIR *d = opendir(dir);
  if (!d) {
    printf("refine: no corpus at %s, skipping the corpus part\n", dir);
    return;
  }
  char **names = NULL;
  size_t n = 0, cap = 0;
  struct dirent *e;
  while ((e = readdir(d))) {
    size_t l = strlen(e->d_name);
    if (l < 6 || strcmp(e->d_name + l - 5, ".mlir") != 0) continue;
    if (n == cap) {
      cap = cap ? cap * 2 : 256;
      names = realloc(names, cap * sizeof *names);
    }
    names[n++] = strdup(e->d_name);
  }
  closedir(d);
  qsort(names, n, sizeof *names, cmp_str);
  int ok = 0, ran = 0, bad = 0, nokernel = 0;
  for (size_t i = 0; i < n; i++) {
    char path[2048];
    snprintf(path, sizeof path, "%s/%s", dir, names[i]);
    bool refined = false;
    cj_status st = compile_dynamic(path, &ran, &refined);
    if (st) {
      printf("refine: %s: %s\n", names[i], cj_status_message(st));
      /* refined, but an op without a CPU kernel yet (another family's work): not ours */
      if (refined && strstr(cj_status_message(st), "has no kernel for this op yet")) {
        nokernel++;
      } else if (strstr(names[i], "conv_general_dilated_1d_stride_2_even_dynamic")) {
        /* an invalid program: window_strides = [2, 2] for a 1-D convolution */
        CHECK_CONTAINS(cj_status_message(st), "window_strides has 2 entries for 1 spatial dimensions");
        nokernel++;
      } else {
        bad++;
      }
      cj_status_free(st);
    } else {
      ok++;
    }
    free(names[i]);
  }
  free(names);
  printf("refine: %d of %d dynamic corpus programs compiled with ? = %d (%d ran), %d failed, %d "
         "expected failures (an invalid program, ops without a CPU kernel yet)\n",
         ok, ok + bad + nokernel, N, ran, bad, nokernel);
  CHECK_MSG(ok + bad + nokernel > 200, "expected the 271 programs of testdata/dynamic, found %d",
            ok + bad + nokernel);
  CHECK_MSG(bad == 0, "%d programs failed to refine or compile", bad);
  CHECK_MSG(ran == ok, "%d compiled programs failed to run", ok - ran);
}

/* ---- hand-written programs ---- */

static const char *kWhileIf =
    "func.func @main() -> tensor<4xi32> {\n"
    "  %c = stablehlo.constant dense<[1, 2, 3, 4]> : tensor<4xi32>\n"
    "  %s = stablehlo.constant dense<[4]> : tensor<1xi64>\n"
    "  %x = stablehlo.dynamic_reshape %c, %s : (tensor<4xi32>, tensor<1xi64>) -> tensor<?xi32>\n"
    "  %z = stablehlo.constant dense<0> : tensor<i32>\n"
    "  %r:2 = stablehlo.while(%i = %z, %a = %x) : tensor<i32>, tensor<?xi32>\n"
    "    cond {\n"
    "      %k = stablehlo.constant dense<3> : tensor<i32>\n"
    "      %p = stablehlo.compare LT, %i, %k : (tensor<i32>, tensor<i32>) -> tensor<i1>\n"
    "      stablehlo.return %p : tensor<i1>\n"
    "    } do {\n"
    "      %one = stablehlo.constant dense<1> : tensor<i32>\n"
    "      %j = stablehlo.add %i, %one : tensor<i32>\n"
    "      %b = stablehlo.add %a, %a : tensor<?xi32>\n"
    "      stablehlo.return %j, %b : tensor<i32>, tensor<?xi32>\n"
    "    }\n"
    "  %t = stablehlo.constant dense<true> : tensor<i1>\n"
    "  %y = \"stablehlo.if\"(%t) ({\n"
    "      stablehlo.return %r#1 : tensor<?xi32>\n"
    "    }, {\n"
    "      stablehlo.return %r#1 : tensor<?xi32>\n"
    "    }) : (tensor<i1>) -> tensor<?xi32>\n"
    "  %out = stablehlo.reshape %y : (tensor<?xi32>) -> tensor<4xi32>\n"
    "  return %out : tensor<4xi32>\n"
    "}\n";

/* get_dimension_size feeding shape arithmetic, dynamic_iota, dynamic_pad, real_dynamic_slice,
 * dynamic_broadcast_in_dim, a satisfied shape assertion */
static const char *kShapes =
    "func.func @main(%arg0: tensor<3x4xf32>) -> (tensor<?xi32>, tensor<?x?xf32>, tensor<?xf32>) {\n"
    "  %d0 = stablehlo.get_dimension_size %arg0, dim = 0 : (tensor<3x4xf32>) -> tensor<i32>\n"
    "  %d1 = stablehlo.get_dimension_size %arg0, dim = 1 : (tensor<3x4xf32>) -> tensor<i32>\n"
    "  %one = stablehlo.constant dense<1> : tensor<i32>\n"
    "  %ok = stablehlo.compare GE, %d0, %one, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>\n"
    "  stablehlo.custom_call @shape_assertion(%ok, %d0) {error_message = \"b = {0} must be >= 1\", has_side_effect = true} : (tensor<i1>, tensor<i32>) -> ()\n"
    "  %n = stablehlo.multiply %d0, %d1 : tensor<i32>\n"
    "  %n1 = stablehlo.reshape %n : (tensor<i32>) -> tensor<1xi32>\n"
    "  %io = stablehlo.dynamic_iota %n1, dim = 0 : (tensor<1xi32>) -> tensor<?xi32>\n"
    "  %lo = stablehlo.constant dense<[1, 0]> : tensor<2xi64>\n"
    "  %hi = stablehlo.constant dense<[0, 2]> : tensor<2xi64>\n"
    "  %in = stablehlo.constant dense<[0, 1]> : tensor<2xi64>\n"
    "  %pv = stablehlo.constant dense<-1.0> : tensor<f32>\n"
    "  %p = stablehlo.dynamic_pad %arg0, %pv, %lo, %hi, %in : (tensor<3x4xf32>, tensor<f32>, tensor<2xi64>, tensor<2xi64>, tensor<2xi64>) -> tensor<?x?xf32>\n"
    "  %st = stablehlo.constant dense<[1, 1]> : tensor<2xi64>\n"
    "  %li = stablehlo.constant dense<[2, 4]> : tensor<2xi64>\n"
    "  %sd = stablehlo.constant dense<[1, 2]> : tensor<2xi64>\n"
    "  %sl = stablehlo.real_dynamic_slice %arg0, %st, %li, %sd : (tensor<3x4xf32>, tensor<2xi64>, tensor<2xi64>, tensor<2xi64>) -> tensor<?x?xf32>\n"
    "  %flat = stablehlo.reshape %sl : (tensor<?x?xf32>) -> tensor<2xf32>\n"
    "  %d0r = stablehlo.reshape %d0 : (tensor<i32>) -> tensor<1xi32>\n"
    "  %s2 = stablehlo.concatenate %d0r, %d0r, dim = 0 : (tensor<1xi32>, tensor<1xi32>) -> tensor<2xi32>\n"
    "  %two = stablehlo.constant dense<[2, 2]> : tensor<2xi32>\n"
    "  %s3 = stablehlo.subtract %s2, %two : tensor<2xi32>\n"
    "  %s4 = stablehlo.slice %s3 [0:1] : (tensor<2xi32>) -> tensor<1xi32>\n"
    "  %s5 = stablehlo.add %s4, %one_b : tensor<1xi32>\n"
    "  %bc = stablehlo.dynamic_broadcast_in_dim %flat, %s5, dims = [0] : (tensor<2xf32>, tensor<1xi32>) -> tensor<?xf32>\n"
    "  return %io, %p, %bc : tensor<?xi32>, tensor<?x?xf32>, tensor<?xf32>\n"
    "}\n";

static void hand_written(void) {
  /* while/if */
  {
    cj_status err = NULL;
    cj_compiled *p = tu_compile(kWhileIf, &err);
    CHECK_MSG(p, "while/if: %s", cj_status_message(err));
    cj_status_free(err);
    if (p) {
      void *res[1] = {0};
      cj_status st = tu_run(p, NULL, res, tu_pool());
      CHECK_MSG(!st, "while/if run: %s", cj_status_message(st));
      cj_status_free(st);
      const int32_t want[4] = {8, 16, 24, 32};
      CHECK(res[0] && memcmp(res[0], want, sizeof want) == 0);
      free(res[0]);
      tu_free(p);
    }
  }
  /* shape ops (with %one_b defined: the text above needs it) */
  {
    size_t n = strlen(kShapes) + 200;
    char *text = malloc(n);
    const char *cut = strstr(kShapes, "  %s5");
    snprintf(text, n, "%.*s  %%one_b = stablehlo.constant dense<1> : tensor<1xi32>\n%s",
             (int)(cut - kShapes), kShapes, cut);
    cj_status err = NULL;
    cj_compiled *p = tu_compile(text, &err);
    free(text);
    CHECK_MSG(p, "shapes: %s", cj_status_message(err));
    cj_status_free(err);
    if (p) {
      const cj_program_info *in = tu_info(p);
      CHECK_EQ_INT(in->num_results, 3);
      CHECK_EQ_INT(in->results[0].rank, 1);
      CHECK_EQ_INT(in->results[0].dims[0], 12);
      CHECK_EQ_INT(in->results[1].dims[0], 4);  /* 1 + 3 + 0 */
      CHECK_EQ_INT(in->results[1].dims[1], 9);  /* 0 + 4 + 3 + 2 */
      CHECK_EQ_INT(in->results[2].dims[0], 2);  /* 3 - 2 + 1 */
      float x[12];
      for (int i = 0; i < 12; i++) x[i] = (float)i;
      void *args[1] = {x}, *res[3] = {0};
      cj_status st = tu_run(p, args, res, tu_pool());
      CHECK_MSG(!st, "shapes run: %s", cj_status_message(st));
      cj_status_free(st);
      if (res[0]) {
        const int32_t *io = res[0];
        for (int i = 0; i < 12; i++) CHECK_EQ_INT(io[i], i);
      }
      if (res[1]) {
        const float *pd = res[1];
        /* row 0 is padding; row 1 = x row 0 interleaved with -1, then 2 high */
        for (int j = 0; j < 9; j++) CHECK(pd[j] == -1.0f);
        const float row1[9] = {0, -1, 1, -1, 2, -1, 3, -1, -1};
        for (int j = 0; j < 9; j++) CHECK(pd[9 + j] == row1[j]);
      }
      if (res[2]) {
        const float *bc = res[2];
        CHECK(bc[0] == 5.0f && bc[1] == 7.0f); /* x[1][1], x[1][3] */
      }
      for (int i = 0; i < 3; i++) free(res[i]);
      tu_free(p);
    }
  }
  /* a shape assertion that fails at run time */
  {
    const char *t =
        "func.func @main(%arg0: tensor<i32>) -> tensor<i32> {\n"
        "  %one = stablehlo.constant dense<1> : tensor<i32>\n"
        "  %ok = stablehlo.compare GE, %arg0, %one, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>\n"
        "  stablehlo.custom_call @shape_assertion(%ok, %arg0) {error_message = \"Expected value >= 1 for dimension variable 'b', got {0}\", has_side_effect = true} : (tensor<i1>, tensor<i32>) -> ()\n"
        "  return %arg0 : tensor<i32>\n"
        "}\n";
    cj_status err = NULL;
    cj_compiled *p = tu_compile(t, &err);
    CHECK_MSG(p, "assertion: %s", cj_status_message(err));
    cj_status_free(err);
    if (p) {
      int32_t v = 5;
      void *args[1] = {&v}, *res[1] = {0};
      cj_status st = tu_run(p, args, res, tu_pool());
      CHECK_MSG(!st, "assertion holds: %s", cj_status_message(st));
      cj_status_free(st);
      v = 0;
      st = tu_run(p, args, res, tu_pool());
      CHECK(st != NULL);
      if (st) {
        CHECK_CONTAINS(cj_status_message(st), "for dimension variable 'b', got 0");
        CHECK_CONTAINS(cj_status_message(st), "shape_assertion");
      }
      cj_status_free(st);
      free(res[0]);
      tu_free(p);
    }
  }
  /* what stays dynamic is a compile error naming the op */
  {
    const char *t =
        "func.func @main(%arg0: tensor<2xi64>) -> tensor<?x?xf32> {\n"
        "  %c = stablehlo.constant dense<1.0> : tensor<f32>\n"
        "  %b = stablehlo.dynamic_broadcast_in_dim %c, %arg0, dims = [] : (tensor<f32>, tensor<2xi64>) -> tensor<?x?xf32>\n"
        "  return %b : tensor<?x?xf32>\n"
        "}\n";
    cj_status err = NULL;
    cj_compiled *p = tu_compile(t, &err);
    CHECK(!p && err);
    if (err) {
      CHECK_CONTAINS(cj_status_message(err), "stablehlo.dynamic_broadcast_in_dim");
      CHECK_CONTAINS(cj_status_message(err), "run time");
    }
    cj_status_free(err);
    if (p) tu_free(p);
  }
  {
    const char *t =
        "func.func @main(%arg0: tensor<?x4xf32>) -> tensor<?x4xf32> {\n"
        "  %0 = stablehlo.add %arg0, %arg0 : tensor<?x4xf32>\n"
        "  return %0 : tensor<?x4xf32>\n"
        "}\n";
    cj_status err = NULL;
    cj_compiled *p = tu_compile(t, &err);
    CHECK(!p && err);
    if (err) CHECK_CONTAINS(cj_status_message(err), "argument 0 of the entry function has the dynamic type tensor<?x4xf32>");
    cj_status_free(err);
    if (p) tu_free(p);
  }
  /* a loop whose carried shape changes */
  {
    const char *t =
        "func.func @main(%arg0: tensor<2xf32>) -> tensor<?xf32> {\n"
        "  %x = stablehlo.convert %arg0 : (tensor<2xf32>) -> tensor<?xf32>\n"
        "  %r = stablehlo.while(%a = %x) : tensor<?xf32>\n"
        "    cond {\n"
        "      %p = stablehlo.constant dense<false> : tensor<i1>\n"
        "      stablehlo.return %p : tensor<i1>\n"
        "    } do {\n"
        "      %b = stablehlo.concatenate %a, %a, dim = 0 : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>\n"
        "      stablehlo.return %b : tensor<?xf32>\n"
        "    }\n"
        "  return %r : tensor<?xf32>\n"
        "}\n";
    cj_status err = NULL;
    cj_compiled *p = tu_compile(t, &err);
    CHECK(!p && err);
    if (err) CHECK_CONTAINS(cj_status_message(err), "loop-carried value 0 enters as tensor<2xf32> and leaves the body as tensor<4xf32>");
    cj_status_free(err);
    if (p) tu_free(p);
  }
}

/* ---- JAX's shape-polymorphic export (tests/bytecode/fixtures/shape_poly.*): the program as
 * jax.export wrote it, with @main(tensor<?x4xf32>, tensor<4xf32>) and a shape assertion,
 * refined to the shapes of the saved inputs and run; results against JAX's saved outputs ---- */

/* a float32 .npy file (v1/v2 header): data malloc'ed, shape into dims */
static float *read_npy_f32(const char *path, int32_t *rank, int64_t *dims) {
  size_t len;
  char *b = read_text(path, &len);
  if (!b || len < 12 || memcmp(b, "\x93NUMPY", 6) != 0) {
    free(b);
    return NULL;
  }
  size_t hl = b[6] == 1 ? (size_t)(unsigned char)b[8] | ((size_t)(unsigned char)b[9] << 8)
                        : (size_t)(unsigned char)b[8] | ((size_t)(unsigned char)b[9] << 8) |
                              ((size_t)(unsigned char)b[10] << 16);
  size_t off = (b[6] == 1 ? 10 : 12) + hl;
  if (off > len) {
    free(b);
    return NULL;
  }
  char save = b[off];
  b[off] = 0; /* the header is text after the 8-10 byte preamble (which holds NULs) */
  const char *hdr = b + (b[6] == 1 ? 10 : 12);
  const char *sh = strstr(hdr, "'shape': (");
  bool f4 = strstr(hdr, "'<f4'") != NULL;
  if (!f4 || !sh) {
    free(b);
    return NULL;
  }
  sh += 10;
  *rank = 0;
  int64_t n = 1;
  while (*sh && *sh != ')') {
    char *end;
    long long v = strtoll(sh, &end, 10);
    if (end == sh) break;
    dims[(*rank)++] = v;
    n *= v;
    sh = end;
    while (*sh == ',' || *sh == ' ') sh++;
  }
  b[off] = save;
  float *f = malloc(sizeof(float) * (size_t)(n ? n : 1));
  if (f && len - off >= sizeof(float) * (size_t)n) {
    memcpy(f, b + off, sizeof(float) * (size_t)n);
  } else {
    free(f);
    f = NULL;
  }
  free(b);
  return f;
}

static void jax_shape_poly(const char *fx) {
  char path[2048];
  snprintf(path, sizeof path, "%s/shape_poly.export.mlir", fx);
  size_t len;
  char *text = read_text(path, &len);
  if (!text) {
    printf("refine: no fixture %s, skipping\n", path);
    return;
  }
  float *in[2], *out[2];
  int32_t irank[2], orank[2];
  int64_t idims[2][8], odims[2][8];
  for (int i = 0; i < 2; i++) {
    snprintf(path, sizeof path, "%s/shape_poly.in%d.npy", fx, i);
    in[i] = read_npy_f32(path, &irank[i], idims[i]);
    snprintf(path, sizeof path, "%s/shape_poly.out%d.npy", fx, i);
    out[i] = read_npy_f32(path, &orank[i], odims[i]);
    CHECK(in[i] && out[i]);
  }
  cj_module *m = NULL;
  cj_status st = cj_parse_mlir_text(text, len, "shape_poly.export.mlir", &m);
  free(text);
  if (!st) st = cj_verify_module(m);
  /* as exported: the entry function has dynamic argument types, a clear compile error */
  if (!st) {
    cj_compiled *p = NULL;
    cj_compile_options o = {1, 1, NULL, false, false};
    cj_module *m2 = NULL;
    snprintf(path, sizeof path, "%s/shape_poly.export.mlir", fx);
    char *t2 = read_text(path, &len);
    cj_status s2 = cj_parse_mlir_text(t2, len, "shape_poly.export.mlir", &m2);
    free(t2);
    if (!s2) s2 = cj_compile_module(cj_backend_cpu(), m2, &o, &p);
    CHECK(s2 && !p);
    if (s2) CHECK_CONTAINS(cj_status_message(s2), "has the dynamic type tensor<?x4xf32>");
    cj_status_free(s2);
    if (p) tu_free(p);
  }
  cj_op *main = st ? NULL : cj_module_main(m);
  if (main && in[0] && in[1]) {
    const cj_type *types[2];
    for (int i = 0; i < 2; i++) types[i] = cj_type_tensor_of(m, CJ_F32, irank[i], idims[i]);
    cj_refine_args ra = {2, types, NULL};
    st = cj_pass_identities(m, main);
    if (!st) st = cj_pass_inline(m, main);
    if (!st) st = cj_pass_refine(m, main, &ra);
  }
  CHECK_MSG(!st, "shape_poly: %s", cj_status_message(st));
  cj_status_free(st);
  if (main && !st && in[0] && in[1] && out[0] && out[1]) {
    cj_compiled *p = NULL;
    cj_compile_options o = {1, 1, NULL, false, false};
    st = cj_compile_module(cj_backend_cpu(), m, &o, &p);
    m = NULL;
    CHECK_MSG(!st, "shape_poly compile: %s", cj_status_message(st));
    cj_status_free(st);
    if (p) {
      const cj_program_info *pi = tu_info(p);
      CHECK_EQ_INT(pi->num_results, 2);
      CHECK_EQ_INT(pi->results[0].dims[0], odims[0][0]);
      CHECK_EQ_INT(pi->results[1].dims[0], odims[1][0]);
      void *args[2] = {in[0], in[1]}, *res[2] = {0};
      st = tu_run(p, args, res, tu_pool());
      CHECK_MSG(!st, "shape_poly run: %s", cj_status_message(st));
      cj_status_free(st);
      for (int r = 0; r < 2 && res[0] && res[1]; r++) {
        int64_t n = 1;
        for (int32_t k = 0; k < orank[r]; k++) n *= odims[r][k];
        const float *got = res[r];
        for (int64_t i = 0; i < n; i++) {
          float e = out[r][i], g = got[i], tol = 1e-5f * (1.0f + (e < 0 ? -e : e));
          CHECK_MSG(g - e <= tol && e - g <= tol, "shape_poly result %d[%lld] = %g, JAX gives %g", r,
                    (long long)i, (double)g, (double)e);
        }
      }
      free(res[0]);
      free(res[1]);
      tu_free(p);
    }
  }
  cj_module_free(m);
  for (int i = 0; i < 2; i++) {
    free(in[i]);
    free(out[i]);
  }
}

int main(int argc, char **argv) {
  (void)unused_helpers;
  if (getenv("REFINE_N")) N = atoi(getenv("REFINE_N"));
  hand_written();
  if (argc > 1) corpus(argv[1]);
  if (argc > 2) jax_shape_poly(argv[2]);
  return check_report("refine");
}
