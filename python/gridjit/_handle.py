"""Ownership of C API handles."""

import atexit

_exiting = False


@atexit.register
def _mark_exit():
    # At interpreter exit the process is going away: objects still alive
    # then are left to the operating system instead of being destroyed in
    # whatever order teardown reaches them (another thread may still be
    # inside a call that uses them).
    global _exiting
    _exiting = True


class Handle:
    """Owns one C API handle: ``destroy(value)`` runs when the last reference
    goes. ``parent`` (another Handle, or any object) is kept alive as long
    as this one, so that a child (a buffer, a loaded module) is always
    destroyed before its parent (the runtime), whatever order the garbage
    collector finds them in. Handles only point at parents: they never
    form a cycle."""

    __slots__ = ("value", "_destroy", "parent", "__weakref__")

    def __init__(self, value, destroy, parent=None):
        self.value = value
        self._destroy = destroy
        self.parent = parent

    @property
    def _as_parameter_(self):
        return self.value

    def close(self):
        value, self.value = self.value, None
        if value:
            self._destroy(value)

    def __del__(self):
        if self.value and not _exiting:
            self._destroy(self.value)
        self.value = None
