/* Status codes and failure messages. */
#include "internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

const char *pw_status_str(pw_status status) {
    switch (status) {
#define PW__STATUS_TEXT(name, value, text)                                                  \
    case name:                                                                              \
        return text;
        PW_STATUS_LIST(PW__STATUS_TEXT)
#undef PW__STATUS_TEXT
    }
    return "unknown status";
}

const char *pw_status_name(pw_status status) {
    switch (status) {
#define PW__STATUS_NAME(name, value, text)                                                  \
    case name:                                                                              \
        return #name;
        PW_STATUS_LIST(PW__STATUS_NAME)
#undef PW__STATUS_NAME
    }
    return "PW_ERR_UNKNOWN";
}

pw_status pw__fail(pw_context *ctx, pw_status status, const char *fmt, ...) {
    if (ctx != NULL) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(ctx->message, sizeof ctx->message, fmt, ap);
        va_end(ap);
    }
    return status;
}

void pw__strlcpy(char *dst, const char *src, size_t capacity) {
    if (capacity == 0) return;
    size_t n = src ? strlen(src) : 0;
    if (n >= capacity) n = capacity - 1;
    if (n) memcpy(dst, src, n);
    dst[n] = '\0';
}

/* The public enum and the X-macro list must agree. */
#define PW__STATUS_CHECK(name, value, text) _Static_assert(name == value, #name " differs");
PW_STATUS_LIST(PW__STATUS_CHECK)
#undef PW__STATUS_CHECK
