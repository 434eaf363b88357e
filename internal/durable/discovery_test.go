package durable_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/baton-agents/baton/core"
	"github.com/baton-agents/baton/internal/agents"
	"github.com/baton-agents/baton/internal/durable"
	"github.com/baton-agents/baton/internal/memstore"
)

// staticSource offers the same tools at every discovery, as a warm MCP
// listing does.
type staticSource struct {
	tools []core.ToolDeclaration
	down  []core.ToolSourceFailure
	calls atomic.Int32
}

func (s *staticSource) Discover(context.Context, string, string) core.ToolsDiscovered {
	s.calls.Add(1)
	return core.ToolsDiscovered{Tools: s.tools, Unavailable: s.down}
}

// TestToolDiscoveryPlansOnce: the worker asks the tool source before each
// model turn, commits what is new once, and plans a turn a second time
// only when discovery changed the run: the agent's input guardrail runs
// twice on the first turn (its tool catalog grew) and once on the next,
// and the discovered tool executes.
func TestToolDiscoveryPlansOnce(t *testing.T) {
	reg, err := agents.Parse([]byte(`{"agents":[{"slug":"mcp","model":{"provider":"scripted"},"allow_overrides":["model"]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	decl, err := core.NormalizeServerTool(map[string]any{"name": "mcp/crm/lookup", "source": "crm", "description": "Look up.", "categories": []any{"mcp"}})
	if err != nil {
		t.Fatal(err)
	}
	src := &staticSource{tools: []core.ToolDeclaration{decl}}
	var guardrailRuns atomic.Int32
	machine := &core.Machine{Guardrails: core.Guardrails{Input: func(context.Context, []core.Message) core.GuardrailResult {
		guardrailRuns.Add(1)
		return core.Allow()
	}}}
	var executed atomic.Int32
	tools := core.ToolExecutorFunc(func(_ context.Context, c core.ToolCall) (any, error) {
		executed.Add(1)
		return map[string]any{"name": "Ada"}, nil
	})
	store, clock := memstore.New(), &core.FixedClock{T: t0}
	q := memstore.NewStepQueue(time.Hour, 5, func() time.Time { return clock.T })
	eng := durable.New(durable.Options{Store: store, Queue: q, Agents: reg, Model: core.ScriptedModel{}, Tools: tools, ToolSource: src,
		Clock: clock, IDs: &core.SequentialIDs{}, AgentMachines: map[string]*core.Machine{"mcp": machine}})
	ctx := context.Background()
	rec, err := eng.Start(ctx, "acme", durable.StartRequest{Agent: "mcp", SessionID: "s-1", Messages: userMsg("who?"),
		Overrides: agents.Overrides{Model: scripted(turn("", call("c1", "mcp/crm/lookup", map[string]any{})), turn("Ada."))}})
	if err != nil {
		t.Fatal(err)
	}
	if err := q.Drain(ctx, 10, func(s core.Step, m core.ReceivedMessage) error {
		return eng.HandleStep(ctx, s, durable.Attempt{ReceiveCount: m.ReceiveCount, Owner: m.ReceiptHandle})
	}); err != nil {
		t.Fatal(err)
	}
	got, err := eng.Get(ctx, "acme", rec.State.RunID)
	if err != nil {
		t.Fatal(err)
	}
	if got.State.Status != core.StatusCompleted || executed.Load() != 1 {
		t.Fatalf("status %s, tool executed %d times", got.State.Status, executed.Load())
	}
	if n := src.calls.Load(); n != 2 {
		t.Fatalf("%d discoveries, want one per model turn (2)", n)
	}
	if n := guardrailRuns.Load(); n != 3 {
		t.Fatalf("the input guardrail ran %d times, want 3 (twice on the turn whose catalog grew, once on the next)", n)
	}
	evs, err := store.Events(ctx, rec.State.RunID, 0, got.State.NextEventSeq, 100)
	if err != nil {
		t.Fatal(err)
	}
	discovered := 0
	for _, ev := range evs {
		if ev.Type == core.EventToolsDiscovered {
			discovered++
		}
	}
	if discovered != 1 {
		t.Fatalf("%d tools_discovered events, want 1", discovered)
	}
}

// TestToolDiscoveryWithoutTools: a tool source that offers no tools
// changes nothing when none of its sources is down (no commit, each turn
// planned once), and records a source that is down, once.
func TestToolDiscoveryWithoutTools(t *testing.T) {
	reg, err := agents.Parse([]byte(`{"agents":[{"slug":"mcp","model":{"provider":"scripted"},"allow_overrides":["model"]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name       string
		down       []core.ToolSourceFailure
		commits    int64 // after the start
		guardrails int32
	}{
		{"nothing offered", nil, 1, 1},
		{"a source down", []core.ToolSourceFailure{{Source: "crm", Error: "connection refused"}}, 2, 2},
	} {
		src := &staticSource{down: tc.down}
		var guardrailRuns atomic.Int32
		machine := &core.Machine{Guardrails: core.Guardrails{Input: func(context.Context, []core.Message) core.GuardrailResult {
			guardrailRuns.Add(1)
			return core.Allow()
		}}}
		store, clock := memstore.New(), &core.FixedClock{T: t0}
		q := memstore.NewStepQueue(time.Hour, 5, func() time.Time { return clock.T })
		eng := durable.New(durable.Options{Store: store, Queue: q, Agents: reg, Model: core.ScriptedModel{}, ToolSource: src,
			Clock: clock, IDs: &core.SequentialIDs{}, AgentMachines: map[string]*core.Machine{"mcp": machine}})
		ctx := context.Background()
		rec, err := eng.Start(ctx, "acme", durable.StartRequest{Agent: "mcp", SessionID: "s-1", Messages: userMsg("who?"),
			Overrides: agents.Overrides{Model: scripted(turn("Nobody."))}})
		if err != nil {
			t.Fatal(err)
		}
		if err := q.Drain(ctx, 10, func(s core.Step, m core.ReceivedMessage) error {
			return eng.HandleStep(ctx, s, durable.Attempt{ReceiveCount: m.ReceiveCount, Owner: m.ReceiptHandle})
		}); err != nil {
			t.Fatal(err)
		}
		got, err := eng.Get(ctx, "acme", rec.State.RunID)
		if err != nil {
			t.Fatal(err)
		}
		if got.State.Status != core.StatusCompleted || got.State.Version != rec.State.Version+tc.commits || src.calls.Load() != 1 || guardrailRuns.Load() != tc.guardrails {
			t.Errorf("%s: status %s, %d commits after the start, %d discoveries, %d guardrail runs; want completed, %d, 1, %d",
				tc.name, got.State.Status, got.State.Version-rec.State.Version, src.calls.Load(), guardrailRuns.Load(), tc.commits, tc.guardrails)
		}
		if len(tc.down) > 0 && (len(got.State.ToolSourcesDown) != 1 || got.State.ToolSourcesDown[0] != "crm") {
			t.Errorf("%s: sources down %v, want crm", tc.name, got.State.ToolSourcesDown)
		}
	}
}
