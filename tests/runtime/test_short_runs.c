/* cjrt: where executions run (runtime/executable.c, CJ_INLINE_COST). A stand-in backend wraps
 * the CPU backend's execute and records, for each execution, the thread it ran on and whether
 * that thread's parallel loops could wake sleeping pool workers (cj_pool_set_waking). A short
 * program runs on the caller's thread with waking off and gives the right values; a program with
 * a loop runs on a task thread with waking on, until three quick executions in a row promote it
 * to a short program (a loop whose executions take long is never promoted); a short program
 * whose executions keep taking long (the stand-in sleeps 3 ms in them) moves to the task threads
 * and gets waking back, and is not promoted again. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../common/check.h"
#include "base/threadpool.h"
#include "runtime/backend.h"
#include "runtime/buffer.h"
#include "runtime/client.h"
#include "runtime/event.h"
#include "runtime/executable.h"

static cj_backend_vtable sr_vt;
static cj_backend sr = {&sr_vt};
static pthread_t ran_on;
static bool ran_waking;
static atomic_bool slow; /* the stand-in's executions take 3 ms */

static cj_status sr_execute(cj_backend *b, const cj_program *p, const cj_exec_args *args) {
  ran_on = pthread_self();
  ran_waking = cj_pool_set_waking(false);
  (void)cj_pool_set_waking(ran_waking);
  if (atomic_load(&slow)) {
    struct timespec d = {0, 3000000};
    nanosleep(&d, NULL);
  }
  return cj_backend_cpu()->vt->execute(b, p, args);
}

static const char short_prog[] =
    "func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {\n"
    "  %c = stablehlo.constant dense<1.5> : tensor<4xf32>\n"
    "  %y = stablehlo.multiply %x, %c : tensor<4xf32>\n"
    "  return %y : tensor<4xf32>\n"
    "}\n";

/* x * 1.5, three times over (a loop: never short, however cheap) */
static const char loop_prog[] =
    "func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {\n"
    "  %c0 = stablehlo.constant dense<0> : tensor<i32>\n"
    "  %r:2 = stablehlo.while(%i = %c0, %v = %x) : tensor<i32>, tensor<4xf32>\n"
    "  cond {\n"
    "    %c3 = stablehlo.constant dense<3> : tensor<i32>\n"
    "    %p = stablehlo.compare LT, %i, %c3 : (tensor<i32>, tensor<i32>) -> tensor<i1>\n"
    "    stablehlo.return %p : tensor<i1>\n"
    "  } do {\n"
    "    %c1 = stablehlo.constant dense<1> : tensor<i32>\n"
    "    %n = stablehlo.add %i, %c1 : tensor<i32>\n"
    "    %c = stablehlo.constant dense<1.5> : tensor<4xf32>\n"
    "    %w = stablehlo.multiply %v, %c : tensor<4xf32>\n"
    "    stablehlo.return %n, %w : tensor<i32>, tensor<4xf32>\n"
    "  }\n"
    "  return %r#1 : tensor<4xf32>\n"
    "}\n";

static cj_loaded *load(cj_client *c, const char *text, cj_executable **e) {
  cj_loaded *l = NULL;
  cj_status st = cj_executable_compile(&sr, c, text, strlen(text), NULL, 0, e);
  if (!st) st = cj_loaded_create(c, *e, NULL, 0, &l);
  CHECK_MSG(st == NULL, "compile: %s", cj_status_message(st));
  cj_status_free(st);
  return l;
}

/* One execution of l on x; checks the values (x * scale) and reports where it ran. */
static void run(cj_loaded *l, cj_buffer *x, const float *in, float scale, bool *on_caller,
                bool *waking) {
  cj_buffer *out = NULL;
  cj_event *done = NULL;
  ran_on = pthread_self();
  ran_waking = false;
  pthread_t self = pthread_self();
  cj_status st = cj_loaded_execute(l, NULL, &x, 1, 1, NULL, &out, &done);
  CHECK_MSG(st == NULL, "execute: %s", cj_status_message(st));
  cj_status_free(st);
  if (done) {
    st = cj_event_wait(done);
    CHECK_MSG(st == NULL, "execution: %s", cj_status_message(st));
    cj_status_free(st);
  }
  float got[4] = {0};
  cj_event *rd = NULL;
  st = out ? cj_buffer_to_host(out, got, NULL, &rd) : NULL;
  CHECK(st == NULL);
  cj_status_free(st);
  if (rd) {
    st = cj_event_wait(rd);
    CHECK(st == NULL);
    cj_status_free(st);
    for (int i = 0; i < 4; i++) CHECK(got[i] == in[i] * scale);
  }
  cj_event_release(rd);
  cj_event_release(done);
  cj_buffer_destroy(out);
  *on_caller = pthread_equal(ran_on, self);
  *waking = ran_waking;
}

int main(void) {
  sr_vt = *cj_backend_cpu()->vt;
  sr_vt.name = "short-runs-stand-in";
  sr_vt.execute = sr_execute;
  cj_client *c = NULL;
  cj_status st = cj_client_create(&sr, NULL, &c);
  CHECK_MSG(st == NULL, "%s", cj_status_message(st));
  cj_status_free(st);
  if (!c) return check_report("short_runs");
  float in[4] = {1, -2, 3.5f, 0};
  int64_t dims[1] = {4};
  cj_buffer *x = NULL;
  st = cj_buffer_from_host(c->devices[0]->memories[0], CJ_F32, dims, 1, in, NULL,
                           CJ_HOST_COPY_DURING_CALL, NULL, &x);
  CHECK(st == NULL && x);
  cj_status_free(st);
  cj_executable *es = NULL, *el = NULL;
  cj_loaded *ls = x ? load(c, short_prog, &es) : NULL;
  cj_loaded *ll = x ? load(c, loop_prog, &el) : NULL;
  bool on_caller = false, waking = true;
  if (ls) {
    for (int r = 0; r < 5; r++) {
      run(ls, x, in, 1.5f, &on_caller, &waking);
      CHECK_MSG(on_caller && !waking, "short program, run %d: caller %d, waking %d", r,
                on_caller, waking);
    }
  }
  if (ll) {
    /* a loop whose executions take long (3 ms in the stand-in) is never promoted */
    atomic_store(&slow, true);
    for (int r = 0; r < 5; r++) {
      run(ll, x, in, 1.5f * 1.5f * 1.5f, &on_caller, &waking);
      CHECK_MSG(!on_caller && waking, "slow program with a loop, run %d: caller %d, waking %d",
                r, on_caller, waking);
    }
    atomic_store(&slow, false);
    /* a quick one: three runs on a task thread, then it is short (CJ_PROMOTE_RUNS in a row:
     * a run preempted past CJ_PROMOTE_NS on a loaded machine starts the count again) */
    for (int r = 0; r < 3; r++) {
      run(ll, x, in, 1.5f * 1.5f * 1.5f, &on_caller, &waking);
      CHECK_MSG(!on_caller && waking, "program with a loop, run %d: caller %d, waking %d", r,
                on_caller, waking);
    }
    int tries = 0;
    for (on_caller = false; !on_caller && tries < 100; tries++)
      run(ll, x, in, 1.5f * 1.5f * 1.5f, &on_caller, &waking);
    CHECK_MSG(on_caller && !waking, "program with quick loops not promoted in %d runs", tries);
    for (int r = 0; r < 3; r++) {
      run(ll, x, in, 1.5f * 1.5f * 1.5f, &on_caller, &waking);
      CHECK_MSG(on_caller && !waking, "promoted program, run %d: caller %d, waking %d", r,
                on_caller, waking);
    }
    /* it turns slow: three strikes, and it is never promoted again */
    atomic_store(&slow, true);
    for (int r = 0; r < 3; r++) {
      run(ll, x, in, 1.5f * 1.5f * 1.5f, &on_caller, &waking);
      CHECK_MSG(on_caller && !waking, "promoted program, slow run %d: still short", r);
    }
    atomic_store(&slow, false);
    for (int r = 0; r < 5; r++) {
      run(ll, x, in, 1.5f * 1.5f * 1.5f, &on_caller, &waking);
      CHECK_MSG(!on_caller && waking, "demoted program, run %d: caller %d, waking %d", r,
                on_caller, waking);
    }
  }
  if (ls) {
    /* runs of 3 ms: after three in a row the program is no longer short (and is not promoted
     * back by quick runs) */
    atomic_store(&slow, true);
    for (int r = 0; r < 3; r++) {
      run(ls, x, in, 1.5f, &on_caller, &waking);
      CHECK_MSG(on_caller && !waking, "slow run %d: still short", r);
    }
    atomic_store(&slow, false);
    for (int r = 0; r < 5; r++) {
      run(ls, x, in, 1.5f, &on_caller, &waking);
      CHECK_MSG(!on_caller && waking, "after slow runs, run %d: caller %d, waking %d", r,
                on_caller, waking);
    }
  }
  cj_loaded_destroy(ls);
  cj_loaded_destroy(ll);
  cj_executable_release(es);
  cj_executable_release(el);
  cj_buffer_destroy(x);
  cj_client_release(c);
  return check_report("short_runs");
}
