package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestResolve: the config file supplies settings, set flags override them,
// required settings are checked; --peer and --table reach the router.
func TestResolve(t *testing.T) {
	cfgFile := filepath.Join(t.TempDir(), "siftd.json")
	os.WriteFile(cfgFile, []byte(`{"name":"from-file","listen":"127.0.0.1:9000","certs":"c","data":"d",
		"index":"scan","max_subscriptions_per_conn":5,"idle_timeout":"45s"}`), 0o644)
	set := map[string]bool{"name": true}
	opts, err := resolve(options{Name: "from-flag", Listen: "127.0.0.1:4433", configFile: cfgFile}, func(n string) bool { return set[n] })
	if err != nil {
		t.Fatal(err)
	}
	cfg := opts.routerConfig()
	if cfg.Name != "from-flag" || cfg.Listen != "127.0.0.1:9000" || cfg.Index != "scan" ||
		cfg.MaxSubscriptionsPerConn != 5 || cfg.IdleTimeout != 45*time.Second || cfg.DataDir != "d" {
		t.Fatalf("resolved %+v", cfg)
	}
	none := func(string) bool { return false }
	for _, c := range []struct {
		flags options
		want  string
	}{
		{options{Certs: "c", Data: "d"}, "--name is required"},
		{options{Name: "n", Data: "d"}, "--certs is required"},
		{options{Name: "n", Certs: "c"}, "--data is required"},
	} {
		if _, err := resolve(c.flags, none); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.flags, err, c.want)
		}
	}
	opts, err = resolve(options{Name: "n", Certs: "c", Data: "d", Peers: []string{"h:1"}, Table: "forest"}, func(n string) bool { return n == "peer" })
	if err != nil {
		t.Fatal(err)
	}
	if cfg := opts.routerConfig(); len(cfg.Peers) != 1 || cfg.Peers[0] != "h:1" || cfg.Table != "forest" || cfg.MaxLinks != 8 {
		t.Errorf("--peer h:1 --table forest: %+v", cfg)
	}
	os.WriteFile(cfgFile, []byte(`{"name":"n","certs":"c","data":"d","merge":true}`), 0o644)
	if opts, err := resolve(options{configFile: cfgFile}, none); err != nil || !opts.routerConfig().Merge {
		t.Errorf(`{"merge":true}: merge %v, err %v; want merge on`, opts.routerConfig().Merge, err)
	}
	if opts, err := resolve(options{configFile: cfgFile, Merge: false}, func(n string) bool { return n == "merge" }); err != nil || opts.routerConfig().Merge {
		t.Errorf(`{"merge":true} --merge=false: merge %v, err %v; want the flag to win`, opts.routerConfig().Merge, err)
	}
	os.WriteFile(cfgFile, []byte(`{"name":"n","certs":"c","data":"d","max_subscriptions_per_conn":5}`), 0o644)
	if opts, err := resolve(options{configFile: cfgFile, MaxSubscriptionsPerConn: 7}, func(n string) bool { return n == "max-subscriptions-per-conn" }); err != nil || opts.routerConfig().MaxSubscriptionsPerConn != 7 {
		t.Errorf(`{"max_subscriptions_per_conn":5} --max-subscriptions-per-conn 7: %v, err %v; want the flag's 7`, opts.routerConfig().MaxSubscriptionsPerConn, err)
	}
	if _, err := resolve(options{Name: "n", Certs: "c", Data: "d", MaxSubscriptionsPerConn: -1}, func(n string) bool { return n == "max-subscriptions-per-conn" }); err == nil || !strings.Contains(err.Error(), "negative") {
		t.Errorf("--max-subscriptions-per-conn -1: %v, want an error", err)
	}
	os.WriteFile(cfgFile, []byte(`{"idle_timeout": 30}`), 0o644)
	if _, err := resolve(options{configFile: cfgFile}, none); err == nil || !strings.Contains(err.Error(), "duration") {
		t.Errorf("bad duration: %v", err)
	}
}

// TestResolveDurable: the durable settings come from the config file,
// flags override them, negative durations are refused, and they reach
// router.DurableConfig.
func TestResolveDurable(t *testing.T) {
	cfgFile := filepath.Join(t.TempDir(), "siftd.json")
	os.WriteFile(cfgFile, []byte(`{"name":"r1","certs":"c","data":"d","max_retain":"5s","drop_after":"1m",
		"members":["r1","r2"],"pubends":["trades","quotes=r2"]}`), 0o644)
	none := func(string) bool { return false }
	opts, err := resolve(options{configFile: cfgFile}, none)
	if err != nil {
		t.Fatal(err)
	}
	dc, err := opts.durableConfig()
	if err != nil {
		t.Fatal(err)
	}
	if dc.MaxRetain != 5*time.Second || dc.DropAfter != time.Minute || dc.Pubends["trades"] != "r1" ||
		dc.Pubends["quotes"] != "r2" || len(dc.Members) != 2 {
		t.Fatalf("durable config %+v", dc)
	}
	set := map[string]bool{"drop-after": true}
	opts, err = resolve(options{configFile: cfgFile, DropAfter: duration(2 * time.Second)}, func(n string) bool { return set[n] })
	if err != nil {
		t.Fatal(err)
	}
	if dc, _ := opts.durableConfig(); dc.DropAfter != 2*time.Second {
		t.Errorf("--drop-after 2s over the file's 1m: %v", dc.DropAfter)
	}
	set = map[string]bool{"drop-after": true}
	if _, err := resolve(options{configFile: cfgFile, DropAfter: duration(-time.Second)}, func(n string) bool { return set[n] }); err == nil ||
		!strings.Contains(err.Error(), "--drop-after") {
		t.Errorf("negative --drop-after: %v", err)
	}
}

// TestDurableReplicas: --replicas replicates the pubends named without a
// router on the routers listed (this one among them), leaves NAME=ROUTER
// pubends alone, and refuses a list without this router, with duplicates,
// or without --pubend.
func TestDurableReplicas(t *testing.T) {
	opts := options{Name: "r1", Pubends: []string{"trades", "quotes=r9"}, Replicas: []string{"r1", "r2", "r3"}, ReplicaJoin: true}
	dc, err := opts.durableConfig()
	if err != nil {
		t.Fatal(err)
	}
	if got := dc.Replicas["trades"]; len(got) != 3 || got[0] != "r1" || got[2] != "r3" || !dc.ReplicaJoin {
		t.Fatalf("replicas %v join %v", dc.Replicas, dc.ReplicaJoin)
	}
	if _, hosted := dc.Pubends["trades"]; hosted || dc.Pubends["quotes"] != "r9" {
		t.Fatalf("pubends %v", dc.Pubends)
	}
	for _, bad := range []options{
		{Name: "r1", Pubends: []string{"trades"}, Replicas: []string{"r2", "r3"}},
		{Name: "r1", Pubends: []string{"trades"}, Replicas: []string{"r1", "r2", "r2"}},
		{Name: "r1", Replicas: []string{"r1", "r2", "r3"}},
	} {
		if _, err := bad.durableConfig(); err == nil {
			t.Errorf("%+v: accepted", bad)
		}
	}
}
