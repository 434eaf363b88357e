package evals

import (
	"errors"
	"strings"
	"testing"

	"github.com/baton-agents/baton/core"
)

func TestParseNamesTheBadLine(t *testing.T) {
	good := `{"id":"a","input":{"messages":[{"role":"user","content":"hi"}]},"expect":{"final":{"equals":"hello"}}}`
	cases, err := Parse(strings.NewReader(good + "\n\n" + `{"id":"b","from_run":"r-1"}` + "\n"))
	if err != nil || len(cases) != 2 || cases[1].FromRun != "r-1" || *cases[0].Expect.Final.Equals != "hello" {
		t.Fatalf("parse: %+v %v", cases, err)
	}
	for _, tc := range []struct {
		text string
		line int
		why  string
	}{
		{good + "\n{not json", 2, "not a case"},
		{good + "\n" + `{"id":"c","input":{"messages":[]}}`, 2, "at least one message"},
		{good + "\n" + `{"id":"c"}`, 2, "one of them"},
		{good + "\n" + `{"id":"c","from_run":"r","input":{"messages":[{"role":"user","content":"x"}]}}`, 2, "one of them"},
		{good + "\n" + good, 2, "the id of line 1"},
		{`{"id":"c","from_run":"r","surprise":1}`, 1, "unknown field"},
		{`{"id":"c","from_run":"r","expect":{"final":{"regex":"(("}}}`, 1, "expect.final.regex"},
		{`{"id":"c","from_run":"r","expect":{"trajectory":{"mode":"some","tools":[]}}}`, 1, "exact or subset"},
		{`{"id":"c","from_run":"r","expect":{"max_turns":-1}}`, 1, "not negative"},
		{`{"id":"c","input":{"messages":[{"role":"user","content":"x"}],"tools":[{"name":"ops/x"}]}}`, 1, "client/* tools only"},
		{`{"id":"c","from_run":"r"} {"id":"d","from_run":"r"}`, 1, "one JSON object a line"},
		{`{"id":"","from_run":"r"}`, 1, "id: 1 to"},
	} {
		_, err := Parse(strings.NewReader(tc.text))
		var le *LineError
		if !errors.As(err, &le) || le.Line != tc.line || !strings.Contains(err.Error(), tc.why) {
			t.Errorf("%q: %v, want line %d saying %q", tc.text, err, tc.line, tc.why)
		}
	}
	if _, err := Parse(strings.NewReader("\n\n")); err == nil {
		t.Error("an empty dataset parsed")
	}
	if err := Check([]Case{{ID: "a", FromRun: "r"}, {ID: "a", FromRun: "s"}}); err == nil || err.(*LineError).Line != 2 {
		t.Errorf("Check of a repeated id: %v", err)
	}
}

func TestScore(t *testing.T) {
	str := func(s string) *string { return &s }
	cost := 0.02
	o := Outcome{Status: core.StatusCompleted, Final: `{"city":"Lisbon","days":3}`, Turns: 2, Tokens: 120, CostUSD: &cost,
		Calls: []ToolStep{{Name: "geo/find", Parameters: map[string]any{"q": "Lisbon", "n": 1}}, {Name: "mail/send", Parameters: map[string]any{"to": "ann"}}}}
	for _, tc := range []struct {
		name   string
		expect Expect
		out    Outcome
		failed []string
	}{
		{"all pass", Expect{Final: &FinalCheck{Equals: str(o.Final), Contains: []string{"Lisbon"}, Regex: `"days":\d`,
			Schema: map[string]any{"type": "object", "required": []any{"city"}}},
			Trajectory: &Trajectory{Tools: []ToolStep{{Name: "geo/find", Parameters: map[string]any{"q": "Lisbon"}}, {Name: "mail/send"}}},
			MaxTurns:   2, MaxTokens: 120, MaxCostUSD: 0.02}, o, nil},
		{"answer", Expect{Final: &FinalCheck{Equals: str("no"), Contains: []string{"Porto"}, Regex: "^x", Schema: map[string]any{"type": "array"}}}, o,
			[]string{CheckEquals, CheckContains, CheckRegex, CheckSchema}},
		{"not JSON", Expect{Final: &FinalCheck{Schema: map[string]any{"type": "object"}}}, Outcome{Status: core.StatusCompleted, Final: "plain"}, []string{CheckSchema}},
		{"exact trajectory", Expect{Trajectory: &Trajectory{Tools: []ToolStep{{Name: "mail/send"}}}}, o, []string{CheckTrajectory}},
		{"subset trajectory", Expect{Trajectory: &Trajectory{Mode: TrajectorySubset, Tools: []ToolStep{{Name: "mail/send", Parameters: map[string]any{"to": "ann"}}}}}, o, nil},
		{"subset out of order", Expect{Trajectory: &Trajectory{Mode: TrajectorySubset, Tools: []ToolStep{{Name: "mail/send"}, {Name: "geo/find"}}}}, o, []string{CheckTrajectory}},
		{"parameters", Expect{Trajectory: &Trajectory{Tools: []ToolStep{{Name: "geo/find", Parameters: map[string]any{"q": "Porto"}}, {Name: "mail/send"}}}}, o, []string{CheckTrajectory}},
		{"ceilings", Expect{MaxTurns: 1, MaxTokens: 119, MaxCostUSD: 0.01}, o, []string{CheckMaxTurns, CheckMaxTokens, CheckMaxCost}},
		{"unpriced", Expect{MaxCostUSD: 1}, Outcome{Status: core.StatusCompleted}, []string{CheckMaxCost}},
		{"failed run", Expect{}, Outcome{Status: core.StatusFailed, Reason: "model_error"}, []string{CheckRun}},
	} {
		pass, checks := Score(Case{ID: "x", FromRun: "r", Expect: tc.expect}, tc.out)
		var failed []string
		for _, c := range checks {
			if !c.Pass {
				failed = append(failed, c.Name)
				if c.Detail == "" {
					t.Errorf("%s: %s failed without a detail", tc.name, c.Name)
				}
			}
		}
		if strings.Join(failed, ",") != strings.Join(tc.failed, ",") || pass != (len(tc.failed) == 0) {
			t.Errorf("%s: failed %v (pass %v), want %v", tc.name, failed, pass, tc.failed)
		}
	}
}

func TestOutcomeOf(t *testing.T) {
	st := core.RunState{Status: core.StatusCompleted, FirstMsgSeq: 3, Turn: 2}
	tr := []core.Message{
		{Role: core.RoleUser, Content: "earlier", Seq: 1}, {Role: core.RoleAssistant, Content: "earlier answer", Seq: 2},
		{Role: core.RoleUser, Content: "now", Seq: 3},
		{Role: core.RoleToolCall, Seq: 4, Metadata: map[string]any{core.MetaToolName: "geo/find", core.MetaParameters: map[string]any{"q": "x"}}},
		{Role: core.RoleToolResult, Content: "{}", Seq: 5}, {Role: core.RoleAssistant, Content: "Found.", Seq: 6},
	}
	o := OutcomeOf(st, tr)
	if o.Final != "Found." || len(o.Calls) != 1 || o.Calls[0].Name != "geo/find" || o.Turns != 2 {
		t.Fatalf("%+v", o)
	}
}
