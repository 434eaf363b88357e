package sim

import (
	"fmt"
	"strings"

	"github.com/baton-agents/baton/core"
)

// Check compares a seed's execution under faults with its fault-free
// execution and returns every invariant violation:
//
//   - each run ends as it does without faults (status and final answer);
//   - its transcript has the fault-free one's messages, role by role and
//     content by content, but for a tool result that is in_doubt: allowed
//     only for the not retry-safe ops/charge and ops/email, whose
//     execution a crash may have cut off from its record;
//   - a tool that is not retry-safe ran at most once per call, and a
//     retry-safe one always with the same idempotency key;
//   - every tool call has its result;
//   - the run's events are numbered 1, 2, 3, … with no gap or repeat;
//   - its stream reader, however often it disconnected and resumed, saw
//     every event once, in order;
//   - its version never went back (Result.Violations).
func Check(faulty, clean Result) []string {
	out := append([]string{}, faulty.Violations...)
	bad := func(run, format string, args ...any) { out = append(out, run+": "+fmt.Sprintf(format, args...)) }
	for _, run := range Keys(clean.Runs) {
		c, f := clean.Runs[run], faulty.Runs[run]
		if f.Status != c.Status || f.Final != c.Final {
			bad(run, "ended %s %q, without faults %s %q", f.Status, f.Final, c.Status, c.Final)
		}
		if len(f.Messages) != len(c.Messages) {
			bad(run, "%d messages, without faults %d", len(f.Messages), len(c.Messages))
		} else {
			for i := range c.Messages {
				fm, cm := f.Messages[i], c.Messages[i]
				if fm.Role == cm.Role && fm.Content == cm.Content {
					continue
				}
				if fm.Role == core.RoleToolResult && cm.Role == core.RoleToolResult && inDoubt(fm) && !retrySafe(fm.ToolName()) {
					continue
				}
				bad(run, "message %d is %s, without faults %s", i, describe(fm), describe(cm))
			}
		}
		calls, results := map[string]bool{}, map[string]bool{}
		for _, m := range f.Messages {
			switch m.Role {
			case core.RoleToolCall:
				calls[m.ToolCallID()] = true
			case core.RoleToolResult:
				results[m.ToolCallID()] = true
			}
		}
		for id := range calls {
			if !results[id] {
				bad(run, "tool call %s has no result", id)
			}
		}
		for i, ev := range f.Events {
			if ev.Seq != int64(i+1) {
				bad(run, "event %d has seq %d", i+1, ev.Seq)
				break
			}
		}
		seen := faulty.Seen[run]
		if len(seen) != len(f.Events) {
			bad(run, "the stream reader saw %d events of %d", len(seen), len(f.Events))
		}
		for i, seq := range seen {
			if seq != int64(i+1) {
				bad(run, "the stream reader's event %d has seq %d", i+1, seq)
				break
			}
		}
	}
	for _, k := range Keys(faulty.Executions) {
		n := faulty.Executions[k]
		name := toolOf(faulty, k)
		if !retrySafe(name) && n > 1 {
			out = append(out, fmt.Sprintf("%s: %s ran %d times", k, name, n))
		}
		if len(faulty.Keys[k]) > 1 {
			out = append(out, fmt.Sprintf("%s: %s ran with %d idempotency keys", k, name, len(faulty.Keys[k])))
		}
	}
	return out
}

// inDoubt reports whether a tool result message is an in_doubt failure.
func inDoubt(m core.Message) bool {
	return strings.Contains(m.Content, "in_doubt") || m.Metadata["error_type"] == "in_doubt"
}

func retrySafe(tool string) bool { return tool == "ops/lookup" }

// toolOf names the tool of a run's call (k is "r<i>/<call id>").
func toolOf(r Result, k string) string {
	run, id, _ := strings.Cut(k, "/")
	for _, m := range r.Runs[run].Messages {
		if m.Role == core.RoleToolCall && m.ToolCallID() == id {
			return m.ToolName()
		}
	}
	return ""
}
