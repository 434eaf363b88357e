package core

import (
	"context"
	"time"
)

// Chained steps: the worker that commits a step may continue the run's
// next step in the same invocation instead of sending it through the
// queue. The commit that schedules the step then records that it holds
// it (RunState.Held) until a lease time: nobody else sends it before
// then, and once the lease has passed without the step moving the
// scheduler sends it again, as it sends a step whose send was lost
// (StallDue). Durability is the queue's: the step is still one fenced
// commit, and a second delivery of it is dropped as stale.

// StepLease is a scheduled step the worker that committed it continues
// in the same invocation (chained), until Until. The step is named by its
// sequence number alone (a run's step numbers are unique), which keeps
// the lease small: it is stored with the run state on every chained
// commit.
type StepLease struct {
	Seq int64 `json:"seq"`
	// Owner names the invocation that holds the step (its first
	// message's id and receive count).
	Owner string    `json:"owner"`
	Until time.Time `json:"until"`
	// Term is the lease's length: the held step's progress (a heartbeat,
	// a retry) renews it to Term from then.
	Term time.Duration `json:"term"`
}

// holds reports whether the lease names step s.
func (l *StepLease) holds(s Step) bool {
	return l != nil && l.Seq == s.Seq
}

// Hold takes step s out of o.Next and records on o.State that owner
// continues it itself for term from now; it reports false, and changes
// nothing, when s is not one of o's next steps or the run has ended.
func (o *Output) Hold(s Step, owner string, now time.Time, term time.Duration) bool {
	if IsTerminal(o.State.Status) {
		return false
	}
	for i, n := range o.Next {
		if n.Kind == s.Kind && n.Seq == s.Seq && n.CallID == s.CallID && n.RunID == s.RunID {
			o.Next = append(o.Next[:i:i], o.Next[i+1:]...)
			o.State.Held = &StepLease{Seq: s.Seq, Owner: owner, Until: now.Add(term), Term: term}
			return true
		}
	}
	return false
}

// HeldStep is the step the run's lease holds, when one does and the
// step is still scheduled.
func (st RunState) HeldStep() (Step, bool) {
	if st.Held == nil {
		return Step{}, false
	}
	for _, s := range st.ScheduledSteps() {
		if st.Held.holds(s) {
			return s, true
		}
	}
	return Step{}, false
}

// StallDue is when the scheduler sends the run's scheduled steps again:
// stallAfter past the run's last update, or earlier when the lease of a
// step held by a chaining worker ends first. A run with no scheduled
// step is never stalled.
func (st RunState) StallDue(stallAfter time.Duration) (time.Time, bool) {
	if len(st.ScheduledSteps()) == 0 {
		return time.Time{}, false
	}
	due := st.UpdatedAt.Add(stallAfter)
	if _, held := st.HeldStep(); held && st.Held.Until.Before(due) {
		due = st.Held.Until
	}
	return due, true
}

// settleHold drops the lease once the step it holds is no longer
// scheduled (it committed, or the run moved on), and renews it when the
// input is the held step's own progress (a heartbeat or a retry), as a
// worker extends the visibility of a message it is still handling.
func (t *transition) settleHold(in Input) {
	s := t.st
	if s.Held == nil {
		return
	}
	var progress Step
	switch in := in.(type) {
	case Heartbeat:
		progress = in.Step
	case ModelRetrying:
		progress = in.Step
	case ToolRetrying:
		progress = in.Step
	}
	switch _, held := s.HeldStep(); {
	case !held:
		s.Held = nil
	case s.Held.holds(progress):
		l := *s.Held
		l.Until = t.now.Add(l.Term)
		s.Held = &l
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
