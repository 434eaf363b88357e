package durable

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/baton-agents/baton/core"
	"github.com/baton-agents/baton/internal/wait"
)

// PendingView lists what a paused run waits on.
type PendingView struct {
	ToolRequests []core.PendingToolRequest `json:"tool_requests"`
	Actions      []core.PendingAction      `json:"actions"`
}

// View is the public run view.
type View struct {
	RunID     string `json:"run_id"`
	SessionID string `json:"session_id"`
	Agent     string `json:"agent"`
	// AgentVersion is the agents file version the run runs on.
	AgentVersion string         `json:"agent_version,omitempty"`
	Status       core.RunStatus `json:"status"`
	Pending      PendingView    `json:"pending"`
	Result       core.Envelope  `json:"result"`
	Metadata     map[string]any `json:"metadata,omitempty"`
	// Budgets are the run's budgets, each with its ceiling and what the
	// run has used of it.
	Budgets []core.BudgetState `json:"budgets,omitempty"`
	// Children are the child runs its agent tools started (run id,
	// agent, call, status, usage and cost).
	Children []core.ChildSummary `json:"children,omitempty"`
	// Deliveries are the run's steps that the queue delivered again or
	// that were dropped as stale, with their counts (a run whose every
	// step was delivered once has none).
	Deliveries []core.StepDeliveries `json:"deliveries,omitempty"`
	// FirstSeq is the sequence number of the run's first message: the
	// session's messages below it came before the run (an earlier run of
	// the session, or a fork's shared prefix). A fork may start at a user
	// or assistant message at or above it.
	FirstSeq int64 `json:"first_seq"`
	// ForkedFrom is set on a fork: its source run, the message it
	// forked at and its tool mode.
	ForkedFrom *core.ForkRef `json:"forked_from,omitempty"`
	// Eval is set on an eval's case run or its judge's run.
	Eval *core.EvalRef `json:"eval,omitempty"`
	// ScheduleID and ScheduledFor are set on a run a schedule started:
	// the schedule and the fire time.
	ScheduleID   string     `json:"schedule_id,omitempty"`
	ScheduledFor *time.Time `json:"scheduled_for,omitempty"`
	CreatedAt    time.Time  `json:"created_at"`
	UpdatedAt    time.Time  `json:"updated_at"`
}

// View builds the run view of a snapshot. The envelope embeds the whole
// session transcript while the view's JSON fits in maxBytes; otherwise
// result.messages keeps the newest messages that fit and
// result.messages_truncated is true (page the rest with Messages). What
// the snapshot's own commit wrote is taken from it, not read back.
func (e *Runner) View(ctx context.Context, snap Snapshot, maxBytes int) (View, error) {
	st, w := snap.State, snap.Written
	msgsBefore := st.NextMsgSeq - int64(len(w.Messages))
	tr, err := e.transcriptBefore(ctx, snap.Tenant, st.SessionID, st.Base, msgsBefore)
	if err != nil {
		return View{}, err
	}
	tr = append(tr[:len(tr):len(tr)], w.Messages...)
	events := w.Events
	if before := st.NextEventSeq - int64(len(w.Events)); before > 1 { // event seqs start at 1
		stored, err := e.Store.Events(ctx, st.RunID, 0, before, 0)
		if err != nil {
			return View{}, err
		}
		events = append(stored, w.Events...)
	}
	results, audit := w.ToolResults, w.Audit
	if msgsBefore > st.FirstMsgSeq {
		storedResults, storedAudit, err := e.Store.ToolRecords(ctx, st.RunID, msgsBefore)
		if err != nil {
			return View{}, err
		}
		if storedResults, err = restoreResults(storedResults, tr); err != nil {
			return View{}, fmt.Errorf("run %s: %w", st.RunID, err)
		}
		results, audit = append(storedResults, results...), append(storedAudit, audit...)
	}
	var deliveries []core.StepDeliveries
	if created := len(w.Events) > 0 && w.Events[0].Seq == 1; !created {
		// The run's creation wrote its first event; no step of it was
		// delivered yet, so only a later snapshot reads the notes.
		if deliveries, err = e.Store.Deliveries(ctx, st.RunID); err != nil {
			return View{}, err
		}
	}
	reqs, acts := st.Pending()
	if len(st.Children) > 0 && !core.IsTerminal(st.Status) {
		if reqs, acts, err = e.treePending(ctx, st, reqs, acts); err != nil {
			return View{}, err
		}
	}
	v := View{
		RunID: st.RunID, SessionID: st.SessionID, Agent: st.Config.Agent, AgentVersion: st.Config.AgentVersion, Status: st.Status,
		Pending:  PendingView{ToolRequests: nonNil(reqs), Actions: nonNil(acts)},
		Result:   core.BuildEnvelope(st, tr, events, results, audit),
		Metadata: st.Config.Metadata, Budgets: st.Budgets, Children: st.Children, Deliveries: deliveries, CreatedAt: st.CreatedAt, UpdatedAt: st.UpdatedAt,
		ForkedFrom: st.Config.ForkedFrom, FirstSeq: st.FirstMsgSeq, Eval: st.Config.Eval,
	}
	if s := st.Config.Schedule; s != nil {
		v.ScheduleID, v.ScheduledFor = s.ID, &s.FireTime
	}
	if maxBytes > 0 && size(v) > maxBytes {
		all := v.Result.Messages
		// Measured as sent: the flag's own bytes count against the bound.
		v.Result.MessagesTruncated = true
		lo, hi := 0, len(all) // drop lo..hi messages from the front
		for lo < hi {
			mid := (lo + hi) / 2
			v.Result.Messages = all[mid:]
			if size(v) <= maxBytes {
				hi = mid
			} else {
				lo = mid + 1
			}
		}
		v.Result.Messages = all[lo:]
	}
	return v, nil
}

func size(v any) int {
	b, err := json.Marshal(v)
	if err != nil {
		return 0
	}
	return len(b)
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// Wait polls a run until its status leaves queued and running, the wait
// ends or ctx is done, reading the store sparingly (backing off to 1 s).
func (e *Runner) Wait(ctx context.Context, tenant, runID string, wait time.Duration) (Snapshot, error) {
	var snap Snapshot
	_, err := e.poll(ctx, wait, func() (bool, error) {
		var err error
		snap, err = e.Get(ctx, tenant, runID)
		st := snap.State.Status
		return st != core.StatusQueued && st != core.StatusRunning, err
	})
	return snap, err
}

// Events returns the run's events after after (at most limit), waiting up
// to wait for one when there is none and the run is not finished.
func (e *Runner) Events(ctx context.Context, tenant, runID string, after int64, limit int, wait time.Duration) ([]core.Event, error) {
	var evs []core.Event
	_, err := e.poll(ctx, wait, func() (bool, error) {
		snap, err := e.Get(ctx, tenant, runID)
		if err != nil {
			return false, err
		}
		evs, err = e.Store.Events(ctx, runID, after, snap.State.NextEventSeq, limit)
		return len(evs) > 0 || core.IsTerminal(snap.State.Status), err
	})
	return evs, err
}

// poll is the runner's one polling loop: check at once, then after 100 ms,
// doubling to 1 s, until check is done or the wait is over.
func (e *Runner) poll(ctx context.Context, d time.Duration, check func() (bool, error)) (bool, error) {
	return wait.Poll(ctx, d, 100*time.Millisecond, time.Second, check)
}

// Messages pages the transcript of the run's session.
func (e *Runner) Messages(ctx context.Context, tenant, runID string, after int64, limit int) ([]core.Message, error) {
	rec, err := e.loadOwned(ctx, tenant, runID)
	if err != nil {
		return nil, err
	}
	head, err := e.Store.SessionHead(ctx, tenant, rec.State.SessionID)
	if err != nil {
		return nil, err
	}
	return e.messages(ctx, tenant, rec.State.SessionID, rec.State.Base, after, head.NextSeq, limit)
}

// Session reads a tenant's session: its head (whose ActiveRun is the
// unfinished run holding it, or "") and its whole transcript. A session
// the tenant never used has an empty head and no messages.
func (e *Runner) Session(ctx context.Context, tenant, sessionID string) (core.SessionHead, []core.Message, error) {
	head, err := e.Store.SessionHead(ctx, tenant, sessionID)
	if err != nil || !head.Exists {
		return head, nil, err
	}
	msgs, err := e.transcriptBefore(ctx, tenant, sessionID, head.Base, head.NextSeq)
	return head, msgs, err
}
