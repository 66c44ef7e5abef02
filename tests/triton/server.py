"""tests/triton/server.py - a tritonserver from nvidia-pytriton's wheel,
run standalone on 127.0.0.1 with the mica backend (for test_triton.py and
bench/triton_bench.py).

The wheel keeps the server in pytriton/tritonserver/bin/tritonserver and
its libraries in nvidia_pytriton.libs/ (found through the binary's
RPATH): it runs as it is, without a GPU.  The backend folder holds
mica/libtriton_mica.so; libmica is found through LD_LIBRARY_PATH (the
build's .libs) and the layer modules through $MICA_MODULE_DIR.
"""
import glob
import os
import signal
import socket
import subprocess
import time

import pytriton
import tritonclient.http as th

PKG = os.path.dirname(pytriton.__file__)
SERVER = os.path.join(PKG, "tritonserver", "bin", "tritonserver")
LIBS = glob.glob(os.path.join(os.path.dirname(PKG), "nvidia_pytriton.libs",
                              "libtritonserver*.so*"))


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """One tritonserver at a time; `tmp` holds its logs, server.pid (for
    a wrapper's trap) and, given `backend`, the backend folder."""

    def __init__(self, tmp, repo, builddir, budget, backend=None,
                 options=("--backend-config=mica,max-batch-size=16",)):
        self.tmp, self.repo, self.builddir = tmp, repo, builddir
        self.budget = budget  # a function: seconds left to wait
        self.options = list(options)
        self.proc = None
        self.port = None
        self.client = None
        self.starts = 0
        self.log = None
        self.backends = os.path.join(tmp, "backends")
        if backend:
            os.makedirs(os.path.join(self.backends, "mica"), exist_ok=True)
            os.symlink(backend, os.path.join(self.backends, "mica",
                                             "libtriton_mica.so"))

    def start(self, models, concurrency=32):
        """Start on a free port; True once it answers ready (bounded)."""
        for _ in range(3):
            self.starts += 1
            self.port = free_port()
            self.log = os.path.join(self.tmp, "server-%d.log" % self.starts)
            env = dict(os.environ)
            libs = os.path.join(self.builddir, ".libs")
            env["LD_LIBRARY_PATH"] = libs + (
                ":" + env["LD_LIBRARY_PATH"] if env.get("LD_LIBRARY_PATH")
                else "")
            args = [SERVER, "--model-repository=" + self.repo,
                    "--backend-directory=" + self.backends,
                    "--http-address=127.0.0.1",
                    "--http-port=%d" % self.port,
                    "--allow-grpc=false", "--allow-metrics=false",
                    "--model-control-mode=explicit", "--exit-timeout-secs=10"]
            args += self.options + ["--load-model=" + m for m in models]
            with open(self.log, "w") as log:
                self.proc = subprocess.Popen(args, stdout=log,
                                             stderr=subprocess.STDOUT,
                                             env=env, start_new_session=True)
            with open(os.path.join(self.tmp, "server.pid"), "w") as f:
                f.write("%d\n" % self.proc.pid)
            self.client = th.InferenceServerClient(
                "127.0.0.1:%d" % self.port, concurrency=concurrency,
                connection_timeout=10, network_timeout=60)
            end = time.monotonic() + self.budget()
            while time.monotonic() < end and self.proc.poll() is None:
                try:
                    if self.client.is_server_ready():
                        return True
                except Exception:
                    pass
                time.sleep(0.2)
            if self.proc.poll() is None:
                return False  # up but never ready
            # It exited: perhaps the port was taken meanwhile; another one.
        return False

    def stop(self):
        """SIGTERM, then SIGKILL after 20 s; the exit status."""
        if not self.proc or self.proc.poll() is not None:
            return self.proc.returncode if self.proc else None
        try:
            self.client.close()  # open connections hold the server up
        except Exception:
            pass
        os.killpg(self.proc.pid, signal.SIGTERM)
        try:
            return self.proc.wait(timeout=min(20, self.budget()) or 1)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            return self.proc.wait()

    def tail(self):
        try:
            with open(self.log) as f:
                return "".join(f.readlines()[-25:])
        except (OSError, TypeError):
            return ""
