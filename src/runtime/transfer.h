/* cjrt: asynchronous host-to-device transfers.
 *
 * A transfer manager owns a set of pending buffers (allocated, not ready) in one memory and fills
 * them from host data in pieces; a buffer becomes ready when its last piece lands (or fails with
 * an error the caller sets). Each buffer can be retrieved once as a new handle; the manager keeps
 * its own reference, so retrieved buffers may be destroyed before the transfers finish.
 * Destroying the manager fails every buffer that is not complete yet (CANCELLED), so nobody
 * waits forever.
 *
 * A copy-to-device stream receives the bytes of one pending buffer as granule-sized chunks (the
 * device side of a host receive callback); the buffer becomes ready when all bytes arrived.
 *
 * Ownership: constructors return one reference owned by the caller; cj_transfer_destroy /
 * cj_stream_destroy drop it. Returned events and buffers are new references owned by the caller.
 * Thread safety: all functions may be called concurrently.
 */
#ifndef CJ_RUNTIME_TRANSFER_H
#define CJ_RUNTIME_TRANSFER_H

#include <stdbool.h>
#include <stdint.h>

#include "base/status.h"
#include "runtime/buffer.h"

typedef struct cj_transfer cj_transfer;

/* One buffer's shape. */
typedef struct cj_shape_spec {
  cj_dtype dtype;
  int rank;
  const int64_t *dims;
} cj_shape_spec;

CJ_MUST_USE cj_status cj_transfer_create(cj_memory *mem, int nbuffers, const cj_shape_spec *specs,
                             cj_transfer **out);
void cj_transfer_destroy(cj_transfer *t); /* NULL is fine */
bool cj_transfer_check(const void *p);

int cj_transfer_count(const cj_transfer *t);
cj_device *cj_transfer_device(const cj_transfer *t);
/* On-device size of buffer i (the caller checks i with cj_transfer_check_index). */
size_t cj_transfer_buffer_size(const cj_transfer *t, int i);
CJ_MUST_USE cj_status cj_transfer_check_index(const cj_transfer *t, int i);

/* Copies `size` raw bytes to byte `offset` of buffer i; with `last`, the buffer becomes ready.
 * *out_done (may be NULL) is ready once `data` may be reused. */
CJ_MUST_USE cj_status cj_transfer_data(cj_transfer *t, int i, const void *data, int64_t offset, int64_t size,
                           bool last, cj_event **out_done);
/* Copies a whole host array (shape must match buffer i; src_strides NULL = dense) and makes the
 * buffer ready. */
CJ_MUST_USE cj_status cj_transfer_literal(cj_transfer *t, int i, const void *data, cj_dtype dt,
                              const int64_t *dims, int rank, const int64_t *src_strides,
                              cj_event **out_done);
/* Makes buffer i ready with `error` (consumed). */
CJ_MUST_USE cj_status cj_transfer_set_error(cj_transfer *t, int i, cj_status error);
/* A new handle to buffer i; FAILED_PRECONDITION if it was retrieved before. */
CJ_MUST_USE cj_status cj_transfer_retrieve(cj_transfer *t, int i, cj_buffer **out);

/* ---- copy-to-device streams ---- */
typedef struct cj_stream cj_stream;

/* A stream filling `dst` (a pending buffer, retained) in chunks that are multiples of
 * `granule` bytes (>= 1). */
CJ_MUST_USE cj_status cj_stream_create(cj_buffer *dst, int64_t granule, cj_stream **out);
void cj_stream_destroy(cj_stream *s); /* NULL is fine; an unfinished buffer fails (CANCELLED) */
bool cj_stream_check(const void *p);
int64_t cj_stream_total_bytes(const cj_stream *s);
int64_t cj_stream_granule(const cj_stream *s);
int64_t cj_stream_current_bytes(cj_stream *s);
/* Appends a chunk. Problems with the chunk (too many bytes, stream complete, not a multiple of
 * the granule) are reported through *out_done, not as a returned error; the call itself fails
 * only when no event can be made. */
CJ_MUST_USE cj_status cj_stream_add_chunk(cj_stream *s, const void *data, size_t size, cj_event **out_done);

#endif
