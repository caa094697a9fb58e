/* libcjrt carries its own copy of the core's dtype conversions (src/base/dtype.c), compiled
 * hidden: libcjrt links no part of the plugin's core library, and a program that links both (the
 * `cjrt` command) must not see two exported definitions. The system headers come first so that
 * only cjrt's own declarations fall under the hidden pragma. */
#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#pragma GCC visibility push(hidden)
#include "base/dtype.c"
#pragma GCC visibility pop
