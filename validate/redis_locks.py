"""Real Redis lock libraries in the baseline herd, counted at the wire.

redis-py 5.x's own `redis.lock.Lock(timeout=10, sleep=0.1)` on one master,
or pottery 3.x's `Redlock(key=..., masters=..., auto_release_time=10)` on
several independent masters: N clients (threads, each with its own `Redis`
client per master, so its own connections) take the lock at once, hold it
for HOLD_MS, release it; each acquires once.

Every master is emptied first (FLUSHALL, SCRIPT FLUSH: the libraries' first
EVALSHA then meets NOSCRIPT, as on a fresh server) and watched by MONITOR on
a connection of its own while the herd runs; the watch ends at a marker
command (ECHO) sent on yet another connection, so the count holds exactly
the herd's commands. Lines from inside scripts (`[0 lua]`) are counted
apart. The libraries' own tries are counted by wrapping the method that
makes one (`Lock.do_acquire`, pottery's `Redlock._acquire_masters`).

Prints one JSON object: acquisitions, attempts (tries), release errors,
commands by name per master and in all (`SCRIPT LOAD` and `CLIENT SETINFO`
by subcommand), the scripts' own calls, wall seconds.

usage: python3 redis_locks.py redis-py HOST:PORT N HOLD_MS
       python3 redis_locks.py pottery HOST:PORT[,HOST:PORT...] N HOLD_MS
"""

import json
import re
import socket
import sys
import threading
import time
import uuid
from importlib.metadata import version

from redis import Redis
from redis.exceptions import LockError

LINE = re.compile(r"^(\d+\.\d+) \[(\d+) ([^\]]+)\] (.*)$")
ARG = re.compile(r'"((?:[^"\\]|\\.)*)"')
# Commands named with their subcommand.
WITH_SUBCOMMAND = {"SCRIPT", "CLIENT", "CONFIG"}


def endpoint(text):
    host, port = text.rsplit(":", 1)
    return host, int(port)


def resp(*args):
    out = b"*%d\r\n" % len(args)
    for a in args:
        a = a.encode() if isinstance(a, str) else a
        out += b"$%d\r\n%s\r\n" % (len(a), a)
    return out


def command(host, port, *args):
    """One command on a connection of its own; its reply's first line."""
    with socket.create_connection((host, port)) as s:
        s.sendall(resp(*args))
        return s.makefile("rb").readline()


class Monitor:
    """MONITOR on one master, read by a thread of its own."""

    def __init__(self, host, port):
        self.host, self.port = host, port
        self.sock = socket.create_connection((host, port))
        self.sock.sendall(resp("MONITOR"))
        self.file = self.sock.makefile("rb")
        first = self.file.readline()
        if not first.startswith(b"+OK"):
            raise RuntimeError("MONITOR: %r" % first)
        self.lines = []
        self.thread = threading.Thread(target=self.read, daemon=True)
        self.thread.start()

    def read(self):
        try:
            for raw in self.file:
                line = raw.decode("utf-8", "replace").rstrip("\r\n")
                if line.startswith("+"):
                    self.lines.append(line[1:])
        except (OSError, ValueError):
            pass

    def stop(self):
        """The lines before a marker sent now on another connection."""
        marker = "lockstep-monitor-end-" + uuid.uuid4().hex
        command(self.host, self.port, "ECHO", marker)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            for i, line in enumerate(list(self.lines)):
                if marker in line:
                    self.sock.close()
                    return self.lines[:i]
            time.sleep(0.01)
        raise RuntimeError("MONITOR never showed its end marker")


def count(lines):
    """Commands by name, and the scripts' own calls by name."""
    commands, lua = {}, {}
    for line in lines:
        m = LINE.match(line)
        if not m:
            continue
        who, rest = m.group(3), m.group(4)
        args = ARG.findall(rest)
        if not args:
            continue
        name = args[0].upper()
        if name in WITH_SUBCOMMAND and len(args) > 1:
            name += " " + args[1].upper()
        into = lua if who == "lua" else commands
        into[name] = into.get(name, 0) + 1
    return commands, lua


class Tally:
    def __init__(self):
        self.lock = threading.Lock()
        self.acquisitions = 0
        self.attempts = 0
        self.release_errors = []

    def add(self, what, by=1):
        with self.lock:
            setattr(self, what, getattr(self, what) + by)


def counting_attempts(cls, name, tally):
    """Wraps `cls.name`, the method that makes one try, to count tries."""
    original = getattr(cls, name)

    def wrapped(*args, **kwargs):
        tally.add("attempts")
        return original(*args, **kwargs)

    setattr(cls, name, wrapped)


def herd(masters, n, hold_ms, make_lock, tally):
    """N clients at once; returns when they are done."""
    go = threading.Barrier(n)

    def run(i):
        lk = make_lock(i)
        go.wait()
        lk.acquire()
        tally.add("acquisitions")
        time.sleep(hold_ms / 1000.0)
        try:
            lk.release()
        except LockError as e:  # redis-py
            with tally.lock:
                tally.release_errors.append(type(e).__name__)
        except Exception as e:  # pottery's ReleaseUnlockedLock
            with tally.lock:
                tally.release_errors.append(type(e).__name__)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


def main():
    library, where, n, hold_ms = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    masters = [endpoint(e) for e in where.split(",")]
    for host, port in masters:
        command(host, port, "FLUSHALL")
        command(host, port, "SCRIPT", "FLUSH")
    tally = Tally()
    if library == "redis-py":
        from redis.lock import Lock

        (host, port), = masters
        counting_attempts(Lock, "do_acquire", tally)
        clients = [Redis(host=host, port=port) for _ in range(n)]

        def make_lock(i):
            return Lock(clients[i], "lock", timeout=10, sleep=0.1)

        name = "redis-py %s" % version("redis")
    elif library == "pottery":
        from pottery import Redlock

        # `acquire` calls `self.__acquire_masters`, the class's
        # `_Redlock__acquire_masters`: one try on every master.
        counting_attempts(Redlock, "_Redlock__acquire_masters", tally)
        clients = [[Redis(host=h, port=p) for h, p in masters] for _ in range(n)]

        def make_lock(i):
            return Redlock(key="lock", masters=set(clients[i]), auto_release_time=10)

        name = "pottery %s" % version("pottery")
    else:
        sys.exit("unknown library %r" % library)
    # Connections opened before the herd (their set-up is counted apart).
    flat = clients if library == "redis-py" else [c for cs in clients for c in cs]
    before = threading.active_count()
    monitors = [Monitor(h, p) for h, p in masters]
    started = time.monotonic()
    for c in flat:
        c.ping()
    herd(masters, n, hold_ms, make_lock, tally)
    # pottery leaves its calls past a majority running in background
    # threads: let them finish before the count ends.
    deadline = time.monotonic() + 10
    while threading.active_count() > before + len(monitors) and time.monotonic() < deadline:
        time.sleep(0.01)
    wall = time.monotonic() - started
    per_master, lua_per_master = [], []
    for m in monitors:
        commands, lua = count(m.stop())
        per_master.append(commands)
        lua_per_master.append(lua)
    total, lua_total = {}, {}
    for commands, into in ((per_master, total), (lua_per_master, lua_total)):
        for counts in commands:
            for k, v in counts.items():
                into[k] = into.get(k, 0) + v
    for c in flat:
        c.close()
    print(json.dumps({
        "library": name,
        "clients": n,
        "masters": len(masters),
        "hold_ms": hold_ms,
        "acquisitions": tally.acquisitions,
        "attempts": tally.attempts,
        "release_errors": tally.release_errors,
        "commands": total,
        "per_master": per_master,
        "lua": lua_total,
        "lua_per_master": lua_per_master,
        "wall_seconds": wall,
    }))


if __name__ == "__main__":
    main()
