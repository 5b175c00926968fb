"""Runs a command with its standard output on a terminal (a pseudo-terminal).

Usage: on_tty.py COMMAND [ARG...]

Standard error goes to a pipe. Prints what came out: "status N", then
"tty: K bytes" and "tty text: ..." (what the terminal received, with
"\\r\\n" as the terminal gives it turned back into "\\n"), then "stderr:"
and the command's standard error.
"""

import errno
import os
import pty
import subprocess
import sys


def main():
    master, slave = pty.openpty()
    proc = subprocess.Popen(sys.argv[1:], stdout=slave, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
    os.close(slave)
    got = b""
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError as e:
            if e.errno == errno.EIO:  # every writer has closed the terminal
                break
            raise
        if not chunk:
            break
        got += chunk
    err = proc.stderr.read()
    status = proc.wait()
    os.close(master)
    print("status %d" % status)
    print("tty: %d bytes" % len(got))
    print("tty text: " + got.replace(b"\r\n", b"\n").decode("utf-8", "replace").replace("\n", "|"))
    print("stderr:")
    sys.stdout.write(err.decode("utf-8", "replace"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
