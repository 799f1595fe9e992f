"""QB4W through the binding: ONNX Runtime MatMulNBits initializers built in numpy, against a
numpy reference that dequantizes the weights itself and models the int8 (QD8) quantization of
X the way packwise documents it (quant/act.h): within 1e-5 of the largest |y|."""
import os
import unittest

import numpy as np

import packwise


def matmul_nbits_set(N, K, block, seed, with_zero_points=True):
    """B [N, n_blocks, block/2] uint8, scales [N * n_blocks] f16, zero_points packed 4-bit, and
    the weight values they stand for (float64, [N, K])."""
    rng = np.random.default_rng(seed)
    nb = (K + block - 1) // block
    u = rng.integers(0, 16, size=(N, nb * block)).astype(np.uint8)
    u[:, K:] = 0  # MatMulNBits pads the last block with zeros
    B = (u[:, 0::2] | (u[:, 1::2] << 4)).astype(np.uint8).reshape(N, nb, block // 2)
    scales = rng.uniform(-0.05, 0.05, size=N * nb).astype(np.float16)
    if with_zero_points:
        z = rng.integers(0, 16, size=(N, nb)).astype(np.uint8)
        zp = np.zeros((N, (nb + 1) // 2), np.uint8)
        zp |= z[:, 0::2]
        zp[:, :nb // 2] |= (z[:, 1::2] << 4).astype(np.uint8)
        zero_points = zp.reshape(-1)
    else:
        z = np.full((N, nb), 8, np.uint8)
        zero_points = None
    s = scales.astype(np.float64).reshape(N, nb)
    w = (u[:, :K].astype(np.float64) - np.repeat(z.astype(np.float64), block, axis=1)[:, :K]) \
        * np.repeat(s, block, axis=1)[:, :K]
    return B, scales, zero_points, w


def qd8(x):
    """Each row of float32 x as (q - zp) * scale, in float32 steps as packwise makes them."""
    f = np.float32
    rows = []
    for r in x.astype(np.float32):
        lo, hi = min(f(0), r.min()), max(f(0), r.max())
        s = f(hi / f(255)) - f(lo / f(255))
        if not s >= np.finfo(np.float32).tiny:
            s = f(1)
        inv = f(1) / s
        zp = np.clip(np.rint(f(-128) - f(lo * inv)), -128, 127)
        v = np.clip(r * inv, f(-256), f(256))
        q = np.clip(np.rint(v) + zp, -128, 127)
        rows.append((q - zp).astype(np.float64) * np.float64(s))
    return np.array(rows)


class MatMulNBits(unittest.TestCase):
    def check(self, N, K, block, with_zero_points, seed):
        B, scales, zero_points, w = matmul_nbits_set(N, K, block, seed, with_zero_points)
        bias = np.random.default_rng(seed + 1).standard_normal(N).astype(np.float32)
        x = np.random.default_rng(seed + 2).standard_normal((5, K)).astype(np.float32)
        wt = packwise.Weight.matmul_nbits(B, scales, zero_points, K=K, N=N, block_size=block, bias=bias)
        self.assertEqual((wt.info.kind, wt.format, wt.shape), ("qb4w", "QB4W", (N, K)))
        for rows in (x[:1], x):  # GEMV and GEMM kernels
            y = wt(rows)
            ref = qd8(rows) @ w.T + bias
            err = np.abs(y - ref).max() / np.abs(ref).max()
            self.assertLessEqual(err, 1e-5, "N=%d K=%d B=%d: relative error %g" % (N, K, block, err))
            # and against unquantized X: half an int8 step per value of the row's range
            exact = rows.astype(np.float64) @ w.T + bias
            step = (np.maximum(rows.max(axis=1), 0) - np.minimum(rows.min(axis=1), 0)) / 255
            bound = step[:, None] / 2 * np.abs(w).sum(axis=1)[None, :] + 1e-4
            self.assertTrue(np.all(np.abs(y - exact) <= bound))
        return wt, x

    def test_4bit_zero_points(self):
        for block in (32, 128):
            self.check(40, 320, block, True, 10 + block)  # 320 = 2.5 blocks of 128

    def test_default_zero_point(self):
        self.check(17, 256, 32, False, 7)

    def test_same_as_qb4w(self):
        """The importer is the descriptor with 4-bit zero points: the same bits out as one-byte
        zero points of the same values and as the transposed source."""
        N, K, block = 24, 96, 32
        B, scales, zero_points, _ = matmul_nbits_set(N, K, block, 3)
        x = np.random.default_rng(4).standard_normal((3, K)).astype(np.float32)
        a = packwise.Weight.matmul_nbits(B, scales, zero_points, K=K, N=N, block_size=block)
        nb = K // block
        zp = zero_points.reshape(N, (nb + 1) // 2)
        z8 = np.stack([zp & 0xF, zp >> 4], axis=2).reshape(N, -1)[:, :nb].copy()
        data = B.reshape(N, K // 2)
        b = packwise.Weight.qb4w(data, scales, N, K, block, zero_points=z8, zero_bits=8)
        u = np.stack([data & 0xF, data >> 4], axis=2).reshape(N, K)
        ut = u.T.copy()
        t = packwise.Weight.qb4w((ut[:, 0::2] | (ut[:, 1::2] << 4)).astype(np.uint8), scales, N, K,
                                 block, zero_points=z8, zero_bits=8, transposed=True)
        ya = a(x)
        self.assertEqual(ya.tobytes(), b(x).tobytes())
        self.assertEqual(ya.tobytes(), t(x).tobytes())

    def test_refused(self):
        B, scales, zero_points, _ = matmul_nbits_set(8, 64, 32, 5)
        with self.assertRaisesRegex(TypeError, "zero"):
            packwise.Weight.qb4w(B.reshape(8, 32), scales, 8, 64, 32)  # no zero points named
        with self.assertRaisesRegex(TypeError, "zero_bits"):
            packwise.Weight.qb4w(B.reshape(8, 32), scales, 8, 64, 32, zero_points=zero_points)
        with self.assertRaisesRegex(ValueError, "bits"):
            packwise.Weight.matmul_nbits(B, scales, zero_points, K=64, N=8, block_size=32, bits=8)
        with self.assertRaisesRegex(ValueError, "B must be"):
            packwise.Weight.matmul_nbits(B[:7], scales, zero_points, K=64, N=8, block_size=32)
        with self.assertRaisesRegex(ValueError, "scales"):
            packwise.Weight.matmul_nbits(B, scales[:-1], zero_points, K=64, N=8, block_size=32)
        with self.assertRaisesRegex(TypeError, "float zero points"):
            packwise.Weight.matmul_nbits(B, scales, scales, K=64, N=8, block_size=32)
        with self.assertRaises(packwise.PackwiseError):  # block size 48: not a power of two
            packwise.Weight.qb4w(np.zeros((8, 48), np.uint8), np.ones(16, np.float32), 8, 96, 48,
                                 zero_point=8)
        bad = scales.astype(np.float32)
        bad[3] = np.nan
        with self.assertRaisesRegex(packwise.PackwiseError, "row 1, block 1"):
            packwise.Weight.matmul_nbits(B, bad, zero_points, K=64, N=8, block_size=32)


if __name__ == "__main__":
    unittest.main()
