package worker

import (
	"context"
	"time"

	"github.com/baton-agents/baton/internal/durable"
)

// ChainLimits say when a worker continues a run's next step in the
// invocation that committed the step before it (chained steps,
// durable.Chain) instead of sending it through the queue: only for the
// last step of a batch (no other run waits), while the chain is shorter
// than Steps and the invocation has MinRemaining left. A run that
// pauses, fans out into parallel tool steps or ends is not chained. How
// long a held step is its invocation's is the deployment's
// (durable.Limits.ChainLease).
type ChainLimits struct {
	// Steps is the most steps continued after a message's own, per
	// invocation; zero turns chaining off.
	Steps int
	// MinRemaining is the invocation time a step must have left to be
	// chained (Lambda's deadline; a process without one, such as baton
	// dev's pollers, always has enough).
	MinRemaining time.Duration
}

// chain is the Chain the n-th step chained after a message's own may
// hold its next step with; nil when it may not.
func (w *Worker) chain(ctx context.Context, owner string, mayChain bool, n int) *durable.Chain {
	c := w.Chain
	if !mayChain || n >= c.Steps {
		return nil
	}
	now := time.Now
	if w.Now != nil {
		now = w.Now
	}
	if deadline, ok := ctx.Deadline(); ok && deadline.Sub(now()) < c.MinRemaining {
		return nil
	}
	return &durable.Chain{Owner: owner}
}

// continueChain runs the steps chain's commits hold, one after the
// other, each allowed to hold the next while the limits allow. A chained
// step that fails (to be retried) goes to the queue, whose redeliveries
// retry it as they do a sent step's.
func (w *Worker) continueChain(ctx context.Context, chain *durable.Chain) {
	for n := 1; ; n++ {
		step, d, ok := chain.Next()
		if !ok {
			return
		}
		chain = w.chain(ctx, chain.Owner, true, n)
		d.Chain = chain
		if err := w.Runner.HandleStep(ctx, step, d); err != nil {
			w.Log.WarnContext(ctx, "chained step will be retried from the queue", "run_id", step.RunID, "step_seq", step.Seq, "err", err)
			w.Runner.HandOff(ctx, step, d)
			return
		}
	}
}
