# lib.sh holds what the process benchmarks (install.sh, resync.sh) share:
# building a revision's binaries and reading a process's memory and CPU.
# Source it after setting d (the work directory).

tick=$(getconf CLK_TCK)

build() { # build TAG REV: siftd and sift of git revision REV in $d/TAG
	mkdir -p "$d/$1/src"
	git archive "$2" | tar -x -C "$d/$1/src"
	(cd "$d/$1/src" && nice -n 19 go build -trimpath -o "$d/$1/siftd" ./cmd/siftd && nice -n 19 go build -trimpath -o "$d/$1/sift" ./cmd/sift)
	echo "$1 = $(git rev-parse --short "$2")"
}

rss() { awk '/^VmRSS/ {print $2}' "/proc/$1/status"; }                        # kB
hwm() { awk '/^VmHWM/ {print $2}' "/proc/$1/status"; }                        # kB
cpu() { awk -v t="$tick" '{printf "%.2f", ($14 + $15) / t}' "/proc/$1/stat"; } # s
now() { date +%s.%N; }
