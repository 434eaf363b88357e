package durable

import (
	"context"
	"errors"
	"fmt"

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
	// RunID and Parent are set for a child run (children.go): its
	// derived id, and the call it answers; Inherit holds the parent's
	// budgets, whose remainders bound the child's.
	RunID   string
	Parent  *core.ParentRef
	Inherit []core.BudgetState
	// Alias names the alias the run's version comes from (default:
	// core.DefaultAlias), or Version the version itself (when the agent
	// allows agent_version); a child run runs on its parent's version
	// (inherited).
	Alias     string
	Version   string
	inherited bool
	// memorySubject is a child run's parent's memory subject.
	memorySubject string
	// eval tags an eval's case run or judge's run (evals.go).
	eval *core.EvalRef
	// Schedule names the schedule and fire time of a scheduled run.
	Schedule *core.ScheduleRef
}

// Start creates a run: it takes the session lock, stores the first state
// and messages, and sends the first step. The snapshot carries what it
// wrote, so the run's first view reads nothing back.
func (e *Runner) Start(ctx context.Context, tenant string, req StartRequest) (Snapshot, error) {
	return e.start(ctx, tenant, req, nil)
}

// start creates a run, or with fork a forked run on a new session.
func (e *Runner) start(ctx context.Context, tenant string, req StartRequest, fork *forkStart) (Snapshot, error) {
	runID := req.RunID
	if runID == "" {
		runID = e.IDs.NewID("r")
	}
	v, cfg, err := e.startConfig(ctx, tenant, runID, req, fork)
	if err != nil {
		return Snapshot{}, err
	}
	sessionID := req.SessionID
	if sessionID == "" {
		sessionID = e.IDs.NewID("s")
	}
	ctx, span := e.startRun(ctx, cfg)
	defer span.End()
	snap, err := e.commit(ctx, tenant, func(int) (transition, error) {
		head, err := e.Store.SessionHead(ctx, tenant, sessionID)
		if err != nil {
			return transition{}, err
		}
		// A fork starts a new session: a new id for one that exists.
		for tries := 0; fork != nil && head.Exists; tries++ {
			if tries == 8 {
				return transition{}, fmt.Errorf("%w: no unused session id for the fork", core.ErrConflict)
			}
			sessionID = e.IDs.NewID("s")
			if head, err = e.Store.SessionHead(ctx, tenant, sessionID); err != nil {
				return transition{}, err
			}
		}
		if head.ActiveRun != "" {
			return transition{}, fmt.Errorf("%w (%s)", ErrSessionBusy, head.ActiveRun)
		}
		in := core.StartInput{RunID: runID, SessionID: sessionID, Config: cfg,
			RequestTools: req.RequestTools, Messages: req.Messages, FirstSeq: head.NextSeq}
		base := head.Base
		if fork != nil {
			// The new session's messages start at the fork point; the
			// ones below it stay where they are.
			in.FirstSeq, in.Edited, base = fork.from.Seq, fork.edited, fork.base
			head.NextSeq = fork.from.Seq
		}
		out, err := e.machineIn(v, cfg.Agent).Start(ctx, in)
		if err != nil {
			return transition{}, err
		}
		out.State.Base = base
		out.State.Trace = runTrace(ctx, span, out.State.RunID, sessionID)
		return transition{out: out, store: func(w core.Write) error { return e.Store.CreateRun(ctx, head, w) }}, nil
	})
	switch {
	case err == nil:
		e.Log.InfoContext(ctx, "run started", "run_id", snap.State.RunID, "session_id", sessionID, "agent", req.Agent, "agent_version", v.ID, "tenant", tenant)
		return snap, nil
	case errors.Is(err, core.ErrLockHeld):
		return Snapshot{}, fmt.Errorf("%w: %v", ErrSessionBusy, err)
	case errors.Is(err, errAttemptsExhausted):
		return Snapshot{}, fmt.Errorf("%w: session %s kept changing", ErrContention, sessionID)
	}
	return Snapshot{}, err
}

// CheckStart reports whether req would start a run now (its agent
// version, agent, overrides and memory subject), creating nothing: a
// schedule checks the run request it will start with.
func (e *Runner) CheckStart(ctx context.Context, tenant string, req StartRequest) error {
	_, _, err := e.startConfig(ctx, tenant, "r-check", req, nil)
	return err
}

// startConfig resolves the agent version of a run to start and its run
// configuration.
func (e *Runner) startConfig(ctx context.Context, tenant, runID string, req StartRequest, fork *forkStart) (*Version, core.RunConfig, error) {
	v, err := e.startVersion(ctx, tenant, runID, req)
	if err != nil {
		return nil, core.RunConfig{}, err
	}
	agent, ok := v.Agents.Get(req.Agent)
	if !ok {
		if v.ID != "" {
			return nil, core.RunConfig{}, fmt.Errorf("%w %q in agent version %s", ErrUnknownAgent, req.Agent, v.ID)
		}
		return nil, core.RunConfig{}, fmt.Errorf("%w %q", ErrUnknownAgent, req.Agent)
	}
	if fork != nil {
		req.Overrides = fork.inherit(agent, req.Overrides)
	}
	cfg, err := agent.RunConfig(req.Overrides)
	if err != nil {
		return nil, core.RunConfig{}, err
	}
	cfg.AgentVersion = v.ID
	cfg.Metadata = req.Metadata
	cfg.Principal = req.Principal
	cfg.Parent = req.Parent
	cfg.InheritBudgets(req.Inherit)
	if fork != nil {
		cfg.ForkedFrom = &fork.from
	}
	cfg.Eval = req.eval
	cfg.Schedule = req.Schedule
	if err := memorySubject(&cfg, req); err != nil {
		return nil, core.RunConfig{}, err
	}
	return v, cfg, nil
}

// Get loads a run for its tenant, first expiring pending items whose time
// has come (expiry is enforced on every read).
func (e *Runner) Get(ctx context.Context, tenant, runID string) (Snapshot, error) {
	rec, err := e.loadOwned(ctx, tenant, runID)
	if err != nil {
		return Snapshot{}, err
	}
	if exp, ok := rec.State.NextExpiry(); ok && !e.Clock.Now().Before(exp) {
		snap, err := e.apply(ctx, rec, core.Expire{})
		if err == nil {
			return snap, nil
		}
		if !errors.Is(err, core.ErrNothingToApply) && !errors.Is(err, ErrFinished) {
			e.Log.WarnContext(ctx, "expire on read", "run_id", runID, "err", err)
		}
		if rec, err = e.loadOwned(ctx, tenant, runID); err != nil {
			return Snapshot{}, err
		}
	}
	return Snapshot{RunRecord: rec}, nil
}

// Apply folds an outside input (client result, approval, cancel, steer,
// interrupt) into a run. Due expiries are applied first, so a late answer
// to an expired item is refused.
func (e *Runner) Apply(ctx context.Context, tenant, runID string, in core.Input) (Snapshot, error) {
	current, err := e.Get(ctx, tenant, runID)
	if err != nil {
		return Snapshot{}, err
	}
	snap, err := e.apply(ctx, current.RunRecord, in)
	if err == nil {
		return snap, nil
	}
	var id string
	switch v := in.(type) {
	case core.ClientResult:
		id = v.RequestID
	case core.ApprovalDecision:
		id = v.ActionID
	}
	if errors.Is(err, core.ErrNotFound) && id != "" {
		// A child run's item, decided through its parent's route: the
		// child takes the decision (the first one wins, as on its own
		// route) and the parent's view follows.
		child, ok, cerr := e.childWaitingOn(ctx, current.State, id)
		if cerr != nil {
			return Snapshot{}, cerr
		}
		if ok {
			if _, err := e.Apply(ctx, tenant, child.State.RunID, in); err != nil {
				return Snapshot{}, err
			}
			return e.Get(ctx, tenant, runID)
		}
	}
	switch {
	case errors.Is(err, core.ErrNotFound) && id != "":
		if p, perr := e.Store.PendingItem(ctx, runID, id); perr == nil && p.Status != core.PendingOpen {
			return Snapshot{}, fmt.Errorf("%w: %s is %s", ErrAlreadyDecided, id, p.Status)
		}
		if p, ok := e.decidedInTree(ctx, current.State, id); ok {
			return Snapshot{}, fmt.Errorf("%w: %s of child run %s is %s", ErrAlreadyDecided, id, p.RunID, p.Status)
		}
	case errors.Is(err, core.ErrExpired):
		return Snapshot{}, fmt.Errorf("%w: %v", ErrAlreadyDecided, err)
	}
	return Snapshot{}, err
}

// apply commits one outside input, starting from a record the caller just
// loaded and reloading it after a version conflict.
func (e *Runner) apply(ctx context.Context, first core.RunRecord, in core.Input) (Snapshot, error) {
	snap, err := e.commit(ctx, first.Tenant, e.applyTo(ctx, first, nil, in))
	if errors.Is(err, errAttemptsExhausted) {
		return Snapshot{}, fmt.Errorf("%w: run %s", ErrContention, first.State.RunID)
	}
	return snap, err
}

// List returns one page of the tenant's runs, newest first. The children
// of a run (q.Parent) and its forks (q.ForkedFrom) are listed for the
// run's tenant only (another's run is not found), and only among the
// runs created since it.
func (e *Runner) List(ctx context.Context, tenant string, q core.RunListQuery) (core.RunPage, error) {
	for _, of := range []string{q.Parent, q.ForkedFrom} {
		if of == "" {
			continue
		}
		rec, err := e.loadOwned(ctx, tenant, of)
		if err != nil {
			return core.RunPage{}, err
		}
		if q.Since.Before(rec.State.CreatedAt) {
			q.Since = rec.State.CreatedAt
		}
	}
	page, err := e.Store.ListRuns(ctx, tenant, q)
	if err != nil {
		return core.RunPage{}, fmt.Errorf("list runs of tenant %s: %w", tenant, err)
	}
	return page, nil
}
