package durable

import (
	"context"
	"time"

	"github.com/baton-agents/baton/core"
)

// SetHeartbeatTimer replaces the timer that paces a step's heartbeats.
func SetHeartbeatTimer(e *Runner, after func(time.Duration) <-chan time.Time) { e.after = after }

// SetChangesClock replaces the clock that ages c's waiting channels.
func SetChangesClock(c *Changes, now func() time.Time) { c.now = now }

// RedeliverEnd delivers the eval record of a finished run again, as the
// sweeper does when it cannot tell whether a delivery landed.
func (e *Runner) RedeliverEnd(ctx context.Context, runID string) error {
	rec, err := e.Store.LoadRun(ctx, runID)
	if err != nil || rec.State.Config.Eval == nil {
		return err
	}
	return e.deliverToEval(ctx, evalRecord(rec.State))
}

// DeliverEval delivers the eval record n, as the outbox does.
func (e *Runner) DeliverEval(ctx context.Context, n core.Notification) error {
	return e.deliverToEval(ctx, n)
}

// CaseAnswers gives the eval case run st its case's scripted answers.
func (e *Runner) CaseAnswers(ctx context.Context, tenant string, st *core.RunState) error {
	return e.caseAnswers(ctx, tenant, st)
}
