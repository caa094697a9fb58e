/* Tests for src/frontend/compile_options.c: real protos serialized by jax 0.10.2 (in data/),
 * hand-built edge cases, error paths, a write/read round trip, and random corruption (never a
 * crash: either parsed or INVALID_ARGUMENT). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/check.h"
#include "../common/files.h"
#include "frontend/compile_options.h"

static void expect_error(const void *d, size_t n, const char *needle) {
  cj_compile_options_storage s;
  cj_status st = cj_compile_options_read(d, n, &s);
  CHECK_MSG(cj_status_code(st) == CJ_INVALID_ARGUMENT, "expected INVALID_ARGUMENT for '%s', got %s",
            needle, cj_status_message(st));
  if (st) CHECK_CONTAINS(cj_status_message(st), needle);
  CHECK(s.devices == NULL && s.opts.num_replicas == 1);
  cj_status_free(st);
}

static uint64_t rng = 88172645463325252ull;
static uint64_t next_rand(void) {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return rng;
}

/* An env_option_overrides entry (CompileOptionsProto field 7) named `key` whose
 * OptionOverrideProto sets field `vf` (1 string, 2 bool, 3 int, 4 double) to sval / ival. */
static size_t override_entry(unsigned char *b, const char *key, int vf, const char *sval,
                             uint64_t ival) {
  unsigned char val[128], ent[256];
  size_t nv = 0, ne = 0, kl = strlen(key);
  if (vf == 1) {
    val[nv++] = 0x0a;
    val[nv++] = (unsigned char)strlen(sval);
    memcpy(val + nv, sval, strlen(sval));
    nv += strlen(sval);
  } else if (vf == 4) {
    val[nv++] = 0x21;
    memcpy(val + nv, &ival, 8);
    nv += 8;
  } else {
    val[nv++] = (unsigned char)(vf << 3);
    val[nv++] = (unsigned char)ival;
  }
  ent[ne++] = 0x0a;
  ent[ne++] = (unsigned char)kl;
  memcpy(ent + ne, key, kl);
  ne += kl;
  ent[ne++] = 0x12;
  ent[ne++] = (unsigned char)nv;
  memcpy(ent + ne, val, nv);
  ne += nv;
  size_t n = 0;
  b[n++] = 0x3a;
  b[n++] = (unsigned char)ne;
  memcpy(b + n, ent, ne);
  return n + ne;
}

static void expect_override_ok(const char *key, int vf, const char *sval, uint64_t ival) {
  unsigned char b[300];
  size_t n = override_entry(b, key, vf, sval, ival);
  cj_compile_options_storage s;
  cj_status st = cj_compile_options_read(b, n, &s);
  CHECK_MSG(st == NULL, "%s: %s", key, cj_status_message(st));
  if (!st) cj_compile_options_storage_free(&s);
  cj_status_free(st);
}

/* XLA refuses option overrides that name no DebugOptions field or carry the wrong type. */
static void test_overrides(void) {
  unsigned char b[300];
  expect_override_ok("xla_cpu_enable_fast_math", 2, NULL, 1);
  expect_override_ok("xla_cpu_enable_fast_math", 1, "False", 0);
  expect_override_ok("xla_cpu_parallel_codegen_split_count", 3, NULL, 4);
  expect_override_ok("xla_cpu_parallel_codegen_split_count", 1, "-12", 0);
  expect_override_ok("xla_dump_to", 1, "/tmp/x", 0);
  expect_override_ok("xla_cpu_max_isa", 1, "AVX2", 0);
  size_t n = override_entry(b, "xla_nonexistent_option", 2, NULL, 1);
  expect_error(b, n, "No such compile option: 'xla_nonexistent_option'");
  n = override_entry(b, "xla_cpu_enable_fast_math", 1, "notabool", 0);
  expect_error(b, n, "option xla_cpu_enable_fast_math: 'notabool' is not a valid bool value");
  n = override_entry(b, "xla_cpu_parallel_codegen_split_count", 1, "4x", 0);
  expect_error(b, n, "'4x' is not a valid integer value");
  n = override_entry(b, "xla_dump_to", 2, NULL, 1);
  expect_error(b, n, "option xla_dump_to takes a string value, given a bool");
  n = override_entry(b, "xla_cpu_enable_fast_math", 3, NULL, 1);
  expect_error(b, n, "takes a bool value, given an integer");
  /* a value message that sets nothing */
  static const unsigned char empty_value[] = {0x3a, 0x0b, 0x0a, 0x07, 'x', 'l', 'a', '_',
                                              'd', 'u', 'm', 0x12, 0x00};
  expect_error(empty_value, sizeof empty_value, "No such compile option: 'xla_dum'");
  static const unsigned char no_value[] = {0x3a, 0x0f, 0x0a, 0x0b, 'x', 'l', 'a', '_', 'd', 'u',
                                           'm', 'p', '_', 't', 'o', 0x12, 0x00};
  expect_error(no_value, sizeof no_value, "option xla_dump_to takes a string value, given no value");
  static const unsigned char no_key[] = {0x3a, 0x02, 0x12, 0x00};
  expect_error(no_key, sizeof no_key, "without a name");
}

/* argument_layouts = 1: repeated ShapeProto{element_type = 2, dimensions = 3, layout = 5} */
static void test_argument_layouts(void) {
  static const unsigned char two[] = {
      0x0a, 0x0a, 0x10, 0x0b, 0x1a, 0x02, 0x02, 0x03, 0x2a, 0x02, 0x0a, 0x00, /* f32[2,3] */
      0x0a, 0x06, 0x10, 0x10, 0x18, 0x04, 0x18, 0x05,                         /* bf16[4,5] */
      0x0a, 0x02, 0x10, 0x01};                                                /* pred[] */
  cj_compile_options_storage s;
  cj_status st = cj_compile_options_read(two, sizeof two, &s);
  CHECK_MSG(st == NULL, "%s", cj_status_message(st));
  if (!st) {
    CHECK_EQ_INT(s.nargs, 3);
    CHECK(s.args[0].dtype == CJ_F32 && s.args[0].rank == 2 && s.args[0].dims[0] == 2 &&
          s.args[0].dims[1] == 3);
    CHECK(s.args[1].dtype == CJ_BF16 && s.args[1].rank == 2 && s.args[1].dims[0] == 4 &&
          s.args[1].dims[1] == 5);
    CHECK(s.args[2].dtype == CJ_PRED && s.args[2].rank == 0);
    cj_compile_options_storage_free(&s);
  }
  cj_status_free(st);
  CHECK(cj_compile_options_read(NULL, 0, &s) == NULL);
  CHECK_EQ_INT(s.nargs, -1); /* absent is not "no arguments" */
  cj_compile_options_storage_free(&s);
  static const unsigned char tuple[] = {0x0a, 0x04, 0x10, 0x0d, 0x22, 0x00};
  expect_error(tuple, sizeof tuple, "tuple argument_layouts");
  static const unsigned char opaque[] = {0x0a, 0x02, 0x10, 0x0e};
  expect_error(opaque, sizeof opaque, "element type 14");
  static const unsigned char neg[] = {0x0a, 0x0d, 0x10, 0x0b, 0x18, 0xff, 0xff, 0xff, 0xff, 0xff,
                                      0xff, 0xff, 0xff, 0xff, 0x01};
  expect_error(neg, sizeof neg, "negative ShapeProto dimension");
}

int main(int argc, char **argv) {
  const char *dir = argc > 1 ? argv[1] : "data";
  char path[1024];
  cj_compile_options_storage s;

  /* empty = defaults */
  CHECK(cj_compile_options_read(NULL, 0, &s) == NULL);
  CHECK_EQ_INT(s.opts.num_replicas, 1);
  CHECK_EQ_INT(s.opts.num_partitions, 1);
  CHECK(s.opts.device_assignment == NULL);
  cj_compile_options_storage_free(&s);

  /* jax: 1 replica x 4 partitions on devices 5..8, spmd + shardy */
  snprintf(path, sizeof path, "%s/compile_options_1r4p_spmd_shardy.pb", dir);
  size_t n1;
  unsigned char *p1 = (unsigned char *)tc_read_file(path, &n1);
  CHECK_MSG(p1 != NULL, "cannot read %s", path);
  if (p1) {
    cj_status st = cj_compile_options_read(p1, n1, &s);
    CHECK_MSG(st == NULL, "%s", cj_status_message(st));
    cj_status_free(st);
    CHECK_EQ_INT(s.opts.num_replicas, 1);
    CHECK_EQ_INT(s.opts.num_partitions, 4);
    CHECK(s.opts.use_spmd_partitioning);
    CHECK(s.opts.use_shardy_partitioner);
    CHECK(s.opts.device_assignment != NULL);
    if (s.opts.device_assignment)
      for (int i = 0; i < 4; i++) CHECK_EQ_INT(s.opts.device_assignment[i], 5 + i);
    cj_compile_options_storage_free(&s);
  }
  /* jax: 2 replicas x 3 partitions, assignment [[3,4,5],[9,10,11]] (replica-major) */
  snprintf(path, sizeof path, "%s/compile_options_2r3p.pb", dir);
  size_t n2;
  unsigned char *p2 = (unsigned char *)tc_read_file(path, &n2);
  CHECK(p2 != NULL);
  if (p2) {
    cj_status st = cj_compile_options_read(p2, n2, &s);
    CHECK_MSG(st == NULL, "%s", cj_status_message(st));
    cj_status_free(st);
    CHECK_EQ_INT(s.opts.num_replicas, 2);
    CHECK_EQ_INT(s.opts.num_partitions, 3);
    CHECK(s.opts.use_spmd_partitioning); /* jax sets it whenever it builds options */
    int64_t want[6] = {3, 4, 5, 9, 10, 11};
    if (s.opts.device_assignment)
      for (int i = 0; i < 6; i++) CHECK_EQ_INT(s.opts.device_assignment[i], want[i]);
    /* write back and read again */
    void *w;
    size_t wn;
    CHECK(cj_compile_options_write(&s.opts, &w, &wn) == NULL);
    cj_compile_options_storage s2;
    CHECK(cj_compile_options_read(w, wn, &s2) == NULL);
    CHECK_EQ_INT(s2.opts.num_replicas, 2);
    CHECK_EQ_INT(s2.opts.num_partitions, 3);
    if (s2.opts.device_assignment)
      for (int i = 0; i < 6; i++) CHECK_EQ_INT(s2.opts.device_assignment[i], want[i]);
    else
      CHECK(!"round trip lost the device assignment");
    /* copy */
    cj_compile_options_storage s3;
    CHECK(cj_compile_options_copy(&s2.opts, &s3) == NULL);
    CHECK(s3.opts.device_assignment && s3.opts.device_assignment != s2.opts.device_assignment &&
          s3.opts.device_assignment[5] == 11);
    cj_compile_options_storage_free(&s3);
    cj_compile_options_storage_free(&s2);
    free(w);
    cj_compile_options_storage_free(&s);
  }

  /* hand-built: unknown fields of every wire type are skipped, incl. a group */
  {
    const unsigned char b[] = {
        0x60, 0x96, 0x01,                   /* field 12 varint 150 */
        0x11, 1, 2, 3, 4, 5, 6, 7, 8,       /* field 2 fixed64 */
        0x2d, 1, 2, 3, 4,                   /* field 5 fixed32 */
        0x33, 0x08, 0x01, 0x34,             /* field 6 group { field 1 varint } end */
        0x1a, 0x04, 0x20, 0x03, 0x28, 0x02, /* build options: replicas 3, partitions 2 */
    };
    cj_status st = cj_compile_options_read(b, sizeof b, &s);
    CHECK_MSG(st == NULL, "%s", cj_status_message(st));
    cj_status_free(st);
    CHECK_EQ_INT(s.opts.num_replicas, 3);
    CHECK_EQ_INT(s.opts.num_partitions, 2);
    cj_compile_options_storage_free(&s);
  }
  /* unpacked replica_device_ids */
  {
    const unsigned char b[] = {0x1a, 0x0c, 0x28, 0x02, 0x4a, 0x08, 0x1a, 0x02, 0x08, 0x07,
                               0x1a, 0x02, 0x08, 0x09};
    cj_status st = cj_compile_options_read(b, sizeof b, &s);
    CHECK_MSG(st == NULL, "%s", cj_status_message(st));
    cj_status_free(st);
    CHECK(s.opts.device_assignment && s.opts.device_assignment[0] == 7 &&
          s.opts.device_assignment[1] == 9);
    cj_compile_options_storage_free(&s);
  }

  /* errors */
  const unsigned char trunc_varint[] = {0x60, 0x80};
  expect_error(trunc_varint, sizeof trunc_varint, "truncated varint");
  const unsigned char bad_len[] = {0x1a, 0x10, 0x20};
  expect_error(bad_len, sizeof bad_len, "length runs past the end");
  const unsigned char bad_wt[] = {0x66, 0x00};
  expect_error(bad_wt, sizeof bad_wt, "invalid wire type");
  const unsigned char field0[] = {0x00, 0x00};
  expect_error(field0, sizeof field0, "invalid field number");
  const unsigned char wrong_wt[] = {0x1a, 0x02, 0x25, 0x00}; /* num_replicas as fixed32 */
  expect_error(wrong_wt, sizeof wrong_wt, "num_replicas");
  const unsigned char unterminated[] = {0x33, 0x08, 0x01};
  expect_error(unterminated, sizeof unterminated, "unterminated group");
  const unsigned char neg[] = {0x1a, 0x0b, 0x20, 0xff, 0xff, 0xff, 0xff, 0xff,
                               0xff, 0xff, 0xff, 0xff, 0x01};
  expect_error(neg, sizeof neg, "num_replicas");
  /* 2 partitions but the assignment lists 1 computation */
  const unsigned char mismatch[] = {0x1a, 0x08, 0x28, 0x02, 0x4a, 0x04, 0x1a, 0x02, 0x08, 0x07};
  expect_error(mismatch, sizeof mismatch, "device_assignment");
  const char *garbage = "this is not a protobuf at all";
  cj_status gst = cj_compile_options_read(garbage, strlen(garbage), &s);
  CHECK(cj_status_code(gst) == CJ_INVALID_ARGUMENT);
  cj_status_free(gst);

  /* random corruption of a real proto: never crashes or leaks; either result is fine */
  if (p1) {
    unsigned char *m = malloc(n1);
    int ok = 0, bad = 0, other = 0;
    for (int iter = 0; iter < 20000; iter++) {
      memcpy(m, p1, n1);
      int nflip = 1 + (int)(next_rand() % 4);
      for (int k = 0; k < nflip; k++) m[next_rand() % n1] = (unsigned char)next_rand();
      size_t len = (iter % 3 == 0) ? (size_t)(next_rand() % (n1 + 1)) : n1;
      cj_status st = cj_compile_options_read(m, len, &s);
      if (!st) {
        ok++;
        CHECK(s.opts.num_replicas >= 1 && s.opts.num_partitions >= 1);
        cj_compile_options_storage_free(&s);
      } else if (cj_status_code(st) == CJ_INVALID_ARGUMENT) {
        bad++;
      } else {
        other++;
      }
      cj_status_free(st);
    }
    CHECK_EQ_INT(other, 0);
    CHECK(ok > 0 && bad > 0);
    printf("corruption: %d parsed, %d rejected\n", ok, bad);
    free(m);
  }
  free(p1);
  free(p2);
  test_overrides();
  test_argument_layouts();
  return check_report("compile_options");
}
