package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/sift-pubsub/sift/match"
	"github.com/sift-pubsub/sift/match/bloom"
	"github.com/sift-pubsub/sift/router"
	"github.com/sift-pubsub/sift/router/certs"
	"github.com/sift-pubsub/sift/router/mesh"
	"github.com/spf13/pflag"
)

// options are siftd's settings: from the --config file, then flags.
type options struct {
	Name   string `json:"name"`
	Listen string `json:"listen"`
	Certs  string `json:"certs"`
	// TLSCert, TLSKey and TLSCA name the router's certificate, key and
	// CA bundle explicitly (instead of Certs' node.pem, node-key.pem and
	// ca.pem): all three or none.
	TLSCert string `json:"tls_cert"`
	TLSKey  string `json:"tls_key"`
	TLSCA   string `json:"tls_ca"`
	Data    string `json:"data"`
	Metrics string `json:"metrics"`
	// LogFormat is text or json; LogLevel debug, info, warn or error.
	LogFormat string `json:"log_format"`
	LogLevel  string `json:"log_level"`
	// Permissions is the permissions file (router/perm); reloaded on
	// SIGHUP.
	Permissions string   `json:"permissions"`
	Peers       []string `json:"peers"`
	Table       string   `json:"table"`
	// Merge turns on perfect merging of the filters forwarded to each
	// neighbour (router.Config.Merge).
	Merge bool `json:"merge"`

	// Durable delivery (durable.go).
	Pubends   []string `json:"pubends"`
	Members   []string `json:"members"`
	MaxRetain duration `json:"max_retain"`
	DropAfter duration `json:"drop_after"`
	// Replicas replicates the pubends named without a router on these
	// routers (docs/replication.md); ReplicaJoin says this router's store
	// was lost and its replicas must join anew.
	Replicas    []string `json:"replicas"`
	ReplicaJoin bool     `json:"replica_join"`
	// Forward is exact or bloom; BloomIndex sbstree or bftree.
	Forward    string `json:"forward"`
	BloomIndex string `json:"bloom_index"`
	// Client-assisted placement: RTO policy off|trust|majority|verify,
	// clients per vector under majority, and the FF fixed filters file
	// (one filter per line, as for sift match --subs).
	RTO        string `json:"rto"`
	RTOClients int    `json:"rto_clients"`
	FF         string `json:"ff"`
	fixed      []string
	// Advertise turns advertisements on (router.Config.Advertise); every
	// router of a mesh must agree.
	Advertise bool `json:"advertise"`
	// The HTTP gateway (http.go).
	httpOptions

	// Tuning, only in the config file; zero takes the router's default.
	Index                   string   `json:"index"`
	MaxLinks                int      `json:"max_links"`
	MaxSubscriptionsPerConn int      `json:"max_subscriptions_per_conn"`
	MaxFrame                int      `json:"max_frame"`
	SendQueue               int      `json:"send_queue"`
	ControlQueue            int      `json:"control_queue"`
	IdleTimeout             duration `json:"idle_timeout"`
	KeepAlive               duration `json:"keepalive"`
	HandshakeTimeout        duration `json:"handshake_timeout"`
	ShutdownGrace           duration `json:"shutdown_grace"`
	// Bloom parameters (--forward bloom); every linked router must agree.
	BloomM    uint   `json:"bloom_m"`
	BloomK    uint   `json:"bloom_k"`
	BloomSeed uint64 `json:"bloom_seed"`
	BloomFlat bool   `json:"bloom_flat"`

	configFile string
}

// duration reads a JSON string such as "30s".
type duration time.Duration

func (d *duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("a duration is a string such as \"30s\": %w", err)
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return err
	}
	*d = duration(v)
	return nil
}

// resolve reads the config file (if any) and lets every flag the user set
// override it; it checks the required settings.
func resolve(flags options, changed func(string) bool) (options, error) {
	opts := options{}
	if flags.configFile != "" {
		data, err := os.ReadFile(flags.configFile)
		if err != nil {
			return opts, fmt.Errorf("config: %w", err)
		}
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.DisallowUnknownFields() // a typo is an error naming the key
		if err := dec.Decode(&opts); err != nil {
			return opts, fmt.Errorf("config %s: %w", flags.configFile, err)
		}
	}
	override := func(name string, dst *string, v string) {
		if changed(name) || *dst == "" {
			*dst = v
		}
	}
	override("name", &opts.Name, flags.Name)
	override("listen", &opts.Listen, flags.Listen)
	override("certs", &opts.Certs, flags.Certs)
	override("tls-cert", &opts.TLSCert, flags.TLSCert)
	override("tls-key", &opts.TLSKey, flags.TLSKey)
	override("tls-ca", &opts.TLSCA, flags.TLSCA)
	override("data", &opts.Data, flags.Data)
	override("metrics", &opts.Metrics, flags.Metrics)
	override("permissions", &opts.Permissions, flags.Permissions)
	override("log-format", &opts.LogFormat, flags.LogFormat)
	override("log-level", &opts.LogLevel, flags.LogLevel)
	if changed("drain-timeout") || opts.ShutdownGrace == 0 {
		opts.ShutdownGrace = flags.ShutdownGrace
	}
	override("table", &opts.Table, flags.Table)
	override("forward", &opts.Forward, flags.Forward)
	override("bloom-index", &opts.BloomIndex, flags.BloomIndex)
	override("rto", &opts.RTO, flags.RTO)
	override("ff", &opts.FF, flags.FF)
	if changed("rto-clients") {
		opts.RTOClients = flags.RTOClients
	}
	if changed("advertise") {
		opts.Advertise = flags.Advertise
	}
	if changed("merge") {
		opts.Merge = flags.Merge
	}
	if changed("max-subscriptions-per-conn") {
		opts.MaxSubscriptionsPerConn = flags.MaxSubscriptionsPerConn
	}
	if err := opts.readFixed(); err != nil {
		return opts, err
	}
	if changed("peer") {
		opts.Peers = flags.Peers
	}
	if err := resolveDurable(&opts, flags, changed); err != nil {
		return opts, err
	}
	if err := resolveHTTP(&opts, flags, changed); err != nil {
		return opts, err
	}
	switch {
	case opts.Name == "":
		return opts, errors.New("--name is required")
	case opts.Certs == "" && opts.TLSCert == "" && opts.TLSKey == "" && opts.TLSCA == "":
		return opts, errors.New("--certs is required (or --tls-cert, --tls-key and --tls-ca)")
	case opts.Certs != "" && (opts.TLSCert != "" || opts.TLSKey != "" || opts.TLSCA != ""):
		return opts, errors.New("give either --certs or --tls-cert, --tls-key and --tls-ca, not both")
	case opts.Certs == "" && (opts.TLSCert == "" || opts.TLSKey == "" || opts.TLSCA == ""):
		return opts, errors.New("--tls-cert, --tls-key and --tls-ca go together: give all three")
	case opts.Data == "":
		return opts, errors.New("--data is required")
	case opts.MaxLinks < 0:
		return opts, fmt.Errorf("max_links %d is negative", opts.MaxLinks)
	case opts.MaxSubscriptionsPerConn < 0:
		return opts, fmt.Errorf("--max-subscriptions-per-conn %d is negative", opts.MaxSubscriptionsPerConn)
	}
	return opts, nil
}

// certPaths returns the files of the router's CA bundle, certificate and
// key: from --certs, or the explicit --tls-* paths.
func (o options) certPaths() certs.Paths {
	if o.Certs != "" {
		return certs.FolderPaths(o.Certs, certs.Node)
	}
	return certs.Paths{CA: o.TLSCA, Cert: o.TLSCert, Key: o.TLSKey}
}

// routerConfig maps the options onto router.Config (TLS, PeerTLS and
// Logger are set by the caller). siftd always takes router links: up to
// max_links (default mesh.DefaultMaxLinks).
func (o options) routerConfig() router.Config {
	maxLinks := o.MaxLinks
	if maxLinks == 0 {
		maxLinks = mesh.DefaultMaxLinks
	}
	return router.Config{
		MaxLinks:                maxLinks,
		Table:                   o.Table,
		Merge:                   o.Merge,
		Forward:                 o.Forward,
		Advertise:               o.Advertise,
		BloomIndex:              o.BloomIndex,
		Assist:                  router.AssistConfig{RTO: o.RTO, Clients: o.RTOClients, Fixed: o.fixed},
		Bloom:                   bloom.Params{M: o.BloomM, K: o.BloomK, Seed: o.BloomSeed, Flat: o.BloomFlat},
		Peers:                   o.Peers,
		Name:                    o.Name,
		Listen:                  o.Listen,
		DataDir:                 o.Data,
		Index:                   o.Index,
		MaxSubscriptionsPerConn: o.MaxSubscriptionsPerConn,
		MaxFrame:                o.MaxFrame,
		SendQueue:               o.SendQueue,
		ControlQueue:            o.ControlQueue,
		IdleTimeout:             time.Duration(o.IdleTimeout),
		KeepAlive:               time.Duration(o.KeepAlive),
		HandshakeTimeout:        time.Duration(o.HandshakeTimeout),
		ShutdownGrace:           time.Duration(o.ShutdownGrace),
	}
}

// addAssistFlags registers the client-assisted placement flags.
func addAssistFlags(f *pflag.FlagSet, flags *options) {
	f.StringVar(&flags.RTO, "rto", "off", "routing-table offloading to assisting clients (sift sub --assist): off, trust, majority or verify")
	f.IntVar(&flags.RTOClients, "rto-clients", 3, "assisting clients per vector under --rto majority")
	f.StringVar(&flags.FF, "ff", "", "fixed filters file for FF (one filter per line); assisting clients claim which cover theirs")
	addAdvertiseFlag(f, flags) // here rather than in main.go, which this change does not touch
}

// addAdvertiseFlag registers --advertise.
func addAdvertiseFlag(f *pflag.FlagSet, flags *options) {
	f.BoolVar(&flags.Advertise, "advertise", false, "advertisements: plain subscriptions travel only toward publishers that advertised overlapping content (sift pub --advertise), and plain events outside a publisher's advertisements are refused; every linked router must agree (a link to a router that disagrees is refused at hello). Durable delivery is unaffected: durable subscriptions reach pubends by the durable protocol and durable publishers do not advertise")
}

// readFixed loads the FF fixed filters file, if any.
func (o *options) readFixed() error {
	if o.FF == "" {
		return nil
	}
	file, err := os.Open(o.FF)
	if err != nil {
		return fmt.Errorf("--ff: %w", err)
	}
	defer file.Close()
	fs, err := match.ReadSubscriptions(file)
	if err != nil {
		return fmt.Errorf("--ff %s: %w", o.FF, err)
	}
	o.fixed = make([]string, len(fs))
	for i, f := range fs {
		o.fixed[i] = f.String()
	}
	return nil
}
