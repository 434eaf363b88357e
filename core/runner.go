package core

import (
	"context"
	"fmt"
	"sync"
)

// ModelRouter picks a provider by ModelSpec.Provider.
type ModelRouter map[string]ModelProvider

// Complete routes req to the provider its model names.
func (r ModelRouter) Complete(ctx context.Context, req ModelRequest) (ModelReply, error) {
	p, ok := r[req.Model.Provider]
	if !ok {
		return ModelReply{}, fmt.Errorf("model provider %q is not enabled", req.Model.Provider)
	}
	return p.Complete(ctx, req)
}

// ExecuteTool runs one tool call, turning a panic into an error.
func ExecuteTool(ctx context.Context, exec ToolExecutor, call ToolCall) (out any, err error) {
	if exec == nil {
		return nil, fmt.Errorf("no tool executor is configured for %s", call.ToolName)
	}
	defer func() {
		if r := recover(); r != nil {
			out, err = nil, fmt.Errorf("panic: %v", r)
		}
	}()
	return exec.Execute(ctx, call)
}

// Runner is the in-process runner: it drives a run through the machine
// until the run pauses or ends, doing the model and tool I/O itself. It is
// the library API, the test harness and the performance floor.
type Runner struct {
	Machine *Machine
	Model   ModelProvider
	Tools   ToolExecutor
	Sink    EventSink
}

// Run is a run held in memory by a Runner.
type Run struct {
	State       RunState
	Transcript  []Message
	Events      []Event
	ToolResults []ToolExecutionResult
	Audit       []AuditEvent
	queue       []Step
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
	rn.commit(ctx, run, out)
	return run, rn.drive(ctx, run)
}

// Resume applies an outside input (a client result, an approval decision,
// an expiry) and drives the run on.
func (rn *Runner) Resume(ctx context.Context, run *Run, in Input) error {
	out, err := rn.Machine.Apply(ctx, run.State, run.Transcript, in)
	if err != nil {
		return err
	}
	rn.commit(ctx, run, out)
	return rn.drive(ctx, run)
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

// drive runs queued steps until none is left. Tool steps queued together
// (parallel tool calls) execute concurrently; their outcomes are applied
// in call order.
func (rn *Runner) drive(ctx context.Context, run *Run) error {
	for len(run.queue) > 0 {
		if err := ctx.Err(); err != nil {
			return err
		}
		batch := 1
		if run.queue[0].Kind == StepToolCall {
			for batch < len(run.queue) && run.queue[batch].Kind == StepToolCall {
				batch++
			}
		}
		steps := run.queue[:batch]
		run.queue = append([]Step(nil), run.queue[batch:]...)
		inputs := make([]Input, len(steps))
		var wg sync.WaitGroup
		for i, step := range steps {
			plan, err := rn.Machine.Plan(ctx, run.State, run.Transcript, step)
			if err != nil {
				return err
			}
			switch plan.Kind {
			case PlanSkip:
			case PlanApply:
				inputs[i] = plan.Input
			case PlanModel:
				reply, err := rn.Model.Complete(ctx, *plan.Model)
				inputs[i] = ModelReplied{Step: step, Reply: reply, Err: err}
			case PlanTool:
				wg.Add(1)
				go func(i int, step Step, call ToolCall) {
					defer wg.Done()
					out, err := ExecuteTool(ctx, rn.Tools, call)
					inputs[i] = ToolExecuted{Step: step, Output: out, Err: err}
				}(i, step, *plan.Tool)
			}
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
