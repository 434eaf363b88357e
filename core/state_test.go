package core

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// TestDurationJSON: a duration is a positive Go duration string.
func TestDurationJSON(t *testing.T) {
	var d Duration
	if err := json.Unmarshal([]byte(`"1ns"`), &d); err != nil || d != Duration(1) {
		t.Fatalf("1ns: %v %v", d, err)
	}
	for _, bad := range []string{`"0s"`, `"-1s"`, `"soon"`, `90`} {
		if err := json.Unmarshal([]byte(bad), &d); err == nil {
			t.Errorf("%s accepted", bad)
		}
	}
}

// TestRunConfigBudgetBounds: a budget's ceiling is a positive integer,
// a per-tool budget names a tool, and cost_usd is refused when negative
// only.
func TestRunConfigBudgetBounds(t *testing.T) {
	base := RunConfig{Model: ModelSpec{Provider: ProviderScripted}}
	for _, tc := range []struct {
		budgets map[string]int
		cost    float64
		want    string // "" valid
	}{
		{map[string]int{BudgetTurns: 1, "tool_calls_x": 1}, 0, ""},
		{map[string]int{BudgetTurns: 0}, 0, "must be a positive integer"},
		{map[string]int{BudgetToolCalls: -1}, 0, "must be a positive integer"},
		{map[string]int{"tool_calls_": 1}, 0, "unknown budget"},
		{map[string]int{"tool_call": 1}, 0, "unknown budget"},
		{nil, 0.01, ""},
		{nil, -0.01, "US dollars"},
	} {
		c := base
		c.Budgets, c.CostBudgetUSD = tc.budgets, tc.cost
		err := c.withDefaults().Validate()
		if tc.want == "" {
			if err != nil {
				t.Errorf("%v %v: %v", tc.budgets, tc.cost, err)
			}
		} else if !errors.Is(err, ErrInvalidInput) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v %v: %v, want %q", tc.budgets, tc.cost, err, tc.want)
		}
	}
}

// TestBudgetExceeded: a budget is exceeded once its count reaches the
// ceiling, not only past it.
func TestBudgetExceeded(t *testing.T) {
	for _, tc := range []struct {
		b    BudgetState
		want bool
	}{
		{BudgetState{Name: BudgetTurns, Ceiling: 3, Current: 2}, false},
		{BudgetState{Name: BudgetTurns, Ceiling: 3, Current: 3}, true},
		{BudgetState{Name: BudgetCostUSD, CeilingUSD: 0.5, CurrentUSD: 0.25}, false},
		{BudgetState{Name: BudgetCostUSD, CeilingUSD: 0.5, CurrentUSD: 0.5}, true},
	} {
		if got := tc.b.Exceeded(); got != tc.want {
			t.Errorf("%+v: exceeded %v, want %v", tc.b, got, tc.want)
		}
	}
}
