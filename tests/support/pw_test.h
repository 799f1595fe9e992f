/*
 * Minimal test support: checks that print the failing expression with its
 * file and line and count failures, a seeded random generator, and helpers
 * to make contexts and read files. A test program returns pw_test_finish().
 */
#ifndef PW_TEST_H
#define PW_TEST_H

#include "packwise.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern int pw_test_failures;
extern int pw_test_checks;

void pw_test_fail(const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* CHECK(cond, "printf-style context", ...): records a failure and continues. */
#define CHECK(cond, ...)                                                                    \
    do {                                                                                    \
        ++pw_test_checks;                                                                   \
        if (!(cond)) {                                                                      \
            pw_test_fail(__FILE__, __LINE__, "CHECK(%s) failed", #cond);                    \
            fprintf(stderr, "    " __VA_ARGS__);                                            \
            fprintf(stderr, "\n");                                                          \
        }                                                                                   \
    } while (0)

/* CHECK_OK(status-expression, ctx): a status must be PW_OK; prints the context message. */
#define CHECK_OK(expr, ctx)                                                                 \
    do {                                                                                    \
        ++pw_test_checks;                                                                   \
        pw_status pw__st = (expr);                                                          \
        if (pw__st != PW_OK)                                                                \
            pw_test_fail(__FILE__, __LINE__, "%s returned %s: %s", #expr,                   \
                         pw_status_name(pw__st), pw_context_message(ctx));                  \
    } while (0)

/* CHECK_STATUS(expr, expected, ctx): a call must fail with exactly this status. */
#define CHECK_STATUS(expr, expected, ctx)                                                   \
    do {                                                                                    \
        ++pw_test_checks;                                                                   \
        pw_status pw__st = (expr);                                                          \
        if (pw__st != (expected))                                                           \
            pw_test_fail(__FILE__, __LINE__, "%s returned %s, expected %s (%s)", #expr,     \
                         pw_status_name(pw__st), pw_status_name(expected),                  \
                         pw_context_message(ctx));                                          \
    } while (0)

/* REQUIRE: like CHECK but stops the test program (for preconditions). */
#define REQUIRE(cond, ...)                                                                  \
    do {                                                                                    \
        ++pw_test_checks;                                                                   \
        if (!(cond)) {                                                                      \
            pw_test_fail(__FILE__, __LINE__, "REQUIRE(%s) failed", #cond);                  \
            fprintf(stderr, "    " __VA_ARGS__);                                            \
            fprintf(stderr, "\n");                                                          \
            exit(pw_test_finish());                                                         \
        }                                                                                   \
    } while (0)

int pw_test_finish(void);

/* A context honouring PACKWISE_ISA (as ctest sets it); aborts the test on failure. */
pw_context *pw_test_context(void);

/* A weight's plan (pw_weight_info_get), a failed call counted as a failed check. */
pw_weight_info pw_test_weight_info(const pw_weight *w);

/* A 2-D [out, in] view of `format` over bytes made row-major (the file's order) that a
 * kernel of layout class `layout` reads as it is: for PW_LAYOUT_BLOCKED_INPUT_MAJOR the
 * bytes are first put in the spec's kernel order, in place; otherwise they stay. */
void pw_test_view_for(pw_context *ctx, pw_layout_class layout, pw_format format, int64_t out,
                      int64_t in, void *bytes, uint64_t nbytes, pw_view *view);

/* Deterministic random numbers (splitmix64). */
typedef struct pw_rng {
    uint64_t state;
} pw_rng;
uint64_t pw_rng_next(pw_rng *r);
double pw_rng_uniform(pw_rng *r);  /* [0, 1) */
double pw_rng_gauss(pw_rng *r);    /* N(0, 1), Box-Muller */

/* Read a whole file; returns NULL on failure. *size receives the length. */
unsigned char *pw_test_read_file(const char *path, size_t *size);
/* Path of a file under tests/data (static buffer, overwritten per call). */
const char *pw_test_data_path(const char *relative);

#endif
