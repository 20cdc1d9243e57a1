package durable

import "math/rand/v2"

// retry spaces the nacks for the same ticks: the first retry waits
// NackRetry, each later one twice as long as the one before, up to
// NackRetryMax, and each wait is shortened by a random fraction of up to
// NackJitter drawn from SHBConfig.Rand (none without a Rand), so SHBs that
// lost the same answer do not ask again in step. Progress (an answer)
// starts the sequence over.
type retry struct {
	last    Tick // when the last nack went out
	wait    Tick // how long after last the next may go
	attempt int
}

// due reports whether a nack may go out at now.
func (r *retry) due(now Tick) bool { return r.attempt == 0 || now-r.last >= r.wait }

// sent records a nack at now and computes the wait before the next.
func (r *retry) sent(now Tick, cfg *SHBConfig) {
	r.last, r.wait = now, backoffWait(r.attempt, cfg.NackRetry, cfg.NackRetryMax, cfg.NackJitter, cfg.Rand)
	r.attempt++
}

// reset starts the sequence over: the next nack may go at once.
func (r *retry) reset() { *r = retry{} }

// progressed restarts the backoff at an answer seen at now: the next nack
// waits NackRetry after it, not after the last nack, and the waits grow
// from there again. A long answer arrives over many round trips (a pubend
// answers a bounded number of events per step); asking again while it
// still flows would only make upstream answer its start once more, so
// only an answer that stopped for NackRetry is asked for again.
func (r *retry) progressed(now Tick, cfg *SHBConfig) {
	if r.attempt == 0 {
		return // nothing asked: the next nack may go at once
	}
	r.attempt = 1
	r.last, r.wait = now, cfg.NackRetry
}

// backoffWait returns min(base * 2^attempt, ceiling), shortened by a
// random fraction in [0, jitter) drawn from rng (if not nil).
func backoffWait(attempt int, base, ceiling Tick, jitter float64, rng *rand.Rand) Tick {
	d := ceiling
	if attempt < 62 && base<<attempt > 0 && base<<attempt < ceiling {
		d = base << attempt
	}
	if rng != nil && jitter > 0 {
		d -= Tick(float64(d) * jitter * rng.Float64())
	}
	return max(d, 1)
}
