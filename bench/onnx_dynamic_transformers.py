#!/usr/bin/env python3
"""bench/onnx_dynamic_transformers.py - BERT-base and GPT-2-small (random
weights) exported by both of PyTorch's exporters (dynamo=True and the
TorchScript one) with dynamic batch and sequence, in float32 and float16,
imported by mica with one profile (batch 1-32, sequence 16-512) and run on
the CPU at the shapes given, each compared with onnxruntime.  Not a timed
test: it checks issue 20 item 2 and issue 23's transformer goal.
tests/test_onnx_transformers.sh runs it with --small (the same graphs,
2 layers of width 64) as a test.

usage: onnx_dynamic_transformers.py [--small] [--tap] [--only SUBSTR]
                                    BUILD_DIR OUT_DIR [BxS ...]
       default shapes: every batch of 1, 2, 8, 32 at sequences 16, 128,
       512 (--small: 1x16 2x128 8x64 32x16 1x512)
  --small   small configurations of the same models (a test's)
  --tap     TAP on stdout (a model that cannot be exported is skipped)
  --only S  only the models whose name holds S (bert_ts, gpt2_dynamo_fp16)

float16: the model exported after .half(), inputs int64 as before; its
outputs are compared with |mica - ort| <= 2e-2 + 2e-2 |ort| (float32:
1e-4 + 1e-2 |ort|).  The TorchScript exporter writes an invalid float16
BERT (a LayerNormalization of float16 input and float32 scale, which
onnxruntime refuses to load): that one is skipped, saying so.
Needs torch, transformers, onnxscript, onnxruntime, numpy.
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


def config(which, small):
    if which == "bert":
        cfg = transformers.BertConfig()
        if small:
            cfg = transformers.BertConfig(
                vocab_size=1000, hidden_size=64, num_hidden_layers=2,
                num_attention_heads=4, intermediate_size=128,
                max_position_embeddings=512)
    else:
        cfg = transformers.GPT2Config()
        if small:
            cfg = transformers.GPT2Config(vocab_size=1000, n_embd=64,
                                          n_layer=2, n_head=4,
                                          n_positions=512)
        cfg.use_cache = False
    return cfg


def export(which, dynamo, path, half=False, small=False):
    torch.manual_seed(0)
    cfg = config(which, small)
    if which == "bert":
        m = Wrap(transformers.BertModel(cfg).eval(), True)
        outs = ["last_hidden_state", "pooler_output"]
    else:
        m = Wrap(transformers.GPT2Model(cfg).eval(), False)
        outs = ["last_hidden_state"]
    if half:
        m = m.half()
    names = ["input_ids", "attention_mask"]
    args = (torch.randint(0, cfg.vocab_size, (2, 16)),
            torch.ones(2, 16, dtype=torch.int64))
    if dynamo:
        b = torch.export.Dim("batch", min=1, max=64)
        s = torch.export.Dim("seq", min=2, max=512)
        torch.onnx.export(m.eval(), args, path, input_names=names,
                          output_names=outs, dynamo=True,
                          dynamic_shapes=({0: b, 1: s}, {0: b, 1: s}),
                          external_data=not small)
    else:
        torch.onnx.export(m.eval(), args, path, input_names=names,
                          output_names=outs, dynamo=False, opset_version=17,
                          dynamic_axes={n: {0: "batch", 1: "seq"}
                                        for n in names + outs[:1]})


def compare(build, model, shape, sess=None):
    """None when mica agrees with onnxruntime at shape BxS, else why."""
    b, s = (int(v) for v in shape.split("x"))
    rng = np.random.default_rng(0)
    ids = rng.integers(0, 1000, (b, s)).astype(np.int64)
    mask = np.ones((b, s), np.int64)
    mask[:, s // 2:] = rng.random((b, s - s // 2)) > 0.3
    sess = sess or ort.InferenceSession(model,
                                        providers=["CPUExecutionProvider"])
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
            atol, rtol = (2e-2, 2e-2) if w.dtype == np.float16 \
                else (1e-4, 1e-2)
            g, w = g.astype(np.float64), w.astype(np.float64)
            if not np.isfinite(g).all():
                return "%s: not finite where onnxruntime is" % o.name
            worst = max(worst, float(np.max(np.abs(g - w) /
                                            (atol + rtol * np.abs(w)))))
        return None if worst <= 1 else \
            "error %.3g times the tolerance" % worst


def main():
    argv, small, tap, only = sys.argv[1:], False, False, None
    while argv and argv[0].startswith("--"):
        opt = argv.pop(0)
        if opt == "--small":
            small = True
        elif opt == "--tap":
            tap = True
        elif opt == "--only" and argv:
            only = argv.pop(0)
        else:
            sys.exit(__doc__)
    if len(argv) < 2:
        sys.exit(__doc__)
    build, out = os.path.abspath(argv[0]), argv[1]
    shapes = argv[2:] or (["1x16", "2x128", "8x64", "32x16", "1x512"]
                          if small else
                          ["%dx%d" % (b, s) for s in (16, 128, 512)
                           for b in (1, 2, 8, 32)])
    os.makedirs(out, exist_ok=True)
    models = [(w, dy, h) for h in (False, True) for w in ("bert", "gpt2")
              for dy in (False, True)]
    names = ["%s_%s%s%s" % (w, "dynamo" if dy else "ts",
                            "_fp16" if h else "", "_small" if small else "")
             for w, dy, h in models]
    todo = [(m, n) for m, n in zip(models, names) if not only or only in n]
    if tap:
        print("1..%d" % (len(todo) * len(shapes)), flush=True)
    bad = k = 0
    for (which, dynamo, half), name in todo:
        path = os.path.join(out, name + ".onnx")
        skip = None
        try:
            if not os.path.exists(path):
                export(which, dynamo, path, half, small)
            sess = ort.InferenceSession(path,
                                        providers=["CPUExecutionProvider"])
        except Exception as e:  # an exporter's failure, an invalid file
            skip = "%s: %s" % (type(e).__name__,
                               " ".join(str(e).split())[:200])
        for shape in shapes:
            k += 1
            if skip:
                print("ok %d - %s %s # SKIP %s" % (k, name, shape, skip)
                      if tap else "%-28s %-7s skipped: %s" % (name, shape,
                                                              skip),
                      flush=True)
                continue
            err = compare(build, path, shape, sess)
            bad += err is not None
            if tap:
                print("%s %d - %s %s%s" % ("not ok" if err else "ok", k,
                                            name, shape,
                                            "\n# " + err if err else ""),
                      flush=True)
            else:
                print("%-28s %-7s %s" % (name, shape, err or "ok"),
                      flush=True)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
