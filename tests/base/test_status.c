/* Unit tests for cj_status's location (file:line:function where it was made) and cause chain
 * (cj_status_wrap / cj_status_annotate keep the wrapped status whole). */
#include <stdlib.h>
#include <string.h>

#include "../common/check.h"
#include "base/status.h"

static int make_line; /* the line the failing helper made its status on */

static CJ_MUST_USE cj_status failing_helper(int x) {
  make_line = __LINE__ + 1;
  return cj_invalid("bad value %d", x);
}

static CJ_MUST_USE cj_status caller(void) {
  cj_status st = failing_helper(7);
  return cj_status_annotate(st, "while calling"); /* NULL stays NULL */
}

static void test_location(void) {
  cj_status st = failing_helper(3);
  CHECK_EQ_STR(cj_status_message(st), "bad value 3"); /* the message carries no location */
  CHECK_EQ_STR(cj_status_file(st), "tests/base/test_status.c");
  CHECK_EQ_STR(cj_status_file(st), __FILE__);
  CHECK_EQ_INT(cj_status_line(st), make_line);
  CHECK_EQ_INT(cj_status_line(st), 13);
  CHECK_EQ_STR(cj_status_func(st), "failing_helper");
  CHECK(cj_status_cause(st) == NULL);
  cj_status_free(st);
  CHECK_EQ_STR(cj_status_file(NULL), "");
  CHECK_EQ_INT(cj_status_line(NULL), 0);
}

static void test_cause(void) {
  cj_status st = caller();
  CHECK_EQ_INT(cj_status_code(st), CJ_INVALID_ARGUMENT);
  CHECK_EQ_STR(cj_status_message(st), "while calling: bad value 7");
  CHECK_EQ_STR(cj_status_file(st), "tests/base/test_status.c");
  CHECK_EQ_INT(cj_status_line(st), 18);
  CHECK_EQ_STR(cj_status_func(st), "caller");
  cj_status in = cj_status_cause(st);
  CHECK(in != NULL);
  CHECK_EQ_STR(cj_status_message(in), "bad value 7");
  CHECK_EQ_INT(cj_status_line(in), make_line);
  CHECK_EQ_STR(cj_status_func(in), "failing_helper");

  char buf[256];
  size_t n = cj_status_where(st, buf, sizeof buf);
  CHECK_EQ_STR(buf, "tests/base/test_status.c:18 (caller) <- tests/base/test_status.c:13 "
                    "(failing_helper)");
  CHECK_EQ_INT(n, strlen(buf));
  char small[8];
  CHECK_EQ_INT(cj_status_where(st, small, sizeof small), n); /* truncated, says the full size */
  CHECK_EQ_STR(small, "tests/b");

  /* a wrap with its own code; copies keep the whole chain */
  cj_status w = cj_status_wrap(st, CJ_INTERNAL, "step %d", 2);
  int w_line = __LINE__ - 1;
  CHECK_EQ_INT(cj_status_code(w), CJ_INTERNAL);
  CHECK_EQ_STR(cj_status_message(w), "step 2: while calling: bad value 7");
  CHECK_EQ_INT(cj_status_line(w), w_line);
  cj_status c = cj_status_copy(w);
  cj_status_free(w);
  CHECK_EQ_STR(cj_status_message(c), "step 2: while calling: bad value 7");
  CHECK_EQ_INT(cj_status_line(c), w_line);
  CHECK_EQ_INT(cj_status_line(cj_status_cause(c)), 18);
  CHECK_EQ_INT(cj_status_line(cj_status_cause(cj_status_cause(c))), make_line);
  CHECK_EQ_INT(cj_status_code(cj_status_cause(cj_status_cause(c))), CJ_INVALID_ARGUMENT);
  cj_status_free(c);

  CHECK(cj_status_annotate(NULL, "x") == NULL);
  CHECK(cj_status_wrap(NULL, CJ_INTERNAL, "x") == NULL);
}

static void test_locations_wanted(void) {
  unsetenv("CJRT_ERROR_LOCATIONS");
  CHECK(!cj_status_locations_wanted());
  setenv("CJRT_ERROR_LOCATIONS", "0", 1);
  CHECK(!cj_status_locations_wanted());
  setenv("CJRT_ERROR_LOCATIONS", "1", 1);
  CHECK(cj_status_locations_wanted());
  unsetenv("CJRT_ERROR_LOCATIONS");
}

int main(void) {
  test_location();
  test_cause();
  test_locations_wanted();
  return check_report("test_status");
}
