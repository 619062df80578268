"""What kazoo_lock.py, kazoo_rwlock.py and kazoo_semaphore.py share: a
herd's tally — requests counted where kazoo hands them to its connection
(`KazooClient._call`: one call is one request on the wire), by kind as
lockstep's RequestKind spells them and whether they set a watch;
notifications where the lock's predecessor watch hears them; releases and
acquisitions — and the JSON object the validator reads.
"""

import json
import threading
import time

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


def wind_up(threads, clients):
    """Waits for the clients' threads, lets the last notifications come,
    and closes the clients' sessions."""
    for t in threads:
        t.join()
    time.sleep(0.3)
    for c in clients:
        c.stop()
        c.close()


class Tally:
    def __init__(self):
        self.start = time.monotonic()
        self.lock = threading.Lock()
        self.requests = {}
        self.notifications = []
        self.releases = []
        self.acquisitions = []

    def now(self):
        return time.monotonic() - self.start

    def counting(self, client):
        """Counts every request `client` sends."""
        call = client._call

        def counted(request, async_object):
            name = KINDS.get(type(request).__name__)
            if name is not None:
                if getattr(request, "watcher", None) is not None:
                    name += "_watch"
                with self.lock:
                    self.requests[name] = self.requests.get(name, 0) + 1
            return call(request, async_object)

        client._call = counted

    def watching(self, base):
        """`base` (a kazoo lock class) counting its predecessor's events."""
        tally = self

        class Counting(base):
            def _watch_predecessor(self, event):
                with tally.lock:
                    tally.notifications.append(tally.now())
                super()._watch_predecessor(event)

        return Counting

    def acquired(self, node):
        with self.lock:
            self.acquisitions.append(int(node[-10:]))

    def released(self):
        with self.lock:
            self.releases.append(self.now())

    def report(self, n, acquisitions, watched=True):
        """Prints the JSON object: each notification charged to the last
        release before it; none where the harness `watched` no watch (the
        wire counts them)."""
        releases = sorted(self.releases)
        per = [0] * max(len(releases), n)
        before = 0
        for t in self.notifications:
            k = sum(1 for r in releases if r <= t) - 1
            if k >= 0:
                per[k] += 1
            else:
                before += 1
        out = {
            "requests": self.requests,
            "acquisition_sequence": acquisitions,
            "wall_seconds": self.now(),
        }
        if watched:
            out["notifications_per_release"] = per
            out["notifications_before_first_release"] = before
        print(json.dumps(out))
