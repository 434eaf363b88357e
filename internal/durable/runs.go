package durable

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/baton-agents/baton/core"
	"github.com/baton-agents/baton/internal/agents"
)

// StartRequest is a validated POST /v1/runs.
type StartRequest struct {
	Agent        string
	SessionID    string
	Messages     []core.Message
	RequestTools []any
	Overrides    agents.Overrides
	Metadata     map[string]any
	Principal    *core.Principal
}

// Start creates a run: it takes the session lock, stores the first state
// and messages, and sends the first step.
func (e *Runner) Start(ctx context.Context, tenant string, req StartRequest) (core.RunRecord, error) {
	agent, ok := e.Agents.Get(req.Agent)
	if !ok {
		return core.RunRecord{}, fmt.Errorf("%w %q", ErrUnknownAgent, req.Agent)
	}
	cfg, err := agent.RunConfig(req.Overrides)
	if err != nil {
		return core.RunRecord{}, err
	}
	cfg.Metadata = req.Metadata
	cfg.Principal = req.Principal
	sessionID := req.SessionID
	if sessionID == "" {
		sessionID = e.IDs.NewID("s")
	}
	for attempt := 0; attempt < e.Limits.CommitAttempts; attempt++ {
		head, err := e.Store.SessionHead(ctx, tenant, sessionID)
		if err != nil {
			return core.RunRecord{}, err
		}
		if head.ActiveRun != "" {
			return core.RunRecord{}, fmt.Errorf("%w (%s)", ErrSessionBusy, head.ActiveRun)
		}
		out, err := e.Machine.Start(ctx, core.StartInput{
			RunID: e.IDs.NewID("r"), SessionID: sessionID, Config: cfg,
			RequestTools: req.RequestTools, Messages: req.Messages, FirstSeq: head.NextSeq,
		})
		if err != nil {
			return core.RunRecord{}, err
		}
		err = e.Store.CreateRun(ctx, head, e.write(tenant, core.RunState{}, out))
		switch {
		case err == nil:
			e.Log.InfoContext(ctx, "run started", "run_id", out.State.RunID, "session_id", sessionID, "agent", req.Agent, "tenant", tenant)
			e.enqueue(ctx, out.State, out.Next)
			return core.RunRecord{Tenant: tenant, State: out.State}, nil
		case errors.Is(err, core.ErrLockHeld):
			return core.RunRecord{}, fmt.Errorf("%w: %v", ErrSessionBusy, err)
		case errors.Is(err, core.ErrConflict):
			continue // the session moved (another run finished or started): read it again
		default:
			return core.RunRecord{}, err
		}
	}
	return core.RunRecord{}, fmt.Errorf("%w: session %s kept changing", ErrContention, sessionID)
}

// Get loads a run for its tenant, first expiring pending items whose time
// has come (expiry is enforced on every read).
func (e *Runner) Get(ctx context.Context, tenant, runID string) (core.RunRecord, error) {
	rec, err := e.loadOwned(ctx, tenant, runID)
	if err != nil {
		return rec, err
	}
	if exp, ok := rec.State.NextExpiry(); ok && !e.Clock.Now().Before(exp) {
		if r2, err := e.apply(ctx, tenant, runID, core.Expire{}); err == nil {
			return r2, nil
		} else if !errors.Is(err, core.ErrNothingToApply) && !errors.Is(err, ErrFinished) {
			e.Log.WarnContext(ctx, "expire on read", "run_id", runID, "err", err)
		}
		return e.loadOwned(ctx, tenant, runID)
	}
	return rec, nil
}

// Apply folds an outside input (client result, approval, cancel, steer,
// interrupt) into a run. Due expiries are applied first, so a late answer
// to an expired item is refused.
func (e *Runner) Apply(ctx context.Context, tenant, runID string, in core.Input) (core.RunRecord, error) {
	current, err := e.Get(ctx, tenant, runID)
	if err != nil {
		return core.RunRecord{}, err
	}
	rec, err := e.applyFrom(ctx, tenant, runID, in, &current)
	if err == nil {
		return rec, nil
	}
	var id string
	switch v := in.(type) {
	case core.ClientResult:
		id = v.RequestID
	case core.ApprovalDecision:
		id = v.ActionID
	}
	switch {
	case errors.Is(err, core.ErrNotFound) && id != "":
		if p, perr := e.Store.PendingItem(ctx, runID, id); perr == nil && p.Status != core.PendingOpen {
			return core.RunRecord{}, fmt.Errorf("%w: %s is %s", ErrAlreadyDecided, id, p.Status)
		}
		return core.RunRecord{}, err
	case errors.Is(err, core.ErrExpired):
		return core.RunRecord{}, fmt.Errorf("%w: %v", ErrAlreadyDecided, err)
	}
	return core.RunRecord{}, err
}

// apply runs one outside input with the reload-and-reapply loop.
func (e *Runner) apply(ctx context.Context, tenant, runID string, in core.Input) (core.RunRecord, error) {
	return e.applyFrom(ctx, tenant, runID, in, nil)
}

// applyFrom is apply starting from a record the caller just loaded (nil:
// load it); after a version conflict it reloads.
func (e *Runner) applyFrom(ctx context.Context, tenant, runID string, in core.Input, first *core.RunRecord) (core.RunRecord, error) {
	for attempt := 0; attempt < e.Limits.CommitAttempts; attempt++ {
		var rec core.RunRecord
		var err error
		if attempt == 0 && first != nil {
			rec = *first
		} else if rec, err = e.loadOwned(ctx, tenant, runID); err != nil {
			return rec, err
		}
		tr, err := e.transcript(ctx, tenant, rec.State)
		if err != nil {
			return rec, err
		}
		out, err := e.Machine.Apply(ctx, rec.State, tr, in)
		if errors.Is(err, core.ErrTerminal) {
			return rec, fmt.Errorf("%w (%s)", ErrFinished, rec.State.Status)
		}
		if err != nil {
			return rec, err
		}
		err = e.Store.Commit(ctx, e.write(tenant, rec.State, out))
		if errors.Is(err, core.ErrConflict) {
			backoff(ctx, attempt)
			continue
		}
		if err != nil {
			return rec, err
		}
		e.enqueue(ctx, out.State, out.Next)
		return core.RunRecord{Tenant: tenant, State: out.State}, nil
	}
	return core.RunRecord{}, fmt.Errorf("%w: run %s", ErrContention, runID)
}

func backoff(ctx context.Context, attempt int) {
	d := time.Duration(5*(attempt+1)) * time.Millisecond
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}
