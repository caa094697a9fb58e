/* cjrt: HLO modules (XLA's own program form) as read from an xla.HloModuleProto (hlo_proto.c)
 * or from HLO text (hlo_text.c), before they are lowered into our StableHLO IR (hlo_lower.c).
 *
 * This is a plain record of what the input said, one struct per HLO message, holding only the
 * fields the lowering reads. Names follow xla/service/hlo.proto and xla/xla_data.proto.
 *
 * Ownership: everything lives in the module's arena and dies with cj_hlo_module_free.
 * Private to src/frontend (the public entry points are in frontend.h).
 */
#ifndef CJ_FRONTEND_HLO_H
#define CJ_FRONTEND_HLO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/arena.h"
#include "base/status.h"
#include "ir/ir.h"

/* xla::PrimitiveType numbers that are not array element types */
enum { HLO_TUPLE = 13, HLO_OPAQUE = 14, HLO_TOKEN = 17 };

typedef struct hlo_i64s {
  int64_t *v;
  int32_t n, cap;
} hlo_i64s;

typedef struct hlo_shape {
  int32_t etype; /* xla::PrimitiveType */
  hlo_i64s dims;
  hlo_i64s dynamic;        /* is_dynamic_dimension (0/1), empty = all static */
  hlo_i64s minor_to_major; /* layout, empty = row-major */
  struct hlo_shape *tuple; /* tuple_shapes */
  int32_t ntuple, cap;
} hlo_shape;

/* A constant's value: elements in cjrt's storage (cj_dtype_bytes each), row-major. */
typedef struct hlo_literal {
  hlo_shape shape;
  void *data;
  size_t nbytes;
} hlo_literal;

typedef struct hlo_window_dim {
  int64_t size, stride, pad_lo, pad_hi, win_dil, base_dil;
  bool reversal;
} hlo_window_dim;

typedef struct hlo_instr {
  const char *name, *opcode;
  hlo_shape shape;
  int64_t id;
  int64_t parameter_number, tuple_index;
  hlo_i64s operand_ids, called_ids, dimensions;
  hlo_literal *literal;
  hlo_window_dim *window;
  int32_t nwindow, wcap;
  bool has_window;
  /* convolution */
  bool has_conv_dnums;
  int64_t in_batch, in_feature, k_in_feature, k_out_feature, out_batch, out_feature;
  hlo_i64s in_spatial, k_spatial, out_spatial;
  int64_t feature_group_count, batch_group_count;
  /* slice */
  hlo_i64s slice_start, slice_limit, slice_stride;
  int64_t exponent_bits, mantissa_bits;
  hlo_i64s dynamic_slice_sizes;
  /* pad */
  bool has_padding;
  hlo_i64s pad_lo, pad_hi, pad_interior;
  int64_t distribution;
  float epsilon;
  int64_t feature_index, channel_id;
  const char *custom_call_target;
  const char *backend_config;
  size_t backend_config_len;
  int64_t api_version;
  bool custom_call_has_side_effect;
  /* operand_shapes_with_layout (text: operand_layout_constraints): when given, the call sees
   * its operands in these layouts and its results in the layouts of `shape` */
  hlo_shape *operand_layouts;
  int32_t noperand_layouts, olcap;
  /* dot */
  bool has_dot_dnums;
  hlo_i64s lhs_contracting, rhs_contracting, lhs_batch, rhs_batch;
  int64_t fft_type;
  hlo_i64s fft_length;
  const char *comparison_direction, *comparison_type;
  /* gather */
  bool has_gather_dnums;
  hlo_i64s offset_dims, collapsed_slice_dims, start_index_map, operand_batching_dims,
      start_indices_batching_dims;
  int64_t index_vector_dim;
  hlo_i64s gather_slice_sizes;
  /* scatter */
  bool has_scatter_dnums;
  hlo_i64s update_window_dims, inserted_window_dims, scatter_dims_to_operand_dims,
      input_batching_dims, scatter_indices_batching_dims;
  int64_t scatter_index_vector_dim;
  /* collectives: groups[i] is the i-th replica group; iota lists are expanded when read */
  hlo_i64s *groups;
  int32_t ngroups, gcap;
  bool has_groups; /* replica_groups or collective_device_list given (possibly empty) */
  bool use_global_device_ids;
  hlo_i64s source_target; /* source0, target0, source1, ... */
  bool is_stable, indices_are_sorted, unique_indices;
  hlo_i64s precision; /* operand_precision */
  /* triangular solve, cholesky */
  bool left_side, lower, unit_diagonal;
  int64_t transpose_a;
  int64_t rng_algorithm;
  int64_t k;
  bool largest;
  /* sharding as HloSharding text ("{devices=[2,1]<=[2]}", "{replicated}", a tuple as
   * "{{...}, {...}}"), NULL when the instruction has none */
  const char *sharding;
  /* HLO text only: operand and called computation names, resolved to ids once all is read */
  const char **onames, **cnames;
  int32_t nonames, oncap, ncnames, cncap;
} hlo_instr;

typedef struct hlo_comp {
  const char *name;
  int64_t id, root_id;
  bool has_root;
  hlo_instr *instrs;
  int32_t n, cap;
} hlo_comp;

typedef struct hlo_module {
  cj_arena arena;
  const char *name, *entry_name;
  int64_t entry_id;
  bool has_entry_id;
  hlo_comp *comps;
  int32_t n, cap;
  int64_t num_replicas, num_partitions; /* from HloModuleConfigProto, 0 if not given */
} hlo_module;

hlo_module *cj_hlo_module_new(void); /* NULL on out-of-memory */
void cj_hlo_module_free(hlo_module *h);

/* growing arrays in h's arena (false on out-of-memory) */
bool cj_hlo_push_i64(hlo_module *h, hlo_i64s *a, int64_t v);
void *cj_hlo_push(hlo_module *h, void **items, int32_t *n, int32_t *cap, size_t size);

/* Iota replica groups (both readers; hlo_proto.c). Whether perm (empty: none) is a permutation
 * of 0 .. perm->n - 1, perm->n at most 32. */
bool cj_hlo_iota_perm_ok(const hlo_i64s *perm);
/* Appends to in->groups the ng groups of `per` ids each that the iota list stands for: the
 * ids 0 .. ng * per - 1 laid out as dims (at most 16), transposed by perm (checked above; empty:
 * none), read in order. With no dims, the ids in order. */
CJ_MUST_USE cj_status cj_hlo_iota_groups(hlo_module *h, hlo_instr *in, int64_t ng, int64_t per,
                                      const hlo_i64s *dims, const hlo_i64s *perm);

/* Readers: fill *out (owned by the caller) or fail naming what was wrong. */
CJ_MUST_USE cj_status cj_hlo_read_proto(const void *data, size_t len, bool with_config, hlo_module **out);
CJ_MUST_USE cj_status cj_hlo_read_text(const char *text, size_t len, const char *filename, hlo_module **out);

/* Lowers an HLO module into a StableHLO module whose func.func @main is the entry computation
 * (entry parameters become arguments, a tuple root becomes several results). */
CJ_MUST_USE cj_status cj_hlo_lower(const hlo_module *h, const char *filename, cj_module **out);

#endif
