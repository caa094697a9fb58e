/* cjrt: the spec verifiers named in ops.def (placeholder: the verifier work fills these in). */
#include "ir/verify_fns.h"

cj_status cjv_abs(const cj_op *op) {
  (void)op;
  return NULL;
}

cj_status cjv_after_all(const cj_op *op) {
  (void)op;
  return NULL;
}

cj_status cjv_all_gather(const cj_op *op) {
  (void)op;
  return NULL;
}

cj_status cjv_all_reduce(const cj_op *op) {
  (void)op;
  return NULL;
}

cj_status cjv_all_to_all(const cj_op *op) {
  (void)op;
  return NULL;
}

cj_status cjv_batch_norm_grad(const cj_op *op) {
  (void)op;
  return NULL;
}

cj_status cjv_batch_norm_inference(const cj_op *op) {
  (void)op;
  return NULL;
}

cj_status cjv_batch_norm_training(const cj_op *op) {
  (void)op;
  return NULL;
}

cj_status cjv_binary(const cj_op *op) {
  (void)op;
  return NULL;
}

cj_status cjv_binary_float(const cj_op *op) {
  (void)op;
  return NULL;
}

cj_status cjv_binary_int(const cj_op *op) {
  (void)op;
  return NULL;
}

cj_status cjv_binary_logical(const cj_op *op) {
  (void)op;
  return NULL;
}

cj_status cjv_bitcast_convert(const cj_op *op) {
  (void)op;
  return NULL;
}

cj_status cjv_broadcast(const cj_op *op) {
  (void)op;
  return NULL;
}

cj_status cjv_broadcast_in_dim(const cj_op *op) {
  (void)op;
  return NULL;
}

cj_status cjv_call(const cj_op *op) {
  (void)op;
  return NULL;
}

cj_status cjv_case(const cj_op *op) {
  (void)op;
  return NULL;
}

cj_status cjv_check(const cj_op *op) {
  (void)op;
  return NULL;
}

cj_status cjv_chlo_broadcast(const cj_op *op) {
  (void)op;
  return NULL;
}

cj_status cjv_chlo_broadcast_select(const cj_op *op) {
  (void)op;
  return NULL;
}

cj_status cjv_chlo_constant_like(const cj_op *op) {
  (void)op;
  return NULL;
}

cj_status cjv_chlo_elementwise(const cj_op *op) {
  (void)op;
  return NULL;
}

cj_status cjv_chlo_ragged_dot(const cj_op *op) {
  (void)op;
  return NULL;
}

cj_status cjv_chlo_scan(const cj_op *op) {
  (void)op;
  return NULL;
}

cj_status cjv_chlo_top_k(const cj_op *op) {
  (void)op;
  return NULL;
}

cj_status cjv_cholesky(const cj_op *op) {
  (void)op;
  return NULL;
}

cj_status cjv_clamp(const cj_op *op) {
  (void)op;
  return NULL;
}

cj_status cjv_collective_broadcast(const cj_op *op) {
  (void)op;
  return NULL;
}

cj_status cjv_collective_permute(const cj_op *op) {
  (void)op;
  return NULL;
}

cj_status cjv_collective_reduce(const cj_op *op) {
  (void)op;
  return NULL;
}

cj_status cjv_compare(const cj_op *op) {
  (void)op;
  return NULL;
}

cj_status cjv_complex(const cj_op *op) {
  (void)op;
  return NULL;
}

cj_status cjv_composite(const cj_op *op) {
  (void)op;
  return NULL;
}

cj_status cjv_concatenate(const cj_op *op) {
  (void)op;
  return NULL;
}

cj_status cjv_constant(const cj_op *op) {
  (void)op;
  return NULL;
}

cj_status cjv_convert(const cj_op *op) {
  (void)op;
  return NULL;
}

cj_status cjv_convolution(const cj_op *op) {
  (void)op;
  return NULL;
}

cj_status cjv_create_token(const cj_op *op) {
  (void)op;
  return NULL;
}

cj_status cjv_custom_call(const cj_op *op) {
  (void)op;
  return NULL;
}

cj_status cjv_dot(const cj_op *op) {
  (void)op;
  return NULL;
}

cj_status cjv_dot_general(const cj_op *op) {
  (void)op;
  return NULL;
}

cj_status cjv_dynamic_broadcast_in_dim(const cj_op *op) {
  (void)op;
  return NULL;
}

cj_status cjv_dynamic_conv(const cj_op *op) {
  (void)op;
  return NULL;
}

cj_status cjv_dynamic_gather(const cj_op *op) {
  (void)op;
  return NULL;
}

cj_status cjv_dynamic_iota(const cj_op *op) {
  (void)op;
  return NULL;
}

cj_status cjv_dynamic_pad(const cj_op *op) {
  (void)op;
  return NULL;
}

cj_status cjv_dynamic_reshape(const cj_op *op) {
  (void)op;
  return NULL;
}

cj_status cjv_dynamic_slice(const cj_op *op) {
  (void)op;
  return NULL;
}

cj_status cjv_dynamic_update_slice(const cj_op *op) {
  (void)op;
  return NULL;
}

cj_status cjv_einsum(const cj_op *op) {
  (void)op;
  return NULL;
}

cj_status cjv_fft(const cj_op *op) {
  (void)op;
  return NULL;
}

cj_status cjv_func(const cj_op *op) {
  (void)op;
  return NULL;
}

cj_status cjv_gather(const cj_op *op) {
  (void)op;
  return NULL;
}

cj_status cjv_get_dimension_size(const cj_op *op) {
  (void)op;
  return NULL;
}

cj_status cjv_get_tuple_element(const cj_op *op) {
  (void)op;
  return NULL;
}

cj_status cjv_if(const cj_op *op) {
  (void)op;
  return NULL;
}

cj_status cjv_infeed(const cj_op *op) {
  (void)op;
  return NULL;
}

cj_status cjv_iota(const cj_op *op) {
  (void)op;
  return NULL;
}

cj_status cjv_is_finite(const cj_op *op) {
  (void)op;
  return NULL;
}

cj_status cjv_map(const cj_op *op) {
  (void)op;
  return NULL;
}

cj_status cjv_none(const cj_op *op) {
  (void)op;
  return NULL;
}

cj_status cjv_optimization_barrier(const cj_op *op) {
  (void)op;
  return NULL;
}

cj_status cjv_outfeed(const cj_op *op) {
  (void)op;
  return NULL;
}

cj_status cjv_pad(const cj_op *op) {
  (void)op;
  return NULL;
}

cj_status cjv_process_id(const cj_op *op) {
  (void)op;
  return NULL;
}

cj_status cjv_real_dynamic_slice(const cj_op *op) {
  (void)op;
  return NULL;
}

cj_status cjv_real_imag(const cj_op *op) {
  (void)op;
  return NULL;
}

cj_status cjv_recv(const cj_op *op) {
  (void)op;
  return NULL;
}

cj_status cjv_reduce(const cj_op *op) {
  (void)op;
  return NULL;
}

cj_status cjv_reduce_precision(const cj_op *op) {
  (void)op;
  return NULL;
}

cj_status cjv_reduce_scatter(const cj_op *op) {
  (void)op;
  return NULL;
}

cj_status cjv_reduce_window(const cj_op *op) {
  (void)op;
  return NULL;
}

cj_status cjv_reshape(const cj_op *op) {
  (void)op;
  return NULL;
}

cj_status cjv_return(const cj_op *op) {
  (void)op;
  return NULL;
}

cj_status cjv_reverse(const cj_op *op) {
  (void)op;
  return NULL;
}

cj_status cjv_rng(const cj_op *op) {
  (void)op;
  return NULL;
}

cj_status cjv_rng_bit_generator(const cj_op *op) {
  (void)op;
  return NULL;
}

cj_status cjv_scatter(const cj_op *op) {
  (void)op;
  return NULL;
}

cj_status cjv_sdy_identity(const cj_op *op) {
  (void)op;
  return NULL;
}

cj_status cjv_select(const cj_op *op) {
  (void)op;
  return NULL;
}

cj_status cjv_select_and_scatter(const cj_op *op) {
  (void)op;
  return NULL;
}

cj_status cjv_send(const cj_op *op) {
  (void)op;
  return NULL;
}

cj_status cjv_set_dimension_size(const cj_op *op) {
  (void)op;
  return NULL;
}

cj_status cjv_slice(const cj_op *op) {
  (void)op;
  return NULL;
}

cj_status cjv_sort(const cj_op *op) {
  (void)op;
  return NULL;
}

cj_status cjv_torch_index_select(const cj_op *op) {
  (void)op;
  return NULL;
}

cj_status cjv_transpose(const cj_op *op) {
  (void)op;
  return NULL;
}

cj_status cjv_triangular_solve(const cj_op *op) {
  (void)op;
  return NULL;
}

cj_status cjv_tuple(const cj_op *op) {
  (void)op;
  return NULL;
}

cj_status cjv_unary_einsum(const cj_op *op) {
  (void)op;
  return NULL;
}

cj_status cjv_unary_float(const cj_op *op) {
  (void)op;
  return NULL;
}

cj_status cjv_unary_int(const cj_op *op) {
  (void)op;
  return NULL;
}

cj_status cjv_unary_int_or_bool(const cj_op *op) {
  (void)op;
  return NULL;
}

cj_status cjv_unary_numeric(const cj_op *op) {
  (void)op;
  return NULL;
}

cj_status cjv_uniform_dequantize(const cj_op *op) {
  (void)op;
  return NULL;
}

cj_status cjv_uniform_quantize(const cj_op *op) {
  (void)op;
  return NULL;
}

cj_status cjv_while(const cj_op *op) {
  (void)op;
  return NULL;
}

cj_status cj_verify_op(const cj_op *op) { return cj_op_info_get(op->kind)->verify ? cj_op_info_get(op->kind)->verify(op) : NULL; }

cj_status cj_verify_module(const cj_module *m) { (void)m; return NULL; }
