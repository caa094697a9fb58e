/* cjrt: what the PJRT surface files (src/pjrt/ files) share: turning statuses into PJRT_Errors,
 * checking *_Args, and turning handles into runtime objects.
 *
 * The surface is thin: each function checks its arguments, calls src/runtime/, and converts the
 * result. Handles are runtime objects cast to the PJRT types (PJRT_Buffer* is a cj_buffer*,
 * PJRT_Memory* is a cj_memory* whose first member is the memory function table, ...).
 *
 * Argument rules, for every function:
 *  - NULL args, or struct_size smaller than the size that includes the last field the function
 *    needs, is INVALID_ARGUMENT naming the function and that field. Larger sizes (newer callers)
 *    are accepted; fields that are beyond a smaller caller's struct_size read as zero.
 *  - Out-fields are written only within the caller's struct_size.
 *  - Errors name the function: "PJRT_Buffer_ToHostBuffer: ...".
 */
#ifndef CJ_PJRT_INTERNAL_H
#define CJ_PJRT_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include "base/dtype.h"
#include "base/status.h"
#include "pjrt_c_api.h"
#include "runtime/buffer.h"
#include "runtime/client.h"
#include "runtime/context.h"
#include "runtime/event.h"
#include "runtime/topology.h"
#include "runtime/transfer.h"

/* Every real slot's implementation, cjp_<PJRT name>, declared from the slot table. */
#define SLOT_REAL(name) name cjp_##name;
#define SLOT_STUB(name)
#define SLOT(name, kind) SLOT_##kind(name)
#include "pjrt/slots.def"
#undef SLOT
#undef SLOT_REAL
#undef SLOT_STUB

/* ---- errors (error.c) ---- */
/* Wraps a status (consumed); NULL for NULL. Never returns NULL for an error: out of memory gives
 * a static error that PJRT_Error_Destroy ignores. */
PJRT_Error *cjp_error(cj_status st);
/* Wraps a status after prefixing "<fn>: ". */
PJRT_Error *cjp_error_in(const char *fn, cj_status st);
#define cjp_errorf(code, ...) cjp_errorf_at(CJ_LOC, (code), __VA_ARGS__) /* made here */
PJRT_Error *cjp_errorf_at(const char *file, int line, const char *func, cj_code code,
                          const char *fmt, ...) CJ_PRINTF(5, 6);
/* A copy of the status inside one of our errors (NULL for NULL). */
CJ_MUST_USE cj_status cjp_error_status(const PJRT_Error *e);
/* Takes an error produced by a caller's callback (made with our PJRT_CallbackError), turns it
 * into a status and frees it. */
CJ_MUST_USE cj_status cjp_error_take(PJRT_Error *e);
/* The constructor handed to callbacks (PJRT_CallbackError). */
PJRT_Error *cjp_callback_error(PJRT_Error_Code code, const char *message, size_t message_size);
/* A status from a PJRT (code, message) pair; NULL for OK. `what` names the source when the
 * message is empty. */
CJ_MUST_USE cj_status cjp_status_from_code(PJRT_Error_Code code, const char *msg, size_t size,
                               const char *what);

/* ---- argument checks ---- */
#define CJP_ARGS_SIZE(NAME, last) ((size_t)PJRT_STRUCT_SIZE(NAME##_Args, last))

/* Returns INVALID_ARGUMENT from the enclosing function if args is NULL or too small to hold the
 * fields up to `last`. */
#define CJP_CHECK_ARGS(NAME, args, last)                                                        \
  do {                                                                                          \
    if (!(args)) return cjp_errorf(CJ_INVALID_ARGUMENT, #NAME ": args is NULL");                \
    if ((args)->struct_size < CJP_ARGS_SIZE(NAME, last))                                        \
      return cjp_errorf(CJ_INVALID_ARGUMENT,                                                    \
                        #NAME ": struct_size %zu is too small: the fields up to '" #last        \
                              "' need %zu bytes (" #NAME "_Args is %zu bytes in PJRT 0.114)",   \
                        (args)->struct_size, CJP_ARGS_SIZE(NAME, last),                         \
                        (size_t)NAME##_Args_STRUCT_SIZE);                                       \
  } while (0)

/* The start of a slot that names itself in its messages: declares fn ("NAME") and checks args
 * as CJP_CHECK_ARGS does. */
#define CJP_ENTER(NAME, last)                  \
  static const char fn[] = #NAME;              \
  CJP_CHECK_ARGS(NAME, args, last)

/* Whether the caller's struct covers `field`. */
#define CJP_HAS(NAME, args, field) ((args)->struct_size >= CJP_ARGS_SIZE(NAME, field))
/* The field's value, or zero when the caller's struct does not reach it. */
#define CJP_FIELD(NAME, args, field) (CJP_HAS(NAME, args, field) ? (args)->field : 0)

#define CJP_REQUIRE(NAME, cond, ...)                                                        \
  do {                                                                                      \
    if (!(cond)) return cjp_errorf(CJ_INVALID_ARGUMENT, #NAME ": " __VA_ARGS__);            \
  } while (0)

/* Declares `var` as the runtime object behind handle `expr`, or returns INVALID_ARGUMENT. */
#define CJP_HANDLE(NAME, ctype, check, var, expr, field)                                    \
  ctype *var = (ctype *)(expr);                                                             \
  do {                                                                                      \
    if (!var) return cjp_errorf(CJ_INVALID_ARGUMENT, #NAME ": " field " is NULL");          \
    if (!check(var))                                                                        \
      return cjp_errorf(CJ_INVALID_ARGUMENT,                                                \
                        #NAME ": " field " is not a live cjrt object of the right kind");   \
  } while (0)

#define CJP_CLIENT(NAME, var, expr, field) \
  CJP_HANDLE(NAME, cj_client, cj_client_check, var, expr, field)
#define CJP_DEVICE(NAME, var, expr, field) \
  CJP_HANDLE(NAME, cj_device, cj_device_check, var, expr, field)
#define CJP_MEMORY(NAME, var, expr, field) \
  CJP_HANDLE(NAME, cj_memory, cj_memory_check, var, expr, field)
#define CJP_BUFFER(NAME, var, expr, field) \
  CJP_HANDLE(NAME, cj_buffer, cj_buffer_check, var, expr, field)
#define CJP_EVENT(NAME, var, expr, field) \
  CJP_HANDLE(NAME, cj_event, cj_event_check, var, expr, field)

/* Hands out string s (NUL-terminated, outliving the handle's use) as args->field and its
 * length as args->field_size. */
#define CJP_SET_STR(args, field, s)                  \
  do {                                               \
    (args)->field = (s);                             \
    (args)->field##_size = strlen((args)->field);    \
  } while (0)

/* Hands out a malloc'ed serialization (bytes, len) as args->serialized_bytes(_size) and as the
 * opaque args->serialized_<what> (of type T) freed by args->serialized_<what>_deleter. */
#define CJP_SET_SERIALIZED(args, what, T, bytes, len, deleter) \
  do {                                                         \
    (args)->serialized_bytes = (bytes);                        \
    (args)->serialized_bytes_size = (len);                     \
    (args)->serialized_##what = (T *)(bytes);                  \
    (args)->serialized_##what##_deleter = (deleter);           \
  } while (0)
/* The end of slot NAME: serializes obj with serialize(obj, &bytes, &len) and hands the bytes out
 * as CJP_SET_SERIALIZED does, or returns serialize's error. */
#define CJP_RETURN_SERIALIZED(NAME, what, T, serialize, obj, deleter) \
  do {                                                                 \
    void *bytes_;                                                      \
    size_t len_;                                                       \
    cj_status st_ = serialize((obj), &bytes_, &len_);                  \
    if (st_) return cjp_error_in(#NAME, st_);                          \
    CJP_SET_SERIALIZED(args, what, T, bytes_, len_, deleter);          \
    return NULL;                                                       \
  } while (0)

/* The end of a slot (begun with CJP_ENTER) that makes one object: st's error, named by fn, or
 * NULL with obj handed out as args->field, a T handle. */
#define CJP_RETURN_OUT(st, field, T, obj)  \
  do {                                     \
    if (st) return cjp_error_in(fn, (st)); \
    args->field = (T *)(obj);              \
    return NULL;                           \
  } while (0)

/* Defines cjp_NAME in the shape most slots have: checks args up to `last`, runs `declare` (a
 * CJP_<kind> handle declaration, such as CJP_BUFFER(NAME, b, args->buffer, "buffer")), then the
 * statements given, and returns NULL. Each file names its common declarations in a shorter
 * macro of its own. */
#define CJP_SLOT_DEF(NAME, last, declare, ...) \
  PJRT_Error *cjp_##NAME(NAME##_Args *args) {  \
    CJP_CHECK_ARGS(NAME, args, last);          \
    declare;                                   \
    __VA_ARGS__                                \
    return NULL;                               \
  }

/* CJP_SLOT_DEF for the slots of one client, device, memory or event handle (c, d, m, e). */
#define CJP_CLIENT_SLOT(NAME, last, ...) \
  CJP_SLOT_DEF(NAME, last, CJP_CLIENT(NAME, c, args->client, "client"), __VA_ARGS__)
#define CJP_DEVICE_SLOT(NAME, last, ...) \
  CJP_SLOT_DEF(NAME, last, CJP_DEVICE(NAME, d, args->device, "device"), __VA_ARGS__)
#define CJP_MEMORY_SLOT(NAME, last, ...) \
  CJP_SLOT_DEF(NAME, last, CJP_MEMORY(NAME, m, args->memory, "memory"), __VA_ARGS__)
#define CJP_EVENT_SLOT(NAME, last, ...) \
  CJP_SLOT_DEF(NAME, last, CJP_EVENT(NAME, e, args->event, "event"), __VA_ARGS__)

/* Defines the destructor slot cjp_NAME of handle `field`: NULL is accepted and does nothing,
 * anything else must be a live `ctype` (check()), handed to destroy(). */
#define CJP_DESTROY_SLOT(NAME, field, ctype, check, destroy)                 \
  PJRT_Error *cjp_##NAME(NAME##_Args *args) {                                \
    CJP_CHECK_ARGS(NAME, args, field);                                       \
    if (!args->field) return NULL;                                           \
    CJP_HANDLE(NAME, ctype, check, h_, args->field, #field);                 \
    destroy(h_);                                                             \
    return NULL;                                                             \
  }

/* Declares the client c (args->client) and its memory mem (args->memory) of slot NAME; a memory
 * of another client is INVALID_ARGUMENT. */
#define CJP_CLIENT_MEMORY(NAME, c, mem)                                                      \
  CJP_CLIENT(NAME, c, args->client, "client");                                               \
  CJP_MEMORY(NAME, mem, args->memory, "memory");                                             \
  do {                                                                                       \
    if (mem->client != c)                                                                    \
      return cjp_errorf(CJ_INVALID_ARGUMENT, #NAME ": the memory belongs to another client"); \
  } while (0)

/* An integer create option (client.c): kInt64, or a kString holding a decimal integer, within
 * [lo, hi]. */
CJ_MUST_USE cj_status cjp_option_int(const PJRT_NamedValue *v, const char *name, int64_t lo, int64_t hi,
                         int64_t *out);
const char *cjp_named_value_type_name(PJRT_NamedValue_Type t);
/* Looks create option v (number i of its list) up among names[0..count) (client.c): checks its
 * struct_size and name, refuses an unknown name ("unknown <kind> option ..., cjrt accepts
 * <accepted>") and one seen before, marks it in seen[] and sets *id to its index. */
CJ_MUST_USE cj_status cjp_option_find(const PJRT_NamedValue *v, size_t i, const char *const *names,
                                      int count, bool *seen, const char *kind,
                                      const char *accepted, int *id);

/* The client's own topology (client.c), made with the client and freed with it. */
cj_topology *cjp_client_topology(cj_client *c);
/* Sets up the API data of a new topology (its attributes; topology.c). Never fails. */
void cjp_topology_attach(cj_topology *t);

/* The attributes every device of the client reports (client.c); they live as long as it.
 * Devices of a described topology (no client) report none. */
void cjp_device_attributes(cj_device *d, const PJRT_NamedValue **out, size_t *n);

/* Sets up the memory function table of every memory of a new client (memory.c). */
void cjp_memory_attach(cj_client *c);

/* ---- shapes and layouts (layout.c) ---- */
/* Checks a PJRT element type value; *out is the matching cj_dtype. */
CJ_MUST_USE cj_status cjp_dtype(PJRT_Buffer_Type t, cj_dtype *out);
/* Checks (dims, num_dims) as a shape with dtype dt. */
CJ_MUST_USE cj_status cjp_shape(cj_dtype dt, const int64_t *dims, size_t num_dims);
/* Accepts a device layout only when it describes the dense row-major layout cjrt uses
 * (NULL is that layout). */
CJ_MUST_USE cj_status cjp_check_device_layout(const PJRT_Buffer_MemoryLayout *layout, cj_dtype dt,
                                  const int64_t *dims, size_t rank);
/* Checks an array described by (element type, dims, num_dims, device layout): cjp_dtype, then
 * cjp_shape, then cjp_check_device_layout; *out is its cj_dtype. */
CJ_MUST_USE cj_status cjp_device_array(PJRT_Buffer_Type t, const int64_t *dims, size_t num_dims,
                                       const PJRT_Buffer_MemoryLayout *layout, cj_dtype *out);
/* Byte strides for a host-side layout (NULL: dense row-major); *out_span is the number of bytes
 * the layout covers from the data pointer. Negative strides are refused here. */
CJ_MUST_USE cj_status cjp_host_layout_strides(const PJRT_Buffer_MemoryLayout *layout, cj_dtype dt,
                                  const int64_t *dims, size_t rank, int64_t *out_strides,
                                  size_t *out_span);

/* Picks the memory for calls taking (device, memory): memory when given, else the device's
 * default memory. */
CJ_MUST_USE cj_status cjp_pick_memory(PJRT_Device *device, PJRT_Memory *memory, cj_memory **out);

#endif
