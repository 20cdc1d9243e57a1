package workload

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/sift-pubsub/sift/match"
)

// StockConfig configures the stock workload: trades of ticker symbols and
// the subscriptions traders and applications place on them. A zero field
// takes the default written beside it.
//
// Events carry symbol (string), price (float), volume (int), venue,
// side ("buy" or "sell") and sector (strings), and short (bool, a short
// sale). Subscriptions mix, by share: `symbol == X && price < P` (35%,
// a third with a whole-dollar int bound), a nested price band
// `symbol == X && price >= L && price <= H` around the symbol's base price
// (20%), `symbol == X && venue != V` (10%), block trades
// `symbol == X && volume >= V` (10%), `symbol prefix "AB" && volume >= V`
// (8%), `sector == S && side == "buy" && volume >= V` (7%),
// `symbol == X && side == "sell" && price <= P` (5%) and
// `symbol == X && short == true` (5%). Symbols in subscriptions follow the
// same popularity as in trades. With the defaults about 0.1-1% of the
// subscriptions match each event.
type StockConfig struct {
	// Subscriptions is the number of subscriptions (default 10,000).
	Subscriptions int
	// Events is the number of trade events (default 1,000).
	Events int
	// Symbols is the number of listed symbols (default 2,000).
	Symbols int
	// SymbolSkew is the Zipf exponent of symbol popularity (default 1.0).
	SymbolSkew float64
	// Volatility is the standard deviation of a trade's price around its
	// symbol's base price, as a fraction (default 0.02).
	Volatility float64
}

// Defaults of StockConfig.
const (
	DefaultStockSubscriptions = 10_000
	DefaultStockSymbols       = 2_000
	DefaultStockSymbolSkew    = 1.0
	DefaultStockVolatility    = 0.02
)

func (c StockConfig) withDefaults() StockConfig {
	if c.Subscriptions == 0 {
		c.Subscriptions = DefaultStockSubscriptions
	}
	if c.Events == 0 {
		c.Events = DefaultEvents
	}
	if c.Symbols == 0 {
		c.Symbols = DefaultStockSymbols
	}
	if c.SymbolSkew == 0 {
		c.SymbolSkew = DefaultStockSymbolSkew
	}
	if c.Volatility == 0 {
		c.Volatility = DefaultStockVolatility
	}
	return c
}

// Resolved returns the configuration with every default filled in.
func (c StockConfig) Resolved() StockConfig { return c.withDefaults() }

// Validate reports why the configuration (after defaults) cannot be
// generated, or nil.
func (c StockConfig) Validate() error {
	c = c.withDefaults()
	switch {
	case c.Subscriptions < 0 || c.Events < 0:
		return fmt.Errorf("stock: negative count (subscriptions %d, events %d)", c.Subscriptions, c.Events)
	case c.Symbols < 1 || c.Symbols > 200_000:
		return fmt.Errorf("stock: %d symbols outside [1, 200000]", c.Symbols)
	case c.SymbolSkew < 0:
		return fmt.Errorf("stock: negative symbol skew %v", c.SymbolSkew)
	case !(c.Volatility > 0 && c.Volatility < 1):
		return fmt.Errorf("stock: volatility %v outside (0, 1)", c.Volatility)
	}
	return nil
}

// Stock generates the stock workload for cfg and seed.
func Stock(cfg StockConfig, seed uint64) (Workload, error) {
	if err := cfg.Validate(); err != nil {
		return Workload{}, err
	}
	cfg = cfg.withDefaults()
	u := newUniverse(newRand(seed, streamUniverse), cfg.Symbols, cfg.SymbolSkew)
	return Workload{
		Filters: stockFilters(newRand(seed, streamFilters), u, cfg.Subscriptions),
		Events:  stockEvents(newRand(seed, streamEvents), u, cfg),
	}, nil
}

func stockEvents(r *rand.Rand, u universe, cfg StockConfig) []match.Event {
	out := make([]match.Event, cfg.Events)
	for i := range out {
		s := u.pick(r)
		price := roundCents(s.base * (1 + cfg.Volatility*r.NormFloat64()))
		side := "buy"
		if r.IntN(2) == 1 {
			side = "sell"
		}
		out[i] = match.MustEvent(
			match.Attr{Name: "symbol", Value: match.Str(s.name)},
			match.Attr{Name: "price", Value: match.MustFloat(price)},
			match.Attr{Name: "volume", Value: match.Int(tradeVolume(r))},
			match.Attr{Name: "venue", Value: match.Str(pickVenue(r))},
			match.Attr{Name: "side", Value: match.Str(side)},
			match.Attr{Name: "sector", Value: match.Str(s.sector)},
			match.Attr{Name: "short", Value: match.Bool(r.IntN(10) == 0)},
		)
	}
	return out
}

// tradeVolume draws a trade size: 10% odd lots of 1-99 shares, otherwise
// round lots of 100 shares times a log-uniform factor in [1, 500].
func tradeVolume(r *rand.Rand) int64 {
	if r.IntN(10) == 0 {
		return 1 + r.Int64N(99)
	}
	return 100 * int64(math.Exp(r.Float64()*math.Log(500)))
}

// blockSize draws a block-trade threshold among round sizes.
func blockSize(r *rand.Rand) int64 {
	sizes := [...]int64{5_000, 10_000, 20_000, 25_000, 50_000}
	return sizes[r.IntN(len(sizes))]
}

// stockKind is one kind of subscription of the stock mix, with its share
// in percent.
type stockKind struct {
	percent int
	make    func(r *rand.Rand, u universe) []match.Constraint
}

var stockMix = []stockKind{
	{35, priceBelow},
	{20, priceBand},
	{10, venueNot},
	{10, blockTrades},
	{8, prefixBlocks},
	{7, sectorBuys},
	{5, sellsBelow},
	{5, shortSales},
}

func stockFilters(r *rand.Rand, u universe, n int) []match.Filter {
	out := make([]match.Filter, n)
	for i := range out {
		k := r.IntN(100)
		for _, kind := range stockMix {
			if k < kind.percent {
				out[i] = match.MustFilter(kind.make(r, u)...)
				break
			}
			k -= kind.percent
		}
	}
	return out
}

func c(attr string, op match.Op, v match.Value) match.Constraint {
	return match.Constraint{Attr: attr, Op: op, Val: v}
}

func symIs(s symbol) match.Constraint { return c("symbol", match.OpEq, match.Str(s.name)) }

// price returns a price bound: a float in cents, or (when whole) an int.
func price(p float64, whole bool) match.Value {
	if whole {
		return match.Int(int64(math.Round(p)))
	}
	return match.MustFloat(roundCents(p))
}

func priceBelow(r *rand.Rand, u universe) []match.Constraint {
	s := u.pick(r)
	p := s.base * (0.95 + 0.06*r.Float64())
	return []match.Constraint{symIs(s), c("price", match.OpLt, price(p, r.IntN(3) == 0 && p >= 10))}
}

func priceBand(r *rand.Rand, u universe) []match.Constraint {
	s := u.pick(r)
	widths := [...]float64{0.005, 0.01, 0.02, 0.05}
	w := widths[r.IntN(len(widths))]
	return []match.Constraint{
		symIs(s),
		c("price", match.OpGe, price(s.base*(1-w), false)),
		c("price", match.OpLe, price(s.base*(1+w), false)),
	}
}

func venueNot(r *rand.Rand, u universe) []match.Constraint {
	return []match.Constraint{symIs(u.pick(r)), c("venue", match.OpNe, match.Str(pickVenue(r)))}
}

func blockTrades(r *rand.Rand, u universe) []match.Constraint {
	return []match.Constraint{symIs(u.pick(r)), c("volume", match.OpGe, match.Int(blockSize(r)))}
}

func prefixBlocks(r *rand.Rand, u universe) []match.Constraint {
	name := u.pick(r).name
	return []match.Constraint{
		c("symbol", match.OpPrefix, match.Str(name[:min(2, len(name))])),
		c("volume", match.OpGe, match.Int(2*blockSize(r))),
	}
}

func sectorBuys(r *rand.Rand, u universe) []match.Constraint {
	return []match.Constraint{
		c("sector", match.OpEq, match.Str(sectors[r.IntN(len(sectors))])),
		c("side", match.OpEq, match.Str("buy")),
		c("volume", match.OpGe, match.Int(2*blockSize(r))),
	}
}

func sellsBelow(r *rand.Rand, u universe) []match.Constraint {
	s := u.pick(r)
	return []match.Constraint{
		symIs(s),
		c("side", match.OpEq, match.Str("sell")),
		c("price", match.OpLe, price(s.base*(0.97+0.04*r.Float64()), false)),
	}
}

func shortSales(r *rand.Rand, u universe) []match.Constraint {
	return []match.Constraint{symIs(u.pick(r)), c("short", match.OpEq, match.Bool(true))}
}
