"""packwise for converter authors: ctypes over libpackwise.so, numpy arrays out.

    import packwise
    with packwise.GGUF("model.gguf") as g:          # 2-D weights labelled [out, in]
        for t in g.tensors():
            print(t.name, t.format, t.shape)
        w = g.dequantize("blk.0.attn_q.weight")      # numpy float32, logical row-major
    kernel_bytes = packwise.to_kernel_order(canonical_bytes, "Q4_K", rows, blocks)
    assert packwise.disagreement(my_bytes, "Q4_K", rows, blocks, order="kernel") is None

The library is found through $PACKWISE_LIBRARY, then next to this package,
then the system's loader path (ctypes.util.find_library).
"""
import ctypes
import ctypes.util
import os

import numpy as np

from ._abi import (Layout, View, TensorInfo, BlockGrid, DisagreementReport, GGUFOpenOptions,
                   WeightOptions, ORDERS, ORIENT_AS_STORED, ORIENT_OUT_IN, declare)

__all__ = ["PackwiseError", "GGUF", "Tensor", "formats", "format_info", "to_kernel_order",
           "to_canonical_order", "reorder", "decode", "fixture", "value_fixture", "disagreement",
           "matmul_wt", "version"]


def _load():
    candidates = []
    if os.environ.get("PACKWISE_LIBRARY"):
        candidates.append(os.environ["PACKWISE_LIBRARY"])
    here = os.path.dirname(os.path.abspath(__file__))
    candidates.append(os.path.join(here, "libpackwise.so"))
    found = ctypes.util.find_library("packwise")
    if found:
        candidates.append(found)
    errors = []
    for c in candidates:
        try:
            return declare(ctypes.CDLL(c))
        except OSError as e:
            errors.append("%s: %s" % (c, e))
    raise OSError("libpackwise not found; set PACKWISE_LIBRARY (tried: %s)" % "; ".join(errors))


_lib = _load()


class PackwiseError(Exception):
    """A packwise call failed: .status is the pw_status name, the text says what and where."""

    def __init__(self, status, message):
        self.status = _lib.pw_status_name(status).decode()
        super().__init__("%s: %s" % (self.status, message))


class _Context:
    def __init__(self):
        self.ptr = ctypes.c_void_p()
        st = _lib.pw_context_create(None, ctypes.byref(self.ptr))
        if st != 0:
            raise PackwiseError(st, _lib.pw_last_create_message().decode(errors="replace"))

    def check(self, status):
        if status != 0:
            raise PackwiseError(status, _lib.pw_context_message(self.ptr).decode(errors="replace"))

    def __del__(self):
        if getattr(self, "ptr", None) and _lib is not None:
            _lib.pw_context_destroy(self.ptr)
            self.ptr = None


_ctx = _Context()


def version():
    return _lib.pw_version().decode()


def _format_id(name):
    f = ctypes.c_int()
    _ctx.check(_lib.pw_format_from_name(name.encode(), ctypes.byref(f)))
    return f.value


def format_info(name):
    """{'name', 'gguf_type', 'block_size', 'block_bytes'} of a format."""
    info = _lib.pw_format_get(_format_id(name)).contents
    return {"name": info.name.decode(), "gguf_type": info.gguf_type if info.gguf_type >= 0 else None,
            "block_size": info.block_size, "block_bytes": info.block_bytes}


def formats():
    """Every format's traits, as format_info gives them."""
    out, i = [], 0
    while True:
        p = _lib.pw_format_get(i)
        if not p:
            return out
        out.append(format_info(p.contents.name.decode()))
        i += 1


def _layout(order):
    if isinstance(order, Layout):
        return order
    if order in ORDERS:
        return Layout(ORDERS[order], 0)
    if isinstance(order, str) and order.startswith("row_tiled_"):
        return Layout(ORDERS["row_tiled"], int(order[len("row_tiled_"):]))
    raise ValueError("order must be 'canonical', 'kernel', 'row_major', 'input_block_major' "
                     "or 'row_tiled_N', not %r" % (order,))


def reorder(data, fmt, rows, blocks, from_order, to_order):
    """Block bytes of a rows x blocks grid, from the order they are in to another one.

    Naming the order the bytes are in makes a double permutation impossible:
    converting to the order they already have returns them unchanged."""
    data = bytes(data)
    info = format_info(fmt)
    grid = BlockGrid(rows, blocks, info["block_bytes"], _layout(from_order))
    out = ctypes.create_string_buffer(len(data))
    _ctx.check(_lib.pw_bytes_reorder(_ctx.ptr, ctypes.byref(grid), data, len(data),
                                     _layout(to_order), out, len(data)))
    return out.raw


def to_kernel_order(data, fmt, rows, blocks, order="canonical"):
    """The spec's kernel order (input-block-major) of bytes currently in `order`."""
    return reorder(data, fmt, rows, blocks, order, "kernel")


def to_canonical_order(data, fmt, rows, blocks, order="kernel"):
    """Canonical (row-major, what files hold) bytes from bytes currently in `order`."""
    return reorder(data, fmt, rows, blocks, order, "canonical")


def decode(data, fmt, rows, in_):
    """Canonical block bytes of a [rows, in] weight decoded to float32 (shape [rows, in])."""
    data = bytes(data)
    buf = ctypes.create_string_buffer(data, len(data))
    v = View()
    shape = (ctypes.c_int64 * 2)(rows, in_)
    _ctx.check(_lib.pw_view_init(_ctx.ptr, ctypes.byref(v), _format_id(fmt), 2, shape, buf, len(data)))
    out = np.empty((rows, in_), dtype=np.float32)
    _ctx.check(_lib.pw_view_to_float(_ctx.ptr, ctypes.byref(v),
                                     out.ctypes.data_as(ctypes.POINTER(ctypes.c_float)), out.size))
    return out


def fixture(fmt, rows=5, blocks=3, order="canonical"):
    """Tag fixture bytes: every byte names its block and its position in it."""
    n = ctypes.c_uint64()
    f = _format_id(fmt)
    _ctx.check(_lib.pw_fixture_bytes(_ctx.ptr, f, rows, blocks, ctypes.byref(n)))
    out = ctypes.create_string_buffer(n.value)
    _ctx.check(_lib.pw_fixture_tags(_ctx.ptr, f, rows, blocks, _layout(order), out, n.value))
    return out.raw


def value_fixture(fmt):
    """(bytes, values) of the format's value fixture: canonical bytes of a small weight and
    its exactly known decoded values as a float32 array of shape [rows, blocks*block_size]."""
    f = _format_id(fmt)
    nb, nc = ctypes.c_uint64(), ctypes.c_uint64()
    rows, blocks = ctypes.c_int64(), ctypes.c_int64()
    _ctx.check(_lib.pw_fixture_values(_ctx.ptr, f, None, ctypes.byref(nb), None, ctypes.byref(nc),
                                      ctypes.byref(rows), ctypes.byref(blocks)))
    buf = ctypes.create_string_buffer(nb.value)
    vals = np.zeros(nc.value, dtype=np.float32)
    _ctx.check(_lib.pw_fixture_values(_ctx.ptr, f, buf, ctypes.byref(nb),
                                      vals.ctypes.data_as(ctypes.POINTER(ctypes.c_float)),
                                      ctypes.byref(nc), ctypes.byref(rows), ctypes.byref(blocks)))
    return buf.raw, vals.reshape(rows.value, -1)


def disagreement(data, fmt, rows, blocks, order="canonical"):
    """None when `data` is exactly the tag fixture in `order`; otherwise a message naming
    the first misplaced block, where it was expected (flat index and order) and what was
    found there (another block's bytes, a changed byte, or a short or long buffer)."""
    data = bytes(data)
    rep = DisagreementReport()
    _ctx.check(_lib.pw_disagreement(_ctx.ptr, data, len(data), _format_id(fmt), rows, blocks,
                                    _layout(order), ctypes.byref(rep)))
    return None if rep.kind == 0 else rep.message.decode(errors="replace")


class Tensor:
    """What a GGUF header says about one tensor."""

    def __init__(self, info):
        self.name = info.name.decode(errors="replace")
        self.gguf_type = info.gguf_type
        self.format = (_lib.pw_format_get(info.format).contents.name.decode()
                       if info.format_known else None)
        self.ne = tuple(info.ne[:info.n_dims])
        self.shape = tuple(info.shape[:info.rank])
        self.offset = info.offset
        self.nbytes = info.bytes

    def __repr__(self):
        return "Tensor(%r, %s, shape=%s, ne=%s)" % (self.name, self.format, self.shape, self.ne)


class GGUF:
    """An open GGUF file. orientation='out_in' (default here) labels 2-D weights [out, in];
    'as_stored' keeps GGUF's ne order. Bytes are never relaid out."""

    def __init__(self, path, orientation="out_in"):
        self._ptr = ctypes.c_void_p()
        opts = GGUFOpenOptions()
        _lib.pw_gguf_open_options_init(ctypes.byref(opts))
        opts.orientation = {"out_in": ORIENT_OUT_IN, "as_stored": ORIENT_AS_STORED}[orientation]
        _ctx.check(_lib.pw_gguf_open(_ctx.ptr, os.fsencode(path), ctypes.byref(opts),
                                     ctypes.byref(self._ptr)))

    def close(self):
        if self._ptr:
            _lib.pw_gguf_close(self._ptr)
            self._ptr = ctypes.c_void_p()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        self.close()

    def _index(self, name):
        i = ctypes.c_int64()
        _ctx.check(_lib.pw_gguf_find_tensor(_ctx.ptr, self._ptr, name.encode(), ctypes.byref(i)))
        return i.value

    def tensors(self):
        out = []
        for i in range(_lib.pw_gguf_tensor_count(self._ptr)):
            info = TensorInfo()
            _ctx.check(_lib.pw_gguf_tensor_info_get(_ctx.ptr, self._ptr, i, ctypes.byref(info)))
            out.append(Tensor(info))
        return out

    def _view(self, name):
        v = View()
        _ctx.check(_lib.pw_gguf_tensor_view(_ctx.ptr, self._ptr, self._index(name), ctypes.byref(v)))
        return v

    def raw(self, name):
        """The tensor's bytes as stored (ROW_MAJOR)."""
        info = TensorInfo()
        _ctx.check(_lib.pw_gguf_tensor_info_get(_ctx.ptr, self._ptr, self._index(name),
                                                ctypes.byref(info)))
        buf = ctypes.create_string_buffer(info.bytes)
        _ctx.check(_lib.pw_gguf_tensor_read(_ctx.ptr, self._ptr, self._index(name), buf, info.bytes))
        return buf.raw

    def dequantize(self, name):
        """The tensor decoded to float32, shaped as labelled ([out, in] for 2-D with out_in)."""
        v = self._view(name)
        shape = tuple(v.shape[:v.rank])
        out = np.empty(shape, dtype=np.float32)
        _ctx.check(_lib.pw_view_to_float(_ctx.ptr, ctypes.byref(v),
                                         out.ctypes.data_as(ctypes.POINTER(ctypes.c_float)), out.size))
        return out

    def matmul_wt(self, x, name, kernel=None):
        """Y = X W^T for the 2-D weight `name` (kept [out, in]); x is [n, in] float32."""
        return _matmul_view(x, self._view(name), kernel)


def _matmul_view(x, view, kernel):
    x = np.ascontiguousarray(x, dtype=np.float32)
    if x.ndim == 1:
        x = x.reshape(1, -1)
    if view.rank != 2 or x.shape[1] != view.shape[1]:
        raise ValueError("x has %d columns, the weight is %s" % (x.shape[1], tuple(view.shape[:view.rank])))
    y = np.empty((x.shape[0], view.shape[0]), dtype=np.float32)
    opts = WeightOptions()
    _lib.pw_weight_options_init(ctypes.byref(opts))
    if kernel is not None:
        opts.kernel = kernel.encode()
    h = ctypes.c_void_p()
    _ctx.check(_lib.pw_weight_create(_ctx.ptr, ctypes.byref(view), ctypes.byref(opts), ctypes.byref(h)))
    try:
        _ctx.check(_lib.pw_matmul_wt(_ctx.ptr, x.ctypes.data_as(ctypes.POINTER(ctypes.c_float)),
                                     x.shape[0], h, y.ctypes.data_as(ctypes.POINTER(ctypes.c_float))))
    finally:
        _lib.pw_weight_destroy(h)
    return y


def matmul_wt(x, data, fmt, out, in_, kernel=None):
    """Y = X W^T for canonical (row-major) block bytes of an [out, in] weight."""
    data = bytes(data)
    buf = ctypes.create_string_buffer(data, len(data))
    v = View()
    shape = (ctypes.c_int64 * 2)(out, in_)
    _ctx.check(_lib.pw_view_init(_ctx.ptr, ctypes.byref(v), _format_id(fmt), 2, shape, buf, len(data)))
    y = _matmul_view(x, v, kernel)
    del buf
    return y
