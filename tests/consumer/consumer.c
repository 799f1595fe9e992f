/* Consumer of an installed packwise: quantize a 7 x 96 weight, x * W^T, compare with decode-and-dot. */
#include <packwise.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

int main(void) {
    if (strcmp(pw_version(), PW_VERSION) != 0) {
        fprintf(stderr, "header %s but library %s\n", PW_VERSION, pw_version());
        return 1;
    }
    pw_context *ctx = NULL;
    if (pw_context_create(NULL, &ctx) != PW_OK) return 1;
    enum { OUT = 7, IN = 96 };
    float w[OUT * IN], x[IN], wd[OUT * IN], y[OUT];
    for (int i = 0; i < OUT * IN; ++i) w[i] = sinf((float)i * 0.37f);
    for (int i = 0; i < IN; ++i) x[i] = cosf((float)i * 0.11f);
    unsigned char q[OUT * 3 * 18];
    pw_view v;
    const int64_t shape[2] = {OUT, IN};
    pw_weight *h = NULL;
    int rc = 1;
    if (pw_format_quantize(ctx, PW_FORMAT_Q4_0, w, OUT * 3, q) == PW_OK &&
        pw_view_init(ctx, &v, PW_FORMAT_Q4_0, 2, shape, PW_LAYOUT_ROW_MAJOR, q, sizeof q) == PW_OK &&
        pw_view_to_float(ctx, &v, wd, OUT * IN) == PW_OK && pw_weight_create(ctx, &v, NULL, &h) == PW_OK &&
        pw_matmul_wt(ctx, x, 1, h, y) == PW_OK) {
        rc = 0;
        for (int o = 0; o < OUT; ++o) {
            double ref = 0, mag = 0;
            for (int k = 0; k < IN; ++k) {
                ref += (double)wd[o * IN + k] * x[k];
                mag += fabs((double)wd[o * IN + k] * x[k]);
            }
            if (fabs(y[o] - ref) > 0.01 * mag) rc = 1;
        }
    }
    if (rc) fprintf(stderr, "consumer failed: %s\n", pw_context_message(ctx));
    else printf("packwise %s consumer ok\n", pw_version());
    pw_weight_destroy(h);
    pw_context_destroy(ctx);
    return rc;
}
