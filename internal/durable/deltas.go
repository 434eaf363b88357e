package durable

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/baton-agents/baton/core"
)

// Token streaming: while a worker performs a model turn whose run streams
// tokens (RunConfig.NoTokenStream unset), the provider hands each text
// and reasoning delta to a publisher (core.WithTokenSink), which batches
// them into short-lived DynamoDB items (core.DeltaStore) that live
// streams tail, each item expiring after DeltaTTL. The first delta of a
// turn is written at once (the client sees the turn start); later ones
// gather until a batch holds DeltaBatchDeltas deltas or DeltaBatchBytes
// of text, or DeltaWindow passed since its first delta: an adaptive
// window, as long as the model takes to produce DeltaBatchDeltas tokens
// (180 ms at 100 tokens/s) and never longer than DeltaWindow, so writes
// stay near 1,000/DeltaBatchDeltas per 1,000 tokens at any fast pace. Deltas are
// ephemeral: a failed write is logged and dropped, and never fails or
// slows the step; the committed reply is the same whether or not it was
// streamed. The publisher's last batch is written before the turn's
// outcome is committed, so a stream that reads deltas before events sees
// a turn's deltas before the events of its reply.
type publisher struct {
	store  core.DeltaStore
	limits Limits
	clock  core.Clock
	log    *slog.Logger
	runID  string

	mu      sync.Mutex
	pending []core.TokenDelta
	size    int
	pos     core.DeltaPos
	index   int
	// started: the turn's first delta has been handed to a write.
	started bool

	kick chan struct{}
	full chan struct{}
	stop chan struct{}
	done chan struct{}
}

// publish starts a publisher for the model call plan makes and returns ctx
// carrying its token sink; finish writes what is left and stops it.
// Without a delta store, or when the run does not stream tokens, ctx is
// returned as is.
func (e *Runner) publish(ctx context.Context, st core.RunState, plan core.Plan, log *slog.Logger) (context.Context, func()) {
	if e.Deltas == nil || st.Config.NoTokenStream || plan.Model == nil {
		return ctx, func() {}
	}
	p := &publisher{
		store: e.Deltas, limits: e.Limits, clock: e.Clock, log: log, runID: st.RunID,
		pos:  core.DeltaPos{Turn: plan.Model.Turn, Attempt: e.Clock.Now().UnixMilli()},
		kick: make(chan struct{}, 1), full: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{}),
	}
	go p.loop(ctx)
	return core.WithTokenSink(ctx, p.add), func() {
		close(p.stop)
		<-p.done
	}
}

// add queues a delta; it never blocks on a write.
func (p *publisher) add(d core.TokenDelta) {
	p.mu.Lock()
	p.pending = append(p.pending, d)
	p.size += len(d.Text)
	full := !p.started || p.size >= p.limits.DeltaBatchBytes || len(p.pending) >= p.limits.DeltaBatchDeltas
	p.started = true
	p.mu.Unlock()
	signal(p.kick)
	if full {
		signal(p.full)
	}
}

func signal(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}

// loop writes a batch once it is full (the turn's first delta, or
// DeltaBatchDeltas deltas, or DeltaBatchBytes of text), or DeltaWindow
// after its first delta, and the rest on stop.
func (p *publisher) loop(ctx context.Context) {
	defer close(p.done)
	for {
		select {
		case <-p.stop:
			p.flush(ctx)
			return
		case <-p.kick:
		}
		select {
		case <-p.full:
			p.flush(ctx)
			continue
		default:
		}
		timer := time.NewTimer(p.limits.DeltaWindow)
		select {
		case <-p.stop:
			timer.Stop()
			p.flush(ctx)
			return
		case <-p.full:
			timer.Stop()
		case <-timer.C:
		}
		p.flush(ctx)
	}
}

// flush writes the pending deltas, as batches of about DeltaBatchBytes
// of text each (an item stays far below DynamoDB's 400 KB limit).
func (p *publisher) flush(ctx context.Context) {
	p.mu.Lock()
	pending := p.pending
	p.pending, p.size = nil, 0
	select { // a full signal for what this flush writes
	case <-p.full:
	default:
	}
	var batches []core.DeltaBatch
	for len(pending) > 0 {
		n, size := 0, 0
		for n < len(pending) && (n == 0 || size < p.limits.DeltaBatchBytes) {
			size += len(pending[n].Text)
			n++
		}
		batches = append(batches, core.DeltaBatch{RunID: p.runID, Pos: p.pos, Index: p.index, Deltas: pending[:n]})
		p.pos.Batch++
		p.index += n
		pending = pending[n:]
	}
	p.mu.Unlock()
	for _, b := range batches {
		b.ExpiresAt = p.clock.Now().Add(p.limits.DeltaTTL)
		if err := p.store.PutDeltas(context.WithoutCancel(ctx), b); err != nil {
			p.log.WarnContext(ctx, "streamed deltas dropped", "turn", b.Pos.Turn, "batch", b.Pos.Batch, "deltas", len(b.Deltas), "err", err)
		}
	}
}
