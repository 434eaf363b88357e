package evals

import (
	"encoding/json"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strings"

	"github.com/baton-agents/baton/core"
)

// Outcome is what a case's run did, as its checks read it.
type Outcome struct {
	Status core.RunStatus
	// Reason says why a run that did not complete stopped.
	Reason string
	Final  string
	// Calls are the run's tool calls, in order.
	Calls   []ToolStep
	Turns   int
	Tokens  int64
	CostUSD *float64
}

// OutcomeOf reads a finished run's outcome from its state and its
// session transcript.
func OutcomeOf(st core.RunState, transcript []core.Message) Outcome {
	sum := st.Summary()
	o := Outcome{Status: st.Status, Reason: sum.Reason, Turns: st.Turn, Tokens: sum.TotalTokens, CostUSD: sum.CostUSD}
	first, _ := slices.BinarySearchFunc(transcript, st.FirstMsgSeq, func(m core.Message, seq int64) int {
		switch {
		case m.Seq < seq:
			return -1
		case m.Seq > seq:
			return 1
		}
		return 0
	})
	own := transcript[first:]
	o.Final = core.FinalContent(own)
	for _, m := range own {
		if m.Role == core.RoleToolCall {
			p, _ := m.Metadata[core.MetaParameters].(map[string]any)
			o.Calls = append(o.Calls, ToolStep{Name: m.ToolName(), Parameters: p})
		}
	}
	return o
}

// CheckResult is one check of a case: its name, whether it passed, and
// what it found when it did not.
type CheckResult struct {
	Name   string `json:"name"`
	Pass   bool   `json:"pass"`
	Detail string `json:"detail,omitempty"`
}

// Check names.
const (
	CheckRun        = "run"
	CheckEquals     = "final.equals"
	CheckContains   = "final.contains"
	CheckRegex      = "final.regex"
	CheckSchema     = "final.schema"
	CheckTrajectory = "trajectory"
	CheckMaxTurns   = "max_turns"
	CheckMaxTokens  = "max_tokens"
	CheckMaxCost    = "max_cost_usd"
	CheckJudge      = "judge"
)

// Score runs a case's deterministic checks on its run's outcome: the
// run completed, then each expectation the case states. The case passes
// when every check does.
func Score(c Case, o Outcome) (bool, []CheckResult) {
	var out []CheckResult
	add := func(name string, pass bool, format string, args ...any) {
		r := CheckResult{Name: name, Pass: pass}
		if !pass {
			r.Detail = fmt.Sprintf(format, args...)
		}
		out = append(out, r)
	}
	add(CheckRun, o.Status == core.StatusCompleted, "the run ended %s%s", o.Status, cond(o.Reason != "", ": "+o.Reason))
	e := c.Expect
	if f := e.Final; f != nil {
		if f.Equals != nil {
			add(CheckEquals, o.Final == *f.Equals, "the final answer is %q, not %q", short(o.Final), short(*f.Equals))
		}
		for _, s := range f.Contains {
			add(CheckContains, strings.Contains(o.Final, s), "the final answer %q does not contain %q", short(o.Final), s)
		}
		if f.Regex != "" {
			re, err := regexp.Compile(f.Regex)
			add(CheckRegex, err == nil && re.MatchString(o.Final), "the final answer %q does not match %s", short(o.Final), f.Regex)
		}
		if f.Schema != nil {
			var v any
			if err := core.DecodeJSON([]byte(o.Final), &v); err != nil {
				add(CheckSchema, false, "the final answer is not JSON: %v", err)
			} else if g, err := core.ToJSONValue(v); err != nil {
				add(CheckSchema, false, "the final answer is not JSON: %v", err)
			} else if prob, err := core.ValidateValue(f.Schema, g); err != nil || prob != "" {
				add(CheckSchema, false, "the final answer does not satisfy the schema: %s%v", prob, errOrNil(err))
			} else {
				add(CheckSchema, true, "")
			}
		}
	}
	if t := e.Trajectory; t != nil {
		ok, why := trajectoryMatches(*t, o.Calls)
		add(CheckTrajectory, ok, "%s", why)
	}
	if e.MaxTurns > 0 {
		add(CheckMaxTurns, o.Turns <= e.MaxTurns, "%d turns, over %d", o.Turns, e.MaxTurns)
	}
	if e.MaxTokens > 0 {
		add(CheckMaxTokens, o.Tokens <= e.MaxTokens, "%d tokens, over %d", o.Tokens, e.MaxTokens)
	}
	if e.MaxCostUSD > 0 {
		switch {
		case o.CostUSD == nil:
			add(CheckMaxCost, false, "the runtime prices nothing, so the cost ceiling cannot be checked")
		default:
			add(CheckMaxCost, *o.CostUSD <= e.MaxCostUSD, "$%g, over $%g", *o.CostUSD, e.MaxCostUSD)
		}
	}
	pass := true
	for _, r := range out {
		pass = pass && r.Pass
	}
	return pass, out
}

// trajectoryMatches says whether calls follow t: exactly t's tools in
// order, or (subset) t's tools in order among others; each with at
// least the parameters t gives.
func trajectoryMatches(t Trajectory, calls []ToolStep) (bool, string) {
	names := make([]string, len(calls))
	for i, c := range calls {
		names[i] = c.Name
	}
	want := make([]string, len(t.Tools))
	for i, s := range t.Tools {
		want[i] = s.Name
	}
	if t.Mode == TrajectorySubset {
		j := 0
		for _, c := range calls {
			if j < len(t.Tools) && stepMatches(t.Tools[j], c) {
				j++
			}
		}
		if j < len(t.Tools) {
			return false, fmt.Sprintf("the calls %v do not include %v in order (missing from %s)", names, want, t.Tools[j].Name)
		}
		return true, ""
	}
	if len(calls) != len(t.Tools) {
		return false, fmt.Sprintf("the calls are %v, not %v", names, want)
	}
	for i, s := range t.Tools {
		if !stepMatches(s, calls[i]) {
			return false, fmt.Sprintf("call %d is %s with %s, not %s with %s", i+1, calls[i].Name, jsonText(calls[i].Parameters), s.Name, jsonText(s.Parameters))
		}
	}
	return true, ""
}

// stepMatches: the call is the step's tool with at least its parameters
// (compared as canonical JSON values).
func stepMatches(s, c ToolStep) bool {
	if s.Name != c.Name {
		return false
	}
	for k, want := range s.Parameters {
		got, ok := c.Parameters[k]
		if !ok {
			return false
		}
		a, err1 := core.CanonicalJSON(want)
		b, err2 := core.CanonicalJSON(got)
		if err1 != nil || err2 != nil || !reflect.DeepEqual(a, b) {
			return false
		}
	}
	return true
}

func jsonText(v any) string {
	if v == nil {
		return "{}"
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

func short(s string) string {
	if r := []rune(s); len(r) > 200 {
		return string(r[:200]) + "…"
	}
	return s
}

func cond(ok bool, s string) string {
	if ok {
		return s
	}
	return ""
}

func errOrNil(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
