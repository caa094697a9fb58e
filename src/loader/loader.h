/* libcjrt internals: the objects behind the public handles, and calling a plugin's slots safely.
 *
 * Every call into a plugin goes through CJRT_PJRT(lib, PJRT_Name, &args): it checks that the
 * plugin's table is large enough to hold the slot (a plugin built against an older minor has a
 * shorter table) and that the slot is filled, then turns a returned PJRT_Error into a cjrt_error
 * whose message starts with the slot's name and which keeps the plugin's code. */
#ifndef CJRT_LOADER_LOADER_H
#define CJRT_LOADER_LOADER_H

#include <stdatomic.h>
#include <stddef.h>

#include "cjrt/array.h"
#include "cjrt/cjrt.h"
#include "cjrt/dlpack.h"
#include "loader/util.h"
#include "pjrt_c_api.h"

#pragma GCC visibility push(hidden)

/* One loaded library; lives for the rest of the process. */
typedef struct cjrt_lib {
  struct cjrt_lib *next;
  void *handle;
  const PJRT_Api *api;
  char *path;
  int major, minor;
  cjrt_value *attrs;
  size_t num_attrs;
  void *attr_storage; /* strings and lists of attrs */
  cjrt_error *init_error; /* PJRT_Plugin_Initialize's failure, reported on every open */
} cjrt_lib;

struct cjrt_plugin {
  atomic_long refs;
  cjrt_lib *lib;
};

struct cjrt_memory {
  cjrt_client *client;
  PJRT_Memory *raw;
  int id, kind_id;
  char *kind, *debug_string, *to_string;
  cjrt_device **devices;
  size_t num_devices;
};

struct cjrt_device {
  cjrt_client *client;
  PJRT_Device *raw;
  int64_t id;
  int process_index, local_hardware_id;
  bool addressable;
  char *kind, *debug_string, *to_string;
  cjrt_value *attrs;
  size_t num_attrs;
  void *attr_storage;
  cjrt_memory **memories;
  size_t num_memories;
  cjrt_memory *default_memory;
};

struct cjrt_client {
  atomic_long refs;
  cjrt_plugin *plugin;
  cjrt_lib *lib;
  PJRT_Client *raw;
  char *platform_name, *platform_version;
  int process_index;
  cjrt_device *devices; /* num_devices structs */
  size_t num_devices;
  cjrt_device **addressable;
  size_t num_addressable;
  cjrt_memory **memories; /* every memory seen (client's and devices') */
  size_t num_memories;
  cjrt_memory **client_memories; /* PJRT_Client_AddressableMemories */
  size_t num_client_memories;
  atomic_int on_cpu; /* -1 unknown, 0/1: whether its buffers live in host memory */
};

struct cjrt_executable {
  cjrt_client *client;
  PJRT_LoadedExecutable *raw;
  char *name, *fingerprint;
  size_t num_outputs;
  cjrt_device **devices;
  size_t num_devices;
  cjrt_dtype *out_dtypes;  /* num_outputs, or NULL */
  int *out_ranks;          /* num_outputs (-1 unknown) */
  int64_t **out_dims;      /* num_outputs */
};

struct cjrt_buffer {
  atomic_long refs;
  cjrt_client *client;
  PJRT_Buffer *raw;
  cjrt_dtype dtype;
  size_t rank;
  int64_t *dims;
  cjrt_device *device;
};

/* ---- calling slots ---- */
bool cjrt__lib_has(const cjrt_lib *lib, size_t offset);
cjrt_error *cjrt__missing(const cjrt_lib *lib, const char *slot);
/* Converts and destroys a PJRT_Error (NULL -> NULL). */
cjrt_error *cjrt__from_pjrt(const cjrt_lib *lib, PJRT_Error *e, const char *slot);
#define CJRT_HAS(lib, fn) cjrt__lib_has((lib), offsetof(PJRT_Api, fn))
#define CJRT_PJRT(lib, fn, argsp)                                                        \
  (CJRT_HAS(lib, fn) ? cjrt__from_pjrt((lib), (lib)->api->fn(argsp), #fn)                \
                     : cjrt__missing((lib), #fn))
/* Waits for an event and destroys it; the event's error, if any. NULL event: NULL. */
cjrt_error *cjrt__await_event(const cjrt_lib *lib, PJRT_Event *ev, const char *what);
void cjrt__destroy_event(const cjrt_lib *lib, PJRT_Event *ev);

/* Copies PJRT named values into owned cjrt_values (one allocation in *storage). */
cjrt_error *cjrt__copy_named_values(const PJRT_NamedValue *nv, size_t n, cjrt_value **out,
                                    void **storage);
char *cjrt__strndup(const char *s, size_t n); /* NULL s -> "" ; NULL only on OOM */

/* ---- objects ---- */
cjrt_plugin *cjrt__plugin_retain(cjrt_plugin *p);
cjrt_client *cjrt__client_retain(cjrt_client *c);
void cjrt__client_release(cjrt_client *c);
cjrt_device *cjrt__client_find_device(const cjrt_client *c, PJRT_Device *raw);
/* The wrappers of devices raw[0..n) into a new array *out (*nout of them): a device the client
 * does not list is skipped when `missing` is NULL, else an INTERNAL error with that message. */
cjrt_error *cjrt__client_map_devices(const cjrt_client *c, PJRT_Device *const *raw, size_t n,
                                     const char *missing, cjrt_device ***out, size_t *nout);
cjrt_device *cjrt__default_device(cjrt_client *c, cjrt_device *d, cjrt_error **err);
/* Wraps a PJRT buffer (takes it: destroyed on failure), reading its type, dims and device. */
cjrt_error *cjrt__wrap_buffer(cjrt_client *c, PJRT_Buffer *raw, cjrt_buffer **out);
/* Whether the client's buffers live in host memory (probed once with a tiny buffer). */
bool cjrt__client_on_cpu(cjrt_client *c);

#pragma GCC visibility pop

#endif
