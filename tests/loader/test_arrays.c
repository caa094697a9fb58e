/* libcjrt without a plugin: dtype names, literals, numpy-style printing, .npy reading/writing.
 * Usage: test_loader_arrays DATA_DIR (tests/loader/data: .npy files written by numpy/ml_dtypes) */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/check.h"
#include "cjrt/array.h"
#include "cjrt/dlpack.h"
#include "cjrt/npy.h"

static const char *data_dir = ".";

static void test_dtypes(void) {
  CHECK_EQ_STR(cjrt_dtype_name(CJRT_F32), "f32");
  CHECK_EQ_STR(cjrt_dtype_name(CJRT_F8E4M3FN), "f8e4m3fn");
  CHECK_EQ_STR(cjrt_dtype_name((cjrt_dtype)99), "invalid");
  CHECK_EQ_STR(cjrt_dtype_mlir_name(CJRT_U8), "ui8");
  CHECK_EQ_STR(cjrt_dtype_mlir_name(CJRT_C64), "complex<f32>");
  CHECK_EQ_INT(cjrt_dtype_size(CJRT_C128), 16);
  CHECK_EQ_INT(cjrt_dtype_size(CJRT_S4), 1);
  CHECK_EQ_INT(cjrt_dtype_size(CJRT_TOKEN), 0);
  CHECK_EQ_INT(cjrt_dtype_bits(CJRT_S4), 4);
  const struct {
    const char *name;
    cjrt_dtype dt;
  } names[] = {{"f32", CJRT_F32},         {"float32", CJRT_F32},     {"F32", CJRT_F32},
               {"i32", CJRT_S32},         {"s32", CJRT_S32},         {"int32", CJRT_S32},
               {"ui16", CJRT_U16},        {"u16", CJRT_U16},         {"bool", CJRT_PRED},
               {"pred", CJRT_PRED},       {"i1", CJRT_PRED},         {"bf16", CJRT_BF16},
               {"bfloat16", CJRT_BF16},   {"c64", CJRT_C64},         {"complex128", CJRT_C128},
               {"f8E4M3FN", CJRT_F8E4M3FN}, {"float8_e5m2", CJRT_F8E5M2}, {"int4", CJRT_S4},
               {"f6e3m2fn", CJRT_F6E3M2FN}, {"nonsense", CJRT_INVALID}, {"", CJRT_INVALID}};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    CHECK_MSG(cjrt_dtype_from_name(names[i].name) == names[i].dt, "name %s", names[i].name);
  for (int dt = 1; dt < CJRT_DTYPE_COUNT; dt++) {
    if (dt == CJRT_TOKEN) continue;
    CHECK_MSG((int)cjrt_dtype_from_name(cjrt_dtype_name((cjrt_dtype)dt)) == dt, "round trip %d", dt);
  }
}

/* Parses a typed literal and checks its shape and formatted text. */
static void lit(const char *spec, const char *want_shape, const char *want_text) {
  cjrt_array a;
  cjrt_error *e = cjrt_array_parse_typed(spec, &a);
  CHECK_MSG(!e, "%s: %s", spec, cjrt_error_message(e));
  if (e) {
    cjrt_error_free(e);
    return;
  }
  char *shape = NULL, *text = NULL;
  cjrt_error_free(cjrt_array_describe(a.dtype, a.dims, a.rank, &shape));
  CHECK_EQ_STR(shape, want_shape);
  e = cjrt_array_format(&a, &text);
  CHECK(!e);
  CHECK_EQ_STR(text, want_text);
  cjrt_free(shape);
  cjrt_free(text);
  cjrt_array_free(&a);
  CHECK(a.data == NULL && a.dims == NULL);
}

static void bad_lit(const char *spec, const char *want_in_message) {
  cjrt_array a;
  cjrt_error *e = cjrt_array_parse_typed(spec, &a);
  CHECK_MSG(e != NULL, "'%s' parsed", spec);
  if (e) CHECK_CONTAINS(cjrt_error_message(e), want_in_message);
  CHECK(a.data == NULL);
  cjrt_error_free(e);
}

static void test_literals(void) {
  lit("[[1, 2], [3, 4]]:f32", "f32[2,2]", "[[1. 2.]\n [3. 4.]]");
  lit("3:i32", "s32[]", "3");
  lit("2.5:f32", "f32[]", "2.5");
  lit("[1.5, -2.25, 1e3]:f64", "f64[3]", "[   1.5    -2.25 1000.  ]");
  lit("[[1. 2.] [3. 4.]]:f32", "f32[2,2]", "[[1. 2.]\n [3. 4.]]"); /* numpy's printed form */
  lit("[true, false, 1]:pred", "pred[3]", "[ True False  True]");
  lit("[1+2j, -3.5j, 4]:c64", "c64[3]", "[1.+2.j  0.-3.5j 4.+0.j ]");
  lit("[255, 0]:u8", "u8[2]", "[255   0]");
  lit("[-8, 7]:s4", "s4[2]", "[-8 7]");
  lit("[1, 2.5, 3]:bf16", "bf16[3]", "[1 2.5 3]");
  lit("[]:f32", "f32[0]", "[]");
  lit("[[], []]:i8", "s8[2,0]", "[]");
  lit("[inf, -inf, nan]:f32", "f32[3]", "[ inf -inf  nan]");
  lit("[0x10, -0x1]:i64", "s64[2]", "[16 -1]");
  lit("18446744073709551615:u64", "u64[]", "18446744073709551615");
  lit("  [ [1] , [2] ] : f16 ", "f16[2,1]", "[[1.]\n [2.]]");
  bad_lit("[[1, 2], [3]]:f32", "not rectangular");
  bad_lit("[[1, 2], 3]:f32", "ragged");
  bad_lit("[1, 2:f32", "missing ']'");
  bad_lit("[1, x]:f32", "'x' at offset 4 is not a number");
  bad_lit("[1, 2]", "no ':TYPE'");
  bad_lit("[1, 2]:f33", "unknown element type 'f33'");
  bad_lit("300:u8", "does not fit in u8");
  bad_lit("-1:u32", "does not fit in u32");
  bad_lit("8:s4", "does not fit in s4");
  bad_lit("1.5:i32", "not an integer");
  bad_lit("2:pred", "not a pred");
  bad_lit("1+2j:f32", "complex value");
  bad_lit("[1,,2]:f32", "two commas");
  bad_lit("[1] 2:f32", "after the value");
  bad_lit(":f32", "empty");
}

static void test_format(void) {
  /* summarization and wrapping, as numpy prints np.arange(2000, dtype=np.float32).reshape(2, 1000) */
  int64_t dims[2] = {2, 1000};
  cjrt_array a;
  CHECK(!cjrt_array_alloc(CJRT_F32, dims, 2, &a));
  for (int i = 0; i < 2000; i++) ((float *)a.data)[i] = (float)i;
  char *text = NULL;
  CHECK(!cjrt_array_format(&a, &text));
  CHECK_EQ_STR(text, "[[0.000e+00 1.000e+00 2.000e+00 ... 9.970e+02 9.980e+02 9.990e+02]\n"
                     " [1.000e+03 1.001e+03 1.002e+03 ... 1.997e+03 1.998e+03 1.999e+03]]");
  cjrt_free(text);
  cjrt_array_free(&a);
  /* line wrapping at 75 columns: np.arange(30.) / 7 */
  int64_t n30 = 30;
  CHECK(!cjrt_array_alloc(CJRT_F64, &n30, 1, &a));
  for (int i = 0; i < 30; i++) ((double *)a.data)[i] = i / 7.0;
  CHECK(!cjrt_array_format(&a, &text));
  CHECK_EQ_STR(text,
               "[0.         0.14285714 0.28571429 0.42857143 0.57142857 0.71428571\n"
               " 0.85714286 1.         1.14285714 1.28571429 1.42857143 1.57142857\n"
               " 1.71428571 1.85714286 2.         2.14285714 2.28571429 2.42857143\n"
               " 2.57142857 2.71428571 2.85714286 3.         3.14285714 3.28571429\n"
               " 3.42857143 3.57142857 3.71428571 3.85714286 4.         4.14285714]");
  cjrt_free(text);
  cjrt_array_free(&a);
  cjrt_array bad = {.dtype = CJRT_TOKEN};
  cjrt_error *e = cjrt_array_format(&bad, &text);
  CHECK(e && text == NULL);
  cjrt_error_free(e);
}

static void roundtrip_npy(cjrt_dtype dt, bool fortran) {
  int64_t dims[3] = {2, 3, 4};
  cjrt_array a, b;
  CHECK(!cjrt_array_alloc(dt, dims, 3, &a));
  for (size_t i = 0; i < a.nbytes; i++) ((uint8_t *)a.data)[i] = (uint8_t)(i * 7 + 1);
  if (dt == CJRT_PRED)
    for (size_t i = 0; i < a.nbytes; i++) ((uint8_t *)a.data)[i] &= 1;
  void *bytes = NULL;
  size_t size = 0;
  CHECK(!cjrt_npy_write_mem(&a, fortran, &bytes, &size));
  CHECK(size % 64 == a.nbytes % 64);
  cjrt_error *e = cjrt_npy_read_mem(bytes, size, dt, "mem", &b);
  CHECK_MSG(!e, "%s: %s", cjrt_dtype_name(dt), cjrt_error_message(e));
  if (!e) {
    CHECK(b.dtype == dt && b.rank == 3 && b.dims[0] == 2 && b.dims[2] == 4);
    CHECK_MSG(b.nbytes == a.nbytes && !memcmp(a.data, b.data, a.nbytes), "%s%s data differs",
              cjrt_dtype_name(dt), fortran ? " (fortran)" : "");
  }
  cjrt_error_free(e);
  cjrt_array_free(&b);
  cjrt_free(bytes);
  cjrt_array_free(&a);
}

static char *path_of(const char *name) {
  static char buf[4096];
  snprintf(buf, sizeof buf, "%s/%s", data_dir, name);
  return buf;
}

static void test_npy(void) {
  for (int dt = 1; dt < CJRT_DTYPE_COUNT; dt++) {
    if (dt == CJRT_TOKEN) continue;
    roundtrip_npy((cjrt_dtype)dt, false);
    roundtrip_npy((cjrt_dtype)dt, true);
  }
  CHECK_EQ_STR(cjrt_npy_descr(CJRT_BF16), "<V2");
  CHECK_EQ_STR(cjrt_npy_descr(CJRT_F8E4M3FN), "<V1");
  CHECK_EQ_STR(cjrt_npy_descr(CJRT_PRED), "|b1");
  CHECK(cjrt_npy_descr(CJRT_TOKEN) == NULL);
  /* files numpy and ml_dtypes wrote (see data/make_data.py) */
  cjrt_array a;
  cjrt_error *e = cjrt_npy_read_file(path_of("f32_2x3.npy"), CJRT_INVALID, &a);
  CHECK_MSG(!e, "%s", cjrt_error_message(e));
  if (!e) {
    CHECK(a.dtype == CJRT_F32 && a.rank == 2 && a.dims[0] == 2 && a.dims[1] == 3);
    CHECK(((float *)a.data)[5] == 5.5f);
  }
  cjrt_error_free(e);
  cjrt_array_free(&a);
  /* Fortran order, read back in C order: np.asfortranarray(np.arange(6).reshape(2, 3)) */
  e = cjrt_npy_read_file(path_of("i64_fortran.npy"), CJRT_INVALID, &a);
  CHECK_MSG(!e, "%s", cjrt_error_message(e));
  if (!e) {
    int64_t want[6] = {0, 1, 2, 3, 4, 5};
    CHECK(a.dtype == CJRT_S64 && a.nbytes == 48 && !memcmp(a.data, want, 48));
  }
  cjrt_error_free(e);
  cjrt_array_free(&a);
  /* big-endian */
  e = cjrt_npy_read_file(path_of("i32_be.npy"), CJRT_INVALID, &a);
  CHECK(!e && a.dtype == CJRT_S32 && ((int32_t *)a.data)[1] == -2 && ((int32_t *)a.data)[2] == 70000);
  cjrt_error_free(e);
  cjrt_array_free(&a);
  e = cjrt_npy_read_file(path_of("c64_be.npy"), CJRT_INVALID, &a);
  CHECK(!e && a.dtype == CJRT_C64 && ((float *)a.data)[2] == 3.0f && ((float *)a.data)[3] == -4.0f);
  cjrt_error_free(e);
  cjrt_array_free(&a);
  e = cjrt_npy_read_file(path_of("bool.npy"), CJRT_INVALID, &a);
  CHECK(!e && a.dtype == CJRT_PRED && a.nbytes == 3 && ((uint8_t *)a.data)[1] == 0);
  cjrt_error_free(e);
  cjrt_array_free(&a);
  e = cjrt_npy_read_file(path_of("scalar_f64.npy"), CJRT_INVALID, &a);
  CHECK(!e && a.dtype == CJRT_F64 && a.rank == 0 && ((double *)a.data)[0] == 2.5);
  cjrt_error_free(e);
  cjrt_array_free(&a);
  e = cjrt_npy_read_file(path_of("empty_0x3.npy"), CJRT_INVALID, &a);
  CHECK(!e && a.rank == 2 && a.dims[0] == 0 && a.dims[1] == 3 && a.nbytes == 0);
  cjrt_error_free(e);
  cjrt_array_free(&a);
  /* ml_dtypes: bfloat16 is '<V2' (read as bf16), float8_e5m2 '<f1', the other 1-byte types '<V1' */
  e = cjrt_npy_read_file(path_of("bf16.npy"), CJRT_INVALID, &a);
  CHECK(!e && a.dtype == CJRT_BF16 && ((uint16_t *)a.data)[1] == 0x4020); /* 2.5 */
  cjrt_error_free(e);
  cjrt_array_free(&a);
  e = cjrt_npy_read_file(path_of("f8e5m2.npy"), CJRT_INVALID, &a);
  CHECK(!e && a.dtype == CJRT_F8E5M2 && ((uint8_t *)a.data)[0] == 0x3c); /* 1.0 */
  cjrt_error_free(e);
  cjrt_array_free(&a);
  e = cjrt_npy_read_file(path_of("f8e4m3fn.npy"), CJRT_INVALID, &a);
  CHECK(e != NULL);
  if (e) CHECK_CONTAINS(cjrt_error_message(e), "give the type");
  cjrt_error_free(e);
  e = cjrt_npy_read_file(path_of("f8e4m3fn.npy"), CJRT_F8E4M3FN, &a);
  CHECK(!e && a.dtype == CJRT_F8E4M3FN && ((uint8_t *)a.data)[0] == 0x38); /* 1.0 */
  cjrt_error_free(e);
  cjrt_array_free(&a);
  e = cjrt_npy_read_file(path_of("f32_2x3.npy"), CJRT_S32, &a);
  CHECK(e != NULL);
  if (e) CHECK_CONTAINS(cjrt_error_message(e), "holds f32");
  cjrt_error_free(e);
  /* what numpy cannot hand us */
  const struct {
    const char *file, *msg;
  } bad[] = {{"strings.npy", "unsupported dtype '<U3'"},
             {"record.npy", "unsupported dtype [("},
             {"datetime.npy", "unsupported dtype '<M8[s]'"},
             {"truncated.npy", "truncated data"},
             {"not_npy.txt", "not a .npy file"},
             {"missing.npy", "cannot open"}};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    e = cjrt_npy_read_file(path_of(bad[i].file), CJRT_INVALID, &a);
    CHECK_MSG(e != NULL, "%s read", bad[i].file);
    if (e) CHECK_CONTAINS(cjrt_error_message(e), bad[i].msg);
    CHECK(a.data == NULL);
    cjrt_error_free(e);
  }
  /* garbage headers never crash */
  const char *headers[] = {"{'descr': '<f4', 'fortran_order': False, }",
                           "{'descr': '<f4', 'fortran_order': Maybe, 'shape': (1,), }",
                           "{'descr': '<f4', 'fortran_order': False, 'shape': (-1,), }",
                           "{'descr': '<f4', 'fortran_order': False, 'shape': (1,2", "{", "",
                           "{'descr': '<f4' 'fortran_order': False, 'shape': (), }"};
  for (size_t i = 0; i < sizeof headers / sizeof headers[0]; i++) {
    uint8_t buf[256] = "\x93NUMPY\x01\x00";
    size_t hl = strlen(headers[i]);
    buf[8] = (uint8_t)hl;
    buf[9] = 0;
    memcpy(buf + 10, headers[i], hl);
    e = cjrt_npy_read_mem(buf, 10 + hl + 8, CJRT_INVALID, "hdr", &a);
    CHECK_MSG(e != NULL, "header %zu accepted", i);
    cjrt_error_free(e);
    cjrt_array_free(&a);
  }
  /* writing to a file and back */
  char tmp[] = "/tmp/cjrt_test_npy_XXXXXX";
  int fd = mkstemp(tmp);
  CHECK(fd >= 0);
  if (fd >= 0) {
    cjrt_array w;
    CHECK(!cjrt_array_parse_typed("[[1, 2, 3], [4, 5, 6]]:u16", &w));
    CHECK(!cjrt_npy_write_file(tmp, &w, false));
    e = cjrt_npy_read_file(tmp, CJRT_INVALID, &a);
    CHECK(!e && a.dtype == CJRT_U16 && a.nbytes == 12 && !memcmp(a.data, w.data, 12));
    cjrt_error_free(e);
    cjrt_array_free(&a);
    cjrt_array_free(&w);
    remove(tmp);
  }
}

static void test_dlpack_types(void) {
  cjrt_dl_dtype t;
  uint64_t flags;
  CHECK(!cjrt_dtype_to_dlpack(CJRT_F32, -1, &t, &flags) && t.code == CJRT_DL_FLOAT && t.bits == 32 &&
        t.lanes == 1 && flags == 0);
  CHECK(!cjrt_dtype_to_dlpack(CJRT_PRED, -1, &t, &flags) && t.code == CJRT_DL_BOOL && t.bits == 8);
  CHECK(!cjrt_dtype_to_dlpack(CJRT_BF16, 0, &t, &flags) && t.code == CJRT_DL_BFLOAT);
  CHECK(!cjrt_dtype_to_dlpack(CJRT_C128, 0, &t, &flags) && t.code == CJRT_DL_COMPLEX && t.bits == 128);
  cjrt_error *e = cjrt_dtype_to_dlpack(CJRT_F8E4M3FN, -1, &t, &flags);
  CHECK(e && strstr(cjrt_error_message(e), "DLPack 1.1"));
  cjrt_error_free(e);
  CHECK(!cjrt_dtype_to_dlpack(CJRT_F8E4M3FN, 1, &t, &flags) && t.code == CJRT_DL_FLOAT8_E4M3FN);
  e = cjrt_dtype_to_dlpack(CJRT_S4, 0, &t, &flags);
  CHECK(e && strstr(cjrt_error_message(e), "one byte each"));
  cjrt_error_free(e);
  CHECK(!cjrt_dtype_to_dlpack(CJRT_S4, 1, &t, &flags) && t.code == CJRT_DL_INT && t.bits == 4 &&
        flags == CJRT_DLPACK_FLAG_IS_SUBBYTE_TYPE_PADDED);
  e = cjrt_dtype_to_dlpack(CJRT_TOKEN, 1, &t, &flags);
  CHECK(e != NULL);
  cjrt_error_free(e);
  /* every type that has a code comes back */
  for (int dt = 1; dt < CJRT_DTYPE_COUNT; dt++) {
    cjrt_error *te = cjrt_dtype_to_dlpack((cjrt_dtype)dt, 1, &t, &flags);
    if (te) {
      cjrt_error_free(te);
      continue;
    }
    cjrt_dtype back;
    e = cjrt_dtype_from_dlpack(t, flags, &back);
    CHECK_MSG(!e && (int)back == dt, "dlpack round trip of %s", cjrt_dtype_name((cjrt_dtype)dt));
    cjrt_error_free(e);
  }
  cjrt_dtype back;
  e = cjrt_dtype_from_dlpack((cjrt_dl_dtype){CJRT_DL_INT, 4, 1}, 0, &back);
  CHECK(e && strstr(cjrt_error_message(e), "packed"));
  cjrt_error_free(e);
  e = cjrt_dtype_from_dlpack((cjrt_dl_dtype){CJRT_DL_FLOAT, 32, 4}, 0, &back);
  CHECK(e && strstr(cjrt_error_message(e), "lanes"));
  cjrt_error_free(e);
}

static void test_values(void) {
  char t1[] = "cpu_device_count=4", t2[] = "name=hello", t3[] = "flag=true", t4[] = "ids=[1, 2,3]",
       t5[] = "frac=0.5", t6[] = "novalue";
  int64_t store[8];
  cjrt_value v;
  CHECK(!cjrt_value_parse(t1, store, 8, &v) && v.kind == CJRT_VALUE_INT64 && v.int64_value == 4 &&
        !strcmp(v.name, "cpu_device_count"));
  CHECK(!cjrt_value_parse(t2, store, 8, &v) && v.kind == CJRT_VALUE_STRING && v.size == 5);
  CHECK(!cjrt_value_parse(t3, store, 8, &v) && v.kind == CJRT_VALUE_BOOL && v.bool_value);
  CHECK(!cjrt_value_parse(t4, store, 8, &v) && v.kind == CJRT_VALUE_INT64_LIST && v.size == 3 &&
        v.int64_list[2] == 3);
  CHECK(!cjrt_value_parse(t5, store, 8, &v) && v.kind == CJRT_VALUE_FLOAT && v.float_value == 0.5f);
  cjrt_error *e = cjrt_value_parse(t6, store, 8, &v);
  CHECK(e != NULL);
  cjrt_error_free(e);
}

int main(int argc, char **argv) {
  if (argc > 1) data_dir = argv[1];
  test_dtypes();
  test_literals();
  test_format();
  test_npy();
  test_dlpack_types();
  test_values();
  return check_report("loader_arrays");
}
