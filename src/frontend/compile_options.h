/* cjrt: reading (and writing back) the serialized xla.CompileOptionsProto that
 * PJRT_Client_Compile receives, with a small protobuf wire-format reader of our own.
 *
 * Fields read (numbers from ../shared/reference/pjrt-contract.md 3.6):
 *   CompileOptionsProto.executable_build_options = 3:
 *     num_replicas = 4, num_partitions = 5, use_spmd_partitioning = 6,
 *     device_assignment = 9 (DeviceAssignmentProto{replica_count = 1, computation_count = 2,
 *       computation_devices = 3 {repeated int64 replica_device_ids = 1}}, indexed
 *       [partition][replica], holding global device ids),
 *     use_shardy_partitioner = 19.
 *   CompileOptionsProto.env_option_overrides = 7 (map<string, OptionOverrideProto>): checked,
 *     as XLA does, against the DebugOptions field names and kinds in debug_options.def (an
 *     unknown name or a value of the wrong type is INVALID_ARGUMENT naming the option); cjrt
 *     acts on none of them.
 *   CompileOptionsProto.argument_layouts = 1: the arguments' element types and dimensions.
 *   Everything else (debug options, ...) is skipped by wire type.
 * Garbage or truncated bytes, bad wire types, negative counts and a device assignment whose
 * shape disagrees with num_replicas x num_partitions fail with INVALID_ARGUMENT naming the field
 * and byte offset.
 *
 * Ownership: cj_compile_options_read fills a caller-provided storage struct that owns the device
 * assignment; release it with cj_compile_options_storage_free. opts.device_assignment points into
 * the storage (or is NULL when the proto has none).
 */
#ifndef CJ_FRONTEND_COMPILE_OPTIONS_H
#define CJ_FRONTEND_COMPILE_OPTIONS_H

#include <stddef.h>
#include <stdint.h>

#include "base/compile_options.h"
#include "base/shape.h"
#include "base/status.h"

typedef struct cj_compile_options_storage {
  cj_compile_options opts;
  int64_t *devices;  /* num_replicas * num_partitions ids, replica-major, or NULL */
  int64_t ndevices;
  int64_t device_ordinal; /* executable_build_options.device_ordinal (-1 if absent) */
  /* argument_layouts = 1 (repeated ShapeProto{element_type = 2, dimensions = 3}): the shapes
   * the caller will run the program with; nargs = -1 when absent. Layouts are not read. */
  int32_t nargs;
  cj_shape *args;     /* nargs; dims point into arg_dims, nbytes is 0 */
  int64_t *arg_dims;
} cj_compile_options_storage;

/* Parses `len` bytes (len 0 = all defaults: 1 replica, 1 partition, no assignment). On error
 * nothing is owned by *out (it is left zeroed with defaults). */
CJ_MUST_USE cj_status cj_compile_options_read(const void *data, size_t len, cj_compile_options_storage *out);
void cj_compile_options_storage_free(cj_compile_options_storage *s);

/* Copies `opts` (with its device assignment) into storage owned by *out. */
CJ_MUST_USE cj_status cj_compile_options_copy(const cj_compile_options *opts, cj_compile_options_storage *out);

/* Serializes the fields we understand back into an xla.CompileOptionsProto (for
 * PJRT_Executable_GetCompileOptions); *out is malloc'ed, the caller frees it. */
CJ_MUST_USE cj_status cj_compile_options_write(const cj_compile_options *opts, void **out, size_t *len);

#endif
