package core

import (
	"context"
	"sync"
	"sync/atomic"
)

// Cancellation check points (§13.2).
const (
	CheckIteration  = "iteration"    // top of each iteration
	CheckBeforeLLM  = "before_model" // after steering, trimming and the input guardrail
	CheckBeforeTool = "before_tool"  // before each tool execution
)

// CancelToken is a thread-safe cooperative cancellation flag (§13.2).
type CancelToken struct {
	cancelled atomic.Bool
	mu        sync.Mutex
	reason    string
}

// Cancel requests cancellation; the first reason wins.
func (c *CancelToken) Cancel(reason string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.cancelled.Load() {
		c.reason = reason
		c.cancelled.Store(true)
	}
}

// Cancelled reports whether cancellation was requested, and why.
func (c *CancelToken) Cancelled() (bool, string) {
	if c == nil || !c.cancelled.Load() {
		return false, ""
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return true, c.reason
}

// SteeringQueue is the §13.5 steering queue: Send is safe from any
// goroutine and Drain takes every queued message atomically.
type SteeringQueue struct {
	mu    sync.Mutex
	items []string
}

// Send queues a message for the next iteration.
func (q *SteeringQueue) Send(msg string) {
	q.mu.Lock()
	q.items = append(q.items, msg)
	q.mu.Unlock()
}

// Drain removes and returns every queued message.
func (q *SteeringQueue) Drain() []string {
	if q == nil {
		return nil
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	out := q.items
	q.items = nil
	return out
}

// Runner is the in-process runner: it drives a run through the machine
// until the run pauses or ends, doing the model and tool I/O itself. It is
// the library API, the test harness and the performance floor.
type Runner struct {
	Machine *Machine
	Model   ModelProvider
	Tools   ToolExecutor
	Sink    EventSink
	// Summarizer and Compactor are optional (compaction and LLM context
	// summaries).
	Summarizer Summarizer
	Compactor  ContextCompactor
}

// Run is a run held in memory by a Runner.
type Run struct {
	State       RunState
	Transcript  []Message
	Events      []Event
	ToolResults []ToolExecutionResult
	Audit       []AuditEvent
	// Cancel and Steering, when set, are checked while the run is driven.
	Cancel   *CancelToken
	Steering *SteeringQueue
	queue    []Step
}

// RunOption configures a run started by a Runner.
type RunOption func(*Run)

// WithCancel attaches a cancellation token.
func WithCancel(c *CancelToken) RunOption { return func(r *Run) { r.Cancel = c } }

// WithSteering attaches a steering queue.
func WithSteering(q *SteeringQueue) RunOption { return func(r *Run) { r.Steering = q } }

// Envelope returns the run's result envelope.
func (r *Run) Envelope() Envelope {
	return BuildEnvelope(r.State, r.Transcript, r.Events, r.ToolResults, r.Audit)
}

// Start starts a run on a new session and drives it until it pauses or
// ends.
func (rn *Runner) Start(ctx context.Context, in StartInput, opts ...RunOption) (*Run, error) {
	return rn.Continue(ctx, nil, in, opts...)
}

// Continue starts a run on a session whose transcript so far is prior.
func (rn *Runner) Continue(ctx context.Context, prior []Message, in StartInput, opts ...RunOption) (*Run, error) {
	in.FirstSeq = 1
	if n := len(prior); n > 0 {
		in.FirstSeq = prior[n-1].Seq + 1
	}
	out, err := rn.Machine.Start(ctx, in)
	if err != nil {
		return nil, err
	}
	run := &Run{Transcript: append([]Message(nil), prior...)}
	for _, o := range opts {
		o(run)
	}
	rn.commit(ctx, run, out)
	return run, rn.drive(ctx, run)
}

// Resume applies an outside input (a client result, an approval decision,
// an expiry, a steering message, a cancel) and drives the run on.
func (rn *Runner) Resume(ctx context.Context, run *Run, in Input) error {
	out, err := rn.Machine.Apply(ctx, run.State, run.Transcript, in)
	if err != nil {
		return err
	}
	rn.commit(ctx, run, out)
	return rn.drive(ctx, run)
}

func (rn *Runner) io() IO {
	return IO{Model: rn.Model, Tools: rn.Tools, Summarizer: rn.Summarizer, Compactor: rn.Compactor}
}

func (rn *Runner) commit(ctx context.Context, run *Run, out Output) {
	run.State = out.State
	run.Transcript = append(run.Transcript, out.Messages...)
	run.Events = append(run.Events, out.Events...)
	run.ToolResults = append(run.ToolResults, out.ToolResults...)
	run.Audit = append(run.Audit, out.Audit...)
	run.queue = append(run.queue, out.Next...)
	for _, ev := range out.Events {
		EmitSafely(ctx, rn.Sink, ev)
	}
}

// checkpoint applies a requested cancellation; it reports whether the run
// was cancelled.
func (rn *Runner) checkpoint(ctx context.Context, run *Run) (bool, error) {
	if ok, reason := run.Cancel.Cancelled(); ok && !IsTerminal(run.State.Status) {
		out, err := rn.Machine.Apply(ctx, run.State, run.Transcript, Cancel{Reason: reason})
		if err != nil {
			return false, err
		}
		rn.commit(ctx, run, out)
		run.queue = nil
		return true, nil
	}
	return false, nil
}

// drive runs queued steps until none is left. Tool steps queued together
// (parallel tool calls) execute concurrently; their outcomes are applied
// in call order.
func (rn *Runner) drive(ctx context.Context, run *Run) error {
	io := rn.io()
	for len(run.queue) > 0 {
		if err := ctx.Err(); err != nil {
			return err
		}
		if run.queue[0].Kind == StepModelTurn {
			if stop, err := rn.checkpoint(ctx, run); stop || err != nil {
				return err
			}
			for _, msg := range run.Steering.Drain() {
				out, err := rn.Machine.Apply(ctx, run.State, run.Transcript, Steer{Content: msg})
				if err != nil {
					return err
				}
				rn.commit(ctx, run, out)
			}
		}
		batch := 1
		if run.queue[0].Kind == StepToolCall {
			for batch < len(run.queue) && run.queue[batch].Kind == StepToolCall {
				batch++
			}
		}
		steps := run.queue[:batch]
		run.queue = append([]Step(nil), run.queue[batch:]...)
		plans := make([]Plan, len(steps))
		for i, step := range steps {
			plan, err := rn.Machine.Plan(ctx, run.State, run.Transcript, step)
			if err != nil {
				return err
			}
			plans[i] = plan
			point := ""
			switch plan.Kind {
			case PlanModel:
				point = CheckBeforeLLM
			case PlanTool:
				point = CheckBeforeTool
			}
			if point != "" && i == 0 {
				if stop, err := rn.checkpoint(ctx, run); stop || err != nil {
					return err
				}
			}
		}
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
			inputs[i] = io.Perform(ctx, step, plans[i])
		}
		wg.Wait()
		for _, in := range inputs {
			if in == nil {
				continue
			}
			out, err := rn.Machine.Apply(ctx, run.State, run.Transcript, in)
			if err != nil {
				return err
			}
			rn.commit(ctx, run, out)
		}
	}
	return nil
}
