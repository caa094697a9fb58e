/* cjrt: decimal text to float bits, rounded once and correctly (the text parser reads float
 * literals with it; the printer checks that its shortest form reads back). */
#ifndef CJRT_BASE_DECIMAL_H
#define CJRT_BASE_DECIMAL_H

#include <stdint.h>

#include "base/dtype.h"

/* The decimal number s (NUL-terminated, optionally signed) rounded once and correctly (nearest,
 * ties to even) into the float format dt; returns its bits. */
uint64_t cj_float_from_decimal(cj_dtype dt, const char *s);

#endif
