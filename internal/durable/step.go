package durable

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/baton-agents/baton/core"
)

// Attempt describes how a step message arrived.
type Attempt struct {
	// ReceiveCount is the queue's receive count (1 on first delivery).
	ReceiveCount int
	// Owner identifies this attempt (a Lambda request id, a poller id).
	Owner string
	// Chain, when set, lets the step's commit hold the run's next step
	// for this invocation (chain.go).
	Chain *Chain
	// run is the run a chained step continues from (Chain.Next).
	run *core.RunRecord
}

// HandleStep runs one step: load, plan, do the step's one piece of I/O
// (committing its model call retries and heartbeats while it runs, see
// progress), apply and commit (reloading and re-applying the same outcome on a
// version conflict), then send the next steps. A nil error acknowledges
// the message, stale and duplicate deliveries included. A returned error
// is retryable: the queue delivers the message again.
func (e *Runner) HandleStep(ctx context.Context, step core.Step, d Attempt) error {
	return e.traceStep(ctx, step, d, func(ctx context.Context) error { return e.handleStep(ctx, step, d) })
}

func (e *Runner) handleStep(ctx context.Context, step core.Step, d Attempt) error {
	if step.Format != core.StepFormat || step.RunID == "" || (step.Kind != core.StepModelTurn && step.Kind != core.StepToolCall) {
		e.Log.ErrorContext(ctx, "dropping malformed step", "kind", step.Kind, "v", step.Format, "run_id", step.RunID)
		return nil
	}
	log := e.Log.With("run_id", step.RunID, "step_seq", step.Seq, "step_kind", step.Kind)
	ctx = e.meterStep(ctx, step, d)
	ctx, rec, err := e.loadStep(ctx, step, d)
	if errors.Is(err, core.ErrNotFound) {
		log.ErrorContext(ctx, "dropping step of unknown run")
		return nil
	}
	if err != nil {
		return fmt.Errorf("load run %s: %w", step.RunID, err)
	}
	log = log.With("session_id", rec.State.SessionID)
	turn := 0
	if step.Kind == core.StepModelTurn {
		turn = rec.State.Turn + 1
	}
	defer e.noteDelivery(ctx, step, d, turn, log)
	tr, err := e.transcript(ctx, rec.Tenant, rec.State)
	if err != nil {
		return err
	}
	e.useIndex(rec.Tenant, &rec.State)
	if err := e.recorded(ctx, rec.Tenant, &rec.State, step); err != nil {
		return err
	}
	traceVersion(ctx, rec.State.Config)
	m, v, err := e.machineOf(ctx, rec.State.Config)
	if err != nil {
		return err
	}
	plan, err := m.Plan(ctx, rec.State, tr, step)
	if err == nil && plan.Kind == core.PlanModel && v.ToolSource != nil {
		var changed bool
		if rec, changed, err = e.discoverTools(ctx, v.ToolSource, rec, tr, log); err != nil {
			return err
		}
		if changed {
			// The model's view changed: plan the turn again (the input
			// guardrails run once more only then).
			plan, err = m.Plan(ctx, rec.State, tr, step)
		}
	}
	if err != nil {
		log.ErrorContext(ctx, "dropping unplannable step", "err", err)
		return nil
	}
	var in core.Input
	switch plan.Kind {
	case core.PlanSkip:
		log.DebugContext(ctx, "stale step acknowledged", "reason", plan.Reason)
		markStale(ctx)
		return nil
	case core.PlanApply:
		in = plan.Input
		traceDecided(ctx, in)
	default:
		// The I/O may take minutes (a throttled model call, a slow tool):
		// its retries and heartbeats keep the run from looking stalled.
		p := e.watch(ctx, rec, tr, step, log)
		ioctx, published := core.WithToolRetryObserver(ctx, p.observeTool(ctx)), func() {}
		if plan.Kind == core.PlanModel || plan.Kind == core.PlanCompact {
			ioctx = core.WithModelRetryObserver(ioctx, p.observe(ctx))
		}
		if plan.Kind == core.PlanModel {
			// A turn's tokens are streamed; a compaction summary's never.
			ioctx, published = e.publish(ioctx, rec.State, plan, log)
		}
		if plan.Recall != nil {
			r := *plan.Recall
			r.Scope.Tenant = rec.Tenant // the run's tenant, whatever its principal says
			plan.Recall = &r
		}
		switch plan.Kind {
		case core.PlanTool:
			in, err = e.traceTool(ioctx, *plan.Tool, func(ctx context.Context) (core.Input, error) { return e.executeTool(ctx, v, rec, step, plan, d) })
		case core.PlanModel:
			in = e.traceModel(ioctx, rec.State, func(ctx context.Context) core.Input { return e.IO.Perform(ctx, step, plan) })
		default:
			in = e.IO.Perform(ioctx, step, plan)
		}
		published()
		rec = p.stop()
		if err != nil {
			return err
		}
	}
	if err := modelError(in); err != nil && core.IsRetryable(err) {
		if d.ReceiveCount < e.Limits.MaxReceives {
			log.WarnContext(ctx, "model call failed; retrying the step", "err", err, "receive_count", d.ReceiveCount)
			return err
		}
		log.ErrorContext(ctx, "model call failed on the last receive; applying the failure", "err", err)
	}
	return e.commitStep(ctx, rec, tr, in, d.Chain, log)
}

// noteDelivery notes a delivery of a loaded run's step that was a
// redelivery or was dropped as stale (core.DeliveryNote), so the run's
// timeline can show it; a first delivery that did its work writes
// nothing. A note that cannot be stored is logged, never retried: it
// is not worth a second delivery.
func (e *Runner) noteDelivery(ctx context.Context, step core.Step, d Attempt, turn int, log *slog.Logger) {
	stale := !stepProcessed(ctx)
	if d.ReceiveCount <= 1 && !stale {
		return
	}
	if stale {
		turn = 0 // the run moved on: which turn the step ran is not known
	}
	n := core.DeliveryNote{Step: step, Turn: turn, Redelivered: d.ReceiveCount > 1, Stale: stale, At: e.Clock.Now()}
	if err := e.Store.NoteDelivery(ctx, step.RunID, n); err != nil {
		log.WarnContext(ctx, "delivery note not stored", "err", err)
	}
}

// modelError is the error of a step's model call: a model turn's, or a
// compaction summary's. A retryable one retries the step until the last
// receive, which applies it (a turn's fails the run; a summary's leaves
// the transcript as it is and the turn goes on).
func modelError(in core.Input) error {
	switch in := in.(type) {
	case core.ModelReplied:
		return in.Err
	case core.Compacted:
		return in.Err
	}
	return nil
}

// executeTool claims the call's intent and executes it, or decides its
// outcome when an earlier attempt's outcome is unknown.
func (e *Runner) executeTool(ctx context.Context, v *Version, rec core.RunRecord, step core.Step, plan core.Plan, d Attempt) (core.Input, error) {
	st := rec.State
	call := *plan.Tool
	call.Tenant = rec.Tenant
	switch call.Declaration.Executor {
	case core.ExecutorAgent:
		return e.startChild(ctx, rec, step, call)
	case core.ExecutorHandoff:
		return e.handoff(v, step, call), nil
	case core.ExecutorRemoteAgent:
		return e.executeRemote(ctx, v, rec, step, call, d)
	}
	now := e.Clock.Now()
	claim, err := e.Store.ClaimIntent(ctx, st.RunID, call.ToolCallID, d.Owner, now, e.Limits.IntentLease)
	if err != nil {
		return nil, fmt.Errorf("claim intent of %s: %w", call.ToolCallID, err)
	}
	if !claim.Claimed {
		return nil, core.Retryable(fmt.Errorf("tool call %s is executing elsewhere", call.ToolCallID))
	}
	if claim.Previous && !call.Declaration.RetrySafe() {
		return e.inDoubt(ctx, st.RunID, step, call, claim.Attempt, "run", "tool outcome unknown after an interrupted attempt; not executing again"), nil
	}
	out, err := core.ExecuteTool(ctx, v.Tools, call)
	return core.ToolExecuted{Step: step, Output: out, Err: err}, nil
}

// inDoubt decides a call an interrupted attempt may have carried out (what:
// "run", or "sent its message to the remote agent") and that is not
// retry_safe: it is not done again, and its result says so (in_doubt).
func (e *Runner) inDoubt(ctx context.Context, runID string, step core.Step, call core.ToolCall, attempt int, what, logMsg string) core.Input {
	e.Log.WarnContext(ctx, logMsg, "run_id", runID, "tool_call_id", call.ToolCallID, "tool_name", call.ToolName, "attempt", attempt)
	again := "run again"
	if what != "run" {
		again = "sent again"
	}
	return core.ToolDecided{Step: step, Decision: core.Decision{Kind: core.DecideResult, Result: core.ToolResult{
		Success: false, ToolName: call.ToolName, ErrorType: core.ErrTypeInDoubt,
		Error: fmt.Sprintf("The outcome of this call to '%s' is unknown: an earlier attempt was interrupted after it may have %s, and the tool is not marked retry_safe, so it was not %s.", call.ToolName, what, again),
	}}}
}

// discoverTools applies what the tool source offers the run's agent
// (core.ToolsDiscovered) before a model turn plans its request, and
// returns the run as committed and whether a commit changed it.
func (e *Runner) discoverTools(ctx context.Context, src core.ToolSource, rec core.RunRecord, tr []core.Message, log *slog.Logger) (core.RunRecord, bool, error) {
	in := src.Discover(ctx, rec.State.Config.Agent, rec.Tenant)
	if len(in.Tools) == 0 && len(in.Unavailable) == 0 {
		return rec, false, nil
	}
	snap, err := e.commit(ctx, rec.Tenant, e.applyTo(ctx, rec, tr, in))
	switch {
	case err == nil:
		return snap.RunRecord, true, nil
	case errors.Is(err, core.ErrNothingToApply):
		return rec, false, nil
	case errors.As(err, new(*applyError)):
		log.WarnContext(ctx, "discovered tools not applied", "err", err)
		return rec, false, nil
	case errors.Is(err, errAttemptsExhausted):
		return rec, false, core.Retryable(fmt.Errorf("%w: run %s", ErrContention, rec.State.RunID))
	}
	return rec, false, err
}

func (e *Runner) commitStep(ctx context.Context, rec core.RunRecord, tr []core.Message, in core.Input, chain *Chain, log *slog.Logger) error {
	next := e.applyTo(ctx, rec, tr, in)
	if chain != nil {
		next = chain.hold(next)
	}
	snap, err := e.commit(ctx, rec.Tenant, next)
	switch {
	case err == nil:
		if snap.Held != nil {
			chain.took(*snap.Held, snap.RunRecord)
		}
		return nil
	case errors.Is(err, core.ErrStaleStep) || errors.Is(err, core.ErrTerminal):
		// Another delivery committed this step, or the run ended
		// (cancelled) while the step ran: the outcome is dropped.
		log.InfoContext(ctx, "step outcome dropped: the run moved on", "reason", err.Error())
		markStale(ctx)
		return nil
	case errors.Is(err, errAttemptsExhausted):
		return core.Retryable(fmt.Errorf("%w: run %s", ErrContention, rec.State.RunID))
	case errors.As(err, new(*applyError)):
		log.ErrorContext(ctx, "dropping step: apply failed", "err", err)
		return nil
	}
	return err
}

// Sweep is the scheduler's pass over due runs: it expires pending items
// whose time has come (writing failed timed_out results), schedules the
// steps of calls whose remote tasks are due (core.FollowRemote) and sends again
// the steps of runs that made no progress for StallAfter. Then it sends
// again the notifications still unsent NotifyAfter after their
// transition. It returns how many runs it looked at.
func (e *Runner) Sweep(ctx context.Context, limit int) (int, error) {
	now := e.Clock.Now()
	ids, err := e.Store.DueRuns(ctx, now, limit)
	if err != nil {
		return 0, fmt.Errorf("list due runs: %w", err)
	}
	for _, id := range ids {
		rec, err := e.Store.LoadRun(ctx, id)
		if err != nil {
			e.Log.WarnContext(ctx, "sweep: load run", "run_id", id, "err", err)
			continue
		}
		st := rec.State
		if exp, ok := st.NextExpiry(); ok && !now.Before(exp) {
			if _, err := e.apply(ctx, rec, core.Expire{}); err != nil && !errors.Is(err, core.ErrNothingToApply) && !errors.Is(err, ErrFinished) {
				e.Log.WarnContext(ctx, "sweep: expire", "run_id", id, "err", err)
			}
			continue
		}
		if due, ok := st.NextRemoteDue(); ok && !now.Before(due) {
			if _, err := e.apply(ctx, rec, core.FollowRemote{}); err != nil && !errors.Is(err, core.ErrNothingToApply) && !errors.Is(err, ErrFinished) {
				e.Log.WarnContext(ctx, "sweep: follow remote tasks", "run_id", id, "err", err)
			}
			continue
		}
		if due, ok := st.StallDue(e.stall()); ok && !now.Before(due) {
			steps := st.ScheduledSteps()
			// The resend is a commit (fenced by the run's version) that
			// moves the run's due time on, so a run whose steps only wait
			// their turn is sent again once per stall period, not on
			// every pass; a worker that committed meanwhile wins. A step
			// a chaining worker held is sent once its lease has passed.
			_, err := e.apply(ctx, rec, core.StallResend{Stall: e.stall()})
			switch {
			case err == nil:
				e.Log.WarnContext(ctx, "sweep: sent stalled steps again", "run_id", id, "steps", len(steps), "since", st.UpdatedAt)
			case !errors.Is(err, core.ErrNothingToApply) && !errors.Is(err, ErrFinished):
				e.Log.WarnContext(ctx, "sweep: resend stalled steps", "run_id", id, "err", err)
			}
		}
	}
	if _, err := e.sweepNotifications(ctx, now, limit); err != nil {
		return len(ids), err
	}
	return len(ids), nil
}
