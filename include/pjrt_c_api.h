/* cjrt: the PJRT C API, version 0.114.
 *
 * PJRT is OpenXLA's plugin interface between ML frameworks and the runtimes that compile and run
 * their programs. A plugin exports one function, GetPjrtApi(), returning a PJRT_Api: a version
 * pair followed by a table of function pointers. Every function takes a single *_Args struct.
 *
 * This header is written for cjrt and is ABI-identical to the upstream header of the same
 * version: the same names, the same field order and types, the same enum values, and the same
 * *_STRUCT_SIZE constants, so code written against the upstream header compiles against this one
 * and a binary built with either talks to a binary built with the other. tests/abi/ checks every
 * slot offset and struct size against tables measured from the upstream header.
 *
 * Conventions of the interface (they hold for every function below):
 *  - Each *_Args begins with `struct_size` (the caller sets it to the *_STRUCT_SIZE it was built
 *    with) and `extension_start` (a chain of PJRT_Extension_Base, or NULL). New fields are only
 *    ever appended, so an implementation reads a field only when the caller's struct_size
 *    covers it.
 *  - A function returns NULL on success or a PJRT_Error that the caller frees with
 *    PJRT_Error_Destroy. Fields marked "out" are written by the callee.
 *  - Unless a comment says otherwise, strings are (pointer, size) pairs and not NUL-terminated,
 *    and outputs that are pointers are owned by (and live as long as) the object they came from.
 */
#ifndef XLA_PJRT_C_PJRT_C_API_H_
#define XLA_PJRT_C_PJRT_C_API_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The size of a struct as far as its `last_field`, without trailing padding. This is what a
 * caller puts into `struct_size`. */
#define PJRT_STRUCT_SIZE(struct_type, last_field) \
  offsetof(struct_type, last_field) + sizeof(((struct_type*)0)->last_field)

/* Compile-time guard: `last_field` must really be the last member (sizeof is the struct size
 * rounded up to the alignment). */
#if defined(__cplusplus)
#define PJRT_CHECK_STRUCT_SIZE(sname, last_field)                                              \
  static_assert(sizeof(struct sname) == ((PJRT_STRUCT_SIZE(sname, last_field) +                \
                                          alignof(sname) - 1) / alignof(sname)) * alignof(sname), \
                "PJRT_DEFINE_STRUCT_TRAITS names a field that is not the last one of " #sname)
#elif defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L
#define PJRT_CHECK_STRUCT_SIZE(sname, last_field)                                              \
  _Static_assert(sizeof(struct sname) == ((PJRT_STRUCT_SIZE(sname, last_field) +               \
                                           _Alignof(sname) - 1) / _Alignof(sname)) *           \
                                             _Alignof(sname),                                  \
                 "PJRT_DEFINE_STRUCT_TRAITS names a field that is not the last one of " #sname)
#else
#define PJRT_CHECK_STRUCT_SIZE(sname, last_field)
#endif

/* Declares the typedef and the sname_STRUCT_SIZE constant of a struct defined just before. */
#define PJRT_DEFINE_STRUCT_TRAITS(sname, last_field)                  \
  typedef struct sname sname;                                         \
  enum { sname##_STRUCT_SIZE = PJRT_STRUCT_SIZE(sname, last_field) }; \
  PJRT_CHECK_STRUCT_SIZE(sname, last_field)

#if defined(__cplusplus) && defined(__clang__)
#define PJRT_NO_DISCARD [[nodiscard]]
#else
#define PJRT_NO_DISCARD
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ===================================== Extensions ===================================== */

/* What an extension is; the values are fixed by upstream. */
typedef enum {
  PJRT_Extension_Type_Gpu_Custom_Call = 0,
  PJRT_Extension_Type_Profiler,            /* 1 */
  PJRT_Extension_Type_Custom_Partitioner,  /* 2 */
  PJRT_Extension_Type_Stream,              /* 3 */
  PJRT_Extension_Type_Layouts,             /* 4 */
  PJRT_Extension_Type_FFI,                 /* 5 */
  PJRT_Extension_Type_MemoryDescriptions,  /* 6 */
  PJRT_Extension_Type_Triton,              /* 7 */
  PJRT_Extension_Type_RawBuffer,           /* 8, experimental */
  PJRT_Extension_Type_PhaseCompile,        /* 9, experimental */
  PJRT_Extension_Type_Example,             /* 10 */
  PJRT_Extension_Type_Unknown,             /* 11 */
  PJRT_Extension_Type_CrossHostTransfers,  /* 12 */
  PJRT_Extension_Type_ExecutableMetadata,  /* 13 */
  PJRT_Extension_Type_Callback,            /* 14 */
  PJRT_Extension_Type_HostAllocator,       /* 15, deprecated */
  PJRT_Extension_Type_TpuTopology,         /* 16 */
  PJRT_Extension_Type_TpuExecutable,       /* 17 */
  PJRT_Extension_Type_Megascale,           /* 18 */
  PJRT_Extension_Type_Shardings,           /* 19 */
  PJRT_Extension_Type_AbiVersion,          /* 20 */
  PJRT_Extension_Type_Collectives,         /* 21 */
  PJRT_Extension_Type_MultiSlice,          /* 22 */
  PJRT_Extension_Type_HostMemoryAllocator, /* 23 */
  PJRT_Extension_Type_XlaTransform,        /* 24 */
} PJRT_Extension_Type;

/* The first member of every extension struct. Extensions form a singly linked list (from
 * PJRT_Api.extension_start, or from an *_Args' extension_start); a reader walks it by `type`
 * and skips the types it does not know. */
typedef struct PJRT_Extension_Base {
  size_t struct_size;
  PJRT_Extension_Type type;
  struct PJRT_Extension_Base* next;
} PJRT_Extension_Base;
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Extension_Base, next);

/* ====================================== Version ======================================= */

/* The major version changes on ABI-incompatible edits (removing or reordering fields, changing
 * types); the minor version on compatible ones (appending fields or functions, renaming). */
#define PJRT_API_MAJOR 0
#define PJRT_API_MINOR 114

/* A plugin reports the PJRT_API_MAJOR/MINOR it was built with here. */
struct PJRT_Api_Version {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  int major_version; /* out */
  int minor_version; /* out */
};
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Api_Version, minor_version);

/* ======================================= Errors ======================================= */

/* Allocated by the implementation, always freed by the caller with PJRT_Error_Destroy.
 * Since 0.107 an error is not opaque: it starts with a pointer to a function table, so that code
 * holding only the error (and not the PJRT_Api) can read and free it. */
typedef struct PJRT_Error PJRT_Error;

struct PJRT_Error_Destroy_Args {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  PJRT_Error* error;
};
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Error_Destroy_Args, error);

/* Frees `error` (NULL is fine). */
typedef void PJRT_Error_Destroy(PJRT_Error_Destroy_Args* args);

struct PJRT_Error_Message_Args {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  const PJRT_Error* error;
  const char* message; /* out; lives as long as `error` */
  size_t message_size; /* out */
};
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Error_Message_Args, message_size);

/* The human-readable reason of `error`. */
typedef void PJRT_Error_Message(PJRT_Error_Message_Args* args);

/* Status codes: absl's canonical codes, with the same numbers. */
typedef enum {
  PJRT_Error_Code_OK = 0,
  PJRT_Error_Code_CANCELLED = 1,
  PJRT_Error_Code_UNKNOWN = 2,
  PJRT_Error_Code_INVALID_ARGUMENT = 3,
  PJRT_Error_Code_DEADLINE_EXCEEDED = 4,
  PJRT_Error_Code_NOT_FOUND = 5,
  PJRT_Error_Code_ALREADY_EXISTS = 6,
  PJRT_Error_Code_PERMISSION_DENIED = 7,
  PJRT_Error_Code_RESOURCE_EXHAUSTED = 8,
  PJRT_Error_Code_FAILED_PRECONDITION = 9,
  PJRT_Error_Code_ABORTED = 10,
  PJRT_Error_Code_OUT_OF_RANGE = 11,
  PJRT_Error_Code_UNIMPLEMENTED = 12,
  PJRT_Error_Code_INTERNAL = 13,
  PJRT_Error_Code_UNAVAILABLE = 14,
  PJRT_Error_Code_DATA_LOSS = 15,
  PJRT_Error_Code_UNAUTHENTICATED = 16
} PJRT_Error_Code;

/* Called once per (key, value) payload attached to an error. */
typedef void (*PJRT_Error_PayloadVisitor)(const char* key, size_t key_size, const char* value,
                                          size_t value_size, void* user_arg);

/* The functions every PJRT_Error carries (0.107). */
typedef struct PJRT_Error_FunctionTable {
  size_t struct_size;
  size_t instance_size;
  PJRT_Extension_Base* extension_start;
  void (*destroy)(PJRT_Error* error);
  void (*message)(const PJRT_Error* error, const char** message, size_t* message_size);
  PJRT_Error_Code (*get_code)(const PJRT_Error* error);
  void (*for_each_payload)(const PJRT_Error* error, PJRT_Error_PayloadVisitor visitor,
                           void* user_arg);
} PJRT_Error_FunctionTable;
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Error_FunctionTable, for_each_payload);

/* An implementation's error object begins with this member. */
struct PJRT_Error {
  const struct PJRT_Error_FunctionTable* vtable;
};
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Error, vtable);

struct PJRT_Error_GetCode_Args {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  const PJRT_Error* error;
  PJRT_Error_Code code; /* out */
};
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Error_GetCode_Args, code);

typedef PJRT_Error* PJRT_Error_GetCode(PJRT_Error_GetCode_Args* args);

struct PJRT_Error_ForEachPayload_Args {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  const PJRT_Error* error;
  PJRT_Error_PayloadVisitor visitor;
  void* user_arg;
};
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Error_ForEachPayload_Args, user_arg);

/* Calls `visitor` for each payload of `error` (0.99). */
typedef PJRT_Error* PJRT_Error_ForEachPayload(PJRT_Error_ForEachPayload_Args* args);

/* A constructor the implementation hands to caller-provided callbacks (key-value store,
 * send/recv) so they can return a PJRT_Error. It copies `message`, which need only live for
 * the call. */
typedef PJRT_Error* (*PJRT_CallbackError)(PJRT_Error_Code code, const char* message,
                                          size_t message_size);

/* ==================================== Named values ==================================== */

typedef enum {
  PJRT_NamedValue_kString = 0,
  PJRT_NamedValue_kInt64,     /* 1 */
  PJRT_NamedValue_kInt64List, /* 2 */
  PJRT_NamedValue_kFloat,     /* 3: a 32-bit float */
  PJRT_NamedValue_kBool,      /* 4 */
} PJRT_NamedValue_Type;

/* A (name, typed value) pair, used for options and attributes. */
struct PJRT_NamedValue {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  const char* name;
  size_t name_size;
  PJRT_NamedValue_Type type;
  union {
    const char* string_value;
    int64_t int64_value;
    const int64_t* int64_array_value;
    float float_value;
    bool bool_value;
  };
  size_t value_size; /* elements of a string or list; 1 for a scalar */
};
PJRT_DEFINE_STRUCT_TRAITS(PJRT_NamedValue, value_size);

/* ======================================= Plugin ======================================= */

struct PJRT_Plugin_Initialize_Args {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
};
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Plugin_Initialize_Args, extension_start);

/* One-time set-up, called before any other function. */
typedef PJRT_Error* PJRT_Plugin_Initialize(PJRT_Plugin_Initialize_Args* args);

struct PJRT_Plugin_Attributes_Args {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  const PJRT_NamedValue* attributes; /* out; live as long as the process */
  size_t num_attributes;             /* out */
};
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Plugin_Attributes_Args, num_attributes);

/* Plugin-wide attributes, e.g. xla_version, stablehlo_current_version and
 * stablehlo_minimum_version (the last two: int64 lists of major, minor, patch). */
typedef PJRT_Error* PJRT_Plugin_Attributes(PJRT_Plugin_Attributes_Args* args);

/* ======================================= Events ======================================= */

/* A one-shot notification carrying a final status (NULL error = success). Returned by calls that
 * start asynchronous work; the caller frees each one it receives with PJRT_Event_Destroy. */
typedef struct PJRT_Event PJRT_Event;

struct PJRT_Event_Destroy_Args {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  PJRT_Event* event;
};
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Event_Destroy_Args, event);

/* Frees `event` (NULL is fine). */
typedef PJRT_Error* PJRT_Event_Destroy(PJRT_Event_Destroy_Args* args);

struct PJRT_Event_IsReady_Args {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  PJRT_Event* event;
  bool is_ready; /* out */
};
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Event_IsReady_Args, is_ready);

/* Whether the event has completed (successfully or not); never blocks. */
typedef PJRT_Error* PJRT_Event_IsReady(PJRT_Event_IsReady_Args* args);

struct PJRT_Event_Error_Args {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  PJRT_Event* event;
};
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Event_Error_Args, event);

/* The status of a ready event: NULL, or a new error that the caller frees (each call returns an
 * independent copy). Only valid once IsReady says true. */
typedef PJRT_Error* PJRT_Event_Error(PJRT_Event_Error_Args* args);

struct PJRT_Event_Await_Args {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  PJRT_Event* event;
};
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Event_Await_Args, event);

/* Blocks until the event is ready and returns its status as a new error (or NULL). */
typedef PJRT_Error* PJRT_Event_Await(PJRT_Event_Await_Args* args);

/* Receives the event's status; it owns `error` and must PJRT_Error_Destroy it. */
typedef void (*PJRT_Event_OnReadyCallback)(PJRT_Error* error, void* user_arg);

struct PJRT_Event_OnReady_Args {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  PJRT_Event* event;
  PJRT_Event_OnReadyCallback callback;
  void* user_arg; /* passed to `callback`; owned by the caller */
};
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Event_OnReady_Args, user_arg);

/* Arranges for `callback` to run exactly once when the event is ready (possibly at once, on the
 * calling thread, if it already is). */
typedef PJRT_Error* PJRT_Event_OnReady(PJRT_Event_OnReady_Args* args);

struct PJRT_Event_Create_Args {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  PJRT_Event* event; /* out */
};
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Event_Create_Args, event);

/* A new, not yet ready event that the caller completes with PJRT_Event_Set (0.89). */
typedef PJRT_Error* PJRT_Event_Create(PJRT_Event_Create_Args* args);

struct PJRT_Event_Set_Args {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  PJRT_Event* event;          /* from PJRT_Event_Create */
  PJRT_Error_Code error_code; /* OK for success */
  const char* error_message;  /* copied; may be freed after the call */
  size_t error_message_size;
};
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Event_Set_Args, error_message_size);

/* Completes an event made by PJRT_Event_Create with the given status. */
typedef PJRT_Error* PJRT_Event_Set(PJRT_Event_Set_Args* args);

/* ======================================= Client ======================================= */

typedef struct PJRT_Client PJRT_Client;
typedef struct PJRT_Device PJRT_Device;
typedef struct PJRT_Memory PJRT_Memory;
typedef struct PJRT_Memory_FunctionTable PJRT_Memory_FunctionTable;

/* The functions every PJRT_Memory carries (0.105): a per-memory store of user data keyed by
 * address, for frameworks that attach state to a memory space. */
struct PJRT_Memory_FunctionTable {
  size_t struct_size;
  struct PJRT_Extension_Base* extension_start;
  size_t instance_struct_size; /* PJRT_Memory_STRUCT_SIZE */
  /* The data stored under `key`, or NULL. */
  void* (*get_user_data)(struct PJRT_Memory* memory, const void* key);
  /* Stores `data` under `key`; `dtor` (may be NULL) is called on the data when it is replaced
   * or when the memory goes away. */
  void (*set_user_data)(struct PJRT_Memory* memory, const void* key, void* data,
                        void (*dtor)(void*));
};
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Memory_FunctionTable, set_user_data);

/* An implementation's memory object begins with this member. */
struct PJRT_Memory {
  const struct PJRT_Memory_FunctionTable* vtable;
};
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Memory, vtable);

typedef struct PJRT_ShapeSpec PJRT_ShapeSpec;
typedef struct PJRT_DeviceDescription PJRT_DeviceDescription;
typedef struct PJRT_TopologyDescription PJRT_TopologyDescription;
typedef struct PJRT_Executable PJRT_Executable;
typedef struct PJRT_LoadedExecutable PJRT_LoadedExecutable;
typedef struct PJRT_Buffer PJRT_Buffer;
typedef struct PJRT_FulfillAliasBufferCallback PJRT_FulfillAliasBufferCallback;
typedef struct PJRT_AsyncHostToDeviceTransferManager PJRT_AsyncHostToDeviceTransferManager;
typedef struct PJRT_PhaseCompiler PJRT_PhaseCompiler;

/* ---- the key-value store a caller may give PJRT_Client_Create (for multi-process set-up).
 * Callbacks must be thread-safe; the caller keeps keys of different plugins apart. ---- */

/* Frees a value returned by a get callback. */
typedef void (*PJRT_KeyValueGetCallback_ValueDeleter)(char* value);

struct PJRT_KeyValueGetCallback_Args {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  const char* key;
  size_t key_size;
  int timeout_in_ms;
  PJRT_CallbackError* callback_error;
  void* user_arg;
  char* value;       /* out */
  size_t value_size; /* out */
  /* out: the implementation copies `value`, then frees it with this. */
  PJRT_KeyValueGetCallback_ValueDeleter value_deleter_callback;
};
PJRT_DEFINE_STRUCT_TRAITS(PJRT_KeyValueGetCallback_Args, value_deleter_callback);

/* Blocking get: waits up to timeout_in_ms for `key`. */
typedef PJRT_Error* (*PJRT_KeyValueGetCallback)(PJRT_KeyValueGetCallback_Args* args);

typedef void (*PJRT_KeyValueTryGetCallback_ValueDeleter)(char* value);

struct PJRT_KeyValueTryGetCallback_Args {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  const char* key;
  size_t key_size;
  PJRT_CallbackError* callback_error;
  void* user_arg;
  char* value;       /* out */
  size_t value_size; /* out */
  PJRT_KeyValueTryGetCallback_ValueDeleter value_deleter_callback; /* out */
};
PJRT_DEFINE_STRUCT_TRAITS(PJRT_KeyValueTryGetCallback_Args, value_deleter_callback);

/* Non-blocking get: NOT_FOUND at once when the key is absent. */
typedef PJRT_Error* (*PJRT_KeyValueTryGetCallback)(PJRT_KeyValueTryGetCallback_Args* args);

struct PJRT_KeyValuePutCallback_Args {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  const char* key;
  size_t key_size;
  const char* value; /* needs to live only during the call */
  size_t value_size;
  PJRT_CallbackError* callback_error;
  void* user_arg;
};
PJRT_DEFINE_STRUCT_TRAITS(PJRT_KeyValuePutCallback_Args, user_arg);

typedef PJRT_Error* (*PJRT_KeyValuePutCallback)(PJRT_KeyValuePutCallback_Args* args);

struct PJRT_Client_Create_Args {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  /* Platform-specific options (names and string values are not NUL-terminated). */
  const PJRT_NamedValue* create_options;
  size_t num_options;
  /* An optional key-value store shared by the processes of a multi-process run. */
  PJRT_KeyValueGetCallback kv_get_callback;
  void* kv_get_user_arg;
  PJRT_KeyValuePutCallback kv_put_callback;
  void* kv_put_user_arg;
  PJRT_Client* client; /* out */
  PJRT_KeyValueTryGetCallback kv_try_get_callback; /* 0.61 */
  void* kv_try_get_user_arg;
};
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Client_Create_Args, kv_try_get_user_arg);

/* Creates a client: the devices and memories of this process and everything made on them. */
typedef PJRT_Error* PJRT_Client_Create(PJRT_Client_Create_Args* args);

struct PJRT_Client_Destroy_Args {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  PJRT_Client* client;
};
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Client_Destroy_Args, client);

/* Shuts down and frees `client` (NULL is fine). */
typedef PJRT_Error* PJRT_Client_Destroy(PJRT_Client_Destroy_Args* args);

struct PJRT_Client_PlatformName_Args {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  PJRT_Client* client;
  const char* platform_name; /* out; owned by `client` */
  size_t platform_name_size; /* out */
};
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Client_PlatformName_Args, platform_name_size);

/* The platform's name ("cpu", "cuda", ...). */
typedef PJRT_Error* PJRT_Client_PlatformName(PJRT_Client_PlatformName_Args* args);

struct PJRT_Client_ProcessIndex_Args {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  PJRT_Client* client;
  int process_index; /* out */
};
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Client_ProcessIndex_Args, process_index);

/* This process's index; 0 when there is one process. */
typedef PJRT_Error* PJRT_Client_ProcessIndex(PJRT_Client_ProcessIndex_Args* args);

struct PJRT_Client_PlatformVersion_Args {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  PJRT_Client* client;
  const char* platform_version; /* out; owned by `client` */
  size_t platform_version_size; /* out */
};
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Client_PlatformVersion_Args, platform_version_size);

/* Human-readable version information about the platform. */
typedef PJRT_Error* PJRT_Client_PlatformVersion(PJRT_Client_PlatformVersion_Args* args);

struct PJRT_Client_TopologyDescription_Args {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  PJRT_Client* client;
  PJRT_TopologyDescription* topology; /* out; owned by `client`, not to be destroyed */
};
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Client_TopologyDescription_Args, topology);

/* The topology the client runs on (0.36). */
typedef PJRT_Error* PJRT_Client_TopologyDescription(PJRT_Client_TopologyDescription_Args* args);

struct PJRT_Client_Devices_Args {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  PJRT_Client* client;
  PJRT_Device* const* devices; /* out */
  size_t num_devices;          /* out */
};
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Client_Devices_Args, num_devices);

/* Every device the runtime knows of, addressable or not. */
typedef PJRT_Error* PJRT_Client_Devices(PJRT_Client_Devices_Args* args);

struct PJRT_Client_AddressableDevices_Args {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  PJRT_Client* client;
  PJRT_Device* const* addressable_devices; /* out */
  size_t num_addressable_devices;          /* out */
};
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Client_AddressableDevices_Args, num_addressable_devices);

/* The devices this client can issue work to (all of them in a single process). */
typedef PJRT_Error* PJRT_Client_AddressableDevices(PJRT_Client_AddressableDevices_Args* args);

struct PJRT_Client_LookupDevice_Args {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  PJRT_Client* client;
  int id;
  PJRT_Device* device; /* out; owned by `client` */
};
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Client_LookupDevice_Args, device);

/* The device whose PJRT_DeviceDescription_Id is `id`. */
typedef PJRT_Error* PJRT_Client_LookupDevice(PJRT_Client_LookupDevice_Args* args);

struct PJRT_Client_LookupAddressableDevice_Args {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  PJRT_Client* client;
  int local_hardware_id;
  PJRT_Device* addressable_device; /* out; owned by `client` */
};
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Client_LookupAddressableDevice_Args, addressable_device);

/* The addressable device whose PJRT_Device_LocalHardwareId is `local_hardware_id`. */
typedef PJRT_Error* PJRT_Client_LookupAddressableDevice(
    PJRT_Client_LookupAddressableDevice_Args* args);

typedef enum {
  PJRT_ProcessState_kUnspecified = 0,
  PJRT_ProcessState_kUninitialized = 1,
  PJRT_ProcessState_kDisconnected = 2,
  PJRT_ProcessState_kConnected = 3,
  PJRT_ProcessState_kError = 4,
} PJRT_ProcessState;

/* The state of one process of a distributed run. */
struct PJRT_ProcessInfo {
  size_t struct_size;
  int task_id;
  uint64_t incarnation_id;
  PJRT_ProcessState state;
  int error_code;
  const char* error_message;
  size_t error_message_size;
};
PJRT_DEFINE_STRUCT_TRAITS(PJRT_ProcessInfo, error_message_size);

struct PJRT_Client_UpdateGlobalProcessInfo_Args {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  PJRT_Client* client;
  PJRT_ProcessInfo* process_infos;
  size_t num_process_infos;
};
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Client_UpdateGlobalProcessInfo_Args, num_process_infos);

/* Tells the client about every process of a distributed run (0.73). */
typedef PJRT_Error* PJRT_Client_UpdateGlobalProcessInfo(
    PJRT_Client_UpdateGlobalProcessInfo_Args* args);

struct PJRT_Client_AddressableMemories_Args {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  PJRT_Client* client;
  PJRT_Memory* const* addressable_memories; /* out */
  size_t num_addressable_memories;          /* out */
};
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Client_AddressableMemories_Args, num_addressable_memories);

/* The memories this client can move data to and from. */
typedef PJRT_Error* PJRT_Client_AddressableMemories(PJRT_Client_AddressableMemories_Args* args);

/* A program in some format: "hlo" (serialized HloModuleProto), "hlo_with_config"
 * (HloModuleProtoWithConfig) or "mlir" (MLIR bytecode or text). */
struct PJRT_Program {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  char* code; /* in or out depending on the call; owned by the caller */
  size_t code_size;
  const char* format; /* ownership depends on the call */
  size_t format_size;
};
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Program, format_size);

struct PJRT_Client_Compile_Args {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  PJRT_Client* client;
  const PJRT_Program* program; /* needs to live only during the call */
  const char* compile_options; /* a serialized xla.CompileOptionsProto */
  size_t compile_options_size;
  PJRT_LoadedExecutable* executable; /* out */
};
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Client_Compile_Args, executable);

/* Compiles `program` for this client's devices. */
typedef PJRT_Error* PJRT_Client_Compile(PJRT_Client_Compile_Args* args);

struct PJRT_Client_Load_Args {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  PJRT_Client* client;
  PJRT_Executable* executable;
  const char* compile_options; /* a serialized xla.CompileOptionsProto */
  size_t compile_options_size;
  PJRT_LoadedExecutable* loaded_executable; /* out */
};
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Client_Load_Args, loaded_executable);

/* Loads an unloaded executable (from PJRT_Compile) onto the client (0.95). */
typedef PJRT_Error* PJRT_Client_Load(PJRT_Client_Load_Args* args);

struct PJRT_Client_DefaultDeviceAssignment_Args {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  PJRT_Client* client;
  int num_replicas;
  int num_partitions;
  size_t default_assignment_size; /* at least num_replicas * num_partitions */
  /* Caller-owned array of default_assignment_size ints; the first
   * num_replicas * num_partitions are written, replica-major. */
  int* default_assignment;
};
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Client_DefaultDeviceAssignment_Args, default_assignment);

/* The device ids the client would choose for a (replicas x partitions) computation. */
typedef PJRT_Error* PJRT_Client_DefaultDeviceAssignment(
    PJRT_Client_DefaultDeviceAssignment_Args* args);

struct PJRT_Client_DmaMap_Args {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  PJRT_Client* client;
  void* data;
  size_t size;
};
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Client_DmaMap_Args, size);

/* Registers host memory for direct transfers (0.67). */
typedef PJRT_Error* PJRT_Client_DmaMap(PJRT_Client_DmaMap_Args* args);

struct PJRT_Client_DmaUnmap_Args {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  PJRT_Client* client;
  void* data;
};
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Client_DmaUnmap_Args, data);

typedef PJRT_Error* PJRT_Client_DmaUnmap(PJRT_Client_DmaUnmap_Args* args);

/* ---- asynchronous host-to-device transfers (0.60, 0.62, 0.83) ---- */

struct PJRT_AsyncHostToDeviceTransferManager_Destroy_Args {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  PJRT_AsyncHostToDeviceTransferManager* transfer_manager;
};
PJRT_DEFINE_STRUCT_TRAITS(PJRT_AsyncHostToDeviceTransferManager_Destroy_Args, transfer_manager);

/* Frees `transfer_manager` (NULL is fine). */
typedef PJRT_Error* PJRT_AsyncHostToDeviceTransferManager_Destroy(
    PJRT_AsyncHostToDeviceTransferManager_Destroy_Args* args);

struct PJRT_AsyncHostToDeviceTransferManager_TransferData_Args {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  PJRT_AsyncHostToDeviceTransferManager* transfer_manager;
  int buffer_index;
  const void* data;
  int64_t offset;
  int64_t transfer_size;
  bool is_last_transfer;
  PJRT_Event* done_with_h2d_transfer; /* out: `data` may be reused once this is ready */
};
PJRT_DEFINE_STRUCT_TRAITS(PJRT_AsyncHostToDeviceTransferManager_TransferData_Args,
                          done_with_h2d_transfer);

/* Copies raw bytes into [offset, offset + transfer_size) of one of the manager's buffers. */
typedef PJRT_Error* PJRT_AsyncHostToDeviceTransferManager_TransferData(
    PJRT_AsyncHostToDeviceTransferManager_TransferData_Args* args);

struct PJRT_AsyncHostToDeviceTransferManager_RetrieveBuffer_Args {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  PJRT_AsyncHostToDeviceTransferManager* transfer_manager;
  int buffer_index;
  PJRT_Buffer* buffer_out; /* out */
};
PJRT_DEFINE_STRUCT_TRAITS(PJRT_AsyncHostToDeviceTransferManager_RetrieveBuffer_Args,
                          buffer_out);

typedef PJRT_Error* PJRT_AsyncHostToDeviceTransferManager_RetrieveBuffer(
    PJRT_AsyncHostToDeviceTransferManager_RetrieveBuffer_Args* args);

struct PJRT_AsyncHostToDeviceTransferManager_Device_Args {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  PJRT_AsyncHostToDeviceTransferManager* transfer_manager;
  PJRT_Device* device_out; /* out */
};
PJRT_DEFINE_STRUCT_TRAITS(PJRT_AsyncHostToDeviceTransferManager_Device_Args, device_out);

typedef PJRT_Error* PJRT_AsyncHostToDeviceTransferManager_Device(
    PJRT_AsyncHostToDeviceTransferManager_Device_Args* args);

struct PJRT_AsyncHostToDeviceTransferManager_BufferCount_Args {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  PJRT_AsyncHostToDeviceTransferManager* transfer_manager;
  size_t buffer_count; /* out */
};
PJRT_DEFINE_STRUCT_TRAITS(PJRT_AsyncHostToDeviceTransferManager_BufferCount_Args, buffer_count);

typedef PJRT_Error* PJRT_AsyncHostToDeviceTransferManager_BufferCount(
    PJRT_AsyncHostToDeviceTransferManager_BufferCount_Args* args);

struct PJRT_AsyncHostToDeviceTransferManager_BufferSize_Args {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  PJRT_AsyncHostToDeviceTransferManager* transfer_manager;
  int buffer_index;
  size_t buffer_size; /* out: on-device bytes */
};
PJRT_DEFINE_STRUCT_TRAITS(PJRT_AsyncHostToDeviceTransferManager_BufferSize_Args, buffer_size);

typedef PJRT_Error* PJRT_AsyncHostToDeviceTransferManager_BufferSize(
    PJRT_AsyncHostToDeviceTransferManager_BufferSize_Args* args);

struct PJRT_AsyncHostToDeviceTransferManager_SetBufferError_Args {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  PJRT_AsyncHostToDeviceTransferManager* transfer_manager;
  int buffer_index;
  PJRT_Error_Code error_code;
  const char* error_message;
  size_t error_message_size;
};
PJRT_DEFINE_STRUCT_TRAITS(PJRT_AsyncHostToDeviceTransferManager_SetBufferError_Args,
                          error_message_size);

/* Completes one buffer with an error instead of data. */
typedef PJRT_Error* PJRT_AsyncHostToDeviceTransferManager_SetBufferError(
    PJRT_AsyncHostToDeviceTransferManager_SetBufferError_Args* args);

struct PJRT_AsyncHostToDeviceTransferManager_AddMetadata_Args {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  PJRT_AsyncHostToDeviceTransferManager* transfer_manager;
  const PJRT_NamedValue* transfer_metadata;
  size_t num_metadata;
};
PJRT_DEFINE_STRUCT_TRAITS(PJRT_AsyncHostToDeviceTransferManager_AddMetadata_Args, num_metadata);

typedef PJRT_Error* PJRT_AsyncHostToDeviceTransferManager_AddMetadata(
    PJRT_AsyncHostToDeviceTransferManager_AddMetadata_Args* args);

/* ==================================== Buffer types ==================================== */

/* Element types. These numbers are PJRT's own, not xla::PrimitiveType's. */
typedef enum {
  PJRT_Buffer_Type_INVALID,       /* 0 */
  PJRT_Buffer_Type_PRED,          /* 1: a boolean in one byte */
  PJRT_Buffer_Type_S8,            /* 2 */
  PJRT_Buffer_Type_S16,           /* 3 */
  PJRT_Buffer_Type_S32,           /* 4 */
  PJRT_Buffer_Type_S64,           /* 5 */
  PJRT_Buffer_Type_U8,            /* 6 */
  PJRT_Buffer_Type_U16,           /* 7 */
  PJRT_Buffer_Type_U32,           /* 8 */
  PJRT_Buffer_Type_U64,           /* 9 */
  PJRT_Buffer_Type_F16,           /* 10: IEEE half */
  PJRT_Buffer_Type_F32,           /* 11 */
  PJRT_Buffer_Type_F64,           /* 12 */
  PJRT_Buffer_Type_BF16,          /* 13: 1 sign, 8 exponent, 7 mantissa bits */
  PJRT_Buffer_Type_C64,           /* 14: (real, imaginary) f32 pair */
  PJRT_Buffer_Type_C128,          /* 15: (real, imaginary) f64 pair */
  PJRT_Buffer_Type_F8E5M2,        /* 16 */
  PJRT_Buffer_Type_F8E4M3FN,      /* 17 */
  PJRT_Buffer_Type_F8E4M3B11FNUZ, /* 18 */
  PJRT_Buffer_Type_F8E5M2FNUZ,    /* 19 */
  PJRT_Buffer_Type_F8E4M3FNUZ,    /* 20 */
  PJRT_Buffer_Type_S4,            /* 21 */
  PJRT_Buffer_Type_U4,            /* 22 */
  PJRT_Buffer_Type_TOKEN,         /* 23 (0.50) */
  PJRT_Buffer_Type_S2,            /* 24 */
  PJRT_Buffer_Type_U2,            /* 25 */
  PJRT_Buffer_Type_F8E4M3,        /* 26 */
  PJRT_Buffer_Type_F8E3M4,        /* 27 */
  PJRT_Buffer_Type_F8E8M0FNU,     /* 28 */
  PJRT_Buffer_Type_F4E2M1FN,      /* 29: MX 4-bit float */
  PJRT_Buffer_Type_S1,            /* 30 (0.94) */
  PJRT_Buffer_Type_U1,            /* 31 (0.94) */
  PJRT_Buffer_Type_F6E2M3FN,      /* 32: MX 6-bit float (0.114) */
  PJRT_Buffer_Type_F6E3M2FN,      /* 33: MX 6-bit float (0.114) */
} PJRT_Buffer_Type;

/* What BufferFromHostBuffer may do with the caller's host data. */
typedef enum {
  /* The data is valid only during the call: copy it before returning. */
  PJRT_HostBufferSemantics_kImmutableOnlyDuringCall,
  /* The data stays valid and unchanged until done_with_host_buffer is ready. */
  PJRT_HostBufferSemantics_kImmutableUntilTransferCompletes,
  /* The buffer may alias the data for its whole life (read-only); done_with_host_buffer becomes
   * ready when the buffer no longer needs it. */
  PJRT_HostBufferSemantics_kImmutableZeroCopy,
  /* As above, but the runtime may also write into the data (0.48). */
  PJRT_HostBufferSemantics_kMutableZeroCopy,
} PJRT_HostBufferSemantics;

typedef enum {
  PJRT_Buffer_MemoryLayout_Type_Tiled = 0,
  PJRT_Buffer_MemoryLayout_Type_Strides,
} PJRT_Buffer_MemoryLayout_Type;

/* A layout given as a dimension order plus optional tiling. */
struct PJRT_Buffer_MemoryLayout_Tiled {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  /* Logical dimension numbers from the fastest-varying (first) to the slowest; one entry per
   * dimension. {1, 0} is the row-major layout of a matrix. */
  const int64_t* minor_to_major;
  size_t minor_to_major_size;
  const int64_t* tile_dims;     /* every tile's dimensions, concatenated */
  const size_t* tile_dim_sizes; /* num_tiles entries: how many dimensions each tile has */
  size_t num_tiles;
};
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Buffer_MemoryLayout_Tiled, num_tiles);

/* A layout given as a byte stride per dimension. Strides may be negative, in which case the
 * data pointer points inside the array rather than at its lowest address. */
struct PJRT_Buffer_MemoryLayout_Strides {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  const int64_t* byte_strides;
  size_t num_byte_strides;
};
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Buffer_MemoryLayout_Strides, num_byte_strides);

/* Either form, selected by `type`. */
struct PJRT_Buffer_MemoryLayout {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  union {
    PJRT_Buffer_MemoryLayout_Tiled tiled;
    PJRT_Buffer_MemoryLayout_Strides strides;
  };
  PJRT_Buffer_MemoryLayout_Type type;
};
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Buffer_MemoryLayout, type);

struct PJRT_AsyncHostToDeviceTransferManager_TransferLiteral_Args {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  PJRT_AsyncHostToDeviceTransferManager* transfer_manager;
  int buffer_index;
  const void* data;
  /* The literal's shape. */
  const int64_t* shape_dims;
  size_t shape_num_dims;
  PJRT_Buffer_Type shape_element_type;
  PJRT_Buffer_MemoryLayout* shape_layout;
  PJRT_Event* done_with_h2d_transfer; /* out */
};
PJRT_DEFINE_STRUCT_TRAITS(PJRT_AsyncHostToDeviceTransferManager_TransferLiteral_Args,
                          done_with_h2d_transfer);

/* Copies a whole host array into one of the manager's buffers (0.83). */
typedef PJRT_Error* PJRT_AsyncHostToDeviceTransferManager_TransferLiteral(
    PJRT_AsyncHostToDeviceTransferManager_TransferLiteral_Args* args);

/* ================================ Buffer creation (client) ================================ */

struct PJRT_Client_CreateUninitializedBuffer_Args {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  PJRT_Client* client;
  /* The shape. */
  const int64_t* shape_dims;
  size_t shape_num_dims;
  PJRT_Buffer_Type shape_element_type;
  PJRT_Buffer_MemoryLayout* shape_layout;
  PJRT_Device* device; /* used when `memory` is NULL */
  PJRT_Memory* memory;
  PJRT_Buffer* buffer; /* out; the caller destroys it */
};
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Client_CreateUninitializedBuffer_Args, buffer);

/* A buffer whose contents are unspecified (0.69). */
typedef PJRT_Error* PJRT_Client_CreateUninitializedBuffer(
    PJRT_Client_CreateUninitializedBuffer_Args* args);

struct PJRT_Client_CreateErrorBuffer_Args {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  PJRT_Client* client;
  /* The error it carries. */
  PJRT_Error_Code error_code;
  const char* error_message;
  size_t error_message_size;
  /* The shape. */
  const int64_t* shape_dims;
  size_t shape_num_dims;
  PJRT_Buffer_Type shape_element_type;
  PJRT_Buffer_MemoryLayout* shape_layout;
  PJRT_Memory* memory;
  PJRT_Buffer* buffer; /* out; the caller destroys it */
  /* Payloads of the error (0.103). */
  const PJRT_NamedValue* payload;
  size_t num_payload;
};
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Client_CreateErrorBuffer_Args, num_payload);

/* A buffer that holds no memory, only an error: reading it or passing it to Execute fails with
 * that error (0.82). */
typedef PJRT_Error* PJRT_Client_CreateErrorBuffer(PJRT_Client_CreateErrorBuffer_Args* args);

struct PJRT_Client_CreateAliasBuffer_Args {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  PJRT_Client* client;
  PJRT_Memory* memory;
  /* The shape. */
  const int64_t* shape_dims;
  size_t shape_num_dims;
  PJRT_Buffer_Type shape_element_type;
  PJRT_Buffer_MemoryLayout* shape_layout;
  PJRT_Buffer* alias_buffer;                                /* out */
  PJRT_FulfillAliasBufferCallback* fulfill_alias_buffer_cb; /* out */
};
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Client_CreateAliasBuffer_Args, fulfill_alias_buffer_cb);

/* A placeholder buffer to be bound to a real one later with FulfillAliasBuffer (0.77). */
typedef PJRT_Error* PJRT_Client_CreateAliasBuffer(PJRT_Client_CreateAliasBuffer_Args* args);

struct PJRT_Client_FulfillAliasBuffer_Args {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  PJRT_Client* client;
  PJRT_Buffer* buffer;
  PJRT_Error_Code status_code;
  const char* error_message;
  size_t error_message_size;
  PJRT_FulfillAliasBufferCallback* fulfill_alias_buffer_cb;
};
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Client_FulfillAliasBuffer_Args, fulfill_alias_buffer_cb);

typedef PJRT_Error* PJRT_Client_FulfillAliasBuffer(PJRT_Client_FulfillAliasBuffer_Args* args);

struct PJRT_Client_BufferFromHostBuffer_Args {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  PJRT_Client* client;
  const void* data;      /* the host array */
  PJRT_Buffer_Type type; /* its element type, and the buffer's */
  const int64_t* dims;
  size_t num_dims;
  /* Byte stride per dimension of `data`, or none (num_byte_strides == 0) for a dense row-major
   * array. Strides may be negative; `data` then points inside the array. */
  const int64_t* byte_strides;
  size_t num_byte_strides;
  PJRT_HostBufferSemantics host_buffer_semantics;
  PJRT_Device* device; /* used when `memory` is NULL */
  PJRT_Memory* memory;
  /* The on-device layout, or NULL for dense row-major; needs to live only during the call. */
  PJRT_Buffer_MemoryLayout* device_layout;
  PJRT_Event* done_with_host_buffer; /* out: `data` may be freed once this is ready */
  PJRT_Buffer* buffer;               /* out; the caller destroys it */
};
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Client_BufferFromHostBuffer_Args, buffer);

/* Makes a device buffer from host data. */
typedef PJRT_Error* PJRT_Client_BufferFromHostBuffer(PJRT_Client_BufferFromHostBuffer_Args* args);

struct PJRT_Client_CreateViewOfDeviceBuffer_Args {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  PJRT_Client* client;
  void* device_buffer_ptr; /* memory the buffer will view, not own */
  const int64_t* dims;
  size_t num_dims;
  PJRT_Buffer_Type element_type;
  PJRT_Buffer_MemoryLayout* layout;
  PJRT_Device* device; /* deprecated: ignored when `memory` is given */
  /* Optional: called when the buffer no longer uses device_buffer_ptr. */
  void (*on_delete_callback)(void* device_buffer_ptr, void* user_arg);
  void* on_delete_callback_arg;
  intptr_t stream; /* a platform stream handle to order the view after (GPU); may be 0 */
  PJRT_Buffer* buffer; /* out */
  PJRT_Memory* memory; /* 0.66 */
};
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Client_CreateViewOfDeviceBuffer_Args, memory);

/* A buffer over memory someone else owns (DLPack import); no copy is made (0.33). */
typedef PJRT_Error* PJRT_Client_CreateViewOfDeviceBuffer(
    PJRT_Client_CreateViewOfDeviceBuffer_Args* args);

/* An array shape. */
struct PJRT_ShapeSpec {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  const int64_t* dims;
  size_t num_dims;
  PJRT_Buffer_Type element_type;
};
PJRT_DEFINE_STRUCT_TRAITS(PJRT_ShapeSpec, element_type);

struct PJRT_Client_CreateBuffersForAsyncHostToDevice_Args {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  PJRT_Client* client;
  PJRT_ShapeSpec* shape_specs;
  size_t num_shape_specs;
  PJRT_Buffer_MemoryLayout** device_layouts; /* optional */
  size_t num_device_layouts;
  PJRT_Memory* memory;
  PJRT_AsyncHostToDeviceTransferManager* transfer_manager; /* out */
};
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Client_CreateBuffersForAsyncHostToDevice_Args, transfer_manager);

/* Creates buffers to be filled later through a transfer manager (0.60). */
typedef PJRT_Error* PJRT_Client_CreateBuffersForAsyncHostToDevice(
    PJRT_Client_CreateBuffersForAsyncHostToDevice_Args* args);

/* ================================ Device descriptions ================================= */

/* What a device is, independent of whether it is attached (also used for ahead-of-time
 * compilation against a topology). */

struct PJRT_DeviceDescription_Id_Args {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  PJRT_DeviceDescription* device_description;
  int id; /* out */
};
PJRT_DEFINE_STRUCT_TRAITS(PJRT_DeviceDescription_Id_Args, id);

/* The device's id: unique among the platform's devices, across all processes. */
typedef PJRT_Error* PJRT_DeviceDescription_Id(PJRT_DeviceDescription_Id_Args* args);

struct PJRT_DeviceDescription_ProcessIndex_Args {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  PJRT_DeviceDescription* device_description;
  int process_index; /* out */
};
PJRT_DEFINE_STRUCT_TRAITS(PJRT_DeviceDescription_ProcessIndex_Args, process_index);

/* The index of the process the device is addressable from. */
typedef PJRT_Error* PJRT_DeviceDescription_ProcessIndex(
    PJRT_DeviceDescription_ProcessIndex_Args* args);

struct PJRT_DeviceDescription_Attributes_Args {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  PJRT_DeviceDescription* device_description;
  size_t num_attributes;             /* out */
  const PJRT_NamedValue* attributes; /* out */
};
PJRT_DEFINE_STRUCT_TRAITS(PJRT_DeviceDescription_Attributes_Args, attributes);

/* Device-specific attributes. */
typedef PJRT_Error* PJRT_DeviceDescription_Attributes(
    PJRT_DeviceDescription_Attributes_Args* args);

struct PJRT_DeviceDescription_Kind_Args {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  PJRT_DeviceDescription* device_description;
  const char* device_kind; /* out; lives as long as the device */
  size_t device_kind_size; /* out */
};
PJRT_DEFINE_STRUCT_TRAITS(PJRT_DeviceDescription_Kind_Args, device_kind_size);

/* The kind of device (a vendor-specific model string). */
typedef PJRT_Error* PJRT_DeviceDescription_Kind(PJRT_DeviceDescription_Kind_Args* args);

struct PJRT_DeviceDescription_DebugString_Args {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  PJRT_DeviceDescription* device_description;
  const char* debug_string; /* out */
  size_t debug_string_size; /* out */
};
PJRT_DEFINE_STRUCT_TRAITS(PJRT_DeviceDescription_DebugString_Args, debug_string_size);

/* A verbose, unambiguous description for logs. */
typedef PJRT_Error* PJRT_DeviceDescription_DebugString(
    PJRT_DeviceDescription_DebugString_Args* args);

struct PJRT_DeviceDescription_ToString_Args {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  PJRT_DeviceDescription* device_description;
  const char* to_string; /* out */
  size_t to_string_size; /* out */
};
PJRT_DEFINE_STRUCT_TRAITS(PJRT_DeviceDescription_ToString_Args, to_string_size);

/* A terse description for users, like "CpuDevice(id=0)". */
typedef PJRT_Error* PJRT_DeviceDescription_ToString(PJRT_DeviceDescription_ToString_Args* args);

/* ======================================= Devices ====================================== */

struct PJRT_Device_GetDescription_Args {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  PJRT_Device* device;
  PJRT_DeviceDescription* device_description; /* out */
};
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Device_GetDescription_Args, device_description);

typedef PJRT_Error* PJRT_Device_GetDescription(PJRT_Device_GetDescription_Args* args);

struct PJRT_Device_IsAddressable_Args {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  PJRT_Device* device;
  bool is_addressable; /* out */
};
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Device_IsAddressable_Args, is_addressable);

/* Whether this client can issue work to the device. */
typedef PJRT_Error* PJRT_Device_IsAddressable(PJRT_Device_IsAddressable_Args* args);

struct PJRT_Device_LocalHardwareId_Args {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  PJRT_Device* device;
  int local_hardware_id; /* out */
};
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Device_LocalHardwareId_Args, local_hardware_id);

/* An opaque hardware number (like a CUDA ordinal), not necessarily dense; -1 if none. */
typedef PJRT_Error* PJRT_Device_LocalHardwareId(PJRT_Device_LocalHardwareId_Args* args);

struct PJRT_Device_AddressableMemories_Args {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  PJRT_Device* device;
  PJRT_Memory* const* memories; /* out; lives as long as `device` */
  size_t num_memories;          /* out */
};
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Device_AddressableMemories_Args, num_memories);

/* The memories the device can address. */
typedef PJRT_Error* PJRT_Device_AddressableMemories(PJRT_Device_AddressableMemories_Args* args);

struct PJRT_Device_DefaultMemory_Args {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  PJRT_Device* device;
  PJRT_Memory* memory; /* out; lives as long as `device` */
};
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Device_DefaultMemory_Args, memory);

/* Where the device keeps data by default. */
typedef PJRT_Error* PJRT_Device_DefaultMemory(PJRT_Device_DefaultMemory_Args* args);

struct PJRT_Device_MemoryStats_Args {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  PJRT_Device* device;
  /* All out. Only bytes_in_use is required; each other value comes with a flag saying whether
   * it was filled in. */
  int64_t bytes_in_use;
  int64_t peak_bytes_in_use;
  bool peak_bytes_in_use_is_set;
  int64_t num_allocs;
  bool num_allocs_is_set;
  int64_t largest_alloc_size;
  bool largest_alloc_size_is_set;
  int64_t bytes_limit;
  bool bytes_limit_is_set;
  int64_t bytes_reserved;
  bool bytes_reserved_is_set;
  int64_t peak_bytes_reserved;
  bool peak_bytes_reserved_is_set;
  int64_t bytes_reservable_limit;
  bool bytes_reservable_limit_is_set;
  int64_t largest_free_block_bytes;
  bool largest_free_block_bytes_is_set;
  int64_t pool_bytes;
  bool pool_bytes_is_set;
  int64_t peak_pool_bytes;
  bool peak_pool_bytes_is_set;
  int64_t peak_allocated_bytes; /* 0.113 */
  bool peak_allocated_bytes_is_set;
};
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Device_MemoryStats_Args, peak_allocated_bytes_is_set);

/* Allocator statistics of the device, for diagnostics. */
typedef PJRT_Error* PJRT_Device_MemoryStats(PJRT_Device_MemoryStats_Args* args);

struct PJRT_Device_ClearMemoryStats_Args {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  PJRT_Device* device;
};
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Device_ClearMemoryStats_Args, device);

/* Resets the peak statistics (0.106). */
typedef PJRT_Error* PJRT_Device_ClearMemoryStats(PJRT_Device_ClearMemoryStats_Args* args);

struct PJRT_Device_PoisonExecution_Args {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  PJRT_Device* device;
  int32_t launch_id;
  /* The error to poison with. */
  PJRT_Error_Code error_code;
  const char* error_message;
  size_t error_message_size;
  bool poisoned; /* out: whether an execution was found and poisoned */
  const PJRT_NamedValue* payload; /* 0.100 */
  size_t num_payload;
};
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Device_PoisonExecution_Args, num_payload);

/* Makes the earliest unfinished execution with `launch_id` on the device fail (0.85). */
typedef PJRT_Error* PJRT_Device_PoisonExecution(PJRT_Device_PoisonExecution_Args* args);

typedef struct PJRT_Device_Attributes PJRT_Device_Attributes;

struct PJRT_Device_GetAttributes_Args {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  PJRT_Device* device;
  const PJRT_NamedValue* attributes;         /* out; valid until attributes_deleter is called */
  size_t num_attributes;                     /* out */
  PJRT_Device_Attributes* device_attributes; /* out: what backs `attributes` */
  void (*attributes_deleter)(PJRT_Device_Attributes* device_attributes); /* out */
};
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Device_GetAttributes_Args, attributes_deleter);

/* The device's attributes (0.92). */
typedef PJRT_Error* PJRT_Device_GetAttributes(PJRT_Device_GetAttributes_Args* args);

/* ================================= Async tracking events ================================= */

typedef struct PJRT_AsyncTrackingEvent PJRT_AsyncTrackingEvent;

struct PJRT_Device_CreateAsyncTrackingEvent_Args {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  PJRT_Device* device;
  const char* description;
  size_t description_size;
  PJRT_AsyncTrackingEvent* event; /* out; the caller destroys it */
};
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Device_CreateAsyncTrackingEvent_Args, event);

/* (0.86) */
typedef PJRT_Error* PJRT_Device_CreateAsyncTrackingEvent(
    PJRT_Device_CreateAsyncTrackingEvent_Args* args);

struct PJRT_AsyncTrackingEvent_Destroy_Args {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  PJRT_AsyncTrackingEvent* event;
};
PJRT_DEFINE_STRUCT_TRAITS(PJRT_AsyncTrackingEvent_Destroy_Args, event);

typedef PJRT_Error* PJRT_AsyncTrackingEvent_Destroy(PJRT_AsyncTrackingEvent_Destroy_Args* args);

/* ====================================== Memories ====================================== */

struct PJRT_Memory_Id_Args {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  PJRT_Memory* memory;
  int id; /* out */
};
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Memory_Id_Args, id);

/* The memory's id, unique among memories of its kind. */
typedef PJRT_Error* PJRT_Memory_Id(PJRT_Memory_Id_Args* args);

struct PJRT_Memory_Kind_Args {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  PJRT_Memory* memory;
  const char* kind; /* out; lives as long as `memory` */
  size_t kind_size; /* out */
};
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Memory_Kind_Args, kind_size);

/* The kind of memory: "device", "pinned_host", "unpinned_host", ... */
typedef PJRT_Error* PJRT_Memory_Kind(PJRT_Memory_Kind_Args* args);

struct PJRT_Memory_Kind_Id_Args {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  PJRT_Memory* memory;
  int kind_id; /* out */
};
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Memory_Kind_Id_Args, kind_id);

/* A number identifying the kind (0.48). */
typedef PJRT_Error* PJRT_Memory_Kind_Id(PJRT_Memory_Kind_Id_Args* args);

struct PJRT_Memory_DebugString_Args {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  PJRT_Memory* memory;
  const char* debug_string; /* out */
  size_t debug_string_size; /* out */
};
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Memory_DebugString_Args, debug_string_size);

typedef PJRT_Error* PJRT_Memory_DebugString(PJRT_Memory_DebugString_Args* args);

struct PJRT_Memory_ToString_Args {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  PJRT_Memory* memory;
  const char* to_string; /* out */
  size_t to_string_size; /* out */
};
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Memory_ToString_Args, to_string_size);

typedef PJRT_Error* PJRT_Memory_ToString(PJRT_Memory_ToString_Args* args);

struct PJRT_Memory_AddressableByDevices_Args {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  PJRT_Memory* memory;
  PJRT_Device* const* devices; /* out */
  size_t num_devices;          /* out */
};
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Memory_AddressableByDevices_Args, num_devices);

/* The devices that can address this memory. */
typedef PJRT_Error* PJRT_Memory_AddressableByDevices(PJRT_Memory_AddressableByDevices_Args* args);

/* =================================== Execute contexts =================================== */

/* Extra, implementation-specific state passed to one execution (through the FFI extension).
 * The caller keeps it alive for the execution. */
typedef struct PJRT_ExecuteContext PJRT_ExecuteContext;

struct PJRT_ExecuteContext_Create_Args {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  PJRT_ExecuteContext* context; /* out */
};
PJRT_DEFINE_STRUCT_TRAITS(PJRT_ExecuteContext_Create_Args, context);

/* (0.52) */
typedef PJRT_Error* PJRT_ExecuteContext_Create(PJRT_ExecuteContext_Create_Args* args);

struct PJRT_ExecuteContext_Destroy_Args {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  PJRT_ExecuteContext* context;
};
PJRT_DEFINE_STRUCT_TRAITS(PJRT_ExecuteContext_Destroy_Args, context);

/* Frees `context` (NULL is fine). */
typedef PJRT_Error* PJRT_ExecuteContext_Destroy(PJRT_ExecuteContext_Destroy_Args* args);

/* ===================================== Executables ===================================== */

struct PJRT_Executable_Destroy_Args {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  PJRT_Executable* executable;
};
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Executable_Destroy_Args, executable);

/* Frees `executable` (NULL is fine). */
typedef PJRT_Error* PJRT_Executable_Destroy(PJRT_Executable_Destroy_Args* args);

struct PJRT_LoadedExecutable_Destroy_Args {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  PJRT_LoadedExecutable* executable;
};
PJRT_DEFINE_STRUCT_TRAITS(PJRT_LoadedExecutable_Destroy_Args, executable);

/* Deletes (as PJRT_LoadedExecutable_Delete) and frees `executable` (NULL is fine). */
typedef PJRT_Error* PJRT_LoadedExecutable_Destroy(PJRT_LoadedExecutable_Destroy_Args* args);

struct PJRT_LoadedExecutable_GetExecutable_Args {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  PJRT_LoadedExecutable* loaded_executable;
  PJRT_Executable* executable; /* out; a new object the caller destroys */
};
PJRT_DEFINE_STRUCT_TRAITS(PJRT_LoadedExecutable_GetExecutable_Args, executable);

typedef PJRT_Error* PJRT_LoadedExecutable_GetExecutable(
    PJRT_LoadedExecutable_GetExecutable_Args* args);

typedef struct PJRT_DeviceAssignmentSerialized PJRT_DeviceAssignmentSerialized;

struct PJRT_LoadedExecutable_GetDeviceAssignment_Args {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  PJRT_LoadedExecutable* executable;
  const char* serialized_bytes; /* out; lives as long as serialized_device_assignment */
  size_t serialized_bytes_size; /* out */
  PJRT_DeviceAssignmentSerialized* serialized_device_assignment; /* out */
  /* out: frees serialized_device_assignment; call exactly once. */
  void (*serialized_device_assignment_deleter)(PJRT_DeviceAssignmentSerialized* da);
};
PJRT_DEFINE_STRUCT_TRAITS(PJRT_LoadedExecutable_GetDeviceAssignment_Args,
                          serialized_device_assignment_deleter);

/* The executable's device assignment as a serialized xla.DeviceAssignmentProto (0.79). */
typedef PJRT_Error* PJRT_LoadedExecutable_GetDeviceAssignment(
    PJRT_LoadedExecutable_GetDeviceAssignment_Args* args);

struct PJRT_Executable_Name_Args {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  PJRT_Executable* executable;
  const char* executable_name; /* out; owned by `executable` */
  size_t executable_name_size; /* out */
};
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Executable_Name_Args, executable_name_size);

typedef PJRT_Error* PJRT_Executable_Name(PJRT_Executable_Name_Args* args);

struct PJRT_Executable_NumReplicas_Args {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  PJRT_Executable* executable;
  size_t num_replicas; /* out */
};
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Executable_NumReplicas_Args, num_replicas);

typedef PJRT_Error* PJRT_Executable_NumReplicas(PJRT_Executable_NumReplicas_Args* args);

struct PJRT_Executable_NumPartitions_Args {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  PJRT_Executable* executable;
  size_t num_partitions; /* out */
};
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Executable_NumPartitions_Args, num_partitions);

typedef PJRT_Error* PJRT_Executable_NumPartitions(PJRT_Executable_NumPartitions_Args* args);

/* A device's place in a device assignment. */
typedef struct PJRT_LogicalDeviceIds {
  int replica;
  int partition;
} PJRT_LogicalDeviceIds;

struct PJRT_LoadedExecutable_AddressableDevices_Args {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  PJRT_LoadedExecutable* executable;
  PJRT_Device* const* addressable_devices; /* out */
  size_t num_addressable_devices;          /* out */
};
PJRT_DEFINE_STRUCT_TRAITS(PJRT_LoadedExecutable_AddressableDevices_Args,
                          num_addressable_devices);

/* The devices the executable runs on, in the order Execute's argument lists use. */
typedef PJRT_Error* PJRT_LoadedExecutable_AddressableDevices(
    PJRT_LoadedExecutable_AddressableDevices_Args* args);

struct PJRT_LoadedExecutable_AddressableDeviceLogicalIds_Args {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  PJRT_LoadedExecutable* executable;
  PJRT_LogicalDeviceIds* addressable_device_logical_ids; /* out */
  size_t num_addressable_device_logical_ids;             /* out */
};
PJRT_DEFINE_STRUCT_TRAITS(PJRT_LoadedExecutable_AddressableDeviceLogicalIds_Args,
                          num_addressable_device_logical_ids);

/* (replica, partition) of each addressable device (0.96). */
typedef PJRT_Error* PJRT_LoadedExecutable_AddressableDeviceLogicalIds(
    PJRT_LoadedExecutable_AddressableDeviceLogicalIds_Args* args);

struct PJRT_Executable_OptimizedProgram_Args {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  PJRT_Executable* executable;
  PJRT_Program* program; /* in/out, see below */
};
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Executable_OptimizedProgram_Args, program);

/* The program after optimization. Called twice: first with program->code == NULL, which sets
 * program->code_size; then with program->code pointing to a caller buffer of that many bytes,
 * which is filled. The callee sets program->format/format_size (it owns those). */
typedef PJRT_Error* PJRT_Executable_OptimizedProgram(PJRT_Executable_OptimizedProgram_Args* args);

struct PJRT_LoadedExecutable_Delete_Args {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  PJRT_LoadedExecutable* executable;
};
PJRT_DEFINE_STRUCT_TRAITS(PJRT_LoadedExecutable_Delete_Args, executable);

/* Releases the executable's runtime resources (once running executions finish) but keeps the
 * handle, which then serves only IsDeleted and Destroy. */
typedef PJRT_Error* PJRT_LoadedExecutable_Delete(PJRT_LoadedExecutable_Delete_Args* args);

struct PJRT_LoadedExecutable_IsDeleted_Args {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  PJRT_LoadedExecutable* executable;
  bool is_deleted; /* out */
};
PJRT_DEFINE_STRUCT_TRAITS(PJRT_LoadedExecutable_IsDeleted_Args, is_deleted);

typedef PJRT_Error* PJRT_LoadedExecutable_IsDeleted(PJRT_LoadedExecutable_IsDeleted_Args* args);

/* A piece of data handed over with a deleter. */
typedef struct PJRT_Chunk {
  void* data;
  size_t size;
  void (*deleter)(void* data, void* deleter_arg);
  void* deleter_arg;
} PJRT_Chunk;

/* A stream of chunks into a device buffer, given to a receive callback. */
typedef struct PJRT_CopyToDeviceStream PJRT_CopyToDeviceStream;

/* A host send callback: gets one chunk (and must free it with chunk->deleter), returns NULL or
 * an error made with `callback_error`. */
typedef PJRT_Error* (*PJRT_SendCallback)(PJRT_Chunk* chunk, PJRT_CallbackError* callback_error,
                                         size_t total_size_in_bytes, bool done, void* user_arg);
/* A host receive callback: owns `stream` and must PJRT_CopyToDeviceStream_Destroy it. */
typedef void (*PJRT_RecvCallback)(PJRT_CopyToDeviceStream* stream, void* user_arg);

struct PJRT_SendCallbackInfo {
  int64_t channel_id; /* the send op it serves */
  void* user_arg;
  PJRT_SendCallback send_callback;
};
PJRT_DEFINE_STRUCT_TRAITS(PJRT_SendCallbackInfo, send_callback);

struct PJRT_RecvCallbackInfo {
  int64_t channel_id; /* the recv op it serves */
  void* user_arg;
  PJRT_RecvCallback recv_callback;
};
PJRT_DEFINE_STRUCT_TRAITS(PJRT_RecvCallbackInfo, recv_callback);

/* Called with the value of an HLO instruction's output (0.112). */
typedef void (*PJRT_HloOutputCallback)(int64_t replica_id, int64_t partition_id, const void* data,
                                       const int64_t* shape_dims, size_t shape_num_dims,
                                       PJRT_Buffer_Type shape_element_type, int64_t operand_index,
                                       void* user_arg);

typedef struct PJRT_HloOutputCallbackInfo {
  void* user_arg;
  PJRT_HloOutputCallback callback;
  int64_t callback_id;
  size_t num_operands;
} PJRT_HloOutputCallbackInfo;
PJRT_DEFINE_STRUCT_TRAITS(PJRT_HloOutputCallbackInfo, num_operands);

typedef struct PJRT_MultiSlice_Config PJRT_MultiSlice_Config;

struct PJRT_ExecuteOptions {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  /* Per addressable device (num_devices lists), the callbacks of each send / recv op, matched
   * by channel id. The functions must outlive the execution; the lists need not. */
  PJRT_SendCallbackInfo** send_callbacks;
  PJRT_RecvCallbackInfo** recv_callbacks;
  size_t num_send_ops;
  size_t num_recv_ops;
  int launch_id; /* non-zero: names a multi-device launch */
  /* Inputs that must not be donated even if the program allows it (0.39). */
  const int64_t* non_donatable_input_indices;
  size_t num_non_donatable_input_indices;
  PJRT_ExecuteContext* context; /* 0.64 */
  /* The framework's call site (a NUL-terminated string, valid during the call) (0.76). */
  const char* call_location;
  /* Incarnation of every task: task task_ids[i] has incarnation incarnation_ids[i] (0.78). */
  size_t num_tasks;
  int* task_ids;
  int64_t* incarnation_ids;
  PJRT_MultiSlice_Config* multi_slice_config; /* 0.97 */
  /* Give callbacks data in major-to-minor order (0.108). */
  bool use_major_to_minor_data_layout_for_callbacks;
  /* Called for HLO outputs across all replicas and partitions; must outlive execution (0.112). */
  PJRT_HloOutputCallbackInfo* hlo_output_callbacks;
  size_t num_hlo_output_callbacks;
};
PJRT_DEFINE_STRUCT_TRAITS(PJRT_ExecuteOptions, num_hlo_output_callbacks);

struct PJRT_LoadedExecutable_Execute_Args {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  PJRT_LoadedExecutable* executable;
  PJRT_ExecuteOptions* options; /* needs to live only during the call */
  /* [num_devices][num_args] inputs. */
  PJRT_Buffer* const* const* argument_lists;
  size_t num_devices;
  size_t num_args;
  /* [num_devices][num_outputs], allocated by the caller, filled with new buffers that the caller
   * destroys. num_outputs comes from PJRT_Executable_NumOutputs. */
  PJRT_Buffer** const* output_lists;
  /* Optional, num_devices entries: each gets a new event that is ready when that device's
   * execution finishes. Not written if Execute fails. */
  PJRT_Event** device_complete_events;
  /* NULL: run on the devices chosen at compile time. Otherwise run only on this addressable
   * device (num_devices == 1). */
  PJRT_Device* execute_device;
};
PJRT_DEFINE_STRUCT_TRAITS(PJRT_LoadedExecutable_Execute_Args, execute_device);

/* Runs the executable on addressable devices. */
typedef PJRT_Error* PJRT_LoadedExecutable_Execute(PJRT_LoadedExecutable_Execute_Args* args);

struct PJRT_Executable_NumOutputs_Args {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  PJRT_Executable* executable;
  size_t num_outputs; /* out */
};
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Executable_NumOutputs_Args, num_outputs);

/* Outputs per device. */
typedef PJRT_Error* PJRT_Executable_NumOutputs(PJRT_Executable_NumOutputs_Args* args);

struct PJRT_Executable_SizeOfGeneratedCodeInBytes_Args {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  PJRT_Executable* executable;
  int64_t size_in_bytes; /* out */
};
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Executable_SizeOfGeneratedCodeInBytes_Args, size_in_bytes);

typedef PJRT_Error* PJRT_Executable_SizeOfGeneratedCodeInBytes(
    PJRT_Executable_SizeOfGeneratedCodeInBytes_Args* args);

struct PJRT_Executable_Fingerprint_Args {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  PJRT_Executable* executable;
  const char* executable_fingerprint; /* out; lives as long as `executable` */
  size_t executable_fingerprint_size; /* out */
};
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Executable_Fingerprint_Args, executable_fingerprint_size);

/* Equal for executables compiled from identical inputs (0.35). */
typedef PJRT_Error* PJRT_Executable_Fingerprint(PJRT_Executable_Fingerprint_Args* args);

struct PJRT_Executable_GetCostAnalysis_Args {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  PJRT_Executable* executable;
  size_t num_properties;             /* out */
  const PJRT_NamedValue* properties; /* out; owned by `executable` */
};
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Executable_GetCostAnalysis_Args, properties);

/* Platform-specific cost estimates (flops, bytes accessed, ...). */
typedef PJRT_Error* PJRT_Executable_GetCostAnalysis(PJRT_Executable_GetCostAnalysis_Args* args);

struct PJRT_Executable_GetCompiledMemoryStats_Args {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  PJRT_Executable* executable;
  /* All out: sizes in bytes, as xla::CompiledMemoryStats has them. Device memory: */
  int64_t generated_code_size_in_bytes;
  int64_t argument_size_in_bytes;
  int64_t output_size_in_bytes;
  int64_t alias_size_in_bytes; /* arguments reused as outputs */
  int64_t temp_size_in_bytes;
  /* Host memory: */
  int64_t host_generated_code_size_in_bytes;
  int64_t host_argument_size_in_bytes;
  int64_t host_output_size_in_bytes;
  int64_t host_alias_size_in_bytes;
  int64_t host_temp_size_in_bytes;
  /* Totals and peaks of device memory: */
  int64_t peak_memory_in_bytes;
  int64_t total_size_in_bytes;
  int64_t total_allocation_bytes;
  int64_t indefinite_allocations;
  int64_t peak_unpadded_heap_bytes;
};
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Executable_GetCompiledMemoryStats_Args, peak_unpadded_heap_bytes);

/* Memory the executable needs, as estimated at compile time (0.40). */
typedef PJRT_Error* PJRT_Executable_GetCompiledMemoryStats(
    PJRT_Executable_GetCompiledMemoryStats_Args* args);

struct PJRT_Executable_OutputElementTypes_Args {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  PJRT_Executable* executable;
  PJRT_Buffer_Type* output_types; /* out */
  size_t num_output_types;        /* out */
};
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Executable_OutputElementTypes_Args, num_output_types);

/* (0.29) */
typedef PJRT_Error* PJRT_Executable_OutputElementTypes(
    PJRT_Executable_OutputElementTypes_Args* args);

struct PJRT_Executable_OutputDimensions_Args {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  PJRT_Executable* executable;
  size_t num_outputs;       /* out */
  const int64_t* dims;      /* out: every output's dimensions, concatenated */
  const size_t* dim_sizes;  /* out: num_outputs ranks */
};
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Executable_OutputDimensions_Args, dim_sizes);

/* (0.29) */
typedef PJRT_Error* PJRT_Executable_OutputDimensions(PJRT_Executable_OutputDimensions_Args* args);

struct PJRT_Executable_ParameterMemoryKinds_Args {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  PJRT_Executable* executable;
  size_t num_parameters;            /* out */
  const char* const* memory_kinds;  /* out: num_parameters strings */
  const size_t* memory_kind_sizes;  /* out */
};
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Executable_ParameterMemoryKinds_Args, memory_kind_sizes);

/* (0.102) */
typedef PJRT_Error* PJRT_Executable_ParameterMemoryKinds(
    PJRT_Executable_ParameterMemoryKinds_Args* args);

struct PJRT_Executable_OutputMemoryKinds_Args {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  PJRT_Executable* executable;
  size_t num_outputs;               /* out */
  const char* const* memory_kinds;  /* out: num_outputs strings */
  const size_t* memory_kind_sizes;  /* out */
};
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Executable_OutputMemoryKinds_Args, memory_kind_sizes);

typedef PJRT_Error* PJRT_Executable_OutputMemoryKinds(
    PJRT_Executable_OutputMemoryKinds_Args* args);

typedef struct PJRT_SerializedExecutable PJRT_SerializedExecutable;
typedef struct PJRT_SerializedCompileOptions PJRT_SerializedCompileOptions;

struct PJRT_Executable_Serialize_Args {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  const PJRT_Executable* executable;
  const char* serialized_bytes; /* out; lives as long as serialized_executable */
  size_t serialized_bytes_size; /* out */
  PJRT_SerializedExecutable* serialized_executable; /* out */
  /* out: frees serialized_executable; call exactly once. */
  void (*serialized_executable_deleter)(PJRT_SerializedExecutable* exec);
};
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Executable_Serialize_Args, serialized_executable_deleter);

/* Bytes that PJRT_Executable_DeserializeAndLoad of the same plugin version turns back into the
 * executable; not stable across versions. */
typedef PJRT_Error* PJRT_Executable_Serialize(PJRT_Executable_Serialize_Args* args);

struct PJRT_Executable_GetCompileOptions_Args {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  PJRT_Executable* executable;
  const char* serialized_bytes; /* out; lives as long as serialized_compile_options */
  size_t serialized_bytes_size; /* out */
  PJRT_SerializedCompileOptions* serialized_compile_options; /* out */
  /* out: frees serialized_compile_options; call exactly once. */
  void (*serialized_compile_options_deleter)(PJRT_SerializedCompileOptions* options);
};
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Executable_GetCompileOptions_Args,
                          serialized_compile_options_deleter);

/* The serialized CompileOptionsProto the executable was compiled with (0.87). */
typedef PJRT_Error* PJRT_Executable_GetCompileOptions(
    PJRT_Executable_GetCompileOptions_Args* args);

/* Options for loading a deserialized executable (0.111). */
struct PJRT_LoadOptions {
  size_t struct_size;
  const int32_t* computation_origin;
  size_t computation_origin_size;
  PJRT_MultiSlice_Config* multi_slice_config;
};
PJRT_DEFINE_STRUCT_TRAITS(PJRT_LoadOptions, multi_slice_config);

struct PJRT_Executable_DeserializeAndLoad_Args {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  PJRT_Client* client;
  const char* serialized_executable;
  size_t serialized_executable_size;
  PJRT_LoadedExecutable* loaded_executable; /* out */
  /* A serialized CompileOptionsProto to use instead of the stored one, or NULL (0.71). */
  const char* overridden_serialized_compile_options;
  size_t overridden_serialized_compile_options_size;
  PJRT_LoadOptions* load_options;
};
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Executable_DeserializeAndLoad_Args, load_options);

/* Turns PJRT_Executable_Serialize's bytes back into a loaded executable. */
typedef PJRT_Error* PJRT_Executable_DeserializeAndLoad(
    PJRT_Executable_DeserializeAndLoad_Args* args);

struct PJRT_LoadedExecutable_Fingerprint_Args {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  PJRT_LoadedExecutable* executable;
  const char* executable_fingerprint; /* out */
  size_t executable_fingerprint_size; /* out */
};
PJRT_DEFINE_STRUCT_TRAITS(PJRT_LoadedExecutable_Fingerprint_Args, executable_fingerprint_size);

/* Deprecated (0.35): use PJRT_Executable_Fingerprint. */
typedef PJRT_Error* PJRT_LoadedExecutable_Fingerprint(
    PJRT_LoadedExecutable_Fingerprint_Args* args);

/* ======================================= Buffers ====================================== */

struct PJRT_Buffer_Destroy_Args {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  PJRT_Buffer* buffer;
};
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Buffer_Destroy_Args, buffer);

/* Deletes (as PJRT_Buffer_Delete) and frees the handle (NULL is fine). */
typedef PJRT_Error* PJRT_Buffer_Destroy(PJRT_Buffer_Destroy_Args* args);

struct PJRT_Buffer_ElementType_Args {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  PJRT_Buffer* buffer;
  PJRT_Buffer_Type type; /* out */
};
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Buffer_ElementType_Args, type);

typedef PJRT_Error* PJRT_Buffer_ElementType(PJRT_Buffer_ElementType_Args* args);

struct PJRT_Buffer_Dimensions_Args {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  PJRT_Buffer* buffer;
  const int64_t* dims; /* out; num_dims entries, owned by `buffer` */
  size_t num_dims;     /* out */
};
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Buffer_Dimensions_Args, num_dims);

typedef PJRT_Error* PJRT_Buffer_Dimensions(PJRT_Buffer_Dimensions_Args* args);

struct PJRT_Buffer_UnpaddedDimensions_Args {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  PJRT_Buffer* buffer;
  const int64_t* unpadded_dims; /* out; owned by `buffer` */
  size_t num_dims;              /* out */
};
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Buffer_UnpaddedDimensions_Args, num_dims);

/* The dimensions without padding; they differ from PJRT_Buffer_Dimensions only for dynamic
 * dimensions padded to a bound. */
typedef PJRT_Error* PJRT_Buffer_UnpaddedDimensions(PJRT_Buffer_UnpaddedDimensions_Args* args);

struct PJRT_Buffer_DynamicDimensionIndices_Args {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  PJRT_Buffer* buffer;
  const size_t* dynamic_dim_indices; /* out; owned by `buffer` */
  size_t num_dynamic_dims;           /* out */
};
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Buffer_DynamicDimensionIndices_Args, num_dynamic_dims);

/* Which dimensions are dynamic (known only at run time); none for static shapes. */
typedef PJRT_Error* PJRT_Buffer_DynamicDimensionIndices(
    PJRT_Buffer_DynamicDimensionIndices_Args* args);

struct PJRT_Buffer_GetMemoryLayout_Args {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  PJRT_Buffer* buffer;
  PJRT_Buffer_MemoryLayout layout; /* out; its arrays are owned by `buffer` */
};
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Buffer_GetMemoryLayout_Args, layout);

/* The buffer's on-device layout. Deprecated (0.54) in favour of the layouts extension. */
typedef PJRT_Error* PJRT_Buffer_GetMemoryLayout(PJRT_Buffer_GetMemoryLayout_Args* args);

struct PJRT_Buffer_ToHostBuffer_Args {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  PJRT_Buffer* src;
  /* The layout wanted on the host, or NULL for the buffer's own; needs to live only during the
   * call. */
  PJRT_Buffer_MemoryLayout* host_layout;
  void* dst;       /* NULL: only report the size needed in dst_size */
  size_t dst_size; /* in: the size of dst; out (dst == NULL): the size needed */
  PJRT_Event* event; /* out: ready when dst holds the data */
};
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Buffer_ToHostBuffer_Args, event);

/* Copies the buffer's value into caller memory, asynchronously. */
typedef PJRT_Error* PJRT_Buffer_ToHostBuffer(PJRT_Buffer_ToHostBuffer_Args* args);

struct PJRT_Buffer_OnDeviceSizeInBytes_Args {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  PJRT_Buffer* buffer;
  size_t on_device_size_in_bytes; /* out */
};
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Buffer_OnDeviceSizeInBytes_Args, on_device_size_in_bytes);

typedef PJRT_Error* PJRT_Buffer_OnDeviceSizeInBytes(PJRT_Buffer_OnDeviceSizeInBytes_Args* args);

struct PJRT_Buffer_Delete_Args {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  PJRT_Buffer* buffer;
};
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Buffer_Delete_Args, buffer);

/* Drops the buffer's hold on its device memory but keeps the handle, which then serves only
 * IsDeleted and Destroy. The memory is freed once work still using it finishes. */
typedef PJRT_Error* PJRT_Buffer_Delete(PJRT_Buffer_Delete_Args* args);

struct PJRT_Buffer_IsDeleted_Args {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  PJRT_Buffer* buffer;
  bool is_deleted; /* out */
};
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Buffer_IsDeleted_Args, is_deleted);

/* Whether the buffer was deleted (or donated). */
typedef PJRT_Error* PJRT_Buffer_IsDeleted(PJRT_Buffer_IsDeleted_Args* args);

struct PJRT_Buffer_CopyRawToHost_Args {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  PJRT_Buffer* buffer;
  void* dst;
  int64_t offset;
  int64_t transfer_size;
  PJRT_Event* event; /* out */
};
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Buffer_CopyRawToHost_Args, event);

/* Copies bytes [offset, offset + transfer_size) of the on-device representation (0.56). */
typedef PJRT_Error* PJRT_Buffer_CopyRawToHost(PJRT_Buffer_CopyRawToHost_Args* args);

struct PJRT_Buffer_CopyRawToHostFuture_Callback_Args {
  size_t struct_size;
  void* callback_data; /* from PJRT_Buffer_CopyRawToHostFuture */
  PJRT_Error_Code error_code;
  const char* error_message; /* meaningful only when error_code is not OK */
  size_t error_message_size;
  void* dst; /* meaningful only when error_code is OK */
};
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Buffer_CopyRawToHostFuture_Callback_Args, dst);

struct PJRT_Buffer_CopyRawToHostFuture_Args {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  PJRT_Buffer* buffer;
  int64_t offset;
  int64_t transfer_size;
  PJRT_Event* event;   /* out */
  void* callback_data; /* out */
  /* out: the caller calls this once with callback_data and the destination (or an error) when
   * the destination is ready; the copy starts then. */
  void (*future_ready_callback)(PJRT_Buffer_CopyRawToHostFuture_Callback_Args* args);
};
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Buffer_CopyRawToHostFuture_Args, future_ready_callback);

/* CopyRawToHost for a destination that is not known yet (0.84). */
typedef PJRT_Error* PJRT_Buffer_CopyRawToHostFuture(PJRT_Buffer_CopyRawToHostFuture_Args* args);

struct PJRT_Buffer_CopyToDevice_Args {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  PJRT_Buffer* buffer;
  PJRT_Device* dst_device;
  PJRT_Buffer* dst_buffer; /* out; the caller destroys it */
};
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Buffer_CopyToDevice_Args, dst_buffer);

/* Copies the buffer to another device of the same client; an error if it is already there. */
typedef PJRT_Error* PJRT_Buffer_CopyToDevice(PJRT_Buffer_CopyToDevice_Args* args);

struct PJRT_Buffer_CopyToMemory_Args {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  PJRT_Buffer* buffer;
  PJRT_Memory* dst_memory;
  PJRT_Buffer* dst_buffer; /* out; the caller destroys it */
};
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Buffer_CopyToMemory_Args, dst_buffer);

/* Copies the buffer to another memory of the same client; an error if it is already there
 * (0.32). */
typedef PJRT_Error* PJRT_Buffer_CopyToMemory(PJRT_Buffer_CopyToMemory_Args* args);

struct PJRT_Buffer_Bitcast_Args {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  PJRT_Buffer* buffer;
  PJRT_Buffer_Type element_type; /* the new type */
  const int64_t* dims;           /* the new dimensions */
  size_t num_dims;
  /* The new layout; NULL means the default layout (not the source's). */
  PJRT_Buffer_MemoryLayout* device_layout;
  PJRT_Buffer* out_buffer; /* out */
};
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Buffer_Bitcast_Args, out_buffer);

/* A new buffer over the same bytes with another type, shape and layout (0.98). */
typedef PJRT_Error* PJRT_Buffer_Bitcast(PJRT_Buffer_Bitcast_Args* args);

struct PJRT_Buffer_IsOnCpu_Args {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  PJRT_Buffer* buffer;
  bool is_on_cpu; /* out */
};
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Buffer_IsOnCpu_Args, is_on_cpu);

/* Whether the data lives in host memory the caller could read directly. */
typedef PJRT_Error* PJRT_Buffer_IsOnCpu(PJRT_Buffer_IsOnCpu_Args* args);

struct PJRT_Buffer_Device_Args {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  PJRT_Buffer* buffer;
  PJRT_Device* device; /* out */
};
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Buffer_Device_Args, device);

typedef PJRT_Error* PJRT_Buffer_Device(PJRT_Buffer_Device_Args* args);

struct PJRT_Buffer_Memory_Args {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  PJRT_Buffer* buffer;
  PJRT_Memory* memory; /* out */
};
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Buffer_Memory_Args, memory);

typedef PJRT_Error* PJRT_Buffer_Memory(PJRT_Buffer_Memory_Args* args);

struct PJRT_Buffer_ReadyEvent_Args {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  PJRT_Buffer* buffer;
  PJRT_Event* event; /* out; the caller destroys it */
};
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Buffer_ReadyEvent_Args, event);

/* An event that is ready once the buffer's data is (or has failed). Asked after Delete or
 * donation, the event carries an error at once; an event obtained before Delete keeps its
 * outcome. */
typedef PJRT_Error* PJRT_Buffer_ReadyEvent(PJRT_Buffer_ReadyEvent_Args* args);

struct PJRT_Buffer_UnsafePointer_Args {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  PJRT_Buffer* buffer;
  uintptr_t buffer_pointer; /* out */
};
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Buffer_UnsafePointer_Args, buffer_pointer);

/* A platform-dependent address of the data (often the device address). */
typedef PJRT_Error* PJRT_Buffer_UnsafePointer(PJRT_Buffer_UnsafePointer_Args* args);

struct PJRT_Buffer_IncreaseExternalReferenceCount_Args {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  PJRT_Buffer* buffer;
};
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Buffer_IncreaseExternalReferenceCount_Args, buffer);

/* Records that another framework (NumPy, DLPack) shares the raw data, which must then stay where
 * it is and stay alive. */
typedef PJRT_Error* PJRT_Buffer_IncreaseExternalReferenceCount(
    PJRT_Buffer_IncreaseExternalReferenceCount_Args* args);

struct PJRT_Buffer_DecreaseExternalReferenceCount_Args {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  PJRT_Buffer* buffer;
};
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Buffer_DecreaseExternalReferenceCount_Args, buffer);

/* Undoes one Increase; an error if the count is already zero. */
typedef PJRT_Error* PJRT_Buffer_DecreaseExternalReferenceCount(
    PJRT_Buffer_DecreaseExternalReferenceCount_Args* args);

struct PJRT_Buffer_OpaqueDeviceMemoryDataPointer_Args {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  PJRT_Buffer* buffer;
  void* device_memory_ptr; /* out */
};
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Buffer_OpaqueDeviceMemoryDataPointer_Args, device_memory_ptr);

/* The device memory pointer; stable only while the external reference count is above zero. */
typedef PJRT_Error* PJRT_Buffer_OpaqueDeviceMemoryDataPointer(
    PJRT_Buffer_OpaqueDeviceMemoryDataPointer_Args* args);

struct PJRT_Buffer_DonateWithControlDependency_Callback_Args {
  size_t struct_size;
  void* callback_data; /* from PJRT_Buffer_DonateWithControlDependency */
  PJRT_Error_Code error_code;
  const char* error_message;
  size_t error_message_size;
};
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Buffer_DonateWithControlDependency_Callback_Args,
                          error_message_size);

struct PJRT_Buffer_DonateWithControlDependency_Args {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  PJRT_Buffer* buffer;
  void* callback_data; /* out */
  /* out: the caller calls this once, with callback_data, when the dependency is satisfied (or
   * failed). */
  void (*dependency_ready_callback)(PJRT_Buffer_DonateWithControlDependency_Callback_Args* args);
  PJRT_Buffer* out_buffer; /* out */
};
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Buffer_DonateWithControlDependency_Args, out_buffer);

/* Moves the buffer's memory into a new buffer that becomes ready only after a dependency the
 * caller signals; the old buffer counts as donated (deleted) (0.88). */
typedef PJRT_Error* PJRT_Buffer_DonateWithControlDependency(
    PJRT_Buffer_DonateWithControlDependency_Args* args);

/* ================================= Copy-to-device streams ================================= */

struct PJRT_CopyToDeviceStream_Destroy_Args {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  PJRT_CopyToDeviceStream* stream;
};
PJRT_DEFINE_STRUCT_TRAITS(PJRT_CopyToDeviceStream_Destroy_Args, stream);

/* Frees `stream` (NULL is fine). */
typedef PJRT_Error* PJRT_CopyToDeviceStream_Destroy(PJRT_CopyToDeviceStream_Destroy_Args* args);

struct PJRT_CopyToDeviceStream_AddChunk_Args {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  PJRT_CopyToDeviceStream* stream;
  PJRT_Chunk* chunk; /* taken over: the implementation calls chunk->deleter */
  PJRT_Event* transfer_complete; /* out */
};
PJRT_DEFINE_STRUCT_TRAITS(PJRT_CopyToDeviceStream_AddChunk_Args, transfer_complete);

/* Starts copying a chunk to the device. The event fails if the chunk would exceed the total
 * size, the stream is already complete, or the chunk is not a multiple of the granule. */
typedef PJRT_Error* PJRT_CopyToDeviceStream_AddChunk(PJRT_CopyToDeviceStream_AddChunk_Args* args);

struct PJRT_CopyToDeviceStream_TotalBytes_Args {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  PJRT_CopyToDeviceStream* stream;
  int64_t total_bytes; /* out */
};
PJRT_DEFINE_STRUCT_TRAITS(PJRT_CopyToDeviceStream_TotalBytes_Args, total_bytes);

/* How many bytes the stream expects in all. */
typedef PJRT_Error* PJRT_CopyToDeviceStream_TotalBytes(
    PJRT_CopyToDeviceStream_TotalBytes_Args* args);

struct PJRT_CopyToDeviceStream_GranuleSize_Args {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  PJRT_CopyToDeviceStream* stream;
  int64_t granule_size_in_bytes; /* out */
};
PJRT_DEFINE_STRUCT_TRAITS(PJRT_CopyToDeviceStream_GranuleSize_Args, granule_size_in_bytes);

/* Chunk sizes must be multiples of this. */
typedef PJRT_Error* PJRT_CopyToDeviceStream_GranuleSize(
    PJRT_CopyToDeviceStream_GranuleSize_Args* args);

struct PJRT_CopyToDeviceStream_CurrentBytes_Args {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  PJRT_CopyToDeviceStream* stream;
  int64_t current_bytes; /* out */
};
PJRT_DEFINE_STRUCT_TRAITS(PJRT_CopyToDeviceStream_CurrentBytes_Args, current_bytes);

/* How many bytes were transferred or are queued so far. */
typedef PJRT_Error* PJRT_CopyToDeviceStream_CurrentBytes(
    PJRT_CopyToDeviceStream_CurrentBytes_Args* args);

/* ================================== Device topologies ================================== */

struct PJRT_TopologyDescription_Create_Args {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  const char* topology_name;
  size_t topology_name_size;
  const PJRT_NamedValue* create_options;
  size_t num_options;
  PJRT_TopologyDescription* topology; /* out */
};
PJRT_DEFINE_STRUCT_TRAITS(PJRT_TopologyDescription_Create_Args, topology);

/* Describes a topology without attaching to devices (for ahead-of-time compilation). */
typedef PJRT_Error* PJRT_TopologyDescription_Create(PJRT_TopologyDescription_Create_Args* args);

struct PJRT_TopologyDescription_Destroy_Args {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  PJRT_TopologyDescription* topology;
};
PJRT_DEFINE_STRUCT_TRAITS(PJRT_TopologyDescription_Destroy_Args, topology);

/* Frees `topology` (NULL is fine). */
typedef PJRT_Error* PJRT_TopologyDescription_Destroy(PJRT_TopologyDescription_Destroy_Args* args);

struct PJRT_TopologyDescription_PlatformVersion_Args {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  PJRT_TopologyDescription* topology;
  const char* platform_version; /* out; owned by `topology` */
  size_t platform_version_size; /* out */
};
PJRT_DEFINE_STRUCT_TRAITS(PJRT_TopologyDescription_PlatformVersion_Args, platform_version_size);

typedef PJRT_Error* PJRT_TopologyDescription_PlatformVersion(
    PJRT_TopologyDescription_PlatformVersion_Args* args);

struct PJRT_TopologyDescription_PlatformName_Args {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  const PJRT_TopologyDescription* topology;
  const char* platform_name; /* out; owned by `topology` */
  size_t platform_name_size; /* out */
};
PJRT_DEFINE_STRUCT_TRAITS(PJRT_TopologyDescription_PlatformName_Args, platform_name_size);

typedef PJRT_Error* PJRT_TopologyDescription_PlatformName(
    PJRT_TopologyDescription_PlatformName_Args* args);

struct PJRT_TopologyDescription_GetDeviceDescriptions_Args {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  const PJRT_TopologyDescription* topology;
  PJRT_DeviceDescription* const* descriptions; /* out; owned by `topology` */
  size_t num_descriptions;                     /* out */
};
PJRT_DEFINE_STRUCT_TRAITS(PJRT_TopologyDescription_GetDeviceDescriptions_Args, num_descriptions);

/* Every device of the topology, in an order that is the same across calls. */
typedef PJRT_Error* PJRT_TopologyDescription_GetDeviceDescriptions(
    PJRT_TopologyDescription_GetDeviceDescriptions_Args* args);

typedef struct PJRT_SerializedTopology PJRT_SerializedTopology;

struct PJRT_TopologyDescription_Serialize_Args {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  PJRT_TopologyDescription* topology;
  const char* serialized_bytes; /* out; lives as long as serialized_topology */
  size_t serialized_bytes_size; /* out */
  PJRT_SerializedTopology* serialized_topology; /* out */
  /* out: frees serialized_topology; call exactly once. */
  void (*serialized_topology_deleter)(PJRT_SerializedTopology* serialized_topology);
};
PJRT_DEFINE_STRUCT_TRAITS(PJRT_TopologyDescription_Serialize_Args, serialized_topology_deleter);

/* Bytes identifying the topology (for cache keys). */
typedef PJRT_Error* PJRT_TopologyDescription_Serialize(
    PJRT_TopologyDescription_Serialize_Args* args);

struct PJRT_TopologyDescription_Deserialize_Args {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  const char* serialized_topology;
  size_t serialized_topology_size;
  PJRT_TopologyDescription* topology; /* out */
};
PJRT_DEFINE_STRUCT_TRAITS(PJRT_TopologyDescription_Deserialize_Args, topology);

/* (0.75) */
typedef PJRT_Error* PJRT_TopologyDescription_Deserialize(
    PJRT_TopologyDescription_Deserialize_Args* args);

struct PJRT_TopologyDescription_Attributes_Args {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  PJRT_TopologyDescription* topology;
  const PJRT_NamedValue* attributes; /* out; lives as long as `topology` */
  size_t num_attributes;             /* out */
};
PJRT_DEFINE_STRUCT_TRAITS(PJRT_TopologyDescription_Attributes_Args, num_attributes);

typedef PJRT_Error* PJRT_TopologyDescription_Attributes(
    PJRT_TopologyDescription_Attributes_Args* args);

struct PJRT_TopologyDescription_Fingerprint_Args {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  const PJRT_TopologyDescription* topology;
  uint64_t fingerprint; /* out */
};
PJRT_DEFINE_STRUCT_TRAITS(PJRT_TopologyDescription_Fingerprint_Args, fingerprint);

/* (0.101) */
typedef PJRT_Error* PJRT_TopologyDescription_Fingerprint(
    PJRT_TopologyDescription_Fingerprint_Args* args);

struct PJRT_TopologyDescription_MakeCanonicalShapeForMemorySpace_Args {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  const PJRT_TopologyDescription* topology;
  int memory_space_kind_id;
  /* The shape in question, with an optional layout. */
  const int64_t* dims;
  size_t num_dims;
  PJRT_Buffer_Type element_type;
  const PJRT_Buffer_MemoryLayout* layout;
  /* out: the canonical shape as a serialized xla.ShapeProto, freed with the deleter. */
  const char* serialized_shape;
  size_t serialized_shape_size;
  void (*serialized_shape_deleter)(const char*);
};
PJRT_DEFINE_STRUCT_TRAITS(PJRT_TopologyDescription_MakeCanonicalShapeForMemorySpace_Args,
                          serialized_shape_deleter);

/* (0.109) */
typedef PJRT_Error* PJRT_TopologyDescription_MakeCanonicalShapeForMemorySpace(
    PJRT_TopologyDescription_MakeCanonicalShapeForMemorySpace_Args* args);

struct PJRT_TopologyDescription_GetMemorySpaceKindIds_Args {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  const PJRT_TopologyDescription* topology;
  const int* memory_space_kind_ids; /* out */
  size_t num_memory_space_kind_ids; /* out */
};
PJRT_DEFINE_STRUCT_TRAITS(PJRT_TopologyDescription_GetMemorySpaceKindIds_Args,
                          num_memory_space_kind_ids);

/* (0.110) */
typedef PJRT_Error* PJRT_TopologyDescription_GetMemorySpaceKindIds(
    PJRT_TopologyDescription_GetMemorySpaceKindIds_Args* args);

struct PJRT_Compile_Args {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  const PJRT_TopologyDescription* topology;
  const PJRT_Program* program; /* needs to live only during the call */
  const char* compile_options; /* a serialized xla.CompileOptionsProto */
  size_t compile_options_size;
  PJRT_Client* client; /* optional, for profile-guided choices */
  PJRT_Executable* executable; /* out */
};
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Compile_Args, executable);

/* Compiles against a topology rather than a client; load the result with PJRT_Client_Load. */
typedef PJRT_Error* PJRT_Compile(PJRT_Compile_Args* args);

/* ===================================== The table ====================================== */

/* One slot per function, named like its type. The order is the ABI: the first 90 slots were
 * fixed in 0.57; every later function is appended at the end. */
#define _PJRT_API_STRUCT_FIELD(fn_type) fn_type* fn_type

typedef struct PJRT_Api {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  PJRT_Api_Version pjrt_api_version;

  _PJRT_API_STRUCT_FIELD(PJRT_Error_Destroy);
  _PJRT_API_STRUCT_FIELD(PJRT_Error_Message);
  PJRT_NO_DISCARD _PJRT_API_STRUCT_FIELD(PJRT_Error_GetCode);

  PJRT_NO_DISCARD _PJRT_API_STRUCT_FIELD(PJRT_Plugin_Initialize);
  PJRT_NO_DISCARD _PJRT_API_STRUCT_FIELD(PJRT_Plugin_Attributes);

  PJRT_NO_DISCARD _PJRT_API_STRUCT_FIELD(PJRT_Event_Destroy);
  PJRT_NO_DISCARD _PJRT_API_STRUCT_FIELD(PJRT_Event_IsReady);
  PJRT_NO_DISCARD _PJRT_API_STRUCT_FIELD(PJRT_Event_Error);
  PJRT_NO_DISCARD _PJRT_API_STRUCT_FIELD(PJRT_Event_Await);
  PJRT_NO_DISCARD _PJRT_API_STRUCT_FIELD(PJRT_Event_OnReady);

  PJRT_NO_DISCARD _PJRT_API_STRUCT_FIELD(PJRT_Client_Create);
  PJRT_NO_DISCARD _PJRT_API_STRUCT_FIELD(PJRT_Client_Destroy);
  PJRT_NO_DISCARD _PJRT_API_STRUCT_FIELD(PJRT_Client_PlatformName);
  PJRT_NO_DISCARD _PJRT_API_STRUCT_FIELD(PJRT_Client_ProcessIndex);
  PJRT_NO_DISCARD _PJRT_API_STRUCT_FIELD(PJRT_Client_PlatformVersion);
  PJRT_NO_DISCARD _PJRT_API_STRUCT_FIELD(PJRT_Client_Devices);
  PJRT_NO_DISCARD _PJRT_API_STRUCT_FIELD(PJRT_Client_AddressableDevices);
  PJRT_NO_DISCARD _PJRT_API_STRUCT_FIELD(PJRT_Client_LookupDevice);
  PJRT_NO_DISCARD _PJRT_API_STRUCT_FIELD(PJRT_Client_LookupAddressableDevice);
  PJRT_NO_DISCARD _PJRT_API_STRUCT_FIELD(PJRT_Client_AddressableMemories);
  PJRT_NO_DISCARD _PJRT_API_STRUCT_FIELD(PJRT_Client_Compile);
  PJRT_NO_DISCARD _PJRT_API_STRUCT_FIELD(PJRT_Client_DefaultDeviceAssignment);
  PJRT_NO_DISCARD _PJRT_API_STRUCT_FIELD(PJRT_Client_BufferFromHostBuffer);

  PJRT_NO_DISCARD _PJRT_API_STRUCT_FIELD(PJRT_DeviceDescription_Id);
  PJRT_NO_DISCARD _PJRT_API_STRUCT_FIELD(PJRT_DeviceDescription_ProcessIndex);
  PJRT_NO_DISCARD _PJRT_API_STRUCT_FIELD(PJRT_DeviceDescription_Attributes);
  PJRT_NO_DISCARD _PJRT_API_STRUCT_FIELD(PJRT_DeviceDescription_Kind);
  PJRT_NO_DISCARD _PJRT_API_STRUCT_FIELD(PJRT_DeviceDescription_DebugString);
  PJRT_NO_DISCARD _PJRT_API_STRUCT_FIELD(PJRT_DeviceDescription_ToString);

  PJRT_NO_DISCARD _PJRT_API_STRUCT_FIELD(PJRT_Device_GetDescription);
  PJRT_NO_DISCARD _PJRT_API_STRUCT_FIELD(PJRT_Device_IsAddressable);
  PJRT_NO_DISCARD _PJRT_API_STRUCT_FIELD(PJRT_Device_LocalHardwareId);
  PJRT_NO_DISCARD _PJRT_API_STRUCT_FIELD(PJRT_Device_AddressableMemories);
  PJRT_NO_DISCARD _PJRT_API_STRUCT_FIELD(PJRT_Device_DefaultMemory);
  PJRT_NO_DISCARD _PJRT_API_STRUCT_FIELD(PJRT_Device_MemoryStats);

  PJRT_NO_DISCARD _PJRT_API_STRUCT_FIELD(PJRT_Memory_Id);
  PJRT_NO_DISCARD _PJRT_API_STRUCT_FIELD(PJRT_Memory_Kind);
  PJRT_NO_DISCARD _PJRT_API_STRUCT_FIELD(PJRT_Memory_DebugString);
  PJRT_NO_DISCARD _PJRT_API_STRUCT_FIELD(PJRT_Memory_ToString);
  PJRT_NO_DISCARD _PJRT_API_STRUCT_FIELD(PJRT_Memory_AddressableByDevices);

  PJRT_NO_DISCARD _PJRT_API_STRUCT_FIELD(PJRT_Executable_Destroy);
  PJRT_NO_DISCARD _PJRT_API_STRUCT_FIELD(PJRT_Executable_Name);
  PJRT_NO_DISCARD _PJRT_API_STRUCT_FIELD(PJRT_Executable_NumReplicas);
  PJRT_NO_DISCARD _PJRT_API_STRUCT_FIELD(PJRT_Executable_NumPartitions);
  PJRT_NO_DISCARD _PJRT_API_STRUCT_FIELD(PJRT_Executable_NumOutputs);
  PJRT_NO_DISCARD _PJRT_API_STRUCT_FIELD(PJRT_Executable_SizeOfGeneratedCodeInBytes);
  PJRT_NO_DISCARD _PJRT_API_STRUCT_FIELD(PJRT_Executable_GetCostAnalysis);
  PJRT_NO_DISCARD _PJRT_API_STRUCT_FIELD(PJRT_Executable_OutputMemoryKinds);
  PJRT_NO_DISCARD _PJRT_API_STRUCT_FIELD(PJRT_Executable_OptimizedProgram);
  PJRT_NO_DISCARD _PJRT_API_STRUCT_FIELD(PJRT_Executable_Serialize);

  PJRT_NO_DISCARD _PJRT_API_STRUCT_FIELD(PJRT_LoadedExecutable_Destroy);
  PJRT_NO_DISCARD _PJRT_API_STRUCT_FIELD(PJRT_LoadedExecutable_GetExecutable);
  PJRT_NO_DISCARD _PJRT_API_STRUCT_FIELD(PJRT_LoadedExecutable_AddressableDevices);
  PJRT_NO_DISCARD _PJRT_API_STRUCT_FIELD(PJRT_LoadedExecutable_Delete);
  PJRT_NO_DISCARD _PJRT_API_STRUCT_FIELD(PJRT_LoadedExecutable_IsDeleted);
  PJRT_NO_DISCARD _PJRT_API_STRUCT_FIELD(PJRT_LoadedExecutable_Execute);
  PJRT_NO_DISCARD _PJRT_API_STRUCT_FIELD(PJRT_Executable_DeserializeAndLoad);
  PJRT_NO_DISCARD _PJRT_API_STRUCT_FIELD(PJRT_LoadedExecutable_Fingerprint);

  PJRT_NO_DISCARD _PJRT_API_STRUCT_FIELD(PJRT_Buffer_Destroy);
  PJRT_NO_DISCARD _PJRT_API_STRUCT_FIELD(PJRT_Buffer_ElementType);
  PJRT_NO_DISCARD _PJRT_API_STRUCT_FIELD(PJRT_Buffer_Dimensions);
  PJRT_NO_DISCARD _PJRT_API_STRUCT_FIELD(PJRT_Buffer_UnpaddedDimensions);
  PJRT_NO_DISCARD _PJRT_API_STRUCT_FIELD(PJRT_Buffer_DynamicDimensionIndices);
  PJRT_NO_DISCARD _PJRT_API_STRUCT_FIELD(PJRT_Buffer_GetMemoryLayout);
  PJRT_NO_DISCARD _PJRT_API_STRUCT_FIELD(PJRT_Buffer_OnDeviceSizeInBytes);
  PJRT_NO_DISCARD _PJRT_API_STRUCT_FIELD(PJRT_Buffer_Device);
  PJRT_NO_DISCARD _PJRT_API_STRUCT_FIELD(PJRT_Buffer_Memory);
  PJRT_NO_DISCARD _PJRT_API_STRUCT_FIELD(PJRT_Buffer_Delete);
  PJRT_NO_DISCARD _PJRT_API_STRUCT_FIELD(PJRT_Buffer_IsDeleted);
  PJRT_NO_DISCARD _PJRT_API_STRUCT_FIELD(PJRT_Buffer_CopyToDevice);
  PJRT_NO_DISCARD _PJRT_API_STRUCT_FIELD(PJRT_Buffer_ToHostBuffer);
  PJRT_NO_DISCARD _PJRT_API_STRUCT_FIELD(PJRT_Buffer_IsOnCpu);
  PJRT_NO_DISCARD _PJRT_API_STRUCT_FIELD(PJRT_Buffer_ReadyEvent);
  PJRT_NO_DISCARD _PJRT_API_STRUCT_FIELD(PJRT_Buffer_UnsafePointer);
  PJRT_NO_DISCARD _PJRT_API_STRUCT_FIELD(PJRT_Buffer_IncreaseExternalReferenceCount);
  PJRT_NO_DISCARD _PJRT_API_STRUCT_FIELD(PJRT_Buffer_DecreaseExternalReferenceCount);
  PJRT_NO_DISCARD _PJRT_API_STRUCT_FIELD(PJRT_Buffer_OpaqueDeviceMemoryDataPointer);

  PJRT_NO_DISCARD _PJRT_API_STRUCT_FIELD(PJRT_CopyToDeviceStream_Destroy);
  PJRT_NO_DISCARD _PJRT_API_STRUCT_FIELD(PJRT_CopyToDeviceStream_AddChunk);
  PJRT_NO_DISCARD _PJRT_API_STRUCT_FIELD(PJRT_CopyToDeviceStream_TotalBytes);
  PJRT_NO_DISCARD _PJRT_API_STRUCT_FIELD(PJRT_CopyToDeviceStream_GranuleSize);
  PJRT_NO_DISCARD _PJRT_API_STRUCT_FIELD(PJRT_CopyToDeviceStream_CurrentBytes);

  PJRT_NO_DISCARD _PJRT_API_STRUCT_FIELD(PJRT_TopologyDescription_Create);
  PJRT_NO_DISCARD _PJRT_API_STRUCT_FIELD(PJRT_TopologyDescription_Destroy);
  PJRT_NO_DISCARD _PJRT_API_STRUCT_FIELD(PJRT_TopologyDescription_PlatformName);
  PJRT_NO_DISCARD _PJRT_API_STRUCT_FIELD(PJRT_TopologyDescription_PlatformVersion);
  PJRT_NO_DISCARD _PJRT_API_STRUCT_FIELD(PJRT_TopologyDescription_GetDeviceDescriptions);
  PJRT_NO_DISCARD _PJRT_API_STRUCT_FIELD(PJRT_TopologyDescription_Serialize);
  PJRT_NO_DISCARD _PJRT_API_STRUCT_FIELD(PJRT_TopologyDescription_Attributes);

  PJRT_NO_DISCARD _PJRT_API_STRUCT_FIELD(PJRT_Compile);

  /* Appended since 0.57, newest last. */
  PJRT_NO_DISCARD _PJRT_API_STRUCT_FIELD(PJRT_Executable_OutputElementTypes);
  PJRT_NO_DISCARD _PJRT_API_STRUCT_FIELD(PJRT_Executable_OutputDimensions);
  PJRT_NO_DISCARD _PJRT_API_STRUCT_FIELD(PJRT_Buffer_CopyToMemory);
  PJRT_NO_DISCARD _PJRT_API_STRUCT_FIELD(PJRT_Client_CreateViewOfDeviceBuffer);
  PJRT_NO_DISCARD _PJRT_API_STRUCT_FIELD(PJRT_Executable_Fingerprint);
  PJRT_NO_DISCARD _PJRT_API_STRUCT_FIELD(PJRT_Client_TopologyDescription);
  PJRT_NO_DISCARD _PJRT_API_STRUCT_FIELD(PJRT_Executable_GetCompiledMemoryStats);
  PJRT_NO_DISCARD _PJRT_API_STRUCT_FIELD(PJRT_Memory_Kind_Id);
  PJRT_NO_DISCARD _PJRT_API_STRUCT_FIELD(PJRT_ExecuteContext_Create);
  PJRT_NO_DISCARD _PJRT_API_STRUCT_FIELD(PJRT_ExecuteContext_Destroy);
  PJRT_NO_DISCARD _PJRT_API_STRUCT_FIELD(PJRT_Buffer_CopyRawToHost);
  PJRT_NO_DISCARD _PJRT_API_STRUCT_FIELD(PJRT_AsyncHostToDeviceTransferManager_Destroy);
  PJRT_NO_DISCARD _PJRT_API_STRUCT_FIELD(PJRT_AsyncHostToDeviceTransferManager_TransferData);
  PJRT_NO_DISCARD _PJRT_API_STRUCT_FIELD(PJRT_Client_CreateBuffersForAsyncHostToDevice);
  PJRT_NO_DISCARD _PJRT_API_STRUCT_FIELD(PJRT_AsyncHostToDeviceTransferManager_RetrieveBuffer);
  PJRT_NO_DISCARD _PJRT_API_STRUCT_FIELD(PJRT_AsyncHostToDeviceTransferManager_Device);
  PJRT_NO_DISCARD _PJRT_API_STRUCT_FIELD(PJRT_AsyncHostToDeviceTransferManager_BufferCount);
  PJRT_NO_DISCARD _PJRT_API_STRUCT_FIELD(PJRT_AsyncHostToDeviceTransferManager_BufferSize);
  PJRT_NO_DISCARD _PJRT_API_STRUCT_FIELD(PJRT_AsyncHostToDeviceTransferManager_SetBufferError);
  PJRT_NO_DISCARD _PJRT_API_STRUCT_FIELD(PJRT_AsyncHostToDeviceTransferManager_AddMetadata);
  PJRT_NO_DISCARD _PJRT_API_STRUCT_FIELD(PJRT_Client_DmaMap);
  PJRT_NO_DISCARD _PJRT_API_STRUCT_FIELD(PJRT_Client_DmaUnmap);
  PJRT_NO_DISCARD _PJRT_API_STRUCT_FIELD(PJRT_Client_CreateUninitializedBuffer);
  PJRT_NO_DISCARD _PJRT_API_STRUCT_FIELD(PJRT_Client_UpdateGlobalProcessInfo);
  PJRT_NO_DISCARD _PJRT_API_STRUCT_FIELD(PJRT_TopologyDescription_Deserialize);
  PJRT_NO_DISCARD _PJRT_API_STRUCT_FIELD(PJRT_Client_CreateAliasBuffer);
  PJRT_NO_DISCARD _PJRT_API_STRUCT_FIELD(PJRT_Client_FulfillAliasBuffer);
  PJRT_NO_DISCARD _PJRT_API_STRUCT_FIELD(PJRT_LoadedExecutable_GetDeviceAssignment);
  PJRT_NO_DISCARD _PJRT_API_STRUCT_FIELD(PJRT_Client_CreateErrorBuffer);
  PJRT_NO_DISCARD _PJRT_API_STRUCT_FIELD(PJRT_AsyncHostToDeviceTransferManager_TransferLiteral);
  PJRT_NO_DISCARD _PJRT_API_STRUCT_FIELD(PJRT_Buffer_CopyRawToHostFuture);
  PJRT_NO_DISCARD _PJRT_API_STRUCT_FIELD(PJRT_Device_PoisonExecution);
  PJRT_NO_DISCARD _PJRT_API_STRUCT_FIELD(PJRT_Device_CreateAsyncTrackingEvent);
  PJRT_NO_DISCARD _PJRT_API_STRUCT_FIELD(PJRT_AsyncTrackingEvent_Destroy);
  PJRT_NO_DISCARD _PJRT_API_STRUCT_FIELD(PJRT_Executable_GetCompileOptions);
  PJRT_NO_DISCARD _PJRT_API_STRUCT_FIELD(PJRT_Buffer_DonateWithControlDependency);
  PJRT_NO_DISCARD _PJRT_API_STRUCT_FIELD(PJRT_Event_Create);
  PJRT_NO_DISCARD _PJRT_API_STRUCT_FIELD(PJRT_Event_Set);
  PJRT_NO_DISCARD _PJRT_API_STRUCT_FIELD(PJRT_Device_GetAttributes);
  PJRT_NO_DISCARD _PJRT_API_STRUCT_FIELD(PJRT_Client_Load);
  PJRT_NO_DISCARD _PJRT_API_STRUCT_FIELD(PJRT_LoadedExecutable_AddressableDeviceLogicalIds);
  PJRT_NO_DISCARD _PJRT_API_STRUCT_FIELD(PJRT_Buffer_Bitcast);
  PJRT_NO_DISCARD _PJRT_API_STRUCT_FIELD(PJRT_Error_ForEachPayload);
  PJRT_NO_DISCARD _PJRT_API_STRUCT_FIELD(PJRT_TopologyDescription_Fingerprint);
  PJRT_NO_DISCARD _PJRT_API_STRUCT_FIELD(PJRT_Executable_ParameterMemoryKinds);
  PJRT_NO_DISCARD _PJRT_API_STRUCT_FIELD(PJRT_Device_ClearMemoryStats);
  PJRT_NO_DISCARD _PJRT_API_STRUCT_FIELD(PJRT_TopologyDescription_MakeCanonicalShapeForMemorySpace);
  PJRT_NO_DISCARD _PJRT_API_STRUCT_FIELD(PJRT_TopologyDescription_GetMemorySpaceKindIds);
} PJRT_Api;

enum {
  PJRT_Api_STRUCT_SIZE =
      PJRT_STRUCT_SIZE(PJRT_Api, PJRT_TopologyDescription_GetMemorySpaceKindIds)
};

#undef _PJRT_API_STRUCT_FIELD

#ifdef __cplusplus
}
#endif

#endif /* XLA_PJRT_C_PJRT_C_API_H_ */
