package durable

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/baton-agents/baton/core"
)

// chanDeltas hands each written batch to a channel.
type chanDeltas chan core.DeltaBatch

func (c chanDeltas) PutDeltas(_ context.Context, b core.DeltaBatch) error { c <- b; return nil }
func (c chanDeltas) Deltas(context.Context, string, core.DeltaPos, time.Time, int) ([]core.DeltaBatch, error) {
	return nil, nil
}

// TestPublisherAdapts: a turn's first delta is written at once, alone;
// later ones once DeltaBatchDeltas are there (the window is out of
// play here), the rest when the turn ends.
func TestPublisherAdapts(t *testing.T) {
	writes := make(chanDeltas, 10)
	lim := Limits{DeltaBatchDeltas: 3, DeltaWindow: time.Hour}.withDefaults()
	p := &publisher{store: writes, limits: lim, clock: core.SystemClock{}, log: slog.New(slog.DiscardHandler), runID: "r-1",
		kick: make(chan struct{}, 1), full: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	go p.loop(context.Background())
	next := func(want int) {
		t.Helper()
		select {
		case b := <-writes:
			if len(b.Deltas) != want {
				t.Fatalf("a batch of %d deltas, want %d", len(b.Deltas), want)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("no batch of %d deltas written", want)
		}
	}
	d := core.TokenDelta{Text: "tok"}
	p.add(d)
	next(1)
	p.add(d)
	p.add(d)
	select {
	case b := <-writes:
		t.Fatalf("a batch of %d deltas written before the batch was full", len(b.Deltas))
	case <-time.After(50 * time.Millisecond):
	}
	p.add(d)
	next(3)
	p.add(d)
	close(p.stop)
	<-p.done
	next(1)
}

// TestPublisherFullAtBatchBytes: after the turn's first delta, a batch is
// written as soon as its text reaches DeltaBatchBytes, at exactly that
// size, before the window.
func TestPublisherFullAtBatchBytes(t *testing.T) {
	writes := make(chanDeltas, 10)
	lim := Limits{DeltaBatchBytes: 6, DeltaWindow: time.Hour}.withDefaults()
	p := &publisher{store: writes, limits: lim, clock: core.SystemClock{}, log: slog.New(slog.DiscardHandler), runID: "r-1",
		kick: make(chan struct{}, 1), full: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	go p.loop(context.Background())
	defer func() { close(p.stop); <-p.done }()
	next := func(want string) {
		t.Helper()
		select {
		case b := <-writes:
			got := ""
			for _, d := range b.Deltas {
				got += d.Text + "|"
			}
			if got != want {
				t.Fatalf("a batch %q, want %q", got, want)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("no batch %q written", want)
		}
	}
	p.add(core.TokenDelta{Text: "a"})
	next("a|")
	p.add(core.TokenDelta{Text: "bcd"})
	select {
	case b := <-writes:
		t.Fatalf("a batch of %d deltas written at 3 of 6 bytes", len(b.Deltas))
	case <-time.After(50 * time.Millisecond):
	}
	p.add(core.TokenDelta{Text: "efg"})
	next("bcd|efg|")
}
