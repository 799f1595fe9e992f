/* Cache-line eviction for cold-start measurements (packwise/weight.h). */
#include "op/op.h"

#include "format/format_internal.h"

#if defined(__x86_64__)
#include <immintrin.h>

/* CLFLUSHOPT (base/cpu.c reads CPUID leaf 7 once): the same eviction as clflush, but not
 * ordered against other flushes of different lines, so the lines go in parallel; on an
 * Intel Xeon VM, 25 MiB took several times as long with clflush, most of a cold GEMV
 * benchmark's run. */
__attribute__((target("clflushopt"))) static void evict_opt(uintptr_t a, uintptr_t end) {
    for (; a < end; a += 64) _mm_clflushopt((void *)a);
    _mm_mfence(); /* the flushes are done before what follows */
}
#endif

int pw_memory_evict(const void *p, size_t bytes) {
    if (p == NULL || bytes == 0) return 1;
    const uintptr_t end = (uintptr_t)p + bytes;
#if defined(__x86_64__)
    /* clflush is part of SSE2, the x86-64 baseline; every level of the hierarchy drops the line. */
    if (pw__x86_has_clflushopt()) {
        evict_opt((uintptr_t)p & ~(uintptr_t)63, end);
        return 1;
    }
    for (uintptr_t a = (uintptr_t)p & ~(uintptr_t)63; a < end; a += 64) _mm_clflush((const void *)a);
    _mm_mfence();
    return 1;
#elif defined(__aarch64__)
    /* DC CIVAC (clean and invalidate to the point of coherency) is allowed at EL0 on Linux;
     * CTR_EL0.DminLine gives the smallest data cache line, log2 of 4-byte words. */
    uint64_t ctr;
    __asm__ volatile("mrs %0, ctr_el0" : "=r"(ctr));
    const uintptr_t line = (uintptr_t)4 << ((ctr >> 16) & 15);
    for (uintptr_t a = (uintptr_t)p & ~(line - 1); a < end; a += line)
        __asm__ volatile("dc civac, %0" : : "r"(a) : "memory");
    __asm__ volatile("dsb ish" : : : "memory");
    return 1;
#else
    (void)end;
    return 0;
#endif
}

int pw_weight_evict(const pw_weight *w) {
    if (w == NULL) return 0;
    int ok = 1;
    for (int i = 0; i < w->plan.nforms; ++i)
        if (w->plan.forms[i].data != NULL) ok &= pw_memory_evict(w->plan.forms[i].data, (size_t)w->plan.forms[i].bytes);
    int reads_source = 0;
    for (int c = 0; c < 2; ++c) reads_source |= w->plan.k[c] != NULL && w->plan.form[c] < 0;
    if (reads_source && w->kind == PW_WEIGHT_BLOCKS) {
        const pw__format_traits *t = pw__format(w->view.format);
        const int64_t bpr = w->in / t->info.block_size;
        const uint8_t *a = pw_view_block_ptr(&w->view, 0, 0);
        const uint8_t *b = pw_view_block_ptr(&w->view, w->out - 1, bpr - 1) + t->info.block_bytes;
        if (b > a) ok &= pw_memory_evict(a, (size_t)(b - a));
    }
    return ok;
}
