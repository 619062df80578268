"""kazoo's own ReadLock / WriteLock (kazoo 2.x) in the shared lock's
baseline herd, measured.

N clients, each its own KazooClient (its own session): the first W take
`client.WriteLock("/lock")`, the others `client.ReadLock("/lock")`, each
holds for HOLD_MS and releases. The baseline has every client's node made
in client order before anyone releases (lockstep's `sim::herd::baseline`:
all at once, in order), so the clients start one after another, each once
the previous one's node is listed (by an observer session at OBSERVER,
which bypasses the counting proxy), and the hold is long enough for the
last to start first. Counted as `kazoo_herd.py` says. Prints one JSON
object.

usage: python3 kazoo_rwlock.py HOST:PORT OBSERVER N W HOLD_MS
"""

import sys
import threading
import time

from kazoo.client import KazooClient
from kazoo.recipe.lock import ReadLock, WriteLock

from kazoo_herd import Tally, wind_up


def main():
    endpoint, observer = sys.argv[1], sys.argv[2]
    n, writers, hold_ms = int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
    tally = Tally()
    look = KazooClient(hosts=observer, timeout=10.0)
    look.start()
    clients = []
    for _ in range(n):
        c = KazooClient(hosts=endpoint, timeout=10.0)
        c.start()
        tally.counting(c)
        clients.append(c)

    def run(i, c):
        kind = WriteLock if i < writers else ReadLock
        lk = tally.watching(kind)(c, "/lock")
        lk.acquire()
        tally.acquired(lk.node)
        time.sleep(hold_ms / 1000.0)
        tally.released()
        lk.release()

    threads = []
    for i, c in enumerate(clients):
        t = threading.Thread(target=run, args=(i, c))
        t.start()
        threads.append(t)
        # The next starts once this one's node is there.
        while len(look.get_children("/lock")) < i + 1:
            time.sleep(0.001)
    wind_up(threads, clients + [look])
    # Readers share the lock and take it in any order.
    tally.report(n, sorted(tally.acquisitions))


if __name__ == "__main__":
    main()
