package durable

import (
	"context"
	"errors"
	"fmt"

	"github.com/baton-agents/baton/core"
)

// Child runs (agent tools). A tool step whose declaration is an agent
// tool starts the child run that answers the call instead of executing
// anything: its id and session are derived from the call
// (core.ChildRunID), so a redelivered or re-run step finds the child the
// first attempt created and never starts a second; the call then waits
// (core.CallAwaitingChild) with no step scheduled, so the parent costs
// nothing and no sweeper looks at it. The child is a run like any other,
// in the parent's tenant, with the parent's principal (no wider).
//
// The commit that finishes a child stores, with it, an outbox record
// addressed to the parent (core.Notification.Parent). After the commit
// the finishing process delivers it: it reads the child's outcome and
// applies core.ChildFinished to the parent, which records the call's
// result and schedules what comes next; the record is then marked sent.
// A crash in between leaves the record unsent, and the sweeper delivers
// it again NotifyAfter later; a second delivery finds the call answered
// (core.ErrNothingToApply) and only marks the record sent. So the parent
// receives each child's end exactly once.

// startChild starts (or finds) the child run of an agent tool's call and
// returns the decision that makes the call wait for it; a child that
// cannot be started (its agent is gone) is the call's failed result.
func (e *Runner) startChild(ctx context.Context, rec core.RunRecord, step core.Step, call core.ToolCall) (core.Input, error) {
	st := rec.State
	childID := core.ChildRunID(st.RunID, call.ToolCallID)
	await := core.ToolDecided{Step: step, Decision: core.Decision{Kind: core.DecideAwaitChild, ChildRunID: childID}}
	if _, err := e.Store.LoadRun(ctx, childID); err == nil {
		return await, nil
	} else if !errors.Is(err, core.ErrNotFound) {
		return nil, fmt.Errorf("child run %s of call %s: %w", childID, call.ToolCallID, err)
	}
	agent := call.Declaration.ChildAgent()
	root := st.RunID
	if p := st.Config.Parent; p != nil {
		root = p.RootRunID
	}
	var principal *core.Principal
	if p := st.Config.Principal; p != nil {
		cp := *p
		cp.AgentID = agent
		principal = &cp
	}
	_, err := e.Start(ctx, rec.Tenant, StartRequest{
		Agent: agent, RunID: childID, SessionID: core.ChildSessionID(st.RunID, call.ToolCallID),
		Messages:  []core.Message{{Role: core.RoleUser, Content: core.ChildTask(call.Parameters)}},
		Principal: principal,
		Parent:    &core.ParentRef{RunID: st.RunID, ToolCallID: call.ToolCallID, RootRunID: root, Depth: st.Config.Depth() + 1},
	})
	if err == nil {
		return await, nil
	}
	if _, lerr := e.Store.LoadRun(ctx, childID); lerr == nil {
		return await, nil // another attempt created it meanwhile
	}
	if errors.Is(err, ErrUnknownAgent) || errors.Is(err, core.ErrInvalidInput) {
		return core.ToolDecided{Step: step, Decision: core.Decision{Kind: core.DecideResult, Result: core.ToolResult{
			Success: false, ToolName: call.ToolName, ErrorType: core.ErrTypeChildRun,
			Error: fmt.Sprintf("The %s agent's run could not be started: %v", agent, err),
		}}}, nil
	}
	return nil, core.Retryable(fmt.Errorf("start child run %s of call %s: %w", childID, call.ToolCallID, err))
}

// parentRecord is the outbox record of a finishing child run that
// delivers its end to its parent.
func parentRecord(st core.RunState) core.Notification {
	p := st.Config.Parent
	return core.Notification{
		ID: fmt.Sprintf("%s:%d:parent", st.RunID, st.Version), RunID: st.RunID, Time: st.UpdatedAt,
		Parent: &core.ParentDelivery{RunID: p.RunID, ToolCallID: p.ToolCallID},
	}
}

// deliverToParents delivers the parent records of ns and returns the
// others.
func (e *Runner) deliverToParents(ctx context.Context, ns []core.Notification) []core.Notification {
	var rest []core.Notification
	for _, n := range ns {
		if n.Parent == nil {
			rest = append(rest, n)
			continue
		}
		if err := e.deliverToParent(ctx, n); err != nil {
			e.Log.WarnContext(ctx, "deliver a child run's end to its parent; the sweeper tries again", "run_id", n.RunID, "parent_run_id", n.Parent.RunID, "err", err)
			continue
		}
		if err := e.Store.MarkNotificationSent(ctx, n.RunID, n.ID); err != nil {
			e.Log.WarnContext(ctx, "mark a child run's end delivered", "run_id", n.RunID, "err", err)
		}
	}
	return rest
}

// deliverToParent applies the end of child run n.RunID to its parent.
func (e *Runner) deliverToParent(ctx context.Context, n core.Notification) error {
	child, err := e.Store.LoadRun(ctx, n.RunID)
	if err != nil {
		return fmt.Errorf("load child run: %w", err)
	}
	st := child.State
	in := core.ChildFinished{ToolCallID: n.Parent.ToolCallID, ChildRunID: st.RunID, Agent: st.Config.Agent, Status: st.Status,
		Usage: st.Usage.Map(), Cost: st.Cost}
	switch {
	case st.Status == core.StatusCompleted:
		tr, err := e.transcript(ctx, child.Tenant, st)
		if err != nil {
			return err
		}
		in.FinalContent = core.FinalContent(tr)
	case st.Error != nil:
		in.Reason = st.Error.Message
	case st.Budget != "":
		in.Reason = "budget " + st.Budget + " exceeded"
	}
	if r, ok := st.Interrupted["reason"].(string); ok && in.Reason == "" {
		in.Reason = r
	}
	parent, err := e.loadOwned(ctx, child.Tenant, n.Parent.RunID)
	if errors.Is(err, core.ErrNotFound) {
		e.Log.ErrorContext(ctx, "a child run's parent is gone", "run_id", st.RunID, "parent_run_id", n.Parent.RunID)
		return nil
	}
	if err != nil {
		return fmt.Errorf("load parent run: %w", err)
	}
	_, err = e.apply(ctx, parent, in)
	if err == nil || errors.Is(err, core.ErrNothingToApply) || errors.Is(err, ErrFinished) {
		return nil
	}
	return err
}
