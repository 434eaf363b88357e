package core

import (
	"context"
	"sort"
	"sync"
)

// Runner is the in-process runner: it drives a run through the machine
// until the run pauses or ends, doing the model and tool I/O itself. It is
// the library API, the test harness and the performance floor.
//
// Outside inputs reach a run only through Resume. To steer or cancel a run
// while it is being driven, cancel the context of the Start, Continue or
// Resume call that drives it (the runner stops before its next piece of
// I/O and returns the context's error, leaving the unperformed steps
// queued), then call Resume with Steer or Cancel.
type Runner struct {
	Machine *Machine
	Model   ModelProvider
	Tools   ToolExecutor
	// Sink, when set, receives every event as it is committed, in order
	// and one at a time (§13.1's event callback). Two of
	// them carry more than the stored event: messages_updated gets
	// messages (the session transcript through the event's append) and
	// done gets messages (the whole transcript); the slices share the
	// run's transcript and must not be modified. While a model call runs
	// the Sink also gets its ephemeral token and thinking events (see
	// EventToken), unless the run's config says NoTokenStream, on the
	// goroutine the provider reads its stream on while the driving one
	// waits for the call.
	Sink EventSink
	// Summarizer, when set, writes compaction summaries instead of a
	// summary call to Model; Compactor, when set, rewrites the summary of
	// a context-trimmed view. Both are optional.
	Summarizer Summarizer
	Compactor  ContextCompactor
	// Memory, when set, recalls the memories of runs whose memory policy
	// recalls before the first turn (recall.go).
	Memory MemoryRecaller
}

// Run is a run held in memory by a Runner.
type Run struct {
	State       RunState
	Transcript  []Message
	Events      []Event
	ToolResults []ToolExecutionResult
	Audit       []AuditEvent
	// steps are the scheduled steps not yet performed, in order.
	steps []Step
	// announced is the last turn whose start the Sink was handed before
	// the turn's turn_started was committed (its first token came first).
	announced int
	// retrying is the step whose model call is running, for observer,
	// the retry observer of the context observed and the runner
	// observing (see performContext).
	retrying     Step
	observer     func(ModelRetry)
	observed     context.Context
	observing    *Runner
	withObserver context.Context
}

// Envelope returns the run's result envelope.
func (r *Run) Envelope() Envelope {
	return BuildEnvelope(r.State, r.Transcript, r.Events, r.ToolResults, r.Audit)
}

// Start starts a run on a new session and drives it until it pauses or
// ends.
func (rn *Runner) Start(ctx context.Context, in StartInput) (*Run, error) {
	return rn.Continue(ctx, nil, in)
}

// Continue starts a run on a session whose transcript so far is prior.
// When driving the run fails (its context is cancelled), it returns the
// run with the error.
func (rn *Runner) Continue(ctx context.Context, prior []Message, in StartInput) (*Run, error) {
	in.FirstSeq = 1
	if n := len(prior); n > 0 {
		in.FirstSeq = prior[n-1].Seq + 1
	}
	out, err := rn.Machine.Start(ctx, in)
	if err != nil {
		return nil, err
	}
	run := &Run{Transcript: append([]Message(nil), prior...)}
	out.State.arena = newArena() // the run's small records, from here on
	rn.commit(ctx, run, &out.State, &out)
	return run, rn.drive(ctx, run)
}

// Resume applies an outside input (a client result, an approval decision,
// an expiry, a steering message, a cancel) and drives the run on.
func (rn *Runner) Resume(ctx context.Context, run *Run, in Input) error {
	if err := rn.apply(ctx, run, in); err != nil {
		return err
	}
	return rn.drive(ctx, run)
}

// apply applies in to the run and commits its output. A run with an
// arena is applied with the arena's transition and records: the outcome
// of one of its current steps (appliesCleanly: the transition cannot
// fail) changes the run's state in place, whose mutable parts the
// transition copies first as Apply's does, so a step copies no state;
// any other input is applied to a copy, committed when it succeeds.
func (rn *Runner) apply(ctx context.Context, run *Run, in Input) error {
	a := run.State.arena
	if a == nil || a.applying {
		out, err := rn.Machine.Apply(ctx, run.State, run.Transcript, in)
		if err != nil {
			return err
		}
		rn.commit(ctx, run, &out.State, &out)
		return nil
	}
	a.applying = true
	defer func() { a.applying = false }()
	o := &a.apply.o
	st := &run.State
	if !st.appliesCleanly(in) {
		o.State = run.State
		st = &o.State
	}
	err := rn.Machine.apply(ctx, &a.apply.t, st, o, run.Transcript, in)
	if err == nil {
		rn.commit(ctx, run, st, o)
	}
	// The records were copied out.
	o.Messages, o.Events, o.ToolResults, o.Audit, o.Next = nil, nil, nil, nil, nil
	return err
}

func (rn *Runner) io() IO {
	return IO{Model: rn.Model, Tools: rn.Tools, Summarizer: rn.Summarizer, Compactor: rn.Compactor, Memory: rn.Memory, Clock: rn.Machine.Clock}
}

// commit makes st the run's state (st may be the run's state itself)
// and appends out's records.
func (rn *Runner) commit(ctx context.Context, run *Run, st *RunState, out *Output) {
	// through is the last message the sink's list includes: the
	// transcript's end before this output, then each append's to_seq.
	var through int64
	if n := len(run.Transcript); n > 0 {
		through = run.Transcript[n-1].Seq
	}
	ix := run.State.index
	if ix == nil {
		ix = NewTranscriptIndex(st.SessionID)
	}
	if st != &run.State {
		run.State = *st
	}
	run.State.UseIndex(ix)
	run.Transcript = appendDoubling(run.Transcript, out.Messages)
	run.Events = appendDoubling(run.Events, out.Events)
	run.ToolResults = appendDoubling(run.ToolResults, out.ToolResults)
	run.Audit = appendDoubling(run.Audit, out.Audit)
	run.steps = append(run.steps, out.Next...)
	if a := run.State.arena; a != nil {
		a.output.lent = false // copied out: the next output may use it
	}
	if rn.Sink == nil {
		return
	}
	for _, ev := range out.Events {
		switch ev.Type {
		case EventTurnStarted:
			if ev.Turn <= run.announced {
				continue // the sink had the turn's start before its tokens
			}
		case EventMessagesUpdated:
			if d, ok := ev.Data.(*MessagesUpdatedData); ok {
				through = d.ToSeq
				sunk := *d
				sunk.Messages = transcriptThrough(run.Transcript, through)
				ev.Data = &sunk
			} else if d, ok := ev.Data.(*ContextTrimmedData); ok {
				// A trim appends nothing: the transcript so far.
				sunk := *d
				sunk.Messages = transcriptThrough(run.Transcript, through)
				ev.Data = &sunk
			}
		case EventDone:
			if d, ok := ev.Data.(*DoneData); ok {
				sunk := *d
				sunk.Messages = run.Transcript[:len(run.Transcript):len(run.Transcript)]
				ev.Data = &sunk
			}
		}
		EmitSafely(ctx, rn.Sink, ev)
	}
}

// appendDoubling appends add to s, doubling its capacity when it is
// full, so a long run copies its records about once (append grows large
// slices by a quarter, which copies them four times over).
func appendDoubling[T any](s, add []T) []T {
	if n := len(s) + len(add); n > cap(s) {
		grown := make([]T, len(s), max(2*cap(s), n, 16))
		copy(grown, s)
		s = grown
	}
	return append(s, add...)
}

// transcriptThrough is the prefix of transcript (in sequence order) up
// to and including sequence number seq, capped so that appending to it
// cannot write into the transcript.
func transcriptThrough(transcript []Message, seq int64) []Message {
	n := sort.Search(len(transcript), func(i int) bool { return transcript[i].Seq > seq })
	return transcript[:n:n]
}

// streamTokens returns ctx carrying a token sink that hands the model
// call's deltas to the Sink as ephemeral token and thinking events of the
// turn the call is for, or ctx itself when nothing is to be streamed.
func (rn *Runner) streamTokens(ctx context.Context, run *Run) context.Context {
	if rn.Sink == nil || run.State.Config.NoTokenStream {
		return ctx
	}
	turn, started := run.State.Turn+1, rn.Machine.Clock.Now()
	return WithTokenSink(ctx, func(d TokenDelta) {
		if run.announced < turn {
			// The turn's start comes before its first token; its
			// turn_started, committed with the reply, is not sent again.
			run.announced = turn
			EmitSafely(ctx, rn.Sink, Event{Type: EventTurnStarted, Turn: turn, At: started, Data: &TurnStartedData{Turn: turn}})
		}
		typ := EventToken
		if d.Kind == DeltaThinking {
			typ = EventThinking
		}
		EmitSafely(ctx, rn.Sink, Event{Type: typ, Turn: turn, At: rn.Machine.Clock.Now(), Data: &TokenData{Token: d.Text}})
	})
}

// modelRetrying applies a provider's notice that the model call of step
// is being retried, so the run's events and its sink show a model_retry
// event while the call goes on. The provider calls it on the goroutine
// that drive performs the model step on, so it never races drive.
func (rn *Runner) modelRetrying(ctx context.Context, run *Run, step Step, r ModelRetry) {
	_ = rn.apply(ctx, run, ModelRetrying{Step: step, Retry: r})
}

// drive performs the scheduled steps until none is left. Tool steps
// scheduled together (parallel tool calls) execute concurrently; their
// outcomes are applied in call order. It checks ctx before each batch and
// again after planning it (a hook may have cancelled it), so no I/O
// starts once ctx is done; the batch then stays scheduled.
func (rn *Runner) drive(ctx context.Context, run *Run) error {
	io := rn.io()
	for len(run.steps) > 0 {
		if err := ctx.Err(); err != nil {
			return err
		}
		batch := 1
		if run.steps[0].Kind == StepToolCall {
			for batch < len(run.steps) && run.steps[batch].Kind == StepToolCall {
				batch++
			}
		}
		steps := run.steps[:batch]
		var inputs []Input
		if batch == 1 {
			in, err := rn.performOne(ctx, run, io, steps[0])
			if err != nil {
				return err
			}
			inputs = []Input{in}
		} else {
			var err error
			if inputs, err = rn.performBatch(ctx, run, io, steps); err != nil {
				return err
			}
		}
		for _, in := range inputs {
			if in == nil {
				continue
			}
			if err := rn.apply(ctx, run, in); err != nil {
				return err
			}
		}
	}
	return nil
}

// performOne plans and performs a batch of one step.
func (rn *Runner) performOne(ctx context.Context, run *Run, io IO, step Step) (Input, error) {
	plan, err := rn.Machine.plan(ctx, &run.State, run.Transcript, step)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	run.steps = run.steps[:copy(run.steps, run.steps[1:])]
	return io.perform(rn.performContext(ctx, run, step, plan), step, plan, run.State.arena), nil
}

// performBatch plans and performs a batch of steps: its tool steps
// concurrently when there are several.
func (rn *Runner) performBatch(ctx context.Context, run *Run, io IO, steps []Step) ([]Input, error) {
	plans := make([]Plan, len(steps))
	for i, step := range steps {
		plan, err := rn.Machine.plan(ctx, &run.State, run.Transcript, step)
		if err != nil {
			return nil, err
		}
		plans[i] = plan
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	run.steps = append([]Step(nil), run.steps[len(steps):]...)
	inputs := make([]Input, len(steps))
	var wg sync.WaitGroup
	for i, step := range steps {
		if plans[i].Kind == PlanTool && len(steps) > 1 {
			wg.Add(1)
			go func(i int, step Step) {
				defer wg.Done()
				inputs[i] = io.Perform(ctx, step, plans[i])
			}(i, step)
			continue
		}
		inputs[i] = io.Perform(rn.performContext(ctx, run, step, plans[i]), step, plans[i])
	}
	wg.Wait()
	return inputs, nil
}

// performContext is the context a step's I/O runs with: a model call's
// retries are shown and its text streamed, a summary call's retries are
// shown too (its text is never streamed).
func (rn *Runner) performContext(ctx context.Context, run *Run, step Step, plan Plan) context.Context {
	switch plan.Kind {
	case PlanModel:
		// One observer per run and context, told the step it observes.
		run.retrying = step
		if run.observed != ctx || run.observing != rn {
			run.observer = func(r ModelRetry) { rn.modelRetrying(ctx, run, run.retrying, r) }
			run.observed, run.observing, run.withObserver = ctx, rn, WithModelRetryObserver(ctx, run.observer)
		}
		if streamed := rn.streamTokens(ctx, run); streamed != ctx {
			return WithModelRetryObserver(streamed, run.observer)
		}
		return run.withObserver
	case PlanCompact:
		return WithModelRetryObserver(ctx, func(r ModelRetry) { rn.modelRetrying(ctx, run, step, r) })
	}
	return ctx
}
