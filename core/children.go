package core

import (
	"context"
	"fmt"
	"strings"
)

// Agent tools. A server tool whose executor is another agent
// (ExecutorAgent; the agent's slug in the declaration's "agent"
// extension) is answered by a child run of that agent: the durable
// runner creates the child once per (run, call), the call waits for it
// (CallAwaitingChild, no step scheduled: the run costs nothing while it
// waits) and the child's end comes back as ChildFinished, the call's
// result. Core decides the depth limit and turns a child's outcome into a
// tool result; creating and following child runs is the runner's.
const (
	// ExecutorAgent is the executor kind of an agent tool.
	ExecutorAgent = "agent"
	// AgentToolPrefix starts the name of every agent tool: agent/<slug>.
	AgentToolPrefix = "agent/"
	// DeclAgent and DeclOutputSchema are an agent tool's extensions: the
	// child's agent, and the JSON Schema its final answer must satisfy.
	DeclAgent        = "agent"
	DeclOutputSchema = "output_schema"
	// DefaultMaxDepth is how deep child runs nest below a run by default.
	DefaultMaxDepth = 3
)

// Error types of agent tool results.
const (
	ErrTypeDepthExceeded = "depth_exceeded"
	ErrTypeChildRun      = "child_run_failed"
	ErrTypeInvalidOutput = "invalid_output"
)

// ParentRef ties a child run to the call it answers.
type ParentRef struct {
	RunID      string `json:"run_id"`
	ToolCallID string `json:"tool_call_id"`
	// RootRunID is the tree's first run; Depth counts the runs above
	// this one (a child of a top-level run has depth 1).
	RootRunID string `json:"root_run_id"`
	Depth     int    `json:"depth"`
}

// Depth is how many runs are above the run (0 for a top-level run).
func (c RunConfig) Depth() int {
	if c.Parent == nil {
		return 0
	}
	return c.Parent.Depth
}

// ChildAgent is the agent an agent tool's calls start, or "".
func (d ToolDeclaration) ChildAgent() string { return d.agentOf(ExecutorAgent) }

// agentOf is the agent a declaration of executor kind names ("" for a
// declaration of another kind).
func (d ToolDeclaration) agentOf(executor string) string {
	if d.Executor != executor {
		return ""
	}
	s, _ := d.Extensions[DeclAgent].(string)
	return s
}

// ChildRunID is the id of the child run that answers call callID of run
// runID: derived, so a step delivered twice, or run again after a crash,
// finds the child the first attempt created instead of starting another.
func ChildRunID(runID, callID string) string { return childID("r", runID, callID) }

// ChildSessionID is the session of that child run (its own).
func ChildSessionID(runID, callID string) string { return childID("s", runID, callID) }

// childID has the shape of a minted run or session id (RandomIDs), so
// every route and store takes it as one.
func childID(prefix, runID, callID string) string {
	return prefix + "-" + digest(13, "child", prefix, runID, callID)
}

// ChildTask is the first user message of the child run a call starts:
// its task parameter (with its context, when given), or, for a tool
// declaring other parameters, the parameters as canonical JSON.
func ChildTask(params map[string]any) string {
	task, ok := params["task"].(string)
	if !ok || strings.TrimSpace(task) == "" {
		b, _ := CanonicalJSON(params)
		return string(b)
	}
	if c, ok := params["context"].(string); ok && strings.TrimSpace(c) != "" {
		return task + "\n\nContext:\n" + c
	}
	return task
}

// DefaultAgentToolParameters is the parameter schema of an agent tool
// that declares none.
func DefaultAgentToolParameters() map[string]any {
	return map[string]any{
		"type":     "object",
		"required": []any{"task"},
		"properties": map[string]any{
			"task":    map[string]any{"type": "string", "description": "What the agent is to do, stated fully: it sees nothing else of this conversation."},
			"context": map[string]any{"type": "string", "description": "Anything from this conversation the agent needs."},
		},
		"additionalProperties": false,
	}
}

// ChildFinished is the end of a child run, delivered to its parent once
// the child's final commit landed (the runner's outbox delivery): the
// call it answers gets its result. A call that already has one (a second
// delivery) is ErrNothingToApply.
type ChildFinished struct {
	ToolCallID   string
	ChildRunID   string
	Agent        string
	Status       RunStatus
	FinalContent string
	// Reason says why a child that did not complete ended (its error,
	// budget or cancel/interrupt reason).
	Reason string
	// Usage and Cost are the child's (its own children's included); the
	// parent adds them to its own.
	Usage map[string]any
	Cost  *RunCost
	// ToolCalls is the child's tool_calls count (when it has that budget,
	// as a child of a run with one does).
	ToolCalls int
}

// ChildSummary is one child run of a run: which call it answers, how it
// ended, and what it used and cost (its own children's included).
type ChildSummary struct {
	RunID      string         `json:"run_id"`
	Agent      string         `json:"agent"`
	ToolCallID string         `json:"tool_call_id"`
	Status     RunStatus      `json:"status"`
	Usage      map[string]any `json:"usage,omitempty"`
	Cost       *RunCost       `json:"cost,omitempty"`
}

// child returns the summary of child run id, adding it (running) when
// the run has none yet; the slice is copied first (states are copied on
// write).
func (t *transition) child(id, agent, callID string) *ChildSummary {
	t.st.Children = append([]ChildSummary(nil), t.st.Children...)
	for i := range t.st.Children {
		if t.st.Children[i].RunID == id {
			return &t.st.Children[i]
		}
	}
	t.st.Children = append(t.st.Children, ChildSummary{RunID: id, Agent: agent, ToolCallID: callID, Status: StatusRunning})
	return &t.st.Children[len(t.st.Children)-1]
}

// addChildSpend adds a finished child's usage and cost to the run's.
func (t *transition) addChildSpend(in ChildFinished) {
	s := t.st
	if b := s.budget(BudgetToolCalls); b != nil {
		b.Current += in.ToolCalls
	}
	if len(in.Usage) > 0 {
		s.Usage.Add(in.Usage)
		if b := s.budget(BudgetTotalTokens); b != nil {
			b.Current = int(s.Usage.Number("total_tokens"))
			if b.Exceeded() && s.Stop == nil {
				t.tripBudget(b)
			}
		}
	}
	if in.Cost == nil || s.Cost == nil || t.m.Pricer == nil {
		return
	}
	s.Cost = s.Cost.clone()
	s.Cost.ModelUSD += in.Cost.ModelUSD
	s.Cost.AWS = s.Cost.AWS.Add(in.Cost.AWS)
	for _, name := range in.Cost.Unpriced {
		s.Cost.addUnpriced(name)
	}
	s.Cost.total(t.m.Pricer)
	t.costBudgetCurrent()
}

func (ChildFinished) isInput() {}

// depthExceeded is the result of a call to an agent tool beyond the
// run's max depth, or nil.
func depthExceeded(st *RunState, decl ToolDeclaration) *ToolResult {
	limit := st.Config.MaxDepth
	if limit <= 0 {
		limit = DefaultMaxDepth
	}
	if st.Config.Depth() < limit {
		return nil
	}
	return &ToolResult{Success: false, ToolName: decl.Name, ErrorType: ErrTypeDepthExceeded,
		Error:    fmt.Sprintf("Tool '%s' cannot start another agent: this run is already %d level(s) below the first run and the limit is %d (max_depth).", decl.Name, st.Config.Depth(), limit),
		Metadata: map[string]any{"depth": st.Config.Depth(), "max_depth": limit}}
}

func (t *transition) childFinished(ctx context.Context, in ChildFinished) error {
	t.external = true
	if IsTerminal(t.st.Status) {
		return ErrTerminal
	}
	_, c := t.st.call(in.ToolCallID)
	if c == nil || in.ChildRunID != ChildRunID(t.st.RunID, c.ID) {
		return fmt.Errorf("%w: no call %q waits for child run %s", ErrNothingToApply, in.ToolCallID, in.ChildRunID)
	}
	switch c.Status {
	case CallAwaitingChild, CallPending, CallApproved:
		// A child can end before the step that started it committed
		// (that step is then stale).
	default:
		return fmt.Errorf("%w: call %q has its result", ErrNothingToApply, in.ToolCallID)
	}
	c.ChildRunID = in.ChildRunID
	sum := t.child(in.ChildRunID, in.Agent, c.ID)
	sum.Status, sum.Usage, sum.Cost = in.Status, in.Usage, in.Cost.clone()
	t.addChildSpend(in)
	t.emit(EventChildRunFinished, &ChildRunFinishedData{Agent: in.Agent, ChildRunID: in.ChildRunID, Reason: in.Reason, Status: string(in.Status), ToolCallID: c.ID, ToolName: c.Name})
	t.resolve(c, childResult(t.st, c, in))
	t.settle(ctx)
	return nil
}

// childResult is the call's result of a child run's end: its final
// answer when it completed (the parsed JSON when the tool has an
// output_schema it satisfies), otherwise a failure naming its status and
// reason.
func childResult(st *RunState, c *CallState, in ChildFinished) ToolResult {
	decl, _ := st.Tool(c.Name)
	meta := map[string]any{"child_run_id": in.ChildRunID, "child_status": string(in.Status)}
	if in.Status != StatusCompleted {
		msg := fmt.Sprintf("The %s agent's run %s ended with status %s", in.Agent, in.ChildRunID, in.Status)
		if r := strings.TrimSpace(in.Reason); r != "" {
			msg += ": " + r
		}
		return ToolResult{Success: false, ToolName: c.Name, ErrorType: ErrTypeChildRun, Error: msg, Metadata: meta}
	}
	schema, _ := decl.Extensions[DeclOutputSchema].(map[string]any)
	if schema == nil {
		return NormalizeToolOutput(decl, map[string]any{"success": true, "result": in.FinalContent, "metadata": meta}, nil)
	}
	var v any
	if err := decodeJSON([]byte(strings.TrimSpace(in.FinalContent)), &v); err != nil {
		return ToolResult{Success: false, ToolName: c.Name, ErrorType: ErrTypeInvalidOutput, Metadata: meta,
			Error: fmt.Sprintf("The %s agent's answer is not the JSON its output_schema asks for: %v", in.Agent, err)}
	}
	problem, err := ValidateValue(schema, v)
	if err == nil && problem != "" {
		err = fmt.Errorf("%s", problem)
	}
	if err != nil {
		return ToolResult{Success: false, ToolName: c.Name, ErrorType: ErrTypeInvalidOutput, Metadata: meta,
			Error: fmt.Sprintf("The %s agent's answer does not satisfy its output_schema: %v", in.Agent, err)}
	}
	return NormalizeToolOutput(decl, map[string]any{"success": true, "result": v, "metadata": meta}, nil)
}

// InheritBudgets limits a child run's configuration to what its parent
// has left of the budgets a tree shares (cost_usd, total_tokens,
// tool_calls), keeping the child's own ceiling where it is lower. The
// parent counts its children's spend when each ends (ChildFinished), so
// the tree as a whole stays within the parent's budgets. A budget the
// parent has used up leaves the child the least it can hold (it stops at
// its first count).
func (c *RunConfig) InheritBudgets(parent []BudgetState) {
	for _, b := range parent {
		switch b.Name {
		case BudgetCostUSD:
			left := max(b.CeilingUSD-b.CurrentUSD, 1e-9)
			if c.CostBudgetUSD == 0 || left < c.CostBudgetUSD {
				c.CostBudgetUSD = left
			}
		case BudgetTotalTokens, BudgetToolCalls:
			left := max(b.Ceiling-b.Current, 1)
			if c.Budgets == nil {
				c.Budgets = map[string]int{}
			}
			if own, ok := c.Budgets[b.Name]; !ok || left < own {
				c.Budgets[b.Name] = left
			}
		}
	}
}

// MessageRunID is the id of the run a protocol message starts (an A2A
// message, by its messageId): derived from the tenant, the agent and
// the message's id, so a message delivered again finds the run it
// started instead of starting another.
func MessageRunID(tenant, agent, messageID string) string {
	return "r-" + digest(13, "message", tenant, agent, messageID)
}

// MessageSessionID is the session of that run when the message names
// none.
func MessageSessionID(tenant, agent, messageID string) string {
	return "s-" + digest(13, "message", tenant, agent, messageID)
}
