"""gridjit's exceptions.

Every failure of the library arrives as an Error subclass whose message is
gridjit's own, in full (for a compile error the located diagnostic:
``NAME:LINE:COL: error: ...`` with the source line and a caret).
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
    """The KIR source did not parse or verify, or code generation failed."""


class LaunchError(Error):
    """A launch was refused (configuration, arguments, device limits) or
    failed while running."""


class ArgumentError(LaunchError, TypeError, ValueError):
    """A launch argument does not fit its kernel parameter (wrong kind,
    type, range, dtype, memory), found before anything is launched. It is a
    LaunchError, and also a TypeError and ValueError for code that catches
    those."""


class NotFoundError(Error, LookupError):
    """No such kernel, target or device."""


class NoDeviceError(Error):
    """The CUDA runtime cannot start: no driver library, or no device."""


class InvalidArgumentError(Error, ValueError):
    """An invalid value passed to the library (an unknown option, a size out
    of range, a buffer of another runtime, ...)."""


_BY_STATUS = {
    1: ("GJ_ERROR_INVALID_ARGUMENT", InvalidArgumentError),
    2: ("GJ_ERROR_COMPILE", CompileError),
    3: ("GJ_ERROR_NOT_FOUND", NotFoundError),
    4: ("GJ_ERROR_LAUNCH", LaunchError),
    5: ("GJ_ERROR_NOT_READY", Error),
    6: ("GJ_ERROR_NO_DEVICE", NoDeviceError),
    7: ("GJ_ERROR_FAILED", Error),
}


def _error_for_status(status, message, what=None):
    name, cls = _BY_STATUS.get(status, ("GJ_STATUS_%d" % status, Error))
    if not message:
        message = "%s failed (%s)" % (what or "a gridjit call", name)
    return cls(message, name)


for _cls in (Error, CompileError, LaunchError, ArgumentError, NotFoundError, NoDeviceError, InvalidArgumentError):
    _cls.__module__ = "gridjit"
del _cls
