#!/usr/bin/env python3
"""bench/onnx_torch_models.py - torchvision's ResNet-50 and a BERT-base
encoder (Hugging Face transformers, random weights from a BertConfig:
nothing is downloaded) exported with torch.onnx.export, run through
`mica run` on CUDA in float32 and float16, and compared with PyTorch's
outputs (float32, on the CPU).  onnxruntime's CPU outputs for the same
file are compared too, so that an exporter problem shows apart from a
mica one.  The table comes last.

    python3 bench/onnx_torch_models.py --build BUILD_DIR [--dir OUT]
        [--models resnet50,bert] [--exporter auto|dynamo|torchscript]
        [--device cuda] [--batch 2] [--seq 128]
    python3 bench/onnx_torch_models.py --build BUILD_DIR --selftest
        [--device cpu]

BUILD_DIR is a built mica tree (tools/mica, modules/.libs, core/.libs).
--exporter auto tries the dynamo exporter (torch.onnx.export(...,
dynamo=True), which needs onnxscript), then the TorchScript one
(dynamo=False, opset 17).  BERT is exported with runtime batch and
sequence (Shape-computed reshapes); mica takes the inputs' shapes (float32,
`mica run MODEL.onnx`) or --shapes (float16, `mica build --fp16`, then
`mica run ENGINE`).  ResNet-50 has a fixed batch.

Tolerances, as the largest absolute error over the largest |PyTorch
output| (rel): float32 1e-3 (cuBLAS and cuDNN in float32 without TF32
sum in other orders than PyTorch's CPU kernels; a mapping error is of
order 1); float16 3e-2 (float16 keeps 11 significant bits, a rounding
of up to 4.9e-4 per layer, through 12 encoder layers or 53
convolutions with float32 accumulation: about 1e-2 expected).

--selftest runs tests/onnx/models/encoder17.onnx and encoder20.onnx
(BERT's op patterns, made by tests/onnx/make_encoder.py) the same way
against onnxruntime alone: it needs no torch, and checks this script's
plumbing on a machine without a GPU (--device cpu).
"""
import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
TOL = {"float32": 1e-3, "float16": 3e-2}


def sh(cmd, env):
    r = subprocess.run(cmd, env=env, capture_output=True, text=True)
    return r.returncode, (r.stderr.strip().splitlines() or [""])[-1]


def ort_outputs(path, feeds):
    try:
        import onnxruntime as ort
    except ImportError:
        return None
    try:
        s = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
        return dict(zip([o.name for o in s.get_outputs()],
                        s.run(None, feeds)))
    except Exception as e:  # the exporter's file, not mica's problem
        print("  onnxruntime cannot run %s: %s" % (path, e))
        return None


def op_summary(path):
    import onnx
    m = onnx.load(path, load_external_data=False)
    ops = sorted({n.op_type for n in m.graph.node})
    opset = [o.version for o in m.opset_import if o.domain in ("", "ai.onnx")]
    return (opset[0] if opset else 0), ops


def run_mica(args, env, path, feeds, prec, work):
    """mica's outputs for `feeds` as {name: array}, or an error line."""
    mica = os.path.join(args.build, "tools", "mica")
    os.makedirs(work, exist_ok=True)
    ins = []
    for k, v in feeds.items():
        f = os.path.join(work, "in_%d.npy" % len(ins))
        np.save(f, v)
        ins += ["--input", "%s=%s" % (k, f)]
    out = os.path.join(work, "out_" + prec)
    target = path
    if prec == "float16":
        shapes = ",".join("%s:%s" % (k, "x".join(str(d) for d in v.shape))
                          for k, v in feeds.items())
        target = os.path.join(work, "model_fp16.engine")
        rc, err = sh([mica, "build", path, "--device", args.device, "--fp16",
                      "--shapes", shapes, "-o", target], env)
        if rc:
            return "build: " + err
    rc, err = sh([mica, "run", target, "--device", args.device, "--output-dir",
                  out] + ins, env)
    if rc:
        return "run: " + err
    res = {}
    for f in os.listdir(out):
        if f.endswith(".npy"):
            from urllib.parse import unquote
            res[unquote(f[:-4])] = np.load(os.path.join(out, f))
    return res


def compare(ref, got):
    """(largest |ref|, largest error, rel) over the outputs of ref."""
    big = err = 0.0
    for k, r in ref.items():
        g = got.get(k)
        if g is None or g.size != r.size:
            return None
        r = np.asarray(r, np.float64).ravel()
        g = np.asarray(g, np.float64).ravel()
        big = max(big, float(np.abs(r).max()))
        e = np.abs(g - r)
        err = max(err, float("inf") if not np.all(np.isfinite(e))
                  else float(e.max()))
    return big, err, err / big if big else err


def export(args, name, model, inputs, in_names, out_names, dyn, path):
    import torch
    tries = {"auto": ["dynamo", "torchscript"], "dynamo": ["dynamo"],
             "torchscript": ["torchscript"]}[args.exporter]
    last = None
    for how in tries:
        try:
            if how == "dynamo":
                torch.onnx.export(model, inputs, path, input_names=in_names,
                                  output_names=out_names,
                                  dynamic_axes=dyn or None, dynamo=True,
                                  external_data=False)
            else:
                torch.onnx.export(model, inputs, path, input_names=in_names,
                                  output_names=out_names,
                                  dynamic_axes=dyn or None, opset_version=17,
                                  dynamo=False)
            return how
        except Exception as e:
            last = "%s exporter: %s" % (how, str(e).splitlines()[0][:200])
            print("  %s: %s" % (name, last))
    raise RuntimeError(last)


def torch_models(args):
    import torch
    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    cases = []
    if "resnet50" in args.models:
        try:
            import torchvision
        except ImportError as e:
            yield "resnet50", "-", None, None, None, None, str(e)
            torchvision = None
    if "resnet50" in args.models and torchvision:
        m = torchvision.models.resnet50(weights=None).eval()
        x = torch.from_numpy(rng.standard_normal((args.batch, 3, 224, 224))
                             .astype(np.float32))
        cases.append(("resnet50", m, (x,), ["input"], ["logits"], {}))
    if "bert" in args.models:
        try:
            from transformers import BertConfig, BertModel
        except ImportError as e:
            yield "bert-base", "-", None, None, None, None, str(e)
            return

        class Encoder(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.bert = BertModel(BertConfig()).eval()

            def forward(self, input_ids, attention_mask):
                o = self.bert(input_ids=input_ids,
                              attention_mask=attention_mask)
                return o.last_hidden_state, o.pooler_output

        ids = torch.from_numpy(rng.integers(0, 30522, (args.batch, args.seq))
                               .astype(np.int64))
        mask = torch.ones(args.batch, args.seq, dtype=torch.int64)
        mask[-1, args.seq * 3 // 4:] = 0   # padding in the last row
        dyn = {"input_ids": {0: "batch", 1: "seq"},
               "attention_mask": {0: "batch", 1: "seq"},
               "last_hidden_state": {0: "batch", 1: "seq"},
               "pooler_output": {0: "batch"}}
        cases.append(("bert-base", Encoder().eval(), (ids, mask),
                      ["input_ids", "attention_mask"],
                      ["last_hidden_state", "pooler_output"], dyn))
    for name, m, inputs, in_names, out_names, dyn in cases:
        path = os.path.join(args.dir, name + ".onnx")
        with torch.no_grad():
            want = m(*inputs)
        want = want if isinstance(want, tuple) else (want,)
        ref = {k: v.numpy() for k, v in zip(out_names, want)}
        feeds = {k: v.numpy() for k, v in zip(in_names, inputs)}
        try:
            how = export(args, name, m, inputs, in_names, out_names, dyn,
                         path)
        except RuntimeError as e:
            yield name, "-", None, None, feeds, ref, str(e)
            continue
        yield name, how, path, ort_outputs(path, feeds), feeds, ref, None


def selftest_models(args):
    src = os.path.join(HERE, "..", "tests", "onnx", "models")
    for name in ("encoder17", "encoder20"):
        path = os.path.join(src, name + ".onnx")
        feeds = {k: np.load(os.path.join(src, "encoder.%s.npy" % k))
                 for k in ("input_ids", "attention_mask")}
        ref = ort_outputs(path, feeds)
        if ref is None:
            sys.exit("--selftest needs onnxruntime")
        yield name, "helper", path, ref, feeds, ref, None


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", required=True)
    ap.add_argument("--dir", default=None)
    ap.add_argument("--models", default="resnet50,bert")
    ap.add_argument("--exporter", default="auto",
                    choices=["auto", "dynamo", "torchscript"])
    ap.add_argument("--device", default="cuda", choices=["cuda", "cpu"])
    ap.add_argument("--batch", type=int, default=2)
    ap.add_argument("--seq", type=int, default=128)
    ap.add_argument("--selftest", action="store_true")
    args = ap.parse_args()
    args.build = os.path.abspath(args.build)
    args.dir = args.dir or tempfile.mkdtemp(prefix="mica-onnx-torch-")
    os.makedirs(args.dir, exist_ok=True)
    env = dict(os.environ,
               MICA_MODULE_DIR=os.path.join(args.build, "modules", ".libs"),
               MICA_DEVICE_DIR=os.path.join(args.build, "core", ".libs"))
    if not args.selftest:
        try:
            import torch  # noqa: F401
        except ImportError:
            sys.exit("onnx_torch_models.py: needs torch (and torchvision, "
                     "transformers); --selftest runs without them")
    rows, bad = [], 0
    source = selftest_models(args) if args.selftest else torch_models(args)
    for name, how, path, ort, feeds, ref, err in source:
        if err:
            print("  %s: %s" % (name, err))
            rows.append((name, how, "-", "-", "-", "-", "-", "-",
                         "EXPORT FAILED" if path is None and feeds
                         else "NOT RUN"))
            bad += 1
            continue
        opset, ops = op_summary(path)
        print("%s (%s exporter, opset %d): %s" % (name, how, opset,
                                                  " ".join(ops)))
        o = compare(ref, ort) if ort else None
        for prec in ("float32", "float16"):
            got = run_mica(args, env, path, feeds, prec,
                           os.path.join(args.dir, name))
            if isinstance(got, str):
                print("  %s %s: %s" % (name, prec, got))
                rows.append((name, how, opset, prec, "-", "-", "-",
                             "%.1e" % o[2] if o else "-", "MICA FAILED"))
                bad += 1
                continue
            c = compare(ref, got)
            if c is None:
                print("  %s %s: outputs %s, PyTorch's %s" % (
                    name, prec, sorted(got), sorted(ref)))
                rows.append((name, how, opset, prec, "-", "-", "-", "-",
                             "OUTPUTS DIFFER"))
                bad += 1
                continue
            good = c[2] <= TOL[prec]
            bad += not good
            rows.append((name, how, opset, prec, "%.3g" % c[0],
                         "%.3g" % c[1], "%.1e" % c[2],
                         "%.1e" % o[2] if o else "-",
                         "ok" if good else "FAIL (tol %.0e)" % TOL[prec]))
    ref_name = "onnxruntime" if args.selftest else "PyTorch"
    head = ("model", "exporter", "opset", "mica", "max|ref|", "max err",
            "rel", "ort rel", "result")
    print("\nmica (%s) against %s float32; rel = max err / max|ref|"
          % (args.device, ref_name))
    w = [max(len(str(r[i])) for r in rows + [head]) for i in range(9)]
    for r in [head] + rows:
        print("  ".join(str(v).ljust(w[i]) for i, v in enumerate(r)))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
