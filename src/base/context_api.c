/* The context's allocator and threads offered to callers (bench, engines): base.h. */
#include "base/internal.h"


void *pw_context_alloc(pw_context *ctx, size_t bytes, size_t alignment) {
    if (alignment == 0 || (alignment & (alignment - 1)) != 0 || alignment > 4096) return NULL;
    return pw__alloc(ctx, bytes, alignment);
}

void pw_context_free(pw_context *ctx, void *p) { pw__free(ctx, p); }

void pw_context_parallel_for(pw_context *ctx, pw_parallel_task task, void *task_context,
                             size_t range) {
    if (ctx == NULL || task == NULL) return;
    pw__parallel_for(ctx, task, task_context, range);
}
