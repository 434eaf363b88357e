package core

import (
	"strings"
	"unicode/utf8"
)

// modelView is what the next model turn sees: the compacted transcript,
// the inbox's steering and continuation messages, trimmed to the context
// budget.
func (st *RunState) modelView(transcript []Message) ([]Message, *TrimResult) {
	base := compactedView(transcript, st.index)
	if len(st.Inbox) == 0 {
		// The view is the transcript itself, capped so that appending to
		// it cannot write into the transcript.
		base = base[:len(base):len(base)]
		return st.trimmed(base)
	}
	msgs := make([]Message, 0, len(base)+len(st.Inbox))
	msgs = append(msgs, base...)
	for _, q := range st.Inbox {
		msgs = append(msgs, inboxMessage(q))
	}
	return st.trimmed(msgs)
}

// trimmed is msgs trimmed to the context budget (as they are without
// one).
func (st *RunState) trimmed(msgs []Message) ([]Message, *TrimResult) {
	if st.Config.ContextBudget <= 0 {
		return msgs, nil
	}
	return TrimToContextWindow(msgs, st.Config.ContextBudget, st.systemChars())
}

// systemChars is the estimate of the system prompt, which the model sees
// outside the message list.
func (st *RunState) systemChars() int {
	if st.Config.System == "" {
		return 0
	}
	return estimateMessage(Message{Role: RoleSystem, Content: st.Config.System})
}

// EstimateChars is §13.3's estimate: role plus four delimiters, the text,
// and the JSON length of a tool call's name and parameters.
func EstimateChars(msgs []Message) int {
	total := 0
	for _, m := range msgs {
		total += estimateMessage(m)
	}
	return total
}

func estimateMessage(m Message) int {
	n := len(m.Role) + 4 + utf8.RuneCountInString(m.Content)
	if m.Role == RoleToolCall {
		b, _ := CanonicalJSON(map[string]any{"name": m.ToolName(), "parameters": paramsValue(asParams(m.Metadata[MetaParameters]))})
		n += utf8.RuneCount(b)
	}
	return n
}

func asParams(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}

// TrimResult describes a trimmed view.
type TrimResult struct {
	Dropped      []Message
	SummaryIndex int // index of the summary message in the trimmed list
}

// TrimToContextWindow trims a message list to budget characters (§13.3):
// leading system messages are never dropped; the oldest other messages are
// dropped (a tool call always together with its result) while the list is
// over budget minus a summary reserve of min(5000, 5%), keeping at least
// two; the dropped ones are replaced by one "[Context summary: …]" user
// message after the system messages. extra is the size of content outside
// the list (the system prompt). It returns the list unchanged and nil when
// it fits.
func TrimToContextWindow(msgs []Message, budget, extra int) ([]Message, *TrimResult) {
	if budget <= 0 || EstimateChars(msgs)+extra <= budget {
		return msgs, nil
	}
	nsys := 0
	for nsys < len(msgs) && msgs[nsys].Role == RoleSystem {
		nsys++
	}
	system, rest := msgs[:nsys], msgs[nsys:]
	reserve := budget / 20
	if reserve > 5000 {
		reserve = 5000
	}
	limit := budget - reserve
	total := EstimateChars(msgs) + extra
	start := 0
	for total > limit && start < len(rest) { // system messages only: nothing to drop
		end := blockEnd(rest, start)
		if len(rest)-end < 2 {
			break
		}
		total -= EstimateChars(rest[start:end])
		start = end
	}
	if start == 0 {
		return msgs, nil
	}
	dropped := rest[:start]
	out := make([]Message, 0, len(system)+1+len(rest)-start)
	out = append(out, system...)
	out = append(out, Message{Role: RoleUser, Content: "[Context summary: " + SummarizeDropped(dropped) + "]", Metadata: map[string]any{MetaSource: "context_trim"}})
	out = append(out, rest[start:]...)
	return out, &TrimResult{Dropped: dropped, SummaryIndex: len(system)}
}

// blockEnd returns the end of the droppable block starting at i: one
// message, or a run of tool calls through the last of their results.
func blockEnd(msgs []Message, i int) int {
	if msgs[i].Role != RoleToolCall && msgs[i].Role != RoleToolResult {
		return i + 1
	}
	open := map[string]bool{}
	j := i
	for ; j < len(msgs); j++ {
		m := msgs[j]
		if m.Role == RoleToolCall {
			open[m.ToolCallID()] = true
		} else if m.Role == RoleToolResult {
			delete(open, m.ToolCallID())
		} else {
			break
		}
		if len(open) == 0 && (j+1 >= len(msgs) || msgs[j+1].Role != RoleToolResult) {
			return j + 1
		}
	}
	return j
}

// SummarizeDropped is §13.3's deterministic summary of dropped messages:
// what the user asked, what the assistant said, which tools it called;
// capped at about 4000 characters.
func SummarizeDropped(msgs []Message) string {
	var lines []string
	var calls []string
	flush := func() {
		if len(calls) > 0 {
			lines = append(lines, "  Called tools: "+strings.Join(calls, ", "))
			calls = nil
		}
	}
	for _, m := range msgs {
		switch m.Role {
		case RoleUser:
			flush()
			lines = append(lines, "User asked: "+truncateRunes(m.Content, 200))
		case RoleAssistant:
			flush()
			if strings.TrimSpace(m.Content) != "" {
				lines = append(lines, "Assistant: "+truncateRunes(m.Content, 200))
			}
		case RoleToolCall:
			calls = append(calls, m.ToolName())
		}
	}
	flush()
	return truncateRunes(strings.Join(lines, "\n"), 4000)
}
