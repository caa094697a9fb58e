/* Unit tests for src/base (status, arena, dtypes) and the IR core (src/ir/ir.c, ops.c). */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "../common/check.h"
#include "base/arena.h"
#include "base/dtype.h"
#include "base/status.h"
#include "ir/ir.h"

static void test_status(void) {
  CHECK(cj_status_code(NULL) == CJ_OK);
  CHECK_EQ_STR(cj_status_message(NULL), "");
  cj_status st = cj_invalid("bad %s %d", "thing", 3);
  CHECK(cj_status_code(st) == CJ_INVALID_ARGUMENT);
  CHECK_EQ_STR(cj_status_message(st), "bad thing 3");
  st = cj_status_annotate(st, "while %s", "parsing");
  CHECK_EQ_STR(cj_status_message(st), "while parsing: bad thing 3");
  cj_status c = cj_status_copy(st);
  CHECK_EQ_STR(cj_status_message(c), "while parsing: bad thing 3");
  cj_status_free(st);
  cj_status_free(c);
  CHECK_EQ_STR(cj_code_name(CJ_UNIMPLEMENTED), "UNIMPLEMENTED");
  CHECK(cj_status_make(CJ_OK, "x") == NULL);
}

static void test_arena(void) {
  cj_arena a;
  cj_arena_init(&a);
  char *p = cj_arena_alloc(&a, 10);
  CHECK(p && ((uintptr_t)p % 16) == 0);
  for (int i = 0; i < 10; i++) CHECK(p[i] == 0);
  void *big = cj_arena_alloc_aligned(&a, 5 << 20, 64);
  CHECK(big && ((uintptr_t)big % 64) == 0);
  char *s = cj_arena_strndup(&a, "hello world", 5);
  CHECK_EQ_STR(s, "hello");
  CHECK(cj_arena_alloc_aligned(&a, 8, 128) == NULL); /* unsupported alignment is refused */
  cj_arena_release(&a);
}

static void roundtrip(cj_dtype dt, double v, double expect) {
  uint64_t bits = cj_float_encode(dt, v);
  double back = cj_float_decode(dt, bits);
  if (isnan(expect))
    CHECK_MSG(isnan(back), "%s(%g) -> %g, expected nan", cj_dtype_get(dt)->id, v, back);
  else
    CHECK_MSG(back == expect && signbit(back) == signbit(expect), "%s(%g) -> %g, expected %g",
              cj_dtype_get(dt)->id, v, back, expect);
}

static void test_dtypes(void) {
  CHECK_EQ_INT(CJ_F32, 11);
  CHECK_EQ_INT(CJ_F6E3M2FN, 33);
  CHECK_EQ_INT(cj_dtype_bytes(CJ_C128), 16);
  CHECK_EQ_INT(cj_dtype_bytes(CJ_S4), 1);
  CHECK(cj_dtype_from_mlir("bf16", 4) == CJ_BF16);
  CHECK(cj_dtype_from_mlir("ui64", 4) == CJ_U64);
  CHECK(cj_dtype_from_mlir("si32", 4) == CJ_S32);
  CHECK(cj_dtype_from_mlir("f8E4M3FN", 8) == CJ_F8E4M3FN);
  CHECK(cj_dtype_from_mlir("f9", 2) == CJ_INVALID);

  /* values checked against ml_dtypes 0.6 */
  roundtrip(CJ_F8E4M3FN, 1e9, NAN);
  roundtrip(CJ_F8E4M3FN, 448, 448);
  roundtrip(CJ_F8E4M3FN, 2.5, 2.5);
  roundtrip(CJ_F8E4M3FNUZ, -0.0, 0.0);
  roundtrip(CJ_F8E5M2, INFINITY, INFINITY);
  roundtrip(CJ_F8E5M2, 1e9, INFINITY);
  roundtrip(CJ_F4E2M1FN, 1e9, 6.0);
  roundtrip(CJ_F4E2M1FN, -INFINITY, -6.0);
  roundtrip(CJ_F4E2M1FN, 2.5, 2.0); /* tie to even */
  roundtrip(CJ_F6E2M3FN, 1e9, 7.5);
  roundtrip(CJ_F8E8M0FNU, 3.0, 4.0);
  roundtrip(CJ_F8E8M0FNU, 1.5, 2.0);
  roundtrip(CJ_F8E8M0FNU, 0.0, NAN);
  roundtrip(CJ_F8E8M0FNU, -1.0, NAN);
  roundtrip(CJ_F16, 65504, 65504);
  roundtrip(CJ_F16, 1e6, INFINITY);
  roundtrip(CJ_F16, 5.960464477539063e-08, 5.960464477539063e-08); /* smallest subnormal */
  roundtrip(CJ_BF16, 1.0, 1.0);
  CHECK_EQ_INT(cj_float_encode(CJ_F8E4M3FN, 1e9), 0x7f);
  CHECK_EQ_INT(cj_float_encode(CJ_F8E5M2, NAN), 0x7e);
  CHECK_EQ_INT(cj_float_encode(CJ_F8E4M3, NAN), 0x7c);
  CHECK_EQ_INT(cj_float_encode(CJ_F8E4M3FNUZ, NAN), 0x80);
  CHECK_EQ_INT(cj_float_encode(CJ_F4E2M1FN, NAN), 0x8);
  CHECK_EQ_INT(cj_float_encode(CJ_F8E8M0FNU, 1e9), 0x9d);
  CHECK_EQ_INT(cj_float_encode(CJ_F8E3M4, 1.5), 0x38);
  CHECK(cj_f16_to_f32(0x3c00) == 1.0f);
  CHECK(cj_f16_to_f32(0x0001) == 5.960464477539063e-08f);
  CHECK(cj_f32_to_f16(1.0f) == 0x3c00);
  { /* the bit-level f32 -> f16 against the generic encoder: every f32 near the subnormal,
     * normal and overflow boundaries and a stride through all bit patterns */
    int bad = 0;
    uint32_t first_bad = 0;
    for (uint64_t i = 0; i < (1ull << 32); i += (i >> 23 & 0xff) >= 0x66 && (i >> 23 & 0xff) <= 0x71 ? 13 : 0x3f1) {
      uint32_t u = (uint32_t)i;
      float f;
      memcpy(&f, &u, 4);
      uint16_t want = (uint16_t)cj_float_encode(CJ_F16, (double)f);
      if (cj_f32_to_f16(f) != want && !bad++) first_bad = u;
    }
    static const uint32_t edges[] = {0x477fefffu, 0x477ff000u, 0x477fe000u, 0x38800000u,
                                     0x387fffffu, 0x387fc000u, 0x33000000u, 0x33000001u,
                                     0x32ffffffu, 0x7f800000u, 0xff800000u, 0x7fc00001u,
                                     0xffbfffffu, 0x80000000u, 0x3f800fffu, 0x3f801000u,
                                     0x3f803000u, 0x3f801001u};
    for (size_t k = 0; k < sizeof edges / sizeof *edges; k++) {
      float f;
      memcpy(&f, &edges[k], 4);
      if (cj_f32_to_f16(f) != (uint16_t)cj_float_encode(CJ_F16, (double)f) && !bad++)
        first_bad = edges[k];
    }
    CHECK_MSG(bad == 0, "cj_f32_to_f16 differs from cj_float_encode on %d values (first 0x%08x)",
              bad, first_bad);
  }
  CHECK(cj_f32_to_bf16(1.0f) == 0x3f80);

  unsigned char b[4] = {0xf, 0x3, 0x8, 0};
  CHECK_EQ_INT(cj_elem_get_i64(CJ_S4, b, 0), -1);
  CHECK_EQ_INT(cj_elem_get_i64(CJ_S4, b, 2), -8);
  CHECK_EQ_INT(cj_elem_get_i64(CJ_U4, b, 0), 15);
  cj_elem_set_i64(CJ_S4, b, 3, -2);
  CHECK_EQ_INT(b[3], 0xe);
}

static void test_ir_core(void) {
  cj_module *m = cj_module_create("t.mlir");
  CHECK(m != NULL);
  int64_t d[2] = {2, 3};
  const cj_type *t1 = cj_type_tensor_of(m, CJ_F32, 2, d);
  const cj_type *t2 = cj_type_tensor_of(m, CJ_F32, 2, d);
  CHECK(t1 == t2);
  CHECK(t1->num_elements == 6 && t1->dtype == CJ_F32);
  int64_t dd[2] = {CJ_DYN, 3};
  const cj_type *t3 = cj_type_tensor_of(m, CJ_F32, 2, dd);
  CHECK(t3 != t1 && t3->num_elements == -1);
  const cj_type *ins[2] = {t1, t3};
  const cj_type *fn = cj_type_function(m, 2, ins, 1, &t1);
  CHECK(fn == cj_type_function(m, 2, ins, 1, &t1));
  CHECK(cj_type_fn_result(fn, 0) == t1);
  const char *a = cj_intern(m, "abc", 3), *b = cj_intern(m, "abcd", 3);
  CHECK(a == b);

  CHECK(cj_op_kind_from_name("stablehlo.add", 13) == CJ_OP_ADD);
  CHECK(cj_op_kind_from_name("func.func", 9) == CJ_OP_FUNC);
  CHECK(cj_op_kind_from_name("sdy.mesh", 8) == CJ_OP_SDY_MESH);
  CHECK(cj_op_kind_from_name("stablehlo.nope", 14) == CJ_OP_UNKNOWN);
  CHECK(cj_op_attr_spec(CJ_OP_COMPARE, "comparison_direction")->sub == CJ_EK_COMPARISON_DIRECTION);
  CHECK(cj_op_info_get(CJ_OP_SCATTER)->nopnds == -1);

  int32_t v;
  CHECK(cj_enum_from_name(CJ_EK_COMPARISON_DIRECTION, "GT", 2, &v) && v == 3);
  CHECK_EQ_STR(cj_enum_case_name(CJ_EK_RNG_DISTRIBUTION, 2), "NORMAL");
  CHECK_EQ_STR(cj_struct_mnemonic(CJ_SK_GATHER), "gather");
  CHECK_EQ_INT(cj_struct_num_fields(CJ_SK_CONV), 9);
  CHECK_EQ_INT(cj_struct_field_index(CJ_SK_DOT, "rhs_contracting_dimensions", 26), 3);

  int64_t vals[3] = {1, 2, 3};
  const cj_attr *arr = cj_attr_i64_array(m, 3, vals);
  int64_t out[3], n;
  CHECK(cj_attr_get_i64s(arr, out, 3, &n) && n == 3 && out[2] == 3);
  cj_named_attr items[3] = {{"b", cj_attr_bool(m, true)}, {"a", arr}, {"b", cj_attr_unit(m)}};
  const cj_attr *dict = cj_attr_dict(m, 3, items);
  CHECK(dict->dict.n == 2 && strcmp(dict->dict.items[0].name, "a") == 0 &&
        dict->dict.items[1].value->kind == CJ_ATTR_UNIT);

  /* a tiny function: func.func @main(%x: tensor<2x3xf32>) -> tensor<2x3xf32> { add; return } */
  cj_op *f = cj_op_create(m, CJ_OP_FUNC, NULL, 0, 0, 1);
  CHECK(f != NULL);
  const cj_type *fty = cj_type_function(m, 1, &t1, 1, &t1);
  CHECK(!cj_op_set_attr(m, f, "sym_name", cj_attr_string(m, "main", 4)));
  CHECK(!cj_op_set_attr(m, f, "function_type", cj_attr_type(m, fty)));
  cj_block *body = cj_region_add_block(m, &f->regions[0], 1, &t1);
  cj_op *add = cj_op_create(m, CJ_OP_ADD, NULL, 2, 1, 0);
  cj_op_set_operand(add, 0, &body->args[0]);
  cj_op_set_operand(add, 1, &body->args[0]);
  add->results[0].type = t1;
  cj_block_append(body, add);
  cj_op *ret = cj_op_create(m, CJ_OP_FUNC_RETURN, NULL, 1, 0, 0);
  cj_op_set_operand(ret, 0, &add->results[0]);
  cj_block_append(body, ret);
  cj_block_append(cj_module_block(m), f);
  CHECK(cj_module_main(m) == f);
  CHECK(cj_func_type(f) == fty);
  CHECK_EQ_STR(add->name, "stablehlo.add");
  cj_op *g = cj_op_clone(m, f, 0, NULL, NULL);
  CHECK(g && cj_func_body(g)->nops == 2);
  CHECK(cj_func_body(g)->first->operands[0] == &cj_func_body(g)->args[0]);
  add->pos.file = "t.mlir";
  add->pos.line = 3;
  add->pos.col = 5;
  cj_status st = cj_op_error(add, CJ_INVALID_ARGUMENT, "bad %d", 7);
  CHECK_EQ_STR(cj_status_message(st), "stablehlo.add at t.mlir:3:5: bad 7");
  cj_status_free(st);
  cj_module_free(m);
}

int main(void) {
  test_status();
  test_arena();
  test_dtypes();
  test_ir_core();
  return check_report("test_base");
}
