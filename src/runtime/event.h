/* cjrt: events, one-shot notifications carrying a final status.
 *
 * An event starts pending and becomes ready exactly once, with a status (NULL = success).
 * Callbacks registered with cj_event_on_ready run exactly once: at once on the registering
 * thread if the event is already ready, otherwise on the thread that makes it ready, after it
 * has released the event's lock. No runtime lock is held while a callback runs, so a callback
 * may call back into the runtime (create buffers, set other events, ...).
 *
 * Ownership: cj_event_create returns one reference. Everyone who keeps an event retains it and
 * releases it when done; the API hands each caller-visible PJRT_Event one reference. If the last
 * reference goes away while the event is still pending, its callbacks run with CANCELLED (so
 * "exactly once" holds even for events nobody will set).
 */
#ifndef CJ_RUNTIME_EVENT_H
#define CJ_RUNTIME_EVENT_H

#include <stdbool.h>

#include "base/status.h"
#include "runtime/object.h"

typedef struct cj_event cj_event;

/* Called once with the event's status, which is borrowed: it lives until the callback returns
 * (copy it with cj_status_copy to keep it). */
typedef void (*cj_event_fn)(void *ctx, cj_status st);

/* A new pending event; NULL only when memory is exhausted. `settable_by_user` marks events made
 * through PJRT_Event_Create, the only ones PJRT_Event_Set may complete. */
cj_event *cj_event_create(bool settable_by_user);
/* A new event that is already ready with `st` (consumed; NULL = success). NULL on OOM (then
 * `st` is freed). */
cj_event *cj_event_create_ready(cj_status st);

void cj_event_retain(cj_event *e);
void cj_event_release(cj_event *e); /* NULL is fine */
bool cj_event_check(const void *p);  /* whether p looks like a live event */
bool cj_event_settable_by_user(const cj_event *e);

/* Makes the event ready with `st` (consumed) and runs its callbacks. FAILED_PRECONDITION if it
 * was already ready (the event keeps its first status). */
CJ_MUST_USE cj_status cj_event_set(cj_event *e, cj_status st);

bool cj_event_is_ready(cj_event *e);
/* A copy of the status of a ready event (NULL = success); FAILED_PRECONDITION if not ready. */
CJ_MUST_USE cj_status cj_event_status(cj_event *e);
/* Blocks until ready; returns a copy of its status. */
CJ_MUST_USE cj_status cj_event_wait(cj_event *e);

/* Registers fn(ctx, status) to run once when the event is ready (now, if it is). Only fails on
 * OOM, and then fn is not called. */
CJ_MUST_USE cj_status cj_event_on_ready(cj_event *e, cj_event_fn fn, void *ctx);

#endif
