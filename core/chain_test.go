package core

import (
	"context"
	"errors"
	"testing"
	"time"
)

// heldRun is a started run whose first step a chaining worker holds.
func heldRun(t *testing.T, clock *FixedClock) (*Machine, RunState, Step) {
	t.Helper()
	m := NewMachine(clock)
	out, err := m.Start(context.Background(), StartInput{RunID: "r-1", SessionID: "s-1", Config: RunConfig{Model: scripted(turn("hi"))}, Messages: user("hi")})
	if err != nil {
		t.Fatal(err)
	}
	step := out.Next[0]
	if !out.Hold(step) {
		t.Fatal("the start's step could not be held")
	}
	if len(out.Next) != 0 {
		t.Fatalf("a held step is still to be sent: %+v", out.Next)
	}
	if h, ok := out.State.HeldStep(); !ok || h != step || out.State.Held != step.Seq {
		t.Fatalf("held %+v %v (%d)", h, ok, out.State.Held)
	}
	return m, out.State, step
}

// TestHold: a step that is not one of the output's next steps, or of a
// finished run, is not held.
func TestHold(t *testing.T) {
	o := Output{State: RunState{RunID: "r-1", Status: StatusRunning}, Next: []Step{{Kind: StepModelTurn, RunID: "r-1", Seq: 2}}}
	for _, s := range []Step{{Kind: StepModelTurn, RunID: "r-1", Seq: 3}, {Kind: StepToolCall, RunID: "r-1", Seq: 2}, {Kind: StepModelTurn, RunID: "r-2", Seq: 2}, {Kind: StepModelTurn, RunID: "r-1", Seq: 2, CallID: "c"}} {
		if o.Hold(s) || o.State.Held != 0 || len(o.Next) != 1 {
			t.Fatalf("held %+v", s)
		}
	}
	o.State.Status = StatusCompleted
	if o.Hold(o.Next[0]) {
		t.Fatal("held a finished run's step")
	}
	if _, ok := (RunState{Held: 7}).HeldStep(); ok {
		t.Fatal("a hold naming no scheduled step holds one")
	}
}

// TestHeldStepStallsAtItsLease: the scheduler sends a held step again
// once the lease has passed since the run last moved, before the stall
// period; the run is due then; the resend ends the hold. A queued step,
// or a lease not under the stall period, waits for the stall period.
func TestHeldStepStallsAtItsLease(t *testing.T) {
	clock := &FixedClock{T: t0}
	m, st, _ := heldRun(t, clock)
	stall := Stall{After: 2 * time.Minute, Lease: 20 * time.Second}
	if due, ok := st.StallDue(stall); !ok || !due.Equal(t0.Add(20*time.Second)) {
		t.Fatalf("stall due %v %v", due, ok)
	}
	if due, ok := st.DueAt(stall); !ok || !due.Equal(t0.Add(20*time.Second)) {
		t.Fatalf("due %v %v", due, ok)
	}
	for _, s := range []Stall{{After: 2 * time.Minute}, {After: 2 * time.Minute, Lease: 2 * time.Minute}, {After: 2 * time.Minute, Lease: time.Hour}} {
		if due, _ := st.StallDue(s); !due.Equal(t0.Add(2 * time.Minute)) {
			t.Fatalf("%+v: stall due %v", s, due)
		}
	}
	queued := st
	queued.Held = 0
	if due, _ := queued.StallDue(stall); !due.Equal(t0.Add(2 * time.Minute)) {
		t.Fatalf("a queued step's stall due %v", due)
	}
	clock.T = t0.Add(20*time.Second - time.Nanosecond)
	if _, err := m.Apply(context.Background(), st, nil, StallResend{Stall: stall}); !errors.Is(err, ErrNothingToApply) {
		t.Fatalf("within the lease: %v", err)
	}
	clock.T = t0.Add(20 * time.Second)
	got, err := m.Apply(context.Background(), st, nil, StallResend{Stall: stall})
	if err != nil || len(got.Next) != 1 || got.State.Held != 0 {
		t.Fatalf("at the lease's end: %+v %v", got, err)
	}
}

// TestHeldStepProgressRenewsTheLease: any commit of the run (the held
// step's heartbeat, a steer) moves its last update and so the lease's
// end, and keeps the hold; the step's own outcome ends it.
func TestHeldStepProgressRenewsTheLease(t *testing.T) {
	clock := &FixedClock{T: t0}
	m, st, step := heldRun(t, clock)
	stall := Stall{After: 2 * time.Minute, Lease: 20 * time.Second}
	clock.T = t0.Add(15 * time.Second)
	for _, in := range []Input{Heartbeat{Step: step}, ModelRetrying{Step: step, Retry: ModelRetry{Provider: "scripted", Attempt: 1, Status: 429}}, Steer{Content: "also this"}} {
		got, err := m.Apply(context.Background(), st, nil, in)
		if err != nil || got.State.Held != step.Seq {
			t.Fatalf("%T: hold %d %v", in, got.State.Held, err)
		}
		if due, _ := got.State.StallDue(stall); !due.Equal(clock.T.Add(20 * time.Second)) {
			t.Fatalf("%T: the lease ends %v", in, due)
		}
	}
	got, err := m.Apply(context.Background(), st, []Message{{Role: RoleUser, Content: "hi", Seq: 1}}, ModelReplied{Step: step, Reply: ModelReply{Content: "hi"}})
	if err != nil || got.State.Held != 0 {
		t.Fatalf("the held step's outcome: hold %d %v", got.State.Held, err)
	}
}

// TestChainedEvents: the events of a chained step's outcome say so.
func TestChainedEvents(t *testing.T) {
	clock := &FixedClock{T: t0}
	m, st, step := heldRun(t, clock)
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

// TestChainedToolResultEvent: the tool_result event of a chained tool
// step's outcome says so; that of another call, applied while a chain
// holds a different step, does not.
func TestChainedToolResultEvent(t *testing.T) {
	ctx := context.Background()
	m := NewMachine(&FixedClock{T: t0})
	out, err := m.Start(ctx, StartInput{RunID: "r-1", SessionID: "s-1", FirstSeq: 1, Messages: user("hi"),
		Config: RunConfig{Model: scripted(turn("done")), Tools: []ToolDeclaration{serverTool("t/a", nil)}, ParallelToolCalls: true}})
	if err != nil {
		t.Fatal(err)
	}
	st, tr := out.State, out.Messages
	apply := applier(t, m, &st, &tr)
	o := apply(ModelReplied{Step: out.Next[0], Reply: ModelReply{ToolCalls: []ToolCallRequest{call("c1", "t/a", nil), call("c2", "t/a", nil)}}})
	if len(o.Next) != 2 {
		t.Fatalf("next %v, want the two calls' steps", o.Next)
	}
	first, second := o.Next[0], o.Next[1]
	applyIn := applierIn(t, m, &st, &tr)
	chained := func(step Step) bool {
		t.Helper()
		got := applyIn(WithChained(ctx, first), ToolDecided{Step: step, Decision: Decision{Kind: DecideResult, Result: ToolResult{Success: true, Result: "ok"}}})
		for _, ev := range got.Events {
			if d, ok := ev.Data.(*ToolResultData); ok {
				return d.Chained
			}
		}
		t.Fatalf("no tool_result event in %+v", got.Events)
		return false
	}
	if !chained(first) {
		t.Error("the chained call's tool_result is not marked chained")
	}
	if chained(second) {
		t.Error("another call's tool_result is marked chained")
	}
}
