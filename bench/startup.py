#!/usr/bin/env python3
"""bench/startup.py - start-up time and memory of `mica` commands.

usage: bench/startup.py MICA [RUNS]

MICA is the real binary (for an uninstalled build, tools/.libs/mica with
LD_LIBRARY_PATH=.libs and MICA_MODULE_DIR=modules/.libs in the
environment; the libtool wrapper tools/mica adds a shell's start-up).
Runs `mica modules`, `mica run examples/hello.yaml --device cpu` and
`mica inspect` of a CPU engine RUNS times each (default 11) and prints the
median wall time and the median maximum resident set size (runs go
through /usr/bin/time, which adds well under a millisecond), and whether a GPU library was mapped
(LD_DEBUG=libs, once per command).
"""
import os
import statistics
import subprocess
import sys
import tempfile
import time

GPU_LIBS = ("libcuda.", "libcudart", "libcublas", "libcublasLt", "libcudnn")


def one(argv, tmp):
    """Wall seconds and max RSS (kB) of one run of argv, through
    /usr/bin/time (a forked Python would count its own pages)."""
    out = os.path.join(tmp, "time.txt")
    t0 = time.perf_counter()
    with open(os.devnull, "wb") as null:
        r = subprocess.run(["/usr/bin/time", "-f", "%M", "-o", out] + argv,
                           stdout=null, stderr=null)
    wall = time.perf_counter() - t0
    if r.returncode != 0:
        sys.exit("failed (%d): %s" % (r.returncode, " ".join(argv)))
    with open(out) as f:
        return wall, int(f.read().split()[-1])


def gpu_libs(argv):
    """GPU libraries the dynamic loader opened while argv ran."""
    env = dict(os.environ, LD_DEBUG="libs")
    r = subprocess.run(argv, env=env, stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE, text=True)
    seen = set()
    for line in r.stderr.splitlines():
        if "calling init:" in line:
            name = os.path.basename(line.split("calling init:")[1].strip())
            if name.startswith(GPU_LIBS):
                seen.add(name)
    return sorted(seen)


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    mica = sys.argv[1]
    runs = int(sys.argv[2]) if len(sys.argv) > 2 else 11
    src = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    hello = os.path.join(src, "examples", "hello.yaml")
    tmp = tempfile.mkdtemp(prefix="mica-startup-")
    engine = os.path.join(tmp, "hello-cpu.engine")
    subprocess.run([mica, "build", hello, "-o", engine, "--device", "cpu"],
                   check=True, stdout=subprocess.DEVNULL)
    cmds = [
        ("mica modules", [mica, "modules"]),
        ("mica run hello.yaml --device cpu",
         [mica, "run", hello, "--output-dir", tmp, "--device", "cpu"]),
        ("mica inspect (CPU engine)", [mica, "inspect", engine]),
    ]
    for label, argv in cmds:
        one(argv, tmp)  # warm the page cache
        walls, rss = [], []
        for _ in range(runs):
            w, r = one(argv, tmp)
            walls.append(w)
            rss.append(r)
        libs = gpu_libs(argv)
        print("%-34s %7.1f ms %8d kB  GPU libraries: %s"
              % (label, 1000 * statistics.median(walls),
                 statistics.median(rss), ", ".join(libs) or "none"))


if __name__ == "__main__":
    main()
