package main

import (
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/sift-pubsub/sift/router/certs"
)

// onReload calls do on every SIGHUP until the returned stop is called.
// SIGHUP no longer ends siftd.
func onReload(log *slog.Logger, do func()) (stop func()) {
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
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
	return func() {
		signal.Stop(hup)
		close(done)
	}
}

// reload reads the certificates again. Open connections keep theirs;
// new handshakes use the new ones. A failed reload keeps everything as
// it was and says why.
func reload(log *slog.Logger, store *certs.Store) {
	if err := store.Reload(); err != nil {
		log.Error("reload failed: certificates kept", "err", err)
		return
	}
	cur := store.Current()
	log.Info("certificates reloaded", "identity", cur.Identity.String(), "serial", cur.Cert.Leaf.SerialNumber.Text(16), "not_after", cur.Cert.Leaf.NotAfter)
}
