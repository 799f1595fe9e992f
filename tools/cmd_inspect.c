/*
 * packwise inspect FILE [--json]
 * The GGUF header, every metadata pair and every tensor record: name, type,
 * ne as stored, the logical shape ([out, in] for a 2-D weight: ne reversed),
 * absolute offset, bytes, and the orientation warning. --json writes one JSON
 * object (complete values, arrays included) for scripts; the text form shortens
 * long arrays. A file that does not validate exits 2 with a one-line message
 * naming the file, the field and its byte offset.
 */
#include "cli_args.h"

#include <inttypes.h>
#include <math.h>
#include <string.h>

/* Propagate a failed status (the context holds the message). */
#define INSPECT_TRY(expr)                                                                   \
    do {                                                                                    \
        pw_status inspect_st = (expr);                                                      \
        if (inspect_st != PW_OK) return inspect_st;                                         \
    } while (0)

/* JSON string: escapes, and U+FFFD for bytes that are not UTF-8 (values are bytes). */
static void json_string(FILE *f, const char *s, uint64_t len) {
    fputc('"', f);
    const unsigned char *p = (const unsigned char *)s;
    uint64_t i = 0;
    while (i < len) {
        const unsigned c = p[i];
        if (c == '"' || c == '\\') {
            fprintf(f, "\\%c", c);
        } else if (c < 0x20) {
            fprintf(f, "\\u%04x", c);
        } else if (c < 0x80) {
            fputc((int)c, f);
        } else {
            const int n = (c & 0xE0) == 0xC0   ? 2
                          : (c & 0xF0) == 0xE0 ? 3
                          : (c & 0xF8) == 0xF0 ? 4
                                               : 0;
            int ok = n > 0 && len - i >= (uint64_t)n;
            uint32_t cp = n == 2 ? (c & 0x1F) : n == 3 ? (c & 0x0F) : (c & 0x07);
            for (int k = 1; ok && k < n; ++k) {
                ok = (p[i + k] & 0xC0) == 0x80;
                cp = (cp << 6) | (p[i + k] & 0x3F);
            }
            const uint32_t min = n == 2 ? 0x80 : n == 3 ? 0x800 : 0x10000;
            ok = ok && cp >= min && cp <= 0x10FFFF && !(cp >= 0xD800 && cp <= 0xDFFF);
            if (ok) {
                fwrite(p + i, 1, (size_t)n, f);
                i += (uint64_t)n;
                continue;
            }
            fputs("\\ufffd", f);
        }
        ++i;
    }
    fputc('"', f);
}

/* Plain text: printable ASCII as is, everything else as \xNN. */
static void text_string(FILE *f, const char *s, uint64_t len) {
    fputc('"', f);
    for (uint64_t i = 0; i < len; ++i) {
        const unsigned char c = (unsigned char)s[i];
        if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\') fputc(c, f);
        else if (c >= 0x80) fputc(c, f); /* UTF-8 passes through to the terminal */
        else fprintf(f, "\\x%02x", c);
    }
    fputc('"', f);
}

static void print_float(FILE *f, double d, int json, int digits) {
    /* JSON has no NaN or infinity: write them as strings */
    if (isnan(d))
        fputs(json ? "\"NaN\"" : "nan", f);
    else if (isinf(d) && d > 0)
        fputs(json ? "\"Infinity\"" : "inf", f);
    else if (isinf(d))
        fputs(json ? "\"-Infinity\"" : "-inf", f);
    else
        fprintf(f, "%.*g", digits, d);
}

/* Print one value; text output shows at most `limit` array elements. */
static pw_status print_value(pw_context *ctx, FILE *f, const pw_gguf_value *v, int json,
                             uint64_t limit) {
    union {
        uint8_t u8;
        int8_t i8;
        uint16_t u16;
        int16_t i16;
        uint32_t u32;
        int32_t i32;
        uint64_t u64;
        int64_t i64;
        float f32;
        double f64;
        int b;
    } x;
    const char *s = NULL;
    uint64_t len = 0;
    switch (v->type) {
    case PW_GGUF_TYPE_UINT8:
        INSPECT_TRY(pw_gguf_value_u8(ctx, v, &x.u8));
        fprintf(f, "%u", x.u8);
        break;
    case PW_GGUF_TYPE_INT8:
        INSPECT_TRY(pw_gguf_value_i8(ctx, v, &x.i8));
        fprintf(f, "%d", x.i8);
        break;
    case PW_GGUF_TYPE_UINT16:
        INSPECT_TRY(pw_gguf_value_u16(ctx, v, &x.u16));
        fprintf(f, "%u", x.u16);
        break;
    case PW_GGUF_TYPE_INT16:
        INSPECT_TRY(pw_gguf_value_i16(ctx, v, &x.i16));
        fprintf(f, "%d", x.i16);
        break;
    case PW_GGUF_TYPE_UINT32:
        INSPECT_TRY(pw_gguf_value_u32(ctx, v, &x.u32));
        fprintf(f, "%" PRIu32, x.u32);
        break;
    case PW_GGUF_TYPE_INT32:
        INSPECT_TRY(pw_gguf_value_i32(ctx, v, &x.i32));
        fprintf(f, "%" PRId32, x.i32);
        break;
    case PW_GGUF_TYPE_UINT64:
        INSPECT_TRY(pw_gguf_value_u64(ctx, v, &x.u64));
        fprintf(f, "%" PRIu64, x.u64);
        break;
    case PW_GGUF_TYPE_INT64:
        INSPECT_TRY(pw_gguf_value_i64(ctx, v, &x.i64));
        fprintf(f, "%" PRId64, x.i64);
        break;
    case PW_GGUF_TYPE_FLOAT32:
        INSPECT_TRY(pw_gguf_value_f32(ctx, v, &x.f32));
        print_float(f, x.f32, json, 9);
        break;
    case PW_GGUF_TYPE_FLOAT64:
        INSPECT_TRY(pw_gguf_value_f64(ctx, v, &x.f64));
        print_float(f, x.f64, json, 17);
        break;
    case PW_GGUF_TYPE_BOOL:
        INSPECT_TRY(pw_gguf_value_bool(ctx, v, &x.b));
        fputs(x.b ? "true" : "false", f);
        break;
    case PW_GGUF_TYPE_STRING:
        INSPECT_TRY(pw_gguf_value_string(ctx, v, &s, &len));
        (json ? json_string : text_string)(f, s, len);
        break;
    case PW_GGUF_TYPE_ARRAY:
        fputc('[', f);
        for (uint64_t i = 0; i < v->count; ++i) {
            if (!json && i == limit) {
                fprintf(f, ", ... %" PRIu64 " more", v->count - limit);
                break;
            }
            pw_gguf_value e;
            INSPECT_TRY(pw_gguf_value_element(ctx, v, i, &e));
            if (i) fputs(", ", f);
            INSPECT_TRY(print_value(ctx, f, &e, json, limit));
        }
        fputc(']', f);
        break;
    }
    return PW_OK;
}

static void print_dims(FILE *f, const int64_t *d, int n) {
    fputc('[', f);
    for (int i = 0; i < n; ++i) fprintf(f, "%s%" PRId64, i ? ", " : "", d[i]);
    fputc(']', f);
}

static const char ORIENT_NOTE[] =
    "GGUF writes dims in ne order ([in, out] for a weight); the bytes are [out, in] row-major: "
    "open with PW_ORIENT_OUT_IN";

static pw_status print_kv(pw_context *ctx, FILE *f, const pw_gguf *g, int64_t i, int json) {
    const char *key = NULL;
    uint64_t key_len = 0;
    pw_gguf_value v;
    INSPECT_TRY(pw_gguf_kv_get(ctx, g, i, &key, &key_len, &v));
    if (json) {
        fputs(i ? ",\n  {\"key\": " : "\n  {\"key\": ", f);
        json_string(f, key, key_len);
        fprintf(f, ", \"type\": \"%s\"", pw_gguf_type_name(v.type));
        if (v.type == PW_GGUF_TYPE_ARRAY)
            fprintf(f, ", \"element_type\": \"%s\", \"count\": %" PRIu64,
                    pw_gguf_type_name(v.array_type), v.count);
        fputs(", \"value\": ", f);
        INSPECT_TRY(print_value(ctx, f, &v, 1, 0));
        fputc('}', f);
    } else {
        fprintf(f, "  %-40s %-8s", key, pw_gguf_type_name(v.type));
        if (v.type == PW_GGUF_TYPE_ARRAY)
            fprintf(f, " of %" PRIu64 " %s", v.count, pw_gguf_type_name(v.array_type));
        fputs("  ", f);
        INSPECT_TRY(print_value(ctx, f, &v, 0, 8));
        fputc('\n', f);
    }
    return PW_OK;
}

static pw_status print_tensor(pw_context *ctx, FILE *f, const pw_gguf *g, int64_t i, int json) {
    pw_gguf_tensor_info t;
    INSPECT_TRY(pw_gguf_tensor_info_get(ctx, g, i, &t));
    const char *ggml = pw_gguf_tensor_type_name(t.gguf_type);
    const char *type = t.format_known ? pw_format_get(t.format)->name : NULL;
    /* The logical shape: ne reversed for a 2-D weight, ne order otherwise (as OUT_IN labels it). */
    int64_t logical[PW_MAX_RANK];
    for (int d = 0; d < t.n_dims; ++d) logical[d] = t.ne[d];
    if (t.n_dims == 2) {
        logical[0] = t.ne[1];
        logical[1] = t.ne[0];
    }
    const uint64_t rel = t.offset - pw_gguf_data_offset(g);
    char warning[160] = "";
    if (!t.format_known)
        snprintf(warning, sizeof warning, "type id %" PRIu32 " (%s) cannot be decoded by packwise",
                 t.gguf_type, ggml ? ggml : "not a ggml type");
    else if (t.n_dims == 2)
        snprintf(warning, sizeof warning, "ne order [%" PRId64 ", %" PRId64 "] is [in, out]; use "
                 "[out, in] = [%" PRId64 ", %" PRId64 "] (PW_ORIENT_OUT_IN)",
                 t.ne[0], t.ne[1], t.ne[1], t.ne[0]);
    if (json) {
        fputs(i ? ",\n  {\"name\": " : "\n  {\"name\": ", f);
        json_string(f, t.name, strlen(t.name));
        if (type) fprintf(f, ", \"type\": \"%s\"", type);
        else fputs(", \"type\": null", f);
        fprintf(f, ", \"gguf_type\": %" PRIu32 ", \"ggml_type\": ", t.gguf_type);
        if (ggml) fprintf(f, "\"%s\"", ggml);
        else fputs("null", f);
        fprintf(f, ", \"n_dims\": %d, \"ne\": ", (int)t.n_dims);
        print_dims(f, t.ne, t.n_dims);
        fputs(", \"logical\": ", f);
        print_dims(f, logical, t.n_dims);
        fprintf(f, ", \"offset\": %" PRIu64 ", \"relative_offset\": %" PRIu64
                   ", \"bytes\": %" PRIu64 ", \"record_offset\": %" PRIu64 ", \"warning\": ",
                t.offset, rel, t.bytes, t.info_offset);
        if (warning[0]) json_string(f, warning, strlen(warning));
        else fputs("null", f);
        fputc('}', f);
    } else {
        fprintf(f, "  %-32s %-7s ne=", t.name, type ? type : (ggml ? ggml : "?"));
        print_dims(f, t.ne, t.n_dims);
        fputs(t.n_dims == 2 ? " [out, in]=" : " logical=", f);
        print_dims(f, logical, t.n_dims);
        fprintf(f, " offset=%" PRIu64 " bytes=%" PRIu64, t.offset, t.bytes);
        if (!t.format_known) fprintf(f, "  warning: %s", warning);
        fputc('\n', f);
    }
    return PW_OK;
}

static pw_status inspect(pw_context *ctx, FILE *f, const char *file, const pw_gguf *g, int json) {
    const int64_t n_kv = pw_gguf_kv_count(g), n_t = pw_gguf_tensor_count(g);
    if (json) {
        fputs("{\"file\": ", f);
        json_string(f, file, strlen(file));
        fprintf(f,
                ", \"version\": %" PRIu32 ", \"alignment\": %" PRIu64 ", \"data_offset\": %" PRIu64
                ", \"file_size\": %" PRIu64 ", \"kv_count\": %" PRId64
                ", \"tensor_count\": %" PRId64
                ",\n \"orientation_note\": \"%s\",\n \"metadata\": [",
                pw_gguf_version(g), pw_gguf_alignment(g), pw_gguf_data_offset(g),
                pw_gguf_file_size(g), n_kv, n_t, ORIENT_NOTE);
    } else {
        fprintf(f, "%s: GGUF v%" PRIu32 ", %" PRIu64 " bytes, alignment %" PRIu64
                   ", data section at byte %" PRIu64 "\nmetadata (%" PRId64 " pairs):\n",
                file, pw_gguf_version(g), pw_gguf_file_size(g), pw_gguf_alignment(g),
                pw_gguf_data_offset(g), n_kv);
    }
    for (int64_t i = 0; i < n_kv; ++i) INSPECT_TRY(print_kv(ctx, f, g, i, json));
    if (json) fputs("],\n \"tensors\": [", f);
    else fprintf(f, "tensors (%" PRId64 "):\n  note: %s\n", n_t, ORIENT_NOTE);
    for (int64_t i = 0; i < n_t; ++i) INSPECT_TRY(print_tensor(ctx, f, g, i, json));
    if (json) fputs("]}\n", f);
    return PW_OK;
}

static const char HELP[] =
    "usage: packwise inspect FILE [--json]\n"
    "The GGUF header, every metadata pair and every tensor record (name, type, ne as stored,\n"
    "logical [out, in], offset, bytes, orientation warning). --json: one JSON object.\n"
    "FILE must be a regular file (a FIFO or a device is refused).\n";

int pw_cli_inspect_parse(int argc, char **argv, pw_cli_inspect_args *a) {
    memset(a, 0, sizeof *a);
    for (int i = 1; i < argc; ++i) {
        if (pw_cli_is_help(argv[i])) return pw_cli_help(HELP);
        else if (strcmp(argv[i], "--json") == 0) a->json = 1;
        else if (argv[i][0] == '-' && argv[i][1] != '\0')
            return pw_cli_fail("inspect", "unknown option '%s'", argv[i]);
        else if (a->file == NULL) a->file = argv[i];
        else return pw_cli_fail("inspect", "unexpected argument '%s'", argv[i]);
    }
    if (a->file == NULL) return pw_cli_fail("inspect", "usage: packwise inspect FILE [--json]");
    return PW_CLI_RUN;
}

int pw_cli_inspect_run(const pw_cli_inspect_args *a) {
    const char *file = a->file;
    const int json = a->json;
    pw_context *ctx = pw_cli_context("inspect", 0, 1);
    if (ctx == NULL) return PW_EXIT_USAGE;
    pw_gguf_open_options o;
    pw_gguf_open_options_init(&o);
    o.no_mmap = 1; /* inspect reads only the header */
    pw_gguf *g = NULL;
    int rc = PW_EXIT_OK;
    pw_status st = pw_gguf_open(ctx, file, &o, &g);
    if (st == PW_OK) st = inspect(ctx, stdout, file, g, json);
    if (st != PW_OK)
        rc = pw_cli_fail("inspect", "%s: %s", pw_status_str(st), pw_context_message(ctx));
    else if (fflush(stdout) != 0)
        rc = pw_cli_fail("inspect", "%s: cannot write the output", file);
    pw_gguf_close(g);
    pw_context_destroy(ctx);
    return rc;
}
