/* cjrt: device buffers and the storage behind them.
 *
 * A buffer is an array (dtype, dims) placed in one memory of one device. Its bytes live in a
 * storage: a refcounted block of device memory that is either owned (allocated from the
 * backend), a view of memory someone else owns (with a callback when we are done with it), or
 * the caller's host array used in place (zero-copy, with an event set when we are done).
 * The layout is always dense row-major (minor_to_major descending); sub-byte types take one byte
 * per element (dtype.h).
 *
 * Buffer life cycle:
 *  - A buffer has a ready event. It becomes ready when the data is there (at once for buffers
 *    made from host data; when the last transfer lands for transfer-manager buffers) or carries
 *    the error of an error buffer.
 *  - cj_buffer_delete drops the buffer's hold on its storage; the handle stays valid for
 *    is_deleted and destroy. The storage is freed when the last user lets go: operations still
 *    waiting to read it, external references (DLPack/NumPy views), buffers sharing it.
 *  - Donation (cj_buffer_donate, cj_buffer_bitcast) moves the storage into a new buffer and
 *    marks the old one deleted (and donated).
 *
 * Ownership: every constructor returns one reference (the API handle); cj_buffer_destroy deletes
 * and drops that reference (others, e.g. a transfer manager, may keep the object alive). Events
 * returned through out-parameters are new references owned by the caller. Input arrays (dims,
 * strides) are copied; the caller's host data must stay valid as each function says.
 *
 * Thread safety: every function may be called concurrently on the same buffer.
 */
#ifndef CJ_RUNTIME_BUFFER_H
#define CJ_RUNTIME_BUFFER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/dtype.h"
#include "base/status.h"
#include "runtime/client.h"
#include "runtime/event.h"

typedef struct cj_buffer cj_buffer;

/* The largest rank a buffer may have. */
#define CJ_MAX_RANK 64

/* What may be done with host data given to cj_buffer_from_host (PJRT's values). */
typedef enum cj_host_semantics {
  CJ_HOST_COPY_DURING_CALL = 0,   /* valid only during the call */
  CJ_HOST_COPY_UNTIL_DONE = 1,    /* valid until the done event is ready */
  CJ_HOST_ZERO_COPY = 2,          /* may be used in place, read-only, for the buffer's life */
  CJ_HOST_MUTABLE_ZERO_COPY = 3,  /* may be used in place and written */
} cj_host_semantics;

/* Checks an array shape and computes its dense size in bytes. `what` prefixes messages. */
CJ_MUST_USE cj_status cj_shape_check(cj_dtype dt, const int64_t *dims, size_t rank, size_t *out_nbytes);

/* Copies an array of `rank` dims with `elem` bytes per element between two strided layouts
 * (byte strides, possibly negative; each pointer addresses element [0, 0, ...]). */
void cj_copy_strided(void *dst, const int64_t *dst_strides, const void *src,
                     const int64_t *src_strides, const int64_t *dims, int rank, size_t elem);
/* Dense row-major byte strides for dims. */
void cj_dense_strides(const int64_t *dims, int rank, size_t elem, int64_t *out);

/* ---- construction ---- */

/* From host data laid out with `byte_strides` (NULL = dense row-major). With a zero-copy
 * semantics the data is used in place when it is dense and 64-byte aligned and the memory is
 * host memory; otherwise it is copied. *out_done (may be NULL to not ask) becomes ready when the
 * caller may free or reuse `data`: at once after a copy, when the buffer's storage is freed
 * after zero-copy. */
CJ_MUST_USE cj_status cj_buffer_from_host(cj_memory *mem, cj_dtype dt, const int64_t *dims, int rank,
                              const void *data, const int64_t *byte_strides,
                              cj_host_semantics sem, cj_event **out_done, cj_buffer **out);
/* Allocated, contents unspecified, ready. */
CJ_MUST_USE cj_status cj_buffer_create_uninitialized(cj_memory *mem, cj_dtype dt, const int64_t *dims,
                                         int rank, cj_buffer **out);
/* Allocated, not ready: the data arrives later (cj_buffer_write, cj_buffer_set_ready). */
CJ_MUST_USE cj_status cj_buffer_create_pending(cj_memory *mem, cj_dtype dt, const int64_t *dims, int rank,
                                   cj_buffer **out);
/* A view of memory at `ptr` owned by someone else; on_delete(ptr, arg) (optional) runs when no
 * user of the buffer's storage remains. Ready. `ptr` may have any alignment (backends promise
 * 64 bytes for their own memory): executions copy an unaligned view into an aligned temporary
 * for their run (executable.c, align_arguments), so kernels may keep assuming alignment; views
 * are never donated. */
CJ_MUST_USE cj_status cj_buffer_create_view(cj_memory *mem, cj_dtype dt, const int64_t *dims, int rank,
                                void *ptr, void (*on_delete)(void *ptr, void *arg), void *arg,
                                cj_buffer **out);
/* No storage; the ready event carries `error` (consumed, must be non-NULL). */
CJ_MUST_USE cj_status cj_buffer_create_error(cj_memory *mem, cj_dtype dt, const int64_t *dims, int rank,
                                 cj_status error, cj_buffer **out);

/* ---- references ---- */
void cj_buffer_retain(cj_buffer *b);
void cj_buffer_release(cj_buffer *b); /* NULL is fine */
/* Deletes and releases the API's reference (NULL is fine). */
void cj_buffer_destroy(cj_buffer *b);
bool cj_buffer_check(const void *p);

/* ---- properties (valid for the buffer's life, deleted or not) ---- */
cj_dtype cj_buffer_dtype(const cj_buffer *b);
int cj_buffer_rank(const cj_buffer *b);
const int64_t *cj_buffer_dims(const cj_buffer *b);
const int64_t *cj_buffer_minor_to_major(const cj_buffer *b);
size_t cj_buffer_nbytes(const cj_buffer *b); /* on-device size */
cj_memory *cj_buffer_memory(const cj_buffer *b);
cj_device *cj_buffer_device(const cj_buffer *b);
cj_client *cj_buffer_client(const cj_buffer *b);

/* ---- state ---- */
void cj_buffer_delete(cj_buffer *b);
bool cj_buffer_is_deleted(cj_buffer *b);
/* A new reference to the ready event; for a deleted or donated buffer, a new event already
 * ready with an error. */
CJ_MUST_USE cj_status cj_buffer_ready_event(cj_buffer *b, cj_event **out);

/* ---- reading ---- */
/* Copies the array into dst (dst_strides = NULL: dense row-major), once the buffer is ready;
 * *out_done becomes ready with the outcome. `dst` must stay valid until then. */
CJ_MUST_USE cj_status cj_buffer_to_host(cj_buffer *b, void *dst, const int64_t *dst_strides,
                            cj_event **out_done);
/* Copies on-device bytes [offset, offset + size) into dst, once the buffer is ready. */
CJ_MUST_USE cj_status cj_buffer_copy_raw_to_host(cj_buffer *b, void *dst, int64_t offset, int64_t size,
                                     cj_event **out_done);

/* A raw copy whose destination is provided later (PJRT_Buffer_CopyRawToHostFuture). */
typedef struct cj_raw_copy cj_raw_copy;
CJ_MUST_USE cj_status cj_buffer_copy_raw_deferred(cj_buffer *b, int64_t offset, int64_t size,
                                      cj_event **out_done, cj_raw_copy **out);
/* Provides the destination (or an error, consumed) and frees `rc`. Call exactly once. */
void cj_raw_copy_complete(cj_raw_copy *rc, void *dst, cj_status err);

/* ---- copies, aliases ---- */
/* A new buffer in `dst` holding a copy (ready when the copy is done). INVALID_ARGUMENT when
 * `dst` is the buffer's own memory or belongs to another client. */
CJ_MUST_USE cj_status cj_buffer_copy_to_memory(cj_buffer *b, cj_memory *dst, cj_buffer **out);
/* The device address of the data (an error for deleted and error buffers). */
CJ_MUST_USE cj_status cj_buffer_data_pointer(cj_buffer *b, void **out);
/* External references pin the storage (it outlives delete) until decremented. */
CJ_MUST_USE cj_status cj_buffer_external_ref(cj_buffer *b, int delta);
/* Moves the storage into a new buffer whose ready event waits for this buffer's readiness and
 * for `dependency` (retained; NULL = none); this buffer becomes deleted. Fails for deleted
 * buffers and buffers with external references. */
CJ_MUST_USE cj_status cj_buffer_donate(cj_buffer *b, cj_event *dependency, cj_buffer **out);
/* Moves the storage into a new buffer with another dtype and dims of the same on-device size;
 * this buffer becomes deleted. */
CJ_MUST_USE cj_status cj_buffer_bitcast(cj_buffer *b, cj_dtype dt, const int64_t *dims, int rank,
                            cj_buffer **out);

/* ---- alias buffers (PJRT_Client_CreateAliasBuffer) ---- */
/* An alias buffer is made with cj_buffer_create_pending and later fulfilled: from `src` (same
 * client, dtype and dims) with cj_buffer_fulfill_alias, or with an error by cj_buffer_set_ready.
 * Fulfilling makes the alias ready when `src` is, with its status; the alias then shares src's
 * storage, or, when the alias's own storage is already in use (an execution or a copy queued on
 * the pending alias), receives a copy of src's bytes. Fails (changing nothing) for deleted `src`
 * and mismatched shapes. */
CJ_MUST_USE cj_status cj_buffer_fulfill_alias(cj_buffer *alias, cj_buffer *src);

/* ---- filling pending buffers (transfer managers, streams) ---- */
/* A writer pins the storage of the buffer it fills, so that deleting the buffer meanwhile does
 * not break the transfer (the data then reaches only reads queued before the delete). */
typedef struct cj_storage cj_storage;
/* A new writer reference to the buffer's storage (cj_storage_writer_unref drops it; see
 * cj_storage_writer_ref); NULL for deleted and error buffers. */
cj_storage *cj_buffer_pin(cj_buffer *b);
cj_storage *cj_storage_ref(cj_storage *s); /* another (plain) reference (NULL for NULL) */
void cj_storage_unpin(cj_storage *s);       /* drops a plain one; NULL is fine */
/* Copies size bytes to on-device offset of the pinned storage of `b` (ranges are checked). */
CJ_MUST_USE cj_status cj_buffer_write(cj_buffer *b, cj_storage *pinned, int64_t offset, const void *data,
                          int64_t size);
/* Copies a whole array laid out with src_strides (NULL: dense row-major) into the pinned
 * storage of `b`. */
CJ_MUST_USE cj_status cj_buffer_write_array(cj_buffer *b, cj_storage *pinned, const void *src,
                                const int64_t *src_strides);
/* Makes a pending buffer ready with `st` (consumed). FAILED_PRECONDITION if it already is. */
CJ_MUST_USE cj_status cj_buffer_set_ready(cj_buffer *b, cj_status st);

/* ---- executions (executable.c) ---- */
/* Device memory of `size` bytes on mem's device, as a storage with one reference. */
CJ_MUST_USE cj_status cj_storage_alloc(cj_memory *mem, size_t size, cj_storage **out);
void *cj_storage_data(const cj_storage *s);
/* A reference held by an execution writing the storage's contents (released with
 * cj_storage_writer_unref): unlike other references it does not forbid donating the storage to a
 * later execution, which waits for the writer's ready event anyway. */
void cj_storage_writer_ref(cj_storage *s);
void cj_storage_writer_unref(cj_storage *s); /* NULL is fine */
size_t cj_storage_size(const cj_storage *s);
/* An argument's storage (NULL for an error buffer) and ready event, as new references, taken
 * together so that a concurrent delete cannot come between them. Fails for deleted buffers. */
CJ_MUST_USE cj_status cj_buffer_acquire(cj_buffer *b, cj_storage **out_storage, cj_event **out_ready);
/* Donation to an execution. When the buffer is used by nobody else (no external references, no
 * pending reads, no other buffer), moves its storage out (*out_storage, with the buffer's
 * reference) with a new reference to the ready event and marks the buffer deleted and donated:
 * CJ_DONATED when the storage may be reused for a result (owned device memory), CJ_CONSUMED when
 * it may only be read (a view or the caller's zero-copy host data: the execution reads it and
 * lets it go, the result gets fresh memory). Otherwise changes nothing: CJ_NOT_DONATED. */
enum { CJ_NOT_DONATED = 0, CJ_DONATED = 1, CJ_CONSUMED = 2 };
int cj_buffer_try_donate(cj_buffer *b, cj_storage **out_storage, cj_event **out_ready);
/* Gives a donated storage back (consumed) to the buffer it came from, which reads as not deleted
 * again: an execution that failed before it was launched undoes its donations. */
void cj_buffer_undo_donate(cj_buffer *b, cj_storage *s);
/* A buffer over `storage` (consumed; NULL = none yet) whose ready event is `ready` (consumed). */
CJ_MUST_USE cj_status cj_buffer_create_with_storage(cj_memory *mem, cj_dtype dt, const int64_t *dims,
                                        int rank, cj_storage *storage, cj_event *ready,
                                        cj_buffer **out);
/* Attaches a storage (consumed) to a buffer made without one by cj_buffer_create_with_storage. */
void cj_buffer_attach_storage(cj_buffer *b, cj_storage *s);
/* Drops the buffer's storage without marking it deleted: the output of a failed execution, whose
 * ready event carries the failure, becomes an error buffer. */
void cj_buffer_drop_storage(cj_buffer *b);

#endif
