package core

import (
	"context"
	"time"
)

// Chained steps: the worker that commits a step may continue the run's
// next step in the same invocation instead of sending it through the
// queue. The commit that schedules the step then records that it holds
// it (RunState.Held): the step is that invocation's for a lease, counted
// like the stall period from the run's last update (Stall.Lease, one
// value for a deployment, as Stall.After is), so every commit of the
// held step's progress (a heartbeat, a retry) renews it. Nobody else
// sends the step before the lease has passed; once it has, the scheduler
// sends it again, as it sends a step whose send was lost (StallDue).
// Durability is the queue's: the step is still one fenced commit, and a
// second delivery of it is dropped as stale. The lease is stored as the
// held step's sequence number alone (a run's step numbers are unique),
// since it is rewritten with the run state on every chained commit.

// Stall holds a deployment's periods after which the scheduler sends a
// run's scheduled steps again.
type Stall struct {
	// After is the stall period: a step sent through the queue that has
	// not moved for After is sent again (a lost send).
	After time.Duration
	// Lease is how long a step a chaining worker holds is its: one held
	// that long without the run moving is sent again (the invocation
	// died). Zero, or not under After, leaves held steps to After.
	Lease time.Duration
}

// Hold takes step s out of o.Next and records on o.State that the
// worker that commits o continues it itself; it reports false, and
// changes nothing, when s is not one of o's next steps or the run has
// ended.
func (o *Output) Hold(s Step) bool {
	if IsTerminal(o.State.Status) {
		return false
	}
	for i, n := range o.Next {
		if n.Kind == s.Kind && n.Seq == s.Seq && n.CallID == s.CallID && n.RunID == s.RunID {
			o.Next = append(o.Next[:i:i], o.Next[i+1:]...)
			o.State.Held = s.Seq
			return true
		}
	}
	return false
}

// HeldStep is the step a chaining worker holds, when one does and the
// step is still scheduled.
func (st RunState) HeldStep() (Step, bool) {
	if st.Held == 0 {
		return Step{}, false
	}
	for s := range st.scheduled { // every chained commit asks: no list built
		if s.Seq == st.Held {
			return s, true
		}
	}
	return Step{}, false
}

// StallDue is when the scheduler sends the run's scheduled steps again:
// the stall period after the run's last update, or the lease's when a
// chaining worker holds a step and the lease is the shorter. A run with
// no scheduled step is never stalled.
func (st RunState) StallDue(s Stall) (time.Time, bool) {
	if len(st.ScheduledSteps()) == 0 {
		return time.Time{}, false
	}
	period := s.After
	if _, held := st.HeldStep(); held && s.Lease > 0 {
		period = min(period, s.Lease)
	}
	return st.UpdatedAt.Add(period), true
}

// settleHold drops the hold once the step it names is no longer
// scheduled (it committed, or the run moved on).
func (t *transition) settleHold() {
	if _, held := t.st.HeldStep(); !held {
		t.st.Held = 0
	}
}

type chainedKey struct{}

// WithChained returns ctx saying that step ran in the invocation that
// committed the step before it: the turn_started or tool_result event
// its outcome commits says "chained".
func WithChained(ctx context.Context, step Step) context.Context {
	return context.WithValue(ctx, chainedKey{}, step)
}

// ChainedStep is the step WithChained put on ctx, if any.
func ChainedStep(ctx context.Context) (Step, bool) {
	s, ok := ctx.Value(chainedKey{}).(Step)
	return s, ok
}
