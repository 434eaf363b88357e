package agui

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/baton-agents/baton/core"
	"github.com/baton-agents/baton/internal/runspec"
)

// RunAgentInput is AG-UI's request (@ag-ui/core 1.0.0).
type RunAgentInput struct {
	ThreadID        string          `json:"threadId"`
	RunID           string          `json:"runId"`
	ProtocolVersion string          `json:"protocolVersion,omitempty"`
	ParentRunID     string          `json:"parentRunId,omitempty"`
	State           any             `json:"state,omitempty"`
	Messages        []Message       `json:"messages"`
	Tools           []Tool          `json:"tools"`
	Context         []any           `json:"context"`
	ForwardedProps  *ForwardedProps `json:"forwardedProps,omitempty"`
	Resume          []ResumeEntry   `json:"resume,omitempty"`
}

// ForwardedProps is the part of forwardedProps Baton reads: baton holds
// POST /v1/runs' override fields. Other keys pass through untouched.
type ForwardedProps struct {
	Baton *Overrides `json:"baton,omitempty"`
}

// Overrides are the start-run overrides a frontend may forward.
type Overrides = runspec.Overrides

// Message is an AG-UI message (the roles Baton reads: user, system,
// developer, assistant, tool).
type Message struct {
	ID         string          `json:"id"`
	Role       string          `json:"role"`
	Content    json.RawMessage `json:"content,omitempty"`
	ToolCalls  []ToolCall      `json:"toolCalls,omitempty"`
	ToolCallID string          `json:"toolCallId,omitempty"`
	Error      string          `json:"error,omitempty"`
}

// ToolCall is an assistant message's tool call.
type ToolCall struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

// Tool is a frontend tool.
type Tool struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	Parameters  any    `json:"parameters,omitempty"`
}

// ResumeEntry answers one interrupt.
type ResumeEntry struct {
	InterruptID string         `json:"interruptId"`
	Status      string         `json:"status"`
	Payload     map[string]any `json:"payload,omitempty"`
}

// ClientPrefix is the prefix of the client tool an AG-UI tool becomes.
const ClientPrefix = "client/"

// Decode reads a RunAgentInput. Fields AG-UI adds later are ignored, as
// AG-UI asks of consumers; threadId and runId are required.
func Decode(body []byte) (RunAgentInput, error) {
	var in RunAgentInput
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(&in); err != nil {
		return in, runspec.Errorf(400, "invalid_body", "the body is not a valid RunAgentInput: %s", strings.TrimPrefix(err.Error(), "json: "))
	}
	if in.ThreadID == "" || in.RunID == "" {
		return in, runspec.Errorf(400, "invalid_request", "threadId and runId are required")
	}
	return in, nil
}

// text is a message's content as text: a string, or the text parts of
// a part list.
func (m Message) text() string {
	if len(m.Content) == 0 {
		return ""
	}
	var s string
	if json.Unmarshal(m.Content, &s) == nil {
		return s
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	_ = json.Unmarshal(m.Content, &parts)
	var b strings.Builder
	for _, p := range parts {
		if p.Type == "text" {
			b.WriteString(p.Text)
		}
	}
	return b.String()
}

// loose turns AG-UI messages into the loose messages core normalizes;
// tool messages are not among them (they answer pending calls).
func loose(msgs []Message) ([]any, error) {
	var out []any
	for i, m := range msgs {
		meta := map[string]any{}
		if m.ID != "" {
			meta[MetaMessageID] = m.ID
		}
		switch m.Role {
		case "user", "system", "developer":
			out = append(out, map[string]any{"role": m.Role, "content": m.text(), "metadata": meta})
		case "assistant":
			if t := m.text(); t != "" || len(m.ToolCalls) == 0 {
				out = append(out, map[string]any{"role": "assistant", "content": t, "metadata": meta})
			}
			for _, c := range m.ToolCalls {
				var params map[string]any
				if strings.TrimSpace(c.Function.Arguments) != "" {
					if err := json.Unmarshal([]byte(c.Function.Arguments), &params); err != nil {
						return nil, runspec.Errorf(400, "invalid_message", "messages[%d]: tool call %s: arguments are not a JSON object", i, c.ID)
					}
				}
				out = append(out, map[string]any{"role": "tool_call", "content": "", "metadata": map[string]any{
					core.MetaToolCallID: c.ID, core.MetaToolName: toBaton(c.Function.Name), core.MetaParameters: params}})
			}
		case "tool":
			return nil, runspec.Errorf(400, "unknown_tool_call", "messages[%d]: tool message for %s, which is not pending on this thread", i, m.ToolCallID)
		default:
			return nil, runspec.Errorf(400, "invalid_message", "messages[%d]: role %q is not supported", i, m.Role)
		}
	}
	return out, nil
}

// MetaMessageID is the transcript metadata key holding the AG-UI id of a
// message a frontend sent.
const MetaMessageID = "agui_message_id"

func toBaton(name string) string {
	if strings.Contains(name, "/") {
		return name
	}
	return ClientPrefix + name
}

// toAGUI names a Baton tool in AG-UI events: client/X is X.
func toAGUI(name string) string { return strings.TrimPrefix(name, ClientPrefix) }

// newMessages drops the messages of in that the thread's transcript
// already holds (see the package comment).
func newMessages(in []Message, transcript []core.Message) []Message {
	if len(transcript) == 0 {
		return in
	}
	ids := map[string]bool{}
	calls := map[string]bool{}
	results := map[string]bool{}
	n := 0
	for _, m := range transcript {
		if id, _ := m.Metadata[MetaMessageID].(string); id != "" {
			ids[id] = true
		}
		switch m.Role {
		case core.RoleToolCall:
			calls[m.ToolCallID()] = true
		case core.RoleToolResult:
			results[m.ToolCallID()] = true
			n++
		default:
			n++
		}
	}
	last := -1
	for i, m := range in {
		known := ids[m.ID] || strings.HasPrefix(m.ID, idPrefix) ||
			m.Role == "tool" && results[m.ToolCallID]
		for _, c := range m.ToolCalls {
			known = known || calls[c.ID]
		}
		if known {
			last = i
		}
	}
	if last < 0 {
		last = min(n, len(in)) - 1
	}
	return in[last+1:]
}

// idPrefix starts the ids of the messages Baton emits.
const idPrefix = "baton-"

func textMessageID(runID string, turn int) string {
	return fmt.Sprintf("%s%s-%d", idPrefix, runID, turn)
}
