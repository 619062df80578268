"""kazoo's own Semaphore (kazoo 2.x), paced so that every release meets the
waiter it should, measured.

N clients, each its own KazooClient (its own session), take
`client.Semaphore("/sem", max_leases=K)`. They start one at a time, in
index order, each once the last one holds a lease or waits: for a lease
(the mutex's holder, in the semaphore's wait) or for the mutex (in its
Lock's wait). Then the holders release one at a time, in the order they
acquired, each once the last release has settled: the waiter, if one
waited, holds, and the mutex's next holder, if anyone waited for the
mutex, waits for a lease. Where a client waits is read off its wake
events' `wait()` — the Semaphore's, and its mutex Lock's
(`KazooClient.Lock` is swapped for a subclass) — which kazoo calls only
once its requests are answered. The model runs the same pacing
(`validate/src/paced.rs`). Requests are counted as `kazoo_herd.py` says;
notifications only at the wire. Prints one JSON object, its
`acquisition_sequence` the clients' indices in the order they acquired.

usage: python3 kazoo_semaphore.py HOST:PORT N K
"""

import sys
import threading
from functools import partial

from kazoo.client import KazooClient
from kazoo.recipe.lock import Lock, Semaphore

from kazoo_herd import Tally, wind_up

# How long a step may take to settle before the run is given up.
SETTLE_S = 30.0


class Pace:
    """Where the clients are: who acquired, in order; the waits entered,
    for a lease and for the mutex; the releases done."""

    def __init__(self):
        self.cond = threading.Condition()
        self.acquired = []
        self.waits = {"lease": 0, "mutex": 0}
        self.released = 0

    def waited(self, kind):
        with self.cond:
            self.waits[kind] += 1
            self.cond.notify_all()

    def holds(self, i):
        with self.cond:
            self.acquired.append(i)
            self.cond.notify_all()

    def released_one(self):
        with self.cond:
            self.released += 1
            self.cond.notify_all()

    def until(self, settled, what):
        with self.cond:
            if not self.cond.wait_for(lambda: settled(self), SETTLE_S):
                sys.exit(
                    "kazoo_semaphore.py: not settled within %s s: %s "
                    "(acquired %s, waits %s, released %d)"
                    % (SETTLE_S, what, self.acquired, self.waits, self.released)
                )


def paced(base, pace, kind):
    """`base` (a kazoo recipe class) whose wake event's `wait()` notes a
    wait of `kind` first."""

    class Paced(base):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            wait = self.wake_event.wait

            def noted(timeout=None):
                pace.waited(kind)
                return wait(timeout)

            self.wake_event.wait = noted

    return Paced


def main():
    endpoint, n, k = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    tally = Tally()
    pace = Pace()
    semaphore = paced(Semaphore, pace, "lease")
    clients = []
    for _ in range(n):
        c = KazooClient(hosts=endpoint, timeout=10.0)
        c.start()
        tally.counting(c)
        # The semaphore takes its mutex with `client.Lock`.
        c.Lock = partial(paced(Lock, pace, "mutex"), c)
        clients.append(c)
    turns = [threading.Event() for _ in range(n)]

    def run(i, c):
        sem = semaphore(c, "/sem", max_leases=k)
        sem.acquire()
        pace.holds(i)
        turns[i].wait()
        sem.release()
        pace.released_one()

    threads = []
    for i, c in enumerate(clients):
        t = threading.Thread(target=run, args=(i, c), daemon=True)
        t.start()
        threads.append(t)
        # The first k take a lease, the next waits for one holding the
        # mutex, the rest wait for the mutex.
        if i < k:
            pace.until(lambda p: len(p.acquired) == i + 1, "client %d holds" % i)
        elif i == k:
            pace.until(lambda p: p.waits["lease"] == 1, "client %d waits" % i)
        else:
            pace.until(lambda p: p.waits["mutex"] == i - k, "client %d queues" % i)
    for j in range(n):
        turns[pace.acquired[j]].set()
        # The waiter holds; the mutex's next holder waits for a lease.
        acquired = min(n, k + j + 1)
        lease_waits = max(0, min(n - k, j + 2))
        pace.until(
            lambda p: p.released == j + 1
            and len(p.acquired) == acquired
            and p.waits["lease"] == lease_waits,
            "release %d settles" % j,
        )
    wind_up(threads, clients)
    tally.report(n, pace.acquired, watched=False)


if __name__ == "__main__":
    main()
