package bench

import (
	"fmt"
	"strings"
)

// Sweep varies one knob over several values.
type Sweep struct {
	Knob   string
	Values []string
}

// ParseSweep reads `KNOB=v1,v2,...`.
func ParseSweep(s string) (Sweep, error) {
	knob, vals, ok := strings.Cut(s, "=")
	knob = strings.TrimSpace(knob)
	if !ok || knob == "" || strings.TrimSpace(vals) == "" {
		return Sweep{}, fmt.Errorf("sweep %q: want KNOB=V1[,V2]", s)
	}
	sw := Sweep{Knob: knob}
	for _, v := range strings.Split(vals, ",") {
		v = strings.TrimSpace(v)
		if v == "" {
			return Sweep{}, fmt.Errorf("sweep %q: empty value", s)
		}
		sw.Values = append(sw.Values, v)
	}
	return sw, nil
}

// grid returns every combination of the sweeps' values (the first sweep
// varying slowest) applied to base, with the swept values of each point.
// It checks every knob and value before returning.
func grid(base Spec, sweeps []Sweep) ([]Spec, [][]Param, error) {
	specs, params := []Spec{base}, [][]Param{nil}
	seen := make(map[string]bool)
	for _, sw := range sweeps {
		if seen[sw.Knob] {
			return nil, nil, fmt.Errorf("knob %q swept twice", sw.Knob)
		}
		seen[sw.Knob] = true
		var nextSpecs []Spec
		var nextParams [][]Param
		for i, s := range specs {
			for _, v := range sw.Values {
				c := s
				if err := c.Set(sw.Knob, v); err != nil {
					return nil, nil, fmt.Errorf("sweep: %w", err)
				}
				if err := c.Validate(); err != nil {
					return nil, nil, fmt.Errorf("sweep %s=%s: %w", sw.Knob, v, err)
				}
				nextSpecs = append(nextSpecs, c)
				nextParams = append(nextParams, append(append([]Param(nil), params[i]...), Param{sw.Knob, v}))
			}
		}
		specs, params = nextSpecs, nextParams
	}
	return specs, params, nil
}
