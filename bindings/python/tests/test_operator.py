"""The operator from Python (issue 17, item 3): a weight prepared once and run many times
(packwise.Weight) gives what the one-shot matmul_wt gives on the same inputs, bit for bit when
the same kernel runs; f16 and bf16 X, f16 Y, row strides, beta and bias; a context's threads
and trace events; the weight's source kept alive while the library reads it; wrong orders and
bad arguments refused. Weights have at least 3 blocks per row (one block per row reads the
same in either order, and proves nothing about orders)."""
import gc
import os
import threading
import unittest
import weakref

import numpy as np

import packwise

DATA = os.environ.get("PACKWISE_TEST_DATA", os.path.join(os.path.dirname(__file__), "..", "..", "..", "tests", "data"))
S1 = os.path.join(DATA, "ggml", "fixture_s1_in768_out40.gguf")
OUT, IN = 40, 768  # S1's weights: Q4_0/Q8_0 24 blocks per row, Q4_K/Q6_K 3


def q8_0_bytes(out, in_, seed):
    """Canonical Q8_0 bytes of a random [out, in] weight and its exact values."""
    rng = np.random.default_rng(seed)
    scales = (rng.uniform(0.5, 2.0, size=(out, in_ // 32)) / 64).astype(np.float16)
    qs = rng.integers(-127, 128, size=(out, in_ // 32, 32), dtype=np.int8)
    blocks = np.zeros((out, in_ // 32), dtype=[("d", "<f2"), ("qs", "i1", 32)])
    blocks["d"], blocks["qs"] = scales, qs
    w = (scales.astype(np.float32)[:, :, None] * qs.astype(np.float32)).reshape(out, in_)
    return blocks.tobytes(), w


def to_bf16_bits(x):
    """bfloat16 bits of float32 values (truncated), and those values as float32."""
    bits = (x.astype(np.float32).view(np.uint32) >> 16).astype(np.uint16)
    return bits, (bits.astype(np.uint32) << 16).view(np.float32)


def same(a, b):
    """Bit for bit (NaN payloads included)."""
    return a.shape == b.shape and a.dtype == b.dtype and a.tobytes() == b.tobytes()


class Fixture:
    """Canonical bytes of S1's weights, read once."""
    raw = {}

    @classmethod
    def get(cls, fmt):
        if fmt not in cls.raw:
            with packwise.GGUF(S1, orientation="out_in") as g:
                cls.raw[fmt] = g.raw("W." + fmt.lower().replace("_k", "_K"))
        return cls.raw[fmt]


FORMATS = ("Q4_0", "Q8_0", "Q4_K", "Q6_K")


def x_rows(n, seed=0, in_=IN):
    return np.random.default_rng(seed).standard_normal((n, in_)).astype(np.float32)


class PrepareOnceRunMany(unittest.TestCase):
    def test_equals_the_one_shot_product(self):
        """Each batch size through one prepared weight, three times over, equals the one-shot
        product with the same kernel forced (the class's: gemv for n = 1, gemm for n >= 2)."""
        ctx = packwise.Context(threads=1)
        for fmt in FORMATS:
            raw = Fixture.get(fmt)
            for policy in (None, "fastest", "in_place"):
                w = packwise.Weight(raw, fmt, OUT, IN, order="canonical", policy=policy, context=ctx)
                self.assertIs(w.prepare(), w)
                info = w.info
                self.assertTrue(info.prepared)
                self.assertEqual((info.out, info.in_, w.shape), (OUT, IN, (OUT, IN)))
                self.assertEqual(info.policy, policy or "compact")
                for n in (1, 2, 5, 17):
                    x = x_rows(n, seed=n)
                    kernel = info.kernel_gemv if n == 1 else info.kernel_gemm
                    want = packwise.matmul_wt(x, raw, fmt, OUT, IN, order="canonical", kernel=kernel)
                    for _ in range(3):
                        self.assertTrue(same(w.run(x), want), (fmt, policy, n, kernel))
                    if n == 1:
                        self.assertTrue(same(w(x[0]), want[0]), (fmt, policy))  # one row: 1-D
                w.close()

    def test_planned_kernel_equals_the_planned_one_shot(self):
        """Without forcing: the weight's plan and the one-shot's plan are the same (both
        compact), so the numbers are too; and within the quantization bound of the exact."""
        with packwise.GGUF(S1, orientation="out_in") as g:
            for fmt in FORMATS:
                name = "W." + fmt.lower().replace("_k", "_K")
                w = g.weight(name)
                x = x_rows(7, seed=3)
                y = w(x)
                self.assertTrue(same(y, g.matmul_wt(x, name)), fmt)
                self.assertTrue(same(y, packwise.matmul_wt(x, Fixture.get(fmt), fmt, OUT, IN,
                                                           order="canonical")), fmt)
                exact = x.astype(np.float64) @ g.dequantize(name).T.astype(np.float64)
                rel = np.sqrt(np.mean((y - exact) ** 2) / np.mean(exact ** 2))
                self.assertLess(rel, 1e-2, fmt)  # int8 X: about 0.4% relative rms
                w.close()

    def test_f16_and_bf16_x(self):
        """f16 and bf16 X are converted to f32 exactly: the product is the f32 product of the
        same values, bit for bit."""
        for fmt in FORMATS:
            raw = Fixture.get(fmt)
            for policy in ("compact", "fastest"):
                w = packwise.Weight(raw, fmt, OUT, IN, order="canonical", policy=policy)
                for n in (1, 6):
                    x16 = x_rows(n, seed=10 + n).astype(np.float16)
                    self.assertTrue(same(w(x16), w(x16.astype(np.float32))), (fmt, policy, n))
                    bits, xb = to_bf16_bits(x_rows(n, seed=20 + n))
                    self.assertTrue(same(w(bits, x_dtype="bf16"), w(xb)), (fmt, policy, n))
                    kernel = w.info.kernel_gemv if n == 1 else w.info.kernel_gemm
                    want = packwise.matmul_wt(xb, raw, fmt, OUT, IN, order="canonical", kernel=kernel)
                    self.assertTrue(same(w.run(bits, x_dtype="bf16"), want), (fmt, policy, n))

    def test_f16_y(self):
        """f16 Y is the f32 Y rounded to nearest even (numpy's astype)."""
        for fmt in FORMATS:
            w = packwise.Weight(Fixture.get(fmt), fmt, OUT, IN, order="canonical", policy="fastest")
            for n in (1, 4):
                x = x_rows(n, seed=30 + n)
                y16 = w(x, y_dtype=np.float16)
                self.assertEqual(y16.dtype, np.float16)
                self.assertTrue(same(y16, w(x).astype(np.float16)), (fmt, n))
                out = np.empty((n, OUT), np.float16)
                self.assertIs(w(x, out=out), out)  # the dtype taken from out
                self.assertTrue(same(out, y16))

    def test_beta_accumulates(self):
        """beta = 1: Y = Y + the product (f32: exactly numpy's sum); beta = 0 overwrites."""
        w = packwise.Weight(Fixture.get("Q4_K"), "Q4_K", OUT, IN, order="canonical")
        x = x_rows(3, seed=40)
        p = w(x)
        y0 = np.random.default_rng(41).standard_normal((3, OUT)).astype(np.float32)
        out = y0.copy()
        self.assertIs(w.run(x, out=out, beta=1), out)
        self.assertTrue(same(out, y0 + p))
        w.run(x, out=out, beta=1.0)
        self.assertTrue(same(out, (y0 + p) + p))
        w.run(x, out=out, beta=0)
        self.assertTrue(same(out, p))
        out16 = y0.astype(np.float16)
        w.run(x, out=out16, beta=1)
        self.assertTrue(same(out16, (y0.astype(np.float16).astype(np.float32) + p).astype(np.float16)))

    def test_bias_and_clamp(self):
        """bias adds to every row, clamp bounds X W^T + bias, beta adds Y after both."""
        raw = Fixture.get("Q8_0")
        b = np.random.default_rng(50).standard_normal(OUT).astype(np.float32)
        x = x_rows(4, seed=51)
        for policy in ("compact", "fastest"):
            w = packwise.Weight(raw, "Q8_0", OUT, IN, order="canonical", policy=policy)
            wb = packwise.Weight(raw, "Q8_0", OUT, IN, order="canonical", policy=policy, bias=b)
            p = w(x)
            self.assertTrue(np.allclose(wb(x), p + b, rtol=0, atol=1e-5 * np.abs(p + b).max()), policy)
            wc = packwise.Weight(raw, "Q8_0", OUT, IN, order="canonical", policy=policy, bias=b,
                                 clamp=(-1.0, 2.0))
            yc = wc(x)
            self.assertTrue(same(yc, np.clip(wb(x), -1.0, 2.0)), policy)
            out = np.ones((4, OUT), np.float32)
            wc.run(x, out=out, beta=1)
            self.assertTrue(same(out, np.float32(1) + yc), policy)
        q = Fixture.get("Q4_0")
        self.assertTrue(same(packwise.Weight(q, "Q4_0", OUT, IN, order="canonical", bias=list(b))(x),
                             packwise.Weight(q, "Q4_0", OUT, IN, order="canonical", bias=b)(x)))

    def test_row_strides(self):
        """Rows of a wider array go in with numpy's row stride (no copy needed); rows that are
        not contiguous are copied; Y's row stride writes into a wider array, leaving the
        columns around it as they were."""
        w = packwise.Weight(Fixture.get("Q6_K"), "Q6_K", OUT, IN, order="canonical", policy="fastest")
        x = x_rows(5, seed=60)
        want = w(x)
        wide = np.zeros((5, IN + 13), np.float32)
        wide[:, 7:7 + IN] = x
        self.assertTrue(same(w(wide[:, 7:7 + IN]), want))
        every_other = np.zeros((5, 2 * IN), np.float32)
        every_other[:, ::2] = x
        self.assertTrue(same(w(every_other[:, ::2]), want))
        self.assertTrue(same(w(np.asfortranarray(x)), want))
        self.assertTrue(same(w(x[::-1])[::-1], want))
        wide16 = np.zeros((5, IN + 3), np.float16)
        wide16[:, :IN] = x.astype(np.float16)
        self.assertTrue(same(w(wide16[:, :IN]), w(x.astype(np.float16))))
        ybig = np.full((5, OUT + 9), 7.0, np.float32)
        w.run(x, out=ybig[:, 4:4 + OUT])
        self.assertTrue(same(ybig[:, 4:4 + OUT], want))
        self.assertTrue(np.all(ybig[:, :4] == 7) and np.all(ybig[:, 4 + OUT:] == 7))
        # X inside Y's own buffer: read before Y is written (copied)
        both = np.zeros((5, IN + OUT), np.float32)
        both[:, :IN] = x
        w.run(both[:, :IN], out=both[:, IN:])
        self.assertTrue(same(both[:, IN:], want))
        self.assertTrue(same(w(x[:0]), np.empty((0, OUT), np.float32)))

    def test_nonfinite_rows(self):
        """A row of X holding a NaN or an infinity gives a row of NaN; the others are kept."""
        w = packwise.Weight(Fixture.get("Q4_0"), "Q4_0", OUT, IN, order="canonical")
        x = x_rows(3, seed=70)
        want = w(x)
        x[1, 5] = np.inf
        y = w(x)
        self.assertTrue(np.all(np.isnan(y[1])))
        self.assertTrue(same(y[[0, 2]], want[[0, 2]]))


class Threads(unittest.TestCase):
    def test_thread_count_does_not_change_the_numbers(self):
        for fmt in FORMATS:
            raw = Fixture.get(fmt)
            x = x_rows(64, seed=80)
            ys = []
            for threads in (1, 2, 3):
                ctx = packwise.Context(threads=threads)
                self.assertEqual(ctx.threads, threads)
                w = packwise.Weight(raw, fmt, OUT, IN, order="canonical", policy="fastest", context=ctx)
                ys.append((w(x), w(x[:1]), w.run(x, context=packwise.Context(threads=1))))
                ctx.close()
                # the weight outlives the context it was made with (its runs then name one)
                self.assertTrue(same(w(x, context=packwise.Context(threads=2)), ys[-1][0]))
            for y in ys[1:]:
                for a, b in zip(y, ys[0]):
                    self.assertTrue(same(a, b), fmt)

    def test_one_weight_many_threads(self):
        """A prepared weight is read-only: Python threads, each with its own context, run it at
        once (ctypes lets go of the GIL) and all get the single-thread numbers; a context
        shared by threads serves them one at a time, with the same numbers."""
        w = packwise.Weight(Fixture.get("Q4_K"), "Q4_K", OUT, IN, order="canonical", policy="fastest")
        w.prepare()
        xs = [x_rows(1 + i % 4, seed=90 + i) for i in range(8)]
        want = [w(x) for x in xs]
        shared = packwise.Context(threads=2)
        bad = []

        def work(ctx):
            for _ in range(25):
                for x, y in zip(xs, want):
                    if not same(w(x, context=ctx), y):
                        bad.append(1)

        threads = [threading.Thread(target=work, args=(c,))
                   for c in [packwise.Context(threads=1) for _ in range(3)] + [shared, shared, None]]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertEqual(bad, [])

    def test_close_waits_for_runs_in_flight(self):
        """close() from another thread while runs are in flight: each run either completes
        with the right numbers or is refused (ValueError), never reads a freed weight."""
        for _ in range(5):
            w = packwise.Weight(Fixture.get("Q8_0"), "Q8_0", OUT, IN, order="canonical")
            x = x_rows(32, seed=100)
            want = w(x)
            results = []

            def work():
                for _ in range(200):
                    try:
                        results.append(same(w(x), want))
                    except ValueError as e:
                        results.append("closed" in str(e))
                        return

            t = threading.Thread(target=work)
            t.start()
            w.close()
            t.join()
            self.assertTrue(all(results))


class Trace(unittest.TestCase):
    def test_events_as_python_objects(self):
        """Preparing a weight under 'fastest' emits one adapter event per packed form (with
        its bytes) and one kernel event per batch class; running it emits nothing more."""
        ctx = packwise.Context(threads=1, trace=True)
        self.assertEqual(ctx.events(), [])
        for fmt in FORMATS:
            ctx.clear_events()
            w = packwise.Weight(Fixture.get(fmt), fmt, OUT, IN, order="canonical", policy="fastest",
                                name="blk.0." + fmt, context=ctx)
            self.assertEqual(ctx.events(), [])  # planned: nothing packed yet
            w.prepare()
            info = w.info
            events = ctx.events()
            for e in events:
                self.assertIsInstance(e, packwise.TraceEvent)
                self.assertEqual(e.tensor, "blk.0." + fmt)
                self.assertTrue(str(e).startswith("trace " + e.kind), e)
            adapters = [e for e in events if e.kind == "adapter"]
            self.assertEqual(len(adapters), info.forms, events)
            self.assertEqual(sum(e.bytes for e in adapters), info.packed_bytes)
            for e in adapters:
                self.assertEqual(e.from_, "row_major")
                self.assertIn("bytes=%d" % e.bytes, e.line)
            kernels = {e.kernel for e in events if e.kind in ("kernel", "fallback")}
            self.assertEqual(kernels, {info.kernel_gemv, info.kernel_gemm}, events)
            ctx.clear_events()
            w(x_rows(1))
            w(x_rows(3))
            w.prepare()
            self.assertEqual(ctx.events(), [], fmt)
        # kernel-order bytes: the adapter says so
        kern = packwise.to_kernel_order(Fixture.get("Q4_K"), "Q4_K", OUT, 3, order="canonical")
        ctx.clear_events()
        packwise.Weight(kern, "Q4_K", OUT, IN, order="kernel", policy="fastest", context=ctx).prepare()
        self.assertTrue(any(e.kind == "adapter" and e.from_ == "input_block_major" for e in ctx.events()))

    def test_first_run_prepares_and_traces(self):
        ctx = packwise.Context(threads=1, trace=True)
        w = packwise.Weight(Fixture.get("Q8_0"), "Q8_0", OUT, IN, order="canonical", policy="fastest",
                            context=ctx)
        w(x_rows(1))
        gemv = ctx.events()
        self.assertTrue(any(e.kind == "kernel" and e.kernel == w.info.kernel_gemv for e in gemv), gemv)
        self.assertFalse(w.info.prepared or any(e.kernel == w.info.kernel_gemm for e in gemv
                                                if w.info.kernel_gemm != w.info.kernel_gemv))
        w(x_rows(2))
        self.assertTrue(w.info.prepared)

    def test_a_callback(self):
        seen = []
        ctx = packwise.Context(threads=1, trace=seen.append)
        w = packwise.Weight(Fixture.get("Q4_0"), "Q4_0", OUT, IN, order="canonical", policy="fastest",
                            context=ctx)
        w.prepare()
        self.assertTrue(seen and all(isinstance(e, packwise.TraceEvent) for e in seen))
        with self.assertRaises(ValueError):
            ctx.events()  # the callback has them

        def boom(event):
            raise KeyError("from the callback: " + event.kind)

        ctx2 = packwise.Context(threads=1, trace=boom)
        w2 = packwise.Weight(Fixture.get("Q4_0"), "Q4_0", OUT, IN, order="canonical",
                             policy="fastest", context=ctx2)
        with self.assertRaises(KeyError) as cm:
            w2.prepare()
        self.assertIn("from the callback", str(cm.exception))
        self.assertTrue(w2.info.prepared)  # the call itself completed
        self.assertTrue(same(w2(x_rows(2)), w(x_rows(2))))

        def reenter(event):
            w2.run(x_rows(1), context=ctx3)

        ctx3 = packwise.Context(threads=1, trace=reenter)
        with self.assertRaises(RuntimeError) as cm:
            packwise.Weight(Fixture.get("Q4_0"), "Q4_0", OUT, IN, order="canonical", context=ctx3).prepare()
        self.assertIn("already in a call", str(cm.exception))

    def test_untraced_contexts_keep_nothing(self):
        with self.assertRaises(ValueError):
            packwise.Context().events()
        with self.assertRaises(TypeError):
            packwise.Context(trace="yes")


class Sources(unittest.TestCase):
    def test_bytes_kept_alive_while_read(self):
        """The weight holds its source while a kernel may read it: for good under in_place,
        until prepared otherwise (then it lets go of it)."""
        raw = Fixture.get("Q4_K")
        x = x_rows(3, seed=110)
        want = packwise.Weight(raw, "Q4_K", OUT, IN, order="canonical", policy="in_place")(x)
        src = np.frombuffer(bytearray(raw), dtype=np.uint8)
        ref = weakref.ref(src)
        w = packwise.Weight(src, "Q4_K", OUT, IN, order="canonical", policy="in_place")
        del src
        gc.collect()
        self.assertIsNotNone(ref())
        self.assertTrue(w.info.reads_source)
        self.assertTrue(same(w(x), want))
        w.close()
        gc.collect()
        self.assertIsNone(ref())
        # packed forms: the source goes once every form is made and no kernel reads it (which
        # kernels read it depends on the ISA: the rule is checked for each format)
        for fmt in FORMATS:
            raw = Fixture.get(fmt)
            src = np.frombuffer(bytearray(raw), dtype=np.uint8)
            ref = weakref.ref(src)
            w = packwise.Weight(src, fmt, OUT, IN, order="canonical", policy="fastest")
            del src
            gc.collect()
            self.assertIsNotNone(ref())
            w.prepare()
            gc.collect()
            self.assertEqual(ref() is None, not w.info.reads_source, fmt)
            self.assertTrue(same(w(x), packwise.Weight(raw, fmt, OUT, IN, order="canonical",
                                                       policy="fastest")(x)), fmt)
        raw = Fixture.get("Q4_K")
        # bytes, bytearray, memoryview and numpy arrays of any dtype are taken as bytes
        for data in (bytes(raw), bytearray(raw), memoryview(raw),
                     np.frombuffer(raw, np.uint8).view(np.uint16).reshape(OUT, -1)):
            self.assertTrue(same(packwise.Weight(data, "Q4_K", OUT, IN, order="canonical",
                                                 policy="in_place")(x), want))

    def test_gguf_closed_under_a_weight(self):
        """A weight over a GGUF tensor reads the file's mapping: closing the file leaves it
        mapped for the weight, until the weight is closed."""
        x = x_rows(2, seed=120)
        g = packwise.GGUF(S1, orientation="out_in")
        want = g.matmul_wt(x, "W.q4_0")
        w = g.weight("W.q4_0", policy="in_place")
        w2 = packwise.Weight.from_gguf(g, "W.q6_K", policy="fastest")
        w2.prepare()
        g.close()
        with self.assertRaises(ValueError):
            g.dequantize("W.q4_0")
        with self.assertRaises(ValueError):
            g.weight("W.q4_0")
        self.assertTrue(same(w(x), want))
        self.assertEqual(w.format, "Q4_0")
        w.close()
        w2(x)
        w2.close()
        g.close()

    def test_gguf_orientation(self):
        with packwise.GGUF(S1, orientation="as_stored") as g:
            with self.assertRaises(packwise.PackwiseError) as cm:
                g.weight("W.q4_K")
            self.assertEqual(cm.exception.status, "PW_ERR_ORIENTATION")


class Orders(unittest.TestCase):
    def test_kernel_order_bytes(self):
        """Kernel-order bytes named as such give the canonical weight's numbers; named
        'canonical' they give other numbers (never the right ones by accident), and a tag
        fixture tells which order bytes are in; no order at all is refused."""
        for fmt in FORMATS:
            raw = Fixture.get(fmt)
            blocks = IN // packwise.format_info(fmt)["block_size"]
            self.assertGreaterEqual(blocks, 3)
            kern = packwise.to_kernel_order(raw, fmt, OUT, blocks, order="canonical")
            x = x_rows(4, seed=130)
            for policy in ("compact", "fastest"):
                right = packwise.Weight(raw, fmt, OUT, IN, order="canonical", policy=policy)(x)
                named = packwise.Weight(kern, fmt, OUT, IN, order="kernel", policy=policy)(x)
                self.assertTrue(np.allclose(named, right, rtol=0, atol=1e-2 * np.abs(right).max()),
                                (fmt, policy))
                wrong = packwise.Weight(kern, fmt, OUT, IN, order="canonical", policy=policy)(x)
                self.assertGreater(np.abs(wrong - right).max(), 0.1 * np.abs(right).max(), (fmt, policy))
            with self.assertRaises(TypeError) as cm:
                packwise.Weight(kern, fmt, OUT, IN)
            self.assertIn("name the order", str(cm.exception))
            tags = packwise.fixture(fmt, OUT, blocks, order="kernel")
            self.assertIn("other order", packwise.disagreement(tags, fmt, OUT, blocks, order="canonical"))


class BadArguments(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.w = packwise.Weight(Fixture.get("Q4_0"), "Q4_0", OUT, IN, order="canonical")

    def test_x(self):
        w, x = self.w, x_rows(2)
        with self.assertRaisesRegex(ValueError, "columns"):
            w(x[:, :IN - 32])
        with self.assertRaisesRegex(ValueError, "3-D"):
            w(x.reshape(1, 2, IN))
        for bad in (x.astype(np.float64), x.astype(np.int32), x.tolist()):
            with self.assertRaisesRegex(TypeError, "float32, float16 or bfloat16"):
                w(bad)
        with self.assertRaisesRegex(TypeError, "x_dtype='bf16'"):
            w(x.view(np.uint16)[:, ::2].copy())
        with self.assertRaisesRegex(TypeError, "byte order"):
            w(x.astype(x.dtype.newbyteorder(">")))
        with self.assertRaises(TypeError):
            w(x, x_dtype="bf16")  # float32 named bf16
        with self.assertRaises(ValueError):
            w(x, x_dtype="int8")

    def test_out(self):
        w, x = self.w, x_rows(2)
        for out, err, what in ((np.empty((2, OUT + 1), np.float32), ValueError, "shape"),
                               (np.empty((3, OUT), np.float32), ValueError, "shape"),
                               (np.empty((2, 2 * OUT), np.float32)[:, ::2], ValueError, "contiguous"),
                               (np.empty((2, OUT), np.float64), TypeError, "float32 or float16"),
                               (np.empty((2, OUT), np.float32).tolist(), TypeError, "numpy array")):
            with self.assertRaisesRegex(err, what):
                w(x, out=out)
        ro = np.empty((2, OUT), np.float32)
        ro.flags.writeable = False
        with self.assertRaisesRegex(ValueError, "read-only"):
            w(x, out=ro)
        with self.assertRaisesRegex(TypeError, "y_dtype"):
            w(x, out=np.empty((2, OUT), np.float32), y_dtype=np.float16)
        with self.assertRaises(TypeError):
            w(x, y_dtype=np.int8)
        with self.assertRaisesRegex(ValueError, "out="):
            w(x, beta=1)
        with self.assertRaises(TypeError):
            w(x, out=np.zeros((2, OUT), np.float32), beta="1")
        with self.assertRaisesRegex(packwise.PackwiseError, "beta"):
            w(x, out=np.zeros((2, OUT), np.float32), beta=float("inf"))

    def test_options(self):
        raw = Fixture.get("Q4_0")
        with self.assertRaisesRegex(ValueError, "policy"):
            packwise.Weight(raw, "Q4_0", OUT, IN, order="canonical", policy="smallest")
        with self.assertRaisesRegex(ValueError, "serves"):
            packwise.Weight(raw, "Q4_0", OUT, IN, order="canonical", serves="all")
        with self.assertRaises(packwise.PackwiseError) as cm:
            packwise.Weight(raw, "Q4_0", OUT, IN, order="canonical", kernel="no_such_kernel")
        self.assertEqual(cm.exception.status, "PW_ERR_NOT_FOUND")
        with self.assertRaisesRegex(packwise.PackwiseError, "Q8_0"):
            packwise.Weight(raw, "Q4_0", OUT, IN, order="canonical", kernel="ref_q8_0")
        with self.assertRaisesRegex(ValueError, r"shape \(40,\)"):
            packwise.Weight(raw, "Q4_0", OUT, IN, order="canonical", bias=np.zeros(OUT - 1))
        with self.assertRaisesRegex(packwise.PackwiseError, "not finite"):
            packwise.Weight(raw, "Q4_0", OUT, IN, order="canonical", bias=np.full(OUT, np.nan))
        with self.assertRaisesRegex(packwise.PackwiseError, "clamp"):
            packwise.Weight(raw, "Q4_0", OUT, IN, order="canonical", clamp=(1.0, -1.0))
        with self.assertRaisesRegex(packwise.PackwiseError, "17279"):
            packwise.Weight(raw[:-1], "Q4_0", OUT, IN, order="canonical")
        with self.assertRaises(TypeError):
            packwise.Weight("not bytes", "Q4_0", OUT, IN, order="canonical")
        with self.assertRaises(TypeError):
            packwise.Weight(raw, "Q4_0", OUT, IN, order="canonical", context="ctx")
        gemv = packwise.Weight(raw, "Q4_0", OUT, IN, order="canonical", serves="gemv")
        self.assertEqual(gemv.info.kernel_gemm, "")
        gemv(x_rows(1))
        with self.assertRaises(packwise.PackwiseError) as cm:
            gemv(x_rows(2))
        self.assertEqual(cm.exception.status, "PW_ERR_UNSUPPORTED")

    def test_contexts(self):
        for bad in (-1, 2000):
            with self.assertRaises(packwise.PackwiseError) as cm:
                packwise.Context(threads=bad)
            self.assertEqual(cm.exception.status, "PW_ERR_INVALID_ARGUMENT")
        with self.assertRaises(OverflowError):
            packwise.Context(threads=2 ** 40)
        with self.assertRaises(TypeError):
            packwise.Context(threads=1.5)
        with self.assertRaisesRegex(ValueError, "isa"):
            packwise.Context(isa="sse9")
        self.assertEqual(packwise.Context(isa="scalar").isa, "scalar")
        self.assertEqual(packwise.Context(policy="fastest").policy, "fastest")
        ctx = packwise.Context(threads=1)
        ctx.close()
        with self.assertRaisesRegex(ValueError, "closed"):
            self.w(x_rows(1), context=ctx)
        with self.assertRaises(TypeError):
            self.w(x_rows(1), context=object())

    def test_closed_weight(self):
        w = packwise.Weight(Fixture.get("Q4_0"), "Q4_0", OUT, IN, order="canonical")
        with w:
            w(x_rows(1))
        for call in (lambda: w(x_rows(1)), w.prepare, lambda: w.info):
            with self.assertRaisesRegex(ValueError, "closed"):
                call()
        w.close()  # twice is fine
        self.assertEqual(repr(w), "Weight(closed)")


class DecodeStepCalls(unittest.TestCase):
    """matmul_wt_many (Q, K, V over one X) and matmul_wt_experts (mul_mat_id): bit for bit
    what each weight gives alone."""

    @classmethod
    def setUpClass(cls):
        cls.ws = [packwise.Weight(Fixture.get(f), f, OUT, IN, order="canonical", policy=p, name=f)
                  for f, p in (("Q4_K", "compact"), ("Q8_0", "fastest"), ("Q6_K", "compact"),
                               ("Q4_0", "fastest"))]

    def test_many(self):
        ctx = packwise.Context(threads=2)
        for n in (1, 2, 7):
            x = x_rows(n, seed=160 + n)
            want = [w(x) for w in self.ws]
            got = packwise.matmul_wt_many(x, self.ws, context=ctx)
            self.assertEqual(len(got), len(want))
            for g, y in zip(got, want):
                self.assertTrue(same(g, y), n)
            # fused output: each Y is a column range of one [n, 4 * out] array (ldy = 4 * out)
            fused = np.full((n, 4 * OUT + 1), 5.0, np.float32)
            outs = [fused[:, i * OUT:(i + 1) * OUT] for i in range(4)]
            self.assertIs(packwise.matmul_wt_many(x, self.ws, out=outs)[2], outs[2])
            self.assertTrue(same(fused[:, :4 * OUT], np.concatenate(want, axis=1)), n)
            self.assertTrue(np.all(fused[:, -1] == 5))
        one = packwise.matmul_wt_many(x_rows(1)[0], self.ws[:2])
        self.assertEqual(one[0].shape, (OUT,))
        self.assertEqual(packwise.matmul_wt_many(x_rows(2), []), [])

    def test_many_refused(self):
        x = x_rows(2)
        with self.assertRaisesRegex(TypeError, "float32"):
            packwise.matmul_wt_many(x.astype(np.float16), self.ws)
        narrow = packwise.Weight(Fixture.get("Q8_0")[:OUT * 12 * 34], "Q8_0", OUT, 384, order="canonical")
        with self.assertRaisesRegex(ValueError, "in = 384"):
            packwise.matmul_wt_many(x, self.ws + [narrow])
        with self.assertRaisesRegex(ValueError, "3 arrays for 4"):
            packwise.matmul_wt_many(x, self.ws, out=[np.empty((2, OUT), np.float32)] * 3)
        with self.assertRaisesRegex(ValueError, "shape"):
            packwise.matmul_wt_many(x, self.ws[:1], out=[np.empty((3, OUT), np.float32)])
        with self.assertRaises(TypeError):
            packwise.matmul_wt_many(x, self.ws + ["w"])
        with self.assertRaises(packwise.PackwiseError):
            packwise.matmul_wt_many(x, self.ws * 17)  # 68 > PW_MATMUL_MANY_MAX
        closed = packwise.Weight(Fixture.get("Q4_0"), "Q4_0", OUT, IN, order="canonical")
        closed.close()
        with self.assertRaisesRegex(ValueError, "closed"):
            packwise.matmul_wt_many(x, self.ws + [closed])
        self.assertTrue(same(self.ws[0](x), packwise.matmul_wt_many(x, self.ws)[0]))  # still open

    def test_experts(self):
        experts = self.ws[:3]
        n = 9
        x = x_rows(n, seed=170)
        route = np.array([2, 0, -1, 2, 2, 0, -1, 2, 0])  # expert 1 gets no rows
        y = packwise.matmul_wt_experts(x, experts, route)
        for e, w in enumerate(experts):
            rows = np.flatnonzero(route == e)
            if len(rows):
                self.assertTrue(same(y[rows], w(x[rows])), e)
        self.assertTrue(np.all(y[route == -1] == 0))
        out = np.full((n, OUT), 3.0, np.float32)
        packwise.matmul_wt_experts(x, experts, route.astype(np.int64), out=out)
        self.assertTrue(np.all(out[route == -1] == 3))
        self.assertTrue(same(out[route >= 0], y[route >= 0]))
        self.assertTrue(same(packwise.matmul_wt_experts(x[4], experts, 2), experts[2](x[4])))
        for bad, err in ((np.array([0, 3] + [0] * 7), ValueError), (np.array([0, -2] + [0] * 7), ValueError),
                         (np.array([2 ** 32] + [0] * 8), ValueError), (route[:-1], ValueError),
                         (route.astype(np.float32), TypeError)):
            with self.assertRaises(err):
                packwise.matmul_wt_experts(x, experts, bad)
        with self.assertRaisesRegex(TypeError, "float32"):
            packwise.matmul_wt_experts(x.astype(np.float16), experts, route)
        with self.assertRaisesRegex(ValueError, "no experts"):
            packwise.matmul_wt_experts(x, [], route)


class QC4W(unittest.TestCase):
    """Per-channel int4 weights: two nibbles per byte along `in`, low nibble first."""

    @staticmethod
    def make(out, in_, seed):
        rng = np.random.default_rng(seed)
        values = rng.integers(-8, 8, size=(out, in_)).astype(np.int8)
        scale = rng.uniform(0.01, 0.1, size=out).astype(np.float32)
        return values, scale

    @staticmethod
    def nibbles(values, zero_point):
        """Rows of ceil(cols / 2) bytes; zero point 0: two's complement, 8: value + 8."""
        v = (values.astype(np.int16) + zero_point) & 0xF
        if v.shape[1] % 2:
            v = np.concatenate([v, np.zeros((v.shape[0], 1), v.dtype)], axis=1)
        return (v[:, 0::2] | (v[:, 1::2] << 4)).astype(np.uint8)

    def test_product(self):
        out, in_ = 24, 200
        values, scale = self.make(out, in_, 140)
        bias = np.random.default_rng(141).standard_normal(out).astype(np.float32)
        x = x_rows(3, seed=142, in_=in_)
        w8 = packwise.Weight.qc4w(self.nibbles(values, 8), scale, out, in_, zero_point=8, bias=bias)
        y = w8(x)
        exact = x.astype(np.float64) @ (values * scale[:, None]).T.astype(np.float64) + bias
        # X quantized to int8 per row: half a step of (max - min) / 255 per value
        step = (x.max(axis=1) - x.min(axis=1)) / 255
        bound = step[:, None] / 2 * (np.abs(values) * scale[:, None]).sum(axis=1)[None, :] + 1e-4
        self.assertTrue(np.all(np.abs(y - exact) <= bound), np.abs(y - exact).max())
        self.assertEqual((w8.info.kind, w8.format, w8.shape), ("qc4w", "QC4W", (out, in_)))
        # the same weight, signed nibbles or transposed: the same numbers
        w0 = packwise.Weight.qc4w(self.nibbles(values, 0), scale, out, in_, zero_point=0, bias=bias)
        self.assertTrue(same(w0(x), y))
        wt = packwise.Weight.qc4w(self.nibbles(values.T.copy(), 8), scale, out, in_, zero_point=8,
                                  bias=bias, transposed=True)
        self.assertTrue(same(wt(x), y))
        # f16 X, f16 Y, beta
        self.assertTrue(same(w8(x.astype(np.float16)), w8(x.astype(np.float16).astype(np.float32))))
        self.assertTrue(same(w8(x, y_dtype=np.float16), y.astype(np.float16)))
        acc = np.ones_like(y)
        w8.run(x, out=acc, beta=1)
        self.assertTrue(same(acc, np.float32(1) + y))

    def test_refused(self):
        values, scale = self.make(8, 65, 150)
        data = self.nibbles(values, 8)
        self.assertEqual(data.shape, (8, 33))
        with self.assertRaisesRegex(TypeError, "zero_point"):
            packwise.Weight.qc4w(data, scale, 8, 65)
        with self.assertRaisesRegex(ValueError, "263 bytes"):
            packwise.Weight.qc4w(data.reshape(-1)[:-1], scale, 8, 65, zero_point=8)
        with self.assertRaisesRegex(ValueError, "scale"):
            packwise.Weight.qc4w(data, scale[:-1], 8, 65, zero_point=8)
        with self.assertRaisesRegex(packwise.PackwiseError, "zero"):
            packwise.Weight.qc4w(data, scale, 8, 65, zero_point=4)
        bad = scale.copy()
        bad[3] = np.inf
        with self.assertRaisesRegex(packwise.PackwiseError, "3"):
            packwise.Weight.qc4w(data, bad, 8, 65, zero_point=8)
        with self.assertRaises(packwise.PackwiseError):
            packwise.Weight.qc4w(data, scale, 8, 65, zero_point=8, policy="in_place")
        w = packwise.Weight.qc4w(data, scale, 8, 65, zero_point=8)
        self.assertEqual(w.shape, (8, 65))
        w(x_rows(2, in_=65))


if __name__ == "__main__":
    unittest.main()
