package workload

import (
	"math"
	"math/rand/v2"
)

// wellKnown are the first, most popular symbols of every stock universe,
// so generated workloads read like real market data.
var wellKnown = []string{
	"AAPL", "MSFT", "NVDA", "AMZN", "GOOGL", "META", "TSLA", "BRK.B", "JPM", "V",
	"UNH", "XOM", "JNJ", "WMT", "MA", "PG", "AVGO", "HD", "CVX", "KO",
	"PEP", "COST", "ORCL", "BAC", "ADBE", "CRM", "NFLX", "AMD", "INTC", "IBM",
}

// sectors are the GICS sector names symbols are assigned to.
var sectors = []string{
	"tech", "health", "finance", "energy", "consumer", "industrial",
	"materials", "utilities", "realestate", "telecom", "staples",
}

// venues are the trading venues, with the share of trades each sees.
var venues = []struct {
	name  string
	share float64
}{
	{"NASDAQ", 0.30}, {"NYSE", 0.25}, {"ARCA", 0.12}, {"EDGX", 0.10},
	{"BATS", 0.10}, {"IEX", 0.08}, {"CBOE", 0.05},
}

// symbol is one listed instrument of the universe.
type symbol struct {
	name   string
	sector string
	base   float64 // reference price around which trades happen
}

// universe is the instruments of a stock workload, shared by
// subscriptions and events.
type universe struct {
	symbols []symbol
	pop     zipf // symbol popularity, rank 0 most traded
}

// newUniverse draws n symbols: the well-known ones first, then unique
// random tickers of 3 or 4 letters; base prices are log-uniform in
// [2, 800] dollars.
func newUniverse(r *rand.Rand, n int, skew float64) universe {
	seen := make(map[string]bool, n)
	syms := make([]symbol, 0, n)
	add := func(name string) {
		seen[name] = true
		base := math.Exp(math.Log(2) + r.Float64()*(math.Log(800)-math.Log(2)))
		syms = append(syms, symbol{
			name:   name,
			sector: sectors[r.IntN(len(sectors))],
			base:   roundCents(base),
		})
	}
	for _, name := range wellKnown {
		if len(syms) == n {
			break
		}
		add(name)
	}
	for len(syms) < n {
		name := randomTicker(r)
		if !seen[name] {
			add(name)
		}
	}
	return universe{symbols: syms, pop: newZipf(n, skew)}
}

// randomTicker returns 3 or 4 uppercase letters.
func randomTicker(r *rand.Rand) string {
	b := make([]byte, 3+r.IntN(2))
	for i := range b {
		b[i] = byte('A' + r.IntN(26))
	}
	return string(b)
}

// pick draws a symbol by popularity.
func (u universe) pick(r *rand.Rand) symbol { return u.symbols[u.pop.draw(r)] }

// pickVenue draws a venue by its share of trades.
func pickVenue(r *rand.Rand) string {
	u := r.Float64()
	for _, v := range venues {
		if u < v.share {
			return v.name
		}
		u -= v.share
	}
	return venues[len(venues)-1].name
}

// roundCents rounds a price to whole cents, never below one cent.
func roundCents(p float64) float64 {
	return math.Max(0.01, math.Round(p*100)/100)
}
