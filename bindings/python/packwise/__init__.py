"""packwise for converter authors: ctypes over libpackwise.so, numpy arrays out.

    import packwise
    with packwise.GGUF("model.gguf", orientation="out_in") as g:  # 2-D weights [out, in]
        for t in g.tensors():
            print(t.name, t.format, t.shape)
        w = g.dequantize("blk.0.attn_q.weight")      # numpy float32, logical row-major
    kernel_bytes = packwise.to_kernel_order(canonical_bytes, "Q4_K", rows, blocks, order="canonical")
    assert packwise.disagreement(my_bytes, "Q4_K", rows, blocks, order="kernel") is None

    w = packwise.Weight(kernel_bytes, "Q4_K", rows, cols, order="kernel")  # the operator:
    w.prepare()                                      # packed once,
    y = w(x)                                         # run many times (f32/f16/bf16 X)

Every function that takes block bytes takes the order they are in, `order=`, with no
default: "canonical" (row-major, what files hold), "kernel" (input-block-major) or
"row_tiled_N". Bytes whose order you do not know: `disagreement()` against a fixture
written the same way tells which it is.

The library is found, first that loads, through: $PACKWISE_LIBRARY (a file); the path
baked into this package when it was installed (`cmake --install`, or `pip install` with
$PACKWISE_LIBRARY_DIR set: packwise/_install_path.py); a libpackwise.so next to this
package; the system's loader (ctypes.util.find_library, after ldconfig); then the standard
prefixes /usr/local/lib and /usr/lib (and their multiarch folders). `library_path` names
the file that was loaded.
"""
import ctypes
import ctypes.util
import operator
import os
import sysconfig
import threading

import numpy as np

from ._abi import (Layout, View, TensorInfo, BlockGrid, DisagreementReport, GGUFOpenOptions,
                   WeightOptions, ORDERS, ORIENT_AS_STORED, ORIENT_OUT_IN, declare)

__all__ = ["PackwiseError", "GGUF", "Tensor", "Layout", "formats", "format_info", "to_kernel_order",
           "to_canonical_order", "reorder", "decode", "fixture", "value_fixture", "disagreement",
           "matmul_wt", "version", "library_path", "Context", "TraceEvent", "Weight", "WeightInfo",
           "matmul_wt_many", "matmul_wt_experts"]


def _candidates():
    """The library files to try, in order (see the module's docstring)."""
    out = []
    if os.environ.get("PACKWISE_LIBRARY"):
        out.append(os.environ["PACKWISE_LIBRARY"])
    try:
        from ._install_path import LIBRARY as baked
    except ImportError:
        baked = None
    if baked:
        out.append(baked)
    here = os.path.dirname(os.path.abspath(__file__))
    out.append(os.path.join(here, "libpackwise.so"))
    found = ctypes.util.find_library("packwise")
    if found:
        out.append(found)
    multiarch = sysconfig.get_config_var("MULTIARCH")
    for prefix in ("/usr/local", "/usr"):
        dirs = [os.path.join(prefix, "lib")]
        if multiarch:
            dirs.append(os.path.join(prefix, "lib", multiarch))
        dirs.append(os.path.join(prefix, "lib64"))
        for d in dirs:
            for name in ("libpackwise.so.0", "libpackwise.so"):
                p = os.path.join(d, name)
                if os.path.exists(p):
                    out.append(p)
    return out


def _load():
    errors = []
    for c in _candidates():
        try:
            return declare(ctypes.CDLL(c)), c
        except OSError as e:
            errors.append("%s: %s" % (c, e))
    raise OSError("libpackwise not found; set PACKWISE_LIBRARY to the file, or install packwise "
                  "(cmake --install) and this package with it (tried: %s)"
                  % ("; ".join(errors) or "nothing: no candidate exists"))


def _loaded_path(lib, name):
    """The file the loader mapped for `lib` (dladdr on one of its functions), else `name`."""

    class DlInfo(ctypes.Structure):
        _fields_ = [("dli_fname", ctypes.c_char_p), ("dli_fbase", ctypes.c_void_p),
                    ("dli_sname", ctypes.c_char_p), ("dli_saddr", ctypes.c_void_p)]

    try:
        dladdr = ctypes.CDLL(None).dladdr
    except (OSError, AttributeError):
        return name
    dladdr.argtypes = [ctypes.c_void_p, ctypes.POINTER(DlInfo)]
    dladdr.restype = ctypes.c_int
    info = DlInfo()
    if dladdr(ctypes.cast(lib.pw_version, ctypes.c_void_p), ctypes.byref(info)) and info.dli_fname:
        return os.path.abspath(os.fsdecode(info.dli_fname))
    return name


_lib, _library_name = _load()

#: The library file this package loaded (as the loader found it: a path through
#: $LD_LIBRARY_PATH or the ld.so cache when found through ctypes.util.find_library).
library_path = _loaded_path(_lib, _library_name)


class PackwiseError(Exception):
    """A packwise call failed: .status is the pw_status name, the text says what and where."""

    def __init__(self, status, message):
        self.status = _lib.pw_status_name(status).decode()
        super().__init__("%s: %s" % (self.status, message))


# --- Shared plumbing: one context per thread (Context, in _context.py), errors carried with
# --- the call that made them, every argument checked before it reaches ctypes (which masks
# --- integers to the C width and cuts strings at a NUL without a word).

def _call(fn, *args):
    """fn(this thread's default context, *args) (see Context._call): a context is not for
    concurrent use, and ctypes releases the GIL during every call, so each thread has its
    own, and a failure raises PackwiseError with the message this call left."""
    return default_context()._call(fn, *args)


_I32 = (-2 ** 31, 2 ** 31 - 1)
_I64 = (-2 ** 63, 2 ** 63 - 1)
_U64 = (0, 2 ** 64 - 1)


def _int(value, what, bounds=_I64):
    """An integer argument inside the C type's range (bool and float are refused)."""
    if isinstance(value, bool):
        raise TypeError("%s must be an integer, not bool" % what)
    try:
        v = operator.index(value)
    except TypeError:
        raise TypeError("%s must be an integer, not %s" % (what, type(value).__name__)) from None
    lo, hi = bounds
    if not lo <= v <= hi:
        raise OverflowError("%s = %d is outside the C range [%d, %d]" % (what, v, lo, hi))
    return v


def _name(value, what):
    """A str argument as C bytes; a NUL inside would cut it short in C, so it is refused."""
    if not isinstance(value, str):
        raise TypeError("%s must be a str, not %s" % (what, type(value).__name__))
    if "\0" in value:
        raise ValueError("%s %r holds a NUL character" % (what, value))
    return value.encode()


def _path(value):
    p = os.fsencode(value)
    if b"\0" in p:
        raise ValueError("path %r holds a NUL character" % (value,))
    return p


def _rows_of_f32(x, columns, what="x"):
    """x as a C-contiguous float32 [n, columns] array: 1-D (one row) or 2-D, float32 in the
    machine's byte order; a strided or Fortran-ordered array is copied."""
    x = np.asarray(x)
    if x.dtype != np.float32:
        raise TypeError("%s must be float32 (native byte order), not %s; convert it with "
                        "x.astype(np.float32)" % (what, x.dtype))
    if x.ndim == 1:
        x = x.reshape(1, -1)
    if x.ndim != 2:
        raise ValueError("%s must be 1-D or 2-D [n, in], not %d-D %s" % (what, x.ndim, x.shape))
    if x.shape[1] != columns:
        raise ValueError("%s has %d columns, the weight has in = %d" % (what, x.shape[1], columns))
    return np.ascontiguousarray(x)


def version():
    return _lib.pw_version().decode()


def _format_id(name):
    f = ctypes.c_int()
    st = _lib.pw_format_from_name(_name(name, "format name"), ctypes.byref(f))
    if st != 0:
        raise PackwiseError(st, "no format named %r (packwise.formats() lists them)" % name)
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
        digits = order[len("row_tiled_"):]
        if digits.isascii() and digits.isdigit():
            return Layout(ORDERS["row_tiled"], _int(int(digits), "row_tiled_N"))
    raise ValueError("order must be 'canonical', 'kernel', 'row_major', 'input_block_major' "
                     "or 'row_tiled_N', not %r" % (order,))


def reorder(data, fmt, rows, blocks, from_order, to_order):
    """Block bytes of a rows x blocks grid, from the order they are in to another one.

    Naming the order the bytes are in makes a double permutation impossible:
    converting to the order they already have returns them unchanged."""
    data = bytes(data)
    info = format_info(fmt)
    grid = BlockGrid(_int(rows, "rows"), _int(blocks, "blocks"), info["block_bytes"], _layout(from_order))
    out = ctypes.create_string_buffer(len(data))
    _call(_lib.pw_bytes_reorder, ctypes.byref(grid), data, len(data), _layout(to_order), out, len(data))
    return out.raw


def _require_order(order, what):
    if order is None:
        raise TypeError("%s: name the order the bytes are in, order='canonical' (row-major, what "
                        "files hold), 'kernel' (input-block-major) or 'row_tiled_N'; there is no "
                        "default" % what)
    return order


def to_kernel_order(data, fmt, rows, blocks, order=None):
    """The spec's kernel order (input-block-major) of bytes currently in `order` (required)."""
    return reorder(data, fmt, rows, blocks, _require_order(order, "to_kernel_order"), "kernel")


def to_canonical_order(data, fmt, rows, blocks, order=None):
    """Canonical (row-major, what files hold) bytes from bytes currently in `order` (required)."""
    return reorder(data, fmt, rows, blocks, _require_order(order, "to_canonical_order"), "canonical")


def _view_of_bytes(buf, n, fmt, rows, in_, order):
    """A 2-D [rows, in] view over block bytes in `order`."""
    v = View()
    shape = (ctypes.c_int64 * 2)(rows, in_)
    _call(_lib.pw_view_init, ctypes.byref(v), _format_id(fmt), 2, shape, _layout(order), buf, n)
    return v


def decode(data, fmt, rows, in_, order=None):
    """Block bytes of a [rows, in] weight, in `order` (required), decoded to float32
    (shape [rows, in], logical row-major whatever the bytes' order)."""
    _require_order(order, "decode")
    data = bytes(data)
    rows, in_ = _int(rows, "rows"), _int(in_, "in")
    buf = ctypes.create_string_buffer(data, len(data))
    v = _view_of_bytes(buf, len(data), fmt, rows, in_, order)
    out = np.empty((rows, in_), dtype=np.float32)
    _call(_lib.pw_view_to_float, ctypes.byref(v), out.ctypes.data_as(ctypes.POINTER(ctypes.c_float)),
          out.size)
    return out


def fixture(fmt, rows=5, blocks=3, order="canonical"):
    """Tag fixture bytes: every byte names its block and its position in it."""
    rows, blocks = _int(rows, "rows"), _int(blocks, "blocks")
    n = ctypes.c_uint64()
    f = _format_id(fmt)
    _call(_lib.pw_fixture_bytes, f, rows, blocks, ctypes.byref(n))
    out = ctypes.create_string_buffer(n.value)
    _call(_lib.pw_fixture_tags, f, rows, blocks, _layout(order), out, n.value)
    return out.raw


def value_fixture(fmt):
    """(bytes, values) of the format's value fixture: canonical bytes of a small weight and
    its exactly known decoded values as a float32 array of shape [rows, blocks*block_size]."""
    f = _format_id(fmt)
    nb, nc = ctypes.c_uint64(), ctypes.c_uint64()
    rows, blocks = ctypes.c_int64(), ctypes.c_int64()
    _call(_lib.pw_fixture_values, f, None, ctypes.byref(nb), None, ctypes.byref(nc),
          ctypes.byref(rows), ctypes.byref(blocks))
    buf = ctypes.create_string_buffer(nb.value)
    vals = np.zeros(nc.value, dtype=np.float32)
    _call(_lib.pw_fixture_values, f, buf, ctypes.byref(nb),
          vals.ctypes.data_as(ctypes.POINTER(ctypes.c_float)), ctypes.byref(nc),
          ctypes.byref(rows), ctypes.byref(blocks))
    return buf.raw, vals.reshape(rows.value, -1)


def disagreement(data, fmt, rows, blocks, order=None):
    """None when `data` is exactly the tag fixture in `order`; otherwise a message naming
    the first misplaced block, where it was expected (flat index and order) and what was
    found there (another block's bytes, a changed byte); a buffer of another length (a wrong
    row or block count) is reported first, with both lengths."""
    _require_order(order, "disagreement")
    data = bytes(data)
    rows, blocks = _int(rows, "rows"), _int(blocks, "blocks")
    rep = DisagreementReport()
    _call(_lib.pw_disagreement, data, len(data), _format_id(fmt), rows, blocks, _layout(order),
          ctypes.byref(rep))
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


class _Closing:
    """`with` closes it, and so does the garbage collector: close() must be idempotent."""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        self.close()


class GGUF(_Closing):
    """An open GGUF file. orientation='as_stored' (the default, as in C's
    pw_gguf_open_options and the spec's loader) keeps GGUF's ne order, so a weight the
    engine calls [out, in] is labelled [in, out] and the operator refuses it, naming the
    fix; 'out_in' (what new code should ask for) labels 2-D weights [out, in]. Bytes are
    never relaid out."""

    def __init__(self, path, orientation="as_stored"):
        self._ptr = ctypes.c_void_p()
        self._lock = threading.Lock()
        self._weights = 0                    # Weights reading the mapping (Weight.from_gguf)
        self._closed_ptr = ctypes.c_void_p()  # closed while they did: freed after the last
        opts = GGUFOpenOptions()
        _lib.pw_gguf_open_options_init(ctypes.byref(opts))
        opts.orientation = {"out_in": ORIENT_OUT_IN, "as_stored": ORIENT_AS_STORED}[orientation]
        _call(_lib.pw_gguf_open, _path(path), ctypes.byref(opts), ctypes.byref(self._ptr))

    def close(self):
        """Close the file; weights made from it keep its mapping until they no longer read
        it (they are prepared, or closed)."""
        lock = getattr(self, "_lock", None)
        if lock is None:
            return
        with lock:
            ptr, self._ptr = self._ptr, ctypes.c_void_p()
            if ptr and self._weights:
                self._closed_ptr = ptr
                return
        if ptr:
            _lib.pw_gguf_close(ptr)

    def _retain(self):
        with self._lock:
            if not self._ptr:
                raise ValueError("the GGUF file is closed")
            self._weights += 1

    def _release(self):
        with self._lock:
            self._weights -= 1
            ptr = None
            if self._weights == 0 and self._closed_ptr:
                ptr, self._closed_ptr = self._closed_ptr, ctypes.c_void_p()
        if ptr and _lib is not None:
            _lib.pw_gguf_close(ptr)

    def _index(self, name):
        if not self._ptr:
            raise ValueError("the GGUF file is closed")
        i = ctypes.c_int64()
        _call(_lib.pw_gguf_find_tensor, self._ptr, _name(name, "tensor name"), ctypes.byref(i))
        return i.value

    def tensors(self):
        out = []
        for i in range(_lib.pw_gguf_tensor_count(self._ptr)):
            info = TensorInfo()
            _call(_lib.pw_gguf_tensor_info_get, self._ptr, i, ctypes.byref(info))
            out.append(Tensor(info))
        return out

    def _view(self, name):
        v = View()
        _call(_lib.pw_gguf_tensor_view, self._ptr, self._index(name), ctypes.byref(v))
        return v

    def raw(self, name):
        """The tensor's bytes as stored (ROW_MAJOR)."""
        info = TensorInfo()
        _call(_lib.pw_gguf_tensor_info_get, self._ptr, self._index(name), ctypes.byref(info))
        buf = ctypes.create_string_buffer(info.bytes)
        _call(_lib.pw_gguf_tensor_read, self._ptr, self._index(name), buf, info.bytes)
        return buf.raw

    def dequantize(self, name):
        """The tensor decoded to float32, shaped as labelled ([out, in] for 2-D with out_in)."""
        v = self._view(name)
        shape = tuple(v.shape[:v.rank])
        out = np.empty(shape, dtype=np.float32)
        _call(_lib.pw_view_to_float, ctypes.byref(v), out.ctypes.data_as(ctypes.POINTER(ctypes.c_float)),
              out.size)
        return out

    def matmul_wt(self, x, name, kernel=None):
        """Y = X W^T for the 2-D weight `name` (kept [out, in]); x is [n, in] float32.
        One product: self.weight(name) prepares the weight once for many."""
        return _matmul_view(x, self._view(name), kernel)

    def weight(self, name, **options):
        """The prepared-weight operator over tensor `name`: Weight.from_gguf(self, name, ...)."""
        return Weight.from_gguf(self, name, **options)


def _matmul_view(x, view, kernel):
    if view.rank != 2:
        raise ValueError("the weight is %s, not 2-D [out, in]" % (tuple(view.shape[:view.rank]),))
    x = _rows_of_f32(x, view.shape[1])
    y = np.empty((x.shape[0], view.shape[0]), dtype=np.float32)
    opts = WeightOptions()
    _lib.pw_weight_options_init(ctypes.byref(opts))
    if kernel is not None:
        opts.kernel = _name(kernel, "kernel name")
    h = ctypes.c_void_p()
    _call(_lib.pw_weight_create, ctypes.byref(view), ctypes.byref(opts), ctypes.byref(h))
    try:
        _call(_lib.pw_matmul_wt, x.ctypes.data_as(ctypes.POINTER(ctypes.c_float)), x.shape[0], h,
              y.ctypes.data_as(ctypes.POINTER(ctypes.c_float)))
    finally:
        _lib.pw_weight_destroy(h)
    return y


def matmul_wt(x, data, fmt, out, in_, order=None, kernel=None):
    """Y = X W^T for block bytes of an [out, in] weight in `order` (required): one product,
    the weight planned and packed for it and freed after. Weight(...) prepares once for many."""
    _require_order(order, "matmul_wt")
    data = bytes(data)
    out, in_ = _int(out, "out"), _int(in_, "in")
    buf = ctypes.create_string_buffer(data, len(data))
    v = _view_of_bytes(buf, len(data), fmt, out, in_, order)
    y = _matmul_view(x, v, kernel)
    del buf
    return y


# Contexts and trace events, then the operator (prepared weights): they take the names above.
from ._context import Context, TraceEvent, default_context  # noqa: E402
from ._operator import Weight, WeightInfo, matmul_wt_many, matmul_wt_experts  # noqa: E402
