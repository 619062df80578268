#!/usr/bin/env bash
# Cross-validation against real ZooKeeper 3.8, etcd 3.4 and Redis 7.0 (and
# the client libraries kazoo, Curator, etcdctl, redis-py and pottery), in one
# command: installs the servers (and protoc) if they are missing, starts them
# on free loopback ports with temporary data directories, runs the validator,
# and stops the servers by their process ids, on failure too.
#
# Redis runs as three deployments, none persisting anything (`--save ''
# --appendonly no`): one master; five independent masters (Redlock's); a
# master and its replica.
#
# Replicated stores: a three-server ZooKeeper ensemble and a three-member
# etcd cluster, their links to the leader through the validator's own
# proxies (it opens them first thing; the ensembles form once it has). The
# validator stops and resumes each ensemble's leader's process last of all,
# for a failover: it is given their process ids.
#
#   validate/run.sh [validator flags, e.g. --clients 2,5,20 --out DIR]
set -euo pipefail
cd "$(dirname "$0")/.."

need=()
command -v etcd >/dev/null || need+=(etcd-server)
command -v etcdctl >/dev/null || need+=(etcd-client)
[ -f /usr/share/java/zookeeper.jar ] || need+=(zookeeper)
command -v javac >/dev/null || need+=(default-jdk-headless)
[ -f /usr/share/java/curator-recipes.jar ] || need+=(libcurator-recipes-java)
command -v protoc >/dev/null || need+=(protobuf-compiler)
command -v redis-server >/dev/null || need+=(redis-server)
[ -d /usr/include/google/protobuf ] || need+=(libprotobuf-dev)
if [ ${#need[@]} -gt 0 ]; then
  echo "validate: installing ${need[*]}"
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo=sudo
  $sudo apt-get update -q
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends "${need[@]}"
fi

# kazoo, the Python client whose own Lock the validator measures.
if ! python3 -c 'import kazoo' 2>/dev/null; then
  echo "validate: installing kazoo from PyPI"
  python3 -m pip install --quiet 'kazoo==2.11.0'
fi
# redis-py's Lock and pottery's Redlock, measured at the wire.
py_need=()
python3 -c 'import importlib.metadata as m, sys; sys.exit(m.version("redis") != "5.3.1")' 2>/dev/null \
  || py_need+=('redis==5.3.1')
python3 -c 'import importlib.metadata as m, sys; sys.exit(m.version("pottery") != "3.0.1")' 2>/dev/null \
  || py_need+=('pottery==3.0.1')
if [ ${#py_need[@]} -gt 0 ]; then
  echo "validate: installing ${py_need[*]} from PyPI"
  python3 -m pip install --quiet "${py_need[@]}"
fi

# Built before any server starts: the ensembles' links go through the
# validator's proxies, so they form only once it runs.
cargo build --release --manifest-path validate/Cargo.toml

work=$(mktemp -d)
pids=()
cleanup() {
  # CONT first: a process the validator left stopped (its failover stops
  # the ZooKeeper leader) would keep a TERM pending, and `wait` with it.
  for pid in "${pids[@]}"; do kill -CONT "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
free_ports() { # n: that many distinct free ports, one Python start for all
  python3 -c 'import socket, sys
ss = [socket.socket() for _ in range(int(sys.argv[1]))]
for s in ss: s.bind(("127.0.0.1", 0))
print(" ".join(str(s.getsockname()[1]) for s in ss))' "$1"
}
wait_port() { # name port
  for _ in $(seq 1 150); do
    if python3 -c "import socket,sys; socket.create_connection(('127.0.0.1', $2), 0.2)" 2>/dev/null; then
      return 0
    fi
    sleep 0.2
  done
  echo "validate: $1 did not start; its log:" >&2
  cat "$work/$1.log" >&2
  exit 1
}

zk_port=$(free_port)
mkdir -p "$work/zk"
cat > "$work/zoo.cfg" <<CFG
tickTime=500
dataDir=$work/zk
clientPort=$zk_port
clientPortAddress=127.0.0.1
admin.enableServer=false
4lw.commands.whitelist=mntr
CFG
java -cp /etc/zookeeper/conf:/usr/share/java/zookeeper.jar \
  org.apache.zookeeper.server.ZooKeeperServerMain "$work/zoo.cfg" > "$work/zookeeper.log" 2>&1 &
pids+=($!)

etcd_port=$(free_port)
peer_port=$(free_port)
etcd --name validate --data-dir "$work/etcd" \
  --listen-client-urls "http://127.0.0.1:$etcd_port" --advertise-client-urls "http://127.0.0.1:$etcd_port" \
  --listen-peer-urls "http://127.0.0.1:$peer_port" --initial-advertise-peer-urls "http://127.0.0.1:$peer_port" \
  --initial-cluster "validate=http://127.0.0.1:$peer_port" > "$work/etcd.log" 2>&1 &
pids+=($!)

# Redis: a server with no persistence, in a directory of its own; the
# replica's extra flags follow the port.
redis() { # name port [flags...]
  local name=$1 port=$2
  shift 2
  mkdir -p "$work/$name"
  redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no \
    --dir "$work/$name" --daemonize no "$@" > "$work/$name.log" 2>&1 &
  pids+=($!)
}
redis_port=$(free_port)
redis redis "$redis_port"
redlock_ports=()
for i in 1 2 3 4 5; do
  p=$(free_port)
  redis "redlock$i" "$p"
  redlock_ports+=("$p")
done
primary_port=$(free_port)
replica_port=$(free_port)
redis primary "$primary_port"

# A three-server ZooKeeper ensemble, quick to notice a cut-off follower
# (syncLimit × tickTime = 2 s). Server 3 starts first and leads (a fresh
# ensemble elects the highest id); servers 1 and 2 name, for server 3's
# quorum port, a port of the validator's link proxies (ensemble.rs), which
# forward to it. Server 1 keeps ZooKeeper's default global sessions;
# server 2 has local sessions. The servers log at INFO (slf4j-simple), so
# that server 1's refusal of a client ahead of it is in its log.
zke_tick=250
zke_sync=8
read -r -a p <<< "$(free_ports 11)"
zke_client=("${p[@]:0:3}") zke_quorum=("${p[@]:3:3}") zke_election=("${p[@]:6:3}")
zke_link1=${p[9]}
zke_link2=${p[10]}
zke_log=""
[ -f /usr/share/java/slf4j-simple.jar ] && zke_log=":/usr/share/java/slf4j-simple.jar"
zke_start() { # server id
  local i=$1 dir="$work/zke$1" quorum3=${zke_quorum[2]} local_sessions=false
  [ "$i" = 1 ] && quorum3=$zke_link1
  [ "$i" = 2 ] && quorum3=$zke_link2 && local_sessions=true
  mkdir -p "$dir"
  echo "$i" > "$dir/myid"
  cat > "$dir/zoo.cfg" <<CFG
tickTime=$zke_tick
initLimit=240
syncLimit=$zke_sync
dataDir=$dir
clientPort=${zke_client[$((i - 1))]}
clientPortAddress=127.0.0.1
admin.enableServer=false
4lw.commands.whitelist=srvr,mntr
localSessionsEnabled=$local_sessions
localSessionsUpgradingEnabled=$local_sessions
server.1=127.0.0.1:${zke_quorum[0]}:${zke_election[0]}
server.2=127.0.0.1:${zke_quorum[1]}:${zke_election[1]}
server.3=127.0.0.1:$quorum3:${zke_election[2]}
CFG
  java -Xmx256m -cp "/etc/zookeeper/conf:/usr/share/java/zookeeper.jar$zke_log" \
    org.apache.zookeeper.server.quorum.QuorumPeerMain "$dir/zoo.cfg" > "$work/zke$i.log" 2>&1 &
  pids+=($!)
}
zke_start 3
zke_leader_pid=${pids[-1]}

# A three-member etcd cluster. Each member advertises, as its peer URL, a
# port of the validator's proxies in front of its own, so that every peer
# connection goes through them; --pre-vote, so that a member cut off and
# let back does not unseat the leader, and an election timeout longer than
# any hold.
read -r -a p <<< "$(free_ports 9)"
ec_client=("${p[@]:0:3}") ec_peer=("${p[@]:3:3}") ec_proxy=("${p[@]:6:3}")
ec_pids=()
ec_initial=""
for i in 1 2 3; do
  ec_initial="$ec_initial,ve$i=http://127.0.0.1:${ec_proxy[$((i - 1))]}"
done
for i in 1 2 3; do
  c=${ec_client[$((i - 1))]} p=${ec_peer[$((i - 1))]} a=${ec_proxy[$((i - 1))]}
  etcd --name "ve$i" --data-dir "$work/ve$i" --pre-vote --heartbeat-interval 100 --election-timeout 2500 \
    --listen-client-urls "http://127.0.0.1:$c" --advertise-client-urls "http://127.0.0.1:$c" \
    --listen-peer-urls "http://127.0.0.1:$p" --initial-advertise-peer-urls "http://127.0.0.1:$a" \
    --initial-cluster "${ec_initial#,}" --initial-cluster-token lockstep-validate-ensemble \
    --initial-cluster-state new > "$work/ve$i.log" 2>&1 &
  pids+=($!)
  ec_pids+=($!)
done

wait_port zookeeper "$zk_port"
wait_port etcd "$etcd_port"
wait_port redis "$redis_port"
for i in 1 2 3 4 5; do wait_port "redlock$i" "${redlock_ports[$((i - 1))]}"; done
wait_port primary "$primary_port"
redis replica "$replica_port" --replicaof 127.0.0.1 "$primary_port"
wait_port replica "$replica_port"
wait_port zke3 "${zke_election[2]}"
masters=$(IFS=,; echo "${redlock_ports[*]}")
zke_servers="127.0.0.1:${zke_client[0]},127.0.0.1:${zke_client[1]},127.0.0.1:${zke_client[2]}"
zke_links="$zke_link1:${zke_quorum[2]},$zke_link2:${zke_quorum[2]}"
ec_members="127.0.0.1:${ec_client[0]},127.0.0.1:${ec_client[1]},127.0.0.1:${ec_client[2]}"
ec_peers="${ec_proxy[0]}:${ec_peer[0]},${ec_proxy[1]}:${ec_peer[1]},${ec_proxy[2]}:${ec_peer[2]}"
echo "validate: ZooKeeper on 127.0.0.1:$zk_port, etcd on 127.0.0.1:$etcd_port, Redis on $redis_port, masters $masters, master $primary_port with replica $replica_port"
echo "validate: a ZooKeeper ensemble on $zke_servers (server 3 leads), an etcd cluster on $ec_members"

# The validator in the background: it opens the ensembles' link proxies
# first thing. Servers 1 and 2 start only once both of theirs listen, so
# that each follows server 3 at its first try. (Started before, a follower
# that cannot reach the leader's quorum port falls back to an election,
# and servers 1 and 2 can elect server 2 between them.)
# --redis-restart: the validator may stop the third master (these are this
# script's own) and start it again itself, for the Redlock restart runs.
cargo run --release --manifest-path validate/Cargo.toml -- \
  --zk "127.0.0.1:$zk_port" --etcd "127.0.0.1:$etcd_port" \
  --redis "$redis_port" --redis-masters "$masters" \
  --redis-replica "$primary_port:$replica_port" --redis-restart \
  --zk-ensemble "$zke_servers" --zk-ensemble-links "$zke_links" \
  --zk-ensemble-timing "$zke_tick:$zke_sync" --zk-ensemble-log "$work/zke1.log" \
  --zk-ensemble-leader-pid "$zke_leader_pid" \
  --etcd-cluster-pids "$(IFS=,; echo "${ec_pids[*]}")" \
  --etcd-cluster "$ec_members" --etcd-cluster-peers "$ec_peers" "$@" &
validator=$!
pids+=("$validator")
listening() { # port: is something listening on it (without connecting)
  python3 -c 'import sys
port = "%04X" % int(sys.argv[1])
for line in open("/proc/net/tcp"):
    f = line.split()
    if f[1].endswith(":" + port) and f[3] == "0A":
        sys.exit(0)
sys.exit(1)' "$1"
}
for _ in $(seq 1 600); do
  if listening "$zke_link1" && listening "$zke_link2"; then break; fi
  if ! kill -0 "$validator" 2>/dev/null; then break; fi
  sleep 0.1
done
if kill -0 "$validator" 2>/dev/null; then
  if ! { listening "$zke_link1" && listening "$zke_link2"; }; then
    echo "validate: the validator's ZooKeeper link proxies are not listening after 60 s; starting servers 1 and 2 anyway" >&2
  fi
  zke_start 1
  zke_start 2
fi
# The validator's exit status is the script's.
status=0
wait "$validator" || status=$?
exit "$status"
