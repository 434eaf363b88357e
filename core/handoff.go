package core

import (
	"context"
	"fmt"
	"slices"
)

// Handoffs. An agent whose agents-file entry lists handoffs gets, for
// each, a tool handoff/<agent> (ExecutorHandoff; the agent's slug in the
// "agent" extension). A call to it hands the rest of the run to that
// agent: the durable runner builds the agent's configuration, the call
// gets a result saying so, and once the turn's calls are all in, the run
// goes on under the new agent (its model, system prompt, tools and
// policies) with the transcript so far, recorded as an agent_handoff
// event. What belongs to the run stays: its budgets and max_turns, the
// caller's principal, metadata, callback and client tools, and its
// place in a tree of child runs.
const (
	ExecutorHandoff   = "handoff"
	HandoffToolPrefix = "handoff/"
	// EventAgentHandoff: the run went on under another agent. Data: from,
	// to, tool_call_id, tools (those the new agent's model sees).
	EventAgentHandoff = "agent_handoff"
	// DecideHandoff: the call hands the run to Decision.Handoff.
	DecideHandoff DecisionKind = "handoff"
)

// AgentHandoffData: agent_handoff.
type AgentHandoffData struct {
	From       string   `json:"from"`
	To         string   `json:"to"`
	ToolCallID string   `json:"tool_call_id"`
	Tools      []string `json:"tools"`
}

func (*AgentHandoffData) eventData() {}

// PendingHandoff is a handoff decided by a call of the current turn,
// made once the turn's calls are all in.
type PendingHandoff struct {
	ToolCallID string    `json:"tool_call_id"`
	Config     RunConfig `json:"config"`
}

// HandoffTool is the declaration of the tool that hands a run to agent
// (described by its label, when it has one).
func HandoffTool(agent, label string) ToolDeclaration {
	who := agent
	if label != "" {
		who = fmt.Sprintf("%s (%s)", agent, label)
	}
	return ToolDeclaration{
		Name: HandoffToolPrefix + agent, Source: ExecutorHandoff, Executor: ExecutorHandoff, Scope: ScopeRun,
		Description: fmt.Sprintf("Hand this conversation over to the %s agent, which answers from here on with its own instructions and tools. Use it when the request is that agent's job.", who),
		Parameters: map[string]any{"type": "object", "properties": map[string]any{
			"reason": map[string]any{"type": "string", "description": "Why the conversation goes to that agent."},
		}, "additionalProperties": false},
		Extensions: map[string]any{DeclAgent: agent},
	}
}

// HandoffAgent is the agent a handoff tool hands the run to, or "".
func (d ToolDeclaration) HandoffAgent() string { return d.agentOf(ExecutorHandoff) }

// decideHandoff records a handoff call's result and the handoff to make.
func (t *transition) decideHandoff(c *CallState, next *RunConfig) error {
	if next == nil || next.Agent == "" {
		return invalid("handoff of call %q names no agent configuration", c.ID)
	}
	t.st.Handoff = &PendingHandoff{ToolCallID: c.ID, Config: *next}
	t.resolve(c, ToolResult{Success: true, ToolName: c.Name, Result: fmt.Sprintf("The conversation is now with the %s agent.", next.Agent)})
	return nil
}

// handOver makes the pending handoff: the run's configuration becomes
// the new agent's, keeping what belongs to the run.
func (t *transition) handOver(ctx context.Context) {
	s := t.st
	h := s.Handoff
	s.Handoff = nil
	old := s.Config
	next := h.Config.withDefaults()
	next.Tools = append([]ToolDeclaration(nil), next.Tools...)
	for i := range next.Tools {
		next.Tools[i].compiled = &compiledSchema{}
	}
	// The caller's client tools stay with the run.
	for _, d := range old.Tools {
		if slices.Contains(old.Policy.RuntimeTools, d.Name) && !slices.ContainsFunc(next.Tools, func(x ToolDeclaration) bool { return x.Name == d.Name }) {
			next.Tools = append(next.Tools, d)
			next.Policy.RuntimeTools = append(next.Policy.RuntimeTools, d.Name)
		}
	}
	next.MaxTurns, next.Budgets, next.CostBudgetUSD = old.MaxTurns, old.Budgets, old.CostBudgetUSD
	next.Metadata, next.Callback, next.Parent = old.Metadata, old.Callback, old.Parent
	// A run keeps its agent version through handoffs.
	next.AgentVersion = old.AgentVersion
	next.NoTokenStream = next.NoTokenStream || old.NoTokenStream
	if old.Principal != nil {
		p := *old.Principal
		p.AgentID = next.Agent
		next.Principal = &p
	}
	visible, _ := t.m.ResolveVisibleTools(ctx, PolicyContext{RunID: s.RunID, Agent: next.Agent, Mode: next.Policy.mode(), Principal: next.Principal}, next.Tools, next.Policy)
	next.Visible = nonNil(visible)
	s.Config = next
	s.visible = s.resolveVisibleTools()
	t.emit(EventAgentHandoff, &AgentHandoffData{From: old.Agent, To: next.Agent, ToolCallID: h.ToolCallID, Tools: nonNil(visible)})
}
