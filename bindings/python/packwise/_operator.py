"""The operator from Python (include/packwise/weight.h): prepared weights that run many
times, on the contexts of packwise/_context.py (threads, ISA cap, memory policy, trace).

    ctx = packwise.Context(threads=4, trace=True)
    w = packwise.Weight(data, "Q4_K", out, in_, order="canonical", context=ctx)
    w.prepare()                  # packs once; ctx.events() holds the adapter event
    for x in batches:            # float32, float16 or bfloat16 [n, in]
        y = w(x)                 # Y = X W^T, float32 [n, out]; w.run(x, out=y, beta=1) adds

Imported by packwise/__init__.py after the names it takes from there are defined.
"""
import ctypes
import dataclasses
import numbers
import threading

import numpy as np

from . import _lib, PackwiseError, GGUF, _Closing, _int, _name, _require_order, _view_of_bytes, _I32
from ._context import Context, TraceEvent, default_context, _policy_id, _text
from ._abi import (Product, QB4WWeights, QC4WWeights, RunArgs, WeightInfo as _CWeightInfo, WeightOptions,
                   SERVE_GEMV, SERVE_GEMM, DTYPE_F32, DTYPE_F16, DTYPE_BF16,
                   WEIGHT_KINDS, QC4W_TRANSPOSED, QB4W_TRANSPOSED, QB4W_ZERO_CONST, QB4W_ZERO_U4,
                   QB4W_ZERO_U8)

__all__ = ["Weight", "WeightInfo", "matmul_wt_many", "matmul_wt_experts"]


@dataclasses.dataclass(frozen=True)
class WeightInfo:
    """pw_weight_info: what a weight's plan is and costs."""
    name: str
    kind: str             # "blocks" (a block format, F32/F16/BF16) or "qc4w"
    out: int
    in_: int
    policy: str           # the policy the plan follows
    kernel_gemv: str      # kernel for n = 1 ("" when not served)
    kernel_gemm: str      # kernel for n >= 2 ("" when not served)
    source_bytes: int
    packed_bytes: int     # bytes of the packed forms the plan holds
    forms: int            # packed forms (0: kernels read the source)
    reads_source: bool    # a kernel reads the source at run time (it is kept alive)
    prepared: bool        # every planned form is ready
    from_cache: int
    owned_bytes: int      # bytes the weight holds beyond the caller's (pw_weight_bytes)


_SERVES = {"both": SERVE_GEMV | SERVE_GEMM, "gemv": SERVE_GEMV, "gemm": SERVE_GEMM}
_X_TYPES = {"f32": DTYPE_F32, "f16": DTYPE_F16, "bf16": DTYPE_BF16}
_Y_TYPES = {"f32": np.dtype(np.float32), "f16": np.dtype(np.float16)}


def _bytes_of(data, what="data"):
    """data's bytes as a 1-D uint8 array sharing its memory (a copy when it is not
    contiguous): the reference that keeps them alive while C reads them."""
    if isinstance(data, np.ndarray):
        if data.dtype.hasobject:
            raise TypeError("%s must hold bytes, not Python objects" % what)
        return np.ascontiguousarray(data).reshape(-1).view(np.uint8)
    try:
        mv = memoryview(data)
    except TypeError:
        raise TypeError("%s must be bytes-like (bytes, bytearray, a numpy array), not %s"
                        % (what, type(data).__name__)) from None
    if not mv.c_contiguous:
        mv = memoryview(mv.tobytes())
    return np.frombuffer(mv.cast("B"), dtype=np.uint8)


def _nibble_rows(data, out, in_, transposed, kind):
    """int4 data as bytes: out rows of ceil(in / 2) (in rows of ceil(out / 2) when
    transposed), the size checked here so that the message names the shape."""
    src = _bytes_of(data)
    rows, cols = (in_, out) if transposed else (out, in_)
    if rows >= 1 and cols >= 1 and src.nbytes != rows * ((cols + 1) // 2):
        raise ValueError("%s data holds %d bytes; [%d, %d]%s takes %d x ceil(%d / 2) = %d"
                         % (kind, src.nbytes, out, in_, " transposed" if transposed else "", rows, cols,
                            rows * ((cols + 1) // 2)))
    return src


def _floats(values, count, what):
    """`count` values as a contiguous float32 array (C copies or reads them during the call)."""
    a = np.ascontiguousarray(np.asarray(values, dtype=np.float32))
    if a.shape != (count,):
        raise ValueError("%s must have shape (%d,), not %s" % (what, count, a.shape))
    return a


def _options(kernel, policy, serves, bias, clamp, out):
    """pw_weight_options, and the arrays it points at (alive while the weight is created)."""
    opts = WeightOptions()
    _lib.pw_weight_options_init(ctypes.byref(opts))
    keep = None
    if kernel is not None:
        opts.kernel = _name(kernel, "kernel")
    if policy is not None:
        opts.policy = _policy_id(policy)
    if serves is not None:
        if serves not in _SERVES:
            raise ValueError("serves must be 'both', 'gemv' (n = 1) or 'gemm' (n >= 2), not %r"
                             % (serves,))
        opts.serves = _SERVES[serves]
    if bias is not None:
        keep = _floats(bias, out, "bias")
        opts.bias = keep.ctypes.data_as(ctypes.POINTER(ctypes.c_float))
    if clamp is not None:
        lo, hi = clamp
        opts.min, opts.max = float(lo), float(hi)
    return opts, keep


def _rows(a, n, cols, what):
    """The row stride in elements to pass for a 2-D array [n, cols], or None when its rows
    are not each contiguous (or overlap, or run backwards): only then is a copy needed."""
    item = a.itemsize
    if n == 0:
        return 0
    if not a.flags.aligned or (cols > 1 and a.strides[1] != item):
        return None
    if n <= 1:
        return 0
    s = a.strides[0]
    if s % item or s < cols * item:
        return None
    return s // item


def _x_operand(x, x_dtype, in_):
    """(x as a 2-D array, its pw_dtype, whether it was one row), `in_` columns."""
    if not isinstance(x, np.ndarray):
        x = np.asarray(x)
    dt = x.dtype
    if not dt.isnative:
        raise TypeError("x must be in the machine's byte order (%s is not); convert it with "
                        "x.astype(x.dtype.newbyteorder('='))" % dt.str)
    if x_dtype is None:
        if dt == np.float32:
            t = DTYPE_F32
        elif dt == np.float16:
            t = DTYPE_F16
        elif dt.name == "bfloat16" and dt.itemsize == 2:
            t = DTYPE_BF16
        elif dt == np.uint16:
            raise TypeError("x is uint16: if it holds bfloat16 bits say so, x_dtype='bf16'")
        else:
            raise TypeError("x must be float32, float16 or bfloat16 (a uint16 array with "
                            "x_dtype='bf16'), not %s; convert it with x.astype(np.float32)" % dt)
    else:
        if x_dtype not in _X_TYPES:
            raise ValueError("x_dtype must be 'f32', 'f16' or 'bf16', not %r" % (x_dtype,))
        t = _X_TYPES[x_dtype]
        ok = {DTYPE_F32: dt == np.float32, DTYPE_F16: dt == np.float16,
              DTYPE_BF16: dt == np.uint16 or (dt.name == "bfloat16" and dt.itemsize == 2)}[t]
        if not ok:
            raise TypeError("x_dtype=%r takes a %s array, not %s" % (
                x_dtype, {DTYPE_F32: "float32", DTYPE_F16: "float16",
                          DTYPE_BF16: "uint16 (bfloat16 bits)"}[t], dt))
    one_row = x.ndim == 1
    if one_row:
        x = x.reshape(1, -1)
    if x.ndim != 2:
        raise ValueError("x must be 1-D [in] or 2-D [n, in], not %d-D %s" % (x.ndim, x.shape))
    if x.shape[1] != in_:
        raise ValueError("x has %d columns, the weight has in = %d" % (x.shape[1], in_))
    return x, t, one_row


def _y_rows(y, want, one_row, what):
    """(y as 2-D rows, its row stride in elements) for an output of shape `want`, written
    in place: its rows must each be contiguous (numpy's row stride is passed as ldy)."""
    if y.shape != want:
        raise ValueError("%s has shape %s; Y is %s" % (what, y.shape, want))
    if not y.flags.writeable:
        raise ValueError("%s is read-only" % what)
    y2 = y.reshape(1, -1) if one_row else y
    ldy = _rows(y2, y2.shape[0], y2.shape[1], what)
    if ldy is None:
        raise ValueError("%s's rows must each be contiguous, aligned and in increasing, "
                         "non-overlapping order (strides %s); its row stride is passed as "
                         "it is" % (what, y.strides))
    return y2, ldy


def _x_rows(xa, *outs):
    """(x, its row stride in elements): numpy's, or a copy's when its rows are not each
    contiguous, or when it shares memory with an output (read before Y is written)."""
    if any(o is not None and np.may_share_memory(xa, o) for o in outs):
        xa = np.array(xa, order="C", copy=True)
    ldx = _rows(xa, xa.shape[0], xa.shape[1], "x")
    if ldx is None:
        xa = np.ascontiguousarray(xa)
        ldx = 0
    return xa, ldx


class Weight(_Closing):
    """A prepared weight: planned at creation, packed once (prepare(), or the first product
    that needs it), then run any number of times, from any thread, each run on its context.

        w = packwise.Weight(data, "Q4_0", out, in_, order="canonical")
        w = packwise.Weight.from_gguf(g, "blk.0.attn_q.weight")   # or g.weight(name)
        w = packwise.Weight.qc4w(nibbles, scale, out, in_, zero_point=8)
        w = packwise.Weight.qb4w(nibbles, scales, out, in_, 32, zero_points=zp, zero_bits=4)
        w = packwise.Weight.matmul_nbits(B, scales, zero_points, K=in_, N=out, block_size=32)

    data: the block bytes of an [out, in] weight in `order` (required, as everywhere bytes
    are taken). They are borrowed, not copied: the weight keeps a reference to them for as
    long as the library may read them (until prepared, or for good when a kernel reads them
    in place: info.reads_source). Options: name (for messages and trace events), kernel
    (force one by name), policy ('compact', 'fastest', 'in_place'; None: the context's),
    serves ('both', 'gemv': n = 1 only, 'gemm': n >= 2 only), bias (out values added to
    every row of Y), clamp ((min, max) applied to X W^T + bias), context (creates the
    weight, takes its trace events, and is the default context of its runs; None: this
    thread's default context)."""

    def __init__(self, data, fmt, out, in_, order=None, *, name=None, kernel=None, policy=None,
                 serves=None, bias=None, clamp=None, context=None):
        self._setup(context)
        _require_order(order, "Weight")
        out, in_ = _int(out, "out"), _int(in_, "in")
        src = _bytes_of(data)
        view = _view_of_bytes(src.ctypes.data, src.nbytes, fmt, out, in_, order)
        if name is not None:
            view.name = _name(name, "name")
        opts, keep = _options(kernel, policy, serves, bias, clamp, out)
        self._create(_lib.pw_weight_create, ctypes.byref(view), ctypes.byref(opts))
        del keep
        self.format = fmt
        self._hold(src)

    @classmethod
    def from_gguf(cls, gguf, name, *, kernel=None, policy=None, serves=None, bias=None, clamp=None,
                  context=None):
        """The 2-D tensor `name` of an open GGUF file (opened out_in, the default). The file
        stays open for the weight while the library may read its mapping, even after
        gguf.close()."""
        if not isinstance(gguf, GGUF):
            raise TypeError("gguf must be a packwise.GGUF, not %s" % type(gguf).__name__)
        self = cls.__new__(cls)
        self._setup(context)
        view = gguf._view(name)
        opts, keep = _options(kernel, policy, serves, bias, clamp, view.shape[0])
        self._create(_lib.pw_weight_create, ctypes.byref(view), ctypes.byref(opts))
        del keep
        self.format = _lib.pw_format_get(view.format).contents.name.decode()
        gguf._retain()
        self._hold(gguf)
        return self

    @classmethod
    def qc4w(cls, data, scale, out, in_, zero_point=None, *, bias=None, transposed=False, name=None,
             kernel=None, policy=None, serves=None, clamp=None, context=None):
        """A QC4W weight (qc4w.h): out x ceil(in/2) bytes of int4 values, two per byte along
        `in` with the low nibble the even one (transposed=True: in x ceil(out/2) bytes, paired
        along `out`), one float32 scale per output and an optional bias. zero_point is
        required: 0 when the nibbles are signed -8..7, 8 when they are 0..15 and stand for the
        value + 8. Packed at creation; the arrays are not kept."""
        if zero_point is None:
            raise TypeError("Weight.qc4w: name the nibbles' encoding, zero_point=0 (signed -8..7) "
                            "or 8 (unsigned 0..15, value + 8); there is no default")
        self = cls.__new__(cls)
        self._setup(context)
        out, in_ = _int(out, "out"), _int(in_, "in")
        zp = _int(zero_point, "zero_point", _I32)
        src = _nibble_rows(data, out, in_, transposed, "QC4W")
        d = QC4WWeights()
        _lib.pw_qc4w_weights_init(ctypes.byref(d))
        d.out, d.in_, d.zero_point = out, in_, zp
        d.flags = QC4W_TRANSPOSED if transposed else 0
        d.data = src.ctypes.data
        sc = _floats(scale, max(out, 0), "scale")
        d.scale = sc.ctypes.data
        b = None
        if bias is not None:
            b = _floats(bias, max(out, 0), "bias")
            d.bias = b.ctypes.data
        if name is not None:
            d.name = _name(name, "name")
        opts, _ = _options(kernel, policy, serves, None, clamp, out)
        self._create(_lib.pw_weight_create_qc4w, ctypes.byref(d), ctypes.byref(opts))
        del src, sc, b
        self.format = "QC4W"
        self._hold(None)
        return self

    @classmethod
    def qb4w(cls, data, scales, out, in_, block_size, *, zero_point=None, zero_points=None,
             zero_bits=None, scale_type=None, bias=None, transposed=False, name=None, kernel=None,
             policy=None, serves=None, clamp=None, context=None):
        """A QB4W weight (qb4w.h): blockwise int4, one scale (and zero point) per block of
        `block_size` values along `in` (a power of two, 16 .. 256).

        data: out x ceil(in/2) bytes, two unsigned nibbles per byte along `in`, the low one
        the even k (transposed=True: in x ceil(out/2) bytes, paired along `out`).
        scales: out x ceil(in / block_size) values, row-major; float32 or float16 arrays, or
        uint16 bfloat16 bits with scale_type="bf16".
        Zero points, required, one of: zero_point=8 (every block: unsigned nibbles, value - 8)
        or 0 (signed nibbles -8..7); zero_points with zero_bits=4 (out rows of
        ceil(blocks / 2) bytes, low nibble = even block, as MatMulNBits packs them) or
        zero_bits=8 (out x blocks bytes, each 0..15).
        Packed at creation; the arrays are not kept."""
        self = cls.__new__(cls)
        self._setup(context)
        out, in_ = _int(out, "out"), _int(in_, "in")
        bsz = _int(block_size, "block_size", _I32)
        if (zero_point is None) == (zero_points is None):
            raise TypeError("Weight.qb4w: give the zero points, either zero_point=8 or 0 for every "
                            "block, or zero_points with zero_bits=4 or 8; there is no default")
        if zero_points is not None and zero_bits not in (4, 8):
            raise TypeError("Weight.qb4w: zero_points needs zero_bits=4 (packed two per byte) or 8")
        if zero_points is None and zero_bits is not None:
            raise TypeError("Weight.qb4w: zero_bits goes with zero_points, not zero_point")
        blocks = (in_ + bsz - 1) // bsz if bsz > 0 and in_ > 0 else 0
        src = _nibble_rows(data, out, in_, transposed, "QB4W")
        d = QB4WWeights()
        _lib.pw_qb4w_weights_init(ctypes.byref(d))
        d.out, d.in_, d.block_size = out, in_, bsz
        d.flags = QB4W_TRANSPOSED if transposed else 0
        d.data = src.ctypes.data
        sc = np.asarray(scales)
        if scale_type is None:
            types = {np.dtype(np.float32): DTYPE_F32, np.dtype(np.float16): DTYPE_F16}
            if sc.dtype not in types:
                raise TypeError("Weight.qb4w: scales are float32 or float16 (bfloat16: uint16 bits "
                                "with scale_type='bf16'), not %s" % sc.dtype)
            d.scale_type = types[sc.dtype]
        elif scale_type == "bf16" and sc.dtype == np.uint16:
            d.scale_type = DTYPE_BF16
        else:
            raise TypeError("Weight.qb4w: scale_type='bf16' takes uint16 bfloat16 bits; float32 and "
                            "float16 scales need no scale_type")
        sc = np.ascontiguousarray(sc).reshape(-1)
        if sc.size != out * blocks:
            raise ValueError("Weight.qb4w: %d scales; [%d, %d] in blocks of %d takes %d x %d = %d"
                             % (sc.size, out, in_, bsz, out, blocks, out * blocks))
        d.scales = sc.ctypes.data
        zp = None
        if zero_points is None:
            d.zero_kind = QB4W_ZERO_CONST
            d.zero_point = _int(zero_point, "zero_point", _I32)
        else:
            zp = _bytes_of(zero_points, "zero_points")
            want = out * ((blocks + 1) // 2 if zero_bits == 4 else blocks)
            if zp.nbytes != want:
                raise ValueError("Weight.qb4w: zero_points hold %d bytes; %d-bit zero points of "
                                 "[%d, %d] in blocks of %d take %d" % (zp.nbytes, zero_bits, out, in_,
                                                                      bsz, want))
            d.zero_kind = QB4W_ZERO_U4 if zero_bits == 4 else QB4W_ZERO_U8
            d.zero_points = zp.ctypes.data
        b = None
        if bias is not None:
            b = _floats(bias, max(out, 0), "bias")
            d.bias = b.ctypes.data
        if name is not None:
            d.name = _name(name, "name")
        opts, _ = _options(kernel, policy, serves, None, clamp, out)
        self._create(_lib.pw_weight_create_qb4w, ctypes.byref(d), ctypes.byref(opts))
        del src, sc, zp, b
        self.format = "QB4W"
        self._hold(None)
        return self

    @classmethod
    def matmul_nbits(cls, B, scales, zero_points=None, *, K, N, block_size, bits=4, bias=None,
                     name=None, kernel=None, policy=None, serves=None, clamp=None, context=None):
        """An ONNX Runtime MatMulNBits initializer set as a QB4W weight, the arrays named and
        laid out as the operator names them: B, uint8 [N, n_blocks, block_size / 2] (each
        row's blocks of K, zero-padded to whole blocks); scales, [N * n_blocks] float32 or
        float16; zero_points, uint8 [N * ceil(n_blocks / 2)] (4 bits each, low nibble the
        even block) or None (8 for every block, the operator's default); the attributes K,
        N, bits (4 only) and block_size; bias, [N] or None. Y = X B^T as MatMulNBits computes
        it, with X quantized to int8 per row (QD8). Float zero points are not taken."""
        if bits != 4:
            raise ValueError("Weight.matmul_nbits: bits=%r; QB4W takes 4-bit weights only" % (bits,))
        K, N, bsz = _int(K, "K"), _int(N, "N"), _int(block_size, "block_size", _I32)
        if K < 1 or N < 1 or bsz < 1:
            raise ValueError("Weight.matmul_nbits: K, N and block_size must be >= 1")
        blocks = (K + bsz - 1) // bsz
        b = np.asarray(B)
        if b.dtype != np.uint8 or b.size != N * blocks * (bsz // 2):
            raise ValueError("Weight.matmul_nbits: B must be uint8 [N, n_blocks, block_size / 2] = "
                             "[%d, %d, %d], not %s %s" % (N, blocks, bsz // 2, b.dtype, b.shape))
        # each row's bytes up to ceil(K / 2): the padded block's tail is not part of the weight
        rows = np.ascontiguousarray(b.reshape(N, blocks * (bsz // 2))[:, :(K + 1) // 2])
        if K % 2:
            rows[:, -1] &= 0x0F
        if zero_points is not None and np.asarray(zero_points).dtype != np.uint8:
            raise TypeError("Weight.matmul_nbits: zero_points must be packed uint8 (4 bits each); "
                            "float zero points are not taken")
        zkw = dict(zero_point=8) if zero_points is None else dict(zero_points=zero_points, zero_bits=4)
        return cls.qb4w(rows, scales, N, K, bsz, bias=bias, name=name, kernel=kernel, policy=policy,
                        serves=serves, clamp=clamp, context=context, **zkw)

    # --- life: created, held by runs in flight, closed when the last run returns ---

    def _setup(self, context):
        if context is not None and not isinstance(context, Context):
            raise TypeError("context must be a packwise.Context, not %s" % type(context).__name__)
        self._ptr = ctypes.c_void_p()
        self._state = threading.Lock()
        self._busy = 0
        self._closing = False
        self._source = None
        self._context = context

    def _create(self, fn, *args):
        ctx = self._context or default_context()
        ctx._call(fn, *args, ctypes.byref(self._ptr))
        info = self.info
        self.out, self.in_, self.name = info.out, info.in_, info.name

    def _hold(self, source):
        """Keep `source` (bytes, or the GGUF file) while the library may read it."""
        self._source = source
        self._release_source_if_done()

    def _release_source_if_done(self):
        if self._source is None:
            return
        try:
            info = self.info
        except ValueError:  # closed meanwhile: closing released it
            return
        if info.reads_source or not info.prepared:
            return
        with self._state:
            src, self._source = self._source, None
        if src is not None and hasattr(src, "_release"):
            src._release()

    def _begin(self):
        with self._state:
            if self._closing or not self._ptr:
                raise ValueError("the weight is closed")
            self._busy += 1
            return self._ptr

    def _end(self):
        with self._state:
            self._busy -= 1
            last = self._busy == 0 and self._closing
        if last:
            self._destroy()

    def _destroy(self):
        with self._state:
            ptr, self._ptr = self._ptr, ctypes.c_void_p()
            src, self._source = self._source, None
        if ptr and _lib is not None:
            _lib.pw_weight_destroy(ptr)
        if src is not None and hasattr(src, "_release"):
            src._release()

    def close(self):
        """Free the weight (after the runs in flight return); later calls raise ValueError."""
        state = getattr(self, "_state", None)
        if state is None:
            return
        with state:
            if self._closing:
                return
            self._closing = True
            busy = self._busy
        if busy == 0:
            self._destroy()

    @property
    def shape(self):
        return (self.out, self.in_)

    @property
    def info(self):
        """The plan: kernels, policy, packed bytes, whether it is prepared (WeightInfo)."""
        h = self._begin()
        try:
            i = _CWeightInfo()
            i.struct_size = ctypes.sizeof(i)
            st = _lib.pw_weight_info_get(h, ctypes.byref(i))
            if st != 0:
                raise PackwiseError(st, "pw_weight_info_get failed")
            owned = _lib.pw_weight_bytes(h)
        finally:
            self._end()
        kind = WEIGHT_KINDS[i.kind] if 0 <= i.kind < len(WEIGHT_KINDS) else "kind_%d" % i.kind
        return WeightInfo(_text(i.name) or "", kind, i.out, i.in_,
                          _lib.pw_memory_policy_name(i.policy).decode(), _text(i.kernel_gemv) or "",
                          _text(i.kernel_gemm) or "", i.source_bytes, i.packed_bytes, i.forms,
                          bool(i.reads_source), bool(i.prepared), i.from_cache, owned)

    def __repr__(self):
        if not self._ptr:
            return "Weight(closed)"
        i = self.info
        return "Weight(%r, %s [%d, %d], gemv=%s, gemm=%s, policy=%s)" % (
            i.name, self.format, i.out, i.in_, i.kernel_gemv or "-", i.kernel_gemm or "-", i.policy)

    # --- the operator ---

    def prepare(self, context=None):
        """Pack every planned form now (or take it from the cache), on the context's threads,
        so that no run packs anything. Idempotent."""
        ctx = self._run_context(context)
        h = self._begin()
        try:
            ctx._call(_lib.pw_weight_prepare, h)
        finally:
            self._end()
        self._release_source_if_done()
        return self

    def _run_context(self, context):
        if context is None:
            return self._context or default_context()
        if not isinstance(context, Context):
            raise TypeError("context must be a packwise.Context, not %s" % type(context).__name__)
        return context

    def run(self, x, out=None, *, y_dtype=None, beta=0.0, x_dtype=None, context=None):
        """Y = X W^T (+ bias, clamped) (+ beta * Y). x: [n, in] (or one row [in]) of float32,
        float16, or bfloat16: a uint16 array of bfloat16 bits with x_dtype='bf16' (or an
        ml_dtypes.bfloat16 array). Y is float32 or float16 (y_dtype, or out's dtype): a new
        array [n, out] ([out] for one row), or `out`, written in place (beta = 1 adds the
        product to it). Rows may be strided: numpy's row strides are passed as they are; an
        array whose rows are not contiguous is copied (x) or refused (out)."""
        xa, x_type, one_row = self._x_operand(x, x_dtype)
        n = xa.shape[0]
        if not isinstance(beta, numbers.Real) or isinstance(beta, bool):
            raise TypeError("beta must be a real number, not %s" % type(beta).__name__)
        beta = float(beta)
        want = (self.out,) if one_row else (n, self.out)
        if out is None:
            if beta != 0.0:
                raise ValueError("beta = %g adds the product to Y: pass the Y to add to as out="
                                 % beta)
            ydt = self._y_dtype(y_dtype, None)
            y = np.empty(want, dtype=ydt)
        else:
            if not isinstance(out, np.ndarray):
                raise TypeError("out must be a numpy array, not %s" % type(out).__name__)
            ydt = self._y_dtype(y_dtype, out)
            y = out
        y2, ldy = _y_rows(y, want, one_row, "out")
        xa, ldx = _x_rows(xa, y2 if out is not None else None)
        ctx = self._run_context(context)
        h = self._begin()
        try:
            if n > 0:
                a = RunArgs()
                _lib.pw_run_args_init(ctypes.byref(a))
                a.n, a.x, a.ldx, a.x_type = n, xa.ctypes.data, ldx, x_type
                a.y, a.ldy, a.beta = y2.ctypes.data, ldy, beta
                a.y_type = DTYPE_F16 if ydt == np.float16 else DTYPE_F32
                ctx._call(_lib.pw_weight_run, h, ctypes.byref(a))
        finally:
            self._end()
        if self._source is not None:
            self._release_source_if_done()
        return y

    __call__ = run

    def _x_operand(self, x, x_dtype):
        return _x_operand(x, x_dtype, self.in_)

    @staticmethod
    def _y_dtype(y_dtype, out):
        if y_dtype is None:
            ydt = out.dtype if out is not None else np.dtype(np.float32)
        elif isinstance(y_dtype, str) and y_dtype in _Y_TYPES:
            ydt = _Y_TYPES[y_dtype]
        else:
            try:
                ydt = np.dtype(y_dtype)
            except TypeError:
                raise TypeError("y_dtype must be np.float32 or np.float16, not %r" % (y_dtype,)) from None
        if ydt not in (np.dtype(np.float32), np.dtype(np.float16)) or not ydt.isnative:
            raise TypeError("Y must be float32 or float16 in the machine's byte order, not %s" % ydt)
        if out is not None and out.dtype != ydt:
            raise TypeError("out is %s but y_dtype is %s" % (out.dtype, ydt))
        return ydt


def _weights(ws, what):
    ws = list(ws)
    for i, w in enumerate(ws):
        if not isinstance(w, Weight):
            raise TypeError("%s[%d] must be a packwise.Weight, not %s" % (what, i, type(w).__name__))
    return ws


def _f32_rows(x, ws, what):
    """x as f32 rows taking every weight's `in` (the C calls read ldx-strided rows of the
    first weight's length and do not know x's: checked here)."""
    xa, t, one_row = _x_operand(x, None, ws[0].in_)
    if t != DTYPE_F32:
        raise TypeError("%s takes float32 X; convert it with x.astype(np.float32), or run each "
                        "weight (Weight.run takes float16 and bfloat16)" % what)
    for i, w in enumerate(ws):
        if w.in_ != xa.shape[1]:
            raise ValueError("%s: weight %d (%r) takes in = %d, x has %d columns"
                             % (what, i, w.name, w.in_, xa.shape[1]))
    return xa, one_row


class _Held:
    """Weights held open (no close() frees them) for the length of one C call."""

    def __init__(self, ws):
        self.ws, self.ptrs = ws, []

    def __enter__(self):
        try:
            for w in self.ws:
                self.ptrs.append(w._begin())
        except BaseException:
            self.__exit__()
            raise
        return self.ptrs

    def __exit__(self, *exc):
        for w in self.ws[:len(self.ptrs)]:
            w._end()
        self.ptrs = []


def matmul_wt_many(x, weights, out=None, *, context=None):
    """Several weights over the same f32 X in one call (pw_matmul_wt_many: Q, K and V; gate
    and up): X is quantized once per activation form the kernels read, and every product
    runs in one dispatch of the context's threads. Each Y is bit for bit what weights[i](x)
    gives. Returns a list of float32 Ys ([n, out_i], or [out_i] for one row), or fills
    `out`, a list of arrays of those shapes (rows may be strided: columns of one wider
    array, for example). At most 64 weights."""
    ws = _weights(weights, "weights")
    if not ws:
        return []
    xa, one_row = _f32_rows(x, ws, "matmul_wt_many")
    n = xa.shape[0]
    wants = [(w.out,) if one_row else (n, w.out) for w in ws]
    if out is None:
        ys = [np.empty(s, np.float32) for s in wants]
    else:
        ys = list(out)
        if len(ys) != len(ws):
            raise ValueError("out holds %d arrays for %d weights" % (len(ys), len(ws)))
        for i, y in enumerate(ys):
            if not isinstance(y, np.ndarray) or y.dtype != np.float32:
                raise TypeError("out[%d] must be a float32 numpy array" % i)
    rows = [_y_rows(y, s, one_row, "out[%d]" % i) for i, (y, s) in enumerate(zip(ys, wants))]
    xa, ldx = _x_rows(xa, *[y2 for y2, _ in rows] if out is not None else [None])
    ctx = default_context() if context is None else context
    if not isinstance(ctx, Context):
        raise TypeError("context must be a packwise.Context, not %s" % type(ctx).__name__)
    with _Held(ws) as ptrs:
        if n > 0:
            products = (Product * len(ws))()
            for p, h, (y2, ldy) in zip(products, ptrs, rows):
                p.weight, p.y, p.ldy = h.value, y2.ctypes.data, ldy
            ctx._call(_lib.pw_matmul_wt_many, xa.ctypes.data, n, ldx, products, len(ws))
    return ys


def matmul_wt_experts(x, experts, route, out=None, *, context=None):
    """Mixture-of-experts rows (pw_matmul_wt_experts, ggml's mul_mat_id): row i of the f32 X
    goes through experts[route[i]], or through none when route[i] is -1 (row i of Y is then
    left as it is: zero in a new Y). Bit for bit what experts[e](x[rows of e]) gives, one
    product per expert over its rows; an expert with no rows costs nothing. The experts
    share one shape [out, in]. Returns Y float32 [n, out], or fills `out`."""
    ws = _weights(experts, "experts")
    if not ws:
        raise ValueError("matmul_wt_experts: no experts")
    xa, one_row = _f32_rows(x, ws, "matmul_wt_experts")
    n = xa.shape[0]
    for i, w in enumerate(ws):
        if w.out != ws[0].out:
            raise ValueError("matmul_wt_experts: expert %d (%r) has out = %d, expert 0 has %d"
                             % (i, w.name, w.out, ws[0].out))
    r = np.asarray(route)
    if r.dtype.kind not in "iu" or r.dtype == np.bool_:
        raise TypeError("route must hold integers (expert ids, -1 for none), not %s" % r.dtype)
    if r.shape != (n,) and not (one_row and r.shape == ()):
        raise ValueError("route has shape %s; x has %d row%s" % (r.shape, n, "" if n == 1 else "s"))
    r = r.reshape(n)
    if n and (r.min() < -1 or r.max() >= len(ws)):
        bad = int(np.flatnonzero((r < -1) | (r >= len(ws)))[0])
        raise ValueError("route[%d] = %d is not an expert (0..%d) or -1" % (bad, r[bad], len(ws) - 1))
    r = np.ascontiguousarray(r, dtype=np.int32)
    want = (ws[0].out,) if one_row else (n, ws[0].out)
    if out is None:
        y = np.zeros(want, np.float32)
    else:
        if not isinstance(out, np.ndarray) or out.dtype != np.float32:
            raise TypeError("out must be a float32 numpy array")
        y = out
    y2, ldy = _y_rows(y, want, one_row, "out")
    xa, ldx = _x_rows(xa, y2 if out is not None else None)
    ctx = default_context() if context is None else context
    if not isinstance(ctx, Context):
        raise TypeError("context must be a packwise.Context, not %s" % type(ctx).__name__)
    with _Held(ws) as ptrs:
        if n > 0:
            arr = (ctypes.c_void_p * len(ws))(*[h.value for h in ptrs])
            ctx._call(_lib.pw_matmul_wt_experts, xa.ctypes.data, n, ldx, arr, len(ws),
                      r.ctypes.data, y2.ctypes.data, ldy)
    return y
