"""kazoo's own ReadLock / WriteLock (kazoo 2.x) in the shared lock's
baseline herd, measured.

N clients, each its own KazooClient (its own session): the first W take
`client.WriteLock("/lock")`, the others `client.ReadLock("/lock")`, each
holds for HOLD_MS and releases. The baseline has every client's node made
in client order before anyone releases (lockstep's `sim::herd::baseline`:
all at once, in order), so the clients start one after another, each once
the previous one's node is listed (by an observer session at OBSERVER,
which bypasses the counting proxy), and the hold is long enough for the
last to start first. Requests are counted where kazoo hands them to its
connection (`KazooClient._call`), notifications where they arrive (the
predecessor watch, the only watch the locks set). Prints one JSON object.

usage: python3 kazoo_rwlock.py HOST:PORT OBSERVER N W HOLD_MS
"""

import json
import sys
import threading
import time

from kazoo.client import KazooClient
from kazoo.recipe.lock import ReadLock, WriteLock

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
    endpoint, observer = sys.argv[1], sys.argv[2]
    n, writers, hold_ms = int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
    start = time.monotonic()
    now = lambda: time.monotonic() - start
    lock = threading.Lock()
    requests = {}
    notifications = []
    releases = []
    acquisitions = []

    def counting_kind(base):
        class Counting(base):
            def _watch_predecessor(self, event):
                with lock:
                    notifications.append(now())
                super()._watch_predecessor(event)

        return Counting

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

    look = KazooClient(hosts=observer, timeout=10.0)
    look.start()
    clients = []
    for _ in range(n):
        c = KazooClient(hosts=endpoint, timeout=10.0)
        c.start()
        counting(c)
        clients.append(c)

    def run(i, c):
        kind = WriteLock if i < writers else ReadLock
        lk = counting_kind(kind)(c, "/lock")
        lk.acquire()
        with lock:
            acquisitions.append(int(lk.node[-10:]))
        time.sleep(hold_ms / 1000.0)
        with lock:
            releases.append(now())
        lk.release()

    threads = []
    for i, c in enumerate(clients):
        t = threading.Thread(target=run, args=(i, c))
        t.start()
        threads.append(t)
        # The next starts once this one's node is there.
        while len(look.get_children("/lock")) < i + 1:
            time.sleep(0.001)
    for t in threads:
        t.join()
    time.sleep(0.3)  # the last notifications
    for c in clients + [look]:
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
                "acquisition_sequence": sorted(acquisitions),
                "wall_seconds": now(),
            }
        )
    )


if __name__ == "__main__":
    main()
