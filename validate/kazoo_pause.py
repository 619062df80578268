"""kazoo's own Lock after a pause past the session timeout.

Role `hold`: take `client.Lock("/lockstep-pause")`, print ACQUIRED, then every
100 ms print what the lock object believes (`is_acquired`) and the client's
connection state as kazoo last reported it (LOST, SUSPENDED, CONNECTED).
The validator stops this process (SIGSTOP) past its session timeout and
resumes it once another client holds the lock.

Role `take`: take the same lock, print ACQUIRED, hold it for a second,
release it.

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
    print("ACQUIRED", flush=True)
    if role == "take":
        time.sleep(1.0)
        lock.release()
        client.stop()
        return
    seen = set()
    while True:
        seen.update(states)
        print(
            "is_acquired=%s lost=%s" % (lock.is_acquired, "LOST" in seen),
            flush=True,
        )
        time.sleep(0.1)


if __name__ == "__main__":
    main()
