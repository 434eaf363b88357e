package worker

import (
	"context"
	"log/slog"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/baton-agents/baton/core"
)

type extension struct {
	handle string
	d      time.Duration
}

// extender records each extension; gone names handles whose message is
// no longer in flight.
type extender struct {
	calls chan extension
	gone  map[string]bool
}

func (x *extender) ExtendVisibility(_ context.Context, handle string, d time.Duration) error {
	x.calls <- extension{handle, d}
	if x.gone[handle] {
		return core.ErrNotFound
	}
	return nil
}

// TestKeepHidden: every Visibility/3 each open message of the batch with
// a receipt handle is hidden for Visibility again, until it is done or
// the queue no longer has it; without an extender or a visibility
// nothing is extended.
func TestKeepHidden(t *testing.T) {
	recs := []events.SQSMessage{{MessageId: "m1", ReceiptHandle: "h1"}, {MessageId: "m2", ReceiptHandle: "h2"},
		{MessageId: "m3", ReceiptHandle: "h3"}, {MessageId: "m4"}}
	x := &extender{calls: make(chan extension, 16), gone: map[string]bool{"h3": true}}
	tick := make(chan time.Time)
	var every time.Duration
	w := &Worker{Log: slog.New(slog.DiscardHandler), Extender: x, Visibility: 90 * time.Second,
		Ticks: func(d time.Duration) (<-chan time.Time, func()) { every = d; return tick, func() {} }}
	h := w.keepHidden(context.Background(), recs)
	defer h.stop()
	if every != 30*time.Second {
		t.Fatalf("extensions every %v, want 30s", every)
	}
	round := func(want ...string) {
		t.Helper()
		tick <- time.Time{}
		var got []string
		for range want {
			select {
			case c := <-x.calls:
				if c.d != 90*time.Second {
					t.Fatalf("%s hidden for %v", c.handle, c.d)
				}
				got = append(got, c.handle)
			case <-time.After(10 * time.Second):
				t.Fatalf("extended %v, want %v", got, want)
			}
		}
		sort.Strings(got)
		if !slices.Equal(got, want) {
			t.Fatalf("extended %v, want %v", got, want)
		}
	}
	round("h1", "h2", "h3") // m4 has no receipt handle
	h.done("m1")
	round("h2") // m1 is done, m3 is gone
	select {
	case c := <-x.calls:
		t.Fatalf("extra extension %v", c)
	default:
	}

	for _, w := range []*Worker{{Extender: x}, {Visibility: time.Minute}, {Extender: x, Visibility: -time.Second}} {
		w.Ticks = func(time.Duration) (<-chan time.Time, func()) {
			t.Fatal("extensions paced with no extender or visibility")
			return nil, nil
		}
		w.keepHidden(context.Background(), recs).stop()
	}
	none := &Worker{Extender: x, Visibility: time.Minute,
		Ticks: func(time.Duration) (<-chan time.Time, func()) {
			t.Fatal("extensions paced with no receipt handle")
			return nil, nil
		}}
	none.keepHidden(context.Background(), recs[3:]).stop()
}
