// Package httpbench measures the HTTP gateway (router/httpapi) of a real
// siftd process: JSON Lines publishing throughput, the memory each idle
// Server-Sent Events subscriber costs the router process, and aggregate
// delivery through many concurrent SSE streams. The subscribers and
// publishers run in the calling process, over loopback TCP; siftd's CPU
// time and memory are read from /proc and its /metrics, so the figures
// are the router's, not the load generator's. `sift bench http` is the
// command on top.
package httpbench
