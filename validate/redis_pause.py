"""redis-py's own Lock when its holder pauses past the lock's TTL.

Role `hold`: take `Lock(r, "lock", timeout=TTL_S)`; with FENCE=1 take a
fencing token (`INCR lock:fence`, what lockstep's `redis-token:incr-token`
does), else write with token 0 (a random token orders nothing); print
ACQUIRED; write to the guarded resource; sleep 0.5 s (the validator stops
the process, SIGSTOP, during it); write again; release, printing RELEASED,
or RELEASE_ERROR and the error's class (redis-py raises
`LockNotOwnedError` when the key is gone or someone else's).

Role `take`: the same lock (polling every 0.1 s, redis-py's default), the
same token, two writes 0.1 s apart, release.

The resource is the validator's: a line `WRITE CLIENT HOLD TOKEN` on TCP,
answered ACCEPTED or REJECTED (fenced: a token lower than the highest it
took is refused).

Every line starts with the wall time (seconds since the epoch), so the
processes' lines and the validator's own events share one clock.

usage: python3 redis_pause.py HOST:PORT RESOURCE_HOST:PORT hold|take TTL_S FENCE CLIENT
"""

import socket
import sys
import time

from redis import Redis
from redis.exceptions import LockError
from redis.lock import Lock


def say(what):
    print("%.6f %s" % (time.time(), what), flush=True)


def main():
    (host, port), (rhost, rport) = [e.rsplit(":", 1) for e in sys.argv[1:3]]
    role, ttl, fence, client = sys.argv[3], float(sys.argv[4]), sys.argv[5] == "1", sys.argv[6]
    r = Redis(host=host, port=int(port))
    resource = socket.create_connection((rhost, int(rport)))
    replies = resource.makefile("r")
    lock = Lock(r, "lock", timeout=ttl, sleep=0.1)
    lock.acquire()
    token = r.incr("lock:fence") if fence else 0
    say("ACQUIRED %d" % token)

    def write(n):
        resource.sendall(b"WRITE %s 1 %d\n" % (client.encode(), token))
        say("WROTE %d %s" % (n, replies.readline().strip()))

    write(1)
    time.sleep(0.5 if role == "hold" else 0.1)
    write(2)
    try:
        lock.release()
        say("RELEASED")
    except LockError as e:
        say("RELEASE_ERROR %s" % type(e).__name__)


if __name__ == "__main__":
    main()
