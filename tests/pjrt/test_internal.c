/* cjrt: tests of the PJRT surface and runtime pieces that a framework cannot reach through the
 * C API alone: copy-to-device streams (made by executions' receive callbacks), the error
 * constructor handed to callbacks, strided copies against a reference, and events under
 * concurrent registration. Links the src/pjrt/ files and the core directly.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "../common/check.h"
#include "pjrt/internal.h"
#include "runtime/buffer.h"
#include "runtime/event.h"
#include "runtime/transfer.h"

const PJRT_Api *GetPjrtApi(void);
static const PJRT_Api *api;

#define ARGS(T, v)         \
  T##_Args v;              \
  memset(&v, 0, sizeof v); \
  v.struct_size = T##_Args_STRUCT_SIZE

static PJRT_Error_Code code_of(PJRT_Error *e) { return e ? e->vtable->get_code(e) : 0; }
static const char *msg_of(PJRT_Error *e) {
  const char *m = "";
  size_t n;
  if (e) e->vtable->message(e, &m, &n);
  return m;
}
static void drop(PJRT_Error *e) {
  if (e) e->vtable->destroy(e);
}

static int chunk_frees;
static void chunk_deleter(void *data, void *arg) {
  chunk_frees++;
  CHECK(arg == &chunk_frees);
  free(data);
}

static PJRT_Error *add_chunk(PJRT_CopyToDeviceStream *s, const void *src, size_t n,
                             PJRT_Event **out) {
  PJRT_Chunk ch;
  ch.data = malloc(n ? n : 1);
  memcpy(ch.data, src, n);
  ch.size = n;
  ch.deleter = chunk_deleter;
  ch.deleter_arg = &chunk_frees;
  ARGS(PJRT_CopyToDeviceStream_AddChunk, a);
  a.stream = s;
  a.chunk = &ch;
  PJRT_Error *e = api->PJRT_CopyToDeviceStream_AddChunk(&a);
  *out = a.transfer_complete;
  return e;
}

static PJRT_Error *wait_free(PJRT_Event *ev) {
  ARGS(PJRT_Event_Await, a);
  a.event = ev;
  PJRT_Error *e = api->PJRT_Event_Await(&a);
  ARGS(PJRT_Event_Destroy, d);
  d.event = ev;
  drop(api->PJRT_Event_Destroy(&d));
  return e;
}

static void test_streams(void) {
  ARGS(PJRT_Client_Create, cc);
  PJRT_NamedValue opt = {.struct_size = PJRT_NamedValue_STRUCT_SIZE,
                         .name = "cpu_device_count",
                         .name_size = 16,
                         .type = PJRT_NamedValue_kInt64,
                         .int64_value = 1,
                         .value_size = 1};
  cc.create_options = &opt;
  cc.num_options = 1;
  CHECK(api->PJRT_Client_Create(&cc) == NULL);
  cj_client *c = (cj_client *)cc.client;
  int64_t dims[1] = {6};
  cj_buffer *b;
  CHECK(cj_buffer_create_pending(c->devices[0]->memories[0], CJ_S16, dims, 1, &b) == NULL);
  cj_stream *s;
  CHECK(cj_stream_create(b, 4, &s) == NULL);
  PJRT_CopyToDeviceStream *ps = (PJRT_CopyToDeviceStream *)s;

  ARGS(PJRT_CopyToDeviceStream_TotalBytes, tb);
  tb.stream = ps;
  CHECK(api->PJRT_CopyToDeviceStream_TotalBytes(&tb) == NULL);
  CHECK_EQ_INT(tb.total_bytes, 12);
  ARGS(PJRT_CopyToDeviceStream_GranuleSize, gs);
  gs.stream = ps;
  CHECK(api->PJRT_CopyToDeviceStream_GranuleSize(&gs) == NULL);
  CHECK_EQ_INT(gs.granule_size_in_bytes, 4);

  int16_t data[6] = {1, -2, 3, -4, 5, -6};
  chunk_frees = 0;
  PJRT_Event *ev;
  /* Not a multiple of the granule: the event carries the problem, the call succeeds. */
  CHECK(add_chunk(ps, data, 6, &ev) == NULL);
  PJRT_Error *e = wait_free(ev);
  CHECK_EQ_INT(code_of(e), PJRT_Error_Code_INVALID_ARGUMENT);
  CHECK_CONTAINS(msg_of(e), "granule");
  drop(e);
  CHECK(add_chunk(ps, data, 8, &ev) == NULL);
  CHECK(wait_free(ev) == NULL);
  ARGS(PJRT_CopyToDeviceStream_CurrentBytes, cb);
  cb.stream = ps;
  CHECK(api->PJRT_CopyToDeviceStream_CurrentBytes(&cb) == NULL);
  CHECK_EQ_INT(cb.current_bytes, 8);
  /* Too many bytes. */
  int16_t big[8] = {0};
  CHECK(add_chunk(ps, big, 8, &ev) == NULL);
  e = wait_free(ev);
  CHECK_CONTAINS(msg_of(e), "exceeds");
  drop(e);
  cj_event *ready;
  CHECK(cj_buffer_ready_event(b, &ready) == NULL);
  CHECK(!cj_event_is_ready(ready));
  CHECK(add_chunk(ps, data + 4, 4, &ev) == NULL);
  CHECK(wait_free(ev) == NULL);
  CHECK(cj_event_is_ready(ready));
  cj_status st = cj_event_wait(ready);
  CHECK(st == NULL);
  cj_event_release(ready);
  int16_t got[6];
  cj_event *done;
  CHECK(cj_buffer_to_host(b, got, NULL, &done) == NULL);
  CHECK(cj_event_wait(done) == NULL);
  cj_event_release(done);
  CHECK(memcmp(got, data, sizeof got) == 0);
  /* Complete: more chunks fail through their event. */
  CHECK(add_chunk(ps, data, 4, &ev) == NULL);
  e = wait_free(ev);
  CHECK_CONTAINS(msg_of(e), "already complete");
  drop(e);
  CHECK_EQ_INT(chunk_frees, 5); /* every chunk given back, whatever happened to it */
  /* Misuse. */
  ARGS(PJRT_CopyToDeviceStream_AddChunk, bad);
  bad.stream = ps;
  e = api->PJRT_CopyToDeviceStream_AddChunk(&bad);
  CHECK_EQ_INT(code_of(e), PJRT_Error_Code_INVALID_ARGUMENT);
  CHECK_CONTAINS(msg_of(e), "chunk is NULL");
  drop(e);
  ARGS(PJRT_CopyToDeviceStream_Destroy, sd);
  sd.stream = ps;
  CHECK(api->PJRT_CopyToDeviceStream_Destroy(&sd) == NULL);
  cj_buffer_destroy(b);

  /* A stream destroyed before it is complete fails its buffer. */
  CHECK(cj_buffer_create_pending(c->devices[0]->memories[0], CJ_S16, dims, 1, &b) == NULL);
  CHECK(cj_stream_create(b, 2, &s) == NULL);
  CHECK(add_chunk((PJRT_CopyToDeviceStream *)s, data, 2, &ev) == NULL);
  CHECK(wait_free(ev) == NULL);
  sd.stream = (PJRT_CopyToDeviceStream *)s;
  CHECK(api->PJRT_CopyToDeviceStream_Destroy(&sd) == NULL);
  CHECK(cj_buffer_ready_event(b, &ready) == NULL);
  st = cj_event_wait(ready);
  CHECK_EQ_INT(cj_status_code(st), CJ_CANCELLED);
  CHECK_CONTAINS(cj_status_message(st), "after 2 of 12 bytes");
  cj_status_free(st);
  cj_event_release(ready);
  cj_buffer_destroy(b);

  ARGS(PJRT_Client_Destroy, cd);
  cd.client = cc.client;
  CHECK(api->PJRT_Client_Destroy(&cd) == NULL);
}

static void test_callback_error(void) {
  char msg[] = "key not found";
  PJRT_Error *e = cjp_callback_error(PJRT_Error_Code_NOT_FOUND, msg, 3);
  msg[0] = 'X'; /* the error keeps its own copy */
  CHECK_EQ_INT(code_of(e), PJRT_Error_Code_NOT_FOUND);
  CHECK_EQ_STR(msg_of(e), "key");
  cj_status st = cjp_error_take(e);
  CHECK_EQ_INT(cj_status_code(st), CJ_NOT_FOUND);
  cj_status_free(st);
  e = cjp_callback_error(PJRT_Error_Code_OK, NULL, 5);
  CHECK_EQ_INT(code_of(e), PJRT_Error_Code_UNKNOWN); /* "OK" is not an error */
  drop(e);
  e = cjp_callback_error((PJRT_Error_Code)99, "x", 1);
  CHECK_EQ_INT(code_of(e), PJRT_Error_Code_UNKNOWN);
  drop(e);
}

/* Messages carry no location unless CJRT_ERROR_LOCATIONS asks; then the chain is appended. */
static void test_error_locations(void) {
  unsetenv("CJRT_ERROR_LOCATIONS");
  PJRT_Error *e = cjp_errorf(CJ_INVALID_ARGUMENT, "plain %d", 1);
  CHECK_EQ_STR(msg_of(e), "plain 1");
  drop(e);
  setenv("CJRT_ERROR_LOCATIONS", "1", 1);
  int line = __LINE__ + 1;
  e = cjp_error_in("PJRT_Thing", cj_invalid("inner"));
  cj_status copy = cjp_error_status(e); /* keeps the locations */
  CHECK_EQ_STR(cj_status_file(copy), "src/pjrt/error.c");
  CHECK_EQ_INT(cj_status_line(cj_status_cause(copy)), line);
  char want[256];
  snprintf(want, sizeof want,
           "PJRT_Thing: inner [at src/pjrt/error.c:%d (cjp_error_in) <- %s:%d "
           "(test_error_locations)]",
           cj_status_line(copy), __FILE__, line);
  cj_status_free(copy);
  CHECK_EQ_STR(msg_of(e), want);
  CHECK_EQ_INT(code_of(e), PJRT_Error_Code_INVALID_ARGUMENT);
  drop(e);
  unsetenv("CJRT_ERROR_LOCATIONS");
}

/* Reference strided copy, one element at a time. */
static void naive_copy(char *dst, const int64_t *ds, const char *src, const int64_t *ss,
                       const int64_t *dims, int rank, size_t elem) {
  int64_t n = 1;
  for (int i = 0; i < rank; i++) n *= dims[i];
  for (int64_t lin = 0; lin < n; lin++) {
    int64_t rem = lin, so = 0, dof = 0;
    for (int i = rank - 1; i >= 0; i--) {
      int64_t idx = rem % dims[i];
      rem /= dims[i];
      so += idx * ss[i];
      dof += idx * ds[i];
    }
    memcpy(dst + dof, src + so, elem);
  }
}

static void test_strided_copy(void) {
  unsigned seed = 12345;
  int cases = 0;
  for (int iter = 0; iter < 400; iter++) {
    int rank = (int)(seed % 5);
    seed = seed * 1103515245u + 12345u;
    size_t elem = (size_t)1 << (seed % 4);
    seed = seed * 1103515245u + 12345u;
    int64_t dims[4];
    int64_t total = 1;
    for (int i = 0; i < rank; i++) {
      dims[i] = 1 + (int64_t)(seed % 4);
      seed = seed * 1103515245u + 12345u;
      total *= dims[i];
    }
    /* Source: a random permutation of the dims, optionally reversed, with padding. */
    int perm[4] = {0, 1, 2, 3};
    for (int i = rank - 1; i > 0; i--) {
      int j = (int)(seed % (unsigned)(i + 1));
      seed = seed * 1103515245u + 12345u;
      int t = perm[i];
      perm[i] = perm[j];
      perm[j] = t;
    }
    int64_t ss[4], ds[4];
    int64_t s = (int64_t)elem + (int64_t)(seed % 2) * (int64_t)elem;
    seed = seed * 1103515245u + 12345u;
    for (int k = rank - 1; k >= 0; k--) {
      ss[perm[k]] = s;
      s *= dims[perm[k]];
    }
    size_t span = (size_t)(s > 0 ? s : 1) + elem;
    char *src = malloc(span), *a = malloc((size_t)total * elem + 1), *b = malloc((size_t)total * elem + 1);
    for (size_t i = 0; i < span; i++) src[i] = (char)(i * 7 + iter);
    const char *base = src;
    if (rank && seed % 2) { /* reverse dim 0 */
      base = src + (dims[0] - 1) * ss[0];
      ss[0] = -ss[0];
    }
    seed = seed * 1103515245u + 12345u;
    cj_dense_strides(dims, rank, elem, ds);
    memset(a, 0, (size_t)total * elem + 1);
    memset(b, 0, (size_t)total * elem + 1);
    cj_copy_strided(a, ds, base, ss, dims, rank, elem);
    naive_copy(b, ds, base, ss, dims, rank, elem);
    CHECK_MSG(memcmp(a, b, (size_t)total * elem + 1) == 0, "strided copy case %d differs", iter);
    free(src);
    free(a);
    free(b);
    cases++;
  }
  CHECK_EQ_INT(cases, 400);
}

/* Events: many threads register while another sets; each callback runs exactly once. */
static atomic_int cb_calls;
static void count_cb(void *ctx, cj_status st) {
  (void)ctx;
  (void)st;
  atomic_fetch_add(&cb_calls, 1);
}
typedef struct reg_arg {
  cj_event *e;
} reg_arg;
static void *registrar(void *p) {
  reg_arg *r = p;
  for (int i = 0; i < 500; i++) cj_status_free(cj_event_on_ready(r->e, count_cb, NULL));
  return NULL;
}

static void test_event_races(void) {
  for (int round = 0; round < 5; round++) {
    atomic_store(&cb_calls, 0);
    cj_event *e = cj_event_create(true);
    reg_arg ra = {e};
    pthread_t t[4];
    for (int i = 0; i < 4; i++) pthread_create(&t[i], NULL, registrar, &ra);
    CHECK(cj_event_set(e, NULL) == NULL);
    for (int i = 0; i < 4; i++) pthread_join(t[i], NULL);
    CHECK_EQ_INT(atomic_load(&cb_calls), 2000);
    cj_event_release(e);
  }
}

int main(void) {
  api = GetPjrtApi();
  test_streams();
  test_callback_error();
  test_error_locations();
  test_strided_copy();
  test_event_races();
  return check_report("pjrt_internal");
}
