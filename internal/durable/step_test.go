package durable_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/baton-agents/baton/core"
	"github.com/baton-agents/baton/internal/durable"
)

// TestTranscriptCacheBehindTheStore: a runner whose cached transcript is
// behind the store (another runner committed steps of the session since)
// reads only the messages it lacks, and its step sees each message once.
func TestTranscriptCacheBehindTheStore(t *testing.T) {
	cs := &countingStore{}
	h := newHarness(t, func(s durable.Store) durable.Store { cs.Store = s; return cs })
	other := durable.New(h.opts) // a second worker: its own cache
	runID := h.start(t, scripted(
		turn("", call("c1", "ability/search", map[string]any{"q": "1"})),
		turn("", call("c2", "ability/search", map[string]any{"q": "2"})),
		turn("done")), nil)
	ctx := context.Background()
	step := func(eng *durable.Runner) {
		t.Helper()
		ds, _ := h.q.Receive(ctx, 1, 0)
		if len(ds) != 1 {
			t.Fatal("no step queued")
		}
		var s core.Step
		if err := json.Unmarshal(ds[0].Body, &s); err != nil {
			t.Fatal(err)
		}
		if err := eng.HandleStep(ctx, s, durable.Attempt{ReceiveCount: 1, Owner: ds[0].ReceiptHandle}); err != nil {
			t.Fatal(err)
		}
		_ = h.q.Delete(ctx, ds[0].ReceiptHandle)
	}
	step(h.eng) // turn 1: the user message, the call c1
	step(h.eng) // c1's result
	rec, _ := h.store.LoadRun(ctx, runID)
	seen := rec.State.NextMsgSeq
	step(other) // turn 2: the call c2
	step(other) // c2's result
	rec, _ = h.store.LoadRun(ctx, runID)
	cs.read = nil
	step(h.eng) // turn 3, on h.eng's cache of the first four messages
	if want := int(rec.State.NextMsgSeq - seen); len(cs.read) != 1 || cs.read[0] != want {
		t.Fatalf("transcript reads of the last turn: %v, want one of the %d messages committed elsewhere", cs.read, want)
	}
	env := h.envelope(t, runID)
	rec, _ = h.store.LoadRun(ctx, runID)
	if want := int(rec.State.NextMsgSeq - 1); env.Status != core.StatusCompleted || env.FinalContent != "done" || len(env.Messages) != want {
		t.Fatalf("run %s, final %q, %d messages; want completed with %d", env.Status, env.FinalContent, len(env.Messages), want)
	}
}

// TestDeliveryNotes: which deliveries of a step the run's timeline
// notes: a redelivery that did the work (redelivered, not stale), and a
// first delivery of a step another delivery had done (stale, not
// redelivered); a first delivery that did the work writes nothing.
func TestDeliveryNotes(t *testing.T) {
	for _, tc := range []struct {
		name         string
		counts       []int // the receive counts of the step's deliveries
		redelivered  int
		stale        int
		wantNoteless bool
	}{
		{"a first delivery", []int{1}, 0, 0, true},
		{"a redelivery that did the work", []int{2}, 1, 0, false},
		{"a duplicate first delivery", []int{1, 1}, 0, 1, false},
		{"a redelivery of a step done", []int{1, 2}, 1, 1, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, nil)
			ctx := context.Background()
			runID := h.start(t, scripted(turn("Once.")), nil)
			ds, _ := h.q.Receive(ctx, 1, 0)
			var step core.Step
			_ = json.Unmarshal(ds[0].Body, &step)
			for i, n := range tc.counts {
				if err := h.eng.HandleStep(ctx, step, durable.Attempt{ReceiveCount: n, Owner: fmt.Sprint("w", i)}); err != nil {
					t.Fatal(err)
				}
			}
			snap, err := h.eng.Get(ctx, "acme", runID)
			if err != nil {
				t.Fatal(err)
			}
			v, err := h.eng.View(ctx, snap, 0)
			if err != nil {
				t.Fatal(err)
			}
			if tc.wantNoteless {
				if len(v.Deliveries) != 0 {
					t.Fatalf("deliveries %+v, want none noted", v.Deliveries)
				}
				return
			}
			if len(v.Deliveries) != 1 || v.Deliveries[0].Redeliveries != tc.redelivered || v.Deliveries[0].Stale != tc.stale {
				t.Fatalf("deliveries %+v, want %d redelivered and %d stale", v.Deliveries, tc.redelivered, tc.stale)
			}
		})
	}
}

// TestViewTruncation: a view over maxBytes keeps the newest messages that
// fit, as many as fit, and says it cut them; a view that fits, at exactly
// maxBytes too, keeps them all.
func TestViewTruncation(t *testing.T) {
	h := newHarness(t, nil)
	ctx := context.Background()
	var turns []core.ScriptedTurn
	for i := 1; i <= 5; i++ {
		turns = append(turns, turn("", call(fmt.Sprintf("c%d", i), "ability/search", map[string]any{"q": strings.Repeat("x", 10*i)})))
	}
	runID := h.start(t, scripted(append(turns, turn("done"))...), nil)
	h.pump(t)
	snap, err := h.eng.Get(ctx, "acme", runID)
	if err != nil {
		t.Fatal(err)
	}
	size := func(v durable.View) int {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return len(b)
	}
	full, err := h.eng.View(ctx, snap, 0)
	if err != nil {
		t.Fatal(err)
	}
	all := full.Result.Messages
	n := size(full)
	// exact is the size of the view cut to its newest three messages: a
	// bound those three fit exactly.
	cut := full
	cut.Result.Messages, cut.Result.MessagesTruncated = all[len(all)-3:], true
	exact := size(cut)
	for _, max := range []int{n + 1, n, n - 1, n - 200, n / 2, exact, exact - 1, 10} {
		v, err := h.eng.View(ctx, snap, max)
		if err != nil {
			t.Fatal(err)
		}
		kept := v.Result.Messages
		if max >= n {
			if v.Result.MessagesTruncated || len(kept) != len(all) {
				t.Errorf("max %d of a %d-byte view: %d of %d messages, truncated %v; want all, not truncated", max, n, len(kept), len(all), v.Result.MessagesTruncated)
			}
			continue
		}
		if !v.Result.MessagesTruncated || len(kept) >= len(all) {
			t.Errorf("max %d of a %d-byte view: %d of %d messages, truncated %v; want fewer, truncated", max, n, len(kept), len(all), v.Result.MessagesTruncated)
			continue
		}
		if len(kept) > 0 && (size(v) > max || kept[len(kept)-1].Seq != all[len(all)-1].Seq) {
			t.Errorf("max %d: %d bytes kept, ending at message %d; want the newest within the bound", max, size(v), kept[len(kept)-1].Seq)
		}
		one := v
		one.Result.Messages = all[len(all)-len(kept)-1:]
		if size(one) <= max {
			t.Errorf("max %d: %d messages kept, but %d fit", max, len(kept), len(kept)+1)
		}
	}
}
