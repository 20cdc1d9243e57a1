#!/bin/bash
# install.sh measures issue 19's install into one router, old code against
# new, with a siftd process on loopback.
#
#   BENCH_LOCK=FILE bench/install.sh OLD NEW FILE [ROUNDS]
#
# OLD and NEW are git revisions (each built from `git archive`, so the
# work tree's changes are not in them: commit first). FILE is a
# subscriptions file (the format of sift match), e.g. the stock workload
# written with match.WriteSubscriptions. In one hold of `flock
# $BENCH_LOCK`, ROUNDS times old then new: an empty `siftd --table shallow
# --gc-percent 100 --memory-limit off --max-subscriptions-per-conn LINES
# --metrics` is started, its RSS and CPU read after 2 s, and `sift sub
# --filters FILE` subscribes every filter of FILE until `ready N`, while
# the router's sift_router_subscriptions gauge is polled every 0.1 s. Each
# line gives the time to `ready`, subscriptions per second over it, the
# rate over the first tenth (from the first installed subscription, so
# without sift reading the file) and over the last tenth (from 9/10 to
# ready), the router's CPU over the install, and its RSS above the empty
# router per subscription, read once `ready` is printed and again after 5
# s (the GC's goal settles). Ports 4485-4486 (link) and 4495-4496
# (metrics).
#
# e.g. BENCH_LOCK=/path/to/lock bench/install.sh main HEAD stock1e6.txt 2
set -eu
old=${1:?usage: install.sh OLD NEW FILE [ROUNDS]} new=${2:?usage: install.sh OLD NEW FILE [ROUNDS]}
file=$(realpath "${3:?usage: install.sh OLD NEW FILE [ROUNDS]}") rounds=${4:-1}
lock=${BENCH_LOCK:?set BENCH_LOCK to the benchmark lock file}
cd "$(git rev-parse --show-toplevel)"
d=$(mktemp -d)
pids=()
trap 'kill -9 "${pids[@]}" 2>/dev/null; wait 2>/dev/null; rm -rf "$d"' EXIT
n=$(grep -cv '^[[:space:]]*\(#.*\)\?$' "$file")

. bench/lib.sh # build, rss, hwm, cpu, now
build old "$old"
build new "$new"
"$d/new/sift" certs init "$d/certs" >/dev/null

declare -A port metrics
port[old]=4485 port[new]=4486 metrics[old]=4495 metrics[new]=4496

gauge() { # gauge TAG: the router's installed subscriptions (0 while it does not answer)
	local c
	c=$(curl -sf "http://127.0.0.1:${metrics[$1]}/metrics" 2>/dev/null | awk '$1 == "sift_router_subscriptions" {print $2}') || true
	printf '%.0f' "${c:-0}"
}
rate() { # rate COUNT T0 T1: COUNT per second from T0 to T1 ("-" when they are equal)
	if [ "$(echo "$3 > $2" | bc)" = 1 ]; then printf %.0f "$(echo "$1 / ($3 - $2)" | bc -l)"; else echo -; fi
}

install() { # install TAG: one measured install into an empty router
	local p m r e c0 t0 tfirst= t10= t90= g sub
	p=${port[$1]} m=${metrics[$1]}
	rm -rf "$d/$1/data"
	"$d/$1/siftd" --name r1 --listen "127.0.0.1:$p" --certs "$d/certs" --data "$d/$1/data" \
		--metrics "127.0.0.1:$m" --table shallow --gc-percent 100 --memory-limit off \
		--max-subscriptions-per-conn "$n" >>"$d/$1/r1.log" 2>&1 &
	r=$!
	pids+=("$r")
	sleep 2
	e=$(rss "$r")
	c0=$(cpu "$r")
	: >"$d/$1/sub.err"
	t0=$(now)
	"$d/$1/sift" sub --router "127.0.0.1:$p" --certs "$d/certs" --filters "$file" >/dev/null 2>"$d/$1/sub.err" &
	sub=$!
	pids+=("$sub")
	until grep -q "^ready" "$d/$1/sub.err"; do
		if ! kill -0 "$sub" 2>/dev/null; then
			echo "install: sift sub for $1 ended:" >&2
			cat "$d/$1/sub.err" >&2
			exit 1
		fi
		g=$(gauge "$1")
		[ -z "$tfirst" ] && [ "$g" -gt 0 ] && tfirst=$(now)
		[ -z "$t10" ] && [ "$g" -ge $((n / 10)) ] && t10=$(now)
		[ -z "$t90" ] && [ "$g" -ge $((n * 9 / 10)) ] && t90=$(now)
		sleep 0.1
	done
	local t1 c1 rss1
	t1=$(now)
	c1=$(cpu "$r")
	rss1=$(rss "$r")
	: "${tfirst:=$t0}" "${t10:=$t1}" "${t90:=$t1}"
	sleep 5
	echo "$1 $(date -u +%T) load $(cut -d' ' -f1 /proc/loadavg): ready $n in $(printf %.2f "$(echo "$t1 - $t0" | bc)") s," \
		"$(rate "$n" "$t0" "$t1") subs/s, first tenth $(rate $((n / 10)) "$tfirst" "$t10")/s, last tenth $(rate $((n - n * 9 / 10)) "$t90" "$t1")/s," \
		"router CPU $(echo "$c1 - $c0" | bc) s, RSS above empty $(((rss1 - e) * 1024 / n)) B/sub at ready, $((($(rss "$r") - e) * 1024 / n)) B/sub 5 s later (empty $((e / 1024)) MB)"
	kill "$sub" "$r" 2>/dev/null || true
	wait "$sub" "$r" 2>/dev/null || true
}

exec 9>"$lock"
echo "waiting for the lock at $(date -u +%T)"
flock 9
echo "lock held from $(date -u +%T), load $(cut -d' ' -f1-3 /proc/loadavg)"
for ((i = 0; i < rounds; i++)); do
	install old
	install new
done
flock -u 9
