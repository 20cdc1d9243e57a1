package lossy

import (
	"encoding/binary"
	"net"
	"testing"
	"time"
)

// TestRelayKeepsOrderWithoutJitter: with a delay and no jitter every
// datagram waits the same time, so a burst leaves in the order it came,
// as under netem; only jitter reorders.
func TestRelayKeepsOrderWithoutJitter(t *testing.T) {
	sink, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer sink.Close()
	r := start(t, sink.LocalAddr().String(), Config{Delay: 2 * time.Millisecond})
	c := client(t, r)
	const burst = 300
	for i := range burst {
		c.Write(binary.BigEndian.AppendUint32(nil, uint32(i)))
	}
	buf := make([]byte, 16)
	last, got := -1, 0
	for {
		sink.SetReadDeadline(time.Now().Add(time.Second))
		n, err := sink.Read(buf)
		if err != nil {
			break // all in, or the rest lost by the kernel
		}
		i := int(binary.BigEndian.Uint32(buf[:n]))
		if i < last {
			t.Fatalf("datagram %d arrived after %d: reordered without jitter", i, last)
		}
		last = i
		got++
	}
	if got < burst/2 {
		t.Fatalf("only %d of %d datagrams arrived", got, burst)
	}
}
