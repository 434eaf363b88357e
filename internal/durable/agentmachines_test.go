package durable_test

import (
	"context"
	"testing"
	"time"

	"github.com/baton-agents/baton/core"
	"github.com/baton-agents/baton/internal/agents"
	"github.com/baton-agents/baton/internal/durable"
	"github.com/baton-agents/baton/internal/memstore"
)

// TestAgentMachines: a run of an agent with a machine of its own gets
// that machine's hooks; a run of another agent gets the runner's.
func TestAgentMachines(t *testing.T) {
	reg, err := agents.Parse([]byte(`{"agents":[{"slug":"guarded","model":{"provider":"scripted"},"allow_overrides":["model"]},
		{"slug":"open","model":{"provider":"scripted"},"allow_overrides":["model"]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	store, clock := memstore.New(), &core.FixedClock{T: t0}
	q := memstore.NewStepQueue(time.Hour, 5, func() time.Time { return clock.T })
	guarded := &core.Machine{Guardrails: core.Guardrails{Input: func(context.Context, []core.Message) core.GuardrailResult { return core.Deny("no") }}}
	eng := durable.New(durable.Options{Store: store, Queue: q, Agents: reg, Model: core.ScriptedModel{}, Clock: clock, IDs: &core.SequentialIDs{},
		AgentMachines: map[string]*core.Machine{"guarded": guarded}})
	status := map[string]core.RunStatus{}
	for _, agent := range []string{"guarded", "open"} {
		rec, err := eng.Start(context.Background(), "acme", durable.StartRequest{Agent: agent, SessionID: "s-" + agent, Messages: userMsg("hi"),
			Overrides: agents.Overrides{Model: scripted(turn("hello"))}})
		if err != nil {
			t.Fatal(err)
		}
		if err := q.Drain(context.Background(), 10, func(s core.Step, m core.ReceivedMessage) error {
			return eng.HandleStep(context.Background(), s, durable.Attempt{ReceiveCount: m.ReceiveCount, Owner: m.ReceiptHandle})
		}); err != nil {
			t.Fatal(err)
		}
		got, err := eng.Get(context.Background(), "acme", rec.State.RunID)
		if err != nil {
			t.Fatal(err)
		}
		status[agent] = got.State.Status
	}
	if status["guarded"] != core.StatusFailed || status["open"] != core.StatusCompleted {
		t.Fatalf("statuses %v", status)
	}
	if guarded.Clock != nil {
		t.Fatal("the runner changed the caller's machine")
	}
}
