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
//     invocation dies before running it. The sweeper's first pass after
//     the lease has passed must send the held step again (the lease is
//     what says it is nobody's after that; a stall period would be too
//     late): chainCommitted notes the crash, checkLeases checks each
//     pass.
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
type crash struct {
	at  time.Time
	seq int64
}

type chainState struct {
	// crashed: when a run's invocation died holding its next step, and
	// which.
	crashed map[string]crash
	// held: the runs whose stored state holds a step; leaseEnded: those
	// whose lease the sweeper just ended (its resend is not a stall's).
	held, leaseEnded map[string]bool
	// outIn receives the run of a chained model call that outlasts its
	// lease (FaultChainOutlives); outOut lets it return.
	outIn  chan string
	outOut chan struct{}
}

func newChainState() chainState {
	return chainState{crashed: map[string]crash{}, held: map[string]bool{}, leaseEnded: map[string]bool{},
		outIn: make(chan string), outOut: make(chan struct{})}
}

// chainCommit is the faults' part of a store commit, before it: a
// frozen chaining worker, and the mutation that drops the lease. It
// returns the lease the commit records, or would but for the mutation.
func (f *faultStore) chainCommit(ctx context.Context, w *core.Write) int64 {
	held := w.Output.State.Held
	if _, chained := core.ChainedStep(ctx); chained && f.fire(FaultChainFreeze) {
		f.freeze <- struct{}{}
		<-f.thaw
	}
	if f.sim.mutation == MutChainWithoutLease && w.Output.State.Held != 0 {
		st := w.Output.State
		st.Held = 0
		w.Output.State = st
	}
	return held
}

// chainCommitted notes what a landed commit did to the run's lease and
// reports whether the invocation dies now (FaultChainCrash: a chained
// step's commit that holds the next step).
func (f *faultStore) chainCommitted(ctx context.Context, w core.Write, held int64) bool {
	s, st := f.sim, w.Output.State
	s.mu.Lock()
	switch {
	case held != 0:
		s.chain.held[st.RunID] = true
	case s.chain.held[st.RunID]:
		delete(s.chain.held, st.RunID)
		if s.sweeping {
			s.chain.leaseEnded[st.RunID] = true
		}
	}
	s.mu.Unlock()
	step, chained := core.ChainedStep(ctx)
	if !chained || held <= step.Seq || !f.fire(FaultChainCrash) {
		return false
	}
	s.mu.Lock()
	s.chain.crashed[st.RunID] = crash{at: s.clock.T, seq: held}
	s.mu.Unlock()
	return true
}

// leaseResend notes the sweeper's send of a run's steps (the step a dead
// invocation held, if it was one) and reports whether it ended a lease
// (not a stall: the once-per-stall-period check does not apply).
func (s *sim) leaseResend(run string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.chain.crashed, run)
	ended := s.chain.leaseEnded[run]
	delete(s.chain.leaseEnded, run)
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

// checkLeases, after a sweeper's pass, finds the steps of dead
// invocations whose lease had passed and that the pass did not send.
func (s *sim) checkLeases() {
	s.mu.Lock()
	late := map[string]int64{}
	for run, c := range s.chain.crashed {
		if !s.clock.T.Before(c.at.Add(chainLease)) {
			late[run] = c.seq
			delete(s.chain.crashed, run)
		}
	}
	s.mu.Unlock()
	for _, run := range Keys(late) {
		rec, err := s.store.Store.LoadRun(context.Background(), run)
		if err != nil {
			continue
		}
		for _, st := range rec.State.ScheduledSteps() {
			// Still waiting (not cancelled, not run since): the pass
			// should have sent it.
			if st.Seq == late[run] {
				s.violation("%s: the step its dead invocation held was not sent again by the sweeper's pass after its lease passed: its lease was not kept", s.runIndex(run))
			}
		}
	}
}
