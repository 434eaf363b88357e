package durable

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/baton-agents/baton/core"
)

// PendingView lists what a paused run waits on.
type PendingView struct {
	ToolRequests []core.PendingToolRequest `json:"tool_requests"`
	Actions      []core.PendingAction      `json:"actions"`
}

// View is the public run view.
type View struct {
	RunID     string         `json:"run_id"`
	SessionID string         `json:"session_id"`
	Agent     string         `json:"agent"`
	Status    string         `json:"status"`
	Pending   PendingView    `json:"pending"`
	Result    core.Envelope  `json:"result"`
	Metadata  map[string]any `json:"metadata,omitempty"`
	CreatedAt time.Time      `json:"created_at"`
	UpdatedAt time.Time      `json:"updated_at"`
}

// View builds the run view. The envelope embeds the whole session
// transcript while the view's JSON fits in maxBytes; otherwise
// result.messages keeps the newest messages that fit and
// result.messages_truncated is true (page the rest with Messages).
func (e *Runner) View(ctx context.Context, rec core.RunRecord, maxBytes int) (View, error) {
	st := rec.State
	tr, err := e.transcript(ctx, rec.Tenant, st)
	if err != nil {
		return View{}, err
	}
	events, err := e.Store.Events(ctx, st.RunID, 0, st.NextEventSeq, 0)
	if err != nil {
		return View{}, err
	}
	results, audit, err := e.Store.ToolRecords(ctx, st.RunID, st.NextMsgSeq)
	if err != nil {
		return View{}, err
	}
	if results, err = restoreResults(results, tr); err != nil {
		return View{}, fmt.Errorf("run %s: %w", st.RunID, err)
	}
	reqs, acts := st.Pending()
	v := View{
		RunID: st.RunID, SessionID: st.SessionID, Agent: st.Config.Agent, Status: st.Status,
		Pending:  PendingView{ToolRequests: nonNil(reqs), Actions: nonNil(acts)},
		Result:   core.BuildEnvelope(st, tr, events, results, audit),
		Metadata: st.Config.Metadata, CreatedAt: st.CreatedAt, UpdatedAt: st.UpdatedAt,
	}
	if maxBytes > 0 && size(v) > maxBytes {
		all := v.Result.Messages
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
		v.Result.MessagesTruncated = true
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
func (e *Runner) Wait(ctx context.Context, tenant, runID string, wait time.Duration) (core.RunRecord, error) {
	deadline := time.Now().Add(wait)
	delay := 100 * time.Millisecond
	for {
		rec, err := e.Get(ctx, tenant, runID)
		if err != nil {
			return rec, err
		}
		st := rec.State.Status
		if (st != core.StatusQueued && st != core.StatusRunning) || !time.Now().Before(deadline) {
			return rec, nil
		}
		if !sleep(ctx, minDur(delay, time.Until(deadline))) {
			return rec, nil
		}
		delay = minDur(delay*2, time.Second)
	}
}

// Events returns the run's events after after (at most limit), waiting up
// to wait for one when there is none and the run is not finished.
func (e *Runner) Events(ctx context.Context, tenant, runID string, after int64, limit int, wait time.Duration) ([]core.Event, error) {
	deadline := time.Now().Add(wait)
	delay := 100 * time.Millisecond
	for {
		rec, err := e.Get(ctx, tenant, runID)
		if err != nil {
			return nil, err
		}
		evs, err := e.Store.Events(ctx, runID, after, rec.State.NextEventSeq, limit)
		if err != nil {
			return nil, err
		}
		if len(evs) > 0 || core.IsTerminal(rec.State.Status) || !time.Now().Before(deadline) {
			return evs, nil
		}
		if !sleep(ctx, minDur(delay, time.Until(deadline))) {
			return nil, nil
		}
		delay = minDur(delay*2, time.Second)
	}
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
	return e.Store.Messages(ctx, tenant, rec.State.SessionID, after, head.NextSeq, limit)
}

func sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

func minDur(a, b time.Duration) time.Duration {
	if a < b {
		return a
	}
	return b
}
