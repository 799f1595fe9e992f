/*
 * pw_view_prepack, the public conversion (layout/prepack.c does the copy), plus the
 * one thing only the operator's level knows: whether any kernel usable here reads the
 * result as it is. When none does (only the reference kernel would), a warning trace
 * event names the layouts the format's kernels read, at prepack time, so a converter
 * that writes bytes in an order nothing reads fast learns it then and not from a slow
 * product later (issue 14). pw_weight_create packs from any order, so the event also
 * says that the operator is the fast way for such bytes.
 */
#include "op/op.h"

#include "layout/layout_internal.h"

#include <stdio.h>
#include <string.h>

/* The layouts this format's usable non-reference kernels read, as "a, b, c" (distinct). */
static void layouts_read(const pw_context *ctx, pw_format format, int64_t in, char *out,
                         size_t cap) {
    out[0] = '\0';
    size_t len = 0;
    for (size_t i = 0; i < pw__kernel_list_count(); ++i) {
        const pw__kernel *k = pw__kernel_list_get(i);
        if (k->info.is_reference || !pw__kernel_usable(ctx, k) ||
            !pw__kernel_reads(k, PW_WEIGHT_BLOCKS, format, in))
            continue;
        char name[64];
        if (k->info.layout == PW_LAYOUT_PACKED)
            snprintf(name, sizeof name, "packed %s", k->info.family ? k->info.family : "?");
        else if (k->info.layout == PW_LAYOUT_ROW_TILED)
            snprintf(name, sizeof name, "row_tiled_%d", (int)k->info.tile_rows);
        else
            snprintf(name, sizeof name, "%s", k->info.layout == PW_LAYOUT_BLOCKED_INPUT_MAJOR
                                                  ? "input_block_major" : "row_major");
        /* distinct: look for ", name," in ", list," */
        char probe[80], list[1024];
        snprintf(probe, sizeof probe, ", %s,", name);
        snprintf(list, sizeof list, ", %s,", out);
        if (strstr(list, probe) != NULL) continue;
        const int n = snprintf(out + len, cap - len, "%s%s", len ? ", " : "", name);
        if (n < 0 || (size_t)n >= cap - len) break;
        len += (size_t)n;
    }
}

pw_status pw_view_prepack(pw_context *ctx, const pw_view *src, pw_layout target, pw_arena *arena,
                          pw_view *out) {
    PW__TRY(pw__view_prepack(ctx, src, target, arena, out));
    const int64_t rows = out->shape[0], in = out->shape[1];
    const pw_layout got = pw__layout_normalize(target, rows);
    for (size_t i = 0; i < pw__kernel_list_count(); ++i) {
        const pw__kernel *k = pw__kernel_list_get(i);
        if (!k->info.is_reference && pw__kernel_usable(ctx, k) &&
            pw__kernel_reads(k, PW_WEIGHT_BLOCKS, out->format, in) && pw__reads_layout(k, got))
            return PW_OK;
    }
    /* One block per row is every order at once: whatever reads row-major reads it. */
    if (in / pw_format_get(out->format)->block_size == 1)
        for (size_t i = 0; i < pw__kernel_list_count(); ++i) {
            const pw__kernel *k = pw__kernel_list_get(i);
            if (!k->info.is_reference && pw__kernel_usable(ctx, k) &&
                pw__kernel_reads(k, PW_WEIGHT_BLOCKS, out->format, in) &&
                k->info.layout == PW_LAYOUT_BLOCKED_ROW_MAJOR)
                return PW_OK;
        }
    char lname[32], kinds[512], reason[768];
    layouts_read(ctx, out->format, in, kinds, sizeof kinds);
    snprintf(reason, sizeof reason,
             "no kernel usable at %s reads %s %s as it is: a product over this view runs the "
             "reference kernel. Kernels here read %s; pw_weight_create packs a view in any order "
             "into the form they read",
             pw_isa_name(pw_context_isa(ctx)), pw_format_get(out->format)->name,
             pw_layout_name(got, lname, sizeof lname), kinds[0] ? kinds : "nothing but the reference");
    pw_trace_event e;
    memset(&e, 0, sizeof e);
    e.kind = PW_TRACE_WARNING;
    e.tensor = src->name;
    e.reason = reason;
    pw__trace(ctx, &e);
    return PW_OK;
}
