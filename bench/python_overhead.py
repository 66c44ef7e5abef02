"""bench/python_overhead.py MICA_BIN MANIFEST - the Python overhead of
`import mica` per run: the mean time of Engine.run() (inputs set, run,
outputs copied into NumPy) against `mica bench`'s mean latency of the
same manifest on the CPU, in the same process's machine and moment.
Prints both and their difference in microseconds (issue 26: under 10 us).

    MICA_LIBRARY=build/.libs/libmica.so PYTHONPATH=python \
        python3 bench/python_overhead.py build/tools/mica examples/tiny.yaml
"""

import json
import os
import subprocess
import sys
import tempfile

import numpy as np

import mica


def main() -> int:
    mica_bin, manifest = sys.argv[1], sys.argv[2]
    iters = int(os.environ.get("ITERATIONS", "20000"))
    e = mica.build(manifest, device="cpu")
    rng = np.random.default_rng(1)
    inputs = {}
    for s in e.inputs:
        shape = [d if d > 0 else 2 for d in s.shape]
        inputs[s.name] = rng.uniform(-1, 1, shape).astype(s.dtype)
    shapes = ",".join(f"{k}:{'x'.join(map(str, v.shape))}"
                      for k, v in inputs.items())
    x = e.execution()
    x.set_threads(1)
    py = x.bench(inputs, iterations=iters, warmup=1000)
    with tempfile.TemporaryDirectory() as tmp:
        times = os.path.join(tmp, "t.json")
        subprocess.run([mica_bin, "bench", manifest, "--device", "cpu",
                        "--threads", "1", "--shapes", shapes,
                        "--iterations", str(iters), "--export-times", times],
                       check=True, stdout=subprocess.DEVNULL)
        with open(times) as f:
            runs = json.load(f)
    lat = sorted(r["latencyMs"] * 1000 for r in runs)
    c_mean = sum(lat) / len(lat)
    print(f"mica bench: mean {c_mean:.2f} us, median {lat[len(lat)//2]:.2f} us")
    print(f"mica.run:   mean {py['mean_us']:.2f} us, median "
          f"{py['median_us']:.2f} us")
    print(f"overhead:   mean {py['mean_us'] - c_mean:.2f} us, median "
          f"{py['median_us'] - lat[len(lat)//2]:.2f} us per run")
    return 0


if __name__ == "__main__":
    sys.exit(main())
