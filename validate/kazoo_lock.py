"""kazoo's own Lock (kazoo 2.x) in the baseline herd scenario, measured.

N clients, each its own KazooClient (its own session), take
`client.Lock("/lock")` at once, hold it for HOLD_MS, release it. Requests are
counted where kazoo hands them to its connection (`KazooClient._call`: one
call is one request on the wire), by kind and whether they set a watch;
notifications are counted where they arrive (the lock's predecessor watch,
the only watch kazoo's Lock sets). Prints one JSON object. The validator
also counts every request and notification at the wire (it points HOST:PORT
at its ZooKeeper proxy).

usage: python3 kazoo_lock.py HOST:PORT N HOLD_MS
"""

import json
import sys
import threading
import time

from kazoo.client import KazooClient
from kazoo.recipe.lock import Lock

# Names as lockstep's RequestKind spells them.
KINDS = {
    "Create": "create",
    "Create2": "create",
    "Delete": "delete",
    "Exists": "exists",
    "GetData": "get_data",
    "GetChildren": "get_children",
    "GetChildren2": "get_children",
}


def main():
    endpoint, n, hold_ms = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    start = time.monotonic()
    now = lambda: time.monotonic() - start
    lock = threading.Lock()
    requests = {}
    notifications = []
    releases = []
    acquisitions = []

    class CountingLock(Lock):
        def _watch_predecessor(self, event):
            with lock:
                notifications.append(now())
            super()._watch_predecessor(event)

    def counting(client):
        call = client._call

        def counted(request, async_object):
            name = KINDS.get(type(request).__name__)
            if name is not None:
                if getattr(request, "watcher", None) is not None:
                    name += "_watch"
                with lock:
                    requests[name] = requests.get(name, 0) + 1
            return call(request, async_object)

        client._call = counted

    clients = []
    for _ in range(n):
        c = KazooClient(hosts=endpoint, timeout=10.0)
        c.start()
        counting(c)
        clients.append(c)
    # Every client at the line, then all at once.
    go = threading.Barrier(n)

    def run(c):
        lk = CountingLock(c, "/lock")
        go.wait()
        lk.acquire()
        with lock:
            acquisitions.append(int(lk.node[-10:]))
        time.sleep(hold_ms / 1000.0)
        with lock:
            releases.append(now())
        lk.release()

    threads = [threading.Thread(target=run, args=(c,)) for c in clients]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    time.sleep(0.3)  # the last notifications
    for c in clients:
        c.stop()
        c.close()
    releases.sort()
    per = [0] * max(len(releases), n)
    before = 0
    for t in notifications:
        k = sum(1 for r in releases if r <= t) - 1
        if k >= 0:
            per[k] += 1
        else:
            before += 1
    print(
        json.dumps(
            {
                "requests": requests,
                "notifications_per_release": per,
                "notifications_before_first_release": before,
                "acquisition_sequence": acquisitions,
                "wall_seconds": now(),
            }
        )
    )


if __name__ == "__main__":
    main()
