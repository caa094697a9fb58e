/* cjrt: a dynamic_slice whose only user is a dot is read in place by the dot (k_data.c,
 * k_dynview) instead of copied. Each case runs a fori-style loop (trip count an argument: 0, 1,
 * a few and all steps) that slides a window over a signal at offsets read from an array (some
 * negative or past the end: the start is clamped), multiplies it by a matrix and stores the
 * product with dynamic_update_slice; and the same program with an optimization_barrier between
 * the slice and the dot, which keeps the copy. The results must be the same bits. Windows of
 * rows (as the dot's lhs and rhs, GEMV and GEMM shapes), a scan-like [1, B, C] window of a
 * [T, B, C] array, and a window of columns (not contiguous: copied either way). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "prog_util.h"

typedef struct dv_case {
  const char *name;
  const char *sig, *wd, *win, *ws, *zs, *zt, *dotargs, *cd, *res, *zd;
  int64_t sig_elems, w_elems, res_elems, rows, maxstart;
} dv_case;

static const char tmpl[] =
    "func.func @main(%sig: tensor<{SIG}xf32>, %w: tensor<{WD}xf32>, %offs: tensor<{T}xi32>, %n: tensor<i32>)"
    " -> tensor<{T}x{RES}xf32> {\n"
    "  %zb = stablehlo.constant dense<0.0> : tensor<{T}x{RES}xf32>\n"
    "  %c0 = stablehlo.constant dense<0> : tensor<i32>\n"
    "  %r:6 = stablehlo.while(%s = %sig, %ww = %w, %oo = %offs, %nn = %n, %i = %c0, %bb = %zb) :"
    " tensor<{SIG}xf32>, tensor<{WD}xf32>, tensor<{T}xi32>, tensor<i32>, tensor<i32>, tensor<{T}x{RES}xf32>\n"
    "  cond {\n"
    "    %p = stablehlo.compare LT, %i, %nn, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>\n"
    "    stablehlo.return %p : tensor<i1>\n"
    "  } do {\n"
    "    %o1 = stablehlo.dynamic_slice %oo, %i, sizes = [1] : (tensor<{T}xi32>, tensor<i32>) -> tensor<1xi32>\n"
    "    %o = stablehlo.reshape %o1 : (tensor<1xi32>) -> tensor<i32>\n"
    "    %z0 = stablehlo.constant dense<0> : tensor<i32>\n"
    "    %x = stablehlo.dynamic_slice %s, %o{ZS}, sizes = [{WS}] : (tensor<{SIG}xf32>, tensor<i32>{ZT})"
    " -> tensor<{WIN}xf32>\n"
    "    {BARRIER}\n"
    "    %d = stablehlo.dot_general {DOTARGS}, contracting_dims = {CD} : ({DOTTYPES}) -> tensor<{RES}xf32>\n"
    "    %d1 = stablehlo.reshape %d : (tensor<{RES}xf32>) -> tensor<1x{RES}xf32>\n"
    "    %nb = stablehlo.dynamic_update_slice %bb, %d1, %i{ZD} : (tensor<{T}x{RES}xf32>, tensor<1x{RES}xf32>,"
    " tensor<i32>{ZDT}) -> tensor<{T}x{RES}xf32>\n"
    "    %c1 = stablehlo.constant dense<1> : tensor<i32>\n"
    "    %i1 = stablehlo.add %i, %c1 : tensor<i32>\n"
    "    stablehlo.return %s, %ww, %oo, %nn, %i1, %nb : tensor<{SIG}xf32>, tensor<{WD}xf32>, tensor<{T}xi32>,"
    " tensor<i32>, tensor<i32>, tensor<{T}x{RES}xf32>\n"
    "  }\n"
    "  return %r#5 : tensor<{T}x{RES}xf32>\n"
    "}\n";

enum { T = 9, TEXT_CAP = 16384 };

/* text with every {KEY} of keys[] replaced by vals[] */
static char *subst(const char *text, int n, const char *const *keys, const char *const *vals) {
  char *out = malloc(TEXT_CAP);
  if (!out) return NULL;
  size_t o = 0;
  for (const char *p = text; *p && o + 1 < TEXT_CAP;) {
    int k = -1;
    for (int j = 0; j < n && k < 0; j++)
      if (*p == '{' && !strncmp(p + 1, keys[j], strlen(keys[j])) && p[1 + strlen(keys[j])] == '}') k = j;
    if (k < 0) {
      out[o++] = *p++;
      continue;
    }
    size_t l = strlen(vals[k]);
    if (o + l + 1 >= TEXT_CAP) break;
    memcpy(out + o, vals[k], l);
    o += l;
    p += strlen(keys[k]) + 2;
  }
  out[o] = 0;
  return out;
}

static char *dv_prog(const dv_case *c, int barrier) {
  char bar[128], dotargs[64], dottypes[128], zdt[128];
  snprintf(bar, sizeof bar, barrier ? "%%xb = stablehlo.optimization_barrier %%x : tensor<%sxf32>" : "", c->win);
  const char *xv = barrier ? "%xb" : "%x";
  /* DOTARGS names the window X and the matrix W */
  int rhs = c->dotargs[0] == 'W';
  snprintf(dotargs, sizeof dotargs, "%s, %s", rhs ? "%ww" : xv, rhs ? xv : "%ww");
  snprintf(dottypes, sizeof dottypes, "tensor<%sxf32>, tensor<%sxf32>", rhs ? c->wd : c->win, rhs ? c->win : c->wd);
  zdt[0] = 0;
  for (const char *z = c->zd; *z; z++)
    if (*z == '%') strcat(zdt, ", tensor<i32>");
  char t[16];
  snprintf(t, sizeof t, "%d", T);
  const char *keys[] = {"SIG", "WD", "T", "RES", "ZS", "WS", "ZT", "WIN", "BARRIER", "DOTARGS", "CD",
                        "DOTTYPES", "ZD", "ZDT"};
  const char *vals[] = {c->sig, c->wd, t, c->res, c->zs, c->ws, c->zt, c->win, bar, dotargs, c->cd,
                        dottypes, c->zd, zdt};
  return subst(tmpl, 14, keys, vals);
}

static const dv_case cases[] = {
    /* the benchmark's kind: a [64,128] window of rows, matvec (GEMV) */
    {"rows_gemv", "300x128", "128x1", "64x128", "64, 128", ", %z0", ", tensor<i32>", "XW", "[1] x [0]",
     "64x1", ", %z0, %z0", 300 * 128, 128, T * 64, 300, 300 - 64},
    /* odd sizes, a GEMM */
    {"rows_gemm", "37x19", "19x3", "5x19", "5, 19", ", %z0", ", tensor<i32>", "XW", "[1] x [0]", "5x3",
     ", %z0, %z0", 37 * 19, 19 * 3, T * 15, 37, 37 - 5},
    /* the window as the dot's rhs */
    {"rows_rhs", "50x24", "24x7", "6x24", "6, 24", ", %z0", ", tensor<i32>", "WX", "[0] x [1]", "7x6",
     ", %z0, %z0", 50 * 24, 24 * 7, T * 42, 50, 50 - 6},
    /* one step of a scan's stacked inputs */
    {"scan_step", "12x4x33", "33x5", "1x4x33", "1, 4, 33", ", %z0, %z0", ", tensor<i32>, tensor<i32>", "XW",
     "[2] x [0]", "1x4x5", ", %z0, %z0, %z0", 12 * 4 * 33, 33 * 5, T * 20, 12, 11},
    /* columns 0..9 of rows: not contiguous, copied */
    {"cols", "40x16", "10x2", "8x10", "8, 10", ", %z0", ", tensor<i32>", "XW", "[1] x [0]", "8x2",
     ", %z0, %z0", 40 * 16, 10 * 2, T * 16, 40, 40 - 8},
};

static void run_case(const dv_case *c) {
  char *a = dv_prog(c, 0), *b = dv_prog(c, 1);
  cj_compiled *pa = a ? tu_compile_ok(c->name, a) : NULL;
  cj_compiled *pb = b ? tu_compile_ok(c->name, b) : NULL;
  float *sig = malloc(sizeof(float) * (size_t)c->sig_elems), *w = malloc(sizeof(float) * (size_t)c->w_elems);
  uint32_t seed = 7;
  for (int64_t i = 0; sig && i < c->sig_elems; i++) sig[i] = tu_frand(&seed);
  for (int64_t i = 0; w && i < c->w_elems; i++) w[i] = tu_frand(&seed);
  /* starts: in range, the largest, clamped from below and from above */
  int32_t offs[T];
  for (int t = 0; t < T; t++) offs[t] = (int32_t)((t * 7 + 3) % (c->rows));
  offs[1] = (int32_t)c->maxstart;
  offs[2] = -5;
  offs[3] = (int32_t)c->rows + 100;
  offs[4] = 0;
  const int32_t counts[] = {0, 1, 4, T};
  for (int k = 0; pa && pb && sig && w && k < 4; k++) {
    int32_t n = counts[k];
    void *args[4] = {sig, w, offs, &n};
    void *ra[1] = {0}, *rb[1] = {0};
    char what[96];
    snprintf(what, sizeof what, "%s, %d steps", c->name, n);
    if (tu_run_ok(what, pa, args, ra, tu_pool()) && tu_run_ok(what, pb, args, rb, tu_pool())) {
      size_t bytes = sizeof(float) * (size_t)c->res_elems;
      CHECK_MSG(!memcmp(ra[0], rb[0], bytes), "%s: the in-place window differs from the copied one", what);
      /* the steps run wrote something (the loop ran, the products are not all zero) */
      bool any = false;
      for (int64_t i = 0; i < c->res_elems; i++) any = any || ((float *)ra[0])[i] != 0;
      CHECK_MSG(any == (n > 0), "%s: results %s", what, any ? "written" : "all zero");
    }
    free(ra[0]);
    free(rb[0]);
  }
  free(sig);
  free(w);
  if (pa) tu_free(pa);
  if (pb) tu_free(pb);
  free(a);
  free(b);
}

int main(void) {
  (void)tu_expect_bytes;
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) run_case(&cases[i]);
  return check_report("dynview");
}
