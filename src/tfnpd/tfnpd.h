/* cjrt as a TensorFlow "next pluggable device" (TFNPD): the structs TensorFlow hands to and
 * takes from TFNPD_InitPlugin, declared here in our own words with the layout TensorFlow 2.21
 * expects (tensorflow/core/common_runtime/next_pluggable_device/c/plugin_c_api.h, version
 * 0.0.1, and the XLA_Shape of xla/stream_executor/tpu/c_api_decl.h). docs/TENSORFLOW.md says
 * how TensorFlow uses them.
 *
 * TensorFlow loads one library and looks up TFNPD_InitPlugin and GetPjrtApi in it, so this layer
 * is compiled into the PJRT plugin. It never includes pjrt_c_api.h: the PJRT client and buffers
 * are opaque here, and the one operation on them (a same-device buffer copy) is done by
 * src/pjrt/tfnpd_bridge.c. TensorFlow's C API (TF_SetStatus, TF_TensorData, ...) is looked up at
 * run time in the process (tfnpd_tf.c), never linked: the plugin loads without TensorFlow. */
#ifndef CJ_TFNPD_TFNPD_H
#define CJ_TFNPD_TFNPD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/status.h"

/* ---- TensorFlow's opaque types (pointers only) ---- */
typedef struct TSL_Status TF_Status;
typedef struct TF_Tensor TF_Tensor;
struct PJRT_Buffer;
struct PJRT_Client;

typedef struct tfnpd_string_view { /* TF_StringView */
  const char *data;
  size_t len;
} tfnpd_string_view;

/* ---- XLA_Shape (a shape tree; lists of up to 6 entries are stored inline) ---- */
#define TFNPD_INLINED 6
typedef struct tfnpd_i64_list {
  union {
    int64_t *heap; /* owned by whoever frees the shape, with C++ delete[] */
    int64_t inlined[TFNPD_INLINED];
  };
  int64_t size;
} tfnpd_i64_list;
typedef struct tfnpd_bool_list {
  union {
    bool *heap;
    bool inlined[TFNPD_INLINED];
  };
  int64_t size;
} tfnpd_bool_list;
typedef struct tfnpd_xla_tile {
  tfnpd_i64_list dimensions;
} tfnpd_xla_tile;
typedef struct tfnpd_tile_list {
  union {
    tfnpd_xla_tile *heap;
    tfnpd_xla_tile inlined[TFNPD_INLINED];
  };
  int64_t size;
} tfnpd_tile_list;
typedef struct tfnpd_xla_layout {
  tfnpd_i64_list minor_to_major;
  tfnpd_tile_list tiles;
  int index_primitive_type;
  int pointer_primitive_type;
  int64_t element_size_in_bits;
  int64_t memory_space;
  int64_t dynamic_shape_metadata_prefix_bytes;
  int64_t tail_padding_alignment_in_elements;
} tfnpd_xla_layout;
typedef struct tfnpd_xla_shape {
  int element_type;
  tfnpd_i64_list dimensions;
  tfnpd_bool_list dynamic_dimensions;
  struct tfnpd_xla_shape *tuple_shapes; /* owned, delete[] */
  int ntuple_shapes;
  bool has_layout;
  tfnpd_xla_layout layout;
} tfnpd_xla_shape;

/* ---- the plugin's objects (defined in tfnpd.c) ---- */
typedef struct tfnpd_event tfnpd_event;
typedef struct tfnpd_allocator tfnpd_allocator;
typedef struct tfnpd_context tfnpd_context;

/* The function table TFNPD_InitPlugin returns (TFNPD_Api), in TensorFlow's field order. */
typedef struct tfnpd_api {
  size_t struct_size;
  void *priv;

  tfnpd_event *(*new_event)(void);
  void (*event_await)(tfnpd_event *event, TF_Status *status);
  bool (*event_is_ready)(tfnpd_event *event);
  void (*event_and_then)(tfnpd_event *event, void (*callback)(void *), void *arg);
  void (*event_delete)(tfnpd_event *event);

  tfnpd_allocator *(*allocator_create)(int device_ordinal);
  void *(*allocate_raw)(tfnpd_allocator *a, size_t alignment, size_t num_bytes);
  void (*deallocate_raw)(tfnpd_allocator *a, void *ptr);
  tfnpd_string_view (*allocator_name)(tfnpd_allocator *a);
  bool (*allocator_allocates_opaque_handle)(tfnpd_allocator *a);
  void (*allocator_delete)(tfnpd_allocator *a);

  tfnpd_context *(*context_create)(int device_ordinal);
  void (*context_delete)(tfnpd_context *c);

  tfnpd_event *(*device_to_host)(tfnpd_context *c, const TF_Tensor *device_tensor,
                                 TF_Tensor *cpu_tensor, TF_Status *status);
  tfnpd_event *(*host_to_device)(tfnpd_context *c, const TF_Tensor *cpu_tensor,
                                 TF_Tensor *device_tensor, TF_Status *status);
  tfnpd_event *(*same_device_tensor_copy)(tfnpd_context *c);
  struct PJRT_Buffer *(*same_device_buffer_copy)(struct PJRT_Buffer *src,
                                                 struct PJRT_Client *client, TF_Status *status);

  void (*xla_shape_to_device_shape)(tfnpd_xla_shape *xla_shape, int data_type,
                                    bool use_fast_memory, int layout_preference,
                                    tfnpd_xla_shape *device_shape, TF_Status *status);

  int32_t (*device_count)(TF_Status *status);
  void (*init_device_states)(TF_Status *status);
} tfnpd_api;

/* What TensorFlow passes to TFNPD_InitPlugin (TFNPD_PluginParams); outputs filled by us.
 * TensorFlow 2.21 sets struct_size to the end of is_pluggable_device, but has (and reads)
 * use_pjrt_on_demand_compile after it. */
typedef struct tfnpd_plugin_params {
  size_t struct_size;
  void *ext;
  const char *device_type;
  const char *compilation_device_name;
  int32_t priority;
  bool is_pluggable_device;
  bool use_pjrt_on_demand_compile;
} tfnpd_plugin_params;

/* The exported entry point (declared with TensorFlow's name in tfnpd.c). */
const tfnpd_api *TFNPD_InitPlugin(tfnpd_plugin_params *params, TF_Status *status);

/* ---- TensorFlow's C API, found in the process at run time (tfnpd_tf.c) ---- */

/* TF_SetStatus(status, code, message) where TensorFlow is loaded (TF_Code values are cj_code's);
 * false when TF_SetStatus cannot be found (the message then goes to stderr). */
bool tfnpd_set_status(TF_Status *status, cj_code code, const char *message);
/* tfnpd_set_status from a cj_status (OK for NULL), which it frees. */
void tfnpd_report(TF_Status *status, cj_status st);
/* TF_TensorData / TF_TensorByteSize of t. */
CJ_MUST_USE cj_status tfnpd_tensor_bytes(const TF_Tensor *t, const char *what, void **data,
                                         size_t *size);

/* Moves an absl::Status (its one-word representation, TensorFlow 2.21's Abseil) into *status
 * (a TSL_Status is that one absl::Status), which then owns it; true if it could. */
bool tfnpd_take_cxx_status(TF_Status *status, uintptr_t rep);
/* Frees an absl::Status representation (through a TF_Status of its own). */
void tfnpd_discard_cxx_status(uintptr_t rep);

/* Registers device_type's XLA compilation device with TensorFlow, and creates the PJRT client
 * TensorFlow uses for device_type and sets it in TensorFlow's global resource manager unless it
 * has one (tfnpd_client.c); failures go to *status. */
void tfnpd_create_client(const char *device_type, const char *compilation_device,
                         TF_Status *status);

/* ---- the PJRT side (src/pjrt/tfnpd_bridge.c) ---- */

/* *out = a copy of the PJRT buffer src on its own device and memory. */
CJ_MUST_USE cj_status cjp_tfnpd_buffer_copy(struct PJRT_Buffer *src, struct PJRT_Buffer **out);

#endif
