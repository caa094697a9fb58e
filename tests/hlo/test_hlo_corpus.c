/* HLO programs through the plugin: each case of tests/hlo/data (MANIFEST, made by make_corpus.py
 * from JAX) is compiled as format "hlo" from its serialized xla.HloModuleProto (NAME.pb) and, when
 * the text reader takes it, from its HLO text (NAME.hlo), run on its .npy inputs, and compared with
 * the outputs XLA:CPU gave. Also: format "hlo_with_config", and the error an unsupported opcode
 * gives. MANIFEST.torch_xla and MANIFEST.tf list programs made the same way from torch_xla
 * (make_corpus_torch_xla.py) and TensorFlow (make_corpus_tf.py), with their frameworks' CPU
 * outputs. With --peer the protos alone run on another plugin (XLA's CPU plugin: PLUGIN
 * "env:CJRT_XLA_PLUGIN" takes it from that variable, and exits 77 when it names no file).
 *
 * Usage: test_hlo_corpus PLUGIN.so|env:VAR DATA_DIR [--peer] */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/files.h"

#include "cjrt/array.h"
#include "cjrt/cjrt.h"
#include "cjrt/npy.h"

static int failures;
#define FAIL(...)                                 \
  do {                                            \
    fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__); \
    fprintf(stderr, __VA_ARGS__);                 \
    fprintf(stderr, "\n");                        \
    failures++;                                   \
  } while (0)

static double half_to_double(uint16_t h) {
  int e = (h >> 10) & 31, m = h & 1023;
  double v = e == 0 ? ldexp(m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexp(m + 1024, e - 25);
  return (h & 0x8000) ? -v : v;
}

static double elem(const cjrt_array *a, int64_t i, int part) {
  const unsigned char *p = a->data;
  switch (a->dtype) {
    case CJRT_F32: { float f; memcpy(&f, p + 4 * i, 4); return f; }
    case CJRT_F64: { double d; memcpy(&d, p + 8 * i, 8); return d; }
    case CJRT_F16: { uint16_t h; memcpy(&h, p + 2 * i, 2); return half_to_double(h); }
    case CJRT_BF16: {
      uint16_t h;
      memcpy(&h, p + 2 * i, 2);
      uint32_t u = (uint32_t)h << 16;
      float f;
      memcpy(&f, &u, 4);
      return f;
    }
    case CJRT_C64: { float f; memcpy(&f, p + 8 * i + 4 * part, 4); return f; }
    default: return 0;
  }
}

static bool is_float(cjrt_dtype d) {
  return d == CJRT_F32 || d == CJRT_F64 || d == CJRT_F16 || d == CJRT_BF16 || d == CJRT_C64;
}

/* compares got with want; returns false (after saying why) if they differ */
static bool compare(const char *what, const cjrt_array *got, const cjrt_array *want, double rtol,
                    double atol) {
  if (got->dtype != want->dtype) {
    fprintf(stderr, "  %s: dtype %s, expected %s\n", what, cjrt_dtype_name(got->dtype),
            cjrt_dtype_name(want->dtype));
    return false;
  }
  if (got->rank != want->rank ||
      (got->rank && memcmp(got->dims, want->dims, sizeof(int64_t) * got->rank))) {
    fprintf(stderr, "  %s: shape differs\n", what);
    return false;
  }
  int64_t n = cjrt_array_num_elements(want);
  if (!is_float(want->dtype)) {
    if (got->nbytes != want->nbytes || memcmp(got->data, want->data, want->nbytes)) {
      fprintf(stderr, "  %s: integer/bool values differ\n", what);
      return false;
    }
    return true;
  }
  int parts = want->dtype == CJRT_C64 ? 2 : 1;
  for (int64_t i = 0; i < n; i++)
    for (int k = 0; k < parts; k++) {
      double g = elem(got, i, k), w = elem(want, i, k);
      if (isnan(w) && isnan(g)) continue;
      if (isinf(w) && g == w) continue;
      if (!(fabs(g - w) <= atol + rtol * fabs(w))) {
        fprintf(stderr, "  %s: element %lld is %.9g, expected %.9g\n", what, (long long)i, g, w);
        return false;
      }
    }
  return true;
}

/* Compiles `code` as `format` and runs it on the case's inputs; true if every output matches. */
static bool run_case(cjrt_client *c, const char *dir, const char *name, const char *code,
                     size_t len, const char *format, int nin, int nout, double rtol, double atol,
                     char *err, size_t errcap) {
  err[0] = 0;
  cjrt_compile_options o = {.format = format};
  cjrt_executable *e = NULL;
  cjrt_error *er = cjrt_compile(c, code, len, &o, &e);
  if (er) {
    snprintf(err, errcap, "compile: %s", cjrt_error_message(er));
    cjrt_error_free(er);
    return false;
  }
  bool ok = true;
  cjrt_buffer **args = calloc((size_t)nin + 1, sizeof *args);
  cjrt_buffer **outs = calloc((size_t)nout + 1, sizeof *outs);
  char path[4096];
  for (int i = 0; i < nin && ok; i++) {
    snprintf(path, sizeof path, "%s/%s.in%d.npy", dir, name, i);
    cjrt_array a = {0};
    er = cjrt_npy_read_file(path, CJRT_INVALID, &a);
    if (!er) er = cjrt_buffer_from_host(c, NULL, a.dtype, a.dims, a.rank, a.data, NULL, &args[i]);
    cjrt_array_free(&a);
    if (er) {
      snprintf(err, errcap, "input %d: %s", i, cjrt_error_message(er));
      cjrt_error_free(er);
      ok = false;
    }
  }
  if (ok && cjrt_executable_num_outputs(e) != (size_t)nout) {
    snprintf(err, errcap, "%zu outputs, expected %d", cjrt_executable_num_outputs(e), nout);
    ok = false;
  }
  if (ok) {
    er = cjrt_execute(e, args, (size_t)nin, outs, (size_t)nout);
    if (er) {
      snprintf(err, errcap, "execute: %s", cjrt_error_message(er));
      cjrt_error_free(er);
      ok = false;
    }
  }
  for (int j = 0; j < nout && ok; j++) {
    snprintf(path, sizeof path, "%s/%s.out%d.npy", dir, name, j);
    cjrt_array want = {0}, got = {0};
    er = cjrt_npy_read_file(path, CJRT_INVALID, &want);
    if (!er) {
      size_t rank = cjrt_buffer_rank(outs[j]);
      er = cjrt_array_alloc(cjrt_buffer_dtype(outs[j]), cjrt_buffer_dims(outs[j]), rank, &got);
    }
    if (!er) er = cjrt_buffer_to_host(outs[j], got.data, got.nbytes);
    if (er) {
      snprintf(err, errcap, "output %d: %s", j, cjrt_error_message(er));
      cjrt_error_free(er);
      ok = false;
    } else {
      char what[64];
      snprintf(what, sizeof what, "output %d", j);
      if (!compare(what, &got, &want, rtol, atol)) {
        snprintf(err, errcap, "output %d differs from the recorded output", j);
        ok = false;
      }
    }
    cjrt_array_free(&want);
    cjrt_array_free(&got);
  }
  for (int i = 0; i < nin; i++) cjrt_buffer_free(args[i]);
  for (int j = 0; j < nout; j++) cjrt_buffer_free(outs[j]);
  free(args);
  free(outs);
  cjrt_executable_free(e);
  return ok;
}

/* ---- a tiny protobuf writer for hand-made modules ---- */
typedef struct pb {
  unsigned char b[4096];
  size_t n;
} pb;
static void pb_varint(pb *p, uint64_t v) {
  do {
    unsigned char c = v & 0x7f;
    v >>= 7;
    p->b[p->n++] = c | (v ? 0x80 : 0);
  } while (v);
}
static void pb_tag(pb *p, int field, int wt) { pb_varint(p, (uint64_t)field << 3 | (unsigned)wt); }
static void pb_int(pb *p, int field, int64_t v) {
  pb_tag(p, field, 0);
  pb_varint(p, (uint64_t)v);
}
static void pb_bytes(pb *p, int field, const void *d, size_t n) {
  pb_tag(p, field, 2);
  pb_varint(p, n);
  memcpy(p->b + p->n, d, n);
  p->n += n;
}
static void pb_str(pb *p, int field, const char *s) { pb_bytes(p, field, s, strlen(s)); }
static void pb_msg(pb *p, int field, const pb *m) { pb_bytes(p, field, m->b, m->n); }

static void test_unsupported(cjrt_client *c) {
  /* ENTRY main { ROOT x = f32[] infeed-like opcode "infeed" } */
  pb shape = {0}, ins = {0}, comp = {0}, mod = {0};
  pb_int(&shape, 2, 11);
  pb_str(&ins, 1, "x.1");
  pb_str(&ins, 2, "infeed");
  pb_msg(&ins, 3, &shape);
  pb_int(&ins, 35, 1);
  pb_str(&comp, 1, "main.2");
  pb_msg(&comp, 2, &ins);
  pb_int(&comp, 5, 2);
  pb_int(&comp, 6, 1);
  pb_str(&mod, 1, "m");
  pb_str(&mod, 2, "main.2");
  pb_msg(&mod, 3, &comp);
  pb_int(&mod, 6, 2);
  cjrt_compile_options o = {.format = "hlo"};
  cjrt_executable *e = NULL;
  cjrt_error *er = cjrt_compile(c, mod.b, mod.n, &o, &e);
  const char *want = "hlo: instruction x.1 (opcode infeed) in computation main.2 is not supported";
  if (!er) FAIL("an infeed instruction compiled");
  else if (!strstr(cjrt_error_message(er), want))
    FAIL("unsupported opcode: got '%s', expected it to hold '%s'", cjrt_error_message(er), want);
  cjrt_error_free(er);
  cjrt_executable_free(e);
  /* the same in HLO text, which names the line too */
  const char *text = "HloModule m\n\nENTRY main.2 {\n  ROOT x.1 = f32[] infeed()\n}\n";
  er = cjrt_compile(c, text, strlen(text), &o, &e);
  if (!er) FAIL("an infeed instruction compiled from text");
  else if (!strstr(cjrt_error_message(er), want))
    FAIL("unsupported opcode (text): got '%s', expected it to hold '%s'", cjrt_error_message(er),
         want);
  cjrt_error_free(er);
  cjrt_executable_free(e);
  text = "HloModule m\nENTRY main {\n  ROOT x = f32[2] constant({1, 2, 3})\n}\n";
  er = cjrt_compile(c, text, strlen(text), &o, &e);
  if (!er) FAIL("a constant of 3 values for 2 elements compiled");
  else if (!strstr(cjrt_error_message(er), ":3:"))
    FAIL("bad constant (text): '%s' names no line 3", cjrt_error_message(er));
  cjrt_error_free(er);
  cjrt_executable_free(e);
  /* bytes that are no HloModuleProto fail cleanly */
  er = cjrt_compile(c, "\x0a\xff\xff", 3, &o, &e);
  if (!er) FAIL("truncated proto compiled");
  else if (!strstr(cjrt_error_message(er), "hlo proto"))
    FAIL("truncated proto: '%s'", cjrt_error_message(er));
  cjrt_error_free(er);
  cjrt_executable_free(e);
}

/* One manifest's cases; counts them into *ncases, *proto_ok and *text_ok. A peer gets the
 * protos alone (what frameworks send); the HLO text and hlo_with_config are cjrt's. */
static void run_manifest(cjrt_client *c, const char *dir, const char *manifest, bool peer,
                         int *ncases, int *proto_ok, int *text_ok) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", dir, manifest);
  FILE *mf = fopen(path, "r");
  if (!mf) {
    FAIL("cannot read %s", path);
    return;
  }
  char name[256];
  int nin, nout;
  double rtol, atol;
  char err[2048];
  while (fscanf(mf, "%255s %d %d %lf %lf", name, &nin, &nout, &rtol, &atol) == 5) {
    /* JAX's CPU lowering of linear algebra calls LAPACK through FFI handlers that jaxlib
     * registers in its own process; XLA's plugin alone has none */
    if (peer && strcmp(name, "linalg_cpu") == 0) {
      printf("%s: not run on the peer (its LAPACK custom calls need jaxlib's handlers)\n", name);
      continue;
    }
    (*ncases)++;
    size_t len = 0;
    snprintf(path, sizeof path, "%s/%s.pb", dir, name);
    char *code = tc_read_file(path, &len);
    if (!code) {
      FAIL("%s: cannot read %s", name, path);
      continue;
    }
    if (run_case(c, dir, name, code, len, "hlo", nin, nout, rtol, atol, err, sizeof err))
      (*proto_ok)++;
    else
      FAIL("%s (proto): %s", name, err);
    /* the same module wrapped in an HloModuleProtoWithConfig (hlo_module = 1) */
    if (!peer && (strcmp(name, "mlp") == 0 || strcmp(name, "while_tuple") == 0)) {
      size_t wl = len + 16;
      unsigned char *w = malloc(wl);
      size_t k = 0;
      w[k++] = 0x0a;
      for (uint64_t v = len; ; v >>= 7) {
        w[k++] = (unsigned char)((v & 0x7f) | (v >= 0x80 ? 0x80 : 0));
        if (v < 0x80) break;
      }
      memcpy(w + k, code, len);
      if (!run_case(c, dir, name, (char *)w, k + len, "hlo_with_config", nin, nout, rtol, atol,
                    err, sizeof err))
        FAIL("%s (hlo_with_config): %s", name, err);
      free(w);
    }
    free(code);
    if (peer) continue;
    snprintf(path, sizeof path, "%s/%s.hlo", dir, name);
    code = tc_read_file(path, &len);
    if (!code) {
      FAIL("%s: cannot read %s", name, path);
      continue;
    }
    if (run_case(c, dir, name, code, len, "hlo", nin, nout, rtol, atol, err, sizeof err))
      (*text_ok)++;
    else
      FAIL("%s (text): %s", name, err);
    free(code);
  }
  fclose(mf);
}

int main(int argc, char **argv) {
  if (argc != 3 && !(argc == 4 && strcmp(argv[3], "--peer") == 0)) {
    fprintf(stderr, "usage: %s PLUGIN.so|env:VAR DATA_DIR [--peer]\n", argv[0]);
    return 2;
  }
  const char *plugin = argv[1], *dir = argv[2];
  bool peer = argc == 4;
  if (strncmp(plugin, "env:", 4) == 0) {
    const char *v = getenv(plugin + 4);
    FILE *f = v && *v ? fopen(v, "rb") : NULL;
    if (!f) {
      printf("skipped: $%s names no plugin file\n", plugin + 4);
      return 77;
    }
    fclose(f);
    plugin = v;
  }
  cjrt_plugin *p = NULL;
  cjrt_client *c = NULL;
  cjrt_error *er = cjrt_plugin_open(plugin, &p);
  if (!er) er = cjrt_client_create(p, NULL, 0, &c);
  if (er) {
    fprintf(stderr, "cannot open the plugin: %s\n", cjrt_error_message(er));
    return 1;
  }
  /* MANIFEST: JAX's programs (make_corpus.py); the others: torch_xla's and TensorFlow's
   * (make_corpus_torch_xla.py, make_corpus_tf.py) */
  static const char *const manifests[] = {"MANIFEST", "MANIFEST.torch_xla", "MANIFEST.tf"};
  int counts[3][3] = {{0}};
  for (int m = 0; m < 3; m++)
    run_manifest(c, dir, manifests[m], peer, &counts[m][0], &counts[m][1], &counts[m][2]);
  if (!peer) test_unsupported(c);
  for (int m = 0; m < 3; m++)
    printf("hlo corpus %s: %d cases; proto %d passed; text %d passed%s\n", manifests[m],
           counts[m][0], counts[m][1], counts[m][2], peer ? " (not tried)" : "");
  if (counts[0][0] < 30) FAIL("only %d cases in the JAX manifest", counts[0][0]);
  if (counts[1][0] < 6 || counts[2][0] < 6)
    FAIL("only %d torch_xla and %d TensorFlow cases", counts[1][0], counts[2][0]);
  cjrt_client_free(c);
  cjrt_plugin_close(p);
  if (failures) fprintf(stderr, "%d failures\n", failures);
  return failures ? 1 : 0;
}
