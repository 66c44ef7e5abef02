#!/usr/bin/env python3
"""tests/triton/test_triton.py TMPDIR - libtriton_mica.so in a real Triton.

Run by tests/test_triton.sh with the Python of a virtual environment that
has nvidia-pytriton (whose wheel carries a complete tritonserver that runs
without a GPU) and tritonclient[http].  Prints TAP.

It writes a model repository of mica models (make_repo.py), starts
tritonserver on 127.0.0.1 at a free port with the backend folder
TMPDIR/backends/mica/libtriton_mica.so, and checks: the configuration
completed from the model; outputs equal to `mica run`'s; dynamic batching
under concurrent requests (batch statistics above one); two instances
serving at once; an ONNX model (where the Python package onnx can write
one); bad requests answered with errors while the server keeps
serving; bad configurations refused with the backend's message; a
restarted server serving the same model; unloading and reloading through
the repository API.  Every wait and request loop is bounded; the server is
killed at the end whatever happens (and the shell wrapper kills it again
from TMPDIR/server.pid).
"""
import atexit
import os
import signal
import subprocess
import sys
import time

import numpy as np
import tritonclient.http as th
from tritonclient.utils import InferenceServerException

TMP = sys.argv[1]
MICA = os.environ["MICA_BIN"]
BACKEND = os.environ["MICA_TRITON_BACKEND"]
SRCDIR = os.environ["MICA_TOP_SRCDIR"]
BUILDDIR = os.environ["MICA_TOP_BUILDDIR"]
DEADLINE = time.monotonic() + 240  # the whole test, whatever happens
REPO = os.path.join(TMP, "repo")

count = 0
failures = 0


def ok(cond, desc, why=None):
    global count, failures
    count += 1
    print(("ok %d - %s" if cond else "not ok %d - %s") % (count, desc))
    if not cond:
        failures += 1
        if why:
            for line in str(why).splitlines()[-20:]:
                print("#   " + line)
    sys.stdout.flush()
    return cond


def skip(desc, reason):
    global count
    count += 1
    print("ok %d - %s # SKIP %s" % (count, desc, reason))
    sys.stdout.flush()


def diag(msg):
    print("# " + msg)
    sys.stdout.flush()


def left(limit):
    """Seconds to wait: at most `limit`, never past the deadline."""
    return max(0.0, min(limit, DEADLINE - time.monotonic()))


# ---- the server --------------------------------------------------------------

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from server import LIBS, Server  # noqa: E402  (tests/triton/server.py)

server = Server(TMP, REPO, BUILDDIR, lambda: left(90), BACKEND)
atexit.register(server.stop)
signal.signal(signal.SIGTERM, lambda *a: sys.exit(1))

# ---- helpers ---------------------------------------------------------------


def infer(client, model, x, outputs=None, name="x", dtype="FP32"):
    i = th.InferInput(name, list(x.shape), dtype)
    i.set_data_from_numpy(x, binary_data=True)
    outs = [th.InferRequestedOutput(o, binary_data=True)
            for o in (outputs or [])]
    return client.infer(model, [i], outputs=outs or None)


def mica_run(manifest, x, tag):
    """Outputs of `mica run MANIFEST --input x=...` as a dict of arrays."""
    folder = os.path.join(TMP, "run-" + tag)
    os.makedirs(folder, exist_ok=True)
    np.save(os.path.join(folder, "x.npy"), x)
    subprocess.run([MICA, "run", manifest, "--input",
                    "x=" + os.path.join(folder, "x.npy"), "--output-dir",
                    os.path.join(folder, "out")], check=True,
                   stdout=subprocess.DEVNULL, timeout=left(60) or 1)
    return {n: np.load(os.path.join(folder, "out", n + ".npy"))
            for n in ("y", "s") if os.path.exists(
                os.path.join(folder, "out", n + ".npy"))}


def raises(fn, *words):
    """Whether fn() raises a server error whose message holds `words`."""
    try:
        fn()
    except InferenceServerException as e:
        msg = str(e)
        return all(w in msg for w in words), msg
    return False, "no error"


def close(a, b):
    return a is not None and a.shape == b.shape and np.allclose(
        a, b, rtol=1e-5, atol=1e-6)


# ---- the test -------------------------------------------------------------------


def main():
    print("1..26")
    sys.stdout.flush()
    subprocess.run([sys.executable, os.path.join(SRCDIR, "tests", "triton",
                                                 "make_repo.py"),
                    REPO, "--mica", MICA], check=True,
                   stdout=subprocess.DEVNULL, timeout=left(120) or 1)

    # 1: the backend needs nothing from the server that it lacks.
    nm = subprocess.run(["nm", "-D", "--undefined-only", BACKEND],
                        capture_output=True, text=True)
    have = set()
    for lib in LIBS:
        have |= {ln.split()[-1] for ln in subprocess.run(
            ["nm", "-D", "--defined-only", lib], capture_output=True,
            text=True).stdout.splitlines() if ln.strip()}
    need = {ln.split()[-1] for ln in nm.stdout.splitlines()
            if "TRITON" in ln}
    ok(nm.returncode == 0 and need and need <= have,
       "the server exports all %d TRITON functions the backend calls"
       % len(need), "missing: %s" % sorted(need - have))

    onnx = os.path.isdir(os.path.join(REPO, "mlp_onnx"))
    models = ["mlp", "mlp_engine", "mlp_full", "wide"] + (
        ["mlp_onnx"] if onnx else [])
    up = server.start(models)
    ok(up, "tritonserver is ready on 127.0.0.1:%s" % server.port,
       server.tail())
    if not up:
        return
    c = server.client
    ok(all(c.is_model_ready(m) for m in models),
       "the %d mica models are ready" % len(models), server.tail())

    # 4-5: auto-complete.
    cfg = c.get_model_config("mlp")
    ins = {e["name"]: e for e in cfg.get("input", [])}
    outs = {e["name"]: e for e in cfg.get("output", [])}
    ok(cfg.get("max_batch_size") == 16 and "dynamic_batching" in cfg,
       "auto-complete: max_batch_size 16 (max-batch-size; the "
       "profiles cover 32)", cfg)
    ok(list(ins) == ["x"] and ins["x"]["data_type"] == "TYPE_FP32" and
       ins["x"]["dims"] == [16] and sorted(outs) == ["s", "y"] and
       outs["y"]["dims"] == [8] and outs["s"]["dims"] == [1],
       "auto-complete: input x [16], outputs y [8] and s [1]", cfg)

    # 6-9: outputs as `mica run` gives them.
    rng = np.random.default_rng(7)
    x5 = rng.standard_normal((5, 16)).astype(np.float32)
    want = mica_run(os.path.join(REPO, "mlp", "1", "model.yaml"), x5, "x5")
    r = infer(c, "mlp", x5)
    ok(close(r.as_numpy("y"), want["y"]) and close(r.as_numpy("s"), want["s"]),
       "mlp (a manifest, batch of 5): y and s equal mica run's")
    r = infer(c, "mlp_engine", x5)
    ok(close(r.as_numpy("y"), want["y"]) and close(r.as_numpy("s"), want["s"]),
       "mlp_engine (an engine file): y and s equal mica run's")
    r = infer(c, "mlp_full", x5, outputs=["s"])
    ok(r.as_numpy("y") is None and close(r.as_numpy("s"), want["s"]),
       "mlp_full (max_batch_size 0, whole [5, 16]): only the asked-for s, "
       "equal")
    if onnx:
        r = infer(c, "mlp_onnx", x5)
        cfg = c.get_model_config("mlp_onnx")
        ok(close(r.as_numpy("y"), want["y"]) and
           cfg.get("max_batch_size") == 16,
           "mlp_onnx (an ONNX file, its profile from parameters): "
           "max_batch_size 16, y equals mica run's", cfg)
    else:
        skip("mlp_onnx (an ONNX file)", "the Python package onnx is not "
             "installed, so make_repo.py wrote no ONNX model")
    x20 = rng.standard_normal((20, 16)).astype(np.float32)
    want20 = mica_run(os.path.join(REPO, "mlp", "1", "model.yaml"), x20,
                      "x20")
    r = infer(c, "mlp_full", x20)
    ok(close(r.as_numpy("y"), want20["y"]),
       "mlp_full, 20 rows (the second profile): y equals mica run's")

    # 10-11: dynamic batching under concurrent requests.
    x32 = rng.standard_normal((32, 16)).astype(np.float32)
    want32 = mica_run(os.path.join(REPO, "mlp", "1", "model.yaml"), x32,
                      "x32")
    right, batched, rounds = True, 0, 0
    while rounds < 3 and not batched and left(60) > 5:
        rounds += 1
        pending = []
        for k in range(32):
            i = th.InferInput("x", [1, 16], "FP32")
            i.set_data_from_numpy(x32[k:k + 1], binary_data=True)
            pending.append(c.async_infer("mlp", [i]))
        for k, p in enumerate(pending):
            right &= close(p.get_result(timeout=left(30) or 1).as_numpy("y"),
                           want32["y"][k:k + 1])
        stats = c.get_inference_statistics("mlp")["model_stats"][0]
        batched = max([b["batch_size"] for b in stats["batch_stats"]] or [0])
    ok(right, "32 concurrent one-row requests: every answer equals mica "
       "run's row")
    ok(batched > 1, "the dynamic batcher ran batches of up to %d rows "
       "(statistics; %d round(s) of 32)" % (batched, rounds), stats)

    # 12: two instances at once: slow requests keep both busy.
    xw = rng.standard_normal((128, 1024)).astype(np.float32)
    wantw = mica_run(os.path.join(REPO, "wide", "1", "model.yaml"), xw, "xw")
    names, right = set(), True
    t0 = time.monotonic()
    pending = []
    for k in range(4):
        i = th.InferInput("x", list(xw.shape), "FP32")
        i.set_data_from_numpy(xw, binary_data=True)
        pending.append(c.async_infer("wide", [i]))
    for p in pending:
        res = p.get_result(timeout=left(60) or 1)
        names.add(res.get_response().get("parameters", {}).get(
            "mica_instance"))
        right &= close(res.as_numpy("y"), wantw["y"])
    diag("4 wide requests took %.2f s" % (time.monotonic() - t0))
    ok(right and names == {"wide_0_0", "wide_0_1"},
       "wide: 4 concurrent requests served by both instances (%s), correct"
       % ", ".join(sorted(str(n) for n in names)))

    # 13-19: bad requests get errors; the server keeps serving.
    def bad(model, x, name="x", dtype="FP32", outputs=None):
        return lambda: infer(c, model, x, outputs, name, dtype)
    cases = [
        ("an unknown input name", bad("mlp", x5[:1], name="z"), ["z"]),
        ("a wrong shape", bad("mlp", x5[:1, :15].copy()), ["shape"]),
        ("a wrong dtype", bad("mlp", x5[:1].astype(np.float64),
                              dtype="FP64"), ["FP64"]),
        ("a batch above max_batch_size", bad("mlp", np.zeros(
            (17, 16), np.float32)), ["batch"]),
        ("an unknown output", bad("mlp", x5[:1], outputs=["nope"]),
         ["nope"]),
        ("a missing batch dimension (mlp_full)", bad("mlp_full", x5[0]),
         ["shape"]),
    ]
    for desc, fn, words in cases:
        refused, msg = raises(fn, *words)
        ok(refused, "refused: %s (%s)" % (desc, msg.splitlines()[0][:100]),
           msg)
    r = infer(c, "mlp", x5)
    ok(c.is_server_live() and close(r.as_numpy("y"), want["y"]),
       "after the bad requests the server still serves mlp correctly")

    # 20-21: bad configurations are refused with the backend's message.
    refused, msg = raises(lambda: c.load_model("bad_config"),
                          "data_type TYPE_INT32", "TYPE_FP32")
    ok(refused, "bad_config (input TYPE_INT32) is refused: the backend says "
       "why", msg)
    refused, msg = raises(lambda: c.load_model("bad_param"),
                          "unknown parameter 'precison'")
    ok(refused and c.is_server_live(), "bad_param (a misspelt parameter) is "
       "refused, the server stays up", msg)

    # 22-23: unload and reload through the repository API.
    c.unload_model("mlp_engine")
    end = time.monotonic() + left(30)
    while time.monotonic() < end and c.is_model_ready("mlp_engine"):
        time.sleep(0.1)
    refused, msg = raises(lambda: infer(c, "mlp_engine", x5))
    ok(not c.is_model_ready("mlp_engine") and refused,
       "mlp_engine unloaded: requests for it get an error", msg)
    c.load_model("mlp_engine")
    r = infer(c, "mlp_engine", x5)
    ok(c.is_model_ready("mlp_engine") and close(r.as_numpy("y"), want["y"]),
       "mlp_engine reloaded: it serves the same outputs")

    # 24-25: a restarted server serves the same model again.
    status = server.stop()
    ok(status == 0, "tritonserver stops on SIGTERM (status %s)" % status,
       server.tail())
    up = server.start(["mlp"])
    r = infer(server.client, "mlp", x5) if up else None
    ok(up and close(r.as_numpy("y"), want["y"]),
       "a restarted tritonserver (port %s) serves mlp with the same outputs"
       % server.port, server.tail())


if __name__ == "__main__":
    try:
        main()
    except Exception as e:  # a broken step: one failure line, not a trace
        ok(False, "the test ran to its end", "%s: %s\n%s" % (
            type(e).__name__, e, server.tail()))
    finally:
        server.stop()
    sys.exit(1 if failures else 0)
