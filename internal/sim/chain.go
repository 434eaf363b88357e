package sim

import (
	"context"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/baton-agents/baton/core"
)

// Chained steps under faults: a worker continues a run's next step in
// its invocation (durable.Chain), holding it with a lease recorded in
// the commit. The battery's faults of chains:
//
//   - FaultChainCrash: the commit that holds the next step lands and the
//     invocation dies before running it. The held step must be sent
//     again once its lease has passed, well before a stall period (the
//     lease is what says it is nobody's after that): chainCrashed notes
//     the time, and the sweeper's send of the run's steps is checked
//     against it (leaseResend).
//   - FaultChainFreeze: the worker stops before a chained step's commit;
//     its lease passes, the sweeper sends the step, another worker
//     handles it, then the frozen one commits (fenced: dropped).
//   - FaultChainOutlives: a chained step's model call outlasts its lease:
//     meanwhile the sweeper sends the step and a second worker handles
//     it to the end; then the first one's call returns (fenced too).

// The chain faults.
const (
	FaultChainCrash    = "crash_between_chained_steps"
	FaultChainFreeze   = "frozen_chaining_worker"
	FaultChainOutlives = "chain_outlives_lease"
)

// MutChainWithoutLease: a worker chains a run's next step without
// recording its lease in the commit; the step a dead invocation held
// waits for a stall period instead of its lease.
const MutChainWithoutLease = "chain_without_lease"

// chainLease is the simulation's lease of a chained step: well under the
// stall period, as the queue's visibility timeout is.
const chainLease = 20 * time.Second

// chainState is what the simulation knows of the held steps.
type chainState struct {
	// crashed: when a run's invocation died holding its next step.
	crashed map[string]time.Time
	// held: the runs whose stored state holds a step; leaseEnded: those
	// whose lease the sweeper just ended (its resend is not a stall's).
	held, leaseEnded map[string]bool
	// outIn receives the run of a chained model call that outlasts its
	// lease (FaultChainOutlives); outOut lets it return.
	outIn  chan string
	outOut chan struct{}
}

func newChainState() chainState {
	return chainState{crashed: map[string]time.Time{}, held: map[string]bool{}, leaseEnded: map[string]bool{},
		outIn: make(chan string), outOut: make(chan struct{})}
}

// chainCommit is the faults' part of a store commit, before it: a
// frozen chaining worker, and the mutation that drops the lease. It
// returns the lease the commit records, or would but for the mutation.
func (f *faultStore) chainCommit(ctx context.Context, w *core.Write) *core.StepLease {
	held := w.Output.State.Held
	if _, chained := core.ChainedStep(ctx); chained && f.fire(FaultChainFreeze) {
		f.freeze <- struct{}{}
		<-f.thaw
	}
	if f.sim.mutation == MutChainWithoutLease && w.Output.State.Held != nil {
		st := w.Output.State
		st.Held = nil
		w.Output.State = st
	}
	return held
}

// chainCommitted notes what a landed commit did to the run's lease and
// reports whether the invocation dies now (FaultChainCrash: a chained
// step's commit that holds the next step).
func (f *faultStore) chainCommitted(ctx context.Context, w core.Write, held *core.StepLease) bool {
	s, st := f.sim, w.Output.State
	s.mu.Lock()
	switch {
	case held != nil:
		s.chain.held[st.RunID] = true
	case s.chain.held[st.RunID]:
		delete(s.chain.held, st.RunID)
		if s.sweeping {
			s.chain.leaseEnded[st.RunID] = true
		}
	}
	s.mu.Unlock()
	step, chained := core.ChainedStep(ctx)
	if !chained || held == nil || held.Seq <= step.Seq || !f.fire(FaultChainCrash) {
		return false
	}
	s.mu.Lock()
	s.chain.crashed[st.RunID] = s.clock.T
	s.mu.Unlock()
	return true
}

// leaseResend checks the sweeper's send of a run's steps against the
// chain's faults, and reports whether it ended a lease (not a stall: the
// once-per-stall-period check does not apply).
func (s *sim) leaseResend(run string) bool {
	s.mu.Lock()
	at, crashed := s.chain.crashed[run]
	delete(s.chain.crashed, run)
	ended := s.chain.leaseEnded[run]
	delete(s.chain.leaseEnded, run)
	s.mu.Unlock()
	if waited := s.clock.T.Sub(at); crashed && waited >= stallAfter {
		s.violation("%s: the step its dead invocation held was sent again only %s later: its lease was not kept", s.runIndex(run), waited)
	}
	return ended
}

// outlive holds a chained model call past its lease when the fault is
// armed (FaultChainOutlives).
func (s *sim) outlive(ctx context.Context, run string) {
	if _, chained := core.ChainedStep(ctx); !chained || !s.store.fire(FaultChainOutlives) {
		return
	}
	s.chain.outIn <- run
	<-s.chain.outOut
}

// overtake is the scheduler's side of FaultChainOutlives: the lease of
// run's chained step passes while its model call runs, the sweeper sends
// the step again, and a second worker handles what it sent to the end.
func (s *sim) overtake(ctx context.Context, run string) {
	s.clock.T = s.clock.T.Add(chainLease + time.Second)
	_ = s.sweep(ctx)
	got, _ := s.raw.Receive(ctx, 10, 0)
	for _, o := range got {
		if stepRun(o.Body) != run {
			_ = s.raw.ExtendVisibility(ctx, o.ReceiptHandle, 0)
			continue
		}
		s.unacked[o.MessageID] = o.ReceiptHandle
		resp, _ := s.a.Worker.Handle(ctx, events.SQSEvent{Records: []events.SQSMessage{sqsRecord(o)}})
		if len(resp.BatchItemFailures) == 0 {
			if err := s.raw.Delete(ctx, o.ReceiptHandle); err == nil {
				delete(s.unacked, o.MessageID)
			}
		}
	}
	s.chain.outOut <- struct{}{}
}
