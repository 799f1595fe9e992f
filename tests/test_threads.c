/*
 * Thread counts through the public API: a count above PW_MAX_THREADS is refused
 * by pw_context_create and pw_context_set_threads with a message naming the cap,
 * and the context keeps its threads; 0 means the online cores, never above the
 * cap; the cap itself is accepted.
 */
// pw-test: once
#include "pw_test.h"

#include <limits.h>
#include <unistd.h>

static int contains(const char *s, const char *needle) { return strstr(s, needle) != NULL; }

static void cap_refused(void) {
    pw_context_options o;
    pw_context_options_init(&o);
    char cap[32];
    snprintf(cap, sizeof cap, "%d", PW_MAX_THREADS);
    const int over[] = {PW_MAX_THREADS + 1, 100000, INT_MAX};
    for (size_t k = 0; k < sizeof over / sizeof over[0]; ++k) {
        o.threads = over[k];
        pw_context *ctx = (pw_context *)&o;
        CHECK_STATUS(pw_context_create(&o, &ctx), PW_ERR_INVALID_ARGUMENT, NULL);
        CHECK(ctx == NULL, "refused create left *out set");
        CHECK(contains(pw_last_create_message(), "PW_MAX_THREADS") &&
                  contains(pw_last_create_message(), cap),
              "threads=%d: message '%s' does not name the cap", over[k], pw_last_create_message());
    }
    o.threads = -1;
    pw_context *ctx = NULL;
    CHECK_STATUS(pw_context_create(&o, &ctx), PW_ERR_INVALID_ARGUMENT, NULL);

    o.threads = 2;
    CHECK_OK(pw_context_create(&o, &ctx), NULL);
    if (ctx == NULL) return;
    CHECK_STATUS(pw_context_set_threads(ctx, PW_MAX_THREADS + 1), PW_ERR_INVALID_ARGUMENT, ctx);
    CHECK(contains(pw_context_message(ctx), "PW_MAX_THREADS") &&
              contains(pw_context_message(ctx), cap),
          "set_threads: message '%s' does not name the cap", pw_context_message(ctx));
    CHECK(pw_context_threads(ctx) == 2, "refused set_threads changed threads to %d",
          pw_context_threads(ctx));
    CHECK_STATUS(pw_context_set_threads(ctx, -3), PW_ERR_INVALID_ARGUMENT, ctx);
    CHECK_OK(pw_context_set_threads(ctx, 0), ctx);
    const long online = sysconf(_SC_NPROCESSORS_ONLN);
    const int want = online < 1 ? 1 : online > PW_MAX_THREADS ? PW_MAX_THREADS : (int)online;
    CHECK(pw_context_threads(ctx) == want, "threads 0: %d threads, %d online cores",
          pw_context_threads(ctx), want);
    CHECK_OK(pw_context_set_threads(ctx, 3), ctx);
    CHECK(pw_context_threads(ctx) == 3, "set_threads(3): %d", pw_context_threads(ctx));
    pw_context_destroy(ctx);
}

/* The cap is accepted; with a host parallel-for no thread is created for it. */
static void host_for(void *user, pw_parallel_task task, void *task_context, size_t range) {
    (void)user;
    for (size_t i = 0; i < range; ++i) task(task_context, i);
}

static void cap_accepted(void) {
    pw_context_options o;
    pw_context_options_init(&o);
    o.threads = PW_MAX_THREADS;
    o.parallel_for = host_for;
    pw_context *ctx = NULL;
    CHECK_OK(pw_context_create(&o, &ctx), NULL);
    CHECK(pw_context_threads(ctx) == PW_MAX_THREADS, "threads %d", pw_context_threads(ctx));
    pw_context_destroy(ctx);
}

int main(void) {
    cap_refused();
    cap_accepted();
    return pw_test_finish();
}
