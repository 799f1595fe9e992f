/* Trace events: delivery to the caller's sink and the one-line text form. */
#include "internal.h"

#include <stdio.h>
#include <string.h>

void pw__trace(pw_context *ctx, const pw_trace_event *event) {
    if (ctx != NULL && ctx->trace != NULL) ctx->trace(ctx->trace_user, event);
}

static const char *kind_name(pw_trace_kind kind) {
    switch (kind) {
    case PW_TRACE_KERNEL: return "kernel";
    case PW_TRACE_ADAPTER: return "adapter";
    case PW_TRACE_FALLBACK: return "fallback";
    case PW_TRACE_CACHE: return "cache";
    case PW_TRACE_WARNING: return "warning";
    }
    return "unknown";
}

/* Appends to buf like snprintf would, tracking the length needed. */
typedef struct line {
    char *buf;
    size_t cap;
    size_t len;
} line;

static void put(line *l, const char *s, size_t n) {
    if (l->len < l->cap) {
        size_t room = l->cap - l->len;
        size_t k = n < room ? n : room;
        memcpy(l->buf + l->len, s, k);
    }
    l->len += n;
}

/* key=value, quoting values with spaces, quotes or '=' so the line stays parseable. */
static void put_field(line *l, const char *key, const char *value) {
    if (value == NULL) return;
    put(l, " ", 1);
    put(l, key, strlen(key));
    put(l, "=", 1);
    int quote = value[0] == '\0' || strpbrk(value, " \t\"=\\") != NULL;
    if (!quote) {
        put(l, value, strlen(value));
        return;
    }
    put(l, "\"", 1);
    for (const char *p = value; *p; ++p) {
        if (*p == '"' || *p == '\\') put(l, "\\", 1);
        put(l, p, 1);
    }
    put(l, "\"", 1);
}

size_t pw_trace_format(const pw_trace_event *e, char *buffer, size_t capacity) {
    line l = {buffer, capacity, 0};
    if (e == NULL) {
        if (capacity) buffer[0] = '\0';
        return 0;
    }
    const char *kind = kind_name(e->kind);
    put(&l, "trace ", 6);
    put(&l, kind, strlen(kind));
    switch (e->kind) {
    case PW_TRACE_KERNEL:
        put_field(&l, "name", e->kernel);
        put_field(&l, "key", e->key);
        put_field(&l, "tensor", e->tensor);
        break;
    case PW_TRACE_ADAPTER: {
        char bytes[32];
        snprintf(bytes, sizeof bytes, "%llu", (unsigned long long)e->bytes);
        put_field(&l, "tensor", e->tensor);
        put_field(&l, "bytes", bytes);
        put_field(&l, "from", e->from);
        put_field(&l, "to", e->to);
        break;
    }
    case PW_TRACE_FALLBACK:
        put_field(&l, "kernel", e->kernel);
        put_field(&l, "tensor", e->tensor);
        put_field(&l, "reason", e->reason);
        break;
    case PW_TRACE_CACHE:
    case PW_TRACE_WARNING:
        put_field(&l, "tensor", e->tensor);
        put_field(&l, "reason", e->reason);
        break;
    }
    if (capacity) buffer[l.len < capacity ? l.len : capacity - 1] = '\0';
    return l.len;
}
