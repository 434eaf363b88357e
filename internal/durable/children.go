package durable

import (
	"context"
	"errors"
	"fmt"

	"github.com/baton-agents/baton/core"
	"github.com/baton-agents/baton/internal/agents"
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

// A run that ends while children of its are still running stops them:
// its final commit stores one outbox record per running child
// (core.Notification.Child), delivered like the others, which interrupts
// the child when the parent was interrupted and cancels it otherwise
// (a child that ended meanwhile is left as it is). Each child's own end
// then comes back to a parent that is finished, and changes nothing.

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
		Principal: principal, Version: st.Config.AgentVersion, inherited: true, memorySubject: parentSubject(st.Config.Memory),
		Parent:  &core.ParentRef{RunID: st.RunID, ToolCallID: call.ToolCallID, RootRunID: root, Depth: st.Config.Depth() + 1},
		Inherit: st.Budgets,
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

// deliverToParents delivers the records of ns between parent and child
// runs (a child's end, a child's stop) and returns the others.
func (e *Runner) deliverToParents(ctx context.Context, ns []core.Notification) []core.Notification {
	var rest []core.Notification
	for _, n := range ns {
		var err error
		switch {
		case n.Parent != nil:
			err = e.deliverToParent(ctx, n)
		case n.Child != nil:
			err = e.stopChildren(ctx, n)
		case n.Eval != nil:
			err = e.deliverToEval(ctx, n)
		case n.Memory != nil:
			err = e.sendExtraction(ctx, n)
		default:
			rest = append(rest, n)
			continue
		}
		if err != nil {
			e.Log.WarnContext(ctx, "deliver between a parent run and its child; the sweeper tries again", "run_id", n.RunID, "event_id", n.ID, "err", err)
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
	for _, b := range st.Budgets {
		if b.Name == core.BudgetToolCalls {
			in.ToolCalls = b.Current
		}
	}
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

// childStops is the outbox record of a finishing run that stops its
// running children (none when it has none): one record for all of them.
func childStops(st core.RunState) []core.Notification {
	var running []string
	for _, c := range st.Children {
		if c.Status == core.StatusRunning {
			running = append(running, c.RunID)
		}
	}
	if len(running) == 0 {
		return nil
	}
	reason := fmt.Sprintf("the parent run %s ended (%s)", st.RunID, st.Status)
	if r, ok := st.Interrupted["reason"].(string); ok && r != "" {
		reason += ": " + r
	}
	return []core.Notification{{
		ID: fmt.Sprintf("%s:%d:stop", st.RunID, st.Version), RunID: st.RunID, Time: st.UpdatedAt,
		Child: &core.ChildStop{RunIDs: running, Interrupt: st.Status == core.StatusInterrupted, Reason: reason},
	}}
}

// stopChildren delivers a child stop record: it cancels or interrupts
// each child, unless the child already ended. A child it could not stop
// leaves the record unsent; the sweeper delivers it again, and stopping
// a child again changes nothing.
func (e *Runner) stopChildren(ctx context.Context, n core.Notification) error {
	var errs []error
	for _, id := range n.Child.Runs() {
		errs = append(errs, e.stopChild(ctx, id, *n.Child))
	}
	return errors.Join(errs...)
}

func (e *Runner) stopChild(ctx context.Context, id string, stop core.ChildStop) error {
	child, err := e.Store.LoadRun(ctx, id)
	if errors.Is(err, core.ErrNotFound) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("load child run %s: %w", id, err)
	}
	var in core.Input = core.Cancel{Reason: stop.Reason}
	if stop.Interrupt {
		in = core.Interrupt{Reason: stop.Reason, Metadata: map[string]any{"source": "parent"}}
	}
	_, err = e.apply(ctx, child, in)
	if err == nil || errors.Is(err, ErrFinished) || errors.Is(err, core.ErrNothingToApply) {
		return nil
	}
	return fmt.Errorf("stop child run %s: %w", id, err)
}

// WalkChildren visits the child runs of st and theirs, depth first in
// the order they started (with running, only those still running), until
// visit says stop; it reports whether one did. The tree's pending items,
// its decisions and the streams that follow it (runstream) read it so.
func (e *Runner) WalkChildren(ctx context.Context, st core.RunState, running bool, visit func(core.RunRecord) (bool, error)) (bool, error) {
	for _, c := range st.Children {
		if running && c.Status != core.StatusRunning {
			continue
		}
		child, err := e.Store.LoadRun(ctx, c.RunID)
		if errors.Is(err, core.ErrNotFound) {
			continue
		}
		if err != nil {
			return false, fmt.Errorf("child run %s: %w", c.RunID, err)
		}
		if stop, err := visit(child); stop || err != nil {
			return stop, err
		}
		if stop, err := e.WalkChildren(ctx, child.State, running, visit); stop || err != nil {
			return stop, err
		}
	}
	return false, nil
}

// treePending lists what the running children of st (and theirs) wait
// on, each item with its run's id, after reqs and acts.
func (e *Runner) treePending(ctx context.Context, st core.RunState, reqs []core.PendingToolRequest, acts []core.PendingAction) ([]core.PendingToolRequest, []core.PendingAction, error) {
	_, err := e.WalkChildren(ctx, st, true, func(child core.RunRecord) (bool, error) {
		r, a := child.State.Pending()
		for _, x := range r {
			x.RunID = child.State.RunID
			reqs = append(reqs, x)
		}
		for _, x := range a {
			x.RunID = child.State.RunID
			acts = append(acts, x)
		}
		return false, nil
	})
	return reqs, acts, err
}

// childWaitingOn finds the running child (or grandchild) of st that
// waits on pending item id: a decision sent to a parent's route for it
// is applied there.
func (e *Runner) childWaitingOn(ctx context.Context, st core.RunState, id string) (core.RunRecord, bool, error) {
	var found core.RunRecord
	ok, err := e.WalkChildren(ctx, st, true, func(child core.RunRecord) (bool, error) {
		for _, cs := range child.State.Calls {
			if (cs.Status == core.CallAwaitingApproval && cs.ActionID == id) || (cs.Status == core.CallAwaitingClient && cs.RequestID == id) {
				found = child
				return true, nil
			}
		}
		return false, nil
	})
	return found, ok, err
}

// decidedInTree reports whether pending item id belongs to a child run
// of st (or to one of theirs) that no longer waits on it.
func (e *Runner) decidedInTree(ctx context.Context, st core.RunState, id string) (core.PendingItem, bool) {
	var item core.PendingItem
	ok, _ := e.WalkChildren(ctx, st, false, func(child core.RunRecord) (bool, error) {
		p, err := e.Store.PendingItem(ctx, child.State.RunID, id)
		if err != nil {
			return false, nil
		}
		item = p
		return true, nil
	})
	return item, ok && item.Status != core.PendingOpen
}

// handoff decides a handoff tool's call: the configuration of the agent
// it hands the run to (that agent's defaults; what belongs to the run is
// kept by the transition), or a failed result when the agent is gone.
func (e *Runner) handoff(v *Version, step core.Step, call core.ToolCall) core.Input {
	to := call.Declaration.HandoffAgent()
	fail := func(err error) core.Input {
		return core.ToolDecided{Step: step, Decision: core.Decision{Kind: core.DecideResult, Result: core.ToolResult{
			Success: false, ToolName: call.ToolName, ErrorType: core.ErrTypeToolNotFound,
			Error: fmt.Sprintf("The conversation cannot go to the %s agent: %v", to, err)}}}
	}
	agent, ok := v.Agents.Get(to)
	if !ok {
		return fail(fmt.Errorf("%w %q", ErrUnknownAgent, to))
	}
	cfg, err := agent.RunConfig(agents.Overrides{})
	if err != nil {
		return fail(err)
	}
	cfg.AgentVersion = v.ID
	return core.ToolDecided{Step: step, Decision: core.Decision{Kind: core.DecideHandoff, Handoff: &cfg}}
}
