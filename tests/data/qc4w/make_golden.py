#!/usr/bin/env python3
"""Golden packed bytes for tests/test_qc4w_pack.c.

An implementation of the QC4W packed layout written from its description
(src/qc4w/qc4w.h, top comment) in plain Python, independent of the C
packer: it works from signed values, never from the raw nibbles' bit tricks.

    golden_input.bin       u32 N, u32 K, u32 zero_point (little-endian),
                           N rows of ceil(K/2) raw bytes (zero point 8; the
                           unused nibble of each odd row holds 0xA, which the
                           packer must ignore), f32 scale[N], f32 bias[N]
    golden_<family>.bin    the packed bytes for that family's (nr, kr, sr)

Run: /usr/bin/python3 tests/data/qc4w/make_golden.py   (writes beside itself)
"""
import os
import struct

N, K, ZP = 5, 37, 8
FAMILIES = [(16, 8, 2), (8, 8, 2), (4, 16, 2), (8, 4, 1)]


def value(n, k):
    return (5 * n + 3 * k + (n * k) % 7) % 16 - 8  # signed int4


def raw_bytes():
    out = bytearray()
    for n in range(N):
        row = bytearray((K + 1) // 2)
        for k in range(K):
            row[k // 2] |= (value(n, k) + ZP) << (4 * (k % 2))
        if K % 2:
            row[-1] |= 0xA << 4
        out += row
    return out


def scales():
    return [0.25 * (n + 1) * (-1) ** n for n in range(N)]


def biases():
    return [n - 2.5 for n in range(N)]


def pack(nr, kr, sr):
    kp = (K + 31) // 32 * 32
    tiles = (N + nr - 1) // nr
    out = bytearray()
    for t in range(tiles):
        data = bytearray(kp * nr // 2)
        for j in range(kp // kr):          # chunk j: k in [j*kr, j*kr + kr)
            for c in range(nr):            # channels of the tile, one after another
                n = t * nr + c
                for i in range(kr):        # value i of the channel's chunk
                    k = j * kr + i
                    v = value(n, k) if n < N and k < K else 0
                    if sr == 1:
                        byte, high = i // 2, i % 2
                    else:
                        byte, high = i % (kr // 2), i // (kr // 2)
                    data[(j * nr + c) * (kr // 2) + byte] |= (v & 15) << (4 * high)
        out += data
        chans = [t * nr + c for c in range(nr)]
        out += b"".join(struct.pack("<i", sum(value(n, k) for k in range(K)) if n < N else 0)
                        for n in chans)
        out += b"".join(struct.pack("<f", scales()[n] if n < N else 0.0) for n in chans)
        out += b"".join(struct.pack("<f", biases()[n] if n < N else 0.0) for n in chans)
    return out


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, "golden_input.bin"), "wb") as f:
        f.write(struct.pack("<III", N, K, ZP))
        f.write(raw_bytes())
        f.write(b"".join(struct.pack("<f", s) for s in scales()))
        f.write(b"".join(struct.pack("<f", b) for b in biases()))
    for nr, kr, sr in FAMILIES:
        with open(os.path.join(here, f"golden_qc4w_n{nr}k{kr}s{sr}.bin"), "wb") as f:
            f.write(pack(nr, kr, sr))


if __name__ == "__main__":
    main()
