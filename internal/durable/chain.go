package durable

import (
	"context"

	"github.com/baton-agents/baton/core"
)

// Chained steps: a worker that commits a step may continue the run's
// next step in the same invocation instead of paying a queue hop for it.
// The worker decides whether it may (internal/worker: the run is the
// last of its batch, the invocation has time left, the chain is not at
// its cap) and hands the step a Chain; the step's commit then holds the
// run's next step when it schedules exactly one (core.Output.Hold: the
// hold is in the commit, so if the invocation dies the sweeper sends the
// step once the deployment's lease, Limits.ChainLease, has passed since
// the run last moved), and the worker runs it from the committed run,
// without reading it back. Each chained step is still
// one fenced commit: a sweeper's resend after the lease, or any other
// delivery, is dropped as stale once one of them committed.

// Chain lets a step's commit hold the run's next step for the invocation
// that runs it; the lease is the deployment's (Limits.ChainLease).
type Chain struct {
	// Owner names the invocation (its chained attempts' owner).
	Owner string
	held  *heldStep
}

// heldStep is a step a commit held, with the run as committed.
type heldStep struct {
	step core.Step
	rec  core.RunRecord
}

// Next returns the step the last commit held for this invocation, and
// the attempt to run it with; it reports false when none was held.
func (c *Chain) Next() (core.Step, Attempt, bool) {
	if c == nil || c.held == nil {
		return core.Step{}, Attempt{}, false
	}
	h := c.held
	c.held = nil
	return h.step, Attempt{ReceiveCount: 1, Owner: c.Owner, run: &h.rec}, true
}

// hold wraps a step commit's attempts: when the transition schedules
// exactly one step of the run, it holds it instead of sending it.
func (c *Chain) hold(next func(int) (transition, error)) func(int) (transition, error) {
	return func(attempt int) (transition, error) {
		t, err := next(attempt)
		if err != nil || len(t.out.Next) != 1 {
			return t, err
		}
		s := t.out.Next[0]
		if t.out.Hold(s) {
			t.held = &s
		}
		return t, err
	}
}

// took records the step a commit held, with the run it committed.
func (c *Chain) took(step core.Step, rec core.RunRecord) {
	c.held = &heldStep{step: step, rec: rec}
}

// Chained reports whether the attempt runs a step its invocation held.
func (d Attempt) Chained() bool { return d.run != nil }

// loadStep reads the run of a step: a chained step's is the run its
// previous step committed (a stale copy only costs a version conflict at
// the commit, which reloads it).
func (e *Runner) loadStep(ctx context.Context, step core.Step, d Attempt) (context.Context, core.RunRecord, error) {
	if d.run != nil {
		return core.WithChained(ctx, step), *d.run, nil
	}
	rec, err := e.Store.LoadRun(ctx, step.RunID)
	return ctx, rec, err
}

// HandOff sends through the queue a held step its invocation will not
// run after all (its chained attempt failed and is to be retried): the
// queue's redeliveries retry it as they do a sent step's. Should the
// send fail, the sweeper sends the step once its lease has passed.
func (e *Runner) HandOff(ctx context.Context, step core.Step, d Attempt) {
	if d.run == nil {
		return
	}
	e.enqueue(ctx, d.run.State, []core.Step{step})
}
