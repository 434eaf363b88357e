package agui

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/baton-agents/baton/core"
)

// Event is one AG-UI event; Type is @ag-ui/core's EventType value.
type Event struct {
	Type            string         `json:"type"`
	ThreadID        string         `json:"threadId,omitempty"`
	RunID           string         `json:"runId,omitempty"`
	MessageID       string         `json:"messageId,omitempty"`
	Role            string         `json:"role,omitempty"`
	Delta           string         `json:"delta,omitempty"`
	ToolCallID      string         `json:"toolCallId,omitempty"`
	ToolCallName    string         `json:"toolCallName,omitempty"`
	ParentMessageID string         `json:"parentMessageId,omitempty"`
	Content         *string        `json:"content,omitempty"`
	StepName        string         `json:"stepName,omitempty"`
	Message         string         `json:"message,omitempty"`
	Code            string         `json:"code,omitempty"`
	Result          any            `json:"result,omitempty"`
	Outcome         any            `json:"outcome,omitempty"`
	Metadata        map[string]any `json:"metadata,omitempty"`
	// Name and Value are a CUSTOM event's.
	Name  string `json:"name,omitempty"`
	Value any    `json:"value,omitempty"`
}

// ChildEventName names the CUSTOM event that carries a committed event
// of a child run (sub-agents): its value is {"run_id", "event"}, the
// event as GET /v1/runs/{id}/events returns it.
const ChildEventName = "baton.child_event"

// ChildEvent is the CUSTOM event of child run runID's event ev.
func ChildEvent(runID string, ev core.Event) Event {
	return Event{Type: "CUSTOM", Name: ChildEventName, Value: map[string]any{"run_id": runID, "event": ev}}
}

// Translator turns one Baton run's stream into AG-UI events. Load reads
// the session's messages with seqs from..to (the transcript holds the
// raw tool arguments AG-UI frontends need; events carry redacted ones).
type Translator struct {
	RunID string
	Load  func(ctx context.Context, from, to int64) ([]core.Message, error)

	text     string // the open text message's id
	textTurn int
	step     string
	// replied is the last turn whose reply was translated: later deltas
	// of it (a retried call streaming again) are dropped.
	replied int
}

// stepName names the AG-UI step of a model turn.
func stepName(turn int) string { return fmt.Sprintf("turn_%d", turn) }

// openStep starts the step of turn unless it is the open one. A turn's
// deltas stream before its turn_started event is committed (with the
// reply), so whichever comes first opens the step.
func (t *Translator) openStep(out []Event, turn int) []Event {
	if t.step == stepName(turn) {
		return out
	}
	out = t.closeStep(out)
	t.step = stepName(turn)
	return append(out, Event{Type: "STEP_STARTED", StepName: t.step})
}

func (t *Translator) closeText(out []Event) []Event {
	if t.text != "" {
		out = append(out, Event{Type: "TEXT_MESSAGE_END", MessageID: t.text})
		t.text = ""
	}
	return out
}

func (t *Translator) closeStep(out []Event) []Event {
	out = t.closeText(out)
	if t.step != "" {
		out = append(out, Event{Type: "STEP_FINISHED", StepName: t.step})
		t.step = ""
	}
	return out
}

// Deltas translates a batch of token deltas (thinking is not sent).
func (t *Translator) Deltas(b core.DeltaBatch) []Event {
	var out []Event
	if b.Pos.Turn <= t.replied {
		return nil
	}
	for _, d := range b.Deltas {
		if d.Kind == core.DeltaThinking || d.Text == "" {
			continue
		}
		if t.text == "" {
			out = t.openStep(out, b.Pos.Turn)
			t.text, t.textTurn = textMessageID(t.RunID, b.Pos.Turn), b.Pos.Turn
			out = append(out, Event{Type: "TEXT_MESSAGE_START", MessageID: t.text, Role: "assistant"})
		}
		out = append(out, Event{Type: "TEXT_MESSAGE_CONTENT", MessageID: t.text, Delta: d.Text})
	}
	return out
}

// Event translates a committed lifecycle event.
func (t *Translator) Event(ctx context.Context, ev core.Event) ([]Event, error) {
	switch ev.Type {
	case core.EventTurnStarted:
		return t.openStep(nil, ev.Turn), nil
	case core.EventMessagesUpdated:
		d := ev.Fields()
		reason, _ := d["reason"].(string)
		from, _ := num(d["from_seq"])
		to, _ := num(d["to_seq"])
		if from == 0 || (reason != core.MessagesModelReply && reason != core.MessagesToolResult) {
			return nil, nil
		}
		msgs, err := t.Load(ctx, from, to)
		if err != nil {
			return nil, err
		}
		if reason == core.MessagesModelReply {
			return t.reply(ev.Turn, msgs), nil
		}
		return t.results(msgs), nil
	}
	return nil, nil
}

// reply: the text (unless it was streamed), then every tool call, then
// the end of the turn's step.
func (t *Translator) reply(turn int, msgs []core.Message) []Event {
	var out []Event
	t.replied = max(t.replied, turn)
	parent := ""
	for _, m := range msgs {
		if m.Role != core.RoleAssistant {
			continue
		}
		if t.text != "" {
			parent = t.text
			out = t.closeText(out)
		} else if m.Content != "" {
			parent = textMessageID(t.RunID, turn)
			c := m.Content
			out = append(out, Event{Type: "TEXT_MESSAGE_START", MessageID: parent, Role: "assistant"},
				Event{Type: "TEXT_MESSAGE_CONTENT", MessageID: parent, Delta: c},
				Event{Type: "TEXT_MESSAGE_END", MessageID: parent})
		}
	}
	out = t.closeText(out)
	for _, m := range msgs {
		if m.Role != core.RoleToolCall {
			continue
		}
		args, _ := json.Marshal(m.Metadata[core.MetaParameters])
		if string(args) == "null" {
			args = []byte("{}")
		}
		out = append(out, Event{Type: "TOOL_CALL_START", ToolCallID: m.ToolCallID(), ToolCallName: toAGUI(m.ToolName()), ParentMessageID: parent},
			Event{Type: "TOOL_CALL_ARGS", ToolCallID: m.ToolCallID(), Delta: string(args)},
			Event{Type: "TOOL_CALL_END", ToolCallID: m.ToolCallID()})
	}
	return t.closeStep(out)
}

// results: TOOL_CALL_RESULT for server tools (a client tool's result came
// from the frontend, which has it).
func (t *Translator) results(msgs []core.Message) []Event {
	var out []Event
	for _, m := range msgs {
		if m.Role != core.RoleToolResult || strings.HasPrefix(m.ToolName(), ClientPrefix) {
			continue
		}
		c := m.Content
		out = append(out, Event{Type: "TOOL_CALL_RESULT", MessageID: fmt.Sprintf("%sresult-%s", idPrefix, m.ToolCallID()), ToolCallID: m.ToolCallID(), Content: &c, Role: "tool"})
	}
	return out
}

// End translates the run's stop: RUN_FINISHED (success, with the pending
// client calls as pendingToolCallIds; interrupt, one per pending action;
// cancelled) or RUN_ERROR for a run that failed.
func (t *Translator) End(threadID, runID string, st core.RunState) []Event {
	out := t.closeStep(nil)
	reqs, acts := st.Pending()
	fin := Event{Type: "RUN_FINISHED", ThreadID: threadID, RunID: runID, Result: map[string]any{"status": st.Status, "baton_run_id": st.RunID}}
	switch st.Status {
	case core.StatusRuntimeToolPending:
		ids := make([]string, len(reqs))
		for i, r := range reqs {
			ids[i] = r.ToolCallID
		}
		fin.Outcome = map[string]any{"type": "success", "pendingToolCallIds": ids}
	case core.StatusApprovalRequired:
		fin.Result = nil
		fin.Outcome = map[string]any{"type": "interrupt", "interrupts": Interrupts(acts)}
	case core.StatusCancelled:
		fin.Result = nil
		fin.Outcome = map[string]any{"type": "cancelled"}
	case core.StatusCompleted, core.StatusMaxTurnsReached, core.StatusBudgetExceeded:
		fin.Outcome = map[string]any{"type": "success"}
	default:
		return append(out, runError(st))
	}
	return append(out, fin)
}

// runError is the RUN_ERROR of a run that ended without success: the
// code and message of the run's error (result.error), or the status when
// the run carries no error.
func runError(st core.RunState) Event {
	ended := fmt.Sprintf("the run %s ended with status %s", st.RunID, st.Status)
	if st.Error == nil || st.Error.Code == "" {
		return Event{Type: "RUN_ERROR", Code: "run_" + string(st.Status), Message: ended}
	}
	return Event{Type: "RUN_ERROR", Code: st.Error.Code, Message: st.Error.Message + " (" + ended + ")"}
}

// Interrupts are a paused run's pending actions as AG-UI interrupts.
func Interrupts(acts []core.PendingAction) []map[string]any {
	out := make([]map[string]any, len(acts))
	for i, a := range acts {
		out[i] = map[string]any{
			"id": a.ActionID, "reason": "tool_approval", "message": a.Summary, "toolCallId": a.ToolCallID,
			"responseSchema": responseSchema, "expiresAt": a.ExpiresAt.UTC().Format(time.RFC3339),
			"metadata": map[string]any{"tool_name": toAGUI(a.ToolName), "kind": a.Kind, "preview": a.Preview},
		}
	}
	return out
}

var responseSchema = map[string]any{
	"type": "object", "required": []any{"decision"},
	"properties": map[string]any{
		"decision": map[string]any{"type": "string", "enum": []any{"accept", "reject"}},
		"reason":   map[string]any{"type": "string"},
	},
}

func num(v any) (int64, bool) {
	switch n := v.(type) {
	case float64:
		return int64(n), true
	case int64:
		return n, true
	case int:
		return int64(n), true
	case json.Number:
		i, err := n.Int64()
		return i, err == nil
	}
	return 0, false
}
