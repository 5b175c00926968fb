"""gridjit's exceptions.

Every failure of the library arrives as an Error subclass whose message is
gridjit's own, in full (for a compile error the located diagnostic:
``NAME:LINE:COL: error: ...`` with the source line and a caret).

Each kind of error of the library (include/gridjit/Support/ErrorKinds.def,
one row per kind with its C status and its Python class) has its class
here; a failed C call's status is mapped to it by the status's name, once,
in _error_for_status. test/Python/test_errors.py reads the table and checks
every class, its bases and its status against it.
"""


class Error(Exception):
    """A gridjit failure. ``status`` is the C API's status name
    (``"GJ_ERROR_COMPILE"``, ...) or None for an error found in Python;
    ``message`` is gridjit's message."""

    def __init__(self, message, status=None):
        super().__init__(message)
        self.message = message
        self.status = status


class CompileError(Error):
    """The KIR source did not parse or verify, or the target cannot compile
    the module."""


class LaunchError(Error):
    """A launch was refused or failed: the base of ArgumentError,
    ConfigurationError, DivergenceError, KernelFaultError,
    KernelTimeoutError and KernelCancelledError."""


class ArgumentError(LaunchError, TypeError, ValueError):
    """A launch argument does not fit its kernel parameter (their number, a
    scalar's type or value, a pointer's element type or memory), found
    before anything is launched. It is a LaunchError, and also a TypeError
    and ValueError for code that catches those."""


class ConfigurationError(LaunchError, TypeError, ValueError):
    """A launch configuration the kernel or the device cannot run: grid and
    block sizes, shared memory, a cooperative grid that cannot be resident,
    a stream for a host kernel. Also a TypeError and ValueError."""


class DivergenceError(LaunchError):
    """A synchronisation point (sync_threads, a warp operation, grid_sync)
    reached by only part of its block, warp or grid, found while the launch
    ran; the message is located like a compile error's."""


class KernelFaultError(LaunchError):
    """The kernel accessed memory it may not: on the host a SIGSEGV or
    SIGBUS of its code, caught (Runtime(catch_faults=True), the default),
    on a GPU an illegal address as the driver reports it."""


class KernelTimeoutError(LaunchError):
    """A watchdog stopped the launch."""


class KernelCancelledError(LaunchError):
    """The launch's CancelToken was cancelled (``cancel=``), so it stopped
    between blocks: the blocks that had started finished, the others never
    ran. A launch that Ctrl-C stopped raises KeyboardInterrupt instead
    (docs/Python.md, "Timeouts, cancellation and Ctrl-C")."""


class KernelCheckError(LaunchError):
    """A checked launch (``compile(..., check=True)``, docs/Check.md) found
    what the kernel must not do: an access out of its buffer, a data race,
    a read of uninitialised shared memory, an operation CUDA leaves
    undefined, or a size a GPU could not run. The message has each finding
    like a compile error: position, source line, caret, then the threads,
    blocks and memory involved."""


class NotFoundError(Error, LookupError):
    """No such kernel, target or device."""


class NoDeviceError(Error):
    """The CUDA runtime cannot start: no driver library, or no device."""


class InvalidArgumentError(Error, ValueError):
    """An invalid value passed to the library (an unknown option, a size out
    of range, a buffer of another runtime, ...)."""


class DriverError(Error):
    """A CUDA driver call failed; the message names the call and the
    driver's error."""


class FileSystemError(Error):
    """A file, directory or cache that cannot be read or written."""


# The C API's status names -> the exception of their kind (ErrorKinds.def),
# and the two statuses that are no kind of error: GJ_ERROR_LAUNCH (what API
# version 1 returned for every failed launch) and GJ_ERROR_NOT_READY.
_BY_STATUS_NAME = {
    "GJ_ERROR_INVALID_ARGUMENT": InvalidArgumentError,
    "GJ_ERROR_COMPILE": CompileError,
    "GJ_ERROR_NOT_FOUND": NotFoundError,
    "GJ_ERROR_NO_DEVICE": NoDeviceError,
    "GJ_ERROR_FAILED": Error,
    "GJ_ERROR_ARGUMENT": ArgumentError,
    "GJ_ERROR_CONFIGURATION": ConfigurationError,
    "GJ_ERROR_DIVERGENCE": DivergenceError,
    "GJ_ERROR_FAULT": KernelFaultError,
    "GJ_ERROR_TIMEOUT": KernelTimeoutError,
    "GJ_ERROR_DRIVER": DriverError,
    "GJ_ERROR_IO": FileSystemError,
    "GJ_ERROR_CANCELLED": KernelCancelledError,
    "GJ_ERROR_CHECK": KernelCheckError,
    "GJ_ERROR_LAUNCH": LaunchError,
    "GJ_ERROR_NOT_READY": Error,
}


def _error_for_status(name, message, what=None):
    """The exception for a failed call whose status is called \\p name
    (gj_status_name)."""
    cls = _BY_STATUS_NAME.get(name, Error)
    if not message:
        message = "%s failed (%s)" % (what or "a gridjit call", name)
    return cls(message, name)


ALL = (
    Error,
    CompileError,
    LaunchError,
    ArgumentError,
    ConfigurationError,
    DivergenceError,
    KernelFaultError,
    KernelTimeoutError,
    KernelCancelledError,
    KernelCheckError,
    NotFoundError,
    NoDeviceError,
    InvalidArgumentError,
    DriverError,
    FileSystemError,
)

for _cls in ALL:
    _cls.__module__ = "gridjit"
del _cls
