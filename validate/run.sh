#!/usr/bin/env bash
# Cross-validation against real ZooKeeper 3.8 and etcd 3.4 (and the client
# libraries kazoo, Curator and etcdctl), in one command:
# installs the servers (and protoc) if they are missing, starts both on free
# loopback ports with temporary data directories, runs the validator, and
# stops the servers by their process ids, on failure too.
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

wait_port zookeeper "$zk_port"
wait_port etcd "$etcd_port"
echo "validate: ZooKeeper on 127.0.0.1:$zk_port, etcd on 127.0.0.1:$etcd_port"

cargo run --release --manifest-path validate/Cargo.toml -- \
  --zk "127.0.0.1:$zk_port" --etcd "127.0.0.1:$etcd_port" "$@"
