#!/usr/bin/python3
"""Generate the malformed-GGUF folder and the valid seeds of the fuzz corpus.

Every file starts from one small valid GGUF v3 file built here (independently
of packwise's writer) and breaks exactly one thing, so each has one expected
status. INDEX.txt lists, per file:

    <file> <status of opening> <status of loading every tensor> <what is broken>

where loading means pw_gguf_tensor_view and pw_gguf_tensor_read on each
tensor of a file that opens (PW_OK when all succeed, else the first failure).
tests/test_gguf_malformed.c checks every line.

Usage: /usr/bin/python3 generate.py [OUT_DIR] [SEED_DIR]
  (defaults: this folder, and ../../../fuzz/corpus/gguf for the valid seeds)
"""
import os
import struct
import sys

HERE = os.path.dirname(os.path.abspath(__file__))

UINT8, INT8, UINT16, INT16, UINT32, INT32, FLOAT32, BOOL, STRING, ARRAY, UINT64, INT64, FLOAT64 = range(13)
FIXED = {UINT8: "B", INT8: "b", UINT16: "H", INT16: "h", UINT32: "I", INT32: "i",
         FLOAT32: "f", BOOL: "B", UINT64: "Q", INT64: "q", FLOAT64: "d"}
# ggml type id -> (block elements, block bytes) for the types used here
TYPES = {0: (1, 4), 1: (1, 2), 8: (32, 34), 2: (32, 18), 12: (256, 144)}


def u32(v):
    return struct.pack("<I", v)


def u64(v):
    return struct.pack("<Q", v)


def gstr(b):
    if isinstance(b, str):
        b = b.encode()
    return u64(len(b)) + b


def value(t, v):
    if t in FIXED:
        return struct.pack("<" + FIXED[t], v)
    if t == STRING:
        return gstr(v)
    et, items = v
    return u32(et) + u64(len(items)) + b"".join(value(et, x) for x in items)


class File:
    """A GGUF image with the byte offset of every field, so tests can break one."""

    def __init__(self, kvs, tensors, alignment=32, version=3, data=None):
        self.off = {}
        out = bytearray(b"GGUF" + u32(version))
        self.off["n_tensors"] = len(out)
        out += u64(len(tensors))
        self.off["n_kv"] = len(out)
        out += u64(len(kvs))
        for i, (k, t, v) in enumerate(kvs):
            self.off["kv%d" % i] = len(out)
            out += gstr(k)
            self.off["kv%d.type" % i] = len(out)
            out += u32(t)
            self.off["kv%d.value" % i] = len(out)
            out += value(t, v)
        offset = 0
        self.sizes = []
        for i, (name, typ, ne) in enumerate(tensors):
            self.off["t%d" % i] = len(out)
            out += gstr(name)
            self.off["t%d.n_dims" % i] = len(out)
            out += u32(len(ne))
            self.off["t%d.ne" % i] = len(out)
            for n in ne:
                out += u64(n)
            self.off["t%d.type" % i] = len(out)
            out += u32(typ)
            self.off["t%d.offset" % i] = len(out)
            out += u64(offset)
            bs, bb = TYPES.get(typ, (1, 1))
            count = 1
            for n in ne:
                count *= n
            size = count // bs * bb
            self.sizes.append(size)
            offset += (size + alignment - 1) // alignment * alignment
        self.off["records_end"] = len(out)
        out += bytes(-len(out) % alignment)
        self.off["data"] = len(out)
        for i, size in enumerate(self.sizes):
            self.off["d%d" % i] = len(out)
            out += bytes((i * 37 + k * 11) % 251 for k in range(size))
            out += bytes(-len(out) % alignment)
        self.bytes = out

    def patch(self, at, raw):
        b = bytearray(self.bytes)
        b[at:at + len(raw)] = raw
        return bytes(b)


BASE_KVS = [
    ("general.architecture", STRING, "malformed"),
    ("general.alignment", UINT32, 32),
    ("test.count", UINT32, 3),
    ("test.names", ARRAY, (STRING, ["a", "", "\u00e9"])),
]
BASE_TENSORS = [
    ("a", 0, [4]),            # f32, 1-D
    ("w", 8, [96, 2]),        # q8_0, 3 blocks per row
    ("c", 1, [8, 2, 2]),      # f16, 3-D
]


def base(**kw):
    return File(kw.pop("kvs", BASE_KVS), kw.pop("tensors", BASE_TENSORS), **kw)


def cases():
    b = base()
    o = b.off
    raw = b.bytes
    yield "empty", b"", "PW_ERR_TRUNCATED", "PW_OK", "zero-byte file"
    yield "magic_only", b"GGUF", "PW_ERR_TRUNCATED", "PW_OK", "ends after the magic"
    yield "bad_magic", b"GGML" + raw[4:], "PW_ERR_BAD_FILE", "PW_OK", "magic is GGML"
    yield "version_1", b.patch(4, u32(1)), "PW_ERR_VERSION", "PW_OK", "GGUF v1 (32-bit counts)"
    yield "version_4", b.patch(4, u32(4)), "PW_ERR_VERSION", "PW_OK", "future version"
    yield "version_0", b.patch(4, u32(0)), "PW_ERR_VERSION", "PW_OK", "version 0"
    be = bytearray(b"GGUF" + struct.pack(">I", 3) + struct.pack(">Q", 0) + struct.pack(">Q", 0))
    yield "big_endian", bytes(be), "PW_ERR_VERSION", "PW_OK", "big-endian v3 header"
    yield "trunc_counts", raw[:12], "PW_ERR_TRUNCATED", "PW_OK", "ends inside the tensor count"
    yield "huge_tensor_count", b.patch(o["n_tensors"], u64(1 << 60)), "PW_ERR_TRUNCATED", "PW_OK", \
        "claims 2^60 tensors"
    yield "huge_kv_count", b.patch(o["n_kv"], u64(1 << 60)), "PW_ERR_TRUNCATED", "PW_OK", \
        "claims 2^60 key-value pairs"
    yield "max_kv_count", b.patch(o["n_kv"], u64(2**64 - 1)), "PW_ERR_TRUNCATED", "PW_OK", \
        "kv count 2^64-1 (overflows a size)"
    yield "kv_count_too_big", b.patch(o["n_kv"], u64(5)), "PW_ERR_BAD_FILE", "PW_OK", \
        "one pair more than written: a tensor record is read as a pair"
    yield "trunc_key", raw[:o["kv0"] + 12], "PW_ERR_TRUNCATED", "PW_OK", "ends inside the first key"
    yield "huge_key_length", b.patch(o["kv0"], u64(1 << 63)), "PW_ERR_TRUNCATED", "PW_OK", \
        "key length 2^63"
    f = base(kvs=[("", UINT32, 1)])
    yield "key_empty", f.bytes, "PW_ERR_BAD_FILE", "PW_OK", "an empty key (ggml aborts on it)"
    yield "key_not_utf8", b.patch(o["kv2"] + 8, b"\xfftest"), "PW_ERR_BAD_FILE", "PW_OK", \
        "key with byte 0xff"
    yield "key_overlong_utf8", b.patch(o["kv2"] + 8, b"\xc0\xaetest"), "PW_ERR_BAD_FILE", "PW_OK", \
        "key with an overlong encoding of '.'"
    yield "key_with_nul", b.patch(o["kv2"] + 8 + 4, b"\x00"), "PW_ERR_BAD_FILE", "PW_OK", \
        "key with a NUL byte"
    yield "bad_value_type", b.patch(o["kv2.type"], u32(13)), "PW_ERR_BAD_FILE", "PW_OK", \
        "value type 13"
    yield "trunc_value", raw[:o["kv2.value"] + 2], "PW_ERR_TRUNCATED", "PW_OK", \
        "ends inside a uint32 value"
    yield "huge_string_length", b.patch(o["kv0.value"], u64(1 << 40)), "PW_ERR_TRUNCATED", "PW_OK", \
        "string value of 2^40 bytes"
    f = base(kvs=[("big", ARRAY, (UINT32, [1, 2]))])
    yield "huge_array_count", f.patch(f.off["kv0.value"] + 4, u64(1 << 62)), "PW_ERR_TRUNCATED", \
        "PW_OK", "uint32 array of 2^62 elements (size overflows)"
    yield "huge_string_array", b.patch(o["kv3.value"] + 4, u64(1 << 59)), "PW_ERR_TRUNCATED", "PW_OK", \
        "string array of 2^59 elements"
    yield "bad_array_type", b.patch(o["kv3.value"], u32(99)), "PW_ERR_BAD_FILE", "PW_OK", \
        "array element type 99"
    deep = (UINT8, [1])
    for _ in range(17):
        deep = (ARRAY, [deep])
    f = base(kvs=[("deep", ARRAY, deep)])
    yield "nested_too_deep", f.bytes, "PW_ERR_BAD_FILE", "PW_OK", "arrays nested 18 levels"
    f = base(kvs=[("nest", ARRAY, (ARRAY, [(UINT8, [1, 2])] * 2))])
    yield "nested_huge_count", f.patch(f.off["kv0.value"] + 4, u64(1 << 61)), "PW_ERR_TRUNCATED", \
        "PW_OK", "array of 2^61 arrays"
    f = base(kvs=[("flag", BOOL, 1)])
    yield "bool_is_2", f.patch(f.off["kv0.value"], b"\x02"), "PW_ERR_BAD_FILE", "PW_OK", "bool value 2"
    f = base(kvs=BASE_KVS + [("test.count", UINT32, 4)])
    yield "duplicate_key", f.bytes, "PW_ERR_DUPLICATE", "PW_OK", "test.count set twice"
    yield "alignment_48", b.patch(o["kv1.value"], u32(48)), "PW_ERR_BAD_FILE", "PW_OK", \
        "alignment not a power of two"
    yield "alignment_0", b.patch(o["kv1.value"], u32(0)), "PW_ERR_BAD_FILE", "PW_OK", "alignment 0"
    f = base(kvs=[("general.alignment", UINT64, 32)])
    yield "alignment_u64", f.bytes, "PW_ERR_BAD_FILE", "PW_OK", "alignment stored as uint64"
    f = base(kvs=[("general.alignment", UINT32, 1 << 31)], tensors=[("a", 0, [4])])
    yield "alignment_2g", f.bytes, "PW_ERR_TRUNCATED", "PW_OK", \
        "alignment 2^31 puts the data section past the end"
    yield "trunc_tensor_name", raw[:o["t1"] + 8], "PW_ERR_TRUNCATED", "PW_OK", \
        "ends inside a tensor name"
    yield "tensor_name_not_utf8", b.patch(o["t1"] + 8, b"\xe2"), "PW_ERR_BAD_FILE", "PW_OK", \
        "tensor name 0xe2 (a lone lead byte)"
    f = base(tensors=[("w\x00x", 8, [96, 2])])
    yield "tensor_name_nul", f.bytes, "PW_ERR_BAD_FILE", "PW_OK", "tensor name with a NUL byte"
    yield "n_dims_0", b.patch(o["t1.n_dims"], u32(0)), "PW_ERR_BAD_FILE", "PW_OK", "n_dims 0"
    yield "n_dims_5", b.patch(o["t1.n_dims"], u32(5)), "PW_ERR_BAD_FILE", "PW_OK", "n_dims 5"
    yield "ne_negative", b.patch(o["t1.ne"] + 8, u64(2**64 - 2)), "PW_ERR_BAD_FILE", "PW_OK", \
        "ne[1] = -2"
    yield "ne_overflow", b.patch(o["t1.ne"], u64(1 << 40) + u64(1 << 40)), "PW_ERR_OVERFLOW", "PW_OK", \
        "2^40 x 2^40 elements"
    yield "row_not_blocks", b.patch(o["t1.ne"], u64(80)), "PW_ERR_SHAPE", "PW_OK", \
        "q8_0 row of 80 elements (2.5 blocks)"
    yield "offset_unaligned", b.patch(o["t1.offset"], u64(48)), "PW_ERR_BAD_FILE", "PW_OK", \
        "offset 48 with alignment 32"
    yield "offset_out_of_file", b.patch(o["t2.offset"], u64(1 << 20)), "PW_ERR_TRUNCATED", "PW_OK", \
        "data 1 MiB past the data section"
    yield "offset_wraps", b.patch(o["t2.offset"], u64(2**64 - 32)), "PW_ERR_TRUNCATED", "PW_OK", \
        "offset + data section wraps around 2^64"
    yield "tensors_overlap", b.patch(o["t2.offset"], u64(32)), "PW_ERR_BAD_FILE", "PW_OK", \
        "third tensor starts inside the second"
    f = base(tensors=[("a", 0, [4]), ("a", 0, [4])])
    yield "duplicate_tensor", f.bytes, "PW_ERR_DUPLICATE", "PW_OK", "two tensors named a"
    yield "trunc_records", raw[:o["t2.type"]], "PW_ERR_TRUNCATED", "PW_OK", \
        "ends inside the tensor records"
    yield "trunc_padding", raw[:o["records_end"] + 3], "PW_ERR_TRUNCATED", "PW_OK", \
        "ends in the padding before the data"
    yield "trunc_data", raw[:o["d2"] + 5], "PW_ERR_TRUNCATED", "PW_OK", \
        "ends inside the last tensor's data"
    yield "unknown_type_16", b.patch(o["t1.type"], u32(16)), "PW_OK", "PW_ERR_UNSUPPORTED", \
        "iq2_xxs: opens and inspects, loading is refused"
    yield "unknown_type_1000", b.patch(o["t1.type"], u32(1000)), "PW_OK", "PW_ERR_UNSUPPORTED", \
        "type id 1000: opens and inspects, loading is refused"
    f = base(tensors=[("z", 0, [0, 3]), ("a", 0, [4])])
    yield "zero_elements", f.bytes, "PW_OK", "PW_ERR_SHAPE", \
        "a tensor with ne [0, 3]: reads 0 bytes, has no view"
    f = base(kvs=BASE_KVS + [("test.raw", STRING, b"\xff\xfe")])
    yield "value_not_utf8", f.bytes, "PW_OK", "PW_OK", \
        "string VALUE with bytes 0xff 0xfe: accepted (values are bytes)"


def valid_seeds():
    every = [
        ("general.architecture", STRING, "seed"),
        ("s.u8", UINT8, 200), ("s.i8", INT8, -3), ("s.u16", UINT16, 60000), ("s.i16", INT16, -2),
        ("s.u32", UINT32, 7), ("s.i32", INT32, -9), ("s.f32", FLOAT32, 0.5), ("s.bool", BOOL, 1),
        ("s.u64", UINT64, 1 << 40), ("s.i64", INT64, -(1 << 40)), ("s.f64", FLOAT64, -2.25),
        ("s.strs", ARRAY, (STRING, ["x", "", "yz"])),
        ("s.nest", ARRAY, (ARRAY, [(UINT16, [1, 2]), (UINT16, [])])),
    ]
    yield "seed_every_type", File(every, BASE_TENSORS).bytes
    yield "seed_align128", File(BASE_KVS[:1] + [("general.alignment", UINT32, 128)],
                                [("q", 2, [96, 3]), ("k", 12, [256, 2])], alignment=128).bytes
    yield "seed_v2", File(BASE_KVS, BASE_TENSORS, version=2).bytes
    yield "seed_empty", File([], []).bytes


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else HERE
    seeds = sys.argv[2] if len(sys.argv) > 2 else os.path.join(HERE, "..", "..", "..", "fuzz",
                                                                 "corpus", "gguf")
    lines = ["# file  open_status  load_status  what is broken (generated by generate.py)"]
    for name, data, open_st, load_st, what in cases():
        with open(os.path.join(out, name + ".gguf"), "wb") as f:
            f.write(data)
        lines.append("%s.gguf %s %s %s" % (name, open_st, load_st, what))
    with open(os.path.join(out, "INDEX.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")
    os.makedirs(seeds, exist_ok=True)
    for name, data in valid_seeds():
        with open(os.path.join(seeds, name + ".gguf"), "wb") as f:
            f.write(data)
    print("%d malformed files, INDEX.txt, seeds in %s" % (len(lines) - 1, seeds))


if __name__ == "__main__":
    main()
