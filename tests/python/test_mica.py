"""pytest of the Python package (python/mica) on the CPU: build, load,
save and run manifests, engines and ONNX models; NumPy and DLPack in
and out; errors as MicaError with mica's message.  tests/test_python.sh
runs it with MICA_LIBRARY and PYTHONPATH set to the build."""

import os

import numpy as np
import pytest

import mica

TOP = os.environ.get("MICA_TOP_SRCDIR",
                     os.path.join(os.path.dirname(__file__), "..", ".."))
HELLO = os.path.join(TOP, "examples", "hello.yaml")
CNN = os.path.join(TOP, "tests", "manifests", "cnn", "small_cnn.yaml")
MLP = os.path.join(TOP, "tests", "onnx", "models", "mlp.onnx")

NET = """mica: 1
device: cpu
inputs:
  x: {dtype: float32, shape: [-1, 3]}
profiles:
  - x: {min: [1, 3], opt: [2, 3], max: [8, 3]}
layers:
  - {name: relu, type: Activation, inputs: [x], outputs: [r], params: {type: relu}}
  - {name: total, type: Reduce, inputs: [r], outputs: [y], params: {op: sum, axes: [1], keep_dims: false}}
outputs: [r, y]
"""


def want(x):
    r = np.maximum(x, 0)
    return r, r.sum(axis=1)


def test_version():
    assert mica.version()


def test_manifest_text_numpy_in_out():
    e = mica.build(NET, manifest_text=True)
    assert [s.name for s in e.inputs] == ["x"]
    assert e.inputs[0].shape == (-1, 3) and e.inputs[0].dtype == "float32"
    assert [s.name for s in e.outputs] == ["r", "y"]
    x = np.array([[1, -2, 3], [-4, 5, 6]], np.float32)
    out = mica.run(e, x=x)
    r, y = want(x)
    np.testing.assert_array_equal(out["r"], r)
    np.testing.assert_array_equal(out["y"], y)
    # another batch size on the same engine, the inputs as a mapping
    x5 = np.arange(15, dtype=np.float32).reshape(5, 3) - 7
    out = e.run({"x": x5})
    np.testing.assert_array_equal(out["y"], want(x5)[1])


def test_non_contiguous_input_copied():
    e = mica.build(NET, manifest_text=True)
    x = np.arange(12, dtype=np.float32).reshape(3, 4)[:, :3] - 5
    np.testing.assert_array_equal(mica.run(e, x=x)["y"], want(x)[1])


def test_save_load(tmp_path):
    e = mica.build(HELLO)
    f = str(tmp_path / "hello.engine")
    e.save(f)
    e2 = mica.load(f)
    assert e2.device == "cpu" or e2.device == "cuda"
    a, b = e.run(), e2.run()
    for k in a:
        np.testing.assert_array_equal(a[k], b[k])
    # build() of an engine file loads it
    assert [s.name for s in mica.build(f).outputs] == [s.name for s in
                                                       e2.outputs]


def test_onnx_model():
    if not os.path.exists(MLP):
        pytest.skip("no tests/onnx/models/mlp.onnx")
    try:
        e = mica.build(MLP, shapes="in:0:2x4")
    except mica.MicaError as err:
        if "importer" in str(err):
            pytest.skip(str(err))
        raise
    x = np.load(os.path.join(TOP, "tests", "onnx", "models", "mlp.in_0.npy"))
    out = e.run({"in:0": x[:2]})
    w = np.load(os.path.join(TOP, "tests", "onnx", "models",
                             "mlp.want.out_relu.npy"))
    np.testing.assert_allclose(out["out/relu"], w[:2], rtol=1e-5, atol=1e-6)


def test_errors_carry_mica_message(tmp_path):
    with pytest.raises(mica.MicaError) as err:
        mica.build(str(tmp_path / "nope.yaml"))
    assert "nope.yaml" in str(err.value)
    e = mica.build(NET, manifest_text=True)
    with pytest.raises(mica.MicaError) as err:
        e.run(x=np.zeros((2, 4), np.float32))
    assert "'x'" in str(err.value)
    with pytest.raises(mica.MicaError) as err:
        e.run(z=np.zeros((2, 3), np.float32))
    assert "no input 'z'" in str(err.value)
    with pytest.raises(mica.MicaError) as err:
        mica.build("mica: 1\nlayers: [\n", manifest_text=True)
    assert err.value.status


class _DL:
    """A DLPack producer over a NumPy array (NumPy's own __dlpack__),
    not an ndarray: the package's DLPack path, as for torch tensors."""

    def __init__(self, a):
        self.a = a

    def __dlpack__(self, stream=None):
        return self.a.__dlpack__()

    def __dlpack_device__(self):
        return self.a.__dlpack_device__()


def test_dlpack_in_and_out():
    if not hasattr(np.ndarray, "__dlpack__"):
        pytest.skip("NumPy without DLPack")
    e = mica.build(NET, manifest_text=True, device="cpu")
    x = np.array([[1, -2, 3], [-4, 5, 6]], np.float32)
    y = np.zeros(2, np.float32)
    out = e.run(x=_DL(x), outputs={"y": _DL(y)})
    assert isinstance(out["y"], _DL)
    np.testing.assert_array_equal(y, want(x)[1])  # written in place
    np.testing.assert_array_equal(out["r"], want(x)[0])
    # outputs are NumPy arrays: DLPack out for any consumer
    back = np.from_dlpack(out["r"])
    np.testing.assert_array_equal(back, want(x)[0])


def test_dlpack_strided_refused():
    if not hasattr(np.ndarray, "__dlpack__"):
        pytest.skip("NumPy without DLPack")
    e = mica.build(NET, manifest_text=True, device="cpu")
    x = np.arange(12, dtype=np.float32).reshape(3, 4)[:, :3]
    with pytest.raises(mica.MicaError, match="C-contiguous"):
        e.run(x=_DL(x))


def test_torch_tensors_cpu():
    torch = pytest.importorskip("torch")
    e = mica.build(NET, manifest_text=True, device="cpu")
    x = torch.tensor([[1.0, -2.0, 3.0], [-4.0, 5.0, 6.0]])
    y = torch.zeros(2)
    out = e.run(x=x, outputs={"y": y})
    assert out["y"] is y
    assert torch.equal(y, torch.relu(x).sum(dim=1))


def test_bench():
    e = mica.build(NET, manifest_text=True)
    t = e.bench({"x": np.ones((2, 3), np.float32)}, iterations=20, warmup=2)
    assert 0 < t["min_us"] <= t["median_us"] <= t["p99_us"]


def test_torch_tensors_cuda():
    """On a GPU machine: CUDA tensors bound in place, in and out, on
    PyTorch's current stream."""
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device for PyTorch")
    try:
        e = mica.build(NET, manifest_text=True, device="cuda")
    except mica.MicaError as err:
        pytest.skip(f"no CUDA engine: {err}")
    x = torch.tensor([[1.0, -2.0, 3.0], [-4.0, 5.0, 6.0]], device="cuda")
    y = torch.empty(2, device="cuda")
    ex = e.execution()
    ex.set_stream(torch.cuda.current_stream())
    out = ex.run(x=x, outputs={"y": y})
    torch.cuda.current_stream().synchronize()
    assert out["y"] is y
    assert torch.allclose(y, torch.relu(x).sum(dim=1))
    assert np.allclose(out["r"], torch.relu(x).cpu().numpy())
