package client_test

import (
	"context"
	"fmt"
	"log"
	"os"

	"github.com/sift-pubsub/sift/match"
	"github.com/sift-pubsub/sift/router/client"
	"github.com/sift-pubsub/sift/router/local"
)

// startRouter runs a router on loopback with fresh certificates; a real
// deployment runs siftd and loads certificates with certs.Load.
func startRouter() (*local.Env, func()) {
	dir, err := os.MkdirTemp("", "sift-example")
	if err != nil {
		log.Fatal(err)
	}
	env, err := local.Start(dir, nil)
	if err != nil {
		log.Fatal(err)
	}
	return env, func() { env.Stop(); os.RemoveAll(dir) }
}

// Subscribe with a filter, publish a few events, and read the ones that
// match.
func Example() {
	env, stop := startRouter()
	defer stop()
	ctx := context.Background()

	// With certificates from `sift certs init DIR`:
	//   cl, _ := certs.Load(DIR, certs.Client)
	//   opts := client.Options{TLS: cl.ClientConfig()}
	c, err := client.Dial(ctx, env.Addr, client.Options{TLS: env.ClientTLS})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	sub, err := c.Subscribe(ctx, `symbol == "IBM" && price < 10`)
	if err != nil {
		log.Fatal(err)
	}
	for _, line := range []string{
		`{"symbol":"IBM","price":9.5}`,
		`{"symbol":"IBM","price":12.0}`,
		`{"symbol":"MSFT","price":5.0}`,
		`{"symbol":"IBM","price":8}`,
	} {
		e, err := match.ParseEventJSON([]byte(line))
		if err != nil {
			log.Fatal(err)
		}
		if err := c.Publish(ctx, e); err != nil {
			log.Fatal(err)
		}
	}
	if err := c.Flush(ctx); err != nil { // the router has accepted all four
		log.Fatal(err)
	}
	for range 2 {
		e, err := sub.Next(ctx)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(e)
	}
	// Output:
	// {"price":9.5,"symbol":"IBM"}
	// {"price":8,"symbol":"IBM"}
}

// A malformed filter is refused by the router with an error naming the
// column; nothing is installed and the connection stays usable.
func ExampleClient_Subscribe_badFilter() {
	env, stop := startRouter()
	defer stop()
	ctx := context.Background()
	c, err := client.Dial(ctx, env.Addr, client.Options{TLS: env.ClientTLS})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	_, err = c.Subscribe(ctx, `price < `)
	fmt.Println(err)
	// Output:
	// bad-filter: subscribe 1: filter col 9: expected a value (a quoted string, a number, true or false), found the end of the filter
}

// Unsubscribe ends a subscription: its channel closes.
func ExampleClient_Unsubscribe() {
	env, stop := startRouter()
	defer stop()
	ctx := context.Background()
	c, err := client.Dial(ctx, env.Addr, client.Options{TLS: env.ClientTLS})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	sub, err := c.Subscribe(ctx, `volume > 1000`)
	if err != nil {
		log.Fatal(err)
	}
	if err := c.Unsubscribe(ctx, sub); err != nil {
		log.Fatal(err)
	}
	_, open := <-sub.Events()
	fmt.Println(open, sub.Err())
	// Output:
	// false unsubscribed
}

// OnBorrowedEvent receives every delivery on the connection's reader
// goroutine, decoded without allocations of its own; the event is valid
// only during the call: read what you need, or keep KeepEvent(e).
func ExampleOptions_onBorrowedEvent() {
	env, stop := startRouter()
	defer stop()
	ctx := context.Background()

	prices := make(chan string, 8)
	var kept []match.Event // touched by the reader goroutine only, until done
	done := make(chan struct{})
	onEvent := func(s *client.Subscription, e match.Event) {
		if _, last := e.Get("last"); last {
			close(done)
			return
		}
		sym, _ := e.Get("symbol")
		price, _ := e.Get("price")
		prices <- fmt.Sprintf("%s %s at %v", s.Filter(), sym.AsString(), price) // copies what it reads
		kept = append(kept, client.KeepEvent(e))                                // e itself must not be kept
	}
	c, err := client.Dial(ctx, env.Addr, client.Options{TLS: env.ClientTLS, OnBorrowedEvent: onEvent})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	for _, f := range []string{`symbol == "IBM" && price < 10`, `last exists`} {
		if _, err := c.Subscribe(ctx, f); err != nil {
			log.Fatal(err)
		}
	}
	for _, line := range []string{
		`{"symbol":"IBM","price":9.5}`,
		`{"symbol":"IBM","price":12.0}`,
		`{"symbol":"IBM","price":8}`,
		`{"last":true}`,
	} {
		e, err := match.ParseEventJSON([]byte(line))
		if err != nil {
			log.Fatal(err)
		}
		if err := c.Publish(ctx, e); err != nil {
			log.Fatal(err)
		}
	}
	if err := c.Flush(ctx); err != nil {
		log.Fatal(err)
	}
	<-done
	close(prices)
	for p := range prices {
		fmt.Println(p)
	}
	fmt.Println(len(kept), "kept:", kept[0])
	// Output:
	// symbol == "IBM" && price < 10 IBM at 9.5
	// symbol == "IBM" && price < 10 IBM at 8
	// 2 kept: {"price":9.5,"symbol":"IBM"}
}
