package main

import (
	"context"
	"log/slog"
	"os"
	"time"

	"github.com/sift-pubsub/sift/router"
	"github.com/sift-pubsub/sift/router/certs"
	"github.com/sift-pubsub/sift/router/perm"
)

// onReload calls do on every SIGHUP received on hup until the returned
// stop is called.
func onReload(log *slog.Logger, hup <-chan os.Signal, do func()) (stop func()) {
	done := make(chan struct{})
	go func() {
		for {
			select {
			case <-hup:
				log.Info("reloading on SIGHUP")
				do()
			case <-done:
				return
			}
		}
	}()
	return func() { close(done) }
}

// reload reads the certificates and the permissions file (if any)
// again. New handshakes use the new certificates; an open connection
// whose peer's certificate the new CA bundle refuses is closed
// (router.Revalidate; the HTTP gateway's connections through conns), every
// other stays. New permissions apply to every request from then on;
// subscriptions already installed stay. Each part that fails to reload
// keeps what it had and says why.
func reload(log *slog.Logger, store *certs.Store, permFile string, r *router.Router, conns *httpConns) {
	if err := store.Reload(); err != nil {
		log.Error("reload failed: certificates kept", "err", err)
	} else {
		cur := store.Current()
		log.Info("certificates reloaded", "identity", cur.Identity.String(), "serial", cur.Cert.Leaf.SerialNumber.Text(16), "not_after", cur.Cert.Leaf.NotAfter)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		n, err := r.Revalidate(ctx, store.VerifyPeer) // open connections of revoked certificates
		cancel()
		if err != nil {
			log.Error("revalidating open connections", "err", err)
		} else if n > 0 {
			log.Warn("closed connections whose certificates the reloaded CA bundle refuses", "closed", n)
		}
		if n := conns.revalidate(store.VerifyPeer); n > 0 {
			log.Warn("closed HTTP connections whose certificates the reloaded CA bundle refuses", "closed", n)
		}
	}
	if permFile == "" {
		return
	}
	t, err := perm.Load(permFile)
	if err != nil {
		log.Error("reload failed: permissions kept", "err", err)
		return
	}
	r.SetPermissions(t)
	log.Info("permissions reloaded", "file", permFile, "clients", len(t.Clients()))
}
