/* The QD8 x int4 section of `packwise bench` (selected with --formats QC4W and/or QB4W). */
#ifndef PACKWISE_BENCH_QC4W_H
#define PACKWISE_BENCH_QC4W_H

#include "bench.h"

/*
 * Time the QC4W fully-connected operator: K = 4096, N = 4096 and 11008
 * (o->shapes as [N, K] when given), batch 1, 16 and 128 (o->batch when
 * given), each thread count of o->threads (default 1 and all cores).
 * Batch 1 runs cold (the packed weights flushed before each call) and is a
 * fraction of the read bandwidth; larger batches are a fraction of the int8
 * peak. Packing (operator creation without a cache) is timed once per shape
 * and thread count and reported per weight. Machine figures come from
 * r->machine when it has the thread count, else they are measured here and
 * appended. Prints JSON lines with o->json (format "QC4W", or "QB4W" with
 * "block"), else a table. QB4W (o->qb4w) runs with blocks of 32 and of 128.
 * o->kernel applies when it names a kernel of the kind. Returns an exit code.
 */
int pw_bench_qc4w(const pw_bench_options *o, pw_bench_results *r);

#endif
