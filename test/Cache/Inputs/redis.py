#!/usr/bin/env python3
"""Starts and stops a private redis-server for a lit test.

Usage: redis.py start DIR    starts redis-server on the unix socket
                             DIR/redis.sock (no TCP port, no persistence)
                             and returns once it answers PING; it is
                             killed after 120 s at the latest, so a failed
                             test cannot leave it running
       redis.py stop DIR     stops it
       redis.py cmd DIR ARGS sends one command, prints the reply's type

lit.cfg.py adds the feature "redis" where redis-server is installed.
Standard library only.
"""
import os
import signal
import socket
import subprocess
import sys
import time


def command(sock_path, args):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(5)
    s.connect(sock_path)
    req = b"*%d\r\n" % len(args)
    for a in args:
        a = a.encode()
        req += b"$%d\r\n%s\r\n" % (len(a), a)
    s.sendall(req)
    reply = s.recv(65536)
    s.close()
    return reply


def main():
    action, d = sys.argv[1], sys.argv[2]
    sock = os.path.join(d, "redis.sock")
    pid_file = os.path.join(d, "redis.pid")
    if action == "start":
        os.makedirs(d, exist_ok=True)
        log = open(os.path.join(d, "redis.log"), "ab")
        p = subprocess.Popen(["timeout", "120", "redis-server", "--port", "0", "--unixsocket", sock,
                              "--save", "", "--appendonly", "no", "--dir", d],
                             stdout=log, stderr=log, start_new_session=True)
        with open(pid_file, "w") as f:
            f.write(str(p.pid))
        for _ in range(2000):
            try:
                if command(sock, ["PING"]).startswith(b"+PONG"):
                    return 0
            except OSError:
                pass
            time.sleep(0.01)
        print("redis.py: redis-server did not start", file=sys.stderr)
        return 1
    if action == "stop":
        try:
            pid = int(open(pid_file).read())
            os.kill(pid, signal.SIGTERM)
        except (OSError, ValueError):
            pass
        # Returns once the server no longer answers.
        for _ in range(1000):
            try:
                command(sock, ["PING"])
            except OSError:
                return 0
            time.sleep(0.01)
        print("redis.py: redis-server did not stop", file=sys.stderr)
        return 1
    if action == "cmd":
        print(command(sock, sys.argv[3:]).split(b"\r\n")[0].decode())
        return 0
    print("redis.py: unknown action " + action, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
