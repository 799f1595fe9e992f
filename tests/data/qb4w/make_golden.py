#!/usr/bin/env python3
"""Golden packed bytes for tests/test_qb4w.c.

An implementation of the QB4W packed layout written from its description
(src/kernel/qb4w.h, top comment) in plain Python, independent of the C
packer: it works from the values u - z of each block (the weight sums and
F = sum of ws_b * s_b), not from the C packer's loops.

    golden_input.bin       u32 N, u32 K, u32 B (little-endian), N rows of
                           ceil(K/2) raw bytes (the unused nibble of each odd
                           row holds 0xB, which the packer must ignore),
                           N x nb f16 scales, N x ceil(nb/2) U4 zero-point
                           bytes (low nibble = even block; an odd nb's unused
                           nibble holds 0x5), f32 bias[N]
    golden_<family>.bin    the packed bytes for that family's (nr, kr, sr)

Run: /usr/bin/python3 tests/data/qb4w/make_golden.py   (writes beside itself)
"""
import os
import struct

N, K, B = 6, 283, 16           # 18 blocks per row, the last one partial: records of
                               # 4 + 2 (nr 16), 8 + 8 + 2 (nr 8), 16 + 2 (nr 4) blocks
NB = (K + B - 1) // B
FAMILIES = [(16, 8, 2), (8, 8, 2), (4, 16, 2)]


def u(n, k):  # unsigned nibble 0..15
    return (7 * n + 5 * k + (n * k) % 11) % 16


def z(n, b):  # zero point 0..15
    return (3 * n + 5 * b + 1) % 16


def scale_f16(n, b):  # exact small f16 values, both signs
    return struct.unpack('<H', struct.pack('<e', 0.125 * (n + 1) * (-1) ** b + 0.0625 * b))[0]


def f16_as_f32_bytes(h):
    return struct.pack('<f', struct.unpack('<e', struct.pack('<H', h))[0])


def fma32(a, b, c):
    """fmaf: a * b + c rounded once to binary32. Here a is a small integer and b an
    f16 value, so a * b and the sum are exact in binary64: one rounding, to binary32."""
    return struct.unpack('<f', struct.pack('<f', a * b + c))[0]


def bias(n):
    return 0.5 * n - 1.25


def raw_input():
    out = bytearray(struct.pack('<III', N, K, B))
    for n in range(N):
        row = bytearray((K + 1) // 2)
        for k in range(K):
            row[k // 2] |= u(n, k) << (4 * (k % 2))
        if K % 2:
            row[-1] |= 0xB << 4
        out += row
    for n in range(N):
        for b in range(NB):
            out += struct.pack('<H', scale_f16(n, b))
    for n in range(N):
        zr = bytearray((NB + 1) // 2)
        for b in range(NB):
            zr[b // 2] |= z(n, b) << (4 * (b % 2))
        if NB % 2:
            zr[-1] |= 0x5 << 4
        out += zr
    for n in range(N):
        out += struct.pack('<f', bias(n))
    return bytes(out)


def packed(nr, kr, sr):
    kp = NB * B
    g = 64 // nr  # blocks per record
    tiles = (N + nr - 1) // nr
    size = kp * nr // 2 + 5 * NB * nr + 8 * nr
    size = (size + 63) // 64 * 64
    out = bytearray()
    for t in range(tiles):
        data = [bytearray(B * nr // 2) for _ in range(NB)]
        scl = [bytearray(4 * nr) for _ in range(NB)]
        zer = [bytearray(nr) for _ in range(NB)]
        fsm = bytearray(4 * nr)
        bia = bytearray(4 * nr)
        for c in range(nr):
            n = t * nr + c
            if n >= N:
                continue  # a partial tile's missing channels stay zero
            F = 0.0
            for b in range(NB):
                zb = z(n, b)
                # u past K is the zero point itself: value u - z = 0
                vals = [u(n, k) if k < K else zb for k in range(b * B, b * B + B)]
                s = sum(v - zb for v in vals)
                sf = struct.unpack('<f', f16_as_f32_bytes(scale_f16(n, b)))[0]
                F = fma32(float(s), sf, F)
                scl[b][4 * c:4 * c + 4] = struct.pack('<f', sf)
                zer[b][c] = zb
                for j in range(B // kr):
                    base = (j * nr + c) * (kr // 2)
                    vv = vals[j * kr:(j + 1) * kr]
                    for i in range(kr):
                        if sr == 1:
                            byte, hi = i // 2, i % 2
                        else:
                            byte, hi = i % (kr // 2), i // (kr // 2)
                        data[b][base + byte] |= vv[i] << (4 * hi)
            fsm[4 * c:4 * c + 4] = struct.pack('<f', F)
            bia[4 * c:4 * c + 4] = struct.pack('<f', bias(n))
        tile = bytearray()
        for r in range(0, NB, g):  # records: the data, then the scales, then the zero points
            blocks = range(r, min(NB, r + g))
            for b in blocks:
                tile += data[b]
            for b in blocks:
                tile += scl[b]
            for b in blocks:
                tile += zer[b]
        tile += fsm + bia
        tile += bytes(size - len(tile))
        out += tile
    return bytes(out)


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, 'golden_input.bin'), 'wb') as f:
        f.write(raw_input())
    for nr, kr, sr in FAMILIES:
        with open(os.path.join(here, 'golden_qb4w_n%dk%ds%d.bin' % (nr, kr, sr)), 'wb') as f:
            f.write(packed(nr, kr, sr))


if __name__ == '__main__':
    main()
