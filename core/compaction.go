package core

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// CompactionPolicy turns on transcript compaction: when the model would
// see more than MaxMessages non-system messages, all but the most recent
// RecentMessages are condensed into one synthetic summary message, which
// the model then sees in their place. The summary is written by the
// caller's Summarizer when one is configured, and otherwise by a model
// call: Model, or the run's own model, with Prompt (DefaultSummaryPrompt
// when empty) as its system prompt.
type CompactionPolicy struct {
	Enabled     bool `json:"enabled"`
	MaxMessages int  `json:"max_messages"`
	// RecentMessages is how many of the newest messages are kept as they
	// are (0: half of MaxMessages, rounded up); it must be below
	// MaxMessages.
	RecentMessages int `json:"recent_messages"`
	// Model writes the summaries; nil means the run's model. A cheaper
	// model than the run's is the usual choice.
	Model *ModelSpec `json:"model,omitempty"`
	// Prompt is the summary call's system prompt; empty means
	// DefaultSummaryPrompt.
	Prompt string `json:"prompt,omitempty"`
}

// DefaultSummaryPrompt is the system prompt of a summary call when the
// policy names none.
const DefaultSummaryPrompt = "You condense the earlier part of a conversation between a user and an AI assistant " +
	"(including the assistant's tool calls and their results) so the assistant can continue the conversation " +
	"without the original messages. Write a concise, factual summary in plain prose: the user's goals and " +
	"requests, decisions made, facts and figures learned from tool results, open questions, and anything the " +
	"assistant promised to do. Keep names, identifiers, numbers and dates exactly. Do not address the user, " +
	"add a preamble, or invent anything."

// MinCompactionMessages is the smallest MaxMessages an enabled policy
// accepts.
const MinCompactionMessages = 2

// Validate checks the policy; its errors name the field
// (compaction.max_messages, …). A nil policy is valid.
func (p *CompactionPolicy) Validate() error {
	if p == nil {
		return nil
	}
	switch {
	case p.MaxMessages < 0:
		return invalid("compaction.max_messages must not be negative, got %d", p.MaxMessages)
	case p.Enabled && p.MaxMessages < MinCompactionMessages:
		return invalid("compaction.max_messages must be at least %d when compaction is enabled, got %d", MinCompactionMessages, p.MaxMessages)
	case p.RecentMessages < 0:
		return invalid("compaction.recent_messages must not be negative, got %d", p.RecentMessages)
	case p.RecentMessages > 0 && p.RecentMessages >= p.MaxMessages:
		return invalid("compaction.recent_messages (%d) must be below compaction.max_messages (%d)", p.RecentMessages, p.MaxMessages)
	}
	if p.Model != nil {
		if strings.TrimSpace(p.Model.Provider) == "" {
			return invalid("compaction.model.provider is required when compaction.model is set")
		}
		if err := validateModelOptions(*p.Model); err != nil {
			return invalid("compaction.model.options: %v", err)
		}
	}
	return nil
}

func (p *CompactionPolicy) active() bool { return p != nil && p.Enabled && p.MaxMessages > 0 }

func (p *CompactionPolicy) recent() int {
	if p.RecentMessages > 0 && p.RecentMessages < p.MaxMessages {
		return p.RecentMessages
	}
	return (p.MaxMessages + 1) / 2
}

// CompactionRequest is the I/O a compaction step needs: a summary of
// Messages, written by the caller's Summarizer or by the model call
// Model.
type CompactionRequest struct {
	RunID    string
	Messages []Message // the messages to summarize, oldest first
	Through  int64     // the last compacted sequence number
	Retained int
	// Model is the summary model call, used when no Summarizer is
	// configured.
	Model ModelRequest
}

// summaryRequest is the model call that writes the summary of msgs for
// the run st under policy p, before its next turn.
func summaryRequest(st *RunState, p *CompactionPolicy, msgs []Message) ModelRequest {
	spec := st.Config.Model
	if p.Model != nil {
		spec = *p.Model
	}
	prompt := p.Prompt
	if strings.TrimSpace(prompt) == "" {
		prompt = DefaultSummaryPrompt
	}
	return ModelRequest{
		RunID: st.RunID, SessionID: st.SessionID, Turn: st.Turn + 1, Model: spec, AgentVersion: st.Config.AgentVersion, System: prompt,
		Messages: []Message{{Role: RoleUser, Content: SummaryInput(msgs)}},
		Purpose:  PurposeSummary, Summarizes: len(msgs),
	}
}

// SummaryMessageMaxChars caps the text of one message in a summary
// request; a longer message is cut and says how much was left out.
const SummaryMessageMaxChars = 4000

// SummaryInput is the text a summary model call reads: the messages to
// condense, oldest first, each headed by what it is. Tool calls and
// results are written as text (as providers write tool history to a
// model that is given no tools), and an earlier summary is marked as
// one.
func SummaryInput(msgs []Message) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Summarize these %d earlier messages of the conversation, oldest first.\n", len(msgs))
	for _, m := range msgs {
		var head string
		body := m.Content
		switch m.Role {
		case RoleToolCall:
			params, _ := CanonicalJSON(paramsValue(asParams(m.Metadata[MetaParameters])))
			head = fmt.Sprintf("[assistant called tool %s (call %s)]", m.ToolName(), m.ToolCallID())
			body = string(params)
		case RoleToolResult:
			outcome := "ok"
			if ok, isBool := m.Metadata[MetaSuccess].(bool); isBool && !ok {
				outcome = "failed"
			}
			head = fmt.Sprintf("[result of tool %s (call %s): %s]", m.ToolName(), m.ToolCallID(), outcome)
		default:
			head = "[" + m.Role + "]"
			if _, summary := compactionMeta(m); summary {
				head = "[summary of the messages before these]"
			}
		}
		if n := utf8.RuneCountInString(body); n > SummaryMessageMaxChars {
			body = string([]rune(body)[:SummaryMessageMaxChars]) + fmt.Sprintf(" … [%d more characters left out]", n-SummaryMessageMaxChars)
		}
		b.WriteString("\n")
		b.WriteString(head)
		b.WriteString("\n")
		b.WriteString(body)
		b.WriteString("\n")
	}
	return b.String()
}

// MetaCompaction is the metadata key of a compaction summary message.
const MetaCompaction = "compaction"

func compactionMeta(m Message) (map[string]any, bool) {
	c, ok := m.Metadata[MetaCompaction].(map[string]any)
	if !ok {
		return nil, false
	}
	s, _ := c["status"].(string)
	return c, s == "compacted"
}

// compactedView is the session transcript as the model sees it after
// compaction: system messages, the latest summary, then every message
// after the summary's boundary. The stored transcript is never rewritten.
// A transcript index, when given and usable, finds the latest summary.
func compactedView(transcript []Message, ix *TranscriptIndex) []Message {
	idx, found := -1, false
	if ix != nil {
		if idx, found = ix.latestSummary(transcript); !found {
			idx = -1
		}
	}
	for i := len(transcript) - 1; !found && i >= 0; i-- {
		if _, ok := compactionMeta(transcript[i]); ok {
			idx = i
			break
		}
	}
	if idx < 0 {
		return transcript
	}
	meta, _ := compactionMeta(transcript[idx])
	through, _ := intOf(meta["compacted_through"])
	view := make([]Message, 0, len(transcript))
	for _, m := range transcript {
		if m.Role == RoleSystem && m.Seq <= through {
			view = append(view, m)
		}
	}
	view = append(view, transcript[idx])
	for i, m := range transcript {
		if i == idx || m.Seq <= through {
			continue
		}
		if _, summary := compactionMeta(m); summary {
			continue
		}
		view = append(view, m)
	}
	return view
}

// compactionPlan picks the messages to summarize: all but the most recent
// ones, moving the boundary back so that a tool call and its result are
// never separated.
func compactionPlan(p *CompactionPolicy, view []Message) (compact []Message, through int64, retained int, ok bool) {
	var rest []Message
	for _, m := range view {
		if m.Role != RoleSystem {
			rest = append(rest, m)
		}
	}
	if len(rest) <= p.MaxMessages {
		return nil, 0, 0, false
	}
	// Cut at the last block start at or before the target, so a tool call
	// group and its results stay on one side.
	target := len(rest) - p.recent()
	cut := 0
	for i := 0; i < len(rest); i = blockEnd(rest, i) {
		if i > target {
			break
		}
		cut = i
	}
	compact = rest[:cut]
	for _, m := range compact {
		if _, summary := compactionMeta(m); !summary && m.Seq > through {
			through = m.Seq
		}
	}
	if through == 0 {
		return nil, 0, 0, false
	}
	return compact, through, len(rest) - cut, true
}
