package durable

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"

	"github.com/baton-agents/baton/core"
)

// Table tests of the runner's small pure helpers: each row is a case a
// one-operator change of the helper gets wrong (docs/testing.md).

// TestGroup: a step's FIFO message group is its session's, except a tool
// step of a run with parallel tool calls, which gets one of its own.
func TestGroup(t *testing.T) {
	st := func(parallel bool) core.RunState {
		return core.RunState{SessionID: "s-1", Config: core.RunConfig{ParallelToolCalls: parallel}}
	}
	for _, tc := range []struct {
		name     string
		parallel bool
		step     core.Step
		want     string
	}{
		{"a model turn, sequential", false, core.Step{Kind: core.StepModelTurn}, "s-1"},
		{"a model turn, parallel", true, core.Step{Kind: core.StepModelTurn, CallID: "c1"}, "s-1"},
		{"a tool step, sequential", false, core.Step{Kind: core.StepToolCall, CallID: "c1"}, "s-1"},
		{"a tool step, parallel", true, core.Step{Kind: core.StepToolCall, CallID: "c1"}, "s-1#c1"},
	} {
		if got := group(st(tc.parallel), tc.step); got != tc.want {
			t.Errorf("%s: group %q, want %q", tc.name, got, tc.want)
		}
	}
}

// TestChildStops: a finishing run's one record stops its running
// children only, interrupting them when it was interrupted, its reason
// naming the parent and, when the interruption gave one, why.
func TestChildStops(t *testing.T) {
	children := []core.ChildSummary{{RunID: "c1", Status: core.StatusCompleted}, {RunID: "c2", Status: core.StatusRunning}, {RunID: "c3", Status: core.StatusRunning}}
	for _, tc := range []struct {
		name     string
		st       core.RunState
		want     []string
		intr     bool
		reason   string
		noRecord bool
	}{
		{"no children", core.RunState{RunID: "r", Status: core.StatusCancelled}, nil, false, "", true},
		{"none running", core.RunState{RunID: "r", Status: core.StatusCancelled, Children: children[:1]}, nil, false, "", true},
		{"cancelled", core.RunState{RunID: "r", Version: 4, Status: core.StatusCancelled, Children: children},
			[]string{"c2", "c3"}, false, "the parent run r ended (cancelled)", false},
		{"interrupted with a reason", core.RunState{RunID: "r", Version: 4, Status: core.StatusInterrupted, Children: children,
			Interrupted: map[string]any{"reason": "stop now"}},
			[]string{"c2", "c3"}, true, "the parent run r ended (interrupted): stop now", false},
		{"interrupted with an empty reason", core.RunState{RunID: "r", Version: 4, Status: core.StatusInterrupted, Children: children,
			Interrupted: map[string]any{"reason": ""}},
			[]string{"c2", "c3"}, true, "the parent run r ended (interrupted)", false},
	} {
		ns := childStops(tc.st)
		if tc.noRecord {
			if ns != nil {
				t.Errorf("%s: records %+v, want none", tc.name, ns)
			}
			continue
		}
		if len(ns) != 1 || ns[0].Child == nil || ns[0].ID != "r:4:stop" || ns[0].RunID != "r" {
			t.Errorf("%s: records %+v, want one stop record r:4:stop", tc.name, ns)
			continue
		}
		c := ns[0].Child
		if !slices.Equal(c.RunIDs, tc.want) || c.Interrupt != tc.intr || c.Reason != tc.reason {
			t.Errorf("%s: stop %+v, want runs %v, interrupt %v, reason %q", tc.name, *c, tc.want, tc.intr, tc.reason)
		}
	}
}

// TestWasOpen: a pending item was open before a transition only when a
// call of the previous state waited on it, an approval by its action id,
// a client tool by its request id.
func TestWasOpen(t *testing.T) {
	prev := core.RunState{Calls: []core.CallState{
		{ID: "c1", Status: core.CallAwaitingApproval, ActionID: "act-1", RequestID: "req-x"},
		{ID: "c2", Status: core.CallAwaitingClient, RequestID: "req-2", ActionID: "act-y"},
		{ID: "c3", Status: core.CallDone, ActionID: "act-3", RequestID: "req-3"},
	}}
	for _, tc := range []struct {
		id   string
		want bool
	}{
		{"act-1", true},  // an approval awaited
		{"req-2", true},  // a client result awaited
		{"req-x", false}, // an approval's call has no request awaited
		{"act-y", false}, // a client call has no approval awaited
		{"act-3", false}, // decided
		{"req-3", false},
		{"nope", false},
	} {
		if got := wasOpen(prev, tc.id); got != tc.want {
			t.Errorf("wasOpen(%q) = %v, want %v", tc.id, got, tc.want)
		}
	}
}

// TestFinalContent: a finishing transition's final content is its done
// event's response, else its last assistant text.
func TestFinalContent(t *testing.T) {
	msgs := []core.Message{{Role: core.RoleUser, Content: "hi"}, {Role: core.RoleAssistant, Content: "From the transcript."}}
	for _, tc := range []struct {
		name   string
		events []core.Event
		want   string
	}{
		{"no events", nil, "From the transcript."},
		{"a done event", []core.Event{{Type: core.EventTurnStarted}, {Type: core.EventDone, Data: core.Fields{"response": "From the done event."}}}, "From the done event."},
		{"another event with a response", []core.Event{{Type: core.EventTurnStarted, Data: core.Fields{"response": "Not this."}}}, "From the transcript."},
		{"a done event without a response", []core.Event{{Type: core.EventDone, Data: core.Fields{}}}, "From the transcript."},
	} {
		if got := finalContent(core.Output{Events: tc.events, Messages: msgs}); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

// TestSessionOf: the cache key of a tenant's session gives the session
// back (its transcript index is the session's).
func TestSessionOf(t *testing.T) {
	for _, tc := range [][2]string{{"acme", "s-1"}, {"", "s"}, {"t", ""}} {
		if got := sessionOf(cacheKey(tc[0], tc[1])); got != tc[1] {
			t.Errorf("sessionOf(cacheKey(%q, %q)) = %q", tc[0], tc[1], got)
		}
	}
}

// TestDedupeResults: a tool result stored with a commit is a reference
// to its tool_result message only when that message holds its exact
// bytes (its text, or its canonical JSON), and reading it back restores
// the same result.
func TestDedupeResults(t *testing.T) {
	msgs := []core.Message{
		{Seq: 1, Role: core.RoleToolResult, Content: "plain answer"},
		{Seq: 2, Role: core.RoleToolResult, Content: `{"n":1}`},
		{Seq: 3, Role: core.RoleToolResult, Content: "shortened"},
		{Seq: 4, Role: core.RoleToolResult, Content: `{"n":2}`},
		{Seq: 5, Role: core.RoleAssistant, Content: "plain answer"},
		{Seq: 6, Role: core.RoleToolResult, Content: "failed"},
	}
	ok := func(seq int64, v any) core.ToolExecutionResult {
		return core.ToolExecutionResult{ToolCallID: fmt.Sprint("c", seq), Seq: seq, Result: core.ToolResult{Success: true, Result: v}}
	}
	failed := ok(6, "failed")
	failed.Result.Success = false
	results := []core.ToolExecutionResult{
		ok(1, "plain answer"),                        // the message's text
		ok(2, map[string]any{"n": json.Number("1")}), // the message's JSON
		ok(3, "the whole answer"),                    // not the message's text
		ok(4, map[string]any{"n": json.Number("3")}), // not the message's JSON
		ok(5, "plain answer"),                        // an assistant message's seq
		failed,                                       // a failure is kept whole
		ok(7, "no message"),                          // no message of its seq
		ok(1, nil),                                   // no body
	}
	out := dedupeResults(core.Output{Messages: msgs, ToolResults: results})
	want := []string{refText, refJSON, "", "", "", "", "", ""}
	for i, r := range out.ToolResults {
		if r.ResultRef != want[i] || (want[i] != "") != (r.Result.Result == nil && results[i].Result.Result != nil) {
			t.Errorf("result %d: ref %q, body %v; want ref %q", i, r.ResultRef, r.Result.Result, want[i])
		}
	}
	back, err := restoreResults(out.ToolResults, msgs)
	if err != nil {
		t.Fatal(err)
	}
	for i := range back {
		if canon(t, back[i]) != canon(t, results[i]) {
			t.Errorf("result %d read back %s, want %s", i, canon(t, back[i]), canon(t, results[i]))
		}
	}
	if out := dedupeResults(core.Output{Messages: msgs}); out.ToolResults != nil {
		t.Errorf("no results: %+v", out.ToolResults)
	}
}

func canon(t *testing.T, v any) string {
	t.Helper()
	b, err := core.CanonicalJSON(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
