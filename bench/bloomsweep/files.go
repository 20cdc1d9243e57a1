package bloomsweep

import (
	"strconv"

	"github.com/sift-pubsub/sift/bench"
)

// WriteFiles writes results.json (everything, with the machine and the
// command), results.csv (one row per point and chain length) and the PNG
// plots into dir, creating it.
func (rep *Report) WriteFiles(dir string) error {
	if err := bench.WriteResults(dir, rep, csvHeader, rep.csvRows()); err != nil {
		return err
	}
	return rep.WritePlots(dir)
}

var csvHeader = []string{
	"terms_per_event", "filters_per_link", "routers", "values_per_attribute", "event_bytes", "entry_bytes",
	"summary_fill", "saturated", "exact_forward", "bloom_forward", "link_fp_rate", "probe_fp_rate", "formula_fp_rate",
	"first_exact_ns", "first_bloom_ns", "inner_exact_ns", "inner_witness_ns", "inner_bloom_ns", "inner_bloom_witness_ns", "inner_speedup", "witness_speedup", "bloom_witness_speedup",
	"chain_exact_ns", "chain_bloom_ns", "chain_speedup", "chain_bloom_witness_ns", "chain_witness_speedup", "exact_bytes_per_delivered", "bloom_bytes_per_delivered",
}

func (rep *Report) csvRows() [][]string {
	var rows [][]string
	g, d := bench.CSVFloat, strconv.Itoa
	for _, p := range rep.Points {
		for _, c := range p.Chains {
			rows = append(rows, []string{d(p.Terms), d(p.Filters), d(c.Routers), d(p.Values), g(p.EventBytes), g(p.EntryBytes),
				g(p.Fill), g(p.Saturated), g(p.ExactForward), g(p.BloomForward), g(p.LinkFP), g(p.ProbeFP), g(p.FormulaFP),
				g(p.FirstExactNs), g(p.FirstBloomNs), g(p.InnerExactNs), g(p.InnerWitnessNs), g(p.InnerBloomNs), g(p.InnerBloomWitnessNs), g(p.InnerSpeedup), g(p.WitnessSpeedup), g(p.BloomWitnessSpeedup),
				g(c.ExactNs), g(c.BloomNs), g(c.Speedup), g(c.BloomWitnessNs), g(c.WitnessSpeedup), g(c.ExactBytes), g(c.BloomBytes)})
		}
	}
	return rows
}
