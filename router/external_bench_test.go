package router_test

import (
	"context"
	"testing"

	"github.com/sift-pubsub/sift/router/certs"
	"github.com/sift-pubsub/sift/router/client"
)

// externalDialer returns a dialFunc that connects clients to an external
// router at addr with the client certificate in certDir.
func externalDialer(b *testing.B, certDir string) func(addr string) dialFunc {
	cl, err := certs.Load(certDir, certs.Client)
	if err != nil {
		b.Fatal(err)
	}
	return func(addr string) dialFunc {
		return func(ctx context.Context, name string, opts client.Options) (*client.Client, error) {
			opts.TLS, opts.Name = cl.ClientConfig(), name
			return client.Dial(ctx, addr, opts)
		}
	}
}
