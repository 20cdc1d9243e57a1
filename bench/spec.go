package bench

import (
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/sift-pubsub/sift/bench/workload"
	"github.com/sift-pubsub/sift/match"
)

// The workload kinds.
const (
	KindHEM   = "hem"
	KindStock = "stock"
	KindFiles = "files"
)

// Spec says which workload to run: a generated one (hem or stock, with
// their configurations and a seed) or one read from files in the match
// file formats. Knobs change it by name, which is how sweeps vary it.
type Spec struct {
	// Kind is KindHEM, KindStock or KindFiles.
	Kind string
	// Seed seeds the generators.
	Seed uint64
	// HEM configures the hem workload.
	HEM workload.HEMConfig
	// Stock configures the stock workload.
	Stock workload.StockConfig
	// SubsFile and EventsFile are the files of the files workload.
	SubsFile, EventsFile string
	// Subs and Events, when positive, keep only the first Subs
	// subscriptions and Events events of the files workload.
	Subs, Events int
}

// knob is one named, settable parameter of a workload kind.
type knob struct {
	name, help string
	set        func(s *Spec, v string) error
	get        func(s Spec) string
}

func intKnob(name, help string, field func(s *Spec) *int) knob {
	return knob{
		name: name, help: help,
		set: func(s *Spec, v string) error {
			n, err := strconv.Atoi(strings.ReplaceAll(v, "_", ""))
			if err != nil || n < 0 {
				return fmt.Errorf("%s: %q is not a non-negative integer", name, v)
			}
			*field(s) = n
			return nil
		},
		get: func(s Spec) string { return strconv.Itoa(*field(&s)) },
	}
}

func floatKnob(name, help string, field func(s *Spec) *float64) knob {
	return knob{
		name: name, help: help,
		set: func(s *Spec, v string) error {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil || f < 0 {
				return fmt.Errorf("%s: %q is not a non-negative number", name, v)
			}
			*field(s) = f
			return nil
		},
		get: func(s Spec) string { return strconv.FormatFloat(*field(&s), 'g', -1, 64) },
	}
}

// knobs lists the knobs of each workload kind; Resolved values are
// reported, so every knob reads back its effective default.
var knobs = map[string][]knob{
	KindHEM: {
		intKnob("subs", "subscriptions", func(s *Spec) *int { return &s.HEM.Subscriptions }),
		intKnob("events", "events", func(s *Spec) *int { return &s.HEM.Events }),
		intKnob("attrs", "attributes", func(s *Spec) *int { return &s.HEM.Attributes }),
		intKnob("preds", "predicates per subscription", func(s *Spec) *int { return &s.HEM.Predicates }),
		floatKnob("width", "predicate width, fraction of the domain", func(s *Spec) *float64 { return &s.HEM.Width }),
		knob{
			name: "domain", help: "number of values per attribute",
			set: func(s *Spec, v string) error {
				n, err := strconv.ParseInt(strings.ReplaceAll(v, "_", ""), 10, 64)
				if err != nil || n < 0 {
					return fmt.Errorf("domain: %q is not a non-negative integer", v)
				}
				s.HEM.Domain = n
				return nil
			},
			get: func(s Spec) string { return strconv.FormatInt(s.HEM.Domain, 10) },
		},
		intKnob("event-attrs", "attributes per event", func(s *Spec) *int { return &s.HEM.EventAttributes }),
		floatKnob("attr-skew", "Zipf skew of attributes", func(s *Spec) *float64 { return &s.HEM.AttrSkew }),
		floatKnob("value-skew", "Zipf skew of values", func(s *Spec) *float64 { return &s.HEM.ValueSkew }),
		floatKnob("eq-share", "share of equality predicates (the rest are ranges)", func(s *Spec) *float64 { return &s.HEM.EqualityShare }),
	},
	KindStock: {
		intKnob("subs", "subscriptions", func(s *Spec) *int { return &s.Stock.Subscriptions }),
		intKnob("events", "events", func(s *Spec) *int { return &s.Stock.Events }),
		intKnob("symbols", "listed symbols", func(s *Spec) *int { return &s.Stock.Symbols }),
		floatKnob("symbol-skew", "Zipf skew of symbol popularity", func(s *Spec) *float64 { return &s.Stock.SymbolSkew }),
		floatKnob("volatility", "price standard deviation, fraction of the base price", func(s *Spec) *float64 { return &s.Stock.Volatility }),
	},
	KindFiles: {
		intKnob("subs", "first subscriptions of the file kept (0: all)", func(s *Spec) *int { return &s.Subs }),
		intKnob("events", "first events of the file kept (0: all)", func(s *Spec) *int { return &s.Events }),
	},
}

// Kinds returns the workload kinds.
func Kinds() []string { return []string{KindHEM, KindStock, KindFiles} }

// KnobNames returns the knobs of a workload kind, in a stable order.
func KnobNames(kind string) []string {
	var names []string
	for _, k := range knobs[kind] {
		names = append(names, k.name)
	}
	return names
}

func (s Spec) knob(name string) (knob, error) {
	ks, ok := knobs[s.Kind]
	if !ok {
		return knob{}, fmt.Errorf("unknown workload %q (valid: %s)", s.Kind, strings.Join(Kinds(), ", "))
	}
	i := slices.IndexFunc(ks, func(k knob) bool { return k.name == name })
	if i < 0 {
		return knob{}, fmt.Errorf("workload %s has no knob %q (valid: %s)", s.Kind, name, strings.Join(KnobNames(s.Kind), ", "))
	}
	return ks[i], nil
}

// Set changes one knob by name; on error s is unchanged.
func (s *Spec) Set(name, value string) error {
	k, err := s.knob(name)
	if err != nil {
		return err
	}
	c := *s
	if err := k.set(&c, value); err != nil {
		return err
	}
	*s = c
	return nil
}

// Params returns every knob of the kind with its effective value
// (defaults filled in), in knob order, plus the seed or the file names.
func (s Spec) Params() []Param {
	r := s
	r.HEM = s.HEM.Resolved()
	r.Stock = s.Stock.Resolved()
	var ps []Param
	for _, k := range knobs[s.Kind] {
		ps = append(ps, Param{Name: k.name, Value: k.get(r)})
	}
	if s.Kind == KindFiles {
		return append(ps, Param{"subs-file", s.SubsFile}, Param{"events-file", s.EventsFile})
	}
	return append(ps, Param{"seed", strconv.FormatUint(s.Seed, 10)})
}

// Param is one named parameter of a workload, as reported.
type Param struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// Validate reports why the spec cannot be generated, without generating.
func (s Spec) Validate() error {
	switch s.Kind {
	case KindHEM:
		return s.HEM.Validate()
	case KindStock:
		return s.Stock.Validate()
	case KindFiles:
		if s.SubsFile == "" || s.EventsFile == "" {
			return fmt.Errorf("files workload: both a subscriptions file and an events file are needed")
		}
		return nil
	}
	return fmt.Errorf("unknown workload %q (valid: %s)", s.Kind, strings.Join(Kinds(), ", "))
}

// Generate returns the workload the spec describes.
func (s Spec) Generate() (workload.Workload, error) {
	if err := s.Validate(); err != nil {
		return workload.Workload{}, err
	}
	switch s.Kind {
	case KindHEM:
		return workload.HEM(s.HEM, s.Seed)
	case KindStock:
		return workload.Stock(s.Stock, s.Seed)
	}
	return s.readFiles()
}

// readFiles reads the files workload, keeping the first Subs and Events
// and reading no further. The filters come from a streaming reader, which
// keeps none of the file's text (see match.SubscriptionReader).
func (s Spec) readFiles() (workload.Workload, error) {
	filters, err := readFile(s.SubsFile, s.Subs, func(r io.Reader) func() (match.Filter, error) {
		return match.NewSubscriptionReader(r).Next
	})
	if err != nil {
		return workload.Workload{}, err
	}
	events, err := readFile(s.EventsFile, s.Events, func(r io.Reader) func() (match.Event, error) {
		return match.NewEventReader(r).Next
	})
	if err != nil {
		return workload.Workload{}, err
	}
	return workload.Workload{Filters: filters, Events: events}, nil
}

// readFile reads up to limit items (all for limit <= 0) of path with the
// reader next returns.
func readFile[T any](path string, limit int, reader func(r io.Reader) func() (T, error)) ([]T, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("files workload: %w", err)
	}
	defer f.Close()
	next := reader(f)
	var out []T
	for limit <= 0 || len(out) < limit {
		v, err := next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("files workload: %s: %w", path, err)
		}
		out = append(out, v)
	}
	return out, nil
}
