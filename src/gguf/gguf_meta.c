/*
 * Metadata access. A pw_gguf_value is a small handle (type, count, file
 * offset, node); fixed-size values are decoded from the file bytes on demand
 * (little-endian, unaligned), strings come from the handle's pool where they
 * were copied with a terminating NUL at open.
 */
#include "gguf/gguf_internal.h"

#include <inttypes.h>

int64_t pw_gguf_kv_count(const pw_gguf *g) { return g ? g->n_kv : 0; }

static pw_gguf_value value_of_node(const pw_gguf *g, int64_t node) {
    const pw__gguf_node *n = &g->nodes[node];
    pw_gguf_value v;
    memset(&v, 0, sizeof v);
    v.type = (pw_gguf_type)n->type;
    v.array_type = (pw_gguf_type)n->array_type;
    v.count = n->count;
    v.offset = n->offset;
    v.owner_ = g;
    v.node_ = node;
    return v;
}

pw_status pw_gguf_kv_get(pw_context *ctx, const pw_gguf *g, int64_t index, const char **key,
                         uint64_t *key_len, pw_gguf_value *value) {
    PW__FAIL_IF(g == NULL, ctx, PW_ERR_INVALID_ARGUMENT, "pw_gguf_kv_get: gguf is NULL");
    PW__FAIL_IF(index < 0 || index >= g->n_kv, ctx, PW_ERR_INVALID_ARGUMENT,
                "pw_gguf_kv_get: index %" PRId64 " is outside 0..%" PRId64, index, g->n_kv - 1);
    const pw__gguf_kv *kv = &g->kvs[index];
    if (key) *key = g->pool + kv->key.at;
    if (key_len) *key_len = kv->key.len;
    if (value) *value = value_of_node(g, kv->node);
    return PW_OK;
}

pw_status pw_gguf_find_key(pw_context *ctx, const pw_gguf *g, const char *key, int64_t *index) {
    PW__FAIL_IF(g == NULL || key == NULL || index == NULL, ctx, PW_ERR_INVALID_ARGUMENT,
                "pw_gguf_find_key: NULL argument");
    const int64_t i = pw__gguf_index_find(g, &g->key_index, key, strlen(key));
    PW__FAIL_IF(i < 0, ctx, PW_ERR_NOT_FOUND, "no metadata key '%.200s' in the file", key);
    *index = i;
    return PW_OK;
}

pw_status pw_gguf_find_value(pw_context *ctx, const pw_gguf *g, const char *key,
                             pw_gguf_value *value) {
    int64_t i = -1;
    PW__TRY(pw_gguf_find_key(ctx, g, key, &i));
    return pw_gguf_kv_get(ctx, g, i, NULL, NULL, value);
}

/* A handle is a public struct: check it still points inside its owner. */
static pw_status check_handle(pw_context *ctx, const pw_gguf_value *v, pw_gguf_type want) {
    PW__FAIL_IF(v == NULL || v->owner_ == NULL, ctx, PW_ERR_INVALID_ARGUMENT,
                "metadata value handle is NULL or was not filled by pw_gguf_kv_get");
    PW__FAIL_IF(v->type != want, ctx, PW_ERR_INVALID_ARGUMENT,
                "metadata value at byte offset %" PRIu64 " is %s, not %s", v->offset,
                pw_gguf_type_name(v->type), pw_gguf_type_name(want));
    const pw_gguf *g = v->owner_;
    const size_t fixed = pw__gguf_fixed_size((uint32_t)want);
    uint64_t end;
    const bool bad_node = v->node_ >= g->n_nodes || (v->node_ < 0 && fixed == 0);
    const bool bad_bytes = fixed && (pw__add_overflow_u64(v->offset, fixed, &end) ||
                                     end > g->base_size);
    PW__FAIL_IF(bad_node || bad_bytes, ctx, PW_ERR_INVALID_ARGUMENT,
                "metadata value handle at byte offset %" PRIu64 " does not belong to its file",
                v->offset);
    return PW_OK;
}

/* The payload of a fixed-size value of type `want`, after checking handle and out. */
static pw_status fixed_payload(pw_context *ctx, const pw_gguf_value *v, pw_gguf_type want,
                               const void *out, const uint8_t **p) {
    PW__TRY(check_handle(ctx, v, want));
    PW__FAIL_IF(out == NULL, ctx, PW_ERR_INVALID_ARGUMENT, "metadata getter: out is NULL");
    *p = v->owner_->base + v->offset;
    return PW_OK;
}

pw_status pw__gguf_value_payload(pw_context *ctx, const pw_gguf_value *v, const uint8_t **p) {
    PW__FAIL_IF(v == NULL || pw__gguf_fixed_size((uint32_t)v->type) == 0, ctx,
                PW_ERR_INVALID_ARGUMENT, "metadata value is NULL or not of a fixed-size type");
    return fixed_payload(ctx, v, v->type, p, p);
}

pw_status pw_gguf_value_u8(pw_context *ctx, const pw_gguf_value *v, uint8_t *out) {
    const uint8_t *p = NULL;
    PW__TRY(fixed_payload(ctx, v, PW_GGUF_TYPE_UINT8, out, &p));
    *out = p[0];
    return PW_OK;
}

pw_status pw_gguf_value_i8(pw_context *ctx, const pw_gguf_value *v, int8_t *out) {
    const uint8_t *p = NULL;
    PW__TRY(fixed_payload(ctx, v, PW_GGUF_TYPE_INT8, out, &p));
    *out = (int8_t)p[0];
    return PW_OK;
}

pw_status pw_gguf_value_u16(pw_context *ctx, const pw_gguf_value *v, uint16_t *out) {
    const uint8_t *p = NULL;
    PW__TRY(fixed_payload(ctx, v, PW_GGUF_TYPE_UINT16, out, &p));
    *out = pw__le16(p);
    return PW_OK;
}

pw_status pw_gguf_value_i16(pw_context *ctx, const pw_gguf_value *v, int16_t *out) {
    const uint8_t *p = NULL;
    PW__TRY(fixed_payload(ctx, v, PW_GGUF_TYPE_INT16, out, &p));
    *out = (int16_t)pw__le16(p);
    return PW_OK;
}

pw_status pw_gguf_value_u32(pw_context *ctx, const pw_gguf_value *v, uint32_t *out) {
    const uint8_t *p = NULL;
    PW__TRY(fixed_payload(ctx, v, PW_GGUF_TYPE_UINT32, out, &p));
    *out = pw__le32(p);
    return PW_OK;
}

pw_status pw_gguf_value_i32(pw_context *ctx, const pw_gguf_value *v, int32_t *out) {
    const uint8_t *p = NULL;
    PW__TRY(fixed_payload(ctx, v, PW_GGUF_TYPE_INT32, out, &p));
    *out = (int32_t)pw__le32(p);
    return PW_OK;
}

pw_status pw_gguf_value_u64(pw_context *ctx, const pw_gguf_value *v, uint64_t *out) {
    const uint8_t *p = NULL;
    PW__TRY(fixed_payload(ctx, v, PW_GGUF_TYPE_UINT64, out, &p));
    *out = pw__le64(p);
    return PW_OK;
}

pw_status pw_gguf_value_i64(pw_context *ctx, const pw_gguf_value *v, int64_t *out) {
    const uint8_t *p = NULL;
    PW__TRY(fixed_payload(ctx, v, PW_GGUF_TYPE_INT64, out, &p));
    *out = (int64_t)pw__le64(p);
    return PW_OK;
}

pw_status pw_gguf_value_bool(pw_context *ctx, const pw_gguf_value *v, int *out) {
    const uint8_t *p = NULL;
    PW__TRY(fixed_payload(ctx, v, PW_GGUF_TYPE_BOOL, out, &p));
    *out = p[0] != 0;
    return PW_OK;
}

pw_status pw_gguf_value_f32(pw_context *ctx, const pw_gguf_value *v, float *out) {
    const uint8_t *p = NULL;
    PW__TRY(fixed_payload(ctx, v, PW_GGUF_TYPE_FLOAT32, out, &p));
    const uint32_t u = pw__le32(p);
    memcpy(out, &u, sizeof u);
    return PW_OK;
}

pw_status pw_gguf_value_f64(pw_context *ctx, const pw_gguf_value *v, double *out) {
    const uint8_t *p = NULL;
    PW__TRY(fixed_payload(ctx, v, PW_GGUF_TYPE_FLOAT64, out, &p));
    const uint64_t u = pw__le64(p);
    memcpy(out, &u, sizeof u);
    return PW_OK;
}

pw_status pw_gguf_value_string(pw_context *ctx, const pw_gguf_value *v, const char **out,
                               uint64_t *len) {
    PW__TRY(check_handle(ctx, v, PW_GGUF_TYPE_STRING));
    PW__FAIL_IF(out == NULL, ctx, PW_ERR_INVALID_ARGUMENT, "pw_gguf_value_string: out is NULL");
    const pw__gguf_node *n = &v->owner_->nodes[v->node_];
    *out = v->owner_->pool + n->aux;
    if (len) *len = n->count;
    return PW_OK;
}

pw_status pw_gguf_value_element(pw_context *ctx, const pw_gguf_value *v, uint64_t index,
                                pw_gguf_value *element) {
    PW__TRY(check_handle(ctx, v, PW_GGUF_TYPE_ARRAY));
    PW__FAIL_IF(element == NULL, ctx, PW_ERR_INVALID_ARGUMENT,
                "pw_gguf_value_element: element is NULL");
    const pw_gguf *g = v->owner_;
    const pw__gguf_node *n = &g->nodes[v->node_];
    PW__FAIL_IF(index >= n->count, ctx, PW_ERR_INVALID_ARGUMENT,
                "array at byte offset %" PRIu64 ": element %" PRIu64 " is outside 0..%" PRId64,
                n->offset, index, (int64_t)n->count - 1);
    const size_t es = pw__gguf_fixed_size(n->array_type);
    if (es == 0) {
        *element = value_of_node(g, n->aux + (int64_t)index);
        return PW_OK;
    }
    memset(element, 0, sizeof *element);
    element->type = (pw_gguf_type)n->array_type;
    element->count = 1;
    element->offset = n->offset + index * es; /* inside the array, checked at open */
    element->owner_ = g;
    element->node_ = -1;
    return PW_OK;
}

pw_status pw_gguf_value_array_data(pw_context *ctx, const pw_gguf_value *v, const void **data) {
    PW__TRY(check_handle(ctx, v, PW_GGUF_TYPE_ARRAY));
    PW__FAIL_IF(data == NULL, ctx, PW_ERR_INVALID_ARGUMENT,
                "pw_gguf_value_array_data: data is NULL");
    const pw__gguf_node *n = &v->owner_->nodes[v->node_];
    PW__FAIL_IF(pw__gguf_fixed_size(n->array_type) == 0, ctx, PW_ERR_INVALID_ARGUMENT,
                "array at byte offset %" PRIu64 " holds %s elements; read them with "
                "pw_gguf_value_element",
                n->offset, pw_gguf_type_name((pw_gguf_type)n->array_type));
    *data = v->owner_->base + n->offset;
    return PW_OK;
}
