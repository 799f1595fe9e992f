"""Contexts from Python (include/packwise/base.h): worker threads, ISA cap, memory policy
and trace events, one call at a time; default_context() gives each thread its own.

Imported by packwise/_operator.py (and re-exported by packwise/__init__.py) after the names
it takes from packwise/__init__.py are defined.
"""
import ctypes
import dataclasses
import threading
from typing import Optional

from . import _lib, PackwiseError, _Closing, _int, _name, _I32
from ._abi import ContextOptions, TRACE_FN, TRACE_KINDS

__all__ = ["Context", "TraceEvent", "default_context"]


def _text(b):
    return None if b is None else b.decode(errors="replace")


@dataclasses.dataclass(frozen=True)
class TraceEvent:
    """One pw_trace_event, copied out of the callback. Fields that do not apply to the kind
    are None (bytes: 0); `line` is the command's one-line form (pw_trace_format)."""
    kind: str              # "kernel", "adapter", "fallback", "cache" or "warning"
    tensor: Optional[str]  # the weight's name, when known
    kernel: Optional[str]  # kernel (kernel, fallback)
    key: Optional[str]     # kernel key (kernel)
    bytes: int             # bytes copied (adapter)
    from_: Optional[str]   # source layout (adapter)
    to: Optional[str]      # target layout (adapter)
    reason: Optional[str]  # why (fallback, cache, warning)
    line: str

    def __str__(self):
        return self.line


def _event_of(p):
    e = p.contents
    buf = ctypes.create_string_buffer(256)
    need = _lib.pw_trace_format(p, buf, len(buf))
    if need >= len(buf):
        buf = ctypes.create_string_buffer(need + 1)
        _lib.pw_trace_format(p, buf, len(buf))
    kind = TRACE_KINDS[e.kind] if 0 <= e.kind < len(TRACE_KINDS) else "kind_%d" % e.kind
    return TraceEvent(kind, _text(e.tensor), _text(e.kernel), _text(e.key), e.bytes, _text(e.from_),
                      _text(e.to), _text(e.reason), buf.value.decode(errors="replace"))


class _Sink:
    """The trace callback's state, apart from the Context so that the ctypes callback holds
    no reference to it (no cycle through a C function pointer)."""

    def __init__(self, handler):
        self.handler, self.events, self.raised = handler, [], None

    def __call__(self, _user, p):
        # An exception cannot cross C: kept, and raised when the call returns.
        try:
            ev = _event_of(p)
            if self.handler is None:
                self.events.append(ev)
            else:
                self.handler(ev)
        except BaseException as e:  # noqa: B902 (re-raised by Context._call)
            if self.raised is None:
                self.raised = e


def _isa_id(name):
    v = ctypes.c_int()
    if _lib.pw_isa_from_name(_name(name, "isa"), ctypes.byref(v)) != 0:
        # the library's own list of levels (pw_isa_name until "unknown")
        levels = []
        for i in range(64):
            n = _lib.pw_isa_name(i)
            n = n.decode() if isinstance(n, bytes) else n
            if n in (None, "unknown"):
                break
            levels.append(repr(n))
        raise ValueError("isa must be one of %s, not %r" % (", ".join(levels), name))
    return v.value


def _policy_id(name):
    v = ctypes.c_int()
    if _lib.pw_memory_policy_from_name(_name(name, "policy"), ctypes.byref(v)) != 0:
        raise ValueError("policy must be 'compact', 'fastest' or 'in_place', not %r" % (name,))
    return v.value


class Context(_Closing):
    """A pw_context: worker threads, ISA cap, memory policy of the weights it creates, and
    a trace sink.

    threads: worker threads counting the caller (None: all online cores; at most 1024).
    isa: cap ('scalar', 'avx2', 'avx512', 'neon', ...; None: what the CPU has); the
    environment's PACKWISE_ISA may lower it further. policy: memory policy of weights
    created with it ('compact', 'fastest', 'in_place'; None: 'compact'). trace: None, True
    (events are kept: read them with events()) or a callable taking each TraceEvent (an
    exception it raises is raised when the packwise call returns).

    A context serves one call at a time: calls from several threads on one context wait
    for each other. Give each serving thread its own context; a prepared Weight may run on
    all of them at once. The functions that take no context use one per thread."""

    def __init__(self, threads=None, isa=None, policy=None, trace=None):
        self._ptr = ctypes.c_void_p()
        self._lock = threading.Lock()
        self._owner = None
        self._sink = None
        self._trace_fn = None
        opts = ContextOptions()
        _lib.pw_context_options_init(ctypes.byref(opts))
        if threads is not None:
            opts.threads = _int(threads, "threads", _I32)
        if isa is not None:
            opts.max_isa = _isa_id(isa)
        if policy is not None:
            opts.memory_policy = _policy_id(policy)
        if trace is True:
            self._sink = _Sink(None)
        elif callable(trace):
            self._sink = _Sink(trace)
        elif trace is not None and trace is not False:
            raise TypeError("trace must be None, True (keep the events) or a callable taking a "
                            "TraceEvent, not %s" % type(trace).__name__)
        if self._sink is not None:
            # Kept on the object: C calls it until the context is destroyed.
            self._trace_fn = TRACE_FN(self._sink)
            opts.trace = self._trace_fn
        st = _lib.pw_context_create(ctypes.byref(opts), ctypes.byref(self._ptr))
        if st != 0:
            self._ptr = ctypes.c_void_p()
            raise PackwiseError(st, _lib.pw_last_create_message().decode(errors="replace"))

    def _not_in_a_call(self):
        # The lock is held by this very thread: inside a trace callback of a call on it.
        if self._owner == threading.get_ident():
            raise RuntimeError("this context is already in a call on this thread (a trace "
                               "callback cannot use its own context)")

    def _call(self, fn, *args):
        """fn(this context, *args); a failure raises PackwiseError with the message this
        call left (the context's message is cleared first, so an older one cannot show)."""
        self._not_in_a_call()
        with self._lock:
            if not self._ptr:
                raise ValueError("the context is closed")
            self._owner = threading.get_ident()
            try:
                if self._sink is not None:
                    self._sink.raised = None
                _lib.pw_context_clear_message(self._ptr)
                st = fn(self._ptr, *args)
                msg = _lib.pw_context_message(self._ptr).decode(errors="replace") if st else ""
                raised = None
                if self._sink is not None:
                    raised, self._sink.raised = self._sink.raised, None
            finally:
                self._owner = None
        if st != 0:
            raise PackwiseError(st, msg or "%s failed without a message" % fn.__name__) from raised
        if raised is not None:
            raise raised

    def _query(self, fn):
        self._not_in_a_call()
        with self._lock:
            if not self._ptr:
                raise ValueError("the context is closed")
            return fn(self._ptr)

    @property
    def threads(self):
        """Worker threads, counting the caller."""
        return self._query(_lib.pw_context_threads)

    @property
    def isa(self):
        """The highest ISA level kernels may use here (after the cap and PACKWISE_ISA)."""
        return _lib.pw_isa_name(self._query(_lib.pw_context_isa)).decode()

    @property
    def policy(self):
        """The memory policy of weights created with this context."""
        return _lib.pw_memory_policy_name(self._query(_lib.pw_context_memory_policy)).decode()

    def events(self):
        """The trace events kept so far, oldest first (a context made with trace=True)."""
        if self._sink is None or self._sink.handler is not None:
            raise ValueError("this context keeps no events: create it with trace=True")
        self._not_in_a_call()
        with self._lock:
            return list(self._sink.events)

    def clear_events(self):
        if self._sink is None or self._sink.handler is not None:
            raise ValueError("this context keeps no events: create it with trace=True")
        self._not_in_a_call()
        with self._lock:
            self._sink.events.clear()

    def close(self):
        """Join the context's threads and free it. Weights made with it stay usable: their
        runs then name another context."""
        lock = getattr(self, "_lock", None)
        if lock is None:
            return
        self._not_in_a_call()
        with lock:
            if self._ptr and _lib is not None:
                _lib.pw_context_destroy(self._ptr)
            self._ptr = ctypes.c_void_p()

    def __repr__(self):
        if not self._ptr:
            return "Context(closed)"
        return "Context(threads=%d, isa=%r, policy=%r)" % (self.threads, self.isa, self.policy)


_local = threading.local()


def default_context():
    """This thread's context, made on first use: all cores, no cap, no trace."""
    ctx = getattr(_local, "ctx", None)
    if ctx is None:
        ctx = _local.ctx = Context()
    return ctx
