package durable

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/baton-agents/baton/core"
)

// Remote agent tools (core/remote.go). A call's step sends its one
// message (or the client's answer to the task's question) at most once:
// the send is guarded by the call's intent, and the task it started is
// recorded there (SettleIntent) the moment the send returns, before the
// step follows the task. An attempt that finds the task recorded follows
// it and never sends again; an attempt interrupted before anything was
// recorded is in doubt, as any tool, unless the tool is retry_safe. A
// task still working when the executor's timeout is up parks the call
// (core.DecideAwaitRemote) until the sweeper's core.FollowRemote
// schedules its step again, after a backoff (Limits.RemoteFollow).

// executeRemote sends and follows the remote task of a remote agent
// tool's call.
func (e *Runner) executeRemote(ctx context.Context, v *Version, rec core.RunRecord, step core.Step, call core.ToolCall, d Attempt) (core.Input, error) {
	st := rec.State
	r := call.Remote
	key := "" // the intent guarding the message this attempt sends, if any
	switch {
	case r == nil || r.TaskID == "":
		key = call.ToolCallID
	case r.Reply != nil:
		key = call.ToolCallID + "/" + r.Reply.MessageID
	}
	if key != "" {
		claim, err := e.Store.ClaimIntent(ctx, st.RunID, key, d.Owner, e.Clock.Now(), e.Limits.IntentLease)
		if err != nil {
			return nil, fmt.Errorf("claim intent of %s: %w", key, err)
		}
		switch {
		case !claim.Claimed:
			return nil, core.Retryable(fmt.Errorf("tool call %s is sending its message elsewhere", call.ToolCallID))
		case claim.Sent != nil:
			// An earlier attempt sent the message: follow its task.
			if r == nil {
				r = &core.RemoteTask{}
			}
			r.TaskID, r.ContextID, r.Reply = claim.Sent.TaskID, claim.Sent.ContextID, nil
			key = ""
		case claim.Previous && !call.Declaration.RetrySafe():
			return e.inDoubt(ctx, st.RunID, step, call, claim.Attempt, "sent its message to the remote agent",
				"remote agent message may have been sent by an interrupted attempt; not sending again"), nil
		}
	}
	call.Remote = r
	recorded := false
	if key != "" {
		ctx = core.WithRemoteSent(ctx, func(s core.RemoteSent) error {
			if err := e.Store.SettleIntent(ctx, st.RunID, key, d.Owner, &s); err != nil {
				return fmt.Errorf("record remote task %s of %s: %w", s.TaskID, key, err)
			}
			recorded = true
			return nil
		})
	}
	out, err := core.ExecuteTool(ctx, v.Tools, call)
	if err != nil {
		if key != "" && !recorded && (errors.Is(err, core.ErrNotSent) || call.Declaration.RetrySafe()) {
			// Nothing reached the remote agent (or sending again is
			// safe): the next attempt is a first one.
			if serr := e.Store.SettleIntent(ctx, st.RunID, key, d.Owner, nil); serr != nil {
				e.Log.WarnContext(ctx, "remote agent call: claim not released", "run_id", st.RunID, "tool_call_id", call.ToolCallID, "err", serr)
			}
		}
		if core.IsRetryable(err) && d.ReceiveCount < e.Limits.MaxReceives {
			e.Log.WarnContext(ctx, "remote agent call failed; retrying the step", "run_id", st.RunID, "tool_call_id", call.ToolCallID, "err", err, "receive_count", d.ReceiveCount)
			core.NotifyToolRetry(ctx, core.ToolRetry{Attempt: max(d.ReceiveCount, 1), Attempts: e.Limits.MaxReceives, Reason: err.Error(), Wait: e.Limits.Redelivery})
			return nil, err
		}
		return core.ToolExecuted{Step: step, Err: err}, nil
	}
	p, ok := out.(*core.RemotePending)
	if !ok {
		return core.ToolExecuted{Step: step, Output: out}, nil
	}
	if p.Question != nil {
		return core.ToolDecided{Step: step, Decision: core.Decision{Kind: core.DecideRemoteInput, Remote: p}}, nil
	}
	follows := 0
	if r != nil && r.Reply == nil {
		follows = r.Follows
	}
	return core.ToolDecided{Step: step, Decision: core.Decision{Kind: core.DecideAwaitRemote, Remote: p, Wait: e.Limits.remoteWait(follows)}}, nil
}

// remoteWait is the wait before a parked remote task's follows+1-th
// follow-up: RemoteFollow, doubling, at most RemoteFollowMax.
func (c Limits) remoteWait(follows int) time.Duration {
	w := c.RemoteFollow
	for i := 0; i < follows && w < c.RemoteFollowMax; i++ {
		w *= 2
	}
	return min(w, c.RemoteFollowMax)
}

// RemoteTasks cancels a remote agent's task: the task of a call of tool
// (a remote agent tool of agent) in tenant's run. A task that already
// ended, or that the remote agent does not know, is not an error.
type RemoteTasks interface {
	CancelRemoteTask(ctx context.Context, tenant, agent, tool, taskID string) error
}

// A run that gives up on calls whose remote tasks still work (it was
// cancelled, interrupted or stopped, or a task's question expired or was
// answered with a failure: core.AbandonedRemoteTasks) stores, with that
// commit, one outbox record asking the remote agents to cancel them. The
// committing process delivers it when it has RemoteTasks (the worker,
// baton dev); otherwise (the API, after a cancel) the sweeper does,
// NotifyAfter later. A delivery that fails is tried again by the sweeper
// with the callbacks' backoff, CallbackAttempts times in all, and then
// given up (logged): the run's outcome never depends on it.

// remoteCancelRecord is the outbox record of the remote tasks a commit of
// st gave up on.
func remoteCancelRecord(tenant string, st core.RunState, tasks []core.AbandonedTask) core.Notification {
	return core.Notification{
		ID: fmt.Sprintf("%s:%d:remote-cancel", st.RunID, st.Version), RunID: st.RunID, Time: st.UpdatedAt,
		Remote: &core.RemoteCancel{Tenant: tenant, Agent: st.Config.Agent, Tasks: tasks},
	}
}

// cancelRemoteTasks delivers the remote-cancel records of ns (when this
// process can) and returns the other records.
func (e *Runner) cancelRemoteTasks(ctx context.Context, ns []core.Notification) []core.Notification {
	var rest []core.Notification
	for _, n := range ns {
		switch {
		case n.Remote == nil:
			rest = append(rest, n)
		case e.RemoteTasks != nil:
			e.cancelRemote(ctx, n)
		}
	}
	return rest
}

// cancelRemote makes one attempt at a remote-cancel record and settles
// it: sent, to be tried again later (with only the tasks not cancelled
// yet), or given up.
func (e *Runner) cancelRemote(ctx context.Context, n core.Notification) {
	rc := *n.Remote
	var left []core.AbandonedTask
	var errs []error
	for _, t := range rc.Tasks {
		if err := e.RemoteTasks.CancelRemoteTask(ctx, rc.Tenant, rc.Agent, t.ToolName, t.TaskID); err != nil {
			left = append(left, t)
			errs = append(errs, fmt.Errorf("task %s of call %s: %w", t.TaskID, t.ToolCallID, err))
		}
	}
	log := e.Log.With("run_id", n.RunID, "event_id", n.ID)
	if len(left) == 0 {
		if err := e.Store.MarkNotificationSent(ctx, n.RunID, n.ID); err != nil {
			log.WarnContext(ctx, "mark remote tasks cancelled", "err", err)
		}
		return
	}
	err := errors.Join(errs...)
	rc.Tasks, rc.Attempts = left, rc.Attempts+1
	rc.LastError, _ = truncate(err.Error(), maxCallbackError)
	if rc.Attempts >= e.Limits.CallbackAttempts {
		log.ErrorContext(ctx, "remote tasks not cancelled; giving up", "attempts", rc.Attempts, "err", rc.LastError)
		if err := e.Store.MarkNotificationSent(ctx, n.RunID, n.ID); err != nil {
			log.WarnContext(ctx, "mark the remote-cancel record given up", "err", err)
		}
		return
	}
	var backoff time.Duration
	n.Time, backoff = e.retryAt(rc.Attempts)
	n.Remote = &rc
	log.WarnContext(ctx, "remote tasks not cancelled; the sweeper tries again", "attempts", rc.Attempts, "retry_in", backoff.String(), "err", rc.LastError)
	if err := e.Store.UpdateNotification(ctx, n); err != nil {
		log.WarnContext(ctx, "record the failed remote-cancel attempt", "err", err)
	}
}
