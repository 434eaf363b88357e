package core

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
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

// TestScheduledStepsAndNextExpiry: a run waits on its model step and on
// the steps of its pending and approved calls that have one; its next
// expiry is the earliest of the calls that wait for the client or an
// approval with an expiry.
func TestScheduledStepsAndNextExpiry(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(d time.Duration) *time.Time { x := t0.Add(d); return &x }
	st := RunState{RunID: "r-1", Status: StatusRunning, ModelStep: 3, Calls: []CallState{
		{ID: "c-pending", Status: CallPending, StepSeq: 5, ExpiresAt: at(time.Minute)},
		{ID: "c-approved", Status: CallApproved, StepSeq: 6},
		{ID: "c-unscheduled", Status: CallPending},
		{ID: "c-approval", Status: CallAwaitingApproval, StepSeq: 7, ExpiresAt: at(3 * time.Hour)},
		{ID: "c-client", Status: CallAwaitingClient, ExpiresAt: at(2 * time.Hour)},
		{ID: "c-client-forever", Status: CallAwaitingClient},
		{ID: "c-done", Status: CallDone, StepSeq: 8, ExpiresAt: at(time.Hour)},
	}}
	var got []string
	for _, s := range st.ScheduledSteps() {
		got = append(got, fmt.Sprintf("%s %d %s", s.Kind, s.Seq, s.CallID))
	}
	want := []string{"model_turn 3 ", "tool_call 5 c-pending", "tool_call 6 c-approved"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("scheduled steps %q, want %q", got, want)
	}
	if exp, ok := st.NextExpiry(); !ok || !exp.Equal(t0.Add(2*time.Hour)) {
		t.Fatalf("next expiry %s %v, want %s", exp, ok, t0.Add(2*time.Hour))
	}
	st.Calls = st.Calls[:3]
	if exp, ok := st.NextExpiry(); ok {
		t.Fatalf("next expiry %s without a call waiting on one", exp)
	}
}
