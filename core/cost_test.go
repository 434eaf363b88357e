package core

import (
	"context"
	"encoding/json"
	"maps"
	"slices"
	"testing"
)

// tablePricer prices "scripted/m1" at $1 per million prompt tokens and
// $2 per million completion tokens, and each counted AWS request unit
// at a flat rate.
type tablePricer struct{}

func (tablePricer) ModelUSD(provider, model string, u map[string]any) (float64, bool) {
	if provider+"/"+model != "scripted/m1" {
		return 0, false
	}
	return (NumberOf(u["prompt_tokens"])*1 + NumberOf(u["completion_tokens"])*2) / 1e6, true
}

func (tablePricer) AWSUSD(r Resources) float64 { return r.DynamoDBWRU * 1e-6 }

func costTurn(calls ...ToolCallRequest) ScriptedTurn {
	return ScriptedTurn{ToolCalls: calls, Content: "ok",
		Usage: map[string]any{"prompt_tokens": json.Number("1000"), "completion_tokens": json.Number("500")}}
}

func runCost(t *testing.T, model string, budget float64, turns ...ScriptedTurn) *Run {
	t.Helper()
	m := NewMachine(&FixedClock{T: t0})
	m.Pricer = tablePricer{}
	rn := &Runner{Machine: m, Model: ScriptedModel{}, Tools: echoTools{}}
	run, err := rn.Start(context.Background(), StartInput{RunID: "r1", SessionID: "s1",
		Config:   RunConfig{Model: ModelSpec{Provider: ProviderScripted, Model: model, Turns: turns}, CostBudgetUSD: budget, MaxTurns: 8, Tools: []ToolDeclaration{{Name: "search", Source: "go"}}},
		Messages: []Message{{Role: RoleUser, Content: "go"}}})
	if err != nil {
		t.Fatal(err)
	}
	return run
}

type echoTools struct{}

func (echoTools) Execute(_ context.Context, c ToolCall) (any, error) {
	return map[string]any{"ok": true}, nil
}

func TestCostPricesModelTurns(t *testing.T) {
	run := runCost(t, "m1", 0, costTurn(ToolCallRequest{ID: "c1", Name: "search"}), costTurn())
	env := run.Envelope()
	// Two turns of 1,000 prompt ($0.001) and 500 completion ($0.001) tokens.
	if env.Cost == nil || env.Cost.ModelUSD != 0.004 || env.Cost.TotalUSD != 0.004 || env.Cost.Currency != "USD" || len(env.Cost.Unpriced) != 0 {
		t.Fatalf("cost = %+v", env.Cost)
	}
	if c, ok := env.RequestMetadata["cost"].(RunCost); !ok || c.TotalUSD != 0.004 {
		t.Fatalf("request_metadata.cost = %#v", env.RequestMetadata["cost"])
	}
}

func TestCostUnknownModelIsUnpriced(t *testing.T) {
	run := runCost(t, "mystery", 0, costTurn())
	env := run.Envelope()
	if env.Cost == nil || env.Cost.TotalUSD != 0 || len(env.Cost.Unpriced) != 1 || env.Cost.Unpriced[0] != "scripted/mystery" {
		t.Fatalf("cost = %+v", env.Cost)
	}
}

func TestCostBudgetStopsTheRun(t *testing.T) {
	// Each turn costs $0.002: the cap of $0.003 holds after the first
	// turn and trips after the second, whose tool call never runs.
	run := runCost(t, "m1", 0.003,
		costTurn(ToolCallRequest{ID: "c1", Name: "search"}),
		costTurn(ToolCallRequest{ID: "c2", Name: "search"}),
		costTurn())
	env := run.Envelope()
	if env.Status != StatusBudgetExceeded || env.Budget != BudgetCostUSD || env.TurnCount != 2 {
		t.Fatalf("status %s budget %q turns %d", env.Status, env.Budget, env.TurnCount)
	}
	var tripped []Event
	for _, e := range env.Events {
		if e.Type == EventBudgetExceeded {
			tripped = append(tripped, e)
		}
	}
	if len(tripped) != 1 || *tripped[0].Data.(*BudgetExceededData) != (BudgetExceededData{Budget: BudgetCostUSD, Current: 0.004, Ceiling: 0.003}) {
		t.Fatalf("budget_exceeded events: %+v", tripped)
	}
	if len(env.ToolExecutionResults) != 2 || env.ToolExecutionResults[1].Result.Success || env.ToolExecutionResults[1].Result.ErrorType != ErrTypeSkipped {
		t.Fatalf("the second call ran: %+v", env.ToolExecutionResults)
	}
}

func TestCostBudgetCountsSpentAWSRequests(t *testing.T) {
	// The first turn's model cost ($0.002) is under the $0.0025 cap; the
	// tool step's 600 counted write units ($0.0006) take it over, so the
	// run stops there: the turn's second call never runs, nor does the
	// next model turn.
	m := NewMachine(&FixedClock{T: t0})
	m.Pricer = tablePricer{}
	out, err := m.Start(context.Background(), StartInput{RunID: "r1", SessionID: "s1",
		Config:   RunConfig{Model: ModelSpec{Provider: ProviderScripted, Model: "m1"}, CostBudgetUSD: 0.0025, Tools: []ToolDeclaration{{Name: "search", Source: "go"}}},
		Messages: []Message{{Role: RoleUser, Content: "go"}}})
	if err != nil {
		t.Fatal(err)
	}
	out, err = m.Apply(context.Background(), out.State, out.Messages, ModelReplied{Step: out.Next[0], Reply: ModelReply{
		ToolCalls: []ToolCallRequest{{ID: "c1", Name: "search"}, {ID: "c2", Name: "search"}},
		Usage:     map[string]any{"prompt_tokens": json.Number("1000"), "completion_tokens": json.Number("500")}}})
	if err != nil || out.State.Status == StatusBudgetExceeded {
		t.Fatalf("after the turn: %v %s", err, out.State.Status)
	}
	ctx := WithSpent(context.Background(), Resources{DynamoDBWRU: 600})
	out, err = m.Apply(ctx, out.State, out.Messages, ToolExecuted{Step: out.Next[0], Output: "x"})
	if err != nil {
		t.Fatal(err)
	}
	if out.State.Status != StatusBudgetExceeded || out.State.Budget != BudgetCostUSD || out.State.Cost.AWSUSD != 0.0006 || out.State.Cost.TotalUSD != 0.0026 {
		t.Fatalf("status %s budget %q cost %+v", out.State.Status, out.State.Budget, out.State.Cost)
	}
	if len(out.Next) != 0 || !slices.ContainsFunc(out.Messages, func(m Message) bool {
		return m.Role == RoleToolResult && m.ToolCallID() == "c2" && m.Metadata["error_type"] == ErrTypeSkipped
	}) {
		t.Fatalf("after the trip: next %v, messages %+v", out.Next, out.Messages)
	}
}

func TestCostBudgetNeedsAPricer(t *testing.T) {
	m := NewMachine(&FixedClock{T: t0})
	_, err := m.Start(context.Background(), StartInput{RunID: "r1", SessionID: "s1",
		Config:   RunConfig{Model: ModelSpec{Provider: ProviderScripted}, CostBudgetUSD: 1},
		Messages: []Message{{Role: RoleUser, Content: "go"}}})
	if err == nil {
		t.Fatal("a cost_usd budget without a price table was accepted")
	}
	var cfg RunConfig
	BudgetLimits{"cost_usd": -1}.ApplyTo(&cfg)
	if cfg.Model.Provider = "scripted"; cfg.Validate() == nil {
		t.Fatal("a negative cost_usd budget was accepted")
	}
	BudgetLimits{"cost_usd": 0.5, "turns": 2.5}.ApplyTo(&cfg)
	if cfg.CostBudgetUSD != 0.5 || cfg.Validate() == nil {
		t.Fatalf("a fractional turns budget was accepted: %+v", cfg.Budgets)
	}
}

// TestResourcesAddSub: Add sums each field and Sub takes it away again.
func TestResourcesAddSub(t *testing.T) {
	r := Resources{DynamoDBWRU: 1, DynamoDBRRU: 2, SQSRequests: 3, LambdaRequests: 4, LambdaGBSeconds: 5}
	o := Resources{DynamoDBWRU: 10, DynamoDBRRU: 20, SQSRequests: 30, LambdaRequests: 40, LambdaGBSeconds: 50}
	sum := r.Add(o)
	if want := (Resources{DynamoDBWRU: 11, DynamoDBRRU: 22, SQSRequests: 33, LambdaRequests: 44, LambdaGBSeconds: 55}); sum != want {
		t.Fatalf("Add = %+v, want %+v", sum, want)
	}
	if back := sum.Sub(o); back != r || !sum.Sub(sum).IsZero() {
		t.Fatalf("Sub = %+v, want %+v", back, r)
	}
}

// TestBudgetLimitsApplyTo: limits replace the budgets of their names and
// keep the others; a cost_usd that is not positive, and a count that is
// not a whole number below 2^31, are set to values Validate refuses.
func TestBudgetLimitsApplyTo(t *testing.T) {
	for _, tc := range []struct {
		name    string
		limits  BudgetLimits
		cost    float64
		budgets map[string]int
		valid   bool
	}{
		{"cost", BudgetLimits{"cost_usd": 0.5}, 0.5, map[string]int{"turns": 9}, true},
		{"zero cost", BudgetLimits{"cost_usd": 0}, -1, map[string]int{"turns": 9}, false},
		{"negative cost", BudgetLimits{"cost_usd": -2}, -1, map[string]int{"turns": 9}, false},
		{"counts", BudgetLimits{"turns": 3, "tool_calls": 4}, 0, map[string]int{"turns": 3, "tool_calls": 4}, true},
		{"largest count", BudgetLimits{"total_tokens": 1<<31 - 1}, 0, map[string]int{"turns": 9, "total_tokens": 1<<31 - 1}, true},
		{"count of 2^31", BudgetLimits{"total_tokens": 1 << 31}, 0, map[string]int{"turns": 9, "total_tokens": 0}, false},
		{"fraction", BudgetLimits{"turns": 2.5}, 0, map[string]int{"turns": 0}, false},
	} {
		cfg := RunConfig{Model: ModelSpec{Provider: ProviderScripted}, Budgets: map[string]int{"turns": 9}}
		tc.limits.ApplyTo(&cfg)
		if err := cfg.Validate(); cfg.CostBudgetUSD != tc.cost || !maps.Equal(cfg.Budgets, tc.budgets) || (err == nil) != tc.valid {
			t.Errorf("%s: cost %v, budgets %v, validate %v; want cost %v, budgets %v, valid %v", tc.name, cfg.CostBudgetUSD, cfg.Budgets, err, tc.cost, tc.budgets, tc.valid)
		}
	}
	var cfg RunConfig
	BudgetLimits{"turns": 2}.ApplyTo(&cfg)
	if cfg.Budgets["turns"] != 2 {
		t.Fatalf("without budgets: %v", cfg.Budgets)
	}
}
