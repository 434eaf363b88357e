package core

import (
	"context"
	"strings"
	"testing"
	"time"
)

// TestRunSummary: a run's list entry has its first user message as its
// title (whitespace folded, cut at TitleRunes), says why a run that did
// not complete stopped, and is ended only once terminal; Keeps applies
// the list's filters to it.
func TestRunSummary(t *testing.T) {
	clock := &FixedClock{T: time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)}
	m := NewMachine(clock)
	out, err := m.Start(context.Background(), StartInput{RunID: "r-1", SessionID: "s-1",
		Config:   RunConfig{Agent: "a", Model: ModelSpec{Provider: ProviderScripted}},
		Messages: []Message{{Role: RoleSystem, Content: "not a title"}, {Role: RoleUser, Content: "  Plan\tthe \n trip " + strings.Repeat("x", TitleRunes)}, {Role: RoleUser, Content: "second"}}})
	if err != nil {
		t.Fatal(err)
	}
	st := out.State
	sum := st.Summary()
	if want := truncateRunes("Plan the trip "+strings.Repeat("x", TitleRunes), TitleRunes); sum.Title != want || !strings.HasSuffix(sum.Title, "…") {
		t.Fatalf("title %q", sum.Title)
	}
	if sum.EndedAt != nil || sum.Reason != "" || sum.Agent != "a" || sum.Status != StatusQueued {
		t.Fatalf("a queued run's entry %+v", sum)
	}
	for _, tc := range []struct {
		edit func(*RunState)
		want string
	}{
		{func(s *RunState) {
			s.Status, s.Error = StatusFailed, &RunError{Code: "model_error", Message: "the model failed"}
		}, "the model failed"},
		{func(s *RunState) { s.Status, s.Budget = StatusBudgetExceeded, "total_tokens" }, "budget total_tokens reached"},
		{func(s *RunState) {
			s.Status, s.Interrupted = StatusInterrupted, map[string]any{"reason": "a person takes over"}
		}, "a person takes over"},
		{func(s *RunState) {
			s.Status, s.Stop = StatusCancelled, &stop{Status: StatusCancelled, Reason: "not needed"}
		}, "not needed"},
		{func(s *RunState) { s.Status, s.Stop = StatusRunning, &stop{Status: StatusCancelled, Reason: "soon"} }, ""},
		{func(s *RunState) { s.Status = StatusCompleted }, ""},
	} {
		s := st
		tc.edit(&s)
		got := s.Summary()
		if got.Reason != tc.want || (got.EndedAt != nil) != IsTerminal(s.Status) {
			t.Errorf("status %s: reason %q, ended %v; want %q", s.Status, got.Reason, got.EndedAt, tc.want)
		}
	}
	child := st
	child.Config.Parent = &ParentRef{RunID: "r-0", ToolCallID: "c1", RootRunID: "r-0", Depth: 1}
	for _, tc := range []struct {
		q          RunListQuery
		top, child bool
	}{
		{RunListQuery{}, true, true},
		{RunListQuery{TopLevel: true}, true, false},
		{RunListQuery{Parent: "r-0"}, false, true},
		{RunListQuery{Parent: "r-9"}, false, false},
		{RunListQuery{Agent: "b"}, false, false},
		{RunListQuery{Since: clock.T}, true, true},
		{RunListQuery{Until: clock.T}, false, false},
		{RunListQuery{Since: clock.T.Add(time.Second)}, false, false},
		{RunListQuery{Status: StatusQueued, Until: clock.T.Add(time.Nanosecond)}, true, true},
	} {
		if tc.q.Keeps(st.Summary()) != tc.top || tc.q.Keeps(child.Summary()) != tc.child {
			t.Errorf("%+v keeps the top-level run %v (want %v), the child %v (want %v)", tc.q, tc.q.Keeps(st.Summary()), tc.top, tc.q.Keeps(child.Summary()), tc.child)
		}
	}
}
