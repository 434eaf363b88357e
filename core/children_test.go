package core

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"
)

func TestInheritBudgets(t *testing.T) {
	c := RunConfig{Budgets: map[string]int{BudgetToolCalls: 2, BudgetTurns: 4}, CostBudgetUSD: 0.5}
	c.InheritBudgets([]BudgetState{
		{Name: BudgetTotalTokens, Ceiling: 100, Current: 40},
		{Name: BudgetToolCalls, Ceiling: 10, Current: 3},
		{Name: BudgetTurns, Ceiling: 3, Current: 2},
		{Name: BudgetCostUSD, CeilingUSD: 1, CurrentUSD: 0.75},
	})
	want := map[string]int{BudgetTotalTokens: 60, BudgetToolCalls: 2, BudgetTurns: 4}
	if !reflect.DeepEqual(c.Budgets, want) || c.CostBudgetUSD != 0.25 {
		t.Fatalf("budgets %v, cost %v; want %v, 0.25 (the parent's remainders where lower, its own otherwise; turns are the run's own)", c.Budgets, c.CostBudgetUSD, want)
	}
	spent := RunConfig{}
	spent.InheritBudgets([]BudgetState{{Name: BudgetTotalTokens, Ceiling: 10, Current: 12}, {Name: BudgetCostUSD, CeilingUSD: 1, CurrentUSD: 1}})
	if spent.Budgets[BudgetTotalTokens] != 1 || spent.CostBudgetUSD <= 0 || spent.CostBudgetUSD > 1e-6 {
		t.Fatalf("a used-up budget: %v, %v", spent.Budgets, spent.CostBudgetUSD)
	}
}

func TestChildIDsAndTask(t *testing.T) {
	a, b := ChildRunID("r-1", "c1"), ChildRunID("r-1", "c2")
	if a == b || a != ChildRunID("r-1", "c1") || ChildSessionID("r-1", "c1") == a || len(a) != len("r-")+26 {
		t.Fatalf("ids %q %q", a, b)
	}
	if got := ChildTask(map[string]any{"task": "Find X.", "context": "Y matters."}); got != "Find X.\n\nContext:\nY matters." {
		t.Fatalf("task %q", got)
	}
	if got := ChildTask(map[string]any{"city": "Oslo"}); got != `{"city":"Oslo"}` {
		t.Fatalf("declared parameters %q", got)
	}
}

// TestChildStopRuns: a stop record names its children in RunIDs; one
// stored before RunIDs existed names its one child in RunID.
func TestChildStopRuns(t *testing.T) {
	var stored Notification
	if err := json.Unmarshal([]byte(`{"id":"r-1:3:stop:r-c","run_id":"r-1","child":{"run_id":"r-c","reason":"ended"}}`), &stored); err != nil {
		t.Fatal(err)
	}
	if got := stored.Child.Runs(); !reflect.DeepEqual(got, []string{"r-c"}) {
		t.Fatalf("an older record's children: %v", got)
	}
	stop := ChildStop{RunIDs: []string{"r-a", "r-b"}, Reason: "ended"}
	if got := stop.Runs(); !reflect.DeepEqual(got, []string{"r-a", "r-b"}) {
		t.Fatalf("children: %v", got)
	}
}

// agentTool is an agent tool whose calls start child runs of agent
// research, its answer held to schema when one is given.
func agentTool(schema map[string]any) ToolDeclaration {
	ext := map[string]any{DeclAgent: "research"}
	if schema != nil {
		ext[DeclOutputSchema] = schema
	}
	return ToolDeclaration{Name: "agent/research", Source: "agents", Description: "Research.", Executor: ExecutorAgent, Scope: ScopeRun,
		Parameters: DefaultAgentToolParameters(), Extensions: ext}
}

// childCall starts run r-1 with cfg, has its model call the agent tool
// (c1, then more's calls, one at a time; with more's usage) and returns the plan of that call's step, the machine, the
// state, the transcript and the step.
func childCall(t *testing.T, cfg RunConfig, pricer Pricer, more ModelReply) (Plan, *Machine, RunState, []Message, Step) {
	t.Helper()
	ctx := context.Background()
	m := NewMachine(&FixedClock{T: t0})
	m.Pricer = pricer
	cfg.Model = scripted()
	out, err := m.Start(ctx, StartInput{RunID: "r-1", SessionID: "s-1", FirstSeq: 1, Config: cfg, Messages: user("dig")})
	if err != nil {
		t.Fatal(err)
	}
	more.ToolCalls = append([]ToolCallRequest{{ID: "c1", Name: "agent/research", Parameters: map[string]any{"task": "dig"}}}, more.ToolCalls...)
	o, err := m.Apply(ctx, out.State, out.Messages, ModelReplied{Step: out.Next[0], Reply: more})
	if err != nil || len(o.Next) != 1 {
		t.Fatalf("model turn: %v, next %v", err, o.Next)
	}
	tr := append(out.Messages, o.Messages...)
	plan, err := m.Plan(ctx, o.State, tr, o.Next[0])
	if err != nil {
		t.Fatal(err)
	}
	return plan, m, o.State, tr, o.Next[0]
}

// TestAgentToolDepth: a run may start a child run while fewer runs than
// its max_depth (3 when it names none) are above it.
func TestAgentToolDepth(t *testing.T) {
	for _, tc := range []struct {
		depth, max int
		allowed    bool
	}{{0, 0, true}, {2, 0, true}, {3, 0, false}, {3, 4, true}, {4, 4, false}} {
		cfg := RunConfig{MaxDepth: tc.max, Tools: []ToolDeclaration{agentTool(nil)}}
		if tc.depth > 0 {
			cfg.Parent = &ParentRef{RunID: "r-0", ToolCallID: "c0", RootRunID: "r-0", Depth: tc.depth}
		}
		plan, _, _, _, _ := childCall(t, cfg, nil, ModelReply{})
		limit := tc.max
		if limit == 0 {
			limit = DefaultMaxDepth
		}
		if tc.allowed {
			if plan.Kind != PlanTool || plan.Tool.Declaration.ChildAgent() != "research" {
				t.Errorf("depth %d, max_depth %d: plan %s, want the tool", tc.depth, tc.max, plan.Kind)
			}
			continue
		}
		in, _ := plan.Input.(ToolDecided)
		if res := in.Decision.Result; plan.Kind != PlanApply || res.ErrorType != ErrTypeDepthExceeded || res.Metadata["depth"] != tc.depth || res.Metadata["max_depth"] != limit {
			t.Errorf("depth %d, max_depth %d: plan %s, result %+v; want depth_exceeded", tc.depth, tc.max, plan.Kind, res)
		}
	}
}

// TestChildFinished: a child run's end is its call's result (its answer;
// the JSON its output_schema asks for; a failure naming its status and
// reason) and adds its spend to the run's; it is taken once, and only
// from the child that answers the call.
func TestChildFinished(t *testing.T) {
	ctx := context.Background()
	schema := map[string]any{"type": "object", "required": []any{"n"}, "properties": map[string]any{"n": map[string]any{"type": "integer"}}}
	child := ChildRunID("r-1", "c1")
	cases := []struct {
		name    string
		schema  map[string]any
		in      ChildFinished
		success bool
		errType string
		text    string // in the result, or its error
	}{
		{"answer", nil, ChildFinished{Status: StatusCompleted, FinalContent: "Found it."}, true, "", "Found it."},
		{"failed with a reason", nil, ChildFinished{Status: StatusFailed, Reason: " out of time "}, false, ErrTypeChildRun, "ended with status failed: out of time"},
		{"failed without one", nil, ChildFinished{Status: StatusCancelled, Reason: " "}, false, ErrTypeChildRun, "ended with status cancelled"},
		{"schema answer", schema, ChildFinished{Status: StatusCompleted, FinalContent: ` {"n": 3} `}, true, "", `"n":3`},
		{"not JSON", schema, ChildFinished{Status: StatusCompleted, FinalContent: "three"}, false, ErrTypeInvalidOutput, "is not the JSON"},
		{"against the schema", schema, ChildFinished{Status: StatusCompleted, FinalContent: `{"n": "x"}`}, false, ErrTypeInvalidOutput, "does not satisfy"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, m, st, tr, step := childCall(t, RunConfig{Tools: []ToolDeclaration{agentTool(tc.schema)}}, tablePricer{}, ModelReply{})
			o, err := m.Apply(ctx, st, tr, ToolDecided{Step: step, Decision: Decision{Kind: DecideAwaitChild, ChildRunID: child}})
			if err != nil || len(o.State.Children) != 1 || o.State.Children[0].Agent != "research" || o.State.Children[0].Status != StatusRunning {
				t.Fatalf("awaiting the child: %v, children %+v", err, o.State.Children)
			}
			st, tr = o.State, append(tr, o.Messages...)
			if _, err := m.Apply(ctx, st, tr, ChildFinished{ToolCallID: "c1", ChildRunID: ChildRunID("r-1", "c2"), Status: StatusCompleted}); !errors.Is(err, ErrNothingToApply) {
				t.Fatalf("another child's end: %v", err)
			}
			in := tc.in
			in.ToolCallID, in.ChildRunID, in.Agent = "c1", child, "research"
			o, err = m.Apply(ctx, st, tr, in)
			if err != nil {
				t.Fatal(err)
			}
			var res *ToolResultData
			for _, ev := range o.Events {
				if d, ok := ev.Data.(*ToolResultData); ok {
					res = d
				}
			}
			if res == nil || res.Success != tc.success || res.ErrorType != tc.errType || !strings.Contains(res.Result, tc.text) {
				t.Fatalf("result %+v, want success %v, %q, %q", res, tc.success, tc.errType, tc.text)
			}
			if len(o.State.Children) != 1 || o.State.Children[0].Status != tc.in.Status {
				t.Fatalf("children %+v", o.State.Children)
			}
			if _, err := m.Apply(ctx, o.State, append(tr, o.Messages...), in); !errors.Is(err, ErrNothingToApply) {
				t.Fatalf("a second delivery: %v", err)
			}
		})
	}
}

// TestChildSpend: a child's end adds its tool calls, usage and cost to
// the run's (the cost only with a price table); when its tokens take the
// run over its total_tokens budget, the budget trips with the child's end
// (budget_exceeded), and the run ends once the turn's calls are in, as
// with its own tokens (a call of the turn still to run is scheduled),
// which trip the budget between turns: a child that brings no tokens
// trips nothing.
func TestChildSpend(t *testing.T) {
	ctx := context.Background()
	usage := map[string]any{"prompt_tokens": json.Number("10"), "completion_tokens": json.Number("20"), "total_tokens": json.Number("30")}
	cost := &RunCost{Currency: "USD", ModelUSD: 0.5, AWS: Resources{DynamoDBWRU: 1000}, Unpriced: []string{"x/y"}}
	search := []ToolCallRequest{call("c2", "ability/search", map[string]any{"q": "x"})}
	for _, tc := range []struct {
		name       string
		tokens     int
		pricer     Pricer
		more       ModelReply
		childUsage map[string]any
		tripped    bool
		status     RunStatus
	}{
		{"within the budgets", 100, tablePricer{}, ModelReply{}, usage, false, StatusQueued},
		{"over total_tokens", 20, tablePricer{}, ModelReply{}, usage, true, StatusBudgetExceeded},
		{"over total_tokens with a call to run", 20, tablePricer{}, ModelReply{ToolCalls: search}, usage, true, StatusQueued},
		{"over total_tokens by the run's own reply", 20, tablePricer{}, ModelReply{ToolCalls: search, Usage: usage}, nil, false, StatusQueued},
		{"without a price table", 100, nil, ModelReply{}, usage, false, StatusQueued},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := RunConfig{Tools: []ToolDeclaration{agentTool(nil), serverTool("ability/search", nil)}, Budgets: map[string]int{BudgetToolCalls: 10, BudgetTotalTokens: tc.tokens}}
			_, m, st, tr, step := childCall(t, cfg, tc.pricer, tc.more)
			o, err := m.Apply(ctx, st, tr, ToolDecided{Step: step, Decision: Decision{Kind: DecideAwaitChild, ChildRunID: ChildRunID("r-1", "c1")}})
			if err != nil {
				t.Fatal(err)
			}
			before, tr := o.State, append(tr, o.Messages...)
			finish := func(toolCalls int) Output {
				o, err := m.Apply(ctx, before, tr, ChildFinished{ToolCallID: "c1", ChildRunID: ChildRunID("r-1", "c1"), Agent: "research",
					Status: StatusCompleted, FinalContent: "ok", Usage: tc.childUsage, Cost: cost, ToolCalls: toolCalls})
				if err != nil {
					t.Fatal(err)
				}
				return o
			}
			out, own := finish(2), finish(0).State
			after := out.State
			if after.budget(BudgetToolCalls).Current != own.budget(BudgetToolCalls).Current+2 || after.budget(BudgetTotalTokens).Current != 30 || after.Usage.Number("total_tokens") != 30 {
				t.Errorf("budgets %+v (without the child's calls %+v), usage %v", after.Budgets, own.Budgets, after.Usage)
			}
			if tc.pricer != nil && (after.Cost.ModelUSD != before.Cost.ModelUSD+0.5 || after.Cost.AWS.DynamoDBWRU != before.Cost.AWS.DynamoDBWRU+1000 || !slices.Contains(after.Cost.Unpriced, "x/y") || before.Cost.ModelUSD != 0) {
				t.Errorf("cost %+v, before %+v", after.Cost, before.Cost)
			}
			if tc.pricer == nil && after.Cost != nil {
				t.Errorf("a cost without a price table: %+v", after.Cost)
			}
			tripped := false
			for _, ev := range out.Events {
				if d, ok := ev.Data.(*BudgetExceededData); ok && d.Budget == BudgetTotalTokens && d.Current == 30 {
					tripped = true
				}
			}
			if after.Status != tc.status || tripped != tc.tripped || tc.tripped != (after.Budget == BudgetTotalTokens) {
				t.Errorf("status %s, budget %q, tripped %v; want %s, tripped %v", after.Status, after.Budget, tripped, tc.status, tc.tripped)
			}
		})
	}
}
