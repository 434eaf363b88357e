package core

import (
	"encoding/json"
	"reflect"
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
