"""Timeouts, cancellation and Ctrl-C for launches (docs/Python.md,
"Timeouts, cancellation and Ctrl-C").

A host launch stops between blocks when its timeout passes or its
CancelToken is cancelled (gj_launch_config's timeout_ms and cancel). Python
runs a SIGINT handler only when the main thread is between bytecodes, and
a launch is one long ctypes call: without help, Ctrl-C is seen when the
launch has finished. So a launch that can take long, made on the main
thread while Python's own SIGINT handler is installed, runs on a helper
thread while the main thread waits on a lock, which a signal interrupts:
the KeyboardInterrupt then cancels the launch's token, the main thread
waits for the blocks already running, and the KeyboardInterrupt goes on.
Every other launch calls gj_launch directly, as before (the fast path).
"""

import _thread
import math
import numbers
import signal
import threading
from ctypes import byref, c_void_p

from . import _capi
from ._errors import InvalidArgumentError
from ._handle import Handle

_allocate_lock = _thread.allocate_lock
_start_new_thread = _thread.start_new_thread
_get_ident = _thread.get_ident
_main_thread = threading.main_thread
_getsignal = signal.getsignal
_SIGINT = signal.SIGINT
_default_int_handler = signal.default_int_handler

# How often the main thread wakes while it waits for an interruptible
# launch. Python runs a signal's handler between bytecodes, and a signal
# that arrives after the last such point before a wait blocks does not
# interrupt the wait: an untimed wait would then miss a Ctrl-C for good
# (1 in about 250 runs of test_cancel.py's Ctrl-C test did). A timed wait sees it at
# the next wake.
_WAKE_SECONDS = 0.05

#: A launch can take long enough for Ctrl-C to matter, and take the
#: interruptible path, when its grid has more blocks than the runtime has
#: threads (a cancel stops it only between blocks) and at least this many
#: threads per runtime thread: a saxpy of that size took 4 ms on two
#: busy cores of the CI machine, against the helper thread's 25 to
#: 120 µs (a quiet or a busy machine). Smaller launches end before a
#: person's Ctrl-C matters. A launch given ``timeout=`` or ``cancel=``
#: takes it too. (docs/Python.md, "Timeouts, cancellation and Ctrl-C")
LONG_LAUNCH_THREADS_PER_WORKER = 1 << 22


class CancelToken:
    """Stops the host launches given it (``kernel[grid, block](...,
    cancel=token)``) from any thread: once ``cancel()`` is called, each
    such launch starts no more blocks, waits for the ones running and
    raises KernelCancelledError (what the kernel wrote until then stays
    written); a launch given a token that is already cancelled runs no
    block. A token stays cancelled: make a new one for the launches after.
    A CUDA launch refuses a token (a GPU kernel cannot be stopped once
    queued). Ctrl-C during a launch given a token cancels that token."""

    __slots__ = ("_handle", "__weakref__")

    def __init__(self):
        out = c_void_p()
        _capi.check(_capi.gj_cancel_token_create(byref(out)), "gj_cancel_token_create")
        self._handle = Handle(out.value, _capi.gj_cancel_token_destroy)

    def cancel(self):
        """Asks every launch given this token to stop. Thread-safe."""
        _capi.check(_capi.gj_cancel_token_cancel(self._handle), "gj_cancel_token_cancel")

    @property
    def cancelled(self):
        """Whether cancel() has been called."""
        return bool(_capi.gj_cancel_token_is_cancelled(self._handle))

    def __repr__(self):
        return "<gridjit.CancelToken%s>" % (" cancelled" if self.cancelled else "")


def timeout_ms(kernel, timeout):
    """gj_launch_config's timeout_ms for ``timeout=`` (seconds; None: 0, no
    timeout): rounded up to whole milliseconds, at least 1."""
    if timeout is None:
        return 0
    # Real numbers: int, float, NumPy's, Fraction; not bool, str, complex.
    if isinstance(timeout, bool) or not isinstance(timeout, numbers.Real):
        raise InvalidArgumentError(
            "gridjit: kernel '%s': timeout %r: expected a number of seconds or None" % (kernel.name, timeout)
        )
    timeout = float(timeout)
    if not timeout > 0 or math.isinf(timeout):
        raise InvalidArgumentError(
            "gridjit: kernel '%s': timeout %r: expected a positive, finite number of seconds (None: no timeout)"
            % (kernel.name, timeout)
        )
    ms = max(1, math.ceil(timeout * 1000))
    if ms >= 1 << 64:
        raise InvalidArgumentError(
            "gridjit: kernel '%s': timeout %r: at most 2**64-1 milliseconds" % (kernel.name, timeout)
        )
    return ms


def check_token(kernel, cancel):
    """\\p cancel, which must be a CancelToken."""
    if type(cancel) is not CancelToken:
        raise InvalidArgumentError(
            "gridjit: kernel '%s': cancel must be a gridjit.CancelToken, not %s" % (kernel.name, type(cancel).__name__)
        )
    return cancel


def interruptible_here():
    """Whether Ctrl-C can reach a launch made now: on the main thread (the
    one Python runs signal handlers on), with Python's own SIGINT handler
    (the one that raises KeyboardInterrupt; not SIG_IGN, not a handler of
    the application's)."""
    return _get_ident() == _main_thread().ident and _getsignal(_SIGINT) is _default_int_handler


def run_interruptibly(launch, config, stream, args, token):
    """``launch(config, stream, args)`` on a helper thread, the calling
    (main) thread waiting interruptibly. An exception raised in the wait (a
    KeyboardInterrupt) cancels \\p token (the one \\p config names), waits
    for the launch to stop, and goes on; the launch's own outcome is then
    dropped. Otherwise the launch's result or exception is this call's."""
    done = _allocate_lock()
    done.acquire()
    outcome = []
    started = []
    finished = []

    def helper():
        # Set before the launch starts: the main thread waits for a launch
        # only if it has started; one that starts after the main thread
        # cancelled the token runs no block.
        started.append(True)
        try:
            launch(config, stream, args)
        except BaseException as e:  # handed to the main thread
            outcome.append(e)
        finally:
            finished.append(True)  # before the release: a waiter checks it first
            done.release()

    try:
        _start_new_thread(helper, ())
        while not done.acquire(True, _WAKE_SECONDS):
            pass
    except BaseException:
        # Cancel first, then look whether the helper started: if it had not,
        # its launch starts with the token cancelled and runs nothing. A
        # second Ctrl-C meanwhile is the same request: keep waiting. (The
        # lock is taken only while `finished` is empty, so an interrupt
        # between taking it and leaving the loop cannot make it wait twice.)
        while True:
            try:
                token.cancel()
                while started and not finished:
                    done.acquire(True, _WAKE_SECONDS)
                break
            except KeyboardInterrupt:
                continue
        raise
    if outcome:
        e = outcome[0]
        outcome.clear()
        raise e
