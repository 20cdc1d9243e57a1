#!/bin/bash
# resync.sh measures issue 19's link resynchronisation and upstream
# memory, old code against new, with siftd processes on loopback.
#
#   BENCH_LOCK=FILE bench/resync.sh OLD NEW [N] [ROUNDS]
#
# OLD and NEW are git revisions (each built from `git archive`, so the
# work tree's changes are not in them: commit first). For each, a pair
# r1 - r2 (`siftd --table shallow --gc-percent 100
# --max-subscriptions-per-conn N --metrics`, r2 `--peer` r1) is started and
# `sift sub --router r2 --filters FILE` installs N filters `k == "vI"`
# (nothing covers anything: r2 forwards every one to r1) until `ready N`
# and r1 holds all N; this setup runs under nice, outside the lock, both
# pairs up at once. Then, in one hold of `flock $BENCH_LOCK`, ROUNDS times
# old then new: r1's RSS is read, r2's VmHWM reset (clear_refs 5), r1
# SIGKILLed and restarted with the same arguments, and its
# /debug/routes?counts=1 polled every 0.2 s until it holds N filters from
# r2 again. Before each kill the script waits until r1 has held the N
# filters for 11 s: r2 redials a link that ends with a backoff that
# doubles up to 10 s and starts over only after a link that stayed up
# longer than that, so back-to-back rounds would measure the backoff.
# Each line gives the time from the kill, r1's CPU, r2's CPU during it,
# r2's peak against its steady RSS, and r1's RSS per held filter before
# the kill and after the resync, above an empty r1's RSS (measured at
# setup). Ports PORT_BASE to PORT_BASE+3 (links) and PORT_BASE+10 to
# PORT_BASE+13 (metrics), PORT_BASE 4481 unless set: give each invocation
# that may run beside another its own (every worktree has this script).
# Each router's ports are checked free before it starts, so a clash stops
# the script with the process holding the port named, instead of leaving
# a router that never came up to be read as a resync that never ended.
#
# KEEP=1 keeps the work directory (binaries, certificates, data, each
# router's log TAG/NAME.log, sift sub's stderr TAG/sub.err, and when r1
# does not get its filters back (or exits: the script then stops at once
# with the end of its log) both routers' /debug/routes and /metrics,
# TAG/routes.PORT.json and TAG/metrics.PORT.txt) instead of
# deleting it on exit, and prints its path: the logs are what explains a
# resync that did not complete.
#
# A round stops the script when the pair's sift sub has ended: r2 then
# drops the client's filters, and r1 would get none back. A niced sift
# sub holding 10^6 filters could miss its connection's idle timeout on a
# loaded machine (a plain client's 5 s, before --filters took 30 s; it now
# also subscribes again after a lost connection, which would make the
# round measure a reinstall), so sift sub is reniced with r2 once the
# lock is held.
#
# e.g. BENCH_LOCK=/path/to/lock bench/resync.sh main HEAD 1000000 2
#      KEEP=1 BENCH_LOCK=/path/to/lock bench/resync.sh main HEAD 100000 20
#      PORT_BASE=24481 BENCH_LOCK=/path/to/lock bench/resync.sh main HEAD
set -eu
old=${1:?usage: resync.sh OLD NEW [N] [ROUNDS]} new=${2:?usage: resync.sh OLD NEW [N] [ROUNDS]}
n=${3:-1000000} rounds=${4:-1}
lock=${BENCH_LOCK:?set BENCH_LOCK to the benchmark lock file}
cd "$(git rev-parse --show-toplevel)"
d=$(mktemp -d)
pids=()
cleanup() { # ends every process started here; deletes $d unless KEEP=1
	kill -9 "${pids[@]}" 2>/dev/null
	wait 2>/dev/null
	if [ "${KEEP:-0}" = 1 ]; then
		echo "resync: kept $d (logs: $d/{old,new}/{r1,r2}.log, $d/{old,new}/sub.err)" >&2
	else
		rm -rf "$d"
	fi
}
trap cleanup EXIT

. bench/lib.sh # build, rss, hwm, cpu, now
build old "$old"
build new "$new"
"$d/new/sift" certs init "$d/certs" >/dev/null
seq 0 $((n - 1)) | sed 's/.*/k == "v&"/' >"$d/keys.txt"

declare -A port metrics r1pid r2pid subpid empty up
base=${PORT_BASE:-4481}
port[old]=$base port[new]=$((base + 2)) metrics[old]=$((base + 10)) metrics[new]=$((base + 12))

free() { # free UDP_PORT TCP_PORT: fails, naming the holder, if either is taken
	local taken
	taken=$(ss -Hanpu "sport = :$1"; ss -Hlnpt "sport = :$2")
	if [ -n "$taken" ]; then
		echo "resync: port $1/udp or $2/tcp is taken (set PORT_BASE):" >&2
		echo "$taken" >&2
		return 1
	fi
}


start() { # start TAG NAME NICE [PEER]: runs siftd, sets last
	local p=${port[$1]} m=${metrics[$1]}
	if [ "$2" = r2 ]; then p=$((p + 1)) m=$((m + 1)); fi
	free "$p" "$m" || exit 1
	echo "resync.sh: start $2 at $(date -u +%T.%N)" >>"$d/$1/$2.log"
	nice -n "$3" "$d/$1/siftd" --name "$2" --listen "127.0.0.1:$p" --certs "$d/certs" --data "$d/$1/$2" \
		--metrics "127.0.0.1:$m" --table shallow --gc-percent 100 --max-subscriptions-per-conn "$n" \
		${4:+--peer "$4"} >>"$d/$1/$2.log" 2>&1 &
	last=$!
	pids+=("$last")
}

held() { # held TAG: the filters r1 holds from r2 (0 while it does not answer)
	local c
	c=$(curl -sf "http://127.0.0.1:${metrics[$1]}/debug/routes?counts=1" 2>/dev/null | grep -o '"received_count": *[0-9]*' | head -1 | tr -dc 0-9) || true
	echo "${c:-0}"
}

snapshot() { # snapshot TAG: both routers' /debug/routes and /metrics into $d/TAG/
	local m
	for m in "${metrics[$1]}" "$((metrics[$1] + 1))"; do
		curl -s -m 10 "http://127.0.0.1:$m/debug/routes?counts=1" >"$d/$1/routes.$m.json" 2>&1 || true
		curl -s -m 10 "http://127.0.0.1:$m/metrics" >"$d/$1/metrics.$m.txt" 2>&1 || true
	done
}

alive() { # alive PID: the process runs (a zombie, exited but not reaped, does not)
	local st
	st=$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null) || return 1
	[ -n "$st" ] && [ "$st" != Z ]
}

waitheld() { # waitheld TAG LIMIT_S: until r1 holds n, or fail
	local t0 i
	t0=$(now)
	for ((i = 0; ; i++)); do
		[ "$(held "$1")" -ge "$n" ] && return 0
		if ! alive "${r1pid[$1]}"; then
			echo "resync: $1's r1 (pid ${r1pid[$1]}) exited; the end of its log:" >&2
			tail -n 20 "$d/$1/r1.log" >&2
			snapshot "$1"
			return 1
		fi
		if [ "$(echo "$(now) - $t0 > $2" | bc)" = 1 ]; then
			echo "resync: $1's r1 holds $(held "$1") of $n filters after $2 s" >&2
			snapshot "$1"
			return 1
		fi
		sleep 0.2
	done
}

setup() { # setup TAG: the pair up, N installed at r2 and held at r1
	start "$1" r1 19
	r1pid[$1]=$last
	sleep 2
	empty[$1]=$(rss "$last")
	start "$1" r2 19 "127.0.0.1:${port[$1]}"
	r2pid[$1]=$last
	local t0
	t0=$(now)
	: >"$d/$1/sub.err"
	nice -n 19 "$d/$1/sift" sub --router "127.0.0.1:$((port[$1] + 1))" --certs "$d/certs" --filters "$d/keys.txt" \
		>/dev/null 2>"$d/$1/sub.err" &
	pids+=("$!")
	subpid[$1]=$!
	until grep -q "^ready" "$d/$1/sub.err"; do
		if ! kill -0 "${pids[-1]}" 2>/dev/null; then
			echo "resync: sift sub for $1 ended:" >&2
			cat "$d/$1/sub.err" >&2
			exit 1
		fi
		sleep 0.5
	done
	waitheld "$1" 600
	up[$1]=$(now)
	echo "$1 setup: $(grep '^ready' "$d/$1/sub.err") at r2 and held at r1 in $(printf %.1f "$(echo "$(now) - $t0" | bc)") s (niced, load $(cut -d' ' -f1-3 /proc/loadavg)); empty r1 ${empty[$1]} kB"
}

settle() { # settle TAG: until r1's link has been up longer than r2's redial backoff resets after
	local wait
	wait=$(echo "11 - ($(now) - ${up[$1]})" | bc)
	if [ "$(echo "$wait > 0" | bc)" = 1 ]; then sleep "$wait"; fi
}

resync() { # resync TAG: one measured resync of r1
	local p1=${r1pid[$1]} p2=${r2pid[$1]} before steady c2 t0 t1
	settle "$1"
	if ! alive "${subpid[$1]}"; then
		# r2 dropped the client's filters with its connection: r1 would
		# get none back, and the round would read as a resync that never
		# completed.
		echo "resync: $1's sift sub (pid ${subpid[$1]}) has ended; the end of its stderr:" >&2
		tail -n 5 "$d/$1/sub.err" >&2
		exit 1
	fi
	before=$(rss "$p1")
	echo 5 >"/proc/$p2/clear_refs"
	steady=$(rss "$p2")
	c2=$(cpu "$p2")
	t0=$(now)
	kill -9 "$p1"
	wait "$p1" 2>/dev/null || true
	start "$1" r1 0
	r1pid[$1]=$last
	waitheld "$1" 240
	t1=$(now)
	up[$1]=$t1
	echo "$1 $(date -u +%T) load $(cut -d' ' -f1 /proc/loadavg): resync $(printf %.2f "$(echo "$t1 - $t0" | bc)") s," \
		"r1 CPU $(cpu "$last") s, r2 CPU $(echo "$(cpu "$p2") - $c2" | bc) s," \
		"r2 peak/steady $(($(hwm "$p2") / 1024))/$((steady / 1024)) MB ($(echo "scale=2; $(hwm "$p2") / $steady" | bc)x)," \
		"r1 B/held filter above empty: before $(((before - empty[$1]) * 1024 / n)), after $((($(rss "$last") - empty[$1]) * 1024 / n))"
}

setup old
setup new
exec 9>"$lock"
echo "waiting for the lock at $(date -u +%T)"
flock 9
echo "lock held from $(date -u +%T), load $(cut -d' ' -f1-3 /proc/loadavg)"
for tag in old new; do
	renice -n 0 -p "${r2pid[$tag]}" "${subpid[$tag]}" >/dev/null
done
for ((r = 0; r < rounds; r++)); do
	resync old
	resync new
done
flock -u 9
