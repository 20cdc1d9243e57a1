package router

import (
	"crypto/tls"
	"testing"
)

// TestDefaultTable: an empty Config.Table is the shallow table, or the
// poset when RTO or fixed filters are on; a table given is kept, and the
// shallow table with RTO is still refused.
func TestDefaultTable(t *testing.T) {
	for _, tc := range []struct {
		table, rto string
		fixed      []string
		want       string
	}{
		{"", "", nil, "shallow"},
		{"", "verify", nil, "poset"},
		{"", "", []string{"price > 10"}, "poset"},
		{"forest", "", nil, "forest"},
		{"poset", "", nil, "poset"},
		{"forest", "trust", nil, "forest"},
	} {
		cfg := Config{Name: "r", TLS: &tls.Config{}, DataDir: t.TempDir(), MaxLinks: 2, Table: tc.table, Assist: AssistConfig{RTO: tc.rto, Fixed: tc.fixed}}
		got, err := cfg.withDefaults()
		if err != nil {
			t.Fatalf("%+v: %v", tc, err)
		}
		if got.Table != tc.want {
			t.Errorf("table %q, rto %q, fixed %q: %q, want %q", tc.table, tc.rto, tc.fixed, got.Table, tc.want)
		}
	}
	if _, err := (Config{Name: "r", TLS: &tls.Config{}, DataDir: t.TempDir(), MaxLinks: 2, Table: "shallow", Assist: AssistConfig{RTO: "verify"}}).withDefaults(); err == nil {
		t.Fatal("the shallow table with RTO accepted")
	}
}
