"""ctypes mirror of the C ABI used by the binding (include/packwise/*.h).

Structs are declared field by field in the header's order; ctypes applies the
C alignment rules of the platform, as the compiler does."""
import ctypes

# pw_order: no order is 0 (a zeroed layout names none and is refused)
ORDERS = {"canonical": 1, "row_major": 1, "kernel": 2, "input_block_major": 2, "row_tiled": 3}
ORIENT_AS_STORED, ORIENT_OUT_IN = 0, 1


class Layout(ctypes.Structure):
    _fields_ = [("order", ctypes.c_int), ("tile_rows", ctypes.c_int64)]


class View(ctypes.Structure):
    _fields_ = [("format", ctypes.c_int), ("rank", ctypes.c_int32),
                ("shape", ctypes.c_int64 * 4), ("strides", ctypes.c_int64 * 4),
                ("offset", ctypes.c_int64), ("block_axis", ctypes.c_int32),
                ("tile_rows", ctypes.c_int64), ("tile_stride", ctypes.c_int64),
                ("data", ctypes.c_void_p), ("data_bytes", ctypes.c_uint64),
                ("storage", ctypes.c_int), ("name", ctypes.c_char_p),
                ("source_id", ctypes.c_uint64 * 2)]


class GGUFOpenOptions(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_size_t), ("orientation", ctypes.c_int), ("no_mmap", ctypes.c_int)]


class WeightOptions(ctypes.Structure):
    """pw_weight_options, whole: pw_weight_options_init writes every field."""
    _fields_ = [("struct_size", ctypes.c_size_t), ("kernel", ctypes.c_char_p),
                ("cache", ctypes.c_void_p), ("policy", ctypes.c_int), ("serves", ctypes.c_uint32),
                ("min", ctypes.c_float), ("max", ctypes.c_float),
                ("bias", ctypes.POINTER(ctypes.c_float))]


class FormatInfo(ctypes.Structure):
    _fields_ = [("format", ctypes.c_int), ("name", ctypes.c_char_p), ("gguf_type", ctypes.c_int32),
                ("block_size", ctypes.c_int32), ("block_bytes", ctypes.c_int32)]


class TensorInfo(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("gguf_type", ctypes.c_uint32),
                ("format_known", ctypes.c_int), ("format", ctypes.c_int),
                ("n_dims", ctypes.c_int32), ("ne", ctypes.c_int64 * 4), ("rank", ctypes.c_int32),
                ("shape", ctypes.c_int64 * 4), ("offset", ctypes.c_uint64),
                ("bytes", ctypes.c_uint64), ("info_offset", ctypes.c_uint64)]


class BlockGrid(ctypes.Structure):
    _fields_ = [("rows", ctypes.c_int64), ("blocks_per_row", ctypes.c_int64),
                ("block_bytes", ctypes.c_int64), ("layout", Layout)]


class DisagreementReport(ctypes.Structure):
    _fields_ = [("kind", ctypes.c_int), ("row", ctypes.c_int64), ("block", ctypes.c_int64),
                ("expected_flat", ctypes.c_int64), ("found_row", ctypes.c_int64),
                ("found_block", ctypes.c_int64), ("byte_index", ctypes.c_int64),
                ("length", ctypes.c_uint64), ("expected_length", ctypes.c_uint64),
                ("other_layout", ctypes.c_int), ("message", ctypes.c_char * 512)]


class TraceEvent(ctypes.Structure):
    """pw_trace_event (base.h): strings valid only during the callback."""
    _fields_ = [("kind", ctypes.c_int), ("tensor", ctypes.c_char_p), ("kernel", ctypes.c_char_p),
                ("key", ctypes.c_char_p), ("bytes", ctypes.c_uint64), ("from_", ctypes.c_char_p),
                ("to", ctypes.c_char_p), ("reason", ctypes.c_char_p)]


#: pw_trace_fn: void (*)(void *user, const pw_trace_event *event)
TRACE_FN = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.POINTER(TraceEvent))
TRACE_KINDS = ("kernel", "adapter", "fallback", "cache", "warning")


class Allocator(ctypes.Structure):
    _fields_ = [("alloc", ctypes.c_void_p), ("free", ctypes.c_void_p), ("user", ctypes.c_void_p)]


class ContextOptions(ctypes.Structure):
    """pw_context_options, whole: pw_context_options_init writes every field. The
    allocator and parallel-for hooks stay NULL (the library's own)."""
    _fields_ = [("struct_size", ctypes.c_size_t), ("max_isa", ctypes.c_int), ("ignore_env", ctypes.c_int),
                ("threads", ctypes.c_int), ("prepack_weights", ctypes.c_int), ("trace", TRACE_FN),
                ("trace_user", ctypes.c_void_p), ("allocator", Allocator),
                ("parallel_for", ctypes.c_void_p), ("parallel_for_user", ctypes.c_void_p),
                ("memory_policy", ctypes.c_int), ("spin_wait", ctypes.c_int)]


# pw_serve bits, pw_dtype values, pw_weight_kind values, pw_qc4w_flag bits
SERVE_GEMV, SERVE_GEMM = 1, 2
DTYPE_F32, DTYPE_F16, DTYPE_BF16 = 0, 1, 2
WEIGHT_KINDS = ("blocks", "qc4w", "qb4w")
QC4W_TRANSPOSED = 1
QB4W_TRANSPOSED = 1
QB4W_ZERO_CONST, QB4W_ZERO_U4, QB4W_ZERO_U8 = 1, 2, 3


class WeightInfo(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_size_t), ("name", ctypes.c_char_p), ("kind", ctypes.c_int),
                ("out", ctypes.c_int64), ("in_", ctypes.c_int64), ("policy", ctypes.c_int),
                ("kernel_gemv", ctypes.c_char_p), ("kernel_gemm", ctypes.c_char_p),
                ("source_bytes", ctypes.c_uint64), ("packed_bytes", ctypes.c_uint64),
                ("forms", ctypes.c_int32), ("reads_source", ctypes.c_int32),
                ("prepared", ctypes.c_int32), ("from_cache", ctypes.c_int32)]


class RunArgs(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_size_t), ("n", ctypes.c_int64), ("x", ctypes.c_void_p),
                ("ldx", ctypes.c_int64), ("y", ctypes.c_void_p), ("y_type", ctypes.c_int),
                ("ldy", ctypes.c_int64), ("x_type", ctypes.c_int), ("beta", ctypes.c_float),
                ("threads", ctypes.c_int), ("parallel_for", ctypes.c_void_p),
                ("parallel_for_user", ctypes.c_void_p)]


class Product(ctypes.Structure):
    """pw_product: one weight of pw_matmul_wt_many and where its Y goes."""
    _fields_ = [("weight", ctypes.c_void_p), ("y", ctypes.c_void_p), ("ldy", ctypes.c_int64)]


class QC4WWeights(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_size_t), ("out", ctypes.c_int64), ("in_", ctypes.c_int64),
                ("data", ctypes.c_void_p), ("scale", ctypes.c_void_p), ("bias", ctypes.c_void_p),
                ("zero_point", ctypes.c_int32), ("flags", ctypes.c_uint32), ("name", ctypes.c_char_p)]


class QB4WWeights(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_size_t), ("out", ctypes.c_int64), ("in_", ctypes.c_int64),
                ("block_size", ctypes.c_int32), ("data", ctypes.c_void_p), ("scales", ctypes.c_void_p),
                ("scale_type", ctypes.c_int), ("zero_kind", ctypes.c_int), ("zero_point", ctypes.c_int32),
                ("zero_points", ctypes.c_void_p), ("bias", ctypes.c_void_p), ("flags", ctypes.c_uint32),
                ("name", ctypes.c_char_p)]


def declare(lib):
    """Set argument and result types of every function the binding calls."""
    P, I, I64, U64, S = ctypes.c_void_p, ctypes.c_int, ctypes.c_int64, ctypes.c_uint64, ctypes.c_char_p
    sig = {
        "pw_status_name": (S, [I]),
        "pw_context_create": (I, [ctypes.POINTER(ContextOptions), ctypes.POINTER(P)]),
        "pw_context_destroy": (None, [P]),
        "pw_context_message": (S, [P]),
        "pw_context_clear_message": (None, [P]),
        "pw_last_create_message": (S, []),
        "pw_version": (S, []),
        "pw_format_get": (ctypes.POINTER(FormatInfo), [I]),
        "pw_format_from_name": (I, [S, ctypes.POINTER(I)]),
        "pw_bytes_reorder": (I, [P, ctypes.POINTER(BlockGrid), P, U64, Layout, P, U64]),
        "pw_fixture_bytes": (I, [P, I, I64, I64, ctypes.POINTER(U64)]),
        "pw_fixture_tags": (I, [P, I, I64, I64, Layout, P, U64]),
        "pw_fixture_values": (I, [P, I, P, ctypes.POINTER(U64), ctypes.POINTER(ctypes.c_float),
                                  ctypes.POINTER(U64), ctypes.POINTER(I64), ctypes.POINTER(I64)]),
        "pw_disagreement": (I, [P, P, U64, I, I64, I64, Layout, ctypes.POINTER(DisagreementReport)]),
        "pw_gguf_open_options_init": (None, [ctypes.POINTER(GGUFOpenOptions)]),
        "pw_gguf_open": (I, [P, S, ctypes.POINTER(GGUFOpenOptions), ctypes.POINTER(P)]),
        "pw_gguf_close": (None, [P]),
        "pw_gguf_tensor_count": (I64, [P]),
        "pw_gguf_tensor_info_get": (I, [P, P, I64, ctypes.POINTER(TensorInfo)]),
        "pw_gguf_find_tensor": (I, [P, P, S, ctypes.POINTER(I64)]),
        "pw_gguf_tensor_view": (I, [P, P, I64, ctypes.POINTER(View)]),
        "pw_gguf_tensor_read": (I, [P, P, I64, P, U64]),
        "pw_view_init": (I, [P, ctypes.POINTER(View), I, ctypes.c_int32, ctypes.POINTER(I64), Layout, P, U64]),
        "pw_view_to_float": (I, [P, ctypes.POINTER(View), ctypes.POINTER(ctypes.c_float), ctypes.c_size_t]),
        "pw_weight_options_init": (None, [ctypes.POINTER(WeightOptions)]),
        "pw_weight_create": (I, [P, ctypes.POINTER(View), ctypes.POINTER(WeightOptions), ctypes.POINTER(P)]),
        "pw_weight_destroy": (None, [P]),
        "pw_matmul_wt": (I, [P, ctypes.POINTER(ctypes.c_float), I64, P, ctypes.POINTER(ctypes.c_float)]),
        "pw_context_options_init": (None, [ctypes.POINTER(ContextOptions)]),
        "pw_context_threads": (I, [P]),
        "pw_context_isa": (I, [P]),
        "pw_context_memory_policy": (I, [P]),
        "pw_isa_name": (S, [I]),
        "pw_isa_from_name": (I, [S, ctypes.POINTER(I)]),
        "pw_memory_policy_name": (S, [I]),
        "pw_memory_policy_from_name": (I, [S, ctypes.POINTER(I)]),
        "pw_trace_format": (ctypes.c_size_t, [ctypes.POINTER(TraceEvent), ctypes.c_char_p, ctypes.c_size_t]),
        "pw_weight_create_qc4w": (I, [P, ctypes.POINTER(QC4WWeights), ctypes.POINTER(WeightOptions),
                                      ctypes.POINTER(P)]),
        "pw_qc4w_weights_init": (None, [ctypes.POINTER(QC4WWeights)]),
        "pw_weight_create_qb4w": (I, [P, ctypes.POINTER(QB4WWeights), ctypes.POINTER(WeightOptions),
                                      ctypes.POINTER(P)]),
        "pw_qb4w_weights_init": (None, [ctypes.POINTER(QB4WWeights)]),
        "pw_weight_prepare": (I, [P, P]),
        "pw_weight_info_get": (I, [P, ctypes.POINTER(WeightInfo)]),
        "pw_weight_bytes": (U64, [P]),
        "pw_run_args_init": (None, [ctypes.POINTER(RunArgs)]),
        "pw_weight_run": (I, [P, P, ctypes.POINTER(RunArgs)]),
        "pw_matmul_wt_many": (I, [P, P, I64, I64, ctypes.POINTER(Product), ctypes.c_size_t]),
        "pw_matmul_wt_experts": (I, [P, P, I64, I64, ctypes.POINTER(P), ctypes.c_size_t, P, P, I64]),
    }
    for name, (res, args) in sig.items():
        f = getattr(lib, name)
        f.restype = res
        f.argtypes = args
    return lib
