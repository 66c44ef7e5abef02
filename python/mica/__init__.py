"""mica from Python: build, load, save, run and time engines of mica
manifests, ONNX models and engine files, over libmica's C API (ctypes:
no compiler needed to install).

    import mica, numpy as np
    engine = mica.build("net.yaml")               # or model.onnx, or
    engine = mica.load("net.engine")              # an engine file
    y = mica.run(engine, x=np.ones((2, 3), np.float32))["y"]
    engine.save("net.engine")

Inputs are NumPy arrays or any DLPack tensor (PyTorch, CuPy, JAX): a CPU
engine reads C-contiguous host tensors in place, a CUDA engine binds
CUDA tensors in place (no copy either way).  Outputs are NumPy arrays,
or, with ``outputs={"y": tensor}``, written into the tensors given (CUDA
memory for a CUDA engine: the DLPack way out without copies).  Errors
raise MicaError with mica's one-line message.
"""

from __future__ import annotations

import ctypes
import os
import time
from typing import Any, Dict, Iterable, List, Mapping, Optional, Tuple

import numpy as np

from . import _lib
from ._lib import Dims, TensorDesc, TensorInfo, lib

__all__ = ["MicaError", "Engine", "Execution", "TensorSpec", "build", "load",
           "run", "version"]

# mica dtypes (mica/types.h) and NumPy's.
_NP = {0: np.dtype(np.float32), 1: np.dtype(np.float16), 2: np.dtype(np.int8),
       3: np.dtype(np.int32), 4: np.dtype(np.bool_), 5: np.dtype(np.int64),
       6: np.dtype(np.uint8)}
_NAMES = {0: "float32", 1: "float16", 2: "int8", 3: "int32", 4: "bool",
          5: "int64", 6: "uint8", 7: "bfloat16"}
# DLPack (code, bits) -> mica dtype
_DL = {(2, 32): 0, (2, 16): 1, (0, 8): 2, (0, 32): 3, (6, 8): 4, (1, 8): 6,
       (0, 64): 5, (4, 16): 7}


class MicaError(RuntimeError):
    """A mica call failed; the message is mica's, `status` its code name."""

    def __init__(self, message: str, status: str = "") -> None:
        super().__init__(message)
        self.status = status


def version() -> str:
    """libmica's version string."""
    return lib.mica_version().decode()


class _Context:
    """A mica context with its modules (one per engine)."""

    def __init__(self, module_paths: Iterable[str] = ()) -> None:
        self.ptr = ctypes.c_void_p()
        if lib.mica_context_create(ctypes.byref(self.ptr)):
            raise MicaError("mica: cannot create a context")
        self.check(lib.mica_context_load_default_modules(self.ptr),
                   "loading mica's modules")
        for d in module_paths:
            self.check(lib.mica_context_load_dir(self.ptr, os.fsencode(d)),
                       f"module path {d}")

    def check(self, status: int, what: str = "") -> None:
        if status:
            msg = lib.mica_context_error(self.ptr)
            text = msg.decode(errors="replace") if msg else ""
            name = lib.mica_status_name(status).decode()
            raise MicaError(text or f"{what}: {name}", name)

    def __del__(self) -> None:
        if getattr(self, "ptr", None) and self.ptr.value:
            lib.mica_context_destroy(self.ptr)
            self.ptr = ctypes.c_void_p()


class TensorSpec:
    """A network input or output: name, dtype name, dims (-1: runtime)."""

    def __init__(self, name: str, dtype: str, shape: Tuple[int, ...]) -> None:
        self.name, self.dtype, self.shape = name, dtype, shape

    def __repr__(self) -> str:
        return f"TensorSpec({self.name!r}, {self.dtype}, {list(self.shape)})"


def _dims(shape: Iterable[int]) -> Dims:
    shape = tuple(int(s) for s in shape)
    if len(shape) > _lib.MAX_DIMS:
        raise MicaError(f"rank {len(shape)} is more than mica's "
                        f"{_lib.MAX_DIMS} dimensions")
    d = Dims()
    d.nb_dims = len(shape)
    for i, s in enumerate(shape):
        d.d[i] = s
    return d


class Engine:
    """A built or loaded engine and its context.  Make one with build()
    or load(); run it with run(), or keep an Execution for many runs."""

    def __init__(self, ctx: _Context, ptr: ctypes.c_void_p) -> None:
        self._ctx, self._ptr = ctx, ptr
        self._exec: Optional[Execution] = None
        self.inputs: List[TensorSpec] = self._specs(
            lib.mica_engine_nb_inputs, lib.mica_engine_input)
        self.outputs: List[TensorSpec] = self._specs(
            lib.mica_engine_nb_outputs, lib.mica_engine_output)

    def _specs(self, count, index) -> List[TensorSpec]:
        out = []
        for i in range(count(self._ptr)):
            info = TensorInfo()
            info.struct_size = ctypes.sizeof(TensorInfo)
            self._ctx.check(lib.mica_engine_tensor(self._ptr,
                                                   index(self._ptr, i),
                                                   ctypes.byref(info)))
            out.append(TensorSpec(info.name.decode(),
                                  _NAMES.get(info.dtype, str(info.dtype)),
                                  tuple(info.dims.d[:info.dims.nb_dims])))
        return out

    @property
    def device(self) -> str:
        """'cpu' or 'cuda': where the engine runs."""
        return "cuda" if lib.mica_engine_device(self._ptr) == \
            _lib.DEVICE_CUDA else "cpu"

    def save(self, path: str) -> None:
        """Write the engine file (complete or absent)."""
        self._ctx.check(lib.mica_engine_save(self._ptr, os.fsencode(path)))

    def execution(self) -> "Execution":
        """A new execution context (own memory, own stream); it keeps the
        engine alive."""
        return Execution(self)

    def _default(self) -> "Execution":
        # The engine's own context refers to the engine weakly (no cycle:
        # the engine destroys it first).
        if self._exec is None:
            self._exec = Execution(self, _owned=True)
        return self._exec

    def run(self, inputs: Optional[Mapping[str, Any]] = None,
            outputs: Optional[Mapping[str, Any]] = None,
            **kw: Any) -> Dict[str, Any]:
        """Run once on the engine's default execution context; see
        Execution.run."""
        return self._default().run(inputs, outputs, **kw)

    def bench(self, inputs: Optional[Mapping[str, Any]] = None,
              iterations: int = 100, warmup: int = 10,
              **kw: Any) -> Dict[str, float]:
        """Time `iterations` runs from Python (after `warmup`); see
        Execution.bench."""
        return self._default().bench(inputs, iterations, warmup, **kw)

    def __del__(self) -> None:
        if getattr(self, "_exec", None) is not None:
            self._exec._close()
            self._exec = None
        if getattr(self, "_ptr", None) and self._ptr.value:
            lib.mica_engine_destroy(self._ptr)
            self._ptr = ctypes.c_void_p()


class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8),
                ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", _DLDevice),
                ("ndim", ctypes.c_int32), ("dtype", _DLDataType),
                ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)),
                ("byte_offset", ctypes.c_uint64)]


# The calls of every run, looked up once.
_set_input = lib.mica_exec_set_input
_run = lib.mica_exec_run
_get_output = lib.mica_exec_get_output
_memmove = ctypes.memmove

_capsule_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_capsule_pointer.restype = ctypes.c_void_p
_capsule_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]


def _dlpack(x: Any, stream: Optional[int]) -> Tuple[Any, int, Dims, int, int]:
    """(capsule, address, dims, mica dtype, DLPack device type) of a DLPack
    tensor, which must be C-contiguous."""
    if stream == 0:
        # DLPack names CUDA's legacy default stream 1 (0 is ambiguous
        # there and refused by PyTorch); the context's null stream is it.
        stream = 1
    try:
        cap = x.__dlpack__(stream=stream)
    except TypeError:
        cap = x.__dlpack__()
    t = _DLTensor.from_address(_capsule_pointer(cap, b"dltensor"))
    shape = tuple(t.shape[i] for i in range(t.ndim))
    key = (t.dtype.code, t.dtype.bits)
    if t.dtype.lanes != 1 or key not in _DL:
        raise MicaError(f"a DLPack tensor of type code {t.dtype.code}, "
                        f"{t.dtype.bits} bits, {t.dtype.lanes} lanes has no "
                        "mica dtype")
    if t.strides:
        want = 1
        for i in reversed(range(t.ndim)):
            if shape[i] != 1 and t.strides[i] != want:
                raise MicaError("a DLPack tensor that is not C-contiguous "
                                "(call .contiguous() first)")
            want *= shape[i]
    return cap, (t.data or 0) + t.byte_offset, _dims(shape), _DL[key], \
        t.device.device_type


def _stream_handle(stream: Any) -> Optional[int]:
    if stream is None:
        return None
    if isinstance(stream, int):
        return stream
    for attr in ("cuda_stream", "ptr", "handle"):  # torch, cupy
        if hasattr(stream, attr):
            return int(getattr(stream, attr))
    raise TypeError("stream: an int (cudaStream_t) or an object with "
                    ".cuda_stream (torch.cuda.Stream) or .ptr (cupy)")


class Execution:
    """An execution context of an engine: inputs, outputs, a stream."""

    def __init__(self, engine: Engine, _owned: bool = False) -> None:
        # Keeps the engine alive, unless it is the engine's own.
        self.engine: Optional[Engine] = None if _owned else engine
        self._device = engine.device
        self._ctx = engine._ctx
        self._ptr = ctypes.c_void_p()
        self._ctx.check(lib.mica_exec_create(engine._ptr,
                                             ctypes.byref(self._ptr)))
        self._cuda = self._device == "cuda"
        self._stream: Optional[int] = None
        self._keep: List[Any] = []
        self._bound: List[bytes] = []
        self._names = {s.name: s.name.encode() for s in engine.inputs}
        self._out_names = [(s.name, s.name.encode()) for s in engine.outputs]
        self._desc = TensorDesc()
        self._data = ctypes.c_void_p()
        self._out_refs = (ctypes.byref(self._desc), ctypes.byref(self._data))
        self._in_dims: Dict[bytes, Tuple[Tuple[int, ...], Any]] = {}
        self._out_shape: Dict[bytes, Tuple[bytes, Tuple[int, ...]]] = {}

    def set_stream(self, stream: Any) -> None:
        """Enqueue on `stream` (a CUDA engine): a cudaStream_t as an int,
        torch.cuda.current_stream(), a cupy stream; None: the context's
        own.  The caller keeps it alive and synchronizes it."""
        self._stream = _stream_handle(stream)
        self._ctx.check(lib.mica_exec_set_stream(self._ptr, self._stream))

    def set_threads(self, n: int) -> None:
        """At most n CPU threads per layer."""
        self._ctx.check(lib.mica_exec_set_threads(self._ptr, int(n)))

    def _set(self, name: str, value: Any) -> None:
        key = self._names.get(name)
        if key is None:
            raise MicaError(f"the engine has no input '{name}' (its inputs: "
                            f"{', '.join(self._names) or 'none'})")
        if isinstance(value, np.ndarray) or not hasattr(value, "__dlpack__"):
            a = value if isinstance(value, np.ndarray) and \
                value.flags.c_contiguous else np.ascontiguousarray(value)
            self._keep.append(a)
            shape = a.shape
            cached = self._in_dims.get(key)
            if cached is None or cached[0] != shape:
                cached = (shape, ctypes.byref(_dims(shape)))
                self._in_dims[key] = cached
            st = _set_input(self._ptr, key, cached[1],
                            a.__array_interface__["data"][0])
            if st:
                self._ctx.check(st)
            return
        cap, addr, dims, _, dev = _dlpack(value, self._stream)
        self._keep.append((value, cap))
        if dev == 1:  # kDLCPU: read in place
            self._ctx.check(lib.mica_exec_set_input(
                self._ptr, key, ctypes.byref(dims), addr))
        elif dev == 2 and self._cuda:  # kDLCUDA: bound in place
            self._ctx.check(lib.mica_exec_bind(self._ptr, key,
                                               ctypes.byref(dims), addr))
            self._bound.append(key)
        else:
            raise MicaError(f"input '{name}': a tensor on DLPack device "
                            f"{dev} for a {self._device} engine")

    def _bind_output(self, name: str, value: Any) -> None:
        cap, addr, dims, _, dev = _dlpack(value, self._stream)
        if not ((dev == 2 and self._cuda) or (dev == 1 and not self._cuda)):
            raise MicaError(f"output '{name}': a tensor on DLPack device "
                            f"{dev} for a {self._device} engine")
        key = name.encode()
        self._keep.append((value, cap))
        self._ctx.check(lib.mica_exec_bind(self._ptr, key, None, addr))
        self._bound.append(key)

    def run(self, inputs: Optional[Mapping[str, Any]] = None,
            outputs: Optional[Mapping[str, Any]] = None,
            **kw: Any) -> Dict[str, Any]:
        """Run once.  Inputs by name (a mapping and/or keywords): NumPy
        arrays or DLPack tensors.  Returns every output as a NumPy array
        (a copy), except those given in `outputs` (DLPack tensors of the
        output's shape, written in place), returned as given."""
        if self._bound:
            for key in self._bound:
                lib.mica_exec_bind(self._ptr, key, None, None)
            self._bound.clear()
        self._keep.clear()
        for name, value in (inputs or {}).items():
            self._set(name, value)
        for name, value in kw.items():
            self._set(name, value)
        for name, value in (outputs or {}).items():
            self._bind_output(name, value)
        st = _run(self._ptr)
        if st:
            self._ctx.check(st)
        result: Dict[str, Any] = {}
        desc_ref, data_ref = self._out_refs
        d = self._desc
        for name, key in self._out_names:
            if outputs and name in outputs:
                result[name] = outputs[name]
                continue
            st = _get_output(self._ptr, key, desc_ref, data_ref)
            if st:
                self._ctx.check(st)
            raw = bytes(d.dims)  # the shape, unless it changed: cached
            cached = self._out_shape.get(key)
            if cached is None or cached[0] != raw:
                cached = (raw, tuple(d.dims.d[:d.dims.nb_dims]))
                self._out_shape[key] = cached
            shape = cached[1]
            dtype = _NP.get(d.dtype)
            if dtype is None:
                raise MicaError(f"output '{name}' is "
                                f"{_NAMES.get(d.dtype, d.dtype)}, which "
                                "NumPy has no type for")
            a = np.empty(shape, dtype)
            if a.nbytes:
                _memmove(a.__array_interface__["data"][0], self._data,
                         a.nbytes)
            result[name] = a
        return result

    def bench(self, inputs: Optional[Mapping[str, Any]] = None,
              iterations: int = 100, warmup: int = 10,
              **kw: Any) -> Dict[str, float]:
        """Time `iterations` calls of run() from Python after `warmup`:
        mean, median, min and p99 in microseconds per call (inputs set and
        outputs copied every call, as a Python caller pays them)."""
        for _ in range(max(0, warmup)):
            self.run(inputs, **kw)
        times = []
        for _ in range(max(1, iterations)):
            t0 = time.perf_counter()
            self.run(inputs, **kw)
            times.append((time.perf_counter() - t0) * 1e6)
        times.sort()
        return {"mean_us": sum(times) / len(times),
                "median_us": times[len(times) // 2], "min_us": times[0],
                "p99_us": times[min(len(times) - 1,
                                    int(0.99 * len(times)))]}

    def _close(self) -> None:
        if getattr(self, "_ptr", None) and self._ptr.value:
            lib.mica_exec_destroy(self._ptr)
            self._ptr = ctypes.c_void_p()

    def __del__(self) -> None:
        self._close()


def _ctx_for(module_paths: Iterable[str]) -> _Context:
    return _Context(module_paths)


def load(path: str, module_paths: Iterable[str] = ()) -> Engine:
    """Load an engine file (mica build's, or Engine.save's)."""
    ctx = _ctx_for(module_paths)
    ptr = ctypes.c_void_p()
    ctx.check(lib.mica_engine_load(ctx.ptr, os.fsencode(path),
                                   ctypes.byref(ptr)))
    return Engine(ctx, ptr)


def build(source: str, *, device: Optional[str] = None, fp16: bool = False,
          prefer: Optional[str] = None, shapes: Optional[str] = None,
          min_shapes: Optional[str] = None, opt_shapes: Optional[str] = None,
          max_shapes: Optional[str] = None, manifest_text: bool = False,
          module_paths: Iterable[str] = ()) -> Engine:
    """Build the engine of a manifest or an ONNX model (an engine file is
    loaded as load() does).  `source`: a path, or with manifest_text=True
    the manifest's YAML itself.  device: 'cpu', 'cuda', None (the
    manifest's, else auto); fp16: let layers run in float16; prefer:
    "Type=impl,..."; shapes (and min_, opt_, max_shapes): an ONNX model's
    profile, "x:1x3x224x224"."""
    ctx = _ctx_for(module_paths)
    if prefer:
        ctx.check(lib.mica_context_set_prefer(ctx.ptr, prefer.encode()))
    m = ctypes.c_void_p()
    if manifest_text:
        text = source.encode()
        ctx.check(lib.mica_manifest_load_text(ctx.ptr, b"<text>", text,
                                              len(text), ctypes.byref(m)))
    else:
        path = os.fsencode(source)
        if lib.mica_engine_file_probe(path):
            ptr = ctypes.c_void_p()
            ctx.check(lib.mica_engine_load(ctx.ptr, path, ctypes.byref(ptr)))
            return Engine(ctx, ptr)
        if lib.mica_onnx_file_probe(path):
            opt = _lib.OnnxOptions()
            opt.struct_size = ctypes.sizeof(opt)
            opt.shapes = shapes.encode() if shapes else None
            opt.min_shapes = min_shapes.encode() if min_shapes else None
            opt.opt_shapes = opt_shapes.encode() if opt_shapes else None
            opt.max_shapes = max_shapes.encode() if max_shapes else None
            model = ctypes.c_void_p()
            ctx.check(lib.mica_onnx_import(ctx.ptr, path, ctypes.byref(opt),
                                           ctypes.byref(model)))
            try:
                ctx.check(lib.mica_onnx_manifest(model, ctypes.byref(m)))
            finally:
                lib.mica_onnx_destroy(model)
        else:
            ctx.check(lib.mica_manifest_load(ctx.ptr, path, ctypes.byref(m)))
    try:
        src = lib.mica_manifest_config(m).contents
        cfg = _lib.BuildConfig()
        ctypes.pointer(cfg)[0] = src
        cfg.struct_size = ctypes.sizeof(cfg)
        if device is not None:
            cfg.device = {"cpu": _lib.DEVICE_CPU, "cuda": _lib.DEVICE_CUDA,
                          "auto": 0}[device]
        if fp16:
            cfg.precisions |= 1 << 1  # float16, as mica build --fp16
        ptr = ctypes.c_void_p()
        ctx.check(lib.mica_engine_build(lib.mica_manifest_network(m),
                                        ctypes.byref(cfg), ctypes.byref(ptr)))
    finally:
        lib.mica_manifest_destroy(m)
    return Engine(ctx, ptr)


def run(engine: Engine, inputs: Optional[Mapping[str, Any]] = None,
        outputs: Optional[Mapping[str, Any]] = None,
        **kw: Any) -> Dict[str, Any]:
    """Run `engine` once: mica.run(engine, x=array) -> {"y": array}."""
    return engine.run(inputs, outputs, **kw)
