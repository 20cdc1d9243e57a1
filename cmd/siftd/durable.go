package main

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/sift-pubsub/sift/router"
	"github.com/spf13/pflag"
)

// addDurableFlags registers the durable delivery flags.
func addDurableFlags(f *pflag.FlagSet, o *options) {
	f.StringArrayVar(&o.Pubends, "pubend", nil,
		"a pubend, NAME (hosted here) or NAME=ROUTER (repeatable; default: one pubend named after this router, hosted here). Routers learn every other router's pubends through their links; NAME=ROUTER overrides what they learn")
	f.StringArrayVar(&o.Members, "member", nil,
		"a router whose SHB the pubends hosted here wait for from the start (repeatable). Not needed in a mesh: they wait for every router they learn of through the links, and release a tick once every durable subscriber has it")
	f.DurationVar((*time.Duration)(&o.MaxRetain), "max-retain", 0,
		"early release: ticks older than this, delivered to every up-to-date durable subscriber, are released even if a disconnected one has not acknowledged them (0: off)")
	f.StringSliceVar(&o.Replicas, "replicas", nil,
		"replicate the pubends named by --pubend NAME (without a router) on these routers, comma-separated, this one among them: each runs a replica (Raft), the leader hosts the pubend, and a durable publish is acknowledged once a majority of them synced it (docs/replication.md)")
	f.BoolVar(&o.ReplicaJoin, "replica-join", false,
		"this router's data folder was lost (or it is new): its replicas join the others under fresh ids instead of starting new pubends (with a data folder that holds them, it changes nothing)")
	f.DurationVar((*time.Duration)(&o.DropAfter), "drop-after", 0,
		"pubends hosted here stop waiting for a member whose SHB sent no release report for this long; its subscribers get gaps for what is released meanwhile (0: never)")
}

// resolveDurable lets the durable flags the user set override the config
// file, and checks them.
func resolveDurable(opts *options, flags options, changed func(string) bool) error {
	if changed("pubend") {
		opts.Pubends = flags.Pubends
	}
	if changed("member") {
		opts.Members = flags.Members
	}
	if changed("max-retain") {
		opts.MaxRetain = flags.MaxRetain
	}
	if changed("drop-after") {
		opts.DropAfter = flags.DropAfter
	}
	if changed("replicas") {
		opts.Replicas = flags.Replicas
	}
	if changed("replica-join") {
		opts.ReplicaJoin = flags.ReplicaJoin
	}
	if opts.Name == "" {
		return nil // resolve reports the missing name
	}
	if opts.MaxRetain < 0 {
		return fmt.Errorf("--max-retain %v is negative", time.Duration(opts.MaxRetain))
	}
	if opts.DropAfter < 0 {
		return fmt.Errorf("--drop-after %v is negative", time.Duration(opts.DropAfter))
	}
	_, err := opts.durableConfig()
	return err
}

// durableConfig maps the durable options onto router.DurableConfig:
// every pubend named with its router (this one when no router is given),
// by default a single pubend named after this router.
func (o options) durableConfig() (*router.DurableConfig, error) {
	pubends := map[string]string{}
	specs := o.Pubends
	if len(specs) == 0 {
		specs = []string{o.Name}
	}
	for _, spec := range specs {
		name, host, found := strings.Cut(spec, "=")
		if !found {
			host = o.Name
		}
		if name == "" || host == "" {
			return nil, fmt.Errorf("--pubend %q: want NAME or NAME=ROUTER", spec)
		}
		if old, ok := pubends[name]; ok && old != host {
			return nil, fmt.Errorf("--pubend %s: hosted by both %s and %s", name, old, host)
		}
		pubends[name] = host
	}
	for _, m := range o.Members {
		if m == "" {
			return nil, fmt.Errorf("--member: empty router name")
		}
	}
	var replicas map[string][]string
	if len(o.Replicas) > 0 {
		if len(o.Pubends) == 0 {
			return nil, fmt.Errorf("--replicas needs --pubend NAME: every replica must name the same pubend")
		}
		if !slices.Contains(o.Replicas, o.Name) {
			return nil, fmt.Errorf("--replicas %s: this router (%s) must be one of them", strings.Join(o.Replicas, ","), o.Name)
		}
		if slices.Contains(o.Replicas, "") || len(slices.Compact(slices.Sorted(slices.Values(o.Replicas)))) != len(o.Replicas) {
			return nil, fmt.Errorf("--replicas %s: want distinct router names", strings.Join(o.Replicas, ","))
		}
		replicas = map[string][]string{}
		for _, spec := range specs {
			if !strings.Contains(spec, "=") {
				replicas[spec] = slices.Clone(o.Replicas)
				delete(pubends, spec)
			}
		}
	}
	return &router.DurableConfig{Pubends: pubends, Members: o.Members, MaxRetain: time.Duration(o.MaxRetain),
		DropAfter: time.Duration(o.DropAfter), Replicas: replicas, ReplicaJoin: o.ReplicaJoin}, nil
}
