"""kazoo's own Lock when its holder is cut off past the session timeout.

Role `hold`: take `client.Lock(PATH)`, print ACQUIRED, then every
100 ms print what the lock object believes (`BELIEF True|False`: its
`is_acquired`). Role `take`: take the same lock, print ACQUIRED, hold it for
a second, release it, print RELEASED. Both print every connection state
kazoo reports to its listeners (`STATE SUSPENDED|LOST|CONNECTED`).

Every line starts with the wall time (seconds since the epoch), so the
processes' lines and the validator's own events share one clock. The
validator cuts the holder off — stops its process (SIGSTOP) or freezes the
proxy it connects through — until the other client holds the lock.

usage: python3 kazoo_pause.py HOST:PORT hold|take SESSION_TIMEOUT_S PATH
"""

import sys
import threading
import time

from kazoo.client import KazooClient

printing = threading.Lock()


def say(what):
    with printing:
        print("%.6f %s" % (time.time(), what), flush=True)


def main():
    endpoint, role, timeout, path = sys.argv[1], sys.argv[2], float(sys.argv[3]), sys.argv[4]
    client = KazooClient(hosts=endpoint, timeout=timeout)
    client.add_listener(lambda state: say("STATE %s" % state))
    client.start()
    lock = client.Lock(path, role)
    lock.acquire()
    say("ACQUIRED")
    if role == "take":
        time.sleep(1.0)
        lock.release()
        say("RELEASED")
        client.stop()
        return
    while True:
        say("BELIEF %s" % lock.is_acquired)
        time.sleep(0.1)


if __name__ == "__main__":
    main()
