/*
 * A 3-D mixture-of-experts weight [E, out, in] (issue 17, item 2): pw_view_select()
 * takes one expert as a 2-D view usable wherever a 2-D weight is, and
 * pw_weight_create_experts() makes every expert's weight at once. Checked on Q4_0
 * (3 blocks a row) and Q4_K (3 super-blocks a row), E = 3:
 * - expert e's selected view decodes to expert e's own bytes, and its products (n = 1
 *   and n = 5) equal those of a weight made from those bytes alone, bit for bit;
 * - pw_weight_create_experts gives the same products, and pw_matmul_wt_experts over
 *   them (one expert with no rows) equals each expert's own product;
 * - selecting axis 1 gives row r of every expert;
 * - in steady state pw_matmul_wt_experts allocates nothing (a counting allocator);
 * - refusals: the block axis, an index outside the axis, a rank-1 view, a 3-D view
 *   given to pw_weight_create (the message names pw_view_select), a count other than E
 *   (and then every experts[e] is NULL).
 */
#include "pw_test.h"

enum { E = 3, OUT = 8, N = 5 };

/* The context's allocator, counting. */
static int g_allocs;
static void *count_alloc(void *user, size_t bytes, size_t alignment) {
    (void)user;
    ++g_allocs;
    void *p = NULL;
    return posix_memalign(&p, alignment < sizeof(void *) ? sizeof(void *) : alignment, bytes) == 0 ? p : NULL;
}
static void count_free(void *user, void *p) {
    (void)user;
    free(p);
}

static void check_format(pw_context *ctx, pw_format f) {
    const pw_format_info *fi = pw_format_get(f);
    const int64_t in = 3 * (fi->block_size >= 256 ? 256 : 32);
    const int64_t blocks = OUT * in / fi->block_size;
    const size_t eb = (size_t)blocks * fi->block_bytes; /* bytes of one expert */
    float *wf = malloc(sizeof(float) * (size_t)(E * OUT * in));
    uint8_t *bytes = malloc(E * eb);
    REQUIRE(wf && bytes, "malloc");
    pw_rng r = {7 + (uint64_t)f};
    for (int64_t i = 0; i < E * OUT * in; ++i) wf[i] = (float)pw_rng_gauss(&r) * 0.1f;
    CHECK_OK(pw_format_quantize(ctx, f, wf, (size_t)(E * blocks), bytes), ctx);
    pw_view v3;
    const int64_t shape3[3] = {E, OUT, in};
    CHECK_OK(pw_view_init(ctx, &v3, f, 3, shape3, PW_LAYOUT_ROW_MAJOR, bytes, E * eb), ctx);
    v3.name = "exps";

    float *x = malloc(sizeof(float) * (size_t)(N * in));
    float *dec = malloc(sizeof(float) * (size_t)(OUT * in)), *own = malloc(sizeof(float) * (size_t)(OUT * in));
    float ya[N * OUT], yb[N * OUT], yc[N * OUT];
    for (int64_t i = 0; i < N * in; ++i) x[i] = (float)pw_rng_gauss(&r);
    pw_weight *experts[E];
    CHECK_OK(pw_weight_create_experts(ctx, &v3, NULL, experts, E), ctx);
    for (int e = 0; e < E; ++e) {
        pw_view one, alone;
        CHECK_OK(pw_view_select(ctx, &v3, 0, e, &one), ctx);
        CHECK(one.rank == 2 && one.shape[0] == OUT && one.shape[1] == in && one.block_axis == 1,
              "%s expert %d: selected rank %d [%lld, %lld]", fi->name, e, (int)one.rank,
              (long long)one.shape[0], (long long)one.shape[1]);
        const int64_t shape2[2] = {OUT, in};
        CHECK_OK(pw_view_init(ctx, &alone, f, 2, shape2, PW_LAYOUT_ROW_MAJOR, bytes + e * eb, eb), ctx);
        CHECK_OK(pw_view_to_float(ctx, &one, dec, (size_t)(OUT * in)), ctx);
        CHECK_OK(pw_view_to_float(ctx, &alone, own, (size_t)(OUT * in)), ctx);
        CHECK(memcmp(dec, own, sizeof(float) * (size_t)(OUT * in)) == 0,
              "%s expert %d: the selected view decodes to other values", fi->name, e);
        pw_weight *wa = NULL, *wb = NULL;
        CHECK_OK(pw_weight_create(ctx, &one, NULL, &wa), ctx);
        CHECK_OK(pw_weight_create(ctx, &alone, NULL, &wb), ctx);
        for (int64_t n = 1; n <= N; n += N - 1) {
            CHECK_OK(pw_matmul_wt(ctx, x, n, wa, ya), ctx);
            CHECK_OK(pw_matmul_wt(ctx, x, n, wb, yb), ctx);
            CHECK_OK(pw_matmul_wt(ctx, x, n, experts[e], yc), ctx);
            CHECK(memcmp(ya, yb, sizeof(float) * (size_t)(n * OUT)) == 0 &&
                      memcmp(yc, yb, sizeof(float) * (size_t)(n * OUT)) == 0,
                  "%s expert %d, n = %lld: products differ", fi->name, e, (long long)n);
        }
        pw_weight_destroy(wa);
        pw_weight_destroy(wb);
    }
    /* routed rows: expert 1 gets none */
    const int32_t route[N] = {0, 2, 2, 0, 2};
    float yr[N * OUT], want[OUT];
    for (int i = 0; i < N * OUT; ++i) yr[i] = -5.0f;
    CHECK_OK(pw_matmul_wt_experts(ctx, x, N, in, (const pw_weight *const *)experts, E, route, yr, OUT),
             ctx);
    for (int i = 0; i < N; ++i) {
        CHECK_OK(pw_matmul_wt(ctx, x + i * in, 1, experts[route[i]], want), ctx);
        CHECK(memcmp(want, yr + i * OUT, sizeof want) == 0, "%s: routed row %d", fi->name, i);
    }
    /* steady state: the same routing again allocates nothing */
    CHECK_OK(pw_matmul_wt_experts(ctx, x, N, in, (const pw_weight *const *)experts, E, route, yr, OUT),
             ctx);
    const int before = g_allocs;
    for (int rep = 0; rep < 3; ++rep)
        CHECK_OK(pw_matmul_wt_experts(ctx, x, N, in, (const pw_weight *const *)experts, E, route, yr, OUT),
                 ctx);
    CHECK(g_allocs == before, "%s: pw_matmul_wt_experts made %d allocations in 3 warm calls", fi->name,
          g_allocs - before);
    for (int e = 0; e < E; ++e) pw_weight_destroy(experts[e]);

    /* axis 1: row 5 of every expert */
    pw_view rows;
    CHECK_OK(pw_view_select(ctx, &v3, 1, 5, &rows), ctx);
    CHECK(rows.rank == 2 && rows.shape[0] == E && rows.shape[1] == in, "%s: axis-1 select shape",
          fi->name);
    float *rf = malloc(sizeof(float) * (size_t)(E * in)), *all = malloc(sizeof(float) * (size_t)(E * OUT * in));
    CHECK_OK(pw_view_to_float(ctx, &rows, rf, (size_t)(E * in)), ctx);
    CHECK_OK(pw_view_to_float(ctx, &v3, all, (size_t)(E * OUT * in)), ctx);
    int same = 1;
    for (int e = 0; e < E; ++e)
        same &= memcmp(rf + e * in, all + (e * OUT + 5) * in, sizeof(float) * (size_t)in) == 0;
    CHECK(same, "%s: axis-1 select is not row 5 of every expert", fi->name);
    free(rf);
    free(all);

    /* refusals */
    pw_view bad;
    CHECK_STATUS(pw_view_select(ctx, &v3, 2, 0, &bad), PW_ERR_SHAPE, ctx);
    CHECK_STATUS(pw_view_select(ctx, &v3, 0, E, &bad), PW_ERR_SHAPE, ctx);
    CHECK_STATUS(pw_view_select(ctx, &v3, 0, -1, &bad), PW_ERR_SHAPE, ctx);
    CHECK_STATUS(pw_view_select(ctx, &v3, 3, 0, &bad), PW_ERR_SHAPE, ctx);
    pw_view one, flat;
    CHECK_OK(pw_view_select(ctx, &v3, 0, 1, &one), ctx);
    CHECK_OK(pw_view_select(ctx, &one, 0, 2, &flat), ctx);
    CHECK(flat.rank == 1 && flat.shape[0] == in, "%s: a row of an expert", fi->name);
    CHECK_STATUS(pw_view_select(ctx, &flat, 0, 0, &bad), PW_ERR_SHAPE, ctx);
    pw_weight *w3 = NULL;
    CHECK_STATUS(pw_weight_create(ctx, &v3, NULL, &w3), PW_ERR_SHAPE, ctx);
    CHECK(strstr(pw_context_message(ctx), "pw_view_select") != NULL, "message: %s", pw_context_message(ctx));
    pw_weight *few[E] = {(pw_weight *)ctx, (pw_weight *)ctx, (pw_weight *)ctx};
    CHECK_STATUS(pw_weight_create_experts(ctx, &v3, NULL, few, E - 1), PW_ERR_SHAPE, ctx);
    CHECK(few[0] == NULL && few[1] == NULL, "%s: a refused create_experts left weights", fi->name);
    CHECK_STATUS(pw_weight_create_experts(ctx, &one, NULL, few, E), PW_ERR_SHAPE, ctx);
    free(x);
    free(dec);
    free(own);
    free(wf);
    free(bytes);
}

int main(void) {
    pw_context_options o;
    pw_context_options_init(&o);
    o.threads = 1;
    o.allocator = (pw_allocator){count_alloc, count_free, NULL};
    pw_context *ctx = NULL;
    CHECK_OK(pw_context_create(&o, &ctx), NULL);
    REQUIRE(ctx != NULL, "context");
    check_format(ctx, PW_FORMAT_Q4_0);
    check_format(ctx, PW_FORMAT_Q4_K);
    pw_context_destroy(ctx);
    return pw_test_finish();
}
