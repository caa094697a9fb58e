/* cjrt: the interface between the runtime (clients, buffers, executables) and a backend (the CPU
 * backend in src/cpu/ now; CUDA later).
 *
 * The runtime never looks inside a compiled program: it allocates device memory through the
 * backend, asks it to compile a module into a cj_program, reads the program's description
 * (cj_program_info: argument/result shapes, donation, cost ...), and asks it to run one device's
 * share of an execution. The backend never calls back into the runtime or PJRT.
 *
 * Ownership: cj_backend objects are static singletons (cj_backend_cpu()). A cj_program is owned by
 * whoever compiled or deserialized it and freed with vt->program_free; its cj_program_info lives as
 * long as the program. Programs are immutable after compile and may be executed from many threads
 * at once (each execution brings its own scratch through the backend's own pooling).
 */
#ifndef CJ_RUNTIME_BACKEND_H
#define CJ_RUNTIME_BACKEND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/dtype.h"
#include "base/status.h"
#include "base/threadpool.h"
#include "ir/ir.h"

typedef struct cj_backend cj_backend;
typedef struct cj_program cj_program;
typedef struct cj_launch cj_launch;

/* A static array shape owned by whoever holds it. */
typedef struct cj_shape {
  cj_dtype dtype;
  int32_t rank;
  const int64_t *dims; /* rank entries */
  size_t nbytes;       /* dense row-major size in bytes */
} cj_shape;

/* What the compile options (xla.CompileOptionsProto) carry that we use; read by
 * src/frontend/compile_options.c. */
typedef struct cj_compile_options {
  int64_t num_replicas;       /* >= 1 */
  int64_t num_partitions;     /* >= 1 */
  /* device_assignment[r * num_partitions + p] = global device id of replica r, partition p;
   * NULL = the client's default assignment. */
  const int64_t *device_assignment;
  bool use_spmd_partitioning;
  bool use_shardy_partitioner;
  /* Arguments the caller promises never to donate even if the program marks them. */
} cj_compile_options;

/* What a compiled program looks like from outside. Everything lives as long as the program. */
typedef struct cj_program_info {
  const char *name;            /* the module name, or "main" */
  int32_t num_args, num_results;
  const cj_shape *args;        /* num_args */
  const cj_shape *results;     /* num_results */
  /* result_donor[i] = the argument index whose storage result i may reuse when the caller
   * donates it (from jax.buffer_donor / tf.aliasing_output), or -1. */
  const int32_t *result_donor;
  int64_t num_replicas, num_partitions;
  const int64_t *device_assignment; /* num_replicas * num_partitions global device ids, or NULL */
  uint64_t fingerprint[2];     /* stable across processes: a hash of the program and options */
  /* GetCostAnalysis */
  double flops, bytes_accessed, transcendentals;
  /* GetCompiledMemoryStats / SizeOfGeneratedCodeInBytes */
  int64_t temp_bytes, constant_bytes, code_bytes;
  /* OptimizedProgram: the module after compilation, as MLIR text */
  const char *optimized_text;
  size_t optimized_len;
} cj_program_info;

/* One device's share of one execution. */
typedef struct cj_exec_args {
  int32_t replica, partition;   /* this device's place in the device assignment */
  void *const *args;            /* num_args device pointers (read-only unless donated) */
  void *const *results;         /* num_results device pointers the program writes. A result
                                 * whose donor argument was donated gets that argument's
                                 * pointer (the caller decides; see result_donor). */
  cj_launch *launch;            /* shared by the devices of one multi-device execution (for
                                 * collectives); NULL when only one device runs */
  cj_threadpool *pool;          /* the client's pool, for parallel kernels; may be NULL */
  /* FFI user data of this execution (a cj_ffi_user_data_list, runtime/ffi.h), or NULL */
  const struct cj_ffi_user_data_list *ffi_user_data;
} cj_exec_args;

typedef struct cj_backend_vtable {
  const char *name; /* "cpu" */
  /* True when device memory is ordinary host memory the caller may read and write directly
   * (PJRT_Buffer_IsOnCpu, zero-copy host buffers, DLPack views). */
  bool memory_is_host;

  /* Device memory. Alignment is at least 64 bytes. NULL on out-of-memory. */
  void *(*alloc)(cj_backend *b, size_t bytes);
  void (*free)(cj_backend *b, void *p);
  /* Copies between host and device memory (memcpy on the CPU backend). */
  cj_status (*copy_to_device)(cj_backend *b, void *dst, const void *src, size_t n);
  cj_status (*copy_to_host)(cj_backend *b, void *dst, const void *src, size_t n);

  /* Whether the backend can run `op` (consulted by the compiler before lowering, so that an
   * unsupported op fails at compile time naming the op). On false, *why says why. */
  bool (*supports_op)(cj_backend *b, const cj_op *op, const char **why);

  /* Compiles a parsed, verified module (consumed: the program may keep it or free it). */
  cj_status (*compile)(cj_backend *b, cj_module *m, const cj_compile_options *opts,
                       cj_program **out);
  const cj_program_info *(*program_info)(const cj_program *p);
  void (*program_free)(cj_program *p);
  /* A versioned byte form of the program that program_deserialize turns back into an equal
   * program (in this process or another); *out is malloc'ed, the caller frees it. */
  cj_status (*program_serialize)(const cj_program *p, void **out, size_t *len);
  cj_status (*program_deserialize)(cj_backend *b, const void *data, size_t len,
                                   cj_program **out);

  /* A launch groups the per-device executions of one multi-device call so that collectives can
   * meet. Created by the runtime before starting the devices, destroyed after all finished. */
  cj_status (*launch_create)(cj_backend *b, const cj_program *p, int32_t ndevices,
                             cj_launch **out);
  void (*launch_destroy)(cj_launch *l);
  /* Cancels a launch: collectives still waiting on peers fail instead of blocking forever
   * (called when one device's execution failed). */
  void (*launch_abort)(cj_launch *l, cj_status why);

  /* Runs one device's share synchronously on the calling thread (which the runtime chooses:
   * a worker, so that Execute stays asynchronous). */
  cj_status (*execute)(cj_backend *b, const cj_program *p, const cj_exec_args *args);
} cj_backend_vtable;

struct cj_backend {
  const cj_backend_vtable *vt;
};

/* The CPU backend (src/cpu/). */
cj_backend *cj_backend_cpu(void);
/* The reference backend (src/reference/): a plain interpreter, slow but complete. */
cj_backend *cj_backend_reference(void);

/* The registry (runtime/backend.c): a backend by name ("cpu", "reference"), NULL if unknown;
 * the known names as one line ("cpu, reference"); and the backend a client uses: `name` if
 * given (non-empty), else $CJRT_BACKEND if set, else the CPU backend. An unknown name is an
 * INVALID_ARGUMENT error listing the known ones. */
cj_backend *cj_backend_by_name(const char *name);
const char *cj_backend_names(void);
cj_status cj_backend_select(const char *name, cj_backend **out);

#endif
