#!/usr/bin/python3
"""packwise inspect / dequant against ggml's files and an independent parser.

usage: check_gguf_cli.py PACKWISE TESTS_DATA_DIR WORK_DIR

1. For every file in TESTS_DATA_DIR/ggml: `inspect --json` reports the header,
   the tensor records (name, type, ne, offset, bytes) and every metadata value
   exactly as a small GGUF parser written here reads them, and what
   MANIFEST.txt lists (sizes, counts, offsets, types, ne, bytes, KV values).
2. `dequant FILE T -o OUT` for every tensor: W.<type> equals ggml's deq.<type>
   bit for bit where the file has it; every f32 tensor equals its own bytes.
3. dequant of 1-D, 3-D and 4-D tensors (f16, q8_0) in a file written here
   gives row-major float32 of the reversed ne, decoded independently.
4. Bad input: exit status 2 and one line on stderr naming the file, the
   field and the byte offset (or the tensor and type id).
"""
import json
import os
import re
import struct
import subprocess
import sys

import numpy as np

FAILURES = []


def check(cond, what):
    if not cond:
        FAILURES.append(what)
        print("FAIL:", what)


FIXED = {0: "B", 1: "b", 2: "H", 3: "h", 4: "I", 5: "i", 6: "f", 7: "?", 10: "Q", 11: "q", 12: "d"}
TYPE_NAMES = ["uint8", "int8", "uint16", "int16", "uint32", "int32", "float32", "bool", "string",
              "array", "uint64", "int64", "float64"]
# ggml type id -> (name, block elements, block bytes)
GGML = {0: ("f32", 1, 4), 1: ("f16", 1, 2), 2: ("q4_0", 32, 18), 3: ("q4_1", 32, 20),
        6: ("q5_0", 32, 22), 7: ("q5_1", 32, 24), 8: ("q8_0", 32, 34), 10: ("q2_K", 256, 84),
        11: ("q3_K", 256, 110), 12: ("q4_K", 256, 144), 13: ("q5_K", 256, 176),
        14: ("q6_K", 256, 210), 20: ("iq4_nl", 32, 18), 30: ("bf16", 1, 2),
        34: ("tq1_0", 256, 54), 35: ("tq2_0", 256, 66)}


class Reader:
    """A minimal, independent GGUF v3 reader (no validation beyond what it needs)."""

    def __init__(self, data):
        self.d, self.p = data, 0
        assert self.take(4) == b"GGUF"
        self.version, n_t, n_kv = self.unpack("<IQQ")
        self.kv = []
        for _ in range(n_kv):
            key = self.string().decode()
            (t,) = self.unpack("<I")
            self.kv.append((key, t, self.value(t)))
        self.alignment = next((v for k, t, v in self.kv if k == "general.alignment"), 32)
        self.tensors = []
        for _ in range(n_t):
            name = self.string().decode()
            (nd,) = self.unpack("<I")
            ne = list(self.unpack("<%dQ" % nd))
            t, off = self.unpack("<IQ")
            self.tensors.append([name, t, ne, off])
        self.data_offset = (self.p + self.alignment - 1) // self.alignment * self.alignment
        for rec in self.tensors:
            _, bs, bb = GGML[rec[1]]
            n = int(np.prod(rec[2]))
            rec[3] += self.data_offset
            rec.append(n // bs * bb)

    def take(self, n):
        b = self.d[self.p:self.p + n]
        self.p += n
        return b

    def unpack(self, fmt):
        v = struct.unpack_from(fmt, self.d, self.p)
        self.p += struct.calcsize(fmt)
        return v

    def string(self):
        (n,) = self.unpack("<Q")
        return self.take(n)

    def value(self, t):
        if t in FIXED:
            return self.unpack("<" + FIXED[t])[0]
        if t == 8:
            return self.string()
        et, n = self.unpack("<IQ")
        return [self.value(et) for _ in range(n)]


def same_value(t, raw, js):
    if t == 8:
        return raw.decode("utf-8", "replace") == js
    if t == 9:
        return isinstance(js, list) and len(js) == len(raw) and all(
            same_value(8 if isinstance(r, bytes) else 9 if isinstance(r, list)
                       else 6 if isinstance(r, float) else 0, r, j)
            for r, j in zip(raw, js))
    if t == 6:
        return struct.pack("<f", raw) == struct.pack("<f", js)
    return raw == js


def run(args, **kw):
    return subprocess.run(args, capture_output=True, **kw)


def parse_manifest(path):
    files, cur = {}, None
    for line in open(path, encoding="utf-8"):
        m = re.match(r"FILE (\S+)", line)
        if m:
            cur = files.setdefault(m.group(1), {"tensors": {}, "types": []})
            continue
        if cur is None:
            continue
        m = re.match(r"\s+in=(\d+) out=(\d+) seed=(\d+)", line)
        if m:
            cur["in"], cur["out"], cur["seed"] = map(int, m.groups())
        m = re.match(r"\s{2}(\w+)\s+block=", line)
        if m:
            cur["types"].append(m.group(1))
        m = re.match(r"\s+(\S+)\s+(\w+)\s+ne=\[([\d, ]+)\]\s+logical=\[([\d, ]+)\]\s+bytes=(\d+)", line)
        if m:
            cur["tensors"][m.group(1)] = (m.group(2), [int(x) for x in m.group(3).split(",")],
                                          [int(x) for x in m.group(4).split(",")], int(m.group(5)))
        m = re.match(r"\s+file size: (\d+) bytes; GGUF version (\d+); alignment (\d+); data offset (\d+); "
                     r"(\d+) tensors; (\d+) KV pairs", line)
        if m:
            cur["summary"] = [int(x) for x in m.groups()]
    return files


def check_file(pw, path, manifest, work):
    name = os.path.basename(path)
    data = open(path, "rb").read()
    ref = Reader(data)
    r = run([pw, "inspect", path, "--json"])
    check(r.returncode == 0, "%s: inspect exit %d: %s" % (name, r.returncode, r.stderr))
    js = json.loads(r.stdout)
    size, version, alignment, data_offset, n_t, n_kv = manifest["summary"]
    check([js["file_size"], js["version"], js["alignment"], js["data_offset"], js["tensor_count"],
           js["kv_count"]] == [size, version, alignment, data_offset, n_t, n_kv],
          "%s: header %s vs MANIFEST %s" % (name, js, manifest["summary"]))
    check(len(data) == size and ref.data_offset == data_offset, "%s: independent parse" % name)
    # metadata: every value as the independent reader decodes it
    check(len(js["metadata"]) == len(ref.kv), "%s: kv count" % name)
    for m, (key, t, raw) in zip(js["metadata"], ref.kv):
        check(m["key"] == key and m["type"] == TYPE_NAMES[t] and same_value(t, raw, m["value"]),
              "%s: metadata %s: %r vs %r" % (name, key, m, raw))
    kv = {m["key"]: m["value"] for m in js["metadata"]}
    check(kv.get("general.architecture") == "fixture" and kv.get("fixture.u32") == 3000000000 and
          kv.get("fixture.bool") is True and
          struct.pack("<f", kv.get("fixture.f32")) == struct.pack("<f", -0.0015) and
          kv.get("fixture.seed") == manifest["seed"] and kv.get("fixture.in") == manifest["in"] and
          kv.get("fixture.out") == manifest["out"] and kv.get("fixture.types") == manifest["types"] and
          "" in kv.get("fixture.strings", []) and
          any(ord(c) > 127 for s in kv.get("fixture.strings", []) for c in s),
          "%s: MANIFEST's KV values" % name)
    if alignment != 32:
        check(kv.get("general.alignment") == alignment, "%s: general.alignment" % name)
    # tensors: records vs the independent reader and MANIFEST
    check(len(js["tensors"]) == len(ref.tensors) == len(manifest["tensors"]), "%s: tensors" % name)
    raw_of = {}
    for t, (tname, ttype, ne, off, nbytes) in zip(js["tensors"], ref.tensors):
        ggml_name = GGML[ttype][0]
        mt = manifest["tensors"].get(tname)
        check(t["name"] == tname and t["gguf_type"] == ttype and t["ggml_type"] == ggml_name and
              t["ne"] == ne and t["offset"] == off and t["bytes"] == nbytes and
              t["relative_offset"] == off - data_offset, "%s: record %s: %s" % (name, tname, t))
        check(mt is not None and mt[0] == ggml_name and mt[1] == ne and mt[2] == t["logical"] and
              mt[3] == nbytes, "%s: %s vs MANIFEST %s" % (name, t, mt))
        check(len(ne) != 2 or (t["logical"] == ne[::-1] and "PW_ORIENT_OUT_IN" in (t["warning"] or "")),
              "%s: %s orientation" % (name, tname))
        raw_of[tname] = data[off:off + nbytes]
    # dequant every tensor
    compared = 0
    for t in js["tensors"]:
        out = os.path.join(work, "deq.bin")
        r = run([pw, "dequant", path, t["name"], "-o", out])
        check(r.returncode == 0, "%s: dequant %s exit %d: %s" % (name, t["name"], r.returncode, r.stderr))
        got = open(out, "rb").read()
        check(len(got) == 4 * int(np.prod(t["ne"])), "%s: dequant %s size" % (name, t["name"]))
        if t["ggml_type"] == "f32":
            check(got == raw_of[t["name"]], "%s: dequant %s == its f32 bytes" % (name, t["name"]))
        if t["name"].startswith("W."):
            deq = "deq." + t["name"][2:]
            if deq in raw_of:
                check(got == raw_of[deq], "%s: dequant %s == ggml's %s bit for bit" % (name, t["name"], deq))
                compared += 1
    print("%s: %d tensors dequantized, %d compared with ggml's deq.*" % (name, len(js["tensors"]), compared))
    return compared


def gstr(s):
    b = s.encode()
    return struct.pack("<Q", len(b)) + b


def write_ranks_file(path, rng):
    """A GGUF with 1-D, 3-D and 4-D tensors and their expected float32 output."""
    specs = [("v1", 1, [6]), ("h3", 1, [4, 3, 2]), ("q3", 8, [96, 2, 3]), ("q4", 8, [64, 3, 2, 2])]
    head = b"GGUF" + struct.pack("<IQQ", 3, len(specs), 0)
    blobs, expect, recs, off = [], {}, b"", 0
    for name, t, ne in specs:
        n = int(np.prod(ne))
        if t == 1:
            vals = rng.standard_normal(n).astype(np.float16)
            blob = vals.tobytes()
            expect[name] = vals.astype(np.float32)
        else:
            blocks = n // 32
            d = (rng.random(blocks) * 0.1 + 0.01).astype(np.float16)
            q = rng.integers(-127, 128, size=(blocks, 32)).astype(np.int8)
            blob = b"".join(d[i].tobytes() + q[i].tobytes() for i in range(blocks))
            expect[name] = (d.astype(np.float32)[:, None] * q.astype(np.float32)).reshape(-1)
        recs += gstr(name) + struct.pack("<I", len(ne)) + struct.pack("<%dQ" % len(ne), *ne)
        recs += struct.pack("<IQ", t, off)
        blobs.append(blob + bytes(-len(blob) % 32))
        off += len(blobs[-1])
    out = head + recs
    out += bytes(-len(out) % 32)
    out += b"".join(blobs)
    open(path, "wb").write(out)
    return expect


def check_ranks(pw, work):
    path = os.path.join(work, "ranks.gguf")
    expect = write_ranks_file(path, np.random.default_rng(7))
    for name, want in expect.items():
        out = os.path.join(work, "rank.bin")
        r = run([pw, "dequant", path, name, "-o", out])
        check(r.returncode == 0, "ranks: dequant %s: %s" % (name, r.stderr))
        got = np.fromfile(out, dtype="<f4")
        check(got.tobytes() == want.astype("<f4").tobytes(), "ranks: %s row-major of reversed ne" % name)
    r = run([pw, "inspect", path, "--json"])
    js = json.loads(r.stdout)
    shapes = {t["name"]: (t["ne"], t["logical"]) for t in js["tensors"]}
    check(shapes["q4"] == ([64, 3, 2, 2], [64, 3, 2, 2]) and shapes["h3"][1] == [4, 3, 2],
          "ranks: OUT_IN leaves ranks other than 2 in ne order: %s" % shapes)


def check_bad_input(pw, data_dir, work):
    mal = os.path.join(data_dir, "gguf-malformed")
    for f in ["n_dims_5.gguf", "huge_tensor_count.gguf", "offset_out_of_file.gguf",
              "key_not_utf8.gguf", "version_1.gguf", "big_endian.gguf", "tensors_overlap.gguf"]:
        p = os.path.join(mal, f)
        for cmd in (["inspect", p], ["inspect", p, "--json"], ["dequant", p, "w", "-o", os.path.join(work, "x")]):
            r = run([pw] + cmd)
            err = r.stderr.decode()
            check(r.returncode == 2 and err.count("\n") == 1 and p in err and
                  ("byte offset" in err), "%s %s: exit %d, stderr %r" % (cmd[0], f, r.returncode, err))
            check(r.stdout == b"", "%s %s: no output on failure" % (cmd[0], f))
    p = os.path.join(mal, "unknown_type_16.gguf")
    r = run([pw, "inspect", p, "--json"])
    js = json.loads(r.stdout) if r.returncode == 0 else {"tensors": []}
    w = [t for t in js["tensors"] if t["name"] == "w"]
    check(r.returncode == 0 and w and w[0]["gguf_type"] == 16 and w[0]["type"] is None and
          w[0]["ggml_type"] == "iq2_xxs", "unknown type inspects: %r" % (w,))
    r = run([pw, "dequant", p, "w", "-o", os.path.join(work, "x")])
    err = r.stderr.decode()
    check(r.returncode == 2 and err.count("\n") == 1 and "'w'" in err and "type id 16" in err,
          "dequant of an unknown type: %r" % err)
    ok = os.path.join(data_dir, "ggml", "fixture_s1_in768_out40.gguf")
    for args in (["dequant", ok, "no.such", "-o", os.path.join(work, "x")], ["dequant", ok],
                 ["inspect"], ["inspect", ok, "--bogus"], ["inspect", os.path.join(work, "missing.gguf")]):
        r = run([pw] + args)
        check(r.returncode == 2 and r.stderr.decode().count("\n") == 1, "%s: exit %d %r" % (args, r.returncode, r.stderr))
    r = run([pw, "dequant", ok, "no.such", "-o", os.path.join(work, "x")])
    check("no.such" in r.stderr.decode() and ok in r.stderr.decode(), "missing tensor named")


def main():
    pw, data_dir, work = sys.argv[1:4]
    os.makedirs(work, exist_ok=True)
    manifest = parse_manifest(os.path.join(data_dir, "ggml", "MANIFEST.txt"))
    compared = 0
    for f in sorted(manifest):
        compared += check_file(pw, os.path.join(data_dir, "ggml", f), manifest[f], work)
    check(compared >= 16, "compared only %d weights with deq.*" % compared)
    check_ranks(pw, work)
    check_bad_input(pw, data_dir, work)
    print("%d failures" % len(FAILURES))
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main())
