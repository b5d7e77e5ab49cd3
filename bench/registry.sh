#!/usr/bin/env bash
# Push and pull throughput against curl moving the same bytes to and from the same registry on loopback.
#
#   bench/registry.sh [SIZE_MIB]      (default 1024)
#
# Needs build/bin/mpspack (or MPSPACK_BIN), docker-registry, curl and the fixtures in ../shared. The container is
# the cpu_mlp_blob fixture with a SIZE_MIB random example input (a segment cut into 64 MiB layers). Each side is
# timed on an empty registry: push against curl uploading the same layers (POST + PUT each), pull against curl
# fetching every layer into a file (4 at a time, as pull does). Prints the times and the ratios mpspack / curl.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
mpspack=${MPSPACK_BIN:-$here/build/bin/mpspack}
fixture=${MPSPACK_SHARED_DIR:-$here/../shared}/fixtures/aoti-2.11/rebuilt-bookworm/cpu_mlp_blob
size_mib=${1:-1024}
tmp=$(mktemp -d)
registry_pid=
cleanup() {
  [ -n "$registry_pid" ] && kill "$registry_pid" 2>/dev/null && wait "$registry_pid" 2>/dev/null
  rm -rf "$tmp"
}
trap cleanup EXIT

start_registry() {  # $1: storage folder; sets host and registry_pid
  [ -n "$registry_pid" ] && kill "$registry_pid" && wait "$registry_pid" 2>/dev/null || true
  port=$(/usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  host=127.0.0.1:$port
  printf 'version: 0.1\nlog:\n  level: error\n  accesslog:\n    disabled: true\nstorage:\n  filesystem:\n    rootdirectory: %s\nhttp:\n  addr: %s\n' \
    "$1" "$host" > "$tmp/config.yml"
  docker-registry serve "$tmp/config.yml" > "$tmp/registry.log" 2>&1 &
  registry_pid=$!
  until curl -fs "http://$host/v2/" > /dev/null; do sleep 0.05; done
}
now() { date +%s.%N; }
ratio() { /usr/bin/python3 -c "print(f'{$1/$2:.2f}')"; }

head -c "$((size_mib << 20))" /dev/urandom > "$tmp/data.bin"
"$mpspack" build "$fixture/model.so" --weights "$fixture/weights.blob" \
  --example-input "$tmp/data.bin:u8:$((size_mib << 20))" -o "$tmp/big.mpk" > /dev/null
rm "$tmp/data.bin"
bytes=$(stat -c %s "$tmp/big.mpk")

start_registry "$tmp/storage-mpspack"
t0=$(now); "$mpspack" push "$tmp/big.mpk" "$host/bench/big:v1" --plain-http --json > "$tmp/push.json"; t1=$(now)
push_s=$(/usr/bin/python3 -c "print($t1 - $t0)")
t0=$(now); "$mpspack" pull "$host/bench/big:v1" -o "$tmp/pulled.mpk" --plain-http -q; t1=$(now)
pull_s=$(/usr/bin/python3 -c "print($t1 - $t0)")
cmp "$tmp/big.mpk" "$tmp/pulled.mpk"
rm "$tmp/pulled.mpk"

# The same layers (offset, size, digest) as files for curl.
/usr/bin/python3 - "$tmp" <<'PY'
import json, sys
tmp = sys.argv[1]
layers = json.load(open(f"{tmp}/push.json"))["layers"]
with open(f"{tmp}/big.mpk", "rb") as f, open(f"{tmp}/layers.txt", "w") as out:
    for i, l in enumerate(layers):
        f.seek(l["offset"]); open(f"{tmp}/layer{i}", "wb").write(f.read(l["size"]))
        out.write(f"{tmp}/layer{i} {l['digest']}\n")
PY
start_registry "$tmp/storage-curl"
upload() {  # $1 file, $2 digest
  loc=$(curl -fsS -X POST -D - -o /dev/null "http://$host/v2/bench/curl/blobs/uploads/" | tr -d '\r' |
        awk 'tolower($1)=="location:" {print $2}')
  case $loc in http*) ;; *) loc=http://$host$loc ;; esac
  curl -fsS -H 'Content-Type: application/octet-stream' -T "$1" -o /dev/null "$loc&digest=$2"
}
export -f upload; export host
t0=$(now); xargs -P 4 -n 2 bash -c 'upload "$0" "$1"' < "$tmp/layers.txt"; t1=$(now)
curl_push_s=$(/usr/bin/python3 -c "print($t1 - $t0)")
t0=$(now)
# Into files, as pull writes its output (not /dev/null).
awk '{print $2}' "$tmp/layers.txt" | xargs -P 4 -I{} curl -fsS -o "$tmp/{}.curl" "http://$host/v2/bench/curl/blobs/{}"
t1=$(now)
curl_pull_s=$(/usr/bin/python3 -c "print($t1 - $t0)")

mib=$((bytes >> 20))
echo "container: $mib MiB, $(wc -l < "$tmp/layers.txt") layers, registry on $host (loopback)"
printf 'push  mpspack %6.2f s   curl %6.2f s   ratio %s\n' "$push_s" "$curl_push_s" "$(ratio "$push_s" "$curl_push_s")"
printf 'pull  mpspack %6.2f s   curl %6.2f s   ratio %s\n' "$pull_s" "$curl_pull_s" "$(ratio "$pull_s" "$curl_pull_s")"
