package durable

import (
	"context"
	"time"

	"github.com/baton-agents/baton/core"
)

// Metering counts the AWS requests of each step into its run's cost
// (RunState.Cost, priced by the machine's Pricer), the way the step
// benchmark counts them: the DynamoDB request units and SQS requests the
// stores' clients make while the step runs (internal/cost.Instrument
// adds them to the step's core.Meter), the step message's send, receive
// and delete (three SQS requests) and one Lambda invocation, which a
// chained step, run in the invocation of the step before it, has none
// of (chain.go), and its
// GB-seconds until the step's outcome is applied. A commit's own write
// is counted after it lands and carried to the next step in the step
// message (core.Step.Spent); the last commit of a run, which schedules
// no step, and the API's requests are not counted.
type Metering struct {
	// LambdaMemoryMB is the worker's memory size (default 1024).
	LambdaMemoryMB int
}

type stepMeterKey struct{}

// stepMeter is the meter of one step and when the step started.
type stepMeter struct {
	m     *core.Meter
	start time.Time
	// applied is what the step's commits so far added to the run (a
	// step commits its model call retries and heartbeats too).
	applied core.Resources
}

// meterStep returns ctx carrying a meter for step, seeded with what the
// previous commit carried and the step's fixed requests.
func (e *Runner) meterStep(ctx context.Context, step core.Step, d Attempt) context.Context {
	if e.Metering == nil {
		return ctx
	}
	m := &core.Meter{}
	if step.Spent != nil {
		m.Add(*step.Spent)
	}
	if !d.Chained() {
		// A chained step has no message and runs in the invocation of
		// the step before it.
		m.Add(core.Resources{SQSRequests: 3, LambdaRequests: 1})
	}
	return context.WithValue(core.WithMeter(ctx, m), stepMeterKey{}, &stepMeter{m: m, start: e.Clock.Now()})
}

// withSpent tells the machine what the step of ctx counted since its
// last commit, and returns that.
func (e *Runner) withSpent(ctx context.Context) (context.Context, core.Resources) {
	sm, _ := ctx.Value(stepMeterKey{}).(*stepMeter)
	if sm == nil {
		return ctx, core.Resources{}
	}
	mb := e.Metering.LambdaMemoryMB
	if mb <= 0 {
		mb = 1024
	}
	gbs := max(e.Clock.Now().Sub(sm.start).Seconds(), 0) * float64(mb) / 1024
	t := sm.m.Total()
	t.LambdaGBSeconds = gbs
	r := t.Sub(sm.applied)
	return core.WithSpent(ctx, r), r
}

// spentApplied records that a commit of the step of ctx added r.
func spentApplied(ctx context.Context, r core.Resources) {
	if sm, _ := ctx.Value(stepMeterKey{}).(*stepMeter); sm != nil {
		sm.applied = sm.applied.Add(r)
	}
}

// carry puts what a commit's write counted (after, less before) on the
// first step it schedules, which counts it.
func carry(ctx context.Context, before core.Resources, next []core.Step) {
	m := core.MeterFrom(ctx)
	if m == nil || len(next) == 0 {
		return
	}
	// A commit makes AWS requests only: its Lambda time is the step's.
	d := m.Total().Sub(before)
	d.LambdaRequests, d.LambdaGBSeconds = 0, 0
	if !d.IsZero() {
		next[0].Spent = &d
	}
}

// meterTotal is what the meter of ctx counted so far.
func meterTotal(ctx context.Context) core.Resources {
	if m := core.MeterFrom(ctx); m != nil {
		return m.Total()
	}
	return core.Resources{}
}
