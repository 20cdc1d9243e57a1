package poset

import (
	"testing"

	"github.com/sift-pubsub/sift/match"
)

var fuzzFilters = []string{
	"a > 1", "a > 3", "a > 3 && b < 2", "b < 5", "b < 2 && c == 1", "c exists",
	"a > 1 && a < 6", "s prefix \"x\"", "s prefix \"xy\" && a > 3", "t == true", "*", "c == 1",
}

// FuzzRTOAnswers feeds arbitrary answer bits (the untrusted input of RTO)
// to placements under Verify, and under Majority with one honest client
// among three: whatever the other clients say, the structure stays sound
// and Match equals Scan. (Majority with no honest client is unsafe by
// design; see Policy.)
func FuzzRTOAnswers(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3, 4, 5, 6, 7})
	f.Add([]byte{255, 0, 255, 0, 17, 99})
	events := allEvents()
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) < 2 {
			return
		}
		for _, st := range structures {
			c := st.make(Config{})
			scan := match.NewScan()
			from := map[match.ID]Iface{}
			for i, text := range fuzzFilters[:len(fuzzFilters)-1] {
				if int(data[0]>>4)&1<<(i%4) != 0 {
					continue // vary the starting structure
				}
				c.Add(match.ID(i), 0, match.MustParse(text))
				scan.Insert(match.ID(i), match.MustParse(text))
			}
			target := match.MustParse(fuzzFilters[int(data[0])%len(fuzzFilters)])
			pol := Verify
			if data[1]%2 == 1 {
				pol = Majority
			}
			pl, err := c.StartRTO(100, 0, target, RTOConfig{Policy: pol, VectorSize: 1 + int(data[1]>>4)%4})
			if err != nil {
				t.Fatal(err)
			}
			pos := 2
			next := func() uint64 {
				var v uint64
				if pos < len(data) {
					v = uint64(data[pos])
				}
				pos++
				return v
			}
			for !pl.Done() {
				answers := make([][]Answer, len(pl.Queries()))
				for qi, q := range pl.Queries() {
					for ci := range pl.Clients() {
						if pol == Majority && ci == 0 {
							answers[qi] = append(answers[qi], Evaluate(q))
							continue
						}
						n := len(q.Filters)
						a := Answer{Up: NewBits(n), Down: NewBits(n), Overlap: NewBits(n)}
						a.Up[0], a.Down[0], a.Overlap[0] = next(), next(), next()
						a.Up[0] &= 1<<n - 1
						a.Down[0] &= 1<<n - 1
						a.Overlap[0] &= 1<<n - 1
						answers[qi] = append(answers[qi], a)
					}
				}
				if _, err := pl.Answer(answers); err != nil {
					t.Fatal(err)
				}
			}
			scan.Insert(100, target)
			if err := checkCommon(c); err != nil {
				t.Fatalf("%s: %v\n%s", st.name, err, c)
			}
			if err := checkMatch(c, scan, from, events); err != nil {
				t.Fatalf("%s: %v\n%s", st.name, err, c)
			}
		}
	})
}
