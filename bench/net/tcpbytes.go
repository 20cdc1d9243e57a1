package netbench

import (
	"bufio"
	"context"
	"fmt"
	"net/netip"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// TCPBytesSent returns the bytes sent, as the kernel counts them
// (tcp_info bytes_sent: TCP payload, retransmissions included), by every
// established loopback TCP socket whose local or remote port is one of
// ports. Both ends of a connection between two such sockets appear, and
// each byte is counted once, by its sender. It runs ss(8) from iproute2.
func TCPBytesSent(ports []uint16) (int64, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "ss", "-tinH", "state", "established").Output()
	if err != nil {
		return 0, fmt.Errorf("ss: %w", err)
	}
	return parseSSBytesSent(string(out), ports)
}

// parseSSBytesSent sums bytes_sent over the sockets of `ss -tinH state
// established` output whose local or peer port is in ports. A socket line
// starts in the first column (Recv-Q Send-Q Local Peer); its tcp_info
// follows on indented lines.
func parseSSBytesSent(out string, ports []uint16) (int64, error) {
	want := map[uint16]bool{}
	for _, p := range ports {
		want[p] = true
	}
	var total int64
	selected := false
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" {
			continue
		}
		if line[0] != ' ' && line[0] != '\t' {
			f := strings.Fields(line)
			if len(f) < 4 {
				return 0, fmt.Errorf("ss: unexpected socket line %q", line)
			}
			selected = hasPort(f[len(f)-2], want) || hasPort(f[len(f)-1], want)
			continue
		}
		if !selected {
			continue
		}
		for _, field := range strings.Fields(line) {
			if v, ok := strings.CutPrefix(field, "bytes_sent:"); ok {
				n, err := strconv.ParseInt(v, 10, 64)
				if err != nil {
					return 0, fmt.Errorf("ss: %q: %w", field, err)
				}
				total += n
			}
		}
	}
	return total, sc.Err()
}

func hasPort(addr string, want map[uint16]bool) bool {
	ap, err := netip.ParseAddrPort(strings.ReplaceAll(addr, "%lo", ""))
	return err == nil && want[ap.Port()]
}
