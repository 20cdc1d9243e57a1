package netbench

import "testing"

// A captured `ss -tinH state established` output: two ends of a client
// connection to port 4222, one route between 6222 and 41000, and an
// unrelated socket.
const ssSample = `0      0              127.0.0.1:4222          127.0.0.1:51000
	 cubic wscale:7,7 rto:201 rtt:0.02/0.01 mss:32768 bytes_sent:1000 bytes_acked:1001 bytes_received:50 segs_out:4
0      0              127.0.0.1:51000         127.0.0.1:4222
	 cubic wscale:7,7 rto:201 bytes_sent:50 bytes_acked:51 bytes_received:1000
0      0              127.0.0.1:41000         127.0.0.1:6222
	 cubic bytes_sent:7 bytes_received:9
0      0                  [::1]:8080              [::1]:33333
	 cubic bytes_sent:123456 bytes_received:1
`

func TestParseSSBytesSent(t *testing.T) {
	for _, tc := range []struct {
		ports []uint16
		want  int64
	}{
		{[]uint16{4222}, 1050},
		{[]uint16{4222, 6222}, 1057},
		{[]uint16{8080}, 123456},
		{[]uint16{9999}, 0},
	} {
		got, err := parseSSBytesSent(ssSample, tc.ports)
		if err != nil || got != tc.want {
			t.Errorf("ports %v: got %d, %v; want %d", tc.ports, got, err, tc.want)
		}
	}
	if _, err := parseSSBytesSent("garbage\n", []uint16{1}); err == nil {
		t.Error("a malformed socket line was accepted")
	}
}
