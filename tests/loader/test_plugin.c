/* libcjrt end to end through our plugin: client, devices, memories, buffers of every element type
 * (dense, strided, empty, views), DLPack both ways in C, copies, deletion, compile and execute,
 * errors, and concurrent use. Compile/execute checks skip (saying so) while the plugin reports
 * PJRT_Client_Compile as UNIMPLEMENTED.
 * Usage: test_loader_plugin PLUGIN.so EXAMPLES_DIR */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/check.h"
#include "cjrt/array.h"
#include "cjrt/cjrt.h"
#include "cjrt/dlpack.h"

static const char *plugin_path, *examples_dir;

#define OK(expr)                                                                   \
  do {                                                                             \
    cjrt_error *e_ = (expr);                                                       \
    CHECK_MSG(e_ == NULL, "%s: %s", #expr, cjrt_error_message(e_));                \
    cjrt_error_free(e_);                                                           \
  } while (0)

/* Expects an error with `code` whose message contains `msg`. */
#define FAILS(expr, code, msg)                                                                    \
  do {                                                                                            \
    cjrt_error *e_ = (expr);                                                                      \
    CHECK_MSG(e_ != NULL, "%s succeeded", #expr);                                                 \
    if (e_) {                                                                                     \
      CHECK_MSG(cjrt_error_code(e_) == (code), "%s: %s (%s)", #expr, cjrt_code_name(cjrt_error_code(e_)), \
                cjrt_error_message(e_));                                                          \
      CHECK_CONTAINS(cjrt_error_message(e_), msg);                                                \
    }                                                                                             \
    cjrt_error_free(e_);                                                                          \
  } while (0)

static cjrt_client *make_client(cjrt_plugin *p, int64_t devices) {
  cjrt_client *c = NULL;
  cjrt_value opt = cjrt_value_int64("cpu_device_count", devices);
  OK(cjrt_client_create(p, devices ? &opt : NULL, devices ? 1 : 0, &c));
  return c;
}

static void test_client(cjrt_plugin *p) {
  CHECK_EQ_INT(cjrt_plugin_api_major(p), 0);
  CHECK_EQ_INT(cjrt_plugin_api_minor(p), cjrt_api_minor());
  bool has_xla_version = false;
  for (size_t i = 0; i < cjrt_plugin_num_attributes(p); i++)
    if (!strcmp(cjrt_plugin_attribute(p, i)->name, "xla_version")) has_xla_version = true;
  CHECK(has_xla_version);
  cjrt_client *c = make_client(p, 3);
  if (!c) return;
  CHECK(strlen(cjrt_client_platform_name(c)) > 0);
  CHECK_EQ_INT(cjrt_client_num_devices(c), 3);
  CHECK_EQ_INT(cjrt_client_num_addressable_devices(c), 3);
  CHECK_EQ_INT(cjrt_client_process_index(c), 0);
  for (size_t i = 0; i < cjrt_client_num_devices(c); i++) {
    cjrt_device *d = cjrt_client_device(c, i);
    CHECK(cjrt_device_is_addressable(d));
    CHECK(cjrt_client_lookup_device(c, cjrt_device_id(d)) == d);
    CHECK(strlen(cjrt_device_kind(d)) > 0);
    CHECK(strlen(cjrt_device_to_string(d)) > 0);
    CHECK_MSG(cjrt_device_num_memories(d) >= 1, "device %zu has no memories", i);
    cjrt_memory *m = cjrt_device_default_memory(d);
    CHECK(m != NULL);
    if (m) {
      CHECK(strlen(cjrt_memory_kind(m)) > 0);
      bool listed = false;
      for (size_t k = 0; k < cjrt_memory_num_devices(m); k++)
        if (cjrt_memory_device(m, k) == d) listed = true;
      CHECK_MSG(listed, "device %zu's default memory does not list it", i);
    }
  }
  CHECK(cjrt_client_num_memories(c) >= 1);
  cjrt_client_free(c);
  /* option errors name the option */
  cjrt_value bad = cjrt_value_int64("no_such_option", 1);
  cjrt_client *c2 = NULL;
  FAILS(cjrt_client_create(p, &bad, 1, &c2), CJRT_INVALID_ARGUMENT, "no_such_option");
  CHECK(c2 == NULL);
  cjrt_value wrong_type = cjrt_value_string("cpu_device_count", "four");
  FAILS(cjrt_client_create(p, &wrong_type, 1, &c2), CJRT_INVALID_ARGUMENT, "cpu_device_count");
}

/* A valid host pattern for any element type (sub-byte values in their low bits, pred 0/1). */
static void fill(cjrt_dtype dt, uint8_t *p, size_t nbytes, unsigned seed) {
  int bits = cjrt_dtype_bits(dt);
  for (size_t i = 0; i < nbytes; i++) {
    uint8_t v = (uint8_t)(i * 37 + seed * 11 + 5);
    if (dt == CJRT_PRED) v &= 1;
    else if (bits < 8) v &= (uint8_t)((1u << bits) - 1);
    p[i] = v;
  }
}

static void test_buffers(cjrt_plugin *p) {
  cjrt_client *c = make_client(p, 2);
  if (!c) return;
  int64_t live0 = cjrt_live_buffers();
  /* every element type round trips */
  for (int t = 1; t < CJRT_DTYPE_COUNT; t++) {
    cjrt_dtype dt = (cjrt_dtype)t;
    if (dt == CJRT_TOKEN) continue;
    int64_t dims[3] = {2, 3, 5};
    size_t nbytes = 30 * cjrt_dtype_size(dt);
    uint8_t in[30 * 16], out[30 * 16];
    fill(dt, in, nbytes, (unsigned)t);
    memset(out, 0xEE, sizeof out);
    cjrt_buffer *b = NULL;
    OK(cjrt_buffer_from_host(c, NULL, dt, dims, 3, in, NULL, &b));
    if (!b) continue;
    CHECK(cjrt_buffer_dtype(b) == dt);
    CHECK(cjrt_buffer_rank(b) == 3 && cjrt_buffer_dims(b)[2] == 5);
    CHECK_EQ_INT(cjrt_buffer_nbytes(b), nbytes);
    CHECK(cjrt_buffer_device(b) == cjrt_client_addressable_device(c, 0));
    OK(cjrt_buffer_to_host(b, out, sizeof out));
    CHECK_MSG(!memcmp(in, out, nbytes), "%s round trip differs", cjrt_dtype_name(dt));
    FAILS(cjrt_buffer_to_host(b, out, nbytes - 1), CJRT_INVALID_ARGUMENT, "destination holds");
    cjrt_buffer_free(b);
  }
  /* strided host data: a transposed 3x2 view of a 2x3 array, and a reversed vector */
  {
    float src[6] = {1, 2, 3, 4, 5, 6}, out[6];
    int64_t dims[2] = {3, 2}, strides[2] = {4, 12};
    cjrt_buffer *b = NULL;
    OK(cjrt_buffer_from_host(c, NULL, CJRT_F32, dims, 2, src, strides, &b));
    if (b) {
      OK(cjrt_buffer_to_host(b, out, sizeof out));
      float want[6] = {1, 4, 2, 5, 3, 6};
      CHECK(!memcmp(out, want, sizeof out));
    }
    cjrt_buffer_free(b);
    int64_t n = 6, neg = -4;
    OK(cjrt_buffer_from_host(c, NULL, CJRT_F32, &n, 1, src + 5, &neg, &b));
    if (b) {
      OK(cjrt_buffer_to_host(b, out, sizeof out));
      float want[6] = {6, 5, 4, 3, 2, 1};
      CHECK(!memcmp(out, want, sizeof out));
    }
    cjrt_buffer_free(b);
  }
  /* empty and scalar */
  {
    int64_t dims[2] = {0, 4};
    cjrt_buffer *b = NULL;
    OK(cjrt_buffer_from_host(c, NULL, CJRT_F64, dims, 2, NULL, NULL, &b));
    if (b) {
      CHECK_EQ_INT(cjrt_buffer_nbytes(b), 0);
      cjrt_array a;
      OK(cjrt_buffer_to_array(b, &a));
      CHECK(a.rank == 2 && a.dims[0] == 0);
      cjrt_array_free(&a);
    }
    cjrt_buffer_free(b);
    int32_t v = 42, got = 0;
    OK(cjrt_buffer_from_host(c, NULL, CJRT_S32, NULL, 0, &v, NULL, &b));
    if (b) {
      OK(cjrt_buffer_to_host(b, &got, 4));
      CHECK_EQ_INT(got, 42);
    }
    cjrt_buffer_free(b);
  }
  /* copies between devices, deletion */
  {
    float src[4] = {1, 2, 3, 4}, out[4];
    int64_t n = 4;
    cjrt_buffer *b = NULL, *b2 = NULL;
    OK(cjrt_buffer_from_host(c, NULL, CJRT_F32, &n, 1, src, NULL, &b));
    cjrt_device *d1 = cjrt_client_addressable_device(c, 1);
    if (b && d1) {
      OK(cjrt_buffer_copy_to_device(b, d1, &b2));
      if (b2) {
        CHECK(cjrt_buffer_device(b2) == d1);
        OK(cjrt_buffer_to_host(b2, out, sizeof out));
        CHECK(!memcmp(src, out, sizeof out));
      }
      CHECK(!cjrt_buffer_is_deleted(b));
      OK(cjrt_buffer_delete(b));
      CHECK(cjrt_buffer_is_deleted(b));
      cjrt_error *e = cjrt_buffer_to_host(b, out, sizeof out);
      CHECK_MSG(e != NULL, "reading a deleted buffer succeeded");
      cjrt_error_free(e);
      void *t = NULL;
      FAILS(cjrt_buffer_to_dlpack(b, true, 1, &t), CJRT_FAILED_PRECONDITION, "deleted");
    }
    cjrt_buffer_free(b2);
    cjrt_buffer_free(b);
  }
  CHECK_EQ_INT(cjrt_live_buffers(), live0);
  cjrt_client_free(c);
}

static int deletes;
static void count_delete(void *data, void *arg) {
  (void)data;
  (void)arg;
  __atomic_add_fetch(&deletes, 1, __ATOMIC_SEQ_CST);
}

static void count_legacy_delete(cjrt_dl_managed_tensor *self) { (*(int *)self->manager_ctx)++; }

static void test_views_and_dlpack(cjrt_plugin *p) {
  cjrt_client *c = make_client(p, 1);
  if (!c) return;
  int64_t live0 = cjrt_live_buffers();
  float *host = aligned_alloc(64, 64 * sizeof(float));
  for (int i = 0; i < 64; i++) host[i] = (float)i;
  int64_t dims[2] = {8, 8};
  /* a view aliases the host memory; on_delete runs exactly once, when the buffer goes */
  deletes = 0;
  cjrt_buffer *v = NULL;
  OK(cjrt_buffer_view(c, NULL, CJRT_F32, dims, 2, host, count_delete, NULL, &v));
  if (v) {
    bool on_cpu = false;
    OK(cjrt_buffer_is_on_cpu(v, &on_cpu));
    CHECK(on_cpu);
    uintptr_t ptr = 0;
    OK(cjrt_buffer_unsafe_pointer(v, &ptr));
    CHECK_MSG(ptr == (uintptr_t)host, "view pointer %p, host %p", (void *)ptr, (void *)host);
    float out[64];
    OK(cjrt_buffer_to_host(v, out, sizeof out));
    CHECK(out[63] == 63.0f);
    /* export it (versioned and legacy), import the export: all the same memory */
    void *mv = NULL, *ml = NULL;
    OK(cjrt_buffer_to_dlpack(v, true, 1, &mv));
    OK(cjrt_buffer_to_dlpack(v, false, 0, &ml));
    cjrt_buffer_free(v); /* the exports keep it alive */
    v = NULL;
    CHECK_EQ_INT(deletes, 0);
    if (mv && ml) {
      cjrt_dl_managed_tensor_versioned *tv = mv;
      cjrt_dl_managed_tensor *tl = ml;
      CHECK(tv->version.major == 1 && tv->version.minor == 1);
      CHECK(tv->flags & CJRT_DLPACK_FLAG_READ_ONLY);
      CHECK(tv->dl_tensor.data == host && tl->dl_tensor.data == host);
      CHECK(tv->dl_tensor.ndim == 2 && tv->dl_tensor.shape[1] == 8 && tv->dl_tensor.strides == NULL);
      CHECK(tv->dl_tensor.dtype.code == CJRT_DL_FLOAT && tv->dl_tensor.dtype.bits == 32);
      CHECK(tv->dl_tensor.device.device_type == CJRT_DL_CPU);
      cjrt_buffer *imp = NULL;
      bool copied = true;
      OK(cjrt_buffer_from_dlpack(c, NULL, mv, true, &imp, &copied));
      CHECK(!copied);
      if (imp) {
        uintptr_t ip = 0;
        OK(cjrt_buffer_unsafe_pointer(imp, &ip));
        CHECK(ip == (uintptr_t)host);
      }
      cjrt_buffer_free(imp); /* runs the versioned tensor's deleter */
      CHECK_EQ_INT(deletes, 0);
      tl->deleter(tl); /* the last reference: the view's memory is handed back */
    }
    CHECK_EQ_INT(deletes, 1);
  }
  /* an exported tensor pins the memory: deleting the buffer (PJRT_Buffer_Delete) leaves the
   * consumer's data readable until its deleter runs (ASan would flag a use after free) */
  {
    double src[16];
    for (int i = 0; i < 16; i++) src[i] = i * 1.5;
    int64_t n = 16;
    cjrt_buffer *b = NULL;
    OK(cjrt_buffer_from_host(c, NULL, CJRT_F64, &n, 1, src, NULL, &b));
    void *m = NULL;
    if (b) OK(cjrt_buffer_to_dlpack(b, false, 0, &m));
    if (m) {
      cjrt_dl_managed_tensor *t = m;
      OK(cjrt_buffer_delete(b));
      CHECK(cjrt_buffer_is_deleted(b));
      cjrt_buffer_free(b);
      b = NULL;
      const double *d = t->dl_tensor.data;
      double sum = 0;
      for (int i = 0; i < 16; i++) sum += d[i];
      CHECK(sum == 180.0);
      t->deleter(t);
    }
    cjrt_buffer_free(b);
  }
  /* import of a strided (transposed) legacy tensor copies in one pass */
  {
    int64_t shape[2] = {8, 8}, strides[2] = {1, 8};
    int legacy_deletes = 0;
    struct {
      cjrt_dl_managed_tensor t;
    } m = {{.dl_tensor = {.data = host, .device = {CJRT_DL_CPU, 0}, .ndim = 2,
                          .dtype = {CJRT_DL_FLOAT, 32, 1}, .shape = shape, .strides = strides},
            .manager_ctx = &legacy_deletes}};
    m.t.deleter = count_legacy_delete;
    cjrt_buffer *imp = NULL;
    bool copied = false;
    OK(cjrt_buffer_from_dlpack(c, NULL, &m.t, false, &imp, &copied));
    CHECK(copied);
    if (imp) {
      float out[64];
      OK(cjrt_buffer_to_host(imp, out, sizeof out));
      CHECK(out[1] == 8.0f && out[8] == 1.0f); /* transposed */
    }
    cjrt_buffer_free(imp);
    CHECK_EQ_INT(legacy_deletes, 1); /* copied: handed back at once, exactly once */
    /* a GPU tensor is refused and left with its owner */
    m.t.dl_tensor.device.device_type = CJRT_DL_CUDA;
    FAILS(cjrt_buffer_from_dlpack(c, NULL, &m.t, false, &imp, NULL), CJRT_UNIMPLEMENTED, "not in host memory");
    m.t.dl_tensor.device.device_type = CJRT_DL_CPU;
    m.t.dl_tensor.dtype.lanes = 2;
    FAILS(cjrt_buffer_from_dlpack(c, NULL, &m.t, false, &imp, NULL), CJRT_UNIMPLEMENTED, "lanes");
    CHECK_EQ_INT(legacy_deletes, 1);
  }
  /* a versioned tensor of a foreign major version is refused untouched */
  {
    cjrt_dl_managed_tensor_versioned t = {.version = {2, 0}};
    cjrt_buffer *imp = NULL;
    FAILS(cjrt_buffer_from_dlpack(c, NULL, &t, true, &imp, NULL), CJRT_UNIMPLEMENTED, "version 2.0");
  }
  /* export of every element type, and what DLPack cannot carry */
  for (int t = 1; t < CJRT_DTYPE_COUNT; t++) {
    cjrt_dtype dt = (cjrt_dtype)t;
    if (dt == CJRT_TOKEN) continue;
    uint8_t data[4 * 16];
    fill(dt, data, 4 * cjrt_dtype_size(dt), 3);
    int64_t n = 4;
    cjrt_buffer *b = NULL;
    OK(cjrt_buffer_from_host(c, NULL, dt, &n, 1, data, NULL, &b));
    if (!b) continue;
    void *m = NULL;
    cjrt_dl_dtype want;
    uint64_t flags;
    bool representable = !cjrt_dtype_to_dlpack(dt, 1, &want, &flags);
    cjrt_error *e = cjrt_buffer_to_dlpack(b, true, 1, &m);
    CHECK_MSG(representable == (e == NULL), "%s: %s", cjrt_dtype_name(dt), cjrt_error_message(e));
    cjrt_error_free(e);
    if (m) {
      cjrt_dl_managed_tensor_versioned *tv = m;
      CHECK(!memcmp(tv->dl_tensor.data, data, 4 * cjrt_dtype_size(dt)));
      CHECK(tv->dl_tensor.dtype.code == want.code && tv->dl_tensor.dtype.bits == want.bits);
      /* back in as a zero-copy buffer with the same type */
      cjrt_buffer *imp = NULL;
      OK(cjrt_buffer_from_dlpack(c, NULL, m, true, &imp, NULL));
      if (imp) CHECK(cjrt_buffer_dtype(imp) == dt);
      if (!imp) tv->deleter(tv);
      cjrt_buffer_free(imp);
    }
    cjrt_buffer_free(b);
  }
  free(host);
  CHECK_EQ_INT(cjrt_live_buffers(), live0);
  cjrt_client_free(c);
}

static bool compile_available = true;

static void test_execute(cjrt_plugin *p) {
  cjrt_client *c = make_client(p, 2);
  if (!c) return;
  char path[4096];
  snprintf(path, sizeof path, "%s/hello.mlir", examples_dir);
  cjrt_executable *e = NULL;
  cjrt_error *err = cjrt_compile_file(c, path, NULL, &e);
  if (err && cjrt_error_code(err) == CJRT_UNIMPLEMENTED) {
    printf("loader_plugin: SKIP compile/execute checks: %s\n", cjrt_error_message(err));
    compile_available = false;
    cjrt_error_free(err);
    cjrt_client_free(c);
    return;
  }
  CHECK_MSG(!err, "%s", cjrt_error_message(err));
  cjrt_error_free(err);
  if (!e) {
    cjrt_client_free(c);
    return;
  }
  CHECK_EQ_INT(cjrt_executable_num_outputs(e), 2);
  CHECK_EQ_INT(cjrt_executable_num_devices(e), 1);
  CHECK(cjrt_executable_output_dtype(e, 0) == CJRT_F32);
  int rank = 0;
  const int64_t *od = cjrt_executable_output_dims(e, 1, &rank);
  CHECK(rank == 2 && od && od[0] == 2 && od[1] == 2);
  float a[4] = {1, 2, 3, 4}, b[4] = {10, 20, 30, 40}, out[4];
  int64_t dims[2] = {2, 2};
  cjrt_buffer *in[2] = {NULL, NULL}, *res[2] = {NULL, NULL};
  OK(cjrt_buffer_from_host(c, NULL, CJRT_F32, dims, 2, a, NULL, &in[0]));
  OK(cjrt_buffer_from_host(c, NULL, CJRT_F32, dims, 2, b, NULL, &in[1]));
  for (int rep = 0; rep < 3; rep++) {
    OK(cjrt_execute(e, in, 2, res, 2));
    if (res[0] && res[1]) {
      OK(cjrt_buffer_to_host(res[0], out, sizeof out));
      float want0[4] = {11, 44, 99, 176}; /* (a + b) * a */
      CHECK(!memcmp(out, want0, sizeof out));
      OK(cjrt_buffer_to_host(res[1], out, sizeof out));
      float want1[4] = {70, 100, 150, 220}; /* a @ b */
      CHECK(!memcmp(out, want1, sizeof out));
    }
    cjrt_buffer_free(res[0]);
    cjrt_buffer_free(res[1]);
  }
  /* arguments that are views of host memory aligned only to their element size (as DLPack
   * imports of sliced numpy arrays are): kernels must not assume more */
  {
    float *block = aligned_alloc(64, 64 * sizeof(float));
    memcpy(block + 1, a, sizeof a);
    memcpy(block + 7, b, sizeof b);
    cjrt_buffer *va = NULL, *vb = NULL;
    OK(cjrt_buffer_view(c, NULL, CJRT_F32, dims, 2, block + 1, NULL, NULL, &va));
    OK(cjrt_buffer_view(c, NULL, CJRT_F32, dims, 2, block + 7, NULL, NULL, &vb));
    cjrt_buffer *vin[2] = {va, vb};
    if (va && vb) {
      OK(cjrt_execute(e, vin, 2, res, 2));
      if (res[0] && res[1]) {
        OK(cjrt_buffer_to_host(res[0], out, sizeof out));
        float want0[4] = {11, 44, 99, 176};
        CHECK(!memcmp(out, want0, sizeof out));
        OK(cjrt_buffer_to_host(res[1], out, sizeof out));
        float want1[4] = {70, 100, 150, 220};
        CHECK(!memcmp(out, want1, sizeof out));
      }
      cjrt_buffer_free(res[0]);
      cjrt_buffer_free(res[1]);
      res[0] = res[1] = NULL;
    }
    cjrt_buffer_free(va);
    cjrt_buffer_free(vb);
    free(block);
  }
  /* wrong arity, wrong type, wrong shape: errors, not crashes */
  FAILS(cjrt_execute(e, in, 1, res, 2), CJRT_INVALID_ARGUMENT, "");
  CHECK(res[0] == NULL && res[1] == NULL);
  FAILS(cjrt_execute(e, in, 2, res, 1), CJRT_INVALID_ARGUMENT, "room for 1 outputs");
  cjrt_buffer *wrong = NULL;
  int32_t ia[4] = {1, 2, 3, 4};
  OK(cjrt_buffer_from_host(c, NULL, CJRT_S32, dims, 2, ia, NULL, &wrong));
  cjrt_buffer *mixed[2] = {wrong, in[1]};
  err = cjrt_execute(e, mixed, 2, res, 2);
  CHECK_MSG(err != NULL, "executing with an s32 argument succeeded");
  cjrt_error_free(err);
  cjrt_buffer_free(wrong);
  int64_t d3[2] = {3, 1};
  OK(cjrt_buffer_from_host(c, NULL, CJRT_F32, d3, 2, a, NULL, &wrong));
  mixed[0] = wrong;
  err = cjrt_execute(e, mixed, 2, res, 2);
  CHECK_MSG(err != NULL, "executing with a 3x1 argument succeeded");
  cjrt_error_free(err);
  cjrt_buffer_free(wrong);
  /* on device 1 by compile options */
  int64_t dev1 = cjrt_device_id(cjrt_client_addressable_device(c, 1));
  cjrt_compile_options o = {.device_ids = &dev1};
  cjrt_executable *e1 = NULL;
  OK(cjrt_compile_file(c, path, &o, &e1));
  if (e1) {
    CHECK(cjrt_executable_device(e1, 0) == cjrt_client_addressable_device(c, 1));
    cjrt_buffer *in1[2] = {NULL, NULL};
    OK(cjrt_buffer_copy_to_device(in[0], cjrt_executable_device(e1, 0), &in1[0]));
    OK(cjrt_buffer_copy_to_device(in[1], cjrt_executable_device(e1, 0), &in1[1]));
    OK(cjrt_execute(e1, in1, 2, res, 2));
    if (res[0]) CHECK(cjrt_buffer_device(res[0]) == cjrt_executable_device(e1, 0));
    cjrt_buffer_free(res[0]);
    cjrt_buffer_free(res[1]);
    cjrt_buffer_free(in1[0]);
    cjrt_buffer_free(in1[1]);
    cjrt_executable_free(e1);
  }
  /* the same program as text, and as a malformed program */
  cjrt_executable *e2 = NULL;
  OK(cjrt_compile_text(c, "func.func @main(%x: tensor<f32>) -> tensor<f32> {\n"
                          "  %y = stablehlo.add %x, %x : tensor<f32>\n"
                          "  return %y : tensor<f32>\n}\n",
                       NULL, &e2));
  cjrt_executable_free(e2);
  e2 = NULL;
  err = cjrt_compile_text(c, "func.func @main(%x: tensor<f32>) -> tensor<f32> {\n  %y = stablehlo.bogus %x\n", NULL, &e2);
  CHECK(err != NULL && e2 == NULL);
  if (err) CHECK_CONTAINS(cjrt_error_message(err), "PJRT_Client_Compile");
  cjrt_error_free(err);
  cjrt_buffer_free(in[0]);
  cjrt_buffer_free(in[1]);
  cjrt_executable_free(e);
  cjrt_client_free(c);
}

/* Several threads sharing one client: buffers in and out, and executions when available. */
typedef struct {
  cjrt_client *c;
  cjrt_executable *e;
  int failures;
} thread_arg;

static void *worker(void *vp) {
  thread_arg *t = vp;
  for (int i = 0; i < 50; i++) {
    float a[4] = {(float)i, 1, 2, 3}, b[4] = {1, 1, 1, 1}, out[4] = {0};
    int64_t dims[2] = {2, 2};
    cjrt_buffer *in[2] = {NULL, NULL}, *res[2] = {NULL, NULL};
    cjrt_error *e = cjrt_buffer_from_host(t->c, NULL, CJRT_F32, dims, 2, a, NULL, &in[0]);
    if (!e) e = cjrt_buffer_from_host(t->c, NULL, CJRT_F32, dims, 2, b, NULL, &in[1]);
    if (!e && t->e) e = cjrt_execute(t->e, in, 2, res, 2);
    if (!e && t->e) e = cjrt_buffer_to_host(res[0], out, sizeof out);
    if (!e && t->e && out[0] != ((float)i + 1) * (float)i) t->failures++;
    if (!e && !t->e) e = cjrt_buffer_to_host(in[0], out, sizeof out);
    if (!e && !t->e && out[0] != (float)i) t->failures++;
    if (e) t->failures++;
    cjrt_error_free(e);
    for (int k = 0; k < 2; k++) {
      cjrt_buffer_free(in[k]);
      cjrt_buffer_free(res[k]);
    }
  }
  return NULL;
}

static void test_threads(cjrt_plugin *p) {
  cjrt_client *c = make_client(p, 1);
  if (!c) return;
  char path[4096];
  snprintf(path, sizeof path, "%s/hello.mlir", examples_dir);
  cjrt_executable *e = NULL;
  if (compile_available) OK(cjrt_compile_file(c, path, NULL, &e));
  thread_arg args[4];
  pthread_t th[4];
  for (int i = 0; i < 4; i++) {
    args[i] = (thread_arg){c, e, 0};
    pthread_create(&th[i], NULL, worker, &args[i]);
  }
  for (int i = 0; i < 4; i++) {
    pthread_join(th[i], NULL);
    CHECK_EQ_INT(args[i].failures, 0);
  }
  cjrt_executable_free(e);
  cjrt_client_free(c);
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: %s PLUGIN.so EXAMPLES_DIR\n", argv[0]);
    return 2;
  }
  plugin_path = argv[1];
  examples_dir = argv[2];
  cjrt_plugin *p = NULL;
  OK(cjrt_plugin_open(plugin_path, &p));
  if (!p) return check_report("loader_plugin");
  test_client(p);
  test_buffers(p);
  test_views_and_dlpack(p);
  test_execute(p);
  test_threads(p);
  cjrt_plugin_close(p);
  return check_report("loader_plugin");
}
