/* cjrt: where executions run (runtime/executable.c, CJ_INLINE_COST). A stand-in backend wraps
 * the CPU backend's execute and records, for each execution, the thread it ran on and whether
 * that thread's parallel loops could wake sleeping pool workers (cj_pool_set_waking) when it
 * started and when it ended. A short program runs on the caller's thread with waking off and
 * gives the right values; so does a program with a cheap loop, for 0, 1 and 3 steps, and a
 * failing check inside its loop fails the execution; a loop that runs long (over 2 ms) turns
 * waking back on for the rest of its execution; a short program whose executions keep taking
 * long (the stand-in sleeps 3 ms in them) moves to the task threads and gets waking back. */
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
static bool ran_waking, ran_waking_after;
static atomic_bool slow; /* the stand-in's executions take 3 ms */

static cj_status sr_execute(cj_backend *b, const cj_program *p, const cj_exec_args *args) {
  ran_on = pthread_self();
  ran_waking = cj_pool_set_waking(false);
  (void)cj_pool_set_waking(ran_waking);
  if (atomic_load(&slow)) {
    struct timespec d = {0, 3000000};
    nanosleep(&d, NULL);
  }
  cj_status st = cj_backend_cpu()->vt->execute(b, p, args);
  ran_waking_after = cj_pool_set_waking(false);
  (void)cj_pool_set_waking(ran_waking_after);
  return st;
}

static const char short_prog[] =
    "func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {\n"
    "  %c = stablehlo.constant dense<1.5> : tensor<4xf32>\n"
    "  %y = stablehlo.multiply %x, %c : tensor<4xf32>\n"
    "  return %y : tensor<4xf32>\n"
    "}\n";

/* x * 1.5, n times over (a loop, short: its body is cheap) */
static const char loop_prog[] =
    "func.func @main(%x: tensor<4xf32>, %n: tensor<i32>) -> tensor<4xf32> {\n"
    "  %c0 = stablehlo.constant dense<0> : tensor<i32>\n"
    "  %r:3 = stablehlo.while(%i = %c0, %v = %x, %m = %n) : tensor<i32>, tensor<4xf32>, tensor<i32>\n"
    "  cond {\n"
    "    %p = stablehlo.compare LT, %i, %m : (tensor<i32>, tensor<i32>) -> tensor<i1>\n"
    "    stablehlo.return %p : tensor<i1>\n"
    "  } do {\n"
    "    %c1 = stablehlo.constant dense<1> : tensor<i32>\n"
    "    %k = stablehlo.add %i, %c1 : tensor<i32>\n"
    "    %c = stablehlo.constant dense<1.5> : tensor<4xf32>\n"
    "    %w = stablehlo.multiply %v, %c : tensor<4xf32>\n"
    "    stablehlo.return %k, %w, %m : tensor<i32>, tensor<4xf32>, tensor<i32>\n"
    "  }\n"
    "  return %r#1 : tensor<4xf32>\n"
    "}\n";

/* the same loop with a check that fails in its step i = 2: min(i, 2) == min(i, 1) */
static const char loop_check_prog[] =
    "func.func @main(%x: tensor<4xf32>, %n: tensor<i32>) -> tensor<4xf32> {\n"
    "  %c0 = stablehlo.constant dense<0> : tensor<i32>\n"
    "  %r:3 = stablehlo.while(%i = %c0, %v = %x, %m = %n) : tensor<i32>, tensor<4xf32>, tensor<i32>\n"
    "  cond {\n"
    "    %p = stablehlo.compare LT, %i, %m : (tensor<i32>, tensor<i32>) -> tensor<i1>\n"
    "    stablehlo.return %p : tensor<i1>\n"
    "  } do {\n"
    "    %c1 = stablehlo.constant dense<1> : tensor<i32>\n"
    "    %c2 = stablehlo.constant dense<2> : tensor<i32>\n"
    "    %a = stablehlo.minimum %i, %c2 : tensor<i32>\n"
    "    %b = stablehlo.minimum %i, %c1 : tensor<i32>\n"
    "    stablehlo.custom_call @check.expect_eq(%a, %b) {has_side_effect = true} : (tensor<i32>, tensor<i32>) -> ()\n"
    "    %k = stablehlo.add %i, %c1 : tensor<i32>\n"
    "    %c = stablehlo.constant dense<1.5> : tensor<4xf32>\n"
    "    %w = stablehlo.multiply %v, %c : tensor<4xf32>\n"
    "    stablehlo.return %k, %w, %m : tensor<i32>, tensor<4xf32>, tensor<i32>\n"
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

/* One execution of l on args; checks the values against want (or, with `fails`, that the
 * execution fails with a message containing it) and reports where it ran. */
static void run_args(cj_loaded *l, cj_buffer **args, int nargs, const float *want, const char *fails,
                     bool *on_caller, bool *waking) {
  cj_buffer *out = NULL;
  cj_event *done = NULL;
  ran_on = pthread_self();
  ran_waking = ran_waking_after = false;
  pthread_t self = pthread_self();
  cj_status st = cj_loaded_execute(l, NULL, args, 1, (size_t)nargs, NULL, &out, &done);
  if (!st && done) st = cj_event_wait(done);
  if (fails) {
    CHECK_MSG(st != NULL && strstr(cj_status_message(st), fails),
              "expected an error naming %s, got: %s", fails, st ? cj_status_message(st) : "success");
  } else {
    CHECK_MSG(st == NULL, "execution: %s", cj_status_message(st));
  }
  cj_status_free(st);
  float got[4] = {0};
  cj_event *rd = NULL;
  st = out && !fails ? cj_buffer_to_host(out, got, NULL, &rd) : NULL;
  CHECK(st == NULL);
  cj_status_free(st);
  if (rd) {
    st = cj_event_wait(rd);
    CHECK(st == NULL);
    cj_status_free(st);
    for (int i = 0; i < 4; i++) CHECK_MSG(got[i] == want[i], "value %d: %g, expected %g", i, got[i], want[i]);
  }
  cj_event_release(rd);
  cj_event_release(done);
  cj_buffer_destroy(out);
  *on_caller = pthread_equal(ran_on, self);
  *waking = ran_waking;
}

/* One execution of l on x; checks the values (x * scale) and reports where it ran. */
static void run(cj_loaded *l, cj_buffer *x, const float *in, float scale, bool *on_caller,
                bool *waking) {
  float want[4];
  for (int i = 0; i < 4; i++) want[i] = in[i] * scale;
  run_args(l, &x, 1, want, NULL, on_caller, waking);
}

static cj_buffer *scalar_i32(cj_client *c, int32_t v) {
  cj_buffer *b = NULL;
  cj_status st = cj_buffer_from_host(c->devices[0]->memories[0], CJ_S32, NULL, 0, &v, NULL,
                                     CJ_HOST_COPY_DURING_CALL, NULL, &b);
  CHECK(st == NULL && b);
  cj_status_free(st);
  return b;
}

/* The loop program for n steps: its values (each step x * 1.5 in f32, as the kernel does),
 * where it ran, whether it woke workers at the start and at the end. */
static void run_loop(cj_client *c, cj_loaded *l, cj_buffer *x, const float *in, int32_t n, bool *on_caller,
                     bool *waking, bool *waking_after) {
  cj_buffer *args[2] = {x, scalar_i32(c, n)};
  float want[4];
  for (int i = 0; i < 4; i++) {
    want[i] = in[i];
    for (int32_t k = 0; k < n; k++) want[i] = want[i] * 1.5f;
  }
  if (args[1]) run_args(l, args, 2, want, NULL, on_caller, waking);
  *waking_after = ran_waking_after;
  cj_buffer_destroy(args[1]);
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
    /* a cheap loop is short: 0, 1 and 3 steps on the caller, waking off throughout */
    const int32_t steps[] = {0, 1, 3, 0};
    for (int r = 0; r < 4; r++) {
      bool after = true;
      run_loop(c, ll, x, in, steps[r], &on_caller, &waking, &after);
      CHECK_MSG(on_caller && !waking && !after, "loop of %d steps: caller %d, waking %d, after %d",
                steps[r], on_caller, waking, after);
    }
    /* a loop that runs long wakes workers again before it ends (and its values are right) */
    bool after = false;
    run_loop(c, ll, x, in, 1000000, &on_caller, &waking, &after);
    CHECK_MSG(on_caller && !waking && after, "long loop: caller %d, waking %d, after %d", on_caller,
              waking, after);
  }
  cj_executable *ec = NULL;
  cj_loaded *lc = x ? load(c, loop_check_prog, &ec) : NULL;
  if (lc) {
    /* a check failing inside a loop run on the caller fails the execution; 2 steps pass */
    const int32_t steps[] = {5, 2, 3};
    for (int r = 0; r < 3; r++) {
      cj_buffer *args[2] = {x, scalar_i32(c, steps[r])};
      float want[4];
      for (int i = 0; i < 4; i++) want[i] = in[i] * 1.5f * 1.5f;
      if (args[1]) run_args(lc, args, 2, want, steps[r] > 2 ? "expect_eq" : NULL, &on_caller, &waking);
      CHECK_MSG(on_caller, "loop with a check, %d steps: not on the caller", steps[r]);
      cj_buffer_destroy(args[1]);
    }
  }
  cj_loaded_destroy(lc);
  cj_executable_release(ec);
  if (ls) {
    /* runs of 3 ms: after three in a row the program is no longer short */
    atomic_store(&slow, true);
    for (int r = 0; r < 3; r++) {
      run(ls, x, in, 1.5f, &on_caller, &waking);
      CHECK_MSG(on_caller && !waking, "slow run %d: still short", r);
    }
    atomic_store(&slow, false);
    for (int r = 0; r < 3; r++) {
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
