package core

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"
)

// ---- compaction (opt-in, persisted) ----

// CompactionPolicy turns on transcript compaction: when the model would
// see more than MaxMessages non-system messages, all but the most recent
// RecentMessages are summarized by the caller's Summarizer into one
// synthetic summary message.
type CompactionPolicy struct {
	Enabled        bool `json:"enabled"`
	MaxMessages    int  `json:"max_messages"`
	RecentMessages int  `json:"recent_messages"`
}

func (p *CompactionPolicy) active() bool { return p != nil && p.Enabled && p.MaxMessages > 0 }

func (p *CompactionPolicy) recent() int {
	if p.RecentMessages > 0 && p.RecentMessages < p.MaxMessages {
		return p.RecentMessages
	}
	return (p.MaxMessages + 1) / 2
}

// Summarizer condenses older messages for compaction. It is caller
// supplied, so core never chooses a model.
type Summarizer interface {
	Summarize(ctx context.Context, req SummaryRequest) (string, error)
}

// SummarizerFunc adapts a function to Summarizer.
type SummarizerFunc func(ctx context.Context, req SummaryRequest) (string, error)

// Summarize calls f.
func (f SummarizerFunc) Summarize(ctx context.Context, req SummaryRequest) (string, error) {
	return f(ctx, req)
}

// SummaryRequest is what a summarizer gets.
type SummaryRequest struct {
	RunID    string
	Messages []Message
}

// CompactionRequest is the I/O a compaction step needs.
type CompactionRequest struct {
	RunID    string
	Messages []Message // the messages to summarize, oldest first
	Through  int64     // the last compacted sequence number
	Retained int
}

// Compacted is the outcome of a compaction step.
type Compacted struct {
	Step    Step
	Summary string
	Err     error
}

func (Compacted) isInput() {}

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

func int64Of(v any) int64 {
	switch t := v.(type) {
	case json.Number:
		n, _ := t.Int64()
		return n
	case int:
		return int64(t)
	case int64:
		return t
	case float64:
		return int64(t)
	}
	return 0
}

// compactedView is the session transcript as the model sees it after
// compaction: system messages, the latest summary, then every message
// after the summary's boundary. The stored transcript is never rewritten.
func compactedView(transcript []Message) []Message {
	idx := -1
	for i := len(transcript) - 1; i >= 0; i-- {
		if _, ok := compactionMeta(transcript[i]); ok {
			idx = i
			break
		}
	}
	if idx < 0 {
		return transcript
	}
	meta, _ := compactionMeta(transcript[idx])
	through := int64Of(meta["compacted_through"])
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

func (t *tx) compacted(in Compacted) error {
	s := t.st
	if IsTerminal(s.Status) {
		return ErrTerminal
	}
	if in.Step.Kind != StepModelTurn || in.Step.Seq != s.ModelStep || s.ModelStep == 0 {
		return fmt.Errorf("%w: compaction for model_turn %d", ErrStaleStep, in.Step.Seq)
	}
	s.CompactTurn = s.Turn + 1
	compact, through, retained, ok := compactionPlan(s.Config.Compaction, compactedView(t.transcript))
	if !ok {
		return fmt.Errorf("%w: nothing to compact", ErrStaleStep)
	}
	t.emit(EventCompactionStarted, map[string]any{"messages": len(compact), "compacted_through": through})
	summary := strings.TrimSpace(in.Summary)
	switch {
	case in.Err != nil:
		t.emit(EventCompactionFailed, map[string]any{"error": in.Err.Error(), "transcript_preserved": true})
	case summary == "":
		t.emit(EventCompactionFailed, map[string]any{"error": "the summarizer returned an empty summary", "transcript_preserved": true})
	default:
		meta := map[string]any{"status": "compacted", "compacted_through": through, "compacted_count": len(compact), "retained_count": retained, "summary_chars": utf8.RuneCountInString(summary)}
		t.appendMessage(Message{Role: RoleUser, Content: "[Conversation summary: " + summary + "]", Metadata: map[string]any{MetaSource: "compaction", MetaCompaction: meta}})
		t.emit(EventCompactionCompleted, cloneObject(meta))
	}
	s.ModelStep = t.schedule(StepModelTurn, "")
	t.setActiveStatus()
	return nil
}

// ---- context-window trimming (§13.3, the model's view only) ----

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
	for total > limit {
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

func truncateRunes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n]) + "…"
}

// ContextCompactor is the optional LLM compaction provider of §13.3: it
// writes a better summary of the dropped messages; on error or an empty
// answer the deterministic summary stays.
type ContextCompactor interface {
	CompactContext(ctx context.Context, dropped []Message) (string, error)
}

// ---- guardrails (§13.4) ----

// GuardrailResult allows or denies; Reason is required on deny.
type GuardrailResult struct {
	Allowed bool
	Reason  string
}

// Allow is the allowing result.
func Allow() GuardrailResult { return GuardrailResult{Allowed: true} }

// Deny denies with a reason.
func Deny(reason string) GuardrailResult { return GuardrailResult{Reason: reason} }

// Guardrails are the three §13.4 hooks. A hook that panics denies.
type Guardrails struct {
	Input  func(ctx context.Context, msgs []Message) GuardrailResult
	Output func(ctx context.Context, msg Message) GuardrailResult
	Tool   func(ctx context.Context, name string, args map[string]any) GuardrailResult
}

func checkGuardrail(f func() GuardrailResult) (res GuardrailResult) {
	defer func() {
		if r := recover(); r != nil {
			res = Deny(fmt.Sprintf("guardrail panicked: %v", r))
		}
	}()
	res = f()
	if !res.Allowed && strings.TrimSpace(res.Reason) == "" {
		res.Reason = "no reason given"
	}
	return res
}

// GuardrailDenied is the input guardrail's denial, planned for a model
// step; applying it fails the run.
type GuardrailDenied struct {
	Step   Step
	Kind   string
	Reason string
}

func (GuardrailDenied) isInput() {}

// ---- steering, cancellation, interrupts (§13.2, §13.5) ----

// Steer queues a user message for the top of the run's next iteration.
type Steer struct{ Content string }

// Cancel ends the run cooperatively with status cancelled.
type Cancel struct{ Reason string }

// Interrupt ends the run with status interrupted; Metadata (such as
// source) is copied into the envelope's interrupted field.
type Interrupt struct {
	Reason   string
	Metadata map[string]any
}

func (Steer) isInput()     {}
func (Cancel) isInput()    {}
func (Interrupt) isInput() {}

// MaxSteeringChars caps one steering message.
const MaxSteeringChars = 100_000

func (t *tx) steer(in Steer) error {
	t.external = true
	if IsTerminal(t.st.Status) {
		return ErrTerminal
	}
	content := strings.TrimSpace(in.Content)
	if content == "" {
		return invalid("content must be a non-empty string")
	}
	if utf8.RuneCountInString(content) > MaxSteeringChars {
		return invalid("content is longer than %d characters", MaxSteeringChars)
	}
	t.st.enqueue(QueuedMessage{Source: "steering", Content: in.Content})
	t.emit(EventSteeringQueued, map[string]any{"queued": len(t.st.Queue)})
	return nil
}

func (t *tx) cancel(status, errType, reason string, interrupted map[string]any) error {
	t.external = true
	s := t.st
	if IsTerminal(s.Status) {
		return ErrTerminal
	}
	if status == StatusInterrupted {
		s.Interrupted = interrupted
		t.emit(EventInterruptReceived, cloneObject(interrupted))
	} else {
		t.emit(EventCancelled, map[string]any{"reason": reason})
	}
	t.closeOpenWith(errType, fmt.Sprintf("Not executed: the run was %s (%s)", status, reason))
	t.settleClosed()
	s.Queue = nil
	t.finish(status)
	return nil
}

// ---- model view and the helpers the machine uses ----

// modelView is what the next model turn sees: the compacted transcript,
// the queued steering and continuation messages, trimmed to the context
// budget.
func (st *RunState) modelView(transcript []Message) ([]Message, *TrimResult) {
	base := compactedView(transcript)
	msgs := make([]Message, 0, len(base)+len(st.Queue))
	msgs = append(msgs, base...)
	for _, q := range st.Queue {
		msgs = append(msgs, queuedMessage(q))
	}
	extra := 0
	if st.Config.System != "" {
		extra = estimateMessage(Message{Role: RoleSystem, Content: st.Config.System})
	}
	return TrimToContextWindow(msgs, st.Config.ContextBudget, extra)
}

func (st *RunState) isVisible(name string) bool {
	for _, v := range st.Config.Visible {
		if v == name {
			return true
		}
	}
	return false
}

func (st *RunState) visibleTools() []ToolDeclaration {
	out := make([]ToolDeclaration, 0, len(st.Config.Visible))
	for _, name := range st.Config.Visible {
		if d, ok := st.Tool(name); ok {
			out = append(out, d)
		}
	}
	return out
}

func (st *RunState) policyContext() PolicyContext {
	return PolicyContext{RunID: st.RunID, Agent: st.Config.Agent, Mode: st.Config.Policy.mode(), Principal: st.Config.Principal}
}

// drainQueue appends the queued user messages at the top of an iteration
// and reports the mutations, then reports whether the model's view was
// trimmed to the context budget.
func (t *tx) drainQueue(view []Message, trim *TrimResult) {
	s := t.st
	queued := s.Queue
	s.Queue = nil
	steering := 0
	for _, q := range queued {
		t.appendMessage(queuedMessage(q))
		if q.Source == "steering" {
			steering++
		}
	}
	if len(queued) > 0 {
		t.emit(EventMessagesUpdated, map[string]any{"reason": "queued_messages", "appended": len(queued)})
	}
	if steering > 0 {
		t.emit(EventStatus, map[string]any{"message": fmt.Sprintf("Injected %d steering message(s)", steering)})
	}
	if trim != nil {
		t.emit(EventMessagesUpdated, map[string]any{"reason": "context_trimmed", "dropped": len(trim.Dropped), "kept": len(view), "budget": s.Config.ContextBudget})
	}
}

func assistantView(r ModelReply) Message {
	m := Message{Role: RoleAssistant, Content: r.Content}
	if len(r.ToolCalls) > 0 {
		calls := make([]any, len(r.ToolCalls))
		for i, c := range r.ToolCalls {
			calls[i] = map[string]any{"id": c.ID, "name": c.Name, "parameters": paramsValue(cloneObject(c.Parameters))}
		}
		m.Metadata = map[string]any{"tool_calls": calls}
	}
	return m
}

func (t *tx) guardrailFail(kind, reason string) {
	msg := fmt.Sprintf("%s guardrail denied: %s", strings.ToUpper(kind[:1])+kind[1:], reason)
	t.emit(EventError, map[string]any{"message": msg, "guardrail": kind})
	t.fail("guardrail", msg)
}

func (t *tx) guardrailDenied(in GuardrailDenied) error {
	if err := t.beginTurn(in.Step); err != nil {
		return err
	}
	t.guardrailFail(in.Kind, in.Reason)
	return nil
}
