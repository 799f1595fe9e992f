"""Tests of the Python binding, including a converter-style test that proves its
bytes with disagreement(). Run with PACKWISE_LIBRARY pointing at libpackwise.so
and PACKWISE_TEST_DATA at tests/data."""
import os
import re
import unittest

import numpy as np

import packwise

DATA = os.environ.get("PACKWISE_TEST_DATA", os.path.join(os.path.dirname(__file__), "..", "..", "..", "tests", "data"))
S1 = os.path.join(DATA, "ggml", "fixture_s1_in768_out40.gguf")


def my_converter_to_kernel_order(canonical, block_bytes, rows, blocks):
    """What a downstream converter writes: input-block-major, b * rows + o."""
    out = bytearray(len(canonical))
    for o in range(rows):
        for b in range(blocks):
            src = (o * blocks + b) * block_bytes
            dst = (b * rows + o) * block_bytes
            out[dst:dst + block_bytes] = canonical[src:src + block_bytes]
    return bytes(out)


class Formats(unittest.TestCase):
    def test_every_format(self):
        names = {f["name"]: f for f in packwise.formats()}
        self.assertEqual(len(names), 18)
        self.assertEqual((names["Q4_K"]["block_size"], names["Q4_K"]["block_bytes"]), (256, 144))
        self.assertEqual(names["Q8_0"]["gguf_type"], 8)
        with self.assertRaises(packwise.PackwiseError) as e:
            packwise.format_info("Q9_9")
        self.assertIn("PW_ERR", str(e.exception))


class Gguf(unittest.TestCase):
    def test_list_and_dequantize(self):
        with packwise.GGUF(S1, orientation="out_in") as g:
            t = {x.name: x for x in g.tensors()}
            self.assertEqual(t["W.q4_K"].shape, (40, 768))
            self.assertEqual(t["W.q4_K"].ne, (768, 40))
            self.assertEqual(t["W.q4_K"].format, "Q4_K")
            for typ in ("q4_0", "q4_K", "q6_K", "tq2_0"):
                w = g.dequantize("W." + typ)
                ref = g.dequantize("deq." + typ)
                self.assertEqual(w.shape, (40, 768))
                self.assertTrue(np.array_equal(w.view(np.uint32), ref.view(np.uint32)), typ)
        with packwise.GGUF(S1, orientation="as_stored") as g:
            self.assertEqual({x.name: x for x in g.tensors()}["W.q4_K"].shape, (768, 40))

    def test_default_orientation_is_c_default(self):
        """No orientation named: as stored, as C's pw_gguf_open_options_init says; a weight
        labelled [in, out] is refused by the operator with the fix named, never multiplied."""
        with packwise.GGUF(S1) as g:
            self.assertEqual({x.name: x for x in g.tensors()}["W.q4_K"].shape, (768, 40))
            with self.assertRaises(packwise.PackwiseError) as e:
                g.matmul_wt(np.zeros((1, 40), dtype=np.float32), "W.q4_K")
            self.assertIn("OUT_IN", str(e.exception))

    def test_matmul_against_ggml(self):
        with open(os.path.join(DATA, "ggml", "MANIFEST.txt"), encoding="utf-8") as f:
            manifest = f.read()
        with packwise.GGUF(S1, orientation="out_in") as g:
            x = g.dequantize("x")
            for typ in ("q4_0", "q8_0", "q4_K", "q6_K"):
                y = g.matmul_wt(x, "W." + typ)[0].astype(np.float64)
                yexact = g.dequantize("yexact." + typ).astype(np.float64)
                ggml = float(re.search(r"\n  %s\s.*?y_vs_yexact=(\S+)" % re.escape(typ), manifest).group(1))
                rel = np.sqrt(np.mean((y - yexact) ** 2)) / np.sqrt(np.mean(yexact ** 2))
                self.assertLessEqual(rel, 2 * ggml, typ)

    def test_missing_tensor(self):
        with packwise.GGUF(S1, orientation="out_in") as g:
            with self.assertRaises(packwise.PackwiseError) as e:
                g.dequantize("no.such.tensor")
            self.assertIn("no.such.tensor", str(e.exception))


class Orders(unittest.TestCase):
    def test_there_and_back(self):
        rows, blocks = 7, 3
        canon = packwise.fixture("Q4_K", rows, blocks, "canonical")
        kern = packwise.to_kernel_order(canon, "Q4_K", rows, blocks, order="canonical")
        self.assertNotEqual(kern, canon)
        self.assertEqual(packwise.to_canonical_order(kern, "Q4_K", rows, blocks, order="kernel"), canon)
        # Naming the order the bytes are in: converting to it changes nothing.
        self.assertEqual(packwise.to_kernel_order(kern, "Q4_K", rows, blocks, order="kernel"), kern)
        self.assertEqual(kern, packwise.fixture("Q4_K", rows, blocks, "kernel"))


class ConverterStyle(unittest.TestCase):
    """A converter in another repository asserting disagreement(...) is None."""

    def test_every_format(self):
        rows, blocks = 9, 3
        for f in packwise.formats():
            name, bb = f["name"], f["block_bytes"]
            canon = packwise.fixture(name, rows, blocks)
            mine = my_converter_to_kernel_order(canon, bb, rows, blocks)
            self.assertIsNone(packwise.disagreement(mine, name, rows, blocks, order="kernel"), name)
            # A converter that forgot to convert: named as the other order.
            msg = packwise.disagreement(canon, name, rows, blocks, order="kernel")
            self.assertIsNotNone(msg)
            self.assertIn("expected at flat index 1 (input_block_major)", msg)
            self.assertIn("other order", msg)
            # A converter with one byte wrong, and one that drops the last byte.
            bad = bytearray(mine)
            bad[4 * bb + bb - 1] ^= 0x40
            self.assertIn("flat index 4", packwise.disagreement(bytes(bad), name, rows, blocks, order="kernel"))
            self.assertIn("short", packwise.disagreement(mine[:-1], name, rows, blocks, order="kernel"))
            # A wrong row or block count: both lengths first, then what they mean.
            for r, b in ((rows + 1, blocks), (rows, blocks - 1)):
                msg = packwise.disagreement(mine, name, r, b, order="kernel")
                self.assertIsNotNone(msg)
                given = "%d bytes given, %d expected" % (len(mine), r * b * bb)
                self.assertTrue(msg.split(": ", 1)[1].startswith(given), msg)
                self.assertIn("whole blocks", msg)

    def test_value_fixtures(self):
        for f in packwise.formats():
            data, values = packwise.value_fixture(f["name"])
            got = packwise.decode(data, f["name"], values.shape[0], values.shape[1], order="canonical")
            self.assertTrue(np.array_equal(got, values), f["name"])

    def test_matmul_on_bytes(self):
        data, values = packwise.value_fixture("Q8_0")
        x = np.arange(values.shape[1], dtype=np.float32).reshape(1, -1) / 50.0
        y = packwise.matmul_wt(x, data, "Q8_0", values.shape[0], values.shape[1], order="canonical")
        ref = x.astype(np.float64) @ values.T.astype(np.float64)
        # Fast kernels quantize x to int8 (half a step of max|x|/127 per value): 1% of sum |w x|.
        mag = np.abs(x).astype(np.float64) @ np.abs(values.T).astype(np.float64)
        self.assertTrue(np.all(np.abs(y - ref) <= 0.01 * mag), (y, ref))
        y_ref = packwise.matmul_wt(x, data, "Q8_0", values.shape[0], values.shape[1], order="canonical",
                                   kernel="ref_q8_0")
        self.assertTrue(np.all(np.abs(y_ref - ref) <= 1e-6 * mag))

class BytesNameTheirOrder(unittest.TestCase):
    """Every entry point that takes block bytes takes their order, with no default; kernel-order
    bytes go through each one fast and right when named, and a wrong name shows up against a
    fixture instead of turning into plausible numbers."""

    def test_no_default_order(self):
        data, values = packwise.value_fixture("Q4_K")
        rows, cols = values.shape
        blocks = cols // packwise.format_info("Q4_K")["block_size"]
        x = np.ones((1, cols), dtype=np.float32)
        for call in (lambda: packwise.decode(data, "Q4_K", rows, cols),
                     lambda: packwise.matmul_wt(x, data, "Q4_K", rows, cols),
                     lambda: packwise.to_kernel_order(data, "Q4_K", rows, blocks),
                     lambda: packwise.to_canonical_order(data, "Q4_K", rows, blocks),
                     lambda: packwise.disagreement(data, "Q4_K", rows, blocks)):
            with self.assertRaises(TypeError) as cm:
                call()
            self.assertIn("name the order", str(cm.exception))
        # A zeroed Layout names no order: refused by the library itself.
        with self.assertRaises(packwise.PackwiseError) as cm:
            packwise.decode(data, "Q4_K", rows, cols, order=packwise.Layout(0, 0))
        self.assertIn("names no order", str(cm.exception))

    def test_kernel_order_bytes(self):
        for name in ("Q4_0", "Q8_0", "Q4_K", "Q6_K"):
            data, values = packwise.value_fixture(name)
            rows, cols = values.shape
            blocks = cols // packwise.format_info(name)["block_size"]
            kern = packwise.to_kernel_order(data, name, rows, blocks, order="canonical")
            self.assertNotEqual(kern, data, name)
            # named right: the exact values, and the product of them
            self.assertTrue(np.array_equal(packwise.decode(kern, name, rows, cols, order="kernel"), values))
            x = (np.arange(cols, dtype=np.float32).reshape(1, -1) % 7) / 7.0
            y = packwise.matmul_wt(x, kern, name, rows, cols, order="kernel")
            y_canon = packwise.matmul_wt(x, data, name, rows, cols, order="canonical")
            # (two kernels, one per order: equal up to f32 rounding of the same sums)
            bound = 1e-5 * (np.abs(values) @ np.abs(x[0])) + 1e-30
            self.assertTrue(np.all(np.abs(y[0] - y_canon[0]) <= bound), name)
            # named wrong: a tag fixture in kernel order, checked as canonical, is reported as
            # being in the other order (the way to find out what order unknown bytes are in)
            tags = packwise.fixture(name, rows, blocks, order="kernel")
            msg = packwise.disagreement(tags, name, rows, blocks, order="canonical")
            self.assertIsNotNone(msg)
            self.assertIn("the bytes are in the other order", msg)
            # and converting them as if canonical does not give the kernel order twice over:
            # the result disagrees with the kernel-order fixture
            twice = packwise.to_kernel_order(tags, name, rows, blocks, order="canonical")
            self.assertIsNotNone(packwise.disagreement(twice, name, rows, blocks, order="kernel"))


if __name__ == "__main__":
    unittest.main()
