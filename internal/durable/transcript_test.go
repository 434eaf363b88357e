package durable_test

import (
	"context"
	"encoding/json"
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
