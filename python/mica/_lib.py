"""ctypes declarations of libmica's C API (abi/mica/mica.h) used by the
package: only what it calls, with the struct layouts it reads.  mica's
ABI structs start with their size and only grow at the end, so a prefix
declared here stays valid with a newer library."""

from __future__ import annotations

import ctypes
import ctypes.util
import os
from ctypes import (POINTER, Structure, c_char_p, c_float, c_int32, c_int64,
                    c_size_t, c_uint32, c_void_p)

MAX_DIMS = 8
DEVICE_CPU = 1
DEVICE_CUDA = 2


class Dims(Structure):
    _fields_ = [("nb_dims", c_int32), ("reserved_", c_int32),
                ("d", c_int64 * MAX_DIMS)]


class TensorDesc(Structure):
    _fields_ = [("dtype", c_int32), ("format", c_int32), ("dims", Dims),
                ("scale", c_float), ("reserved_", c_uint32 * 7)]


class TensorInfo(Structure):
    _fields_ = [("struct_size", c_uint32), ("dtype", c_int32),
                ("name", c_char_p), ("dims", Dims), ("shape", c_char_p),
                ("kind", c_int32), ("is_input", c_int32),
                ("is_output", c_int32), ("producer", c_int32),
                # the first layout ends here: the library fills at least it
                ("offset", c_int64), ("bytes", c_int64),
                ("is_shape_output", c_int32), ("reserved_", c_int32)]


class BuildConfig(Structure):
    _fields_ = [("struct_size", c_uint32), ("device", c_uint32),
                ("nb_prefer", c_int32), ("reserved_", c_int32),
                ("prefer_types", c_void_p), ("prefer_impls", c_void_p),
                ("autotune", c_int32), ("precisions", c_uint32),
                ("no_fusion", c_int32), ("reserved2_", c_int32),
                ("passes", c_char_p), ("no_passes", c_char_p),
                ("timing_cache", c_char_p)]


class OnnxOptions(Structure):
    _fields_ = [("struct_size", c_uint32), ("reserved_", c_int32),
                ("shapes", c_char_p), ("min_shapes", c_char_p),
                ("opt_shapes", c_char_p), ("max_shapes", c_char_p),
                ("nb_inputs", c_int32), ("reserved2_", c_int32),
                ("input_names", c_void_p), ("input_descs", c_void_p),
                ("input_data", c_void_p)]


def _candidates() -> list[str]:
    out = []
    env = os.environ.get("MICA_LIBRARY")
    if env:
        out.append(env)
    try:
        from . import _config  # written by make install (--enable-python)
        out.append(os.path.join(_config.LIBDIR, "libmica.so"))
    except ImportError:
        pass
    found = ctypes.util.find_library("mica")
    if found:
        out.append(found)
    out.append("libmica.so")
    return out


def _load() -> ctypes.CDLL:
    errors = []
    for path in _candidates():
        try:
            return ctypes.CDLL(path)
        except OSError as e:
            errors.append(f"{path}: {e}")
    raise ImportError("mica: cannot load libmica (set MICA_LIBRARY to its "
                      "path, or install mica): " + "; ".join(errors))


lib = _load()

_P = c_void_p
_SIGS = {
    "mica_version": (c_char_p, []),
    "mica_status_name": (c_char_p, [c_int32]),
    "mica_context_create": (c_int32, [POINTER(_P)]),
    "mica_context_destroy": (None, [_P]),
    "mica_context_error": (c_char_p, [_P]),
    "mica_context_load_default_modules": (c_int32, [_P]),
    "mica_context_load_dir": (c_int32, [_P, c_char_p]),
    "mica_context_set_prefer": (c_int32, [_P, c_char_p]),
    "mica_manifest_load": (c_int32, [_P, c_char_p, POINTER(_P)]),
    "mica_manifest_load_text": (c_int32, [_P, c_char_p, c_char_p, c_size_t,
                                          POINTER(_P)]),
    "mica_manifest_destroy": (None, [_P]),
    "mica_manifest_network": (_P, [_P]),
    "mica_manifest_config": (POINTER(BuildConfig), [_P]),
    "mica_onnx_available": (c_int32, []),
    "mica_onnx_file_probe": (c_int32, [c_char_p]),
    "mica_onnx_import": (c_int32, [_P, c_char_p, POINTER(OnnxOptions),
                                   POINTER(_P)]),
    "mica_onnx_manifest": (c_int32, [_P, POINTER(_P)]),
    "mica_onnx_destroy": (None, [_P]),
    "mica_engine_build": (c_int32, [_P, POINTER(BuildConfig), POINTER(_P)]),
    "mica_engine_destroy": (None, [_P]),
    "mica_engine_device": (c_uint32, [_P]),
    "mica_engine_save": (c_int32, [_P, c_char_p]),
    "mica_engine_load": (c_int32, [_P, c_char_p, POINTER(_P)]),
    "mica_engine_file_probe": (c_int32, [c_char_p]),
    "mica_engine_nb_inputs": (c_int32, [_P]),
    "mica_engine_input": (c_int32, [_P, c_int32]),
    "mica_engine_nb_outputs": (c_int32, [_P]),
    "mica_engine_output": (c_int32, [_P, c_int32]),
    "mica_engine_tensor": (c_int32, [_P, c_int32, POINTER(TensorInfo)]),
    "mica_exec_create": (c_int32, [_P, POINTER(_P)]),
    "mica_exec_destroy": (None, [_P]),
    "mica_exec_set_input": (c_int32, [_P, c_char_p, POINTER(Dims), _P]),
    "mica_exec_bind": (c_int32, [_P, c_char_p, POINTER(Dims), _P]),
    "mica_exec_set_stream": (c_int32, [_P, _P]),
    "mica_exec_set_threads": (c_int32, [_P, c_int32]),
    "mica_exec_set_profile": (c_int32, [_P, c_int32]),
    "mica_exec_run": (c_int32, [_P]),
    "mica_exec_tensor_dims": (c_int32, [_P, c_char_p, POINTER(Dims)]),
    "mica_exec_get_output": (c_int32, [_P, c_char_p, POINTER(TensorDesc),
                                       POINTER(_P)]),
}
for _name, (_res, _args) in _SIGS.items():
    _f = getattr(lib, _name)
    _f.restype = _res
    _f.argtypes = _args
