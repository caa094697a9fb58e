/* libcjrt's loader against fake plugins: version checks, short (older) tables, Initialize once,
 * PJRT_Error conversion, the name search, and files that are not plugins.
 * Usage: test_loader_fake OK MAJOR1 MINOR40 SHORT NOSYM INITFAILS NULLAPI NOT_A_LIBRARY */
#include <dlfcn.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../common/check.h"
#include "cjrt/cjrt.h"
#include "frontend/compile_options.h"
#include "pjrt_c_api.h"

static int64_t init_count_of(cjrt_plugin *p) {
  /* ask the plugin itself (the loader caches attributes from the first open) */
  const PJRT_Api *api = cjrt_plugin_api(p);
  PJRT_Plugin_Attributes_Args a = {.struct_size = PJRT_Plugin_Attributes_Args_STRUCT_SIZE};
  if (api->PJRT_Plugin_Attributes(&a)) return -1;
  for (size_t i = 0; i < a.num_attributes; i++)
    if (a.attributes[i].name_size == 10 && !memcmp(a.attributes[i].name, "init_count", 10))
      return a.attributes[i].int64_value;
  return -1;
}

static void expect_open_error(const char *path, cjrt_code code, const char *msg) {
  cjrt_plugin *p = (cjrt_plugin *)1;
  cjrt_error *e = cjrt_plugin_open(path, &p);
  CHECK_MSG(e != NULL, "opening %s succeeded", path);
  CHECK(p == NULL);
  if (e) {
    CHECK_MSG(cjrt_error_code(e) == code, "%s: code %s, want %s (%s)", path,
              cjrt_code_name(cjrt_error_code(e)), cjrt_code_name(code), cjrt_error_message(e));
    CHECK_CONTAINS(cjrt_error_message(e), msg);
  }
  cjrt_error_free(e);
}

static bool deleted;
static void on_delete(void *data, void *arg) {
  (void)data;
  (void)arg;
  deleted = true;
}

static void test_ok(const char *path) {
  cjrt_plugin *p = NULL;
  cjrt_error *e = cjrt_plugin_open(path, &p);
  CHECK_MSG(!e, "%s", cjrt_error_message(e));
  cjrt_error_free(e);
  if (!p) return;
  CHECK_EQ_INT(cjrt_plugin_api_major(p), 0);
  CHECK_EQ_INT(cjrt_plugin_api_minor(p), PJRT_API_MINOR);
  CHECK_EQ_INT(cjrt_api_minor(), PJRT_API_MINOR);
  CHECK_EQ_INT(init_count_of(p), 1);
  CHECK_EQ_INT(cjrt_plugin_num_attributes(p), 2);
  const cjrt_value *v = cjrt_plugin_attribute(p, 1);
  CHECK(v && !strcmp(v->name, "some_version") && v->kind == CJRT_VALUE_INT64_LIST && v->size == 3 &&
        v->int64_list[2] == 3);
  CHECK(cjrt_plugin_attribute(p, 2) == NULL);
  CHECK(cjrt_plugin_has(p, "PJRT_Client_Compile"));
  CHECK(!cjrt_plugin_has(p, "PJRT_Buffer_Delete")); /* NULL slot */
  CHECK(!cjrt_plugin_has(p, "PJRT_No_Such_Slot"));
  /* a second open (and one through a symlink) reuses the library: Initialize ran once */
  cjrt_plugin *p2 = NULL;
  CHECK(!cjrt_plugin_open(path, &p2));
  char link[] = "/tmp/cjrt_fake_link_XXXXXX";
  int fd = mkstemp(link);
  if (fd >= 0) {
    close(fd);
    unlink(link);
    char *abs = realpath(path, NULL);
    if (abs && symlink(abs, link) == 0) {
      cjrt_plugin *p3 = NULL;
      CHECK(!cjrt_plugin_open(link, &p3));
      if (p3) CHECK_EQ_INT(init_count_of(p3), 1);
      cjrt_plugin_close(p3);
      unlink(link);
    }
    free(abs);
  }
  CHECK_EQ_INT(init_count_of(p2), 1);
  cjrt_plugin_close(p2);

  /* a client of the fake: strings are taken by size, missing slots read as empty */
  cjrt_client *c = NULL;
  cjrt_value opt = cjrt_value_int64("whatever", 1);
  e = cjrt_client_create(p, &opt, 1, &c);
  CHECK_MSG(!e, "%s", cjrt_error_message(e));
  cjrt_error_free(e);
  if (c) {
    CHECK_EQ_STR(cjrt_client_platform_name(c), "fake");
    CHECK_EQ_STR(cjrt_client_platform_version(c), "");
    CHECK_EQ_INT(cjrt_client_num_devices(c), 1);
    CHECK_EQ_INT(cjrt_client_num_addressable_devices(c), 1);
    cjrt_device *d = cjrt_client_lookup_device(c, 7);
    CHECK(d && cjrt_device_id(d) == 7 && cjrt_device_is_addressable(d));
    CHECK(cjrt_client_lookup_device(c, 8) == NULL);
    CHECK_EQ_STR(cjrt_device_kind(d), "");
    CHECK_EQ_INT(cjrt_device_local_hardware_id(d), -1);
    cjrt_executable *x = (cjrt_executable *)1;
    e = cjrt_compile_text(c, "func.func @main() { return }", NULL, &x);
    CHECK(e && x == NULL && cjrt_error_code(e) == CJRT_INVALID_ARGUMENT);
    if (e) CHECK_EQ_STR(cjrt_error_message(e), "PJRT_Client_Compile: fake: unknown program");
    cjrt_error_free(e);
    cjrt_compile_options bad_dev = {.device_ids = (int64_t[]){3}};
    e = cjrt_compile_text(c, "x", &bad_dev, &x);
    CHECK(e && strstr(cjrt_error_message(e), "no device with id 3"));
    cjrt_error_free(e);
    float data[2] = {1, 2};
    int64_t dims[1] = {2};
    cjrt_buffer *b = (cjrt_buffer *)1;
    deleted = false;
    e = cjrt_buffer_view(c, NULL, CJRT_F32, dims, 1, data, on_delete, NULL, &b);
    CHECK(e && b == NULL && cjrt_error_code(e) == CJRT_UNIMPLEMENTED);
    if (e) CHECK_CONTAINS(cjrt_error_message(e), "fake: no views");
    CHECK(!deleted); /* a failed view leaves the memory with the caller */
    cjrt_error_free(e);
    int64_t strides[1] = {4};
    e = cjrt_buffer_from_host(c, NULL, CJRT_F32, dims, 1, data, strides, &b);
    CHECK(e && b == NULL && cjrt_error_code(e) == CJRT_UNIMPLEMENTED);
    if (e) CHECK_EQ_STR(cjrt_error_message(e), "PJRT_Client_BufferFromHostBuffer: fake: no strides");
    cjrt_error_free(e);
    e = cjrt_buffer_from_host(c, NULL, CJRT_TOKEN, dims, 1, data, NULL, &b);
    CHECK(e && cjrt_error_code(e) == CJRT_INVALID_ARGUMENT);
    cjrt_error_free(e);
    dims[0] = -1;
    e = cjrt_buffer_from_host(c, NULL, CJRT_F32, dims, 1, data, NULL, &b);
    CHECK(e && strstr(cjrt_error_message(e), "negative"));
    cjrt_error_free(e);
  }
  /* the plugin may be closed before the client: the client keeps it */
  cjrt_plugin_close(p);
  cjrt_client_free(c);

  /* option errors come back with the plugin's code and message */
  CHECK(!cjrt_plugin_open(path, &p));
  cjrt_value fail = cjrt_value_bool("fail", true);
  c = (cjrt_client *)1;
  e = cjrt_client_create(p, &fail, 1, &c);
  CHECK(e && c == NULL && cjrt_error_code(e) == CJRT_INVALID_ARGUMENT);
  if (e) CHECK_EQ_STR(cjrt_error_message(e), "PJRT_Client_Create: fake: option 'fail' was given");
  cjrt_error_free(e);
  cjrt_plugin_close(p);
}

/* Compile and execute through the fake: the compile options libcjrt writes, as our plugin's own
 * reader decodes them; execution, completion-event errors, and nothing left alive. */
static void test_execute(const char *path) {
  cjrt_plugin *p = NULL;
  CHECK(!cjrt_plugin_open(path, &p));
  if (!p) return;
  void *h = dlopen(path, RTLD_LAZY | RTLD_NOLOAD);
  void (*last)(const char **, size_t *, int *, int *, int *) = NULL;
  if (h) *(void **)&last = dlsym(h, "fake_last_compile_options");
  CHECK(last != NULL);
  cjrt_client *c = NULL;
  CHECK(!cjrt_client_create(p, NULL, 0, &c));
  if (!c || !last) return;
  const char *bytes;
  size_t size;
  int nbuf, nev, nexe;
  /* default options: one replica, one partition, any device */
  cjrt_executable *e = NULL;
  cjrt_error *err = cjrt_compile_text(c, "add", NULL, &e);
  CHECK_MSG(!err, "%s", cjrt_error_message(err));
  cjrt_error_free(err);
  last(&bytes, &size, &nbuf, &nev, &nexe);
  cj_compile_options_storage st;
  cj_status cs = cj_compile_options_read(bytes, size, &st);
  CHECK_MSG(!cs, "%s", cj_status_message(cs));
  if (!cs) {
    CHECK_EQ_INT(st.opts.num_replicas, 1);
    CHECK_EQ_INT(st.opts.num_partitions, 1);
    CHECK(st.opts.device_assignment == NULL);
    CHECK_EQ_INT(st.device_ordinal, -1);
    cj_compile_options_storage_free(&st);
  }
  cj_status_free(cs);
  if (e) {
    CHECK_EQ_STR(cjrt_executable_name(e), "fakeprog");
    CHECK_EQ_INT(cjrt_executable_num_outputs(e), 1);
    CHECK_EQ_INT(cjrt_executable_num_devices(e), 1);
    int rank = 0;
    CHECK(cjrt_executable_output_dims(e, 0, &rank) == NULL && rank == -1); /* not reported */
    CHECK(cjrt_executable_output_dtype(e, 0) == CJRT_INVALID);
    float a[3] = {1, 2, 3}, b[3] = {10, 20, 30}, out[3];
    int64_t dims[1] = {3};
    cjrt_buffer *in[2] = {NULL, NULL}, *res[1] = {NULL};
    CHECK(!cjrt_buffer_from_host(c, NULL, CJRT_F32, dims, 1, a, NULL, &in[0]));
    CHECK(!cjrt_buffer_from_host(c, NULL, CJRT_F32, dims, 1, b, NULL, &in[1]));
    err = cjrt_execute(e, in, 2, res, 1);
    CHECK_MSG(!err, "%s", cjrt_error_message(err));
    cjrt_error_free(err);
    if (res[0]) {
      CHECK(cjrt_buffer_dtype(res[0]) == CJRT_F32 && cjrt_buffer_dims(res[0])[0] == 3);
      CHECK(!cjrt_buffer_to_host(res[0], out, sizeof out));
      CHECK(out[0] == 11 && out[2] == 33);
    }
    cjrt_buffer_free(res[0]);
    res[0] = (cjrt_buffer *)1;
    err = cjrt_execute(e, in, 1, res, 1);
    CHECK(err && res[0] == NULL && cjrt_error_code(err) == CJRT_INVALID_ARGUMENT);
    if (err) CHECK_EQ_STR(cjrt_error_message(err), "PJRT_LoadedExecutable_Execute: fake: add takes 2 arguments");
    cjrt_error_free(err);
    cjrt_buffer *nul[2] = {in[0], NULL};
    err = cjrt_execute(e, nul, 2, res, 1);
    CHECK(err && strstr(cjrt_error_message(err), "argument 1 of device 0 is NULL"));
    cjrt_error_free(err);
    /* the failing program: its completion event's error comes back, outputs are freed */
    cjrt_executable *f = NULL;
    CHECK(!cjrt_compile_text(c, "fail", NULL, &f));
    if (f) {
      err = cjrt_execute(f, in, 2, res, 1);
      CHECK(err && res[0] == NULL && cjrt_error_code(err) == CJRT_INTERNAL);
      if (err) CHECK_CONTAINS(cjrt_error_message(err), "fake: the program failed");
      cjrt_error_free(err);
    }
    cjrt_executable_free(f);
    cjrt_buffer_free(in[0]);
    cjrt_buffer_free(in[1]);
  }
  cjrt_executable_free(e);
  /* bytecode goes to the plugin as "mlir"; binary data that is not bytecode is refused first */
  CHECK(cjrt_is_mlir_bytecode("ML\xEFR\x00\x01", 6));
  CHECK(!cjrt_is_mlir_bytecode("ML\xEF", 3));
  e = NULL;
  err = cjrt_compile(c, "ML\xEFR\x00\x01", 6, NULL, &e);
  CHECK(err && strstr(cjrt_error_message(err), "fake: unknown program"));
  cjrt_error_free(err);
  err = cjrt_compile(c, "abc\0xyz", 7, NULL, &e);
  CHECK(err && strstr(cjrt_error_message(err), "neither MLIR text nor MLIR bytecode"));
  cjrt_error_free(err);
  err = cjrt_compile(c, "add", 4, NULL, &e); /* with its NUL: still text */
  CHECK_MSG(!err, "%s", cjrt_error_message(err));
  cjrt_error_free(err);
  cjrt_executable_free(e);
  err = cjrt_compile_file(c, "/nonexistent/prog.mlir", NULL, &e);
  CHECK(err && cjrt_error_code(err) == CJRT_NOT_FOUND && strstr(cjrt_error_message(err), "cannot open"));
  cjrt_error_free(err);
  /* an explicit device assignment: 2 replicas x 3 partitions, replica-major */
  int64_t ids[6] = {7, 7, 7, 7, 7, 7};
  cjrt_compile_options o = {.num_replicas = 2, .num_partitions = 3, .device_ids = ids,
                            .use_spmd_partitioning = true};
  e = NULL;
  err = cjrt_compile_text(c, "add", &o, &e);
  CHECK_MSG(!err, "%s", cjrt_error_message(err));
  cjrt_error_free(err);
  cjrt_executable_free(e);
  last(&bytes, &size, &nbuf, &nev, &nexe);
  cs = cj_compile_options_read(bytes, size, &st);
  CHECK_MSG(!cs, "%s", cj_status_message(cs));
  if (!cs) {
    CHECK_EQ_INT(st.opts.num_replicas, 2);
    CHECK_EQ_INT(st.opts.num_partitions, 3);
    CHECK(st.opts.use_spmd_partitioning);
    CHECK(st.opts.device_assignment && st.ndevices == 6 && st.devices[5] == 7);
    cj_compile_options_storage_free(&st);
  }
  cj_status_free(cs);
  /* distinct ids must land in their slots: the same check against a plugin with 6 devices is in
   * the encoder itself; here the order is checked byte by byte for one replica, one partition */
  cjrt_compile_options one = {.device_ids = ids};
  e = NULL;
  CHECK(!cjrt_compile_text(c, "add", &one, &e));
  cjrt_executable_free(e);
  last(&bytes, &size, &nbuf, &nev, &nexe);
  static const unsigned char want[] = {
      0x1a, 0x1a,                                                       /* build options, 26 bytes */
      0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01, /* device_ordinal -1 */
      0x20, 0x01, 0x28, 0x01,                                           /* replicas 1, partitions 1 */
      0x4a, 0x09, 0x08, 0x01, 0x10, 0x01, 0x1a, 0x03, 0x0a, 0x01, 0x07}; /* assignment [[7]] */
  CHECK_EQ_INT(size, sizeof want);
  CHECK(size == sizeof want && !memcmp(bytes, want, size));
  cjrt_client_free(c);
  cjrt_plugin_close(p);
  last(&bytes, &size, &nbuf, &nev, &nexe);
  CHECK_EQ_INT(nbuf, 0);
  CHECK_EQ_INT(nev, 0);
  CHECK_EQ_INT(nexe, 0);
  if (h) dlclose(h);
}

static void test_short(const char *path) {
  /* declares 0.60 with a table ending at PJRT_Compile: slots past it hold garbage */
  cjrt_plugin *p = NULL;
  cjrt_error *e = cjrt_plugin_open(path, &p);
  CHECK_MSG(!e, "%s", cjrt_error_message(e));
  cjrt_error_free(e);
  if (!p) return;
  CHECK_EQ_INT(cjrt_plugin_api_minor(p), 60);
  CHECK(cjrt_plugin_has(p, "PJRT_Client_Compile"));
  CHECK(!cjrt_plugin_has(p, "PJRT_Client_CreateViewOfDeviceBuffer"));
  CHECK(!cjrt_plugin_has(p, "PJRT_Executable_OutputElementTypes"));
  cjrt_client *c = NULL;
  e = cjrt_client_create(p, NULL, 0, &c);
  CHECK_MSG(!e, "%s", cjrt_error_message(e));
  cjrt_error_free(e);
  if (c) {
    float data[1] = {1};
    int64_t dims[1] = {1};
    cjrt_buffer *b = NULL;
    e = cjrt_buffer_view(c, NULL, CJRT_F32, dims, 1, data, NULL, NULL, &b);
    CHECK(e && cjrt_error_code(e) == CJRT_UNIMPLEMENTED);
    if (e)
      CHECK_CONTAINS(cjrt_error_message(e),
                     "PJRT_Client_CreateViewOfDeviceBuffer: the plugin");
    if (e) CHECK_CONTAINS(cjrt_error_message(e), "(PJRT C API 0.60) does not provide this function");
    cjrt_error_free(e);
    cjrt_client_free(c);
  }
  cjrt_plugin_close(p);
}

static void test_search(const char *ok_path) {
  char *abs = realpath(ok_path, NULL);
  if (!abs) {
    CHECK_MSG(0, "realpath %s", ok_path);
    return;
  }
  char *dir_copy = strdup(abs);
  const char *dir = dirname(dir_copy);
  /* by name, through CJRT_PLUGIN_PATH: the file is pjrt_c_api_fakeok_plugin.so */
  setenv("CJRT_PLUGIN_PATH", "/nonexistent-dir:", 1);
  char *found = NULL;
  cjrt_error *e = cjrt_plugin_find("fakeok", &found);
  CHECK(e && cjrt_error_code(e) == CJRT_NOT_FOUND);
  if (e) CHECK_CONTAINS(cjrt_error_message(e), "no PJRT plugin named 'fakeok'");
  if (e) CHECK_CONTAINS(cjrt_error_message(e), "/nonexistent-dir");
  cjrt_error_free(e);
  char pathvar[4096];
  snprintf(pathvar, sizeof pathvar, "/nonexistent-dir:%s", dir);
  setenv("CJRT_PLUGIN_PATH", pathvar, 1);
  e = cjrt_plugin_find("fakeok", &found);
  CHECK_MSG(!e, "%s", cjrt_error_message(e));
  if (found) CHECK_CONTAINS(found, "pjrt_c_api_fakeok_plugin.so");
  cjrt_free(found);
  found = NULL;
  cjrt_plugin *p = NULL;
  e = cjrt_plugin_open("fakeok", &p);
  CHECK_MSG(!e, "%s", cjrt_error_message(e));
  if (p) CHECK_EQ_STR(cjrt_plugin_path(p), abs);
  cjrt_plugin_close(p);
  cjrt_error_free(e);
  unsetenv("CJRT_PLUGIN_PATH");
  /* JAX's variable */
  snprintf(pathvar, sizeof pathvar, "other:/x/y.so,FakeJax:%s", abs);
  setenv("PJRT_NAMES_AND_LIBRARY_PATHS", pathvar, 1);
  e = cjrt_plugin_find("fakejax", &found);
  CHECK_MSG(!e && found && !strcmp(found, abs), "%s", cjrt_error_message(e));
  cjrt_error_free(e);
  cjrt_free(found);
  unsetenv("PJRT_NAMES_AND_LIBRARY_PATHS");
  /* PJRT_PLUGIN_LIBRARY_PATH naming a file serves any name */
  setenv("PJRT_PLUGIN_LIBRARY_PATH", abs, 1);
  found = NULL;
  e = cjrt_plugin_find("anything", &found);
  CHECK_MSG(!e && found && !strcmp(found, abs), "%s", cjrt_error_message(e));
  cjrt_error_free(e);
  cjrt_free(found);
  unsetenv("PJRT_PLUGIN_LIBRARY_PATH");
  e = cjrt_plugin_find("a/b", &found);
  CHECK(e && cjrt_error_code(e) == CJRT_INVALID_ARGUMENT);
  cjrt_error_free(e);
  free(dir_copy);
  free(abs);
}

int main(int argc, char **argv) {
  if (argc < 9) {
    fprintf(stderr, "usage: %s OK MAJOR1 MINOR40 SHORT NOSYM INITFAILS NULLAPI NOT_A_LIBRARY\n", argv[0]);
    return 2;
  }
  test_ok(argv[1]);
  test_execute(argv[1]);
  expect_open_error(argv[2], CJRT_FAILED_PRECONDITION, "implements PJRT C API 1.114");
  expect_open_error(argv[2], CJRT_FAILED_PRECONDITION, "major versions must be equal");
  expect_open_error(argv[3], CJRT_FAILED_PRECONDITION, "PJRT C API 0.40; libcjrt drives plugins from 0.57 on");
  test_short(argv[4]);
  expect_open_error(argv[5], CJRT_INVALID_ARGUMENT, "is not a PJRT plugin: it has no GetPjrtApi symbol");
  expect_open_error(argv[6], CJRT_INTERNAL, "fake initialization failure");
  /* a failed Initialize is reported again, and not run again */
  expect_open_error(argv[6], CJRT_INTERNAL, "PJRT_Plugin_Initialize: fake initialization failure");
  {
    void *h = dlopen(argv[6], RTLD_LAZY | RTLD_NOLOAD);
    CHECK(h != NULL);
    if (h) {
      const PJRT_Api *(*get)(void) = (const PJRT_Api *(*)(void))dlsym(h, "fake_api_table");
      PJRT_Plugin_Attributes_Args a = {.struct_size = PJRT_Plugin_Attributes_Args_STRUCT_SIZE};
      if (get && !get()->PJRT_Plugin_Attributes(&a)) CHECK_EQ_INT(a.attributes[0].int64_value, 1);
      dlclose(h);
    }
  }
  expect_open_error(argv[7], CJRT_FAILED_PRECONDITION, "GetPjrtApi() returned NULL");
  expect_open_error(argv[8], CJRT_NOT_FOUND, "cannot load plugin");
  expect_open_error("/nonexistent/libfoo.so", CJRT_NOT_FOUND, "does not exist");
  expect_open_error("/tmp", CJRT_INVALID_ARGUMENT, "is a directory");
  expect_open_error("no-such-plugin-name", CJRT_NOT_FOUND, "no PJRT plugin named 'no-such-plugin-name'");
  test_search(argv[1]);
  cjrt_error_free(NULL);
  CHECK(cjrt_error_code(NULL) == CJRT_OK);
  CHECK_EQ_STR(cjrt_error_message(NULL), "");
  return check_report("loader_fake");
}
