/* cjrt: small runtime objects with no behaviour yet beyond their lifetime: execute contexts
 * (per-execution state handed to Execute: user data for FFI handlers) and async tracking events
 * (a named marker a framework may ask a device for).
 *
 * Ownership: create returns the only reference; destroy frees (NULL is fine).
 */
#ifndef CJ_RUNTIME_CONTEXT_H
#define CJ_RUNTIME_CONTEXT_H

#include <stdbool.h>
#include <stddef.h>

#include "base/status.h"
#include "runtime/client.h"
#include "runtime/ffi.h"

typedef struct cj_exec_context cj_exec_context;
CJ_MUST_USE cj_status cj_exec_context_create(cj_exec_context **out);
void cj_exec_context_destroy(cj_exec_context *c);
bool cj_exec_context_check(const void *p);
/* User data for the FFI handlers of the executions that get this context (PJRT_FFI_UserData_Add).
 * A type id added twice keeps the newer data. `deleter` (may be NULL) runs on `data` when the
 * context is destroyed. */
CJ_MUST_USE cj_status cj_exec_context_add_user_data(cj_exec_context *c, int64_t type_id, void *data,
                                        void (*deleter)(void *));
/* The user data added so far (borrowed: valid until the context is changed or destroyed). */
const cj_ffi_user_data_list *cj_exec_context_user_data(const cj_exec_context *c);

typedef struct cj_tracking_event cj_tracking_event;
/* `description` (size bytes, not NUL-terminated) is copied. */
CJ_MUST_USE cj_status cj_tracking_event_create(cj_device *d, const char *description, size_t size,
                                   cj_tracking_event **out);
void cj_tracking_event_destroy(cj_tracking_event *e);
bool cj_tracking_event_check(const void *p);
const char *cj_tracking_event_description(const cj_tracking_event *e);

#endif
