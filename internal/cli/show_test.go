package cli

import (
	"bufio"
	"fmt"
	"strings"
	"testing"
)

// TestShowToolResults: a failed tool's line carries its reason (the
// result text its tool_result event has), a tool_retry says at once that
// an attempt failed and when the next comes, and an agent tool's call that
// finished before a slower parallel sibling shows its own duration (its
// child_run_finished), not the sibling's, whose results were recorded
// together.
func TestShowToolResults(t *testing.T) {
	env, out, _ := testEnv(nil)
	st := newStreamState(newPrinter(env, false))
	ev := func(typ, at string, data map[string]any) event {
		return event{Type: typ, At: "2026-01-01T00:00:" + at + "Z", Data: data}
	}
	for _, e := range []event{
		ev("tool_call_start", "00", map[string]any{"tool_call_id": "fast", "tool_name": "agent/researcher"}),
		ev("tool_call_start", "00", map[string]any{"tool_call_id": "slow", "tool_name": "agent/researcher"}),
		ev("child_run_finished", "02", map[string]any{"tool_call_id": "fast", "tool_name": "agent/researcher"}),
		ev("child_run_finished", "09", map[string]any{"tool_call_id": "slow", "tool_name": "agent/researcher"}),
		ev("tool_result", "09", map[string]any{"tool_call_id": "fast", "tool_name": "agent/researcher", "success": true}),
		ev("tool_result", "09", map[string]any{"tool_call_id": "slow", "tool_name": "agent/researcher", "success": true}),
		ev("tool_call_start", "10", map[string]any{"tool_call_id": "r1", "tool_name": "a2a/remote"}),
		ev("tool_retry", "10", map[string]any{"tool_call_id": "r1", "tool_name": "a2a/remote", "attempt": 1.0, "attempts": 5.0, "wait": "20s",
			"reason": "read the agent card: connection refused"}),
		ev("tool_call_start", "10", map[string]any{"tool_call_id": "c1", "tool_name": "client/ask"}),
		ev("tool_result", "11", map[string]any{"tool_call_id": "c1", "tool_name": "client/ask", "success": false, "error_type": "client_error",
			"result": "the calendar\nservice is down"}),
	} {
		st.show(e)
	}
	want := "  ✓ agent/researcher ok 2s\n  ✓ agent/researcher ok 9s\n" +
		"  ↻ a2a/remote attempt 1 of 5 failed, trying again in 20s: read the agent card: connection refused\n" +
		"  ✗ client/ask failed client_error: the calendar service is down 1s\n"
	if out.String() != want {
		t.Fatalf("shown:\n%s\nwant:\n%s", out.String(), want)
	}
}

// TestRejectWithoutReason: "n" at accept? then the end of input at the
// optional reason rejects (without a reason) rather than leaving the
// run paused; the end of input at accept? decides nothing.
func TestRejectWithoutReason(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want string
		ok   bool
	}{
		{"n\n", "map[decision:reject]", true},
		{"n\ntoo pricey\n", "map[decision:reject reason:too pricey]", true},
		{"maybe\ny\n", "map[decision:accept]", true},
		{"", "map[]", false},
	} {
		env, _, _ := testEnv(nil)
		env.in = bufio.NewReader(strings.NewReader(tc.in))
		body, ok := promptDecision(env)
		if got := fmt.Sprint(body); ok != tc.ok || got != tc.want {
			t.Errorf("input %q: %s %v, want %s %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

// TestCount: one turn is "1 turn", not "1 turns".
func TestCount(t *testing.T) {
	for n, want := range map[int]string{0: "0 turns", 1: "1 turn", 2: "2 turns"} {
		if got := count(n, "turn"); got != want {
			t.Errorf("count(%d) = %q, want %q", n, got, want)
		}
	}
}
