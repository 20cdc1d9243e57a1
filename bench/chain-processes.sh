#!/bin/bash
# chain-processes.sh runs issue 7's chain benchmark (router/chainbench_test.go)
# against three siftd processes a - b - c linked on loopback, each with
# siftd's own settings (its garbage collector defaults included), the
# publisher and the 10 subscriber connections in the test process. CPU
# figures add the routers' (from /proc) to the test process's and give
# each router's alone (a-, b-, c-cpu-s/Mevents).
#
#   bench/chain-processes.sh [exact|bloom] [benchtime] [count]
#
# e.g. bench/chain-processes.sh exact 100000x 3. Ports 4471-4473.
set -eu
fwd=${1:-exact}; bt=${2:-100000x}; count=${3:-3}
cd "$(git rev-parse --show-toplevel)"
d=$(mktemp -d)
go build -o "$d/siftd" ./cmd/siftd
go test -c -o "$d/router.test" ./router
go run ./cmd/sift certs init "$d/certs" >/dev/null
pa= pb= pc=
trap 'kill $pa $pb $pc 2>/dev/null; wait 2>/dev/null; rm -rf "$d"' EXIT
start() { "$d/siftd" --name "$1" --listen "127.0.0.1:$2" --certs "$d/certs" --data "$d/$1" --forward "$fwd" ${3:+--peer "$3"} >"$d/$1.log" 2>&1 & echo $!; }
pa=$(start a 4471 "")
sleep 0.3
pb=$(start b 4472 127.0.0.1:4471)
pc=$(start c 4473 127.0.0.1:4472)
linked() { [ "$(grep -c 'link up' "$d/b.log")" -ge 2 ] && grep -q 'link up' "$d/c.log"; }
for _ in $(seq 100); do
	linked && break
	sleep 0.1
done
if ! linked; then
	echo "chain-processes: the routers did not link within 10 s; logs:" >&2
	tail -n 5 "$d"/a.log "$d"/b.log "$d"/c.log >&2
	exit 1
fi
echo "load $(cut -d' ' -f1-3 /proc/loadavg) at $(date -u +%H:%M:%S) UTC"
cd router
SIFT_BENCH_CHAIN=127.0.0.1:4471,127.0.0.1:4473 SIFT_BENCH_CHAIN_PIDS=$pa,$pb,$pc \
	SIFT_BENCH_CHAIN_FORWARD=$fwd SIFT_BENCH_CERTS="$d/certs" \
	"$d/router.test" -test.run XXX -test.bench "Chain$/^$fwd" -test.benchtime "$bt" -test.count "$count"
