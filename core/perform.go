package core

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// ModelRouter picks a provider by ModelSpec.Provider.
type ModelRouter map[string]ModelProvider

// Complete routes req to the provider its model names.
func (r ModelRouter) Complete(ctx context.Context, req ModelRequest) (ModelReply, error) {
	p, ok := r[req.Model.Provider]
	if !ok {
		if req.AgentVersion != "" {
			return ModelReply{}, fmt.Errorf("model provider %q is not enabled (the run's agent version %s names it)", req.Model.Provider, req.AgentVersion)
		}
		return ModelReply{}, fmt.Errorf("model provider %q is not enabled", req.Model.Provider)
	}
	return p.Complete(ctx, req)
}

// ExecuteTool runs one tool call, turning a panic into a *ToolPanic
// error.
func ExecuteTool(ctx context.Context, exec ToolExecutor, call ToolCall) (any, error) {
	if call.Declaration.Executor == ExecutorHandoff {
		return nil, fmt.Errorf("tool %s hands the run to agent %s, which only the durable runtime (baton dev, the deployed stack) can do", call.ToolName, call.Declaration.HandoffAgent())
	}
	if call.Declaration.Executor == ExecutorAgent {
		// The durable runner starts a child run instead (it never gets
		// here); the in-process Runner has no runs to start.
		return nil, fmt.Errorf("tool %s starts a child run of agent %s, which only the durable runtime (baton dev, the deployed stack) can do", call.ToolName, call.Declaration.ChildAgent())
	}
	if exec == nil {
		return nil, fmt.Errorf("no tool executor is configured for %s", call.ToolName)
	}
	return guardErr(func() (any, error) { return exec.Execute(ctx, call) }, func(r any) error { return &ToolPanic{Value: r} })
}

// ToolPanic is the error of a tool executor that panicked with Value.
// Applying a ToolExecuted whose Err is (or wraps) one records the same
// failed executor_exception result as any executor error, and also
// emits a non-fatal error event.
type ToolPanic struct{ Value any }

func (p *ToolPanic) Error() string { return fmt.Sprintf("panic: %v", p.Value) }

// IO holds the ports a step's I/O uses. Both runners perform steps with
// it, so a step means the same in process and in a Lambda.
type IO struct {
	// Model serves model turns, and compaction summaries when no
	// Summarizer is set.
	Model ModelProvider
	Tools ToolExecutor
	// Summarizer, when set, writes compaction summaries instead of the
	// model.
	Summarizer Summarizer
	// Compactor, when set, rewrites the deterministic summary of a
	// context-trimmed model view; its errors fall back to that summary.
	Compactor ContextCompactor
	// Memory, when set, recalls the memories a run recalls before its
	// first turn (recall.go).
	Memory MemoryRecaller
	// Clock, when set, stamps when a model call began (ModelReplied's
	// StartedAt).
	Clock Clock
}

// Perform does the one piece of I/O a plan needs and returns the input to
// apply. It returns nil for PlanSkip.
func (io IO) Perform(ctx context.Context, step Step, plan Plan) Input {
	return io.perform(ctx, step, plan, nil)
}

// perform is Perform, handing a model reply or a tool's output over as a
// pointer from a's slabs when a is set (the Runner's driving goroutine).
func (io IO) perform(ctx context.Context, step Step, plan Plan, a *arena) Input {
	switch plan.Kind {
	case PlanApply:
		return plan.Input
	case PlanModel:
		req := *plan.Model
		if req.Trim != nil && io.Compactor != nil {
			req.Messages = io.compactView(ctx, req)
		}
		if io.Model == nil {
			return ModelReplied{Step: step, Err: fmt.Errorf("no model provider is configured"), InputRedacted: plan.InputRedacted}
		}
		var started time.Time
		if io.Clock != nil {
			started = io.Clock.Now()
		}
		reply, err := io.Model.Complete(ctx, req)
		in := ModelReplied{Step: step, Reply: reply, Err: err, InputRedacted: plan.InputRedacted, StartedAt: started}
		if a == nil {
			return in
		}
		p := a.replies.new()
		*p = in
		return p
	case PlanTool:
		out, err := ExecuteTool(ctx, io.Tools, *plan.Tool)
		in := ToolExecuted{Step: step, Output: out, Err: err}
		if a == nil {
			return in
		}
		p := a.outputs.new()
		*p = in
		return p
	case PlanCompact:
		return io.summarize(ctx, step, *plan.Compaction)
	case PlanRecall:
		return io.recall(ctx, step, *plan.Recall)
	}
	return nil
}

// summarize writes a compaction summary: with the Summarizer when one is
// configured, otherwise with the summary model call.
func (io IO) summarize(ctx context.Context, step Step, c CompactionRequest) Compacted {
	if io.Summarizer != nil {
		summary, err := safeSummarize(ctx, io.Summarizer, SummaryRequest{RunID: c.RunID, Messages: c.Messages})
		return Compacted{Step: step, Summary: summary, Err: err}
	}
	spec := c.Model.Model
	if io.Model == nil {
		return Compacted{Step: step, Model: &spec, Err: fmt.Errorf("no model provider is configured to write the compaction summary")}
	}
	reply, err := io.Model.Complete(ctx, c.Model)
	if err != nil {
		return Compacted{Step: step, Model: &spec, Err: err}
	}
	return Compacted{Step: step, Summary: reply.Content, Model: &spec, Usage: reply.Usage}
}

func (io IO) compactView(ctx context.Context, req ModelRequest) []Message {
	summary, err := safeCompact(ctx, io.Compactor, req.Trim.Dropped)
	if err != nil || strings.TrimSpace(summary) == "" {
		return req.Messages
	}
	msgs := append([]Message(nil), req.Messages...)
	m := msgs[req.Trim.SummaryIndex]
	m.Content = "[Context summary: " + strings.TrimSpace(summary) + "]"
	msgs[req.Trim.SummaryIndex] = m
	return msgs
}
