"""Runs a command whose standard output is a pipe that is closed early.

Usage: closed_pipe.py (default|ignored) BYTES COMMAND [ARG...]

Reads BYTES bytes of the command's standard output, closes the pipe, and
waits. "default": SIGPIPE has its default action in the command (as from a
shell); "ignored": the command inherits SIGPIPE ignored (Python ignores it,
and restore_signals=False passes that on), so its writes fail with EPIPE.
Prints "status N", "read: TEXT" and "stderr:" followed by its standard error.
"""

import subprocess
import sys


def main():
    mode, count, command = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            restore_signals=(mode == "default"))
    got = proc.stdout.read(count)
    proc.stdout.close()
    err = proc.stderr.read()
    status = proc.wait()
    print("status %d" % status)
    print("read: " + got.decode("utf-8", "replace"))
    print("stderr:")
    sys.stdout.write(err.decode("utf-8", "replace"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
