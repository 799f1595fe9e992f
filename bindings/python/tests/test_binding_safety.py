"""The binding under hostile or careless callers (issue 13): threads, errors, integers past the
C range, arrays of the wrong rank, dtype or layout, names with NUL bytes. Each check failed on
the binding that shared one context between threads and passed Python values to ctypes
unchecked."""
import os
import threading
import unittest

import numpy as np

import packwise

DATA = os.environ.get("PACKWISE_TEST_DATA", os.path.join(os.path.dirname(__file__), "..", "..", "..", "tests", "data"))
S1 = os.path.join(DATA, "ggml", "fixture_s1_in768_out40.gguf")


class Threads(unittest.TestCase):
    def test_each_thread_gets_its_own_error(self):
        """Two threads failing at once, each in its own way: each error names its own call
        (one shared context let a thread read the other's message while ctypes released the GIL)."""
        g = packwise.GGUF(S1, orientation="out_in")
        wrong, errors = [], []

        def fail_on(tag, rounds=20000):
            try:
                for _ in range(rounds):
                    try:
                        g.dequantize("missing." + tag)
                    except packwise.PackwiseError as e:
                        if "missing." + tag not in str(e):
                            wrong.append((tag, str(e)))
                    else:
                        errors.append("no error for " + tag)
            except Exception as e:  # pragma: no cover - reported below
                errors.append(repr(e))

        threads = [threading.Thread(target=fail_on, args=(t,)) for t in ("alpha", "beta", "gamma")]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        g.close()
        self.assertEqual(errors, [])
        self.assertEqual(wrong[:3], [], "%d errors carried another thread's message" % len(wrong))

    def test_threads_compute_the_same(self):
        """Products from several threads at once equal the single-thread product."""
        with packwise.GGUF(S1, orientation="out_in") as g:
            x = g.dequantize("x").reshape(1, -1)
            want = g.matmul_wt(x, "W.q8_0")
            got = {}

            def work(i):
                got[i] = [g.matmul_wt(x, "W.q8_0") for _ in range(20)]

            threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            for rs in got.values():
                for y in rs:
                    self.assertTrue(np.array_equal(y, want))


class Errors(unittest.TestCase):
    def test_a_failure_reports_its_own_message(self):
        """A failed call never reports the previous failure's message."""
        with self.assertRaises(packwise.PackwiseError):
            packwise.GGUF("/nonexistent/first-failure.gguf")
        with self.assertRaises(packwise.PackwiseError) as e:
            packwise.format_info("Q9_9")
        self.assertNotIn("first-failure", str(e.exception))
        self.assertIn("Q9_9", str(e.exception))
        # And a success in between does not leave the old message behind either.
        packwise.fixture("Q4_0", 2, 1)
        with self.assertRaises(packwise.PackwiseError) as e:
            packwise.fixture("Q4_0", 0, 1)
        self.assertNotIn("first-failure", str(e.exception))


class Integers(unittest.TestCase):
    def test_past_the_c_range(self):
        """Integers past 64 bits were masked by ctypes: rows=2**64+7 checked a 7-row fixture and
        said the bytes agree."""
        seven = packwise.fixture("Q4_0", 7, 3)
        for rows in (2 ** 64 + 7, 2 ** 63, -2 ** 63 - 1, 2 ** 200):
            with self.assertRaises((OverflowError, ValueError)):
                packwise.disagreement(seven, "Q4_0", rows, 3, order="canonical")
            with self.assertRaises((OverflowError, ValueError)):
                packwise.fixture("Q4_0", rows, 3)
            with self.assertRaises((OverflowError, ValueError)):
                packwise.to_kernel_order(seven, "Q4_0", rows, 3, order="canonical")
        with self.assertRaises((OverflowError, ValueError)):
            packwise.disagreement(seven, "Q4_0", 7, 2 ** 64 + 3, order="canonical")
        with self.assertRaises((OverflowError, ValueError)):
            packwise.disagreement(seven, "Q4_0", 7, 3, order="row_tiled_%d" % (2 ** 64 + 7))
        data, values = packwise.value_fixture("Q8_0")
        with self.assertRaises((OverflowError, ValueError)):
            packwise.decode(data, "Q8_0", 2 ** 64 + values.shape[0], values.shape[1], order="canonical")

    def test_not_integers(self):
        seven = packwise.fixture("Q4_0", 7, 3)
        for rows in (7.0, "7", True, None):
            with self.assertRaises(TypeError):
                packwise.disagreement(seven, "Q4_0", rows, 3, order="canonical")
        # numpy integers are integers
        self.assertIsNone(packwise.disagreement(seven, "Q4_0", np.int64(7), np.int32(3), order="canonical"))

    def test_row_tiled_text(self):
        data = packwise.fixture("Q4_0", 8, 3, "row_tiled_4")
        self.assertIsNone(packwise.disagreement(data, "Q4_0", 8, 3, order="row_tiled_4"))
        for bad in ("row_tiled_+4", "row_tiled_ 4", "row_tiled_0_4", "row_tiled_4 ", "row_tiled_"):
            with self.assertRaises(ValueError):
                packwise.disagreement(data, "Q4_0", 8, 3, order=bad)


class Arrays(unittest.TestCase):
    def setUp(self):
        self.data, self.values = packwise.value_fixture("Q8_0")
        self.out, self.in_ = self.values.shape

    def matmul(self, x):
        return packwise.matmul_wt(x, self.data, "Q8_0", self.out, self.in_, order="canonical",
                                  kernel="ref_q8_0")

    def test_rank(self):
        """A 3-D x whose second axis matched `in` was taken as [n, in] and read short."""
        x = np.ones((2, self.in_, 3), dtype=np.float32)
        with self.assertRaises(ValueError):
            self.matmul(x)
        with self.assertRaises(ValueError):
            self.matmul(np.float32(1.0))

    def test_dtype(self):
        for dt in (np.float64, np.float16, np.int32, np.dtype(">f4")):
            with self.assertRaises(TypeError):
                self.matmul(np.ones((1, self.in_), dtype=dt))

    def test_layout(self):
        """A strided view gives the product of its values (copied), not of the bytes under it."""
        big = np.arange(2 * 2 * self.in_, dtype=np.float32).reshape(2, 2 * self.in_) / 1000.0
        view = big[:, ::2]
        self.assertFalse(view.flags.c_contiguous)
        self.assertTrue(np.array_equal(self.matmul(view), self.matmul(np.ascontiguousarray(view))))
        fortran = np.asfortranarray(big[:, :self.in_])
        self.assertTrue(np.array_equal(self.matmul(fortran), self.matmul(np.ascontiguousarray(fortran))))


class Names(unittest.TestCase):
    def test_nul_bytes(self):
        """A NUL cut names short: 'x\\0junk' found tensor 'x', 'Q4_0\\0x' was Q4_0."""
        with packwise.GGUF(S1, orientation="out_in") as g:
            g.dequantize("x")
            with self.assertRaises(ValueError):
                g.dequantize("x\0junk")
            with self.assertRaises(ValueError):
                g.matmul_wt(g.dequantize("x"), "W.q8_0\0", kernel=None)
            with self.assertRaises(ValueError):
                g.matmul_wt(g.dequantize("x"), "W.q8_0", kernel="ref_q8_0\0junk")
        with self.assertRaises(ValueError):
            packwise.format_info("Q4_0\0junk")
        with self.assertRaises(ValueError):
            packwise.GGUF(S1 + "\0.ignored")
        with self.assertRaises(TypeError):
            packwise.format_info(b"Q4_0")


class Structs(unittest.TestCase):
    def test_mirrors_are_the_library_size(self):
        """Each pw_*_init writes its whole struct and its size: a ctypes mirror shorter than
        the library's struct would be overrun (a field appended in C and not here). The init
        runs on a large zeroed buffer and must report exactly the mirror's size."""
        import ctypes
        from packwise import _abi
        lib = packwise._lib
        for name, mirror in (("pw_context_options_init", _abi.ContextOptions),
                             ("pw_run_args_init", _abi.RunArgs),
                             ("pw_weight_options_init", _abi.WeightOptions),
                             ("pw_gguf_open_options_init", _abi.GGUFOpenOptions),
                             ("pw_qc4w_weights_init", _abi.QC4WWeights),
                             ("pw_qb4w_weights_init", _abi.QB4WWeights)):
            buf = (ctypes.c_uint8 * 4096)()
            getattr(lib, name)(ctypes.cast(buf, ctypes.POINTER(mirror)))
            size = ctypes.c_size_t.from_buffer(buf).value
            self.assertEqual(size, ctypes.sizeof(mirror), name)


if __name__ == "__main__":
    unittest.main()
