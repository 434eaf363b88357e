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
func (e *Runner) executeRemote(ctx context.Context, rec core.RunRecord, step core.Step, call core.ToolCall, d Attempt) (core.Input, error) {
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
	out, err := core.ExecuteTool(ctx, e.IO.Tools, call)
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
