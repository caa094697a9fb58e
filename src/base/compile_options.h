/* cjrt: what a program is compiled for (the part of xla.CompileOptionsProto cjrt uses).
 *
 * It lives in base/ because every layer that handles a program reads it: the frontend fills it
 * (frontend/compile_options.h reads and writes the proto), the runtime and its compile driver
 * pass it down, backends read the replica/partition grid. Plain data: the device assignment is
 * borrowed from whoever filled the struct (cj_compile_options_storage owns one). */
#ifndef CJ_BASE_COMPILE_OPTIONS_H
#define CJ_BASE_COMPILE_OPTIONS_H

#include <stdbool.h>
#include <stdint.h>

typedef struct cj_compile_options {
  int64_t num_replicas;       /* >= 1 */
  int64_t num_partitions;     /* >= 1 */
  /* device_assignment[r * num_partitions + p] = global device id of replica r, partition p;
   * NULL = the client's default assignment. */
  const int64_t *device_assignment;
  bool use_spmd_partitioning;
  bool use_shardy_partitioner;
} cj_compile_options;

#endif
