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

work=$(mktemp -d)
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
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

wait_port zookeeper "$zk_port"
wait_port etcd "$etcd_port"
wait_port redis "$redis_port"
for i in 1 2 3 4 5; do wait_port "redlock$i" "${redlock_ports[$((i - 1))]}"; done
wait_port primary "$primary_port"
redis replica "$replica_port" --replicaof 127.0.0.1 "$primary_port"
wait_port replica "$replica_port"
masters=$(IFS=,; echo "${redlock_ports[*]}")
echo "validate: ZooKeeper on 127.0.0.1:$zk_port, etcd on 127.0.0.1:$etcd_port, Redis on $redis_port, masters $masters, master $primary_port with replica $replica_port"

# --redis-restart: the validator may stop the third master (these are this
# script's own) and start it again itself, for the Redlock restart runs.
cargo run --release --manifest-path validate/Cargo.toml -- \
  --zk "127.0.0.1:$zk_port" --etcd "127.0.0.1:$etcd_port" \
  --redis "$redis_port" --redis-masters "$masters" \
  --redis-replica "$primary_port:$replica_port" --redis-restart "$@"
