package durable_test

import (
	"context"
	"testing"
	"time"

	"github.com/baton-agents/baton/core"
	"github.com/baton-agents/baton/internal/durable"
)

// TestSweepResendsAStalledStepOncePerStallPeriod: a run whose step only
// waits its turn (its message sits in the queue) is sent again at most
// once per stall period, however often the sweeper passes — each resend
// moves the run's due time on — and a run whose step message was lost
// is still recovered by the resend.
func TestSweepResendsAStalledStepOncePerStallPeriod(t *testing.T) {
	h := newHarness(t, nil)
	q := &countingQueue{StepQueue: h.q}
	h.opts.Queue = q
	h.opts.Limits.StallAfter = stallAfter
	h.eng = durable.New(h.opts)
	runID := h.start(t, scripted(core.ScriptedTurn{Content: "done"}), nil)
	if q.count() != 1 {
		t.Fatalf("%d sends at the start", q.count())
	}
	// Ten minutes of sweeps every ten seconds (the step's message waits
	// in the queue all along).
	for i := 0; i < 60; i++ {
		h.clock.T = h.clock.T.Add(10 * time.Second)
		if _, err := h.eng.Sweep(context.Background(), 10); err != nil {
			t.Fatal(err)
		}
	}
	if resent := q.count() - 1; resent < 4 || resent > 5 {
		t.Fatalf("%d resends in 10 minutes with a 2-minute stall period, want 4 or 5 (one per period)", resent)
	}

	// The step's messages are lost (received and dropped, never
	// handled): the next resend brings the run to its end.
	if err := h.q.Drain(context.Background(), 100, func(core.Step, core.ReceivedMessage) error { return nil }); err != nil {
		t.Fatal(err)
	}
	h.clock.T = h.clock.T.Add(3 * time.Minute)
	if _, err := h.eng.Sweep(context.Background(), 10); err != nil {
		t.Fatal(err)
	}
	h.pump(t)
	if env := h.envelope(t, runID); env.Status != core.StatusCompleted || env.FinalContent != "done" {
		t.Fatalf("after the resend: %s %q", env.Status, env.FinalContent)
	}
}

// TestSweepResendIsNotDroppedAsADuplicate: a step message lost right
// after its send is sent again by the first sweep past the stall period,
// well inside the queue's five-minute deduplication window, and that
// resend is delivered (its deduplication id is its own commit's), so the
// run ends without waiting for the window to pass.
func TestSweepResendIsNotDroppedAsADuplicate(t *testing.T) {
	h := newHarness(t, nil)
	h.opts.Limits.StallAfter = stallAfter
	h.eng = durable.New(h.opts)
	runID := h.start(t, scripted(core.ScriptedTurn{Content: "done"}), nil)
	if err := h.q.Drain(context.Background(), 100, func(core.Step, core.ReceivedMessage) error { return nil }); err != nil {
		t.Fatal(err)
	}
	h.clock.T = h.clock.T.Add(stallAfter + time.Second)
	if _, err := h.eng.Sweep(context.Background(), 10); err != nil {
		t.Fatal(err)
	}
	h.pump(t)
	if env := h.envelope(t, runID); env.Status != core.StatusCompleted {
		t.Fatalf("%s after the resend %v after the lost send: the resend was dropped", env.Status, stallAfter+time.Second)
	}
}
