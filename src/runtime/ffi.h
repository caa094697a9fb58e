/* cjrt: XLA FFI, the ABI of custom-call handlers (include/xla_ffi_c_api.h): the process-wide
 * handler and type registries, the XLA_FFI_Api table handlers call back into, and the pieces of
 * a call frame (attributes built from the IR, one invocation's context).
 *
 * Like backend.h this header is part of the interface between the runtime and a backend: the
 * PJRT FFI extension (src/pjrt/ext_ffi.c) and XLA_FFI_Handler_Register fill the registry; a
 * backend looks handlers up when it compiles a custom call (src/cpu/k_ffi.c) and calls them
 * through cj_ffi_invoke. It holds no PJRT types.
 *
 * Lifetimes: the registries live as long as the process (as XLA's static registries do);
 * registering a (target, platform) pair twice with another handler fails. Attributes built by
 * cj_ffi_attrs_build live in the allocator's memory (the program's arena).
 */
#ifndef CJ_RUNTIME_FFI_H
#define CJ_RUNTIME_FFI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/status.h"
#include "base/threadpool.h"
#include "ir/ir.h"
#include "xla_ffi_c_api.h"

/* The platform names a handler may be registered under and still run on cjrt's CPU devices:
 * "cjrt" (JAX's name for the platform), and XLA's names of the host ("Host", "cpu"), compared
 * without case. */
bool cj_ffi_platform_is_ours(const char *platform, size_t len);

/* Registers `bundle` (execute required) for `target` on `platform`. Registering the same
 * handlers again is fine; other handlers for a taken pair fail with ALREADY_EXISTS. */
CJ_MUST_USE cj_status cj_ffi_register_handler(const char *target, size_t target_len, const char *platform,
                                  size_t platform_len, const XLA_FFI_Handler_Bundle *bundle,
                                  uint32_t traits);

/* The handlers registered for `target` under one of our platform names, or false. */
bool cj_ffi_find_handler(const char *target, size_t len, XLA_FFI_Handler_Bundle *out);

/* Type ids: *inout_id 0 asks for a new id (or the one `name` already has); a nonzero id must
 * match the name's id, or is taken for it when the name is new. `deleter` may be NULL. */
CJ_MUST_USE cj_status cj_ffi_register_type(const char *name, size_t len, int64_t *inout_id,
                               void (*deleter)(void *));
/* The deleter registered with a type id, or NULL. */
void (*cj_ffi_type_deleter(int64_t type_id))(void *);

/* The table handlers get in their call frame. */
const XLA_FFI_Api *cj_ffi_api(void);

/* User data one execution carries (PJRT_FFI_UserData_Add on its execute context). */
typedef struct cj_ffi_user_data {
  int64_t type_id;
  void *data;
} cj_ffi_user_data;

typedef struct cj_ffi_user_data_list cj_ffi_user_data_list;
struct cj_ffi_user_data_list {
  int32_t n;
  const cj_ffi_user_data *items;
};

/* Per-call-site state (XLA_FFI_State_Set/Get): one slot a program keeps for each custom call,
 * freed with cj_ffi_state_free when the program is freed. */
typedef struct cj_ffi_state {
  void *_Atomic ptr;
  int64_t type_id;
} cj_ffi_state;
void cj_ffi_state_free(cj_ffi_state *s);

/* What one invocation of a handler may ask for (an XLA_FFI_InvokeContext is one of these). */
typedef struct cj_ffi_invoke_ctx {
  const cj_ffi_user_data_list *user_data; /* may be NULL */
  cj_threadpool *pool;                    /* may be NULL: tasks run inline */
  cj_ffi_state *state;                    /* may be NULL */
  int32_t device_ordinal;
  int64_t run_id;
} cj_ffi_invoke_ctx;

/* Calls `handler` with `frame` (whose api and ctx this fills in), waits for its future if it
 * set one, and turns a returned error into a status naming `what` ("custom_call @target"). */
CJ_MUST_USE cj_status cj_ffi_call(XLA_FFI_Handler *handler, XLA_FFI_CallFrame *frame, cj_ffi_invoke_ctx *ctx,
                      const char *what);

/* The XLA_FFI_DataType of a dtype (xla::PrimitiveType numbers), INVALID when it has none. */
XLA_FFI_DataType cj_ffi_dtype(cj_dtype dt);

/* Builds an attribute dictionary (a CJ_ATTR_DICT, or NULL for none) into `out`: integers,
 * floats and booleans become scalars of their type, strings strings, dense arrays and 1-D dense
 * elements arrays, dictionaries nested dictionaries; names and values are copied (the IR may
 * die first). `alloc` returns zeroed memory. An attribute
 * of any other kind fails naming it (INVALID_ARGUMENT). */
typedef void *(*cj_ffi_alloc_fn)(void *actx, size_t bytes);
CJ_MUST_USE cj_status cj_ffi_attrs_build(const cj_attr *dict, cj_ffi_alloc_fn alloc, void *actx,
                             XLA_FFI_Attrs *out);

#endif
