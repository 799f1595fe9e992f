/* Benchmark sections of `packwise bench`, and timing helpers they share. */
#ifndef PACKWISE_BENCH_H
#define PACKWISE_BENCH_H

#include "packwise.h"

typedef struct pw_bench_options {
    int json;               /* one JSON object per line instead of a table */
    int quick;              /* smaller sizes and fewer repetitions (tests) */
    uint64_t formats_mask;  /* bit f set: include format f */
} pw_bench_options;

/* Monotonic time in seconds. */
double pw_bench_now(void);
/* Median of n samples (sorts in place). */
double pw_bench_median(double *samples, int n);

/* Decode throughput per format: GB/s of packed bytes read and of floats written. */
int pw_bench_decode(pw_context *ctx, const pw_bench_options *o);

#endif
