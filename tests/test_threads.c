/*
 * Thread counts and thread creation through the public API:
 * - a count above PW_MAX_THREADS is refused by pw_context_create and
 *   pw_context_set_threads with a message naming the cap, and the context keeps
 *   its threads; 0 means the online cores, never above the cap;
 * - worker threads that cannot be created are a status, not a hang: in a child
 *   process whose address space is limited (RLIMIT_AS: room for no thread stack,
 *   or for a few), creating a context of 64 threads, or raising a context to 64
 *   threads, returns PW_ERR_OUT_OF_MEMORY with a message naming the thread and
 *   pthread_create's reason, and the context stays usable. The child runs under
 *   alarm(), so a pool that waits forever (Debian's pthreadpool_create does when a
 *   thread cannot be created) fails this test instead of hanging it; ctest's
 *   TIMEOUT is the second guard.
 *
 * The child is this program again (fork + exec), so it starts with no thread and
 * no cached thread stack, as a fresh process would.
 */
// pw-test: once
// pw-test: tsan
// pw-test: timeout=300
#include "pw_test.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

enum { CHILD_ALARM_S = 60, LIMITED_THREADS = 64 };

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

/* ---- the child: limited address space ---------------------------------------- */

static uint64_t vm_size_bytes(void) {
    FILE *f = fopen("/proc/self/status", "r");
    if (f == NULL) return 0;
    char line[256];
    uint64_t kib = 0;
    while (fgets(line, sizeof line, f))
        if (strncmp(line, "VmSize:", 7) == 0) kib = strtoull(line + 7, NULL, 10);
    fclose(f);
    return kib * 1024;
}

static size_t default_stack_bytes(void) {
    pthread_attr_t a;
    size_t s = 0;
    if (pthread_getattr_default_np(&a) == 0) {
        pthread_attr_getstacksize(&a, &s);
        pthread_attr_destroy(&a);
    }
    return s ? s : (size_t)8 << 20;
}

static int expect_refusal(pw_status st, const char *msg, const char *what) {
    if (st != PW_ERR_OUT_OF_MEMORY || !contains(msg, "cannot create worker thread") ||
        !contains(msg, "pthread_create")) {
        fprintf(stderr, "child: %s returned %s: '%s'\n", what, pw_status_name(st), msg);
        return 1;
    }
    printf("child: %s: %s: %s\n", what, pw_status_name(st), msg);
    return 0;
}

/* Runs in the child with `stacks` default thread stacks of address space to spare. */
static int limited_child(double stacks) {
    alarm(CHILD_ALARM_S);
    /* Whatever the library allocates for a context, allocated once before the limit. */
    pw_context_options o;
    pw_context_options_init(&o);
    o.threads = 1;
    pw_context *one = NULL;
    if (pw_context_create(&o, &one) != PW_OK) return 2;

    const uint64_t room = (uint64_t)(stacks * (double)default_stack_bytes());
    struct rlimit r;
    r.rlim_cur = r.rlim_max = (rlim_t)(vm_size_bytes() + room);
    if (vm_size_bytes() == 0 || setrlimit(RLIMIT_AS, &r) != 0) {
        fprintf(stderr, "child: cannot limit the address space: %s\n", strerror(errno));
        return 3;
    }
    int bad = 0;
    o.threads = LIMITED_THREADS;
    pw_context *ctx = NULL;
    bad += expect_refusal(pw_context_create(&o, &ctx), pw_last_create_message(), "create");
    if (ctx != NULL) {
        fprintf(stderr, "child: a failed create returned a context\n");
        ++bad;
    }
    bad += expect_refusal(pw_context_set_threads(one, LIMITED_THREADS), pw_context_message(one),
                          "set_threads");
    if (pw_context_threads(one) != 1) {
        fprintf(stderr, "child: failed set_threads left %d threads\n", pw_context_threads(one));
        ++bad;
    }
    /* The context still works on its one thread. */
    const float w[32] = {1.0f}, x[32] = {2.0f};
    float y = 0.0f;
    pw_view v;
    const int64_t shape[2] = {1, 32};
    pw_weight *h = NULL;
    if (pw_view_init(one, &v, PW_FORMAT_F32, 2, shape, PW_LAYOUT_ROW_MAJOR, w, sizeof w) != PW_OK ||
        pw_weight_create(one, &v, NULL, &h) != PW_OK || pw_matmul_wt(one, x, 1, h, &y) != PW_OK ||
        y != 2.0f) {
        fprintf(stderr, "child: the context does not work after the failure: %s (y = %g)\n",
                pw_context_message(one), (double)y);
        ++bad;
    }
    pw_weight_destroy(h);
    pw_context_destroy(one);
    return bad ? 1 : 0;
}

/* Run this program as a limited child and check how it ended. */
static void limited(const char *self, const char *stacks) {
    pid_t pid = fork();
    REQUIRE(pid >= 0, "fork: %s", strerror(errno));
    if (pid == 0) {
        execl(self, self, "--limited", stacks, (char *)NULL);
        _exit(127);
    }
    int status = 0;
    REQUIRE(waitpid(pid, &status, 0) == pid, "waitpid: %s", strerror(errno));
    if (WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM)
        CHECK(0, "room for %s thread stacks: the child hung for %d s (killed by its alarm)",
              stacks, CHILD_ALARM_S);
    else
        CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0,
              "room for %s thread stacks: the child ended with %s %d", stacks,
              WIFEXITED(status) ? "exit status" : "signal",
              WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
}

int main(int argc, char **argv) {
    if (argc == 3 && strcmp(argv[1], "--limited") == 0) return limited_child(atof(argv[2]));
    /* No thread before the children are started (a forked child of a threaded process
     * is what ThreadSanitizer warns about). */
    /* Half a stack: the first worker fails (AddressSanitizer's own 2 MiB for a new thread
     * still fit; with less, ASan stops the child itself). Three and a half: a few workers,
     * then a failure, and the ones made are joined. */
#ifdef PW_TEST_EMULATED
    printf("limited address space: not checked under an emulator (qemu-user ignores RLIMIT_AS)\n");
#else
    limited("/proc/self/exe", "0.5");
    limited("/proc/self/exe", "3.5");
#endif
    cap_refused();
    cap_accepted();
    return pw_test_finish();
}
