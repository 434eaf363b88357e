package durable

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/baton-agents/baton/core"
)

// progress reports that a step's one piece of I/O (a model call, a tool
// execution, a compaction summary) is alive while it runs, so the sweeper
// does not send a step again whose worker is still working on it:
//
//   - Each in-process retry of a model call (the provider's retry loop
//     calls the observer in the call's context before its wait) commits a
//     core.ModelRetrying input: a model_retry event, and a new UpdatedAt.
//   - A tool call given up to a later delivery of its step (a remote agent
//     that cannot be reached: the executor calls the observer through
//     core.NotifyToolRetry) commits a core.ToolRetrying input: a
//     tool_retry event, so followers hear of it at once.
//   - When StallAfter/2 passes without such a commit, a core.Heartbeat
//     input is committed: no event, a new UpdatedAt. A chained step
//     (chain.go) beats every third of its lease's term if that is
//     shorter: each commit renews the lease.
//
// Both go through the one commit loop, so each is a single write
// conditioned on the run's version, and both move UpdatedAt, from which
// the run's due time (core.RunState.DueAt) and the sweeper's stall check
// are derived. A worker that crashes stops committing, so its step is
// sent again StallAfter after its last commit. Both stop for good once
// the step is no longer current (another delivery committed it, or the
// run was cancelled).
type progress struct {
	e     *Runner
	step  core.Step
	tr    []core.Message
	log   *slog.Logger
	reset chan struct{}
	stopF context.CancelFunc
	done  chan struct{}

	// mu serializes the commits and guards rec and gone.
	mu  sync.Mutex
	rec core.RunRecord
	// gone: the step is no longer current; nothing more is committed.
	gone bool
}

// watch starts the heartbeats of step, read as rec with transcript tr;
// stop ends them.
func (e *Runner) watch(ctx context.Context, rec core.RunRecord, tr []core.Message, step core.Step, log *slog.Logger) *progress {
	hctx, cancel := context.WithCancel(ctx)
	p := &progress{e: e, step: step, tr: tr, log: log, rec: rec, reset: make(chan struct{}, 1), stopF: cancel, done: make(chan struct{})}
	go p.heartbeats(hctx)
	return p
}

// observe returns the model retry observer of the step.
func (p *progress) observe(ctx context.Context) func(core.ModelRetry) {
	return func(r core.ModelRetry) { p.retried(ctx, core.ModelRetrying{Step: p.step, Retry: r}) }
}

// observeTool returns the tool retry observer of the step.
func (p *progress) observeTool(ctx context.Context) func(core.ToolRetry) {
	return func(r core.ToolRetry) { p.retried(ctx, core.ToolRetrying{Step: p.step, Retry: r}) }
}

// retried commits a retry and restarts the heartbeat period.
func (p *progress) retried(ctx context.Context, in core.Input) {
	p.apply(ctx, in)
	select {
	case p.reset <- struct{}{}:
	default:
	}
}

func (p *progress) heartbeats(ctx context.Context) {
	defer close(p.done)
	every := p.e.Limits.StallAfter / 2
	if _, held := p.rec.State.HeldStep(); held && p.e.Limits.ChainLease > 0 {
		// A step held by its invocation renews its lease, as a worker
		// extends its message's visibility (chain.go).
		every = min(every, p.e.Limits.ChainLease/3)
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-p.reset:
			// A retry committed: the next heartbeat is due every from now.
		case <-p.e.after(every):
			if !p.apply(ctx, core.Heartbeat{Step: p.step}) {
				return
			}
		}
	}
}

// apply commits in from the latest record this step wrote; it reports
// whether the step is still current.
func (p *progress) apply(ctx context.Context, in core.Input) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.gone || ctx.Err() != nil {
		return !p.gone
	}
	snap, err := p.e.commit(ctx, p.rec.Tenant, p.e.applyTo(ctx, p.rec, p.tr, in))
	switch {
	case err == nil:
		p.rec = snap.RunRecord
	case errors.Is(err, core.ErrStaleStep) || errors.Is(err, core.ErrTerminal):
		p.log.InfoContext(ctx, "step progress not recorded: the run moved on", "input", inputName(in), "reason", err.Error())
		p.gone = true
	default:
		p.log.WarnContext(ctx, "step progress not recorded", "input", inputName(in), "err", err)
	}
	return !p.gone
}

// stop ends the heartbeats and returns the latest record of the run this
// step committed, to apply the step's outcome to.
func (p *progress) stop() core.RunRecord {
	p.stopF()
	<-p.done
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.rec
}

func inputName(in core.Input) string {
	switch in.(type) {
	case core.ModelRetrying:
		return "model_retry"
	case core.ToolRetrying:
		return "tool_retry"
	}
	return "heartbeat"
}

// after is the heartbeat timer; tests replace it.
func defaultAfter(d time.Duration) <-chan time.Time { return time.After(d) }
