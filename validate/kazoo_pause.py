"""kazoo's own Lock after a pause past the session timeout.

Role `hold`: take `client.Lock("/lockstep-pause")`, print ACQUIRED, then every
100 ms print what the lock object believes (`is_acquired`) and whether kazoo
has reported the session LOST. Every line starts with the wall time (seconds
since the epoch), so two processes' lines share one clock.
The validator stops this process (SIGSTOP) past its session timeout and
resumes it once another client holds the lock.

Role `take`: take the same lock, print ACQUIRED, hold it for a second,
release it, print RELEASED.

usage: python3 kazoo_pause.py HOST:PORT hold|take SESSION_TIMEOUT_S
"""

import sys
import time

from kazoo.client import KazooClient

PATH = "/lockstep-pause"


def main():
    endpoint, role, timeout = sys.argv[1], sys.argv[2], float(sys.argv[3])
    client = KazooClient(hosts=endpoint, timeout=timeout)
    states = []
    client.add_listener(lambda s: states.append(str(s)))
    client.start()
    lock = client.Lock(PATH, role)
    lock.acquire()
    print("%.6f ACQUIRED" % time.time(), flush=True)
    if role == "take":
        time.sleep(1.0)
        lock.release()
        print("%.6f RELEASED" % time.time(), flush=True)
        client.stop()
        return
    seen = set()
    while True:
        seen.update(states)
        print(
            "%.6f is_acquired=%s lost=%s"
            % (time.time(), lock.is_acquired, "LOST" in seen),
            flush=True,
        )
        time.sleep(0.1)


if __name__ == "__main__":
    main()
