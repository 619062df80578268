"""kazoo's own Lock (kazoo 2.x) in the baseline herd scenario, measured.

N clients, each its own KazooClient (its own session), take
`client.Lock("/lock")` at once, hold it for HOLD_MS, release it. Requests are
counted where kazoo hands them to its connection, notifications where they
arrive (the lock's predecessor watch, the only watch kazoo's Lock sets):
`kazoo_herd.py`. Prints one JSON object. The validator also counts every
request and notification at the wire (it points HOST:PORT at its ZooKeeper
proxy).

usage: python3 kazoo_lock.py HOST:PORT N HOLD_MS
"""

import sys
import threading
import time

from kazoo.client import KazooClient
from kazoo.recipe.lock import Lock

from kazoo_herd import Tally, wind_up


def main():
    endpoint, n, hold_ms = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    tally = Tally()
    clients = []
    for _ in range(n):
        c = KazooClient(hosts=endpoint, timeout=10.0)
        c.start()
        tally.counting(c)
        clients.append(c)
    # Every client at the line, then all at once.
    go = threading.Barrier(n)

    def run(c):
        lk = tally.watching(Lock)(c, "/lock")
        go.wait()
        lk.acquire()
        tally.acquired(lk.node)
        time.sleep(hold_ms / 1000.0)
        tally.released()
        lk.release()

    threads = [threading.Thread(target=run, args=(c,)) for c in clients]
    for t in threads:
        t.start()
    wind_up(threads, clients)
    tally.report(n, tally.acquisitions)


if __name__ == "__main__":
    main()
