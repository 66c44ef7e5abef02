#!/usr/bin/env python3
"""bench/cpu_suite.py - the CPU peer suite: real ONNX models on mica's CPU
next to ONNX Runtime's CPU provider (all graph optimizations on), for
correctness and time, at each thread count, in interleaved rounds.

    python3 bench/cpu_suite.py --build BUILD_DIR --models DIR
        [--list bench/cpu_suite.txt] [--light DIR] [--threads 1,2]
        [--rounds 5] [--runs 5] [--only NAME,...] [--work DIR]
        [--light-weights random|fills] [--json FILE] [--cpu-time]

It downloads nothing: the models are the files of --models named in the
list (bench/cpu_suite.txt says which wheel each comes from) and the onnx
wheel's light_* models.  For each model it writes a copy whose inputs
have the list's fixed sizes (ONNX Runtime and mica run the same copy),
makes seeded random inputs (uniform in [-1, 1]), checks that mica's
outputs match ONNX Runtime's (max |mica - ort| / max |ort| per output,
'ok' under 1e-3), builds mica's engine once per thread count, then, in
each round, times mica (`mica bench ENGINE --threads N`: the median of
--runs queries) and ONNX Runtime (the median of --runs queries of a
session with intra_op_num_threads N, spinning off) one right after the
other.  The report gives per model and thread count the medians over
the rounds, mica's time over ONNX Runtime's, and the load average
(/proc/loadavg) at the start and the end of the model's rounds; then
the geometric mean of the ratios per thread count.

--cpu-time times each side by CPU time instead (for a machine that
other processes load: at one thread a query's CPU time hardly depends
on them): ONNX Runtime's process time around each query (median of
--runs), and mica's as the CPU time of a `mica bench` process of
K + 1 queries less that of one of 1 query, over K (--runs, or more
for at least 0.3 s of queries: the kernel counts a child's CPU time in
scheduler ticks; no
warm-up and no minimum duration, so that each runs exactly that many:
the engine's loading and the first query's setup cancel).  At N threads that is the
work of all threads (passive waiting costs none), not the latency.

The light models' weights are ConstantOfShape fills of 0.02: with
--light-weights random (the default) they are replaced by seeded random
initializers (1-D: uniform in [0.5, 1.5], so batch-norm variances stay
positive; others: normal with deviation 1/sqrt(fan-in)), which keeps
activations in a sane range and measures the network rather than the
fills; --light-weights fills keeps the models as they are.
"""
import argparse
import json
import math
import os
import re
import resource
import subprocess
import sys
import time

import numpy as np


def read_list(path):
    rows = []
    for line in open(path):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        f = line.split()
        shapes = {}
        if f[2] != "-":
            for item in f[2].split(","):
                n, s = item.rsplit(":", 1)
                shapes[n] = [int(v) for v in s.split("x")]
        rows.append({"name": f[0], "file": f[1], "shapes": shapes,
                     "kind": f[3] if len(f) > 3 else ""})
    return rows


def random_weights(m, rng):
    """Replace ConstantOfShape nodes whose shape input is an initializer
    by seeded random initializers (see the module's comment)."""
    from onnx import numpy_helper
    inits = {i.name: i for i in m.graph.initializer}
    keep = []
    for n in m.graph.node:
        if n.op_type == "ConstantOfShape" and n.input[0] in inits:
            dims = [int(v) for v in numpy_helper.to_array(inits[n.input[0]])]
            if len(dims) <= 1:
                a = rng.uniform(0.5, 1.5, dims)
            else:
                fan = max(1, int(np.prod(dims[1:])))
                a = rng.normal(0.0, 1.0 / math.sqrt(fan), dims)
            m.graph.initializer.append(
                numpy_helper.from_array(a.astype(np.float32), n.output[0]))
        else:
            keep.append(n)
    del m.graph.node[:]
    m.graph.node.extend(keep)


def fixed_copy(src, dst, shapes, light_random, seed):
    import onnx
    m = onnx.load(src)
    for i in m.graph.input:
        if i.name in shapes:
            d = i.type.tensor_type.shape.dim
            if len(d) != len(shapes[i.name]):
                raise SystemExit("%s: input %s has rank %d, the list gives "
                                 "%s" % (src, i.name, len(d),
                                         shapes[i.name]))
            for k, v in enumerate(shapes[i.name]):
                d[k].ClearField("dim_param")
                d[k].dim_value = v
    if light_random:
        random_weights(m, np.random.RandomState(seed))
    onnx.save(m, dst)


NP = {"tensor(float)": np.float32, "tensor(int64)": np.int64,
      "tensor(int32)": np.int32, "tensor(float16)": np.float16}


def ort_session(path, threads):
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    so.log_severity_level = 3
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    so.add_session_config_entry("session.intra_op.allow_spinning", "0")
    return ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])


def time_ort(sess, feed, runs, cpu=False):
    clock = time.process_time if cpu else time.perf_counter
    sess.run(None, feed)
    v = []
    for _ in range(runs):
        t0 = clock()
        sess.run(None, feed)
        v.append(clock() - t0)
    return 1e3 * float(np.median(v))


def children_cpu():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def time_mica_cpu(cmd, runs, env):
    """CPU time per query of `mica bench` (cmd without --iterations):
    the process's CPU time at runs + 1 queries less that at 1 query
    (loading the engine and the warm-up cancel), over runs; None if a
    run fails."""
    t = []
    for n in (1, runs + 1):
        c0 = children_cpu()
        r = subprocess.run(cmd + ["--iterations", str(n)], env=env,
                           capture_output=True, text=True)
        if r.returncode != 0:
            return None
        t.append(children_cpu() - c0)
    return 1e3 * max(t[1] - t[0], 0.0) / runs


def loadavg():
    return open("/proc/loadavg").read().split()[0]


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True)
    ap.add_argument("--models", required=True)
    ap.add_argument("--list", default=os.path.join(here, "cpu_suite.txt"))
    ap.add_argument("--light", default=None)
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--only", default="")
    ap.add_argument("--work", default="/tmp/mica-cpu-suite")
    ap.add_argument("--light-weights", choices=["random", "fills"],
                    default="random")
    ap.add_argument("--json", default="")
    ap.add_argument("--cpu-time", action="store_true",
                    help="time each side by its process's CPU time per "
                    "query instead of the wall clock (for a loaded "
                    "machine; at 1 thread the work, at N the work of all "
                    "threads)")
    a = ap.parse_args()
    if a.light is None:
        import onnx
        a.light = os.path.join(os.path.dirname(onnx.__file__), "backend",
                               "test", "data", "light")
    os.makedirs(a.work, exist_ok=True)
    mica = os.path.join(a.build, "tools", "mica")
    env = dict(os.environ,
               MICA_MODULE_DIR=os.path.join(a.build, "modules", ".libs"),
               MICA_DEVICE_DIR=os.path.join(a.build, "core", ".libs"))
    threads = [int(t) for t in a.threads.split(",")]
    only = set(a.only.split(",")) if a.only else None
    results = []
    print("# machine: %s, %d CPUs; load average at start %s" %
          (os.uname().nodename, os.cpu_count(), loadavg()))
    for row in read_list(a.list):
        name = row["name"]
        if only and name not in only:
            continue
        light = row["file"].startswith("light/")
        src = os.path.join(a.light, row["file"][6:]) if light else \
            os.path.join(a.models, row["file"])
        if not os.path.exists(src):
            print("%-14s missing: %s" % (name, src))
            continue
        model = os.path.join(a.work, name + ".onnx")
        fixed_copy(src, model, row["shapes"],
                   light and a.light_weights == "random", 7)
        sess = ort_session(model, 1)
        rng = np.random.RandomState(1)
        feed, args = {}, []
        for i in sess.get_inputs():
            shape = [d if isinstance(d, int) else 1 for d in i.shape]
            x = rng.uniform(-1, 1, shape).astype(NP[i.type])
            feed[i.name] = x
            p = os.path.join(a.work, "%s.in.%d.npy" % (name, len(args)))
            np.save(p, x)
            args += ["--input", "%s=%s" % (i.name, p)]
        want = sess.run(None, feed)
        out = os.path.join(a.work, name + ".out")
        r = subprocess.run([mica, "run", model, "--device", "cpu",
                            "--output-dir", out] + args, env=env,
                           capture_output=True, text=True)
        if r.returncode != 0:
            msg = (r.stderr.strip().splitlines() or ["?"])[-1]
            print("%-14s mica fails: %s" % (name, msg))
            results.append({"name": name, "error": msg})
            continue
        err = 0.0
        for o, w in zip(sess.get_outputs(), want):
            # mica run writes NAME.npy with bytes outside [A-Za-z0-9._-]
            # as %XX
            fn = os.path.join(out, "".join(
                c if re.match(r"[A-Za-z0-9._-]", c) else
                "".join("%%%02X" % b for b in c.encode()) for c in o.name)
                + ".npy")
            g = np.load(fn).astype(np.float64).reshape(w.shape)
            w = w.astype(np.float64)
            scale = max(float(np.max(np.abs(w))) if w.size else 0.0, 1e-30)
            e = float(np.max(np.abs(g - w))) / scale if w.size else 0.0
            err = max(err, e if np.isfinite(e) else float("inf"))
        entry = {"name": name, "kind": row["kind"], "error": None,
                 "max_rel_diff": err, "threads": {}}
        for t in threads:
            engine = os.path.join(a.work, "%s.t%d.engine" % (name, t))
            r = subprocess.run([mica, "build", model, "--device", "cpu",
                                "-o", engine], env=env, capture_output=True,
                               text=True)
            if r.returncode != 0:
                msg = (r.stderr.strip().splitlines() or ["?"])[-1]
                print("%-14s t=%d mica build fails: %s" % (name, t, msg))
                entry["threads"][t] = {"error": msg}
                continue
            s = ort_session(model, t)
            l0 = loadavg()
            ms, os_ = [], []
            bench = [mica, "bench", engine, "--threads", str(t),
                     "--duration-s", "0.01", "--warmup-ms", "1"] + args
            exact = [mica, "bench", engine, "--threads", str(t),
                     "--duration-s", "0", "--warmup-ms", "0"] + args
            for _ in range(a.rounds):
                if a.cpu_time:
                    o = time_ort(s, feed, a.runs, True)
                    # the children's CPU time is counted in scheduler
                    # ticks: at least 0.3 s of queries
                    k = max(a.runs, int(300.0 / max(o, 0.01)) + 1)
                    v = time_mica_cpu(exact, k, env)
                    if v is None:
                        print("%-14s t=%d mica bench fails" % (name, t))
                        break
                    ms.append(v)
                    os_.append(o)
                    continue
                r = subprocess.run(bench + ["--iterations", str(a.runs)],
                                   env=env, capture_output=True, text=True)
                m = re.search(r"Latency: .*?median = ([0-9.e+-]+) ms",
                              r.stdout)
                if r.returncode != 0 or not m:
                    print("%-14s t=%d mica bench fails (status %d)" %
                          (name, t, r.returncode))
                    break
                ms.append(float(m.group(1)))
                os_.append(time_ort(s, feed, a.runs))
            if not ms:
                entry["threads"][t] = {"error": "bench failed"}
                continue
            m, o = float(np.median(ms)), float(np.median(os_))
            entry["threads"][t] = {"mica_ms": m, "ort_ms": o,
                                   "ratio": m / o, "load": [l0, loadavg()],
                                   "mica_rounds": ms, "ort_rounds": os_}
            print("%-14s %-14s t=%d  mica %9.2f ms  ort %9.2f ms  %5.2fx  "
                  "diff %.1e %s  load %s-%s" %
                  (name, row["kind"], t, m, o, m / o, err,
                   "ok" if err < 1e-3 else "DIFFERS", l0, loadavg()),
                  flush=True)
        results.append(entry)
    for t in threads:
        rs = [e["threads"][t]["ratio"] for e in results
              if not e.get("error") and "ratio" in e["threads"].get(t, {})]
        if rs:
            print("geometric mean at %d thread%s: %.2fx over %d models, "
                  "worst %.2fx" % (t, "s" if t > 1 else "",
                                   math.exp(sum(map(math.log, rs)) /
                                            len(rs)), len(rs), max(rs)))
    print("# load average at end %s" % loadavg())
    if a.json:
        json.dump(results, open(a.json, "w"), indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
