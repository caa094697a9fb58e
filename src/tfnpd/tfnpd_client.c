/* The PJRT client TensorFlow runs CJRT's programs with.
 *
 * TensorFlow 2.21 looks a next pluggable device's client up by device type in its global
 * resource manager, and when there is none, asks its client-factory registry, which has
 * factories for CPU and GPU only ("The PJRT client factory of `CJRT` is not registered"). A
 * plugin is meant to create and set its client from TFNPD_InitPluginInternalDeviceStates with the
 * C function TF_CreateAndSetPjRtCApiClient, but the tensorflow-cpu wheel does not contain that
 * function. Its two steps are exported as C++ functions of libtensorflow_cc.so.2, though:
 * xla::GetCApiClient (a client over the PJRT C API that TensorFlow registered for "CJRT", which
 * is this plugin's GetPjrtApi) and tensorflow::SetPjRtClientInTFGlobalResourceManager; and
 * TensorFlow's XLA kernels need the device's compilation device registered in XlaOpRegistry,
 * which TensorFlow does not do for a next pluggable device either. They are
 * called here by their mangled names, from C, with the Itanium C++ ABI of x86-64 (libstdc++,
 * Abseil LTS 2025-08-14, as in TensorFlow 2.21's wheel). The Abseil version is part of the
 * names, so a TensorFlow built otherwise fails the lookup and is told so, instead of being
 * called with the wrong layout. docs/TENSORFLOW.md has the details. */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "tfnpd/tfnpd.h"

/* The C++ objects crossing the calls, as the ABI lays them out.
 * absl::Status: one word, 1 when OK (a code inlined as code << 2 | 1, else a pointer to a
 * reference-counted record); absl::StatusOr<T*> and StatusOr<unique_ptr<T>>: the status, then
 * the pointer; std::string (libstdc++): pointer, length, 16 bytes of local storage;
 * std::shared_ptr: two pointers; an empty absl::flat_hash_map<std::string, xla::PjRtValueType>:
 * 32 zero bytes. All of them are returned through a hidden pointer (first argument) and passed
 * by value as a pointer to the caller's copy, being non-trivial; std::string_view goes in two
 * registers (length, pointer). */
typedef struct cxx_statusor {
  uintptr_t rep;
  void *value;
} cxx_statusor;
typedef struct cxx_string {
  const char *ptr;
  size_t len;
  char local[16];
} cxx_string;
typedef struct cxx_shared_ptr {
  void *ptr, *count;
} cxx_shared_ptr;
typedef struct cxx_empty_map {
  unsigned char bytes[32];
} cxx_empty_map;

#define ABSL_OK_REP ((uintptr_t)1)

static const char get_client_sym[] =
    "_ZN10tensorflow13GetPjRtClientERKN3tsl10DeviceTypeE";
static const char get_capi_client_sym[] =
    "_ZN3xla13GetCApiClientESt17basic_string_viewIcSt11char_traitsIcEERKN4absl12lts_2025081413"
    "flat_hash_mapINSt7__cxx1112basic_stringIcS2_SaIcEEESt7variantIJSA_blSt6vectorIlSaIlEEfEENS5_"
    "18container_internal10StringHashENSG_8StringEqESaISt4pairIKSA_SF_EEEESt10shared_ptrINS_"
    "22KeyValueStoreInterfaceEE";
static const char set_client_sym[] =
    "_ZN10tensorflow38SetPjRtClientInTFGlobalResourceManagerERKN3tsl10DeviceTypeESt10unique_"
    "ptrIN3xla10PjRtClientESt14default_deleteIS6_EE";

static const char register_device_sym[] =
    "_ZN10tensorflow13XlaOpRegistry25RegisterCompilationDeviceERKNSt7__cxx1112basic_stringIcSt11"
    "char_traitsIcESaIcEEERKNS0_18DeviceRegistrationE";

/* tensorflow::XlaOpRegistry::DeviceRegistration: the compilation device's name, the
 * autoclustering policy (an int enum; 0 = only where explicitly requested, as by jit_compile),
 * then nine flags, all false here. */
typedef struct cxx_device_registration {
  cxx_string compilation_device_name;
  int autoclustering_policy;
  bool flags[9];
} cxx_device_registration;

typedef void register_device_fn(const cxx_string *device_name,
                                const cxx_device_registration *registration);
typedef void get_client_fn(cxx_statusor *ret, const cxx_string *device_type);
typedef void get_capi_client_fn(cxx_statusor *ret, size_t name_len, const char *name,
                                const cxx_empty_map *options, cxx_shared_ptr *kv_store);
typedef void set_client_fn(uintptr_t *ret, const cxx_string *device_type, void **client);

static CJ_MUST_USE cj_status lookup(const char *name, const char *what, void **fn) {
  *fn = dlsym(RTLD_DEFAULT, name);
  if (!*fn) {
    void *lib = dlopen("libtensorflow_cc.so.2", RTLD_LAZY | RTLD_NOLOAD);
    if (lib) *fn = dlsym(lib, name);
  }
  if (!*fn)
    return cj_status_make(CJ_UNIMPLEMENTED,
                          "%s (%s) is not in this process: cjrt creates the PJRT client for "
                          "TensorFlow 2.21's x86-64 wheel (Abseil LTS 2025-08-14) only",
                          what, name);
  return NULL;
}

/* Deletes a PjRtClient through its virtual deleting destructor (the second slot: ~PjRtClient is
 * the class's first virtual function). */
static void delete_client(void *client) {
  if (!client) return;
  void (**vtable)(void *) = *(void (***)(void *))client;
  vtable[1](client);
}

/* *out = a std::string holding s (short strings only: they live in the object itself). */
static CJ_MUST_USE cj_status short_string(const char *s, cxx_string *out) {
  size_t n = strlen(s);
  if (n >= sizeof out->local) return cj_status_make(CJ_INTERNAL, "'%s' is too long", s);
  memset(out, 0, sizeof *out);
  memcpy(out->local, s, n);
  out->ptr = out->local;
  out->len = n;
  return NULL;
}

#if defined(__x86_64__)
/* TensorFlow's XLA kernels (_XlaCompile, XlaLaunch) on a device look its compilation device up
 * in XlaOpRegistry ("No JIT device registered for CJRT" otherwise); a next pluggable device's
 * is not registered by TensorFlow. */
static CJ_MUST_USE cj_status register_compilation_device(const char *device_type,
                                                         const char *compilation_device) {
  register_device_fn *register_device;
  CJ_RETURN_IF_ERROR(lookup(register_device_sym, "tensorflow::XlaOpRegistry::"
                            "RegisterCompilationDevice", (void **)&register_device));
  cxx_string name;
  cxx_device_registration reg;
  memset(&reg, 0, sizeof reg);
  CJ_RETURN_IF_ERROR(short_string(device_type, &name));
  CJ_RETURN_IF_ERROR(short_string(compilation_device, &reg.compilation_device_name));
  register_device(&name, &reg);
  return NULL;
}

static CJ_MUST_USE cj_status create_and_set(const char *device_type, TF_Status *status,
                                            bool *reported) {
  get_client_fn *get_client;
  get_capi_client_fn *get_capi_client;
  set_client_fn *set_client;
  CJ_RETURN_IF_ERROR(lookup(get_client_sym, "tensorflow::GetPjRtClient", (void **)&get_client));
  CJ_RETURN_IF_ERROR(lookup(get_capi_client_sym, "xla::GetCApiClient", (void **)&get_capi_client));
  CJ_RETURN_IF_ERROR(lookup(set_client_sym, "tensorflow::SetPjRtClientInTFGlobalResourceManager",
                            (void **)&set_client));
  cxx_string type;
  CJ_RETURN_IF_ERROR(short_string(device_type, &type));
  size_t n = type.len;

  cxx_statusor found = {0, NULL};
  get_client(&found, &type);
  if (found.rep == ABSL_OK_REP) return NULL; /* TensorFlow has one already */
  tfnpd_discard_cxx_status(found.rep);      /* NotFound: make it */

  cxx_empty_map options;
  memset(&options, 0, sizeof options);
  cxx_shared_ptr kv = {NULL, NULL};
  cxx_statusor made = {0, NULL};
  get_capi_client(&made, n, device_type, &options, &kv);
  if (made.rep != ABSL_OK_REP) {
    *reported = tfnpd_take_cxx_status(status, made.rep);
    return cj_status_make(CJ_INTERNAL, "xla::GetCApiClient(\"%s\") failed", device_type);
  }
  void *client = made.value;
  uintptr_t set = 0;
  set_client(&set, &type, &client);
  delete_client(client); /* NULL unless TensorFlow refused it (it then was not moved) */
  if (set != ABSL_OK_REP) {
    *reported = tfnpd_take_cxx_status(status, set);
    return cj_status_make(CJ_INTERNAL, "SetPjRtClientInTFGlobalResourceManager failed");
  }
  return NULL;
}
#else
static CJ_MUST_USE cj_status register_compilation_device(const char *device_type,
                                                         const char *compilation_device) {
  return cj_status_make(CJ_UNIMPLEMENTED, "registering CJRT's XLA compilation device with "
                        "TensorFlow is implemented for x86-64 only");
}
static CJ_MUST_USE cj_status create_and_set(const char *device_type, TF_Status *status,
                                            bool *reported) {
  return cj_status_make(CJ_UNIMPLEMENTED,
                        "creating TensorFlow's PJRT client is implemented for x86-64 only");
}
#endif

void tfnpd_create_client(const char *device_type, const char *compilation_device,
                         TF_Status *status) {
  bool reported = false;
  cj_status st = register_compilation_device(device_type, compilation_device);
  if (!st) st = create_and_set(device_type, status, &reported);
  if (st && reported) { /* TensorFlow's own status is in *status already; say where on stderr */
    fprintf(stderr, "cjrt tfnpd: %s\n", cj_status_message(st));
    cj_status_free(st);
    return;
  }
  if (st) st = cj_status_annotate(st, "cjrt: creating the PJRT client for TensorFlow");
  tfnpd_report(status, st);
}
