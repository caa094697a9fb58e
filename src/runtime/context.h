/* cjrt: small runtime objects with no behaviour yet beyond their lifetime: execute contexts
 * (per-execution state handed to Execute, for FFI user data later) and async tracking events
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

typedef struct cj_exec_context cj_exec_context;
cj_status cj_exec_context_create(cj_exec_context **out);
void cj_exec_context_destroy(cj_exec_context *c);
bool cj_exec_context_check(const void *p);

typedef struct cj_tracking_event cj_tracking_event;
/* `description` (size bytes, not NUL-terminated) is copied. */
cj_status cj_tracking_event_create(cj_device *d, const char *description, size_t size,
                                   cj_tracking_event **out);
void cj_tracking_event_destroy(cj_tracking_event *e);
bool cj_tracking_event_check(const void *p);
const char *cj_tracking_event_description(const cj_tracking_event *e);

#endif
