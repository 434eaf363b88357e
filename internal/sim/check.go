package sim

import (
	"fmt"
	"math"
	"strings"

	"github.com/baton-agents/baton/core"
)

// Check compares a seed's execution under faults with its fault-free
// execution and returns every invariant violation:
//
//   - each run ends as it does without faults (status and final answer),
//     but a run the schedule cancels or interrupts, which may end so
//     instead, its transcript then a prefix of the one without faults;
//   - its transcript has the fault-free one's messages, role by role and
//     content by content (steering messages left out), but for a tool
//     result that is in_doubt: allowed only for the not retry-safe
//     ops/charge and ops/email, whose execution a crash may have cut off
//     from its record;
//   - its usage, and the model cost in result.cost, are those of the
//     model calls its transcript holds (each turn's reply, each
//     compaction summary) and those its child runs' transcripts hold
//     (agent/helper; children whose end reached it), each counted once
//     whatever was retried;
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
		// A cancel or an interrupt races the run's steps: it may come
		// too late (the run ends as without it) or win (cancelled or
		// interrupted, its transcript a prefix of the one without it,
		// open calls closed).
		switch kind := faulty.Kinds[run]; {
		case kind == Cancelled && f.Status == core.StatusCancelled, kind == Interrupted && f.Status == core.StatusInterrupted:
			checkPrefix(bad, run, f, c)
		default:
			checkSame(bad, run, f, c)
		}
		want := spent(faulty.Turns[run], f.Messages)
		want.Prompt += f.ChildUsage.Prompt
		want.Completion += f.ChildUsage.Completion
		if f.Usage != want {
			bad(run, "usage %+v, its committed model calls reported %+v", f.Usage, want)
		}
		if math.Abs(f.CostUSD-want.usd()) > 1e-12 {
			bad(run, "result.cost model_usd %g, its committed model calls cost %g", f.CostUSD, want.usd())
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
	checkForks(faulty, bad)
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

// checkSame checks that a run ends as without faults: status, answer,
// and transcript (steering messages left out: when they arrive is the
// schedule's), a result in doubt allowed for a tool that is not
// retry-safe.
func checkSame(bad func(run, format string, args ...any), run string, f, c RunOutcome) {
	if f.Status != c.Status || f.Final != c.Final {
		bad(run, "ended %s %q, without faults %s %q", f.Status, f.Final, c.Status, c.Final)
	}
	fms, cms := unsteered(f.Messages), unsteered(c.Messages)
	if len(fms) != len(cms) {
		bad(run, "%d messages, without faults %d", len(fms), len(cms))
		return
	}
	for i := range cms {
		if !sameMessage(fms[i], cms[i], false) {
			bad(run, "message %d is %s, without faults %s", i, describe(fms[i]), describe(cms[i]))
		}
	}
}

// sameMessage: the faulty run's message fm stands for the clean run's cm
// — the same, or a result in doubt of a tool that is not retry-safe, or,
// when the run was cancelled or interrupted, the result that closed an
// open call.
func sameMessage(fm, cm core.Message, cancelled bool) bool {
	if fm.Role == cm.Role && fm.Content == cm.Content {
		return true
	}
	if fm.Role != core.RoleToolResult || cm.Role != core.RoleToolResult {
		return false
	}
	return inDoubt(fm) && !retrySafe(fm.ToolName()) || cancelled && (strings.Contains(fm.Content, "cancel") || strings.Contains(fm.Content, "interrupt"))
}

// spent is the usage of the model calls a transcript holds: each turn's
// reply once, however often it was retried, and each compaction summary.
func spent(turns map[string]usage, msgs []core.Message) usage {
	var u usage
	for _, m := range msgs {
		var add usage
		switch {
		case m.Role == core.RoleAssistant:
			add = turns[m.Content]
		case m.Role == core.RoleUser && m.Metadata["source"] == "compaction":
			add = summaryUsage
		}
		u.Prompt += add.Prompt
		u.Completion += add.Completion
	}
	return u
}

// checkPrefix checks that a cancelled run's transcript is the start of
// the uncancelled one's, but for the results cancelling gave its open
// calls (and results in doubt, as in checkSame).
func checkPrefix(bad func(run, format string, args ...any), run string, f, c RunOutcome) {
	fms, cms := unsteered(f.Messages), unsteered(c.Messages)
	if len(fms) > len(cms) {
		bad(run, "cancelled with %d messages, more than the %d of its whole run", len(fms), len(cms))
		return
	}
	for i := range fms {
		if !sameMessage(fms[i], cms[i], true) {
			bad(run, "cancelled, message %d is %s, without the cancel %s", i, describe(fms[i]), describe(cms[i]))
		}
	}
}

// unsteered leaves out the steering messages.
func unsteered(msgs []core.Message) []core.Message {
	var out []core.Message
	for _, m := range msgs {
		if m.Role == core.RoleUser && strings.HasPrefix(m.Content, "steer:") {
			continue
		}
		out = append(out, m)
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
