package main

import (
	"log/slog"
	"os"

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
// again. Open connections keep their certificates; new handshakes use the
// new ones. New permissions apply to every request from then on;
// subscriptions already installed stay. Each part that fails to reload
// keeps what it had and says why.
func reload(log *slog.Logger, store *certs.Store, permFile string, r *router.Router) {
	if err := store.Reload(); err != nil {
		log.Error("reload failed: certificates kept", "err", err)
	} else {
		cur := store.Current()
		log.Info("certificates reloaded", "identity", cur.Identity.String(), "serial", cur.Cert.Leaf.SerialNumber.Text(16), "not_after", cur.Cert.Leaf.NotAfter)
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
