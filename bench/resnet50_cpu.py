#!/usr/bin/env python3
"""bench/resnet50_cpu.py - ResNet-50 v1.5 in float32 at batch 1 on the CPU:
mica (its oneDNN implementations) next to ONNX Runtime's CPU provider on
the same network and weights, in the same run.

    python3 bench/resnet50_cpu.py --build BUILD_DIR [--dir OUT] [--threads N]
                                  [--rounds R]

BUILD_DIR is a built mica tree (bench/bench_model, tools/mica,
modules/.libs).  The model comes from bench/resnet50_gen.py (run here into
OUT, default /tmp/mica-resnet50, unless OUT/resnet50_b1.yaml exists); this
script exports the same graph and weights as ONNX (the onnx package: Conv
with the folded bias, Relu, MaxPool, Add, AveragePool, Gemm) and checks
that mica and ONNX Runtime compute the same logits before timing.  Both
use N threads (default: the CPUs), OpenMP's and ONNX Runtime's.  Each
round times mica (bench_model: median of 5 trials of R runs) and ONNX
Runtime (the same method) one after the other; the table gives each
round (with the load average after it) and the medians.  The CPU is
shared on some machines: look at the spread of the rounds and the load;
on busy CPUs OpenMP's spinning threads cost mica a time slice per layer
(docs/mica.md, Environment): OMP_WAIT_POLICY=passive in the environment
is passed on to mica's runs.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import time

import numpy as np


def onnx_model(d, path):
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    meta = json.load(open(os.path.join(d, "resnet50.json")))
    raw = open(os.path.join(d, "resnet50.bin"), "rb").read()

    def weight(name):
        w = meta["weights"][name]
        n = int(np.prod(w["shape"]))
        a = np.frombuffer(raw, "<f4", n, w["offset"]).reshape(w["shape"])
        return numpy_helper.from_array(a.copy(), name)

    nodes, inits = [], []
    for l in meta["layers"]:
        k = l["kind"]
        if k == "conv":
            inits += [weight(l["name"] + "_w"), weight(l["name"] + "_b")]
            p = l["pad"]
            nodes.append(helper.make_node(
                "Conv", [l["input"], l["name"] + "_w", l["name"] + "_b"],
                [l["output"]], kernel_shape=[l["k"], l["k"]],
                strides=[l["stride"]] * 2, pads=[p, p, p, p]))
        elif k == "relu":
            nodes.append(helper.make_node("Relu", l["inputs"], [l["output"]]))
        elif k == "add":
            nodes.append(helper.make_node("Add", l["inputs"], [l["output"]]))
        elif k == "maxpool":
            nodes.append(helper.make_node(
                "MaxPool", l["inputs"], [l["output"]], kernel_shape=[3, 3],
                strides=[2, 2], pads=[1, 1, 1, 1]))
        elif k == "avgpool":
            nodes.append(helper.make_node(
                "AveragePool", l["inputs"], [l["output"]],
                kernel_shape=[7, 7]))
        elif k == "fc":
            inits += [weight("fc_w"), weight("fc_b")]
            nodes.append(helper.make_node("Flatten", [l["input"]], ["flat"]))
            nodes.append(helper.make_node("Gemm", ["flat", "fc_w", "fc_b"],
                                          ["logits"], transB=1))
    g = helper.make_graph(
        nodes, "resnet50", [helper.make_tensor_value_info(
            "x", TensorProto.FLOAT, ["N", 3, 224, 224])],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT,
                                       ["N", 1000])], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    onnx.save(m, path)


def time_ort(sess, x, runs):
    v = []
    sess.run(None, {"x": x})
    for _ in range(5):
        t0 = time.perf_counter()
        for _ in range(runs):
            sess.run(None, {"x": x})
        v.append((time.perf_counter() - t0) / runs)
    return 1e3 * float(np.median(v))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True)
    ap.add_argument("--dir", default="/tmp/mica-resnet50")
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--runs", type=int, default=5)
    a = ap.parse_args()
    import onnxruntime as ort

    here = os.path.dirname(os.path.abspath(__file__))
    if not os.path.exists(os.path.join(a.dir, "resnet50_b1.yaml")):
        subprocess.check_call([sys.executable,
                               os.path.join(here, "resnet50_gen.py"), a.dir,
                               "--batches", "1"])
    model = os.path.join(a.dir, "resnet50.onnx")
    onnx_model(a.dir, model)
    env = dict(os.environ, OMP_NUM_THREADS=str(a.threads),
               MICA_MODULE_DIR=os.path.join(a.build, "modules", ".libs"),
               MICA_DEVICE_DIR=os.path.join(a.build, "core", ".libs"))
    so = ort.SessionOptions()
    so.intra_op_num_threads = a.threads
    so.inter_op_num_threads = 1
    # Idle ONNX Runtime threads must not spin while mica runs beside them.
    so.add_session_config_entry("session.intra_op.allow_spinning", "0")
    sess = ort.InferenceSession(model, so, providers=["CPUExecutionProvider"])

    # The same logits first.
    x = np.random.RandomState(1).uniform(-1, 1, (1, 3, 224, 224))
    x = x.astype(np.float32)
    np.save(os.path.join(a.dir, "x1.npy"), x)
    out = os.path.join(a.dir, "mica-out")
    subprocess.check_call([os.path.join(a.build, "tools", "mica"), "run",
                           os.path.join(a.dir, "resnet50_b1.yaml"),
                           "--device", "cpu", "--input",
                           "x=" + os.path.join(a.dir, "x1.npy"),
                           "--output-dir", out], env=env,
                          stdout=subprocess.DEVNULL)
    got = np.load(os.path.join(out, "logits.npy")).reshape(1, 1000)
    want = sess.run(None, {"x": x})[0]
    err = float(np.max(np.abs(got - want)) / np.max(np.abs(want)))
    print("logits: max |mica - onnxruntime| / max |onnxruntime| = %.2e" % err)
    if err > 1e-3:
        print("resnet50_cpu: mica and ONNX Runtime disagree")
        return 1

    rows = []
    for r in range(a.rounds):
        line = subprocess.check_output(
            [os.path.join(a.build, "bench", "bench_model"),
             os.path.join(a.dir, "resnet50_b1.yaml"), "--device", "cpu",
             "--runs", str(a.runs)], env=env, text=True)
        m = float(re.search(r"ms=([0-9.]+)", line).group(1))
        o = time_ort(sess, x, a.runs)
        rows.append((m, o))
        print("round %d: mica %.1f ms, onnxruntime %.1f ms (load average "
              "%.2f)" % (r + 1, m, o, os.getloadavg()[0]), flush=True)
    mm = float(np.median([r[0] for r in rows]))
    oo = float(np.median([r[1] for r in rows]))
    print()
    print("ResNet-50 v1.5, float32, batch 1, CPU, %d threads (median of %d "
          "rounds)%s" % (a.threads, a.rounds,
                         ", OMP_WAIT_POLICY=" + os.environ["OMP_WAIT_POLICY"]
                         if os.environ.get("OMP_WAIT_POLICY") else ""))
    print("%-28s %10s %10s" % ("", "ms/image", "images/s"))
    print("%-28s %10.1f %10.2f" % ("mica (oneDNN)", mm, 1e3 / mm))
    print("%-28s %10.1f %10.2f" % ("ONNX Runtime %s (CPU EP)" % ort.__version__,
                                   oo, 1e3 / oo))
    print("%-28s %9.0f%%" % ("mica / ONNX Runtime time", 100.0 * mm / oo))
    return 0


if __name__ == "__main__":
    sys.exit(main())
