#!/usr/bin/env bash
# Push and pull throughput against curl moving the same bytes to and from the same registry on loopback.
#
#   bench/registry.sh [SIZE_MIB] [ROUNDS]      (defaults 1024, 5)
#
# Needs build/bin/mpspack (or MPSPACK_BIN), docker-registry, curl and the fixtures in ../shared. The container is
# the cpu_mlp_blob fixture with a SIZE_MIB random example input (a segment cut into 64 MiB layers). Push is timed
# against curl uploading the same layers (POST + PUT each, 4 at a time), each push into a registry with empty
# storage; pull against curl fetching every layer into a file (4 at a time, as pull does) from the registry
# mpspack pushed to. ROUNDS rounds of pushes, then ROUNDS of pulls, the two sides alternating which goes first,
# `sync` and SETTLE_S seconds (default 10) of rest before each timed step: on the 2-core VM a pull that starts
# within a few seconds of another takes up to 1.7x as long, whichever tool made either (docs/PERFORMANCE.md, "push
# and pull against curl"). Pulls are timed apart from pushes. PULL_DIR: where both sides' pulls write (default:
# the temp folder, on disk). Prints every round's times and ratio mpspack / curl, then the median ratios.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
mpspack=${MPSPACK_BIN:-$here/build/bin/mpspack}
fixture=${MPSPACK_SHARED_DIR:-$here/../shared}/fixtures/aoti-2.11/rebuilt-bookworm/cpu_mlp_blob
size_mib=${1:-1024}
tmp=$(mktemp -d)
declare -A pids hosts  # registries by name: "a" takes mpspack's pushes, "b" curl's
cleanup() {  # every registry, then the files: a killed registry's non-zero wait must not end the trap under set -e
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null || true; done
  rm -rf "$tmp"
}
trap cleanup EXIT

start_registry() {  # $1: name; (re)starts it on empty storage, on a free loopback port
  if [ -n "${pids[$1]:-}" ]; then kill "${pids[$1]}"; wait "${pids[$1]}" 2>/dev/null || true; fi
  rm -rf "$tmp/storage-$1"
  local port
  port=$(/usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  hosts[$1]=127.0.0.1:$port
  printf 'version: 0.1\nlog:\n  level: error\n  accesslog:\n    disabled: true\nstorage:\n  filesystem:\n    rootdirectory: %s\nhttp:\n  addr: %s\n' \
    "$tmp/storage-$1" "${hosts[$1]}" > "$tmp/config-$1.yml"
  docker-registry serve "$tmp/config-$1.yml" > "$tmp/registry-$1.log" 2>&1 &
  pids[$1]=$!
  until curl -fs "http://${hosts[$1]}/v2/" > /dev/null; do sleep 0.05; done
}
now() { date +%s.%N; }
ratio() { /usr/bin/python3 -c "print(f'{$1/$2:.2f}')"; }

head -c "$((size_mib << 20))" /dev/urandom > "$tmp/data.bin"
"$mpspack" build "$fixture/model.so" --weights "$fixture/weights.blob" \
  --example-input "$tmp/data.bin:u8:$((size_mib << 20))" -o "$tmp/big.mpk" > /dev/null
rm "$tmp/data.bin"
bytes=$(stat -c %s "$tmp/big.mpk")

rounds=${2:-5}

# The layers (offset, size, digest) as files for curl, from one push's report.
start_registry a
"$mpspack" push "$tmp/big.mpk" "${hosts[a]}/bench/big:v1" --plain-http --json > "$tmp/push.json"
/usr/bin/python3 - "$tmp" <<'PY'
import json, sys
tmp = sys.argv[1]
layers = json.load(open(f"{tmp}/push.json"))["layers"]
with open(f"{tmp}/big.mpk", "rb") as f, open(f"{tmp}/layers.txt", "w") as out:
    for i, l in enumerate(layers):
        f.seek(l["offset"]); open(f"{tmp}/layer{i}", "wb").write(f.read(l["size"]))
        out.write(f"{tmp}/layer{i} {l['digest']}\n")
PY
upload() {  # $1 file, $2 digest
  loc=$(curl -fsS -X POST -D - -o /dev/null "http://$host/v2/bench/curl/blobs/uploads/" | tr -d '\r' |
        awk 'tolower($1)=="location:" {print $2}')
  case $loc in http*) ;; *) loc=http://$host$loc ;; esac
  curl -fsS -H 'Content-Type: application/octet-stream' -T "$1" -o /dev/null "$loc&digest=$2"
}
export -f upload

timed() {  # prints the seconds "$@" took, after a sync that is not timed
  sync; sleep "${SETTLE_S:-10}"
  local t0 t1
  t0=$(now); "$@"; t1=$(now)
  /usr/bin/python3 -c "print($t1 - $t0)"
}
mpspack_push() { "$mpspack" push "$tmp/big.mpk" "${hosts[a]}/bench/big:v1" --plain-http -q > /dev/null; }
curl_push() { host=${hosts[b]} xargs -P 4 -n 2 bash -c 'upload "$0" "$1"' < "$tmp/layers.txt"; }
out=${PULL_DIR:-$tmp}
mkdir -p "$out"
mpspack_pull() { "$mpspack" pull "${hosts[a]}/bench/big:v1" -o "$out/pulled.mpk" --plain-http -q; }
# Into files, as pull writes its output (not /dev/null), from the registry mpspack pushed to.
curl_pull() {
  awk '{print $2}' "$tmp/layers.txt" | xargs -P 4 -I{} curl -fsS -o "$out/{}.curl" "http://${hosts[a]}/v2/bench/big/blobs/{}"
}

echo "container: $(($(stat -c %s "$tmp/big.mpk") >> 20)) MiB, $(wc -l < "$tmp/layers.txt") layers, registry on loopback, $rounds rounds"
push_ratios=() pull_ratios=()
# Pushes: each round, each side into a registry with empty storage (both restarted first, not timed).
for ((r = 1; r <= rounds; r++)); do
  start_registry a; start_registry b
  if ((r % 2)); then mp=$(timed mpspack_push); cp=$(timed curl_push); else cp=$(timed curl_push); mp=$(timed mpspack_push); fi
  push_ratios+=("$(ratio "$mp" "$cp")")
  printf 'push round %d  mpspack %6.2f s  curl %6.2f s  ratio %s\n' "$r" "$mp" "$cp" "${push_ratios[-1]}"
done
# Pulls: from the registry that holds the last round's push; one round of each side first, untimed, so the
# registry's files are in the page cache for both.
mpspack_pull; curl_pull; rm -f "$out/pulled.mpk" "$out"/*.curl
for ((r = 1; r <= rounds; r++)); do
  if ((r % 2)); then ml=$(timed mpspack_pull); cl=$(timed curl_pull); else cl=$(timed curl_pull); ml=$(timed mpspack_pull); fi
  cmp "$tmp/big.mpk" "$out/pulled.mpk"
  rm -f "$out/pulled.mpk" "$out"/*.curl
  pull_ratios+=("$(ratio "$ml" "$cl")")
  printf 'pull round %d  mpspack %6.2f s  curl %6.2f s  ratio %s\n' "$r" "$ml" "$cl" "${pull_ratios[-1]}"
done
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
echo "median ratio mpspack / curl: push $(median "${push_ratios[@]}"), pull $(median "${pull_ratios[@]}")"
