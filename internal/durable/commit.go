package durable

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/baton-agents/baton/core"
	"github.com/baton-agents/baton/internal/wait"
)

// Snapshot is a stored run as this process last saw it, with what its
// own latest commit wrote (empty after a plain read): a view appends
// Written instead of reading it back.
type Snapshot struct {
	core.RunRecord
	Written core.Output
	// Held is the step the commit held for its invocation to continue
	// (chain.go), not sent.
	Held *core.Step
}

// transition is one attempt at a commit: the state it replaces, the
// machine's output, and the write that stores it (nil: Store.Commit).
type transition struct {
	prev  core.RunState
	out   core.Output
	store func(core.Write) error
	// spent is what the step's AWS requests added to the run's cost.
	spent core.Resources
	// held is the next step the transition holds for its invocation
	// instead of sending it (Chain.hold).
	held *core.Step
}

// applyError marks an error of the step machine (as opposed to one of
// the store), so a step handler can drop an input the machine refuses.
type applyError struct{ err error }

func (e *applyError) Error() string { return e.err.Error() }
func (e *applyError) Unwrap() error { return e.err }

// errAttemptsExhausted: the run (or session) kept changing under every
// attempt; callers say which.
var errAttemptsExhausted = errors.New("commit attempts exhausted")

// commit is the one reload–apply–commit loop of the runner, used by
// start, by outside inputs and by steps. next builds an attempt from
// fresh state (attempt 0 may reuse what the caller already read); a
// version conflict backs off and tries again. After the write lands, the
// step's own messages extend the transcript cache, the next steps are
// sent and the write's notifications published (notify.go).
func (e *Runner) commit(ctx context.Context, tenant string, next func(attempt int) (transition, error)) (Snapshot, error) {
	for attempt := 0; attempt < e.Limits.CommitAttempts; attempt++ {
		if attempt > 0 {
			if err := wait.Sleep(ctx, time.Duration(5*attempt)*time.Millisecond); err != nil {
				return Snapshot{}, err
			}
		}
		t, err := next(attempt)
		if err != nil {
			return Snapshot{}, err
		}
		w, err := e.newWrite(tenant, t.prev, t.out)
		if err != nil {
			return Snapshot{}, err
		}
		before := meterTotal(ctx)
		if t.store != nil {
			err = t.store(w)
		} else {
			err = e.Store.Commit(ctx, w)
		}
		if errors.Is(err, core.ErrConflict) {
			e.countMetric("LockConflicts", nil)
			continue
		}
		if err != nil {
			return Snapshot{}, fmt.Errorf("commit run %s: %w", t.out.State.RunID, err)
		}
		e.committed(tenant, t.out)
		if core.IsTerminal(t.out.State.Status) && !core.IsTerminal(t.prev.Status) {
			e.countMetric("RunsFinished", map[string]string{"Status": string(t.out.State.Status)})
		}
		spentApplied(ctx, t.spent)
		next, snap := t.out.Next, Snapshot{RunRecord: core.RunRecord{Tenant: tenant, State: t.out.State}, Written: t.out}
		if t.held != nil {
			// The held step counts the commit's requests, as the first
			// step sent would.
			next = append([]core.Step{*t.held}, next...)
		}
		carry(ctx, before, next)
		if t.held != nil {
			held := next[0]
			held.Trace = t.out.State.Trace
			snap.Held, next = &held, next[1:]
		}
		e.enqueue(ctx, t.out.State, next)
		e.notify(ctx, w.Notifications)
		return snap, nil
	}
	return Snapshot{}, errAttemptsExhausted
}

// applyTo returns the attempts of applying in to a run: the first from
// the record (and transcript, when not nil) the caller read, later ones
// from a reload.
func (e *Runner) applyTo(ctx context.Context, first core.RunRecord, tr []core.Message, in core.Input) func(int) (transition, error) {
	return func(attempt int) (transition, error) {
		rec := first
		if attempt > 0 || tr == nil {
			var err error
			if attempt > 0 {
				if rec, err = e.loadOwned(ctx, first.Tenant, first.State.RunID); err != nil {
					return transition{}, fmt.Errorf("reload run %s: %w", first.State.RunID, err)
				}
			}
			if tr, err = e.transcript(ctx, rec.Tenant, rec.State); err != nil {
				return transition{}, err
			}
		}
		e.useIndex(rec.Tenant, &rec.State)
		actx, spent := e.withSpent(ctx)
		m, _, err := e.machineOf(ctx, rec.State.Config)
		if err != nil {
			return transition{}, err
		}
		out, err := m.Apply(actx, rec.State, tr, in)
		if errors.Is(err, core.ErrTerminal) {
			return transition{}, &applyError{&finishedError{status: rec.State.Status, err: err}}
		}
		if err != nil {
			return transition{}, &applyError{err}
		}
		return transition{prev: rec.State, out: out, spent: spent}, nil
	}
}

// dueSlot rounds a due time down to a multiple of a quarter of the stall
// timeout. The sweeper looks at a run at or after its stored due time and
// acts only on what is really due (an expiry or a stall), so an earlier
// time is never late; the rounding keeps the due-index entry (an index
// write on DynamoDB, two when its key moves) the same across the commits
// of a quarter of the stall timeout, instead of moving it on each.
func dueSlot(due time.Time, stallAfter time.Duration) time.Time {
	if q := stallAfter / 4; q > 0 {
		return due.Truncate(q)
	}
	return due
}

// newWrite is the store write of one transition, with its notifications
// (when a Notifier publishes them).
func (e *Runner) newWrite(tenant string, prev core.RunState, out core.Output) (core.Write, error) {
	w := core.Write{Tenant: tenant, PrevVersion: prev.Version, Output: dedupeResults(out), Pending: core.PendingItems(prev, out.State), ActiveLimit: e.Limits.MaxActiveRuns}
	if due, ok := out.State.DueAt(e.stall()); ok {
		due = dueSlot(due, e.Limits.StallAfter)
		w.DueAt = &due
	}
	w.AfterFinish = core.IsTerminal(prev.Status)
	if e.Notifier != nil || e.Callbacks != nil || out.State.Config.Parent != nil || len(out.State.Children) > 0 || out.State.Config.Eval != nil {
		var cb *core.Callback
		if e.Callbacks != nil {
			cb = out.State.Config.Callback
		}
		var err error
		if w.Notifications, err = notifications(tenant, prev, out, w.Pending, e.Notifier != nil, cb); err != nil {
			return core.Write{}, err
		}
	}
	w.Notifications = append(w.Notifications, extractionRecord(prev, out)...)
	if tasks := core.AbandonedRemoteTasks(prev, out); len(tasks) > 0 {
		w.Notifications = append(w.Notifications, remoteCancelRecord(tenant, out.State, tasks))
	}
	return w, nil
}

// finishedError is ErrFinished for a run in a final status: it says the
// status once, and is also the machine's error.
type finishedError struct {
	status core.RunStatus
	err    error
}

func (e *finishedError) Error() string {
	return fmt.Sprintf("the run has already finished (status %s)", e.status)
}

func (e *finishedError) Unwrap() []error { return []error{ErrFinished, e.err} }
