package bloom_test

import (
	"slices"
	"testing"

	"github.com/sift-pubsub/sift/match"
	"github.com/sift-pubsub/sift/match/bloom"
)

// FuzzSummary feeds arbitrary filters and events through the dictionary:
// the summary must equal the term-by-term reference, and must contain the
// filter's encoding whenever the filter matches (no false negative).
func FuzzSummary(f *testing.F) {
	f.Add(`symbol == "IBM" && price < 10`, `{"symbol":"IBM","price":9.5}`)
	f.Add(`a == 5.0 && b != 3 && s suffix "x"`, `{"a":5,"b":3.5,"s":"yx"}`)
	f.Add(`s contains "" && t prefix "ab" && z <= false`, `{"s":"","t":"abc","z":false}`)
	f.Add(`a >= 9223372036854775807 && a < 9.3e18`, `{"a":9223372036854775807}`)
	f.Fuzz(func(t *testing.T, filterText, eventJSON string) {
		flt, err := match.Parse(filterText)
		if err != nil {
			return
		}
		e, err := match.ParseEventJSON([]byte(eventJSON))
		if err != nil {
			return
		}
		for _, p := range []bloom.Params{{M: 64, K: 2}, {Flat: true}} {
			d, _ := bloom.NewDictionary(p)
			d.AddFilter(flt)
			d.AddFilter(match.MustParse(`a == 1 && b < 2`))
			sum := p.NewFilter()
			d.Summary(e, sum)
			if want := bruteSummary(d, e); !slices.Equal(sum.Words(), want) {
				t.Fatalf("%v: summary of %v under %v: %x, want %x", p, e, flt, sum.Words(), want)
			}
			if flt.Matches(e) && !bloom.Contains(sum, p.Encode(flt)) {
				t.Fatalf("%v: false negative: %v matches %v", p, flt, e)
			}
		}
	})
}
