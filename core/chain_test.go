package core

import (
	"context"
	"errors"
	"testing"
	"time"
)

// heldRun is a started run whose first step a chaining worker holds for
// term from t0.
func heldRun(t *testing.T, clock *FixedClock, term time.Duration) (*Machine, RunState, Step) {
	t.Helper()
	m := NewMachine(clock)
	out, err := m.Start(context.Background(), StartInput{RunID: "r-1", SessionID: "s-1", Config: RunConfig{Model: scripted(turn("hi"))}, Messages: user("hi")})
	if err != nil {
		t.Fatal(err)
	}
	step := out.Next[0]
	if !out.Hold(step, "inv-1", clock.T, term) {
		t.Fatal("the start's step could not be held")
	}
	if len(out.Next) != 0 {
		t.Fatalf("a held step is still to be sent: %+v", out.Next)
	}
	if h, ok := out.State.HeldStep(); !ok || h.Seq != step.Seq || out.State.Held.Owner != "inv-1" || !out.State.Held.Until.Equal(clock.T.Add(term)) {
		t.Fatalf("lease %+v", out.State.Held)
	}
	return m, out.State, step
}

// TestHold: a step that is not one of the output's next steps, or of a
// finished run, is not held.
func TestHold(t *testing.T) {
	o := Output{State: RunState{RunID: "r-1", Status: StatusRunning}, Next: []Step{{Kind: StepModelTurn, RunID: "r-1", Seq: 2}}}
	for _, s := range []Step{{Kind: StepModelTurn, RunID: "r-1", Seq: 3}, {Kind: StepToolCall, RunID: "r-1", Seq: 2}, {Kind: StepModelTurn, RunID: "r-2", Seq: 2}} {
		if o.Hold(s, "x", t0, time.Minute) || o.State.Held != nil || len(o.Next) != 1 {
			t.Fatalf("held %+v", s)
		}
	}
	o.State.Status = StatusCompleted
	if o.Hold(o.Next[0], "x", t0, time.Minute) {
		t.Fatal("held a finished run's step")
	}
}

// TestHeldStepStallsAtItsLease: the scheduler sends a held step again
// once its lease has passed, before the stall period; the run is due
// then; the resend ends the lease.
func TestHeldStepStallsAtItsLease(t *testing.T) {
	clock := &FixedClock{T: t0}
	m, st, _ := heldRun(t, clock, 20*time.Second)
	if due, ok := st.StallDue(2 * time.Minute); !ok || !due.Equal(t0.Add(20*time.Second)) {
		t.Fatalf("stall due %v %v", due, ok)
	}
	if due, ok := st.DueAt(2 * time.Minute); !ok || !due.Equal(t0.Add(20*time.Second)) {
		t.Fatalf("due %v %v", due, ok)
	}
	clock.T = t0.Add(19 * time.Second)
	if _, err := m.Apply(context.Background(), st, nil, StallResend{StallAfter: 2 * time.Minute}); !errors.Is(err, ErrNothingToApply) {
		t.Fatalf("within the lease: %v", err)
	}
	clock.T = t0.Add(20 * time.Second)
	got, err := m.Apply(context.Background(), st, nil, StallResend{StallAfter: 2 * time.Minute})
	if err != nil || len(got.Next) != 1 || got.State.Held != nil {
		t.Fatalf("at the lease's end: %+v %v", got, err)
	}
	// A lease longer than the stall period does not delay the stall.
	clock.T = t0
	_, long, _ := heldRun(t, clock, time.Hour)
	if due, _ := long.StallDue(2 * time.Minute); !due.Equal(t0.Add(2 * time.Minute)) {
		t.Fatalf("stall due %v", due)
	}
}

// TestHeldStepProgressRenewsTheLease: the held step's heartbeat or retry
// renews its lease from then; another input keeps it as it is; the
// step's own outcome ends it.
func TestHeldStepProgressRenewsTheLease(t *testing.T) {
	clock := &FixedClock{T: t0}
	m, st, step := heldRun(t, clock, 20*time.Second)
	clock.T = t0.Add(15 * time.Second)
	for _, in := range []Input{Heartbeat{Step: step}, ModelRetrying{Step: step, Retry: ModelRetry{Provider: "scripted", Attempt: 1, Status: 429}}} {
		got, err := m.Apply(context.Background(), st, nil, in)
		if err != nil || got.State.Held == nil || !got.State.Held.Until.Equal(clock.T.Add(20*time.Second)) || got.State.Held.Owner != "inv-1" {
			t.Fatalf("%T: lease %+v %v", in, got.State.Held, err)
		}
		if !st.Held.Until.Equal(t0.Add(20 * time.Second)) {
			t.Fatal("Apply changed its input state's lease")
		}
	}
	got, err := m.Apply(context.Background(), st, nil, Steer{Content: "also this"})
	if err != nil || got.State.Held == nil || !got.State.Held.Until.Equal(t0.Add(20*time.Second)) {
		t.Fatalf("steer: lease %+v %v", got.State.Held, err)
	}
	got, err = m.Apply(context.Background(), st, []Message{{Role: RoleUser, Content: "hi", Seq: 1}}, ModelReplied{Step: step, Reply: ModelReply{Content: "hi"}})
	if err != nil || got.State.Held != nil {
		t.Fatalf("the held step's outcome: lease %+v %v", got.State.Held, err)
	}
}

// TestChainedEvents: the events of a chained step's outcome say so.
func TestChainedEvents(t *testing.T) {
	clock := &FixedClock{T: t0}
	m, st, step := heldRun(t, clock, time.Minute)
	got, err := m.Apply(WithChained(context.Background(), step), st, []Message{{Role: RoleUser, Content: "hi", Seq: 1}}, ModelReplied{Step: step, Reply: ModelReply{Content: "hi"}})
	if err != nil {
		t.Fatal(err)
	}
	if d, ok := got.Events[0].Data.(*TurnStartedData); !ok || !d.Chained {
		t.Fatalf("turn_started %+v", got.Events[0].Data)
	}
	if s, ok := ChainedStep(WithChained(context.Background(), step)); !ok || s != step {
		t.Fatal("ChainedStep")
	}
	if _, ok := ChainedStep(context.Background()); ok {
		t.Fatal("ChainedStep of a plain context")
	}
}
