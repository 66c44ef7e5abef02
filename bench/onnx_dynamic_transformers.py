#!/usr/bin/env python3
"""bench/onnx_dynamic_transformers.py - BERT-base and GPT-2-small (random
weights) exported by both of PyTorch's exporters (dynamo=True and the
TorchScript one) with dynamic batch and sequence, imported by mica with
one profile (batch 1-32, sequence 16-512) and run on the CPU at the
shapes given, each compared with onnxruntime.  Not a timed test: it
checks issue 20 item 2 and issue 23's transformer goal by hand.

usage: onnx_dynamic_transformers.py BUILD_DIR OUT_DIR [BxS ...]
       (default shapes: 1x16 2x128 8x64 32x16 1x512)
Needs torch, transformers, onnx(script), onnxruntime, numpy.
"""
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnxruntime as ort
import torch
import transformers


class Wrap(torch.nn.Module):
    def __init__(self, m, bert):
        super().__init__()
        self.m, self.bert = m, bert

    def forward(self, ids, mask):
        o = self.m(input_ids=ids, attention_mask=mask)
        return (o.last_hidden_state, o.pooler_output) if self.bert \
            else o.last_hidden_state


def export(which, dynamo, path):
    torch.manual_seed(0)
    if which == "bert":
        cfg = transformers.BertConfig()
        m = Wrap(transformers.BertModel(cfg).eval(), True)
        outs = ["last_hidden_state", "pooler_output"]
    else:
        cfg = transformers.GPT2Config()
        cfg.use_cache = False
        m = Wrap(transformers.GPT2Model(cfg).eval(), False)
        outs = ["last_hidden_state"]
    names = ["input_ids", "attention_mask"]
    args = (torch.randint(0, cfg.vocab_size, (2, 16)),
            torch.ones(2, 16, dtype=torch.int64))
    if dynamo:
        b = torch.export.Dim("batch", min=1, max=64)
        s = torch.export.Dim("seq", min=2, max=512)
        torch.onnx.export(m.eval(), args, path, input_names=names,
                          output_names=outs, dynamo=True,
                          dynamic_shapes=({0: b, 1: s}, {0: b, 1: s}),
                          external_data=True)
    else:
        torch.onnx.export(m.eval(), args, path, input_names=names,
                          output_names=outs, dynamo=False, opset_version=17,
                          dynamic_axes={n: {0: "batch", 1: "seq"}
                                        for n in names + outs[:1]})


def compare(build, model, shape):
    b, s = (int(v) for v in shape.split("x"))
    rng = np.random.default_rng(0)
    ids = rng.integers(0, 1000, (b, s)).astype(np.int64)
    mask = np.ones((b, s), np.int64)
    mask[:, s // 2:] = rng.random((b, s - s // 2)) > 0.3
    sess = ort.InferenceSession(model, providers=["CPUExecutionProvider"])
    want = sess.run(None, {"input_ids": ids, "attention_mask": mask})
    with tempfile.TemporaryDirectory() as d:
        np.save(d + "/ids.npy", ids)
        np.save(d + "/mask.npy", mask)
        env = dict(os.environ,
                   MICA_MODULE_DIR=build + "/modules/.libs",
                   MICA_DEVICE_DIR=build + "/core/.libs")
        prof = "input_ids:%s,attention_mask:%s"
        r = subprocess.run(
            [build + "/tools/mica", "run", model, "--device", "cpu",
             "--output-dir", d + "/out",
             "--input", "input_ids=" + d + "/ids.npy",
             "--input", "attention_mask=" + d + "/mask.npy",
             "--min-shapes", prof % ("1x16", "1x16"),
             "--opt-shapes", prof % ("1x128", "1x128"),
             "--max-shapes", prof % ("32x512", "32x512")],
            capture_output=True, text=True, env=env)
        if r.returncode:
            return "mica: " + r.stderr.strip()[-300:]
        worst = 0.0
        for o, w in zip(sess.get_outputs(), want):
            g = np.load("%s/out/%s.npy" % (d, o.name))
            if g.shape != w.shape:
                return "%s: shape %s, onnxruntime %s" % (o.name, g.shape,
                                                          w.shape)
            worst = max(worst, float(np.max(np.abs(g - w) /
                                            (1e-3 + np.abs(w)))))
        return None if worst < 1e-2 else "max relative error %.3g" % worst


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    build, out = os.path.abspath(sys.argv[1]), sys.argv[2]
    shapes = sys.argv[3:] or ["1x16", "2x128", "8x64", "32x16", "1x512"]
    os.makedirs(out, exist_ok=True)
    bad = 0
    for which in ("bert", "gpt2"):
        for dynamo in (False, True):
            path = os.path.join(out, "%s_%s.onnx" % (
                which, "dynamo" if dynamo else "ts"))
            if not os.path.exists(path):
                export(which, dynamo, path)
            for shape in shapes:
                err = compare(build, path, shape)
                bad += err is not None
                print("%-40s %-7s %s" % (os.path.basename(path), shape,
                                         err or "ok"), flush=True)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
