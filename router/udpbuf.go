package router

import (
	"log/slog"
	"os"
	"strconv"
	"strings"
	"sync"
)

// wantUDPBuffer is the socket buffer size quic-go asks for (7 MiB, see
// https://github.com/quic-go/quic-go/wiki/UDP-Buffer-Sizes).
const wantUDPBuffer = 7 << 20

var udpAdviceOnce sync.Once

// adviseUDPBuffers logs, once per process, how to raise the kernel's UDP
// buffer limits when they are below what quic-go wants. Reading the limits
// is Linux-only; elsewhere it stays silent.
func adviseUDPBuffers(log *slog.Logger) {
	udpAdviceOnce.Do(func() {
		rmem, rok := readSysctl("/proc/sys/net/core/rmem_max")
		wmem, wok := readSysctl("/proc/sys/net/core/wmem_max")
		if (rok && rmem < wantUDPBuffer) || (wok && wmem < wantUDPBuffer) {
			log.Warn("UDP buffer limits are below what QUIC wants; throughput may suffer",
				"rmem_max", rmem, "wmem_max", wmem, "want", wantUDPBuffer,
				"fix", "sysctl -w net.core.rmem_max=7500000 net.core.wmem_max=7500000",
				"see", "https://github.com/quic-go/quic-go/wiki/UDP-Buffer-Sizes")
		}
	})
}

func readSysctl(path string) (int, bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, false
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	return n, err == nil
}
