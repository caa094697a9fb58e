/* libcjrt: the framework side of PJRT. Load any PJRT plugin (ours or a vendor's), create a client,
 * compile StableHLO, move arrays in and out, and execute, from C in a few lines:
 *
 *   cjrt_plugin *p; cjrt_client *c; cjrt_executable *e; cjrt_buffer *in, *out;
 *   cjrt_plugin_open("cjrt", &p);                      // by name, or a path to the .so
 *   cjrt_client_create(p, NULL, 0, &c);
 *   cjrt_compile_file(c, "prog.mlir", NULL, &e);
 *   cjrt_buffer_from_host(c, NULL, CJRT_F32, dims, 2, data, NULL, &in);
 *   cjrt_execute(e, &in, 1, &out);  cjrt_buffer_to_host(out, host, sizeof host);
 *
 * (every call returns a cjrt_error*, NULL on success; see examples/readme_example.c).
 *
 * ---- Ownership: the rules, once ----
 * - A function that can fail returns `cjrt_error *`: NULL means success; a non-NULL error is owned
 *   by the caller and freed with cjrt_error_free(). On failure every out-parameter is set to its
 *   empty value (NULL / 0) on entry and stays so: nothing is leaked or half-made.
 * - Functions named *_open, *_create, *_compile*, *_from_*, *_copy_*, *_retain and cjrt_execute*
 *   hand out OWNED objects: release each with its *_close / *_free function exactly once.
 * - Accessors (names, devices, memories, dims, attributes) return BORROWED pointers that live as
 *   long as the object they were read from (devices and memories: as long as their client).
 * - Objects keep what they need alive: a client holds its plugin, buffers and executables hold
 *   their client. So they may be freed in any order (convenient for garbage-collected callers);
 *   the PJRT client is destroyed when the last object using it is freed.
 * - Input pointers (data, dims, options, program bytes) are only read during the call, except where
 *   a function says it keeps them (cjrt_buffer_view).
 * - Plugins are loaded once per process and never unloaded (as frameworks do): PJRT_Plugin_Initialize
 *   runs once per library, however many times it is opened.
 * - Thread safety: separate objects may be used from separate threads; one buffer, executable or
 *   client may be used from several threads at once as far as the plugin allows (PJRT plugins are
 *   thread safe). Reference counts are atomic.
 * - Memory that cjrt returns as `char *` or `void *` to be freed by the caller is freed with
 *   cjrt_free().
 */
#ifndef CJRT_CJRT_H
#define CJRT_CJRT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define CJRT_API __attribute__((visibility("default")))
#else
#define CJRT_API
#endif

#define CJRT_VERSION_MAJOR 0
#define CJRT_VERSION_MINOR 1
#define CJRT_VERSION_PATCH 0

/* The PJRT objects underneath (declared in pjrt_c_api.h) for callers who go beyond this API. */
struct PJRT_Api;
struct PJRT_Client;
struct PJRT_Device;
struct PJRT_Memory;
struct PJRT_Buffer;
struct PJRT_LoadedExecutable;

/* ================================ errors ================================ */

/* The codes are absl's, equal to PJRT_Error_Code. */
typedef enum cjrt_code {
  CJRT_OK = 0,
  CJRT_CANCELLED = 1,
  CJRT_UNKNOWN = 2,
  CJRT_INVALID_ARGUMENT = 3,
  CJRT_DEADLINE_EXCEEDED = 4,
  CJRT_NOT_FOUND = 5,
  CJRT_ALREADY_EXISTS = 6,
  CJRT_PERMISSION_DENIED = 7,
  CJRT_RESOURCE_EXHAUSTED = 8,
  CJRT_FAILED_PRECONDITION = 9,
  CJRT_ABORTED = 10,
  CJRT_OUT_OF_RANGE = 11,
  CJRT_UNIMPLEMENTED = 12,
  CJRT_INTERNAL = 13,
  CJRT_UNAVAILABLE = 14,
  CJRT_DATA_LOSS = 15,
  CJRT_UNAUTHENTICATED = 16,
} cjrt_code;

typedef struct cjrt_error cjrt_error;

CJRT_API cjrt_code cjrt_error_code(const cjrt_error *err);           /* CJRT_OK for NULL */
CJRT_API const char *cjrt_error_message(const cjrt_error *err);      /* "" for NULL */
CJRT_API void cjrt_error_free(cjrt_error *err);                      /* NULL is fine */
CJRT_API const char *cjrt_code_name(cjrt_code code);                 /* "INVALID_ARGUMENT" */
/* Makes an error (for callers that build on libcjrt and want one error type). */
CJRT_API cjrt_error *cjrt_error_make(cjrt_code code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* Frees memory that cjrt handed to the caller as char* / void* (formatted text, files, ...). */
CJRT_API void cjrt_free(void *p);

/* ================================ element types ================================ */

/* The values are PJRT_Buffer_Type's. Host arrays hold sub-byte types (S4, U4, S2, U2, S1, U1, F4,
 * F6) one element per byte, value in the low bits, as ml_dtypes and PJRT host buffers do. */
typedef enum cjrt_dtype {
  CJRT_INVALID = 0,
  CJRT_PRED = 1,
  CJRT_S8 = 2,
  CJRT_S16 = 3,
  CJRT_S32 = 4,
  CJRT_S64 = 5,
  CJRT_U8 = 6,
  CJRT_U16 = 7,
  CJRT_U32 = 8,
  CJRT_U64 = 9,
  CJRT_F16 = 10,
  CJRT_F32 = 11,
  CJRT_F64 = 12,
  CJRT_BF16 = 13,
  CJRT_C64 = 14,
  CJRT_C128 = 15,
  CJRT_F8E5M2 = 16,
  CJRT_F8E4M3FN = 17,
  CJRT_F8E4M3B11FNUZ = 18,
  CJRT_F8E5M2FNUZ = 19,
  CJRT_F8E4M3FNUZ = 20,
  CJRT_S4 = 21,
  CJRT_U4 = 22,
  CJRT_TOKEN = 23,
  CJRT_S2 = 24,
  CJRT_U2 = 25,
  CJRT_F8E4M3 = 26,
  CJRT_F8E3M4 = 27,
  CJRT_F8E8M0FNU = 28,
  CJRT_F4E2M1FN = 29,
  CJRT_S1 = 30,
  CJRT_U1 = 31,
  CJRT_F6E2M3FN = 32,
  CJRT_F6E3M2FN = 33,
  CJRT_DTYPE_COUNT = 34 /* one past the last */
} cjrt_dtype;

/* The short name: "pred", "s8".."u64", "f16", "f32", "f64", "bf16", "c64", "c128", "f8e5m2",
 * "f8e4m3fn", ..., "s4", "u4", "token"; "invalid" for unknown codes. */
CJRT_API const char *cjrt_dtype_name(cjrt_dtype dt);
/* The MLIR spelling ("i1", "i32", "ui8", "f8E4M3FN", "complex<f32>"); NULL for token/invalid. */
CJRT_API const char *cjrt_dtype_mlir_name(cjrt_dtype dt);
/* Bytes per element in a host array (1 for sub-byte types); 0 for TOKEN and INVALID. */
CJRT_API size_t cjrt_dtype_size(cjrt_dtype dt);
/* Logical bits per element (4 for S4, 1 for PRED). */
CJRT_API int cjrt_dtype_bits(cjrt_dtype dt);
/* Accepts the short name, the MLIR spelling, numpy/ml_dtypes names ("float32", "bfloat16",
 * "float8_e4m3fn", "int4", "bool", "complex64"), "i32"-style and "s32"-style integer names,
 * case-insensitively. CJRT_INVALID if none. */
CJRT_API cjrt_dtype cjrt_dtype_from_name(const char *name);

/* ================================ named values ================================ */

/* A named value, as PJRT_NamedValue: plugin attributes, device attributes, client options. */
typedef enum cjrt_value_kind {
  CJRT_VALUE_STRING = 0,
  CJRT_VALUE_INT64 = 1,
  CJRT_VALUE_INT64_LIST = 2,
  CJRT_VALUE_FLOAT = 3,
  CJRT_VALUE_BOOL = 4,
} cjrt_value_kind;

typedef struct cjrt_value {
  const char *name;           /* NUL-terminated */
  cjrt_value_kind kind;
  const char *string_value;   /* STRING (NUL-terminated; `size` bytes) */
  int64_t int64_value;        /* INT64 */
  const int64_t *int64_list;  /* INT64_LIST (`size` entries) */
  float float_value;          /* FLOAT (PJRT floats are 32-bit) */
  bool bool_value;            /* BOOL */
  size_t size;                /* string length or list length */
} cjrt_value;

/* Convenience constructors for option arrays (they only store the pointers given). */
CJRT_API cjrt_value cjrt_value_int64(const char *name, int64_t v);
CJRT_API cjrt_value cjrt_value_string(const char *name, const char *v);
CJRT_API cjrt_value cjrt_value_bool(const char *name, bool v);
CJRT_API cjrt_value cjrt_value_float(const char *name, float v);
CJRT_API cjrt_value cjrt_value_int64_list(const char *name, const int64_t *v, size_t n);
/* Parses "name=value" (value: an integer, a float with '.', 'e' or "inf", true/false, a list
 * "[1,2,3]", else a string) into *out, whose pointers point into `text` and into `storage`
 * (an int64 list of up to storage_len entries). For command lines. */
CJRT_API cjrt_error *cjrt_value_parse(char *text, int64_t *storage, size_t storage_len,
                                      cjrt_value *out);

/* ================================ plugins ================================ */

typedef struct cjrt_plugin cjrt_plugin;

/* Opens a plugin by path (anything containing '/', or ending in ".so") or by name.
 * A name ("cjrt", "cpu", "cuda") is looked up, in order:
 *   1. $PJRT_NAMES_AND_LIBRARY_PATHS, JAX's "name1:path1,name2:path2" list;
 *   2. in each directory of $CJRT_PLUGIN_PATH and then $PJRT_PLUGIN_LIBRARY_PATH (colon-separated;
 *      a $PJRT_PLUGIN_LIBRARY_PATH entry naming a file is used for any name), then the directory
 *      holding libcjrt itself and its ../lib, the files
 *        pjrt_c_api_<name>_plugin.so, pjrt_plugin_<name>.so, libpjrt_<name>.so,
 *        xla_<name>_plugin.so, lib<name>.so, <name>.so;
 *   3. the dynamic linker's own search ($LD_LIBRARY_PATH, the system paths) for the same names.
 * NULL means $CJRT_PLUGIN if set, else the name "cjrt".
 * The library is loaded once per process; its GetPjrtApi table is checked: the major version must
 * equal PJRT_API_MAJOR, the table must be at least as large as the core slots (minor >= 57, where
 * the table's order was fixed); a plugin with an older minor is used only through the slots its
 * struct_size covers (a missing slot is an UNIMPLEMENTED error naming it); a newer one is fine.
 * PJRT_Plugin_Initialize then runs once per library. Errors name the path and what was wrong. */
CJRT_API cjrt_error *cjrt_plugin_open(const char *path_or_name, cjrt_plugin **out);
/* Only the name search of cjrt_plugin_open: the path found (owned; cjrt_free), or NOT_FOUND
 * listing every place tried. */
CJRT_API cjrt_error *cjrt_plugin_find(const char *name, char **out_path);
CJRT_API void cjrt_plugin_close(cjrt_plugin *p); /* NULL is fine */
CJRT_API const char *cjrt_plugin_path(const cjrt_plugin *p);
CJRT_API int cjrt_plugin_api_major(const cjrt_plugin *p);
CJRT_API int cjrt_plugin_api_minor(const cjrt_plugin *p);
/* The version libcjrt was built against (PJRT_API_MAJOR/MINOR). */
CJRT_API int cjrt_api_major(void);
CJRT_API int cjrt_api_minor(void);
/* PJRT_Plugin_Attributes, read once at open (empty if the plugin has none). */
CJRT_API size_t cjrt_plugin_num_attributes(const cjrt_plugin *p);
CJRT_API const cjrt_value *cjrt_plugin_attribute(const cjrt_plugin *p, size_t i);
/* The raw table, for calls this API does not wrap. */
CJRT_API const struct PJRT_Api *cjrt_plugin_api(const cjrt_plugin *p);
/* Whether the plugin's table has the named slot ("PJRT_Client_Compile") filled. */
CJRT_API bool cjrt_plugin_has(const cjrt_plugin *p, const char *slot_name);

/* ================================ clients, devices, memories ================================ */

typedef struct cjrt_client cjrt_client;
typedef struct cjrt_device cjrt_device;
typedef struct cjrt_memory cjrt_memory;

/* PJRT_Client_Create with the given options (copied as PJRT_NamedValues; may be NULL/0). */
CJRT_API cjrt_error *cjrt_client_create(cjrt_plugin *p, const cjrt_value *options,
                                        size_t num_options, cjrt_client **out);
CJRT_API void cjrt_client_free(cjrt_client *c); /* drops the caller's reference; NULL is fine */
CJRT_API cjrt_plugin *cjrt_client_plugin(const cjrt_client *c);
CJRT_API const char *cjrt_client_platform_name(const cjrt_client *c);
CJRT_API const char *cjrt_client_platform_version(const cjrt_client *c);
CJRT_API int cjrt_client_process_index(const cjrt_client *c);
CJRT_API size_t cjrt_client_num_devices(const cjrt_client *c); /* all devices */
CJRT_API cjrt_device *cjrt_client_device(const cjrt_client *c, size_t i);
CJRT_API size_t cjrt_client_num_addressable_devices(const cjrt_client *c);
CJRT_API cjrt_device *cjrt_client_addressable_device(const cjrt_client *c, size_t i);
/* The device with this global id, or NULL. */
CJRT_API cjrt_device *cjrt_client_lookup_device(const cjrt_client *c, int64_t id);
CJRT_API size_t cjrt_client_num_memories(const cjrt_client *c); /* addressable memories */
CJRT_API cjrt_memory *cjrt_client_memory(const cjrt_client *c, size_t i);
CJRT_API struct PJRT_Client *cjrt_client_raw(const cjrt_client *c);

CJRT_API int64_t cjrt_device_id(const cjrt_device *d);
CJRT_API int cjrt_device_process_index(const cjrt_device *d);
CJRT_API int cjrt_device_local_hardware_id(const cjrt_device *d); /* -1 if none */
CJRT_API bool cjrt_device_is_addressable(const cjrt_device *d);
CJRT_API const char *cjrt_device_kind(const cjrt_device *d);
CJRT_API const char *cjrt_device_debug_string(const cjrt_device *d);
CJRT_API const char *cjrt_device_to_string(const cjrt_device *d);
CJRT_API size_t cjrt_device_num_attributes(const cjrt_device *d);
CJRT_API const cjrt_value *cjrt_device_attribute(const cjrt_device *d, size_t i);
CJRT_API size_t cjrt_device_num_memories(const cjrt_device *d);
CJRT_API cjrt_memory *cjrt_device_memory(const cjrt_device *d, size_t i);
CJRT_API cjrt_memory *cjrt_device_default_memory(const cjrt_device *d); /* NULL if none */
/* PJRT_Device_MemoryStats: bytes in use (-1 when the plugin does not say). */
CJRT_API cjrt_error *cjrt_device_bytes_in_use(const cjrt_device *d, int64_t *out);
CJRT_API struct PJRT_Device *cjrt_device_raw(const cjrt_device *d);

CJRT_API int cjrt_memory_id(const cjrt_memory *m);
CJRT_API const char *cjrt_memory_kind(const cjrt_memory *m);
CJRT_API int cjrt_memory_kind_id(const cjrt_memory *m);
CJRT_API const char *cjrt_memory_debug_string(const cjrt_memory *m);
CJRT_API const char *cjrt_memory_to_string(const cjrt_memory *m);
CJRT_API size_t cjrt_memory_num_devices(const cjrt_memory *m);
CJRT_API cjrt_device *cjrt_memory_device(const cjrt_memory *m, size_t i);
CJRT_API struct PJRT_Memory *cjrt_memory_raw(const cjrt_memory *m);

/* ================================ compile ================================ */

typedef struct cjrt_executable cjrt_executable;

/* The shape an argument will have when the program runs. */
typedef struct cjrt_arg_shape {
  cjrt_dtype dtype;
  size_t rank;
  const int64_t *dims; /* rank entries */
} cjrt_arg_shape;

/* Zero-initialize it (`cjrt_compile_options o = {0};`): new fields are added at the end with
 * zero meaning "as before", so a program built against an older cjrt.h must be rebuilt (the
 * Python bindings mirror every field). */
typedef struct cjrt_compile_options {
  int64_t num_replicas;     /* 0 means 1 */
  int64_t num_partitions;   /* 0 means 1 */
  /* Global device ids, num_replicas * num_partitions of them, replica-major
   * (device_ids[r * num_partitions + p]); NULL lets the plugin choose. */
  const int64_t *device_ids;
  const char *format;       /* "mlir" (text or bytecode), "hlo", ...; NULL: "mlir" */
  bool use_spmd_partitioning;
  /* The argument shapes the program will run with, or NULL: sent as the compile options'
   * argument_layouts (dense row-major), so that a plugin can refine a shape-polymorphic
   * program (entry arguments like tensor<4x?xf32>) to them, as JAX does before compiling. */
  const cjrt_arg_shape *argument_shapes;
  size_t num_argument_shapes;
} cjrt_compile_options;

/* True when the bytes start with MLIR bytecode's magic "ML\xEFR". */
CJRT_API bool cjrt_is_mlir_bytecode(const void *code, size_t size);
/* Compiles a program (MLIR text, or MLIR bytecode / a StableHLO portable artifact, told apart by
 * the magic; both go to the plugin as format "mlir") for the client's devices. opts may be NULL. */
CJRT_API cjrt_error *cjrt_compile(cjrt_client *c, const void *code, size_t size,
                                  const cjrt_compile_options *opts, cjrt_executable **out);
CJRT_API cjrt_error *cjrt_compile_text(cjrt_client *c, const char *text,
                                       const cjrt_compile_options *opts, cjrt_executable **out);
CJRT_API cjrt_error *cjrt_compile_file(cjrt_client *c, const char *path,
                                       const cjrt_compile_options *opts, cjrt_executable **out);
CJRT_API void cjrt_executable_free(cjrt_executable *e); /* NULL is fine */
CJRT_API const char *cjrt_executable_name(const cjrt_executable *e);
CJRT_API size_t cjrt_executable_num_outputs(const cjrt_executable *e);
/* The devices it runs on (PJRT_LoadedExecutable_AddressableDevices), in argument-list order. */
CJRT_API size_t cjrt_executable_num_devices(const cjrt_executable *e);
CJRT_API cjrt_device *cjrt_executable_device(const cjrt_executable *e, size_t i);
/* Output i's element type and dims when the plugin reports them (else CJRT_INVALID / rank -1). */
CJRT_API cjrt_dtype cjrt_executable_output_dtype(const cjrt_executable *e, size_t i);
CJRT_API const int64_t *cjrt_executable_output_dims(const cjrt_executable *e, size_t i,
                                                    int *out_rank);
/* PJRT_Executable_Fingerprint (NULL if the plugin has none). */
CJRT_API const char *cjrt_executable_fingerprint(const cjrt_executable *e);
CJRT_API struct PJRT_LoadedExecutable *cjrt_executable_raw(const cjrt_executable *e);
/* PJRT_Executable_OptimizedProgram: the program as the plugin compiled it (for cjrt, MLIR text
 * of the per-device module, with mhlo.spmd_parameters_shardings / mhlo.spmd_output_sharding
 * when it was partitioned). *out_code (NUL-terminated, *out_size bytes before the NUL) and
 * *out_format (the plugin's format name, e.g. "mlir"; out_size and out_format may be NULL)
 * are owned: cjrt_free. */
CJRT_API cjrt_error *cjrt_executable_optimized_program(const cjrt_executable *e, char **out_code,
                                                      size_t *out_size, char **out_format);

/* ================================ buffers ================================ */

typedef struct cjrt_buffer cjrt_buffer;

/* Copies a host array into a new buffer on `device` (NULL: the client's first addressable
 * device). byte_strides: NULL for dense row-major, else `rank` strides in bytes (negative allowed,
 * data then points at element [0,...,0]). The host data may be reused as soon as this returns. */
CJRT_API cjrt_error *cjrt_buffer_from_host(cjrt_client *c, cjrt_device *device, cjrt_dtype dtype,
                                           const int64_t *dims, size_t rank, const void *data,
                                           const int64_t *byte_strides, cjrt_buffer **out);
/* A buffer that aliases `data` without copying (PJRT_Client_CreateViewOfDeviceBuffer): `data`
 * must stay valid and unchanged until on_delete(data, arg) is called, which happens exactly once,
 * when the plugin lets go of the memory (or before this returns an error; on_delete may be NULL).
 * For plugins whose device memory is host memory (IsOnCpu), `data` is ordinary host memory. */
CJRT_API cjrt_error *cjrt_buffer_view(cjrt_client *c, cjrt_device *device, cjrt_dtype dtype,
                                      const int64_t *dims, size_t rank, void *data,
                                      void (*on_delete)(void *data, void *arg), void *arg,
                                      cjrt_buffer **out);
CJRT_API cjrt_buffer *cjrt_buffer_retain(cjrt_buffer *b); /* another owned reference */
CJRT_API void cjrt_buffer_free(cjrt_buffer *b);          /* drops one reference; NULL is fine */
CJRT_API cjrt_dtype cjrt_buffer_dtype(const cjrt_buffer *b);
CJRT_API size_t cjrt_buffer_rank(const cjrt_buffer *b);
CJRT_API const int64_t *cjrt_buffer_dims(const cjrt_buffer *b);
CJRT_API int64_t cjrt_buffer_num_elements(const cjrt_buffer *b);
CJRT_API size_t cjrt_buffer_nbytes(const cjrt_buffer *b); /* dense host size in bytes */
CJRT_API cjrt_device *cjrt_buffer_device(const cjrt_buffer *b);
CJRT_API cjrt_client *cjrt_buffer_client(const cjrt_buffer *b);
/* Waits until the buffer's contents are ready; the error of the computation that made it. */
CJRT_API cjrt_error *cjrt_buffer_await(cjrt_buffer *b);
/* Copies the contents to host memory as a dense row-major array of cjrt_buffer_nbytes bytes
 * (dst_size must be at least that), waiting for it. */
CJRT_API cjrt_error *cjrt_buffer_to_host(cjrt_buffer *b, void *dst, size_t dst_size);
CJRT_API cjrt_error *cjrt_buffer_copy_to_device(cjrt_buffer *b, cjrt_device *device,
                                                cjrt_buffer **out);
/* PJRT_Buffer_IsOnCpu: whether the device memory is host memory (DLPack export needs it). */
CJRT_API cjrt_error *cjrt_buffer_is_on_cpu(cjrt_buffer *b, bool *out);
/* PJRT_Buffer_UnsafePointer: the device address of the data (host address when on the CPU). */
CJRT_API cjrt_error *cjrt_buffer_unsafe_pointer(cjrt_buffer *b, uintptr_t *out);
/* Drops the device memory now (PJRT_Buffer_Delete); the handle stays valid for is_deleted/free. */
CJRT_API cjrt_error *cjrt_buffer_delete(cjrt_buffer *b);
CJRT_API bool cjrt_buffer_is_deleted(cjrt_buffer *b);
CJRT_API struct PJRT_Buffer *cjrt_buffer_raw(const cjrt_buffer *b);
/* How many cjrt_buffer objects are alive in this process (for leak checks in tests). */
CJRT_API int64_t cjrt_live_buffers(void);

/* ================================ execute ================================ */

/* Runs a single-device executable: args[num_args] in, outs[num_outputs] out (owned, new
 * buffers). Waits until the execution has finished; an error of the execution is returned.
 * Arguments the program donates (tf.aliasing_output / jax.buffer_donor) are donated, as PJRT does
 * by default: such an argument is deleted afterwards (cjrt_buffer_is_deleted; free it as usual)
 * and an output holds its memory. */
CJRT_API cjrt_error *cjrt_execute(cjrt_executable *e, cjrt_buffer *const *args, size_t num_args,
                                  cjrt_buffer **outs, size_t num_outs);
/* Runs on each of the executable's devices: args[d * num_args + i] is argument i of device d
 * (cjrt_executable_device order); outs[d * num_outputs + j] receives output j of device d. */
CJRT_API cjrt_error *cjrt_execute_sharded(cjrt_executable *e, size_t num_devices,
                                          cjrt_buffer *const *args, size_t num_args,
                                          cjrt_buffer **outs, size_t num_outs);

#ifdef __cplusplus
}
#endif

#endif
