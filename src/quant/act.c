/* Activation quantizers: f32 rows to the int8 block forms kernels consume (see act.h). */
#include "quant/act.h"

#include "base/internal.h"

#include <math.h>
#include <string.h>

int64_t pw__act_block_size(pw_activation a) {
    switch (a) {
    case PW_ACT_Q8_32: return 32;
    case PW_ACT_Q8_256: return 256;
    case PW_ACT_QD8:
    case PW_ACT_F32: return 1;
    }
    return 1;
}

size_t pw__act_block_bytes(pw_activation a) {
    switch (a) {
    case PW_ACT_Q8_32: return sizeof(pw__q8_32);
    case PW_ACT_Q8_256: return sizeof(pw__q8_256);
    case PW_ACT_QD8: return 0;
    case PW_ACT_F32: return sizeof(float);
    }
    return sizeof(float);
}

size_t pw__act_row_bytes(pw_activation a, int64_t in) {
    if (in < 1 || in > INT64_MAX / 8) return 0;
    if (a == PW_ACT_QD8) return pw__qd8_row_bytes(pw__qd8_k_padded(in));
    size_t bytes;
    if (__builtin_mul_overflow((size_t)(in / pw__act_block_size(a)), pw__act_block_bytes(a), &bytes))
        return 0;
    return bytes;
}

/* Quantize n (a multiple of 16) values with one scale; returns d, fills qs/qu. */
static float quantize_block(const float *x, int n, int8_t *qs, uint8_t *qu) {
    float amax = 0.0f;
    for (int k = 0; k < n; ++k) {
        float a = fabsf(x[k]);
        amax = a > amax ? a : amax;
    }
    const float d = amax / 127.0f;
    const float id = d > 0.0f ? 1.0f / d : 0.0f;
    for (int k = 0; k < n; ++k) {
        /* id is +inf when amax is below ~127 / FLT_MAX: then 0 * id is NaN, which
         * becomes 0 here rather than an undefined conversion (quant/x86 agrees). */
        float v = nearbyintf(x[k] * id);
        v = v > 127.0f ? 127.0f : (v < -127.0f ? -127.0f : (v == v ? v : 0.0f));
        qs[k] = (int8_t)v;
        qu[k] = (uint8_t)(qs[k] + 128);
    }
    return d;
}

void pw__act_quantize_row(pw_activation a, const float *x, int64_t in, void *dst) {
    if (a == PW_ACT_Q8_32) {
        pw__q8_32 *b = dst;
        for (int64_t j = 0; j < in / 32; ++j, x += 32) {
            memset(&b[j], 0, offsetof(pw__q8_32, qs));
            b[j].d = quantize_block(x, 32, b[j].qs, b[j].qu);
            int32_t s = 0;
            for (int k = 0; k < 32; ++k) s += b[j].qs[k];
            b[j].sum = s;
            b[j].dsum = b[j].d * (float)s;
        }
    } else if (a == PW_ACT_Q8_256) {
        pw__q8_256 *b = dst;
        for (int64_t j = 0; j < in / 256; ++j, x += 256) {
            memset(&b[j], 0, offsetof(pw__q8_256, qs));
            b[j].d = quantize_block(x, 256, b[j].qs, b[j].qu);
            int32_t s = 0;
            for (int g = 0; g < 16; ++g) {
                int32_t gs = 0;
                for (int k = 0; k < 16; ++k) gs += b[j].qs[g * 16 + k];
                b[j].bsums[g] = (int16_t)gs;
                s += gs;
            }
            b[j].sum = s;
        }
    } else {
        memcpy(dst, x, sizeof(float) * (size_t)in);
    }
}

typedef struct quantize_job {
    const pw__act_forms *forms; /* the ISA's quantizers, or NULL: the scalar ones */
    pw__qd8_row_fn qd8; /* QD8 rows: this quantizer */
    pw_activation a;
    const float *x;
    int64_t ldx, n, in, rows_per_task;
    uint8_t *dst;
    size_t row_bytes;
    const uint16_t *xh; /* f16 or bf16 rows instead of x (x NULL), of type t */
    pw_dtype t;
} quantize_job;

/* One row of `in` values in block form q->a: the ISA's quantizer of that form, else
 * the scalar one (the same bytes either way). */
static void quantize_blocks(const quantize_job *q, const float *x, int64_t in, void *dst) {
    if (q->forms != NULL && q->a == PW_ACT_Q8_32)
        q->forms->q8_32(x, in, dst);
    else if (q->forms != NULL && q->a == PW_ACT_Q8_256)
        q->forms->q8_256(x, in, dst);
    else
        pw__act_quantize_row(q->a, x, in, dst);
}

/* f16 or bf16 values as f32 (exact). */
static void half_to_f32(const uint16_t *h, pw_dtype t, int64_t n, float *out) {
    if (t == PW_DTYPE_F16)
        for (int64_t k = 0; k < n; ++k) out[k] = pw_f16_to_f32(h[k]);
    else
        for (int64_t k = 0; k < n; ++k) out[k] = pw_bf16_to_f32(h[k]);
}

/* One f16/bf16 row, PW__ACT_CHUNK values at a time through an L1 buffer: the same
 * bytes as the f32 row of the same values (the block quantizers see whole blocks;
 * QD8 scans every chunk for the row's range, then quantizes every chunk). */
static void quantize_half_row(const quantize_job *q, const uint16_t *x, uint8_t *dst) {
    float tmp[PW__ACT_CHUNK];
    if (q->qd8 == NULL) {
        const int64_t bs = pw__act_block_size(q->a);
        const size_t bb = pw__act_block_bytes(q->a);
        for (int64_t c = 0; c < q->in; c += PW__ACT_CHUNK) {
            const int64_t m = q->in - c < PW__ACT_CHUNK ? q->in - c : PW__ACT_CHUNK;
            half_to_f32(x + c, q->t, m, tmp);
            quantize_blocks(q, tmp, m, dst + (size_t)(c / bs) * bb);
        }
        return;
    }
    const int64_t kp = pw__qd8_k_padded(q->in);
    pw__qd8_range r = {0.0f, 0.0f, -1};
    for (int64_t c = 0; c < q->in; c += PW__ACT_CHUNK) {
        const int64_t m = q->in - c < PW__ACT_CHUNK ? q->in - c : PW__ACT_CHUNK;
        half_to_f32(x + c, q->t, m, tmp);
        pw__qd8_scan(tmp, m, c, &r);
    }
    float inv;
    int32_t zp;
    if (!pw__qd8_begin(dst, &r, &inv, &zp)) return;
    int8_t *qs = (int8_t *)(dst + sizeof(pw__qd8_header));
    uint8_t *qu = dst + sizeof(pw__qd8_header) + (size_t)kp;
    int32_t sum = 0;
    for (int64_t c = 0; c < q->in; c += PW__ACT_CHUNK) {
        const int64_t m = q->in - c < PW__ACT_CHUNK ? q->in - c : PW__ACT_CHUNK;
        half_to_f32(x + c, q->t, m, tmp);
        sum += pw__qd8_fill(tmp, m, inv, zp, qs + c, qu + c);
    }
    pw__qd8_end(dst, q->in, kp, sum);
}

static void quantize_task(void *p, size_t t) {
    const quantize_job *q = p;
    const int64_t i0 = (int64_t)t * q->rows_per_task;
    const int64_t i1 = i0 + q->rows_per_task < q->n ? i0 + q->rows_per_task : q->n;
    if (q->xh != NULL) {
        for (int64_t i = i0; i < i1; ++i) quantize_half_row(q, q->xh + i * q->ldx, q->dst + (size_t)i * q->row_bytes);
        return;
    }
    if (q->qd8 != NULL) {
        const int64_t kp = pw__qd8_k_padded(q->in);
        for (int64_t i = i0; i < i1; ++i)
            q->qd8(q->x + i * q->ldx, q->in, kp, q->dst + (size_t)i * q->row_bytes);
        return;
    }
    for (int64_t i = i0; i < i1; ++i) quantize_blocks(q, q->x + i * q->ldx, q->in, q->dst + (size_t)i * q->row_bytes);
}

const pw__act_forms *pw__act_forms_for(const pw_context *ctx) {
#if defined(__x86_64__)
    const uint32_t have = pw_context_usable_features(ctx);
    const uint32_t need = PW_CPU_AVX512F | PW_CPU_AVX512BW;
    if ((have & need) == need) return &pw__act_forms_avx512;
    if (have & PW_CPU_AVX2) return &pw__act_forms_avx2;
#else
    (void)ctx;
#endif
    return NULL;
}

void pw__act_quantize_rows(pw_context *ctx, pw_activation a, const void *x, pw_dtype t, int64_t ldx,
                           int64_t n, int64_t in, void *dst, size_t row_bytes) {
    quantize_job q = {pw__act_forms_for(ctx), a == PW_ACT_QD8 ? pw__qd8_quantize_row : NULL, a,
                      t == PW_DTYPE_F32 ? x : NULL, ldx, n, in, n, dst, row_bytes,
                      t == PW_DTYPE_F32 ? NULL : x, t};
    if (q.forms != NULL && q.qd8 != NULL) q.qd8 = q.forms->qd8;
    /* Split only GEMM-sized work: it is serial time in front of the threaded kernel. */
    const int64_t threads = pw__threads(ctx);
    if (threads > 1 && n > 1 && n * in >= (int64_t)1 << 16) {
        const int64_t tasks = n < 4 * threads ? n : 4 * threads;
        q.rows_per_task = (n + tasks - 1) / tasks;
        pw__parallel_for(ctx, quantize_task, &q, (size_t)((n + q.rows_per_task - 1) / q.rows_per_task));
        return;
    }
    quantize_task(&q, 0);
}

void pw__act_dequantize_row(pw_activation a, const void *src, int64_t in, float *dst) {
    if (a == PW_ACT_Q8_32) {
        const pw__q8_32 *b = src;
        for (int64_t j = 0; j < in / 32; ++j)
            for (int k = 0; k < 32; ++k) dst[j * 32 + k] = b[j].d * (float)b[j].qs[k];
    } else if (a == PW_ACT_Q8_256) {
        const pw__q8_256 *b = src;
        for (int64_t j = 0; j < in / 256; ++j)
            for (int k = 0; k < 256; ++k) dst[j * 256 + k] = b[j].d * (float)b[j].qs[k];
    } else {
        memcpy(dst, src, sizeof(float) * (size_t)in);
    }
}
