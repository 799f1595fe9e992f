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


def declare(lib):
    """Set argument and result types of every function the binding calls."""
    P, I, I64, U64, S = ctypes.c_void_p, ctypes.c_int, ctypes.c_int64, ctypes.c_uint64, ctypes.c_char_p
    sig = {
        "pw_status_name": (S, [I]),
        "pw_context_create": (I, [P, ctypes.POINTER(P)]),
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
    }
    for name, (res, args) in sig.items():
        f = getattr(lib, name)
        f.restype = res
        f.argtypes = args
    return lib
