/*
 * PACKWISE_TUNE: the kernels' per-CPU settings named from the environment. Run by
 * ctest at each level and, as a 'tunes' test, under each tuning of PW_TEST_TUNES: the
 * settings the first context of the process takes are the ones the variable names
 * (x86-64: the pw__x86_* flags the kernels read), and an unknown value is refused with
 * a message by every context that reads the environment, and by none that does not.
 */
// pw-test: tunes
#include "pw_test.h"

#include "base/internal.h"

#if defined(__x86_64__)
#include "base/x86_tune.h"

/* The flags after the first context: what PACKWISE_TUNE names, when it names one. */
static void test_flags(void) {
    pw_context *ctx = NULL;
    CHECK_OK(pw_context_create(NULL, &ctx), ctx);
    pw_context_destroy(ctx);
    const char *env = getenv("PACKWISE_TUNE");
    const int tune = pw__tune_from_name(env);
    REQUIRE(tune >= 0, "PACKWISE_TUNE='%s' was accepted by pw_context_create", env);
    if (tune == PW__TUNE_AUTO) return; /* the CPU's own: nothing to compare with */
    const int intel = tune == PW__TUNE_INTEL, zen4 = tune == PW__TUNE_ZEN4, zen5 = tune == PW__TUNE_ZEN5;
    CHECK(pw__x86_intel == intel, "%s: intel flag %d", env, pw__x86_intel);
    CHECK(pw__x86_prefetch_l2 == (intel || zen4), "%s: L2 prefetch flag %d", env, pw__x86_prefetch_l2);
    CHECK(pw__x86_hw_streams == zen4, "%s: hardware streams flag %d", env, pw__x86_hw_streams);
    CHECK(pw__x86_gemv_ymm == zen4, "%s: 256-bit Q8_0 GEMV flag %d", env, pw__x86_gemv_ymm);
    CHECK(pw__x86_zen5 == zen5, "%s: Zen 5 flag %d", env, pw__x86_zen5);
}
#endif

/* Names, and the refusal of an unknown one (after test_flags: the process's settings
 * are read once, by its first context). */
static void test_names(void) {
    CHECK(pw__tune_from_name(NULL) == PW__TUNE_AUTO, "unset is auto");
    CHECK(pw__tune_from_name("") == PW__TUNE_AUTO, "empty is auto");
    CHECK(pw__tune_from_name("auto") == PW__TUNE_AUTO, "auto");
    CHECK(pw__tune_from_name("generic") == PW__TUNE_GENERIC, "generic");
#if defined(__x86_64__)
    CHECK(pw__tune_from_name("intel") == PW__TUNE_INTEL, "intel");
    CHECK(pw__tune_from_name("zen4") == PW__TUNE_ZEN4, "zen4");
    CHECK(pw__tune_from_name("zen5") == PW__TUNE_ZEN5, "zen5");
#else
    CHECK(pw__tune_from_name("intel") < 0, "intel is no tuning of this architecture");
#endif
    CHECK(pw__tune_from_name("Zen5") < 0, "names are exact");
    CHECK(pw__tune_from_name("zen") < 0, "no prefixes");

    const char *kept = getenv("PACKWISE_TUNE");
    char saved[64] = "";
    if (kept != NULL) snprintf(saved, sizeof saved, "%s", kept);
    setenv("PACKWISE_TUNE", "zen9", 1);
    pw_context *ctx = NULL;
    CHECK_STATUS(pw_context_create(NULL, &ctx), PW_ERR_INVALID_ARGUMENT, NULL);
    CHECK(ctx == NULL, "no context on failure");
    CHECK(strstr(pw_last_create_message(), "PACKWISE_TUNE='zen9'") != NULL,
          "the message names the value: %s", pw_last_create_message());
    pw_context_options o;
    pw_context_options_init(&o);
    o.ignore_env = 1;
    CHECK_OK(pw_context_create(&o, &ctx), ctx);
    pw_context_destroy(ctx);
    if (kept != NULL)
        setenv("PACKWISE_TUNE", saved, 1);
    else
        unsetenv("PACKWISE_TUNE");
}

int main(void) {
#if defined(__x86_64__)
    test_flags();
#endif
    test_names();
    return pw_test_finish();
}
