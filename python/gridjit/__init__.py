"""gridjit: compile GPU-style kernels written in KIR and launch them on the
host CPU or an NVIDIA GPU, from Python.

    import numpy as np
    import gridjit

    mod = gridjit.compile('''
    kernel saxpy(n: i32, a: f32, x: ptr<f32>, y: ptr<f32>) {
      let i: i32 = block_idx.x * block_dim.x + thread_idx.x;
      if i < n { y[i] = a * x[i] + y[i]; }
    }''', target="host")
    x = np.arange(1000, dtype=np.float32)
    y = np.ones(1000, dtype=np.float32)
    mod.saxpy[4, 256](1000, 2.0, x, y)     # y = 2*x + y

The package is a thin layer over gridjit's C API (libgridjit.so, through
ctypes): every compile, launch, copy and wait runs without the GIL. See
docs/Python.md.
"""

from . import _capi
from ._cancel import CancelToken
from ._compiler import Compiler, Module, compile, compile_async, default_compiler
from ._errors import (
    ArgumentError,
    CompileError,
    ConfigurationError,
    DivergenceError,
    DriverError,
    Error,
    FileSystemError,
    InvalidArgumentError,
    KernelCancelledError,
    KernelCheckError,
    KernelFaultError,
    KernelTimeoutError,
    LaunchError,
    NoDeviceError,
    NotFoundError,
)
from ._kernel import Kernel, Param
from ._runtime import (
    DEFAULT_TARGET,
    DeviceArray,
    Runtime,
    cuda_device_count,
    device_array,
    device_array_like,
    runtime,
    to_device,
)
from ._types import ScalarType, bf16, bool_, f16, f32, f64, i8, i16, i32, i64, u8, u16, u32, u64

__version__ = _capi.gj_version_string().decode()
#: The libgridjit.so this package loaded.
library_path = _capi.library_path

__all__ = [
    "DEFAULT_TARGET",
    "ArgumentError",
    "CancelToken",
    "CompileError",
    "Compiler",
    "ConfigurationError",
    "DeviceArray",
    "DivergenceError",
    "DriverError",
    "Error",
    "FileSystemError",
    "InvalidArgumentError",
    "Kernel",
    "KernelCancelledError",
    "KernelCheckError",
    "KernelFaultError",
    "KernelTimeoutError",
    "LaunchError",
    "Module",
    "NoDeviceError",
    "NotFoundError",
    "Param",
    "Runtime",
    "ScalarType",
    "bool_",
    "compile",
    "compile_async",
    "cuda_device_count",
    "default_compiler",
    "device_array",
    "device_array_like",
    "f32",
    "f64",
    "f16",
    "bf16",
    "i8",
    "i16",
    "i32",
    "i64",
    "runtime",
    "to_device",
    "u8",
    "u16",
    "u32",
    "u64",
]
