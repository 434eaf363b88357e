package core

import (
	"context"
	"slices"
	"strings"
	"testing"
)

// TestHandoffTool: the tool's name is the prefix and the agent's slug,
// and its description names the agent with its label when it has one.
func TestHandoffTool(t *testing.T) {
	for _, tc := range []struct{ label, who string }{{"Billing desk", "the billing (Billing desk) agent"}, {"", "the billing agent"}} {
		d := HandoffTool("billing", tc.label)
		if d.Name != "handoff/billing" || d.HandoffAgent() != "billing" || !strings.Contains(d.Description, tc.who) {
			t.Errorf("label %q: %s (%s): %s", tc.label, d.Name, d.HandoffAgent(), d.Description)
		}
	}
}

// TestHandOver: a handoff decision needs an agent configuration; once the
// turn's calls are in, the run goes on under the new agent, keeping what
// belongs to the run: its max_turns, the caller's principal (now acting
// for the new agent) and its client tools, unless the new agent declares
// a tool of the same name.
func TestHandOver(t *testing.T) {
	ctx := context.Background()
	start := func(t *testing.T, principal *Principal) (*Machine, RunState, []Message, Step) {
		t.Helper()
		m := NewMachine(&FixedClock{T: t0})
		out, err := m.Start(ctx, StartInput{RunID: "r-1", SessionID: "s-1", FirstSeq: 1, Messages: user("my bill"),
			RequestTools: []any{clientTool("client/ask"), clientTool("client/pick")},
			Config:       RunConfig{Agent: "front", MaxTurns: 7, Model: scripted(), Tools: []ToolDeclaration{HandoffTool("billing", "")}, Principal: principal}})
		if err != nil {
			t.Fatal(err)
		}
		o, err := m.Apply(ctx, out.State, out.Messages, ModelReplied{Step: out.Next[0], Reply: ModelReply{ToolCalls: []ToolCallRequest{{ID: "c1", Name: "handoff/billing", Parameters: map[string]any{}}}}})
		if err != nil || len(o.Next) != 1 {
			t.Fatalf("model turn: %v, next %v", err, o.Next)
		}
		return m, o.State, append(out.Messages, o.Messages...), o.Next[0]
	}
	m, st, tr, step := start(t, nil)
	for _, next := range []*RunConfig{nil, {Model: scripted()}} {
		if _, err := m.Apply(ctx, st, tr, ToolDecided{Step: step, Decision: Decision{Kind: DecideHandoff, Handoff: next}}); err == nil {
			t.Errorf("a handoff to %+v was accepted", next)
		}
	}
	for _, principal := range []*Principal{nil, {ActorID: "ann", AgentID: "front"}} {
		m, st, tr, step := start(t, principal)
		billing := RunConfig{Agent: "billing", MaxTurns: 2, Model: scripted(), Tools: []ToolDeclaration{{Name: "client/pick", Source: "billing", Description: "Its own."}}}
		o, err := m.Apply(ctx, st, tr, ToolDecided{Step: step, Decision: Decision{Kind: DecideHandoff, Handoff: &billing}})
		if err != nil {
			t.Fatal(err)
		}
		cfg := o.State.Config
		var names []string
		for _, d := range cfg.Tools {
			names = append(names, d.Name)
		}
		if cfg.Agent != "billing" || cfg.MaxTurns != 7 || !slices.Equal(names, []string{"client/pick", "client/ask"}) || !slices.Contains(cfg.Policy.RuntimeTools, "client/ask") {
			t.Fatalf("after the handoff: agent %s, max_turns %d, tools %v, runtime tools %v", cfg.Agent, cfg.MaxTurns, names, cfg.Policy.RuntimeTools)
		}
		if (principal == nil) != (cfg.Principal == nil) || (principal != nil && (cfg.Principal.AgentID != "billing" || cfg.Principal.ActorID != "ann" || principal.AgentID != "front")) {
			t.Fatalf("principal %+v after the handoff (was %+v)", cfg.Principal, principal)
		}
		var handoff *AgentHandoffData
		for _, ev := range o.Events {
			if d, ok := ev.Data.(*AgentHandoffData); ok {
				handoff = d
			}
		}
		if handoff == nil || handoff.From != "front" || handoff.To != "billing" || handoff.ToolCallID != "c1" {
			t.Fatalf("agent_handoff event %+v", handoff)
		}
	}
}
