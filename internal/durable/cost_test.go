package durable_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/baton-agents/baton/core"
	"github.com/baton-agents/baton/internal/cost"
	"github.com/baton-agents/baton/internal/durable"
)

// meteredStore counts AWS-like requests into the meter of the call's
// context, as internal/cost.Instrument does for the DynamoDB client:
// each commit 2 write units, each run load 1 read unit.
type meteredStore struct{ durable.Store }

func (s meteredStore) Commit(ctx context.Context, w core.Write) error {
	if m := core.MeterFrom(ctx); m != nil {
		m.Add(core.Resources{DynamoDBWRU: 2})
	}
	return s.Store.Commit(ctx, w)
}

func (s meteredStore) LoadRun(ctx context.Context, id string) (core.RunRecord, error) {
	if m := core.MeterFrom(ctx); m != nil {
		m.Add(core.Resources{DynamoDBRRU: 1})
	}
	return s.Store.LoadRun(ctx, id)
}

// m1Prices is a price table with the scripted model m1 at $1 per million
// input tokens and $2 per million output tokens.
func m1Prices(t *testing.T) *cost.Table {
	t.Helper()
	table, err := cost.NewTable("us-east-1", "")
	if err != nil {
		t.Fatal(err)
	}
	table.Models["scripted/m1"] = cost.ModelPrice{Input: 1, Output: 2}
	return table
}

func newCostHarness(t *testing.T) *harness {
	t.Helper()
	h := newHarness(t, func(s durable.Store) durable.Store { return meteredStore{s} })
	h.opts.Pricer, h.opts.Metering = m1Prices(t), &durable.Metering{}
	h.eng = durable.New(h.opts)
	return h
}

func pricedTurn(calls ...core.ToolCallRequest) core.ScriptedTurn {
	return core.ScriptedTurn{Content: "ok", ToolCalls: calls, Usage: map[string]any{"prompt_tokens": json.Number("1000"), "completion_tokens": json.Number("500")}}
}

func TestResultCostIsTheHandComputedFigure(t *testing.T) {
	h := newCostHarness(t)
	runID := h.start(t, &core.ModelSpec{Provider: core.ProviderScripted, Model: "m1", Turns: []core.ScriptedTurn{
		pricedTurn(call("c1", "ability/search", map[string]any{"q": "x"})), pricedTurn()}}, nil)
	h.pump(t)
	env := h.envelope(t, runID)
	if env.Status != core.StatusCompleted {
		t.Fatalf("status %s", env.Status)
	}
	// Three steps (model, tool, model). Each counts its message's send,
	// receive and delete (3 SQS requests), one Lambda invocation, its run
	// load (1 RRU) and the write units the commit before it carried: the
	// first step none (the API's create is not metered), the others 2.
	// The last commit schedules nothing, so its 2 WRU are not counted.
	// The fixed clock makes every step take 0 GB-seconds.
	want := core.Resources{DynamoDBWRU: 4, DynamoDBRRU: 3, SQSRequests: 9, LambdaRequests: 3}
	// us-east-1: $0.625/M WRU, $0.125/M RRU, $0.50/M SQS, $0.20/M Lambda
	// requests: 2.5 + 0.375 + 4.5 + 0.6 = $7.975 per million.
	const aws = 7.975e-6
	// Two turns of 1,000 prompt tokens at $1/M and 500 completion tokens
	// at $2/M.
	const model = 0.004
	c := env.Cost
	if c == nil || c.AWS != want || c.AWSUSD != aws || c.ModelUSD != model || c.TotalUSD != 0.004007975 {
		t.Fatalf("cost = %+v, want aws %+v ($%v) + model $%v", c, want, aws, model)
	}
	if rm, ok := env.RequestMetadata["cost"].(core.RunCost); !ok || rm.TotalUSD != c.TotalUSD {
		t.Fatalf("request_metadata.cost = %#v", env.RequestMetadata["cost"])
	}
}

func TestCostBudgetStopsADistributedRun(t *testing.T) {
	h := newCostHarness(t)
	// The first turn costs $0.002 plus its step's requests; the cap of
	// $0.0025 trips after the second turn, whose call never runs.
	runID := h.start(t, &core.ModelSpec{Provider: core.ProviderScripted, Model: "m1", Turns: []core.ScriptedTurn{
		pricedTurn(call("c1", "ability/search", map[string]any{"q": "x"})),
		pricedTurn(call("c2", "ability/search", map[string]any{"q": "y"})),
		pricedTurn()}}, func(r *durable.StartRequest) { r.Overrides.Budgets = core.BudgetLimits{"cost_usd": 0.0025} })
	h.pump(t)
	env := h.envelope(t, runID)
	if env.Status != core.StatusBudgetExceeded || env.Budget != core.BudgetCostUSD {
		t.Fatalf("status %s budget %q", env.Status, env.Budget)
	}
	if env.Cost.TotalUSD < 0.0025 {
		t.Fatalf("stopped under the cap: %+v", env.Cost)
	}
	if h.count.n["c2"] != 0 || h.count.n["c1"] != 1 {
		t.Fatalf("executions: %v", h.count.n)
	}
}

// TestAgentMachineIsPriced: an agent with a machine of its own
// (Options.AgentMachines) is priced with the runner's price table too.
func TestAgentMachineIsPriced(t *testing.T) {
	h := newCostHarness(t)
	h.opts.AgentMachines = map[string]*core.Machine{"demo": {}}
	h.eng = durable.New(h.opts)
	runID := h.start(t, &core.ModelSpec{Provider: core.ProviderScripted, Model: "m1", Turns: []core.ScriptedTurn{pricedTurn()}}, nil)
	h.pump(t)
	if c := h.envelope(t, runID).Cost; c == nil || c.ModelUSD != 0.002 {
		t.Fatalf("cost %+v, want the turn's $0.002 of model tokens", c)
	}
}
