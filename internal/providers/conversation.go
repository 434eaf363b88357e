package providers

import (
	"fmt"
	"strings"

	"github.com/baton-agents/baton/core"
)

// Conversation is the provider-neutral view of a ModelRequest: the system
// prompt and the turns of the transcript with tool calls grouped.
type Conversation struct {
	// System is ModelRequest.System followed by the content of each
	// system-role message, in order; empty parts are dropped.
	System []string
	Turns  []Turn
}

// Turn kinds.
const (
	TurnUser      = "user"
	TurnAssistant = "assistant"
	TurnResults   = "tool_results"
)

// Turn is one user message, one assistant message (text and/or tool
// calls), or a group of consecutive tool results.
type Turn struct {
	Kind    string
	Text    string
	Calls   []Call
	Results []Result
}

// Call is a tool call in an assistant turn. Name is the Baton tool name.
type Call struct {
	ID        string
	Name      string
	Arguments map[string]any
}

// Result is one tool result. IsError is set when metadata.success is
// false.
type Result struct {
	ID      string
	Name    string
	Content string
	IsError bool
}

// SystemText joins the system parts with a blank line.
func (c Conversation) SystemText() string { return strings.Join(c.System, "\n\n") }

// Prepare checks what every provider checks before it encodes req: the
// model spec names a model id and only allowed options, and the messages
// form a conversation. Errors are permanent and prefixed with provider.
func Prepare(provider string, req core.ModelRequest, allowed []string) (Options, Conversation, error) {
	if strings.TrimSpace(req.Model.Model) == "" {
		return Options{}, Conversation{}, fmt.Errorf("%s: the model spec names no model id", provider)
	}
	opts, err := ParseOptions(provider, req.Model.Options, allowed)
	if err != nil {
		return Options{}, Conversation{}, err
	}
	conv, err := BuildConversation(req)
	if err != nil {
		return Options{}, Conversation{}, fmt.Errorf("%s: %w", provider, err)
	}
	return opts, conv, nil
}

// BuildConversation groups the request's messages into turns. A message
// with an unknown role, or a tool message without metadata.tool_call_id,
// is an error that names its index.
func BuildConversation(req core.ModelRequest) (Conversation, error) {
	var c Conversation
	if s := strings.TrimSpace(req.System); s != "" {
		c.System = append(c.System, req.System)
	}
	last := func() *Turn {
		if len(c.Turns) == 0 {
			return nil
		}
		return &c.Turns[len(c.Turns)-1]
	}
	for i, m := range req.Messages {
		switch m.Role {
		case core.RoleSystem:
			if strings.TrimSpace(m.Content) != "" {
				c.System = append(c.System, m.Content)
			}
		case core.RoleUser:
			c.Turns = append(c.Turns, Turn{Kind: TurnUser, Text: m.Content})
		case core.RoleAssistant:
			c.Turns = append(c.Turns, Turn{Kind: TurnAssistant, Text: m.Content})
		case core.RoleToolCall:
			id := m.ToolCallID()
			if id == "" {
				return Conversation{}, fmt.Errorf("messages[%d]: tool_call message has no metadata.tool_call_id", i)
			}
			args, _ := m.Metadata[core.MetaParameters].(map[string]any)
			if args == nil {
				if g, err := core.ToJSONObject(m.Metadata[core.MetaParameters]); err == nil && g != nil {
					args = g
				} else {
					args = map[string]any{}
				}
			}
			call := Call{ID: id, Name: m.ToolName(), Arguments: args}
			if t := last(); t != nil && t.Kind == TurnAssistant {
				t.Calls = append(t.Calls, call)
			} else {
				c.Turns = append(c.Turns, Turn{Kind: TurnAssistant, Calls: []Call{call}})
			}
		case core.RoleToolResult:
			id := m.ToolCallID()
			if id == "" {
				return Conversation{}, fmt.Errorf("messages[%d]: tool_result message has no metadata.tool_call_id", i)
			}
			ok, isBool := m.Metadata[core.MetaSuccess].(bool)
			res := Result{ID: id, Name: m.ToolName(), Content: m.Content, IsError: isBool && !ok}
			if t := last(); t != nil && t.Kind == TurnResults {
				t.Results = append(t.Results, res)
			} else {
				c.Turns = append(c.Turns, Turn{Kind: TurnResults, Results: []Result{res}})
			}
		default:
			return Conversation{}, fmt.Errorf("messages[%d]: unknown role %q", i, m.Role)
		}
	}
	return c, nil
}

// Roles of an alternating conversation.
const (
	RoleUser      = "user"
	RoleAssistant = "assistant"
)

// Part is one content block of an alternating message: exactly one of
// Text, Call and Result is set.
type Part struct {
	Text   string
	Call   *Call
	Result *Result
}

// AltMessage is one message of a strictly alternating conversation.
type AltMessage struct {
	Role  string
	Parts []Part
}

// Placeholder is the text of the user message put before a transcript
// that starts with the assistant, for providers whose conversations must
// start with the user.
const Placeholder = "(conversation continues)"

// Alternate renders the turns as strictly alternating user and assistant
// messages: tool results are user content, adjacent messages of the same
// role are merged (tool results first in a merged user message), empty
// text is dropped, and a conversation that would start with the assistant
// starts with a Placeholder user message.
func (c Conversation) Alternate() []AltMessage {
	var out []AltMessage
	add := func(role string, parts []Part) {
		if len(parts) == 0 {
			return
		}
		if n := len(out); n > 0 && out[n-1].Role == role {
			prev := &out[n-1]
			if role == RoleUser {
				prev.Parts = mergeUserParts(prev.Parts, parts)
			} else {
				prev.Parts = append(prev.Parts, parts...)
			}
			return
		}
		out = append(out, AltMessage{Role: role, Parts: append([]Part(nil), parts...)})
	}
	for _, t := range c.Turns {
		switch t.Kind {
		case TurnUser:
			if strings.TrimSpace(t.Text) != "" {
				add(RoleUser, []Part{{Text: t.Text}})
			}
		case TurnAssistant:
			var parts []Part
			if strings.TrimSpace(t.Text) != "" {
				parts = append(parts, Part{Text: t.Text})
			}
			for i := range t.Calls {
				parts = append(parts, Part{Call: &t.Calls[i]})
			}
			add(RoleAssistant, parts)
		case TurnResults:
			parts := make([]Part, 0, len(t.Results))
			for i := range t.Results {
				parts = append(parts, Part{Result: &t.Results[i]})
			}
			add(RoleUser, parts)
		}
	}
	if len(out) > 0 && out[0].Role == RoleAssistant {
		out = append([]AltMessage{{Role: RoleUser, Parts: []Part{{Text: Placeholder}}}}, out...)
	}
	return out
}

// mergeUserParts appends b to a, keeping every tool result before any
// text (Anthropic requires tool_result blocks first).
func mergeUserParts(a, b []Part) []Part {
	var results, texts []Part
	for _, p := range append(append([]Part(nil), a...), b...) {
		if p.Result != nil {
			results = append(results, p)
		} else {
			texts = append(texts, p)
		}
	}
	return append(results, texts...)
}

// ToolSchema returns a declaration's parameter schema as a provider wants
// it: a JSON Schema object with "type": "object" and "properties" present.
// The declaration is not modified.
func ToolSchema(params map[string]any) map[string]any {
	out := make(map[string]any, len(params)+2)
	for k, v := range params {
		out[k] = v
	}
	if _, ok := out["type"]; !ok {
		out["type"] = "object"
	}
	if out["type"] == "object" {
		if _, ok := out["properties"]; !ok {
			out["properties"] = map[string]any{}
		}
	}
	return out
}

// EmptyToolResult is the text that stands for a tool result with no
// content when tool history is rendered as text.
const EmptyToolResult = "(empty)"

// ToolHistoryAsText returns a copy of c in which past tool calls and tool
// results are plain text, for a request that declares no tools: Anthropic
// and Bedrock refuse tool_use and tool_result blocks without tool
// definitions, while a run may continue a session whose transcript has
// them. Each call becomes a line of its assistant turn,
// "[called tool NAME (call ID) with ARGS]", ARGS being the arguments as
// compact JSON with sorted keys. Each group of results becomes one user
// turn whose text has, per result, a header line
// "[result of tool NAME (call ID): ok]" (or "failed") followed by the
// content, or EmptyToolResult when it is empty. A result without a tool
// name takes the name of the call with its id. c is not modified.
func (c Conversation) ToolHistoryAsText() (Conversation, error) {
	out := Conversation{System: append([]string(nil), c.System...)}
	names := map[string]string{}
	for _, t := range c.Turns {
		for _, call := range t.Calls {
			names[call.ID] = call.Name
		}
	}
	for _, t := range c.Turns {
		switch {
		case t.Kind == TurnAssistant && len(t.Calls) > 0:
			var lines []string
			if strings.TrimSpace(t.Text) != "" {
				lines = append(lines, t.Text)
			}
			for _, call := range t.Calls {
				args, err := Marshal(call.Arguments)
				if err != nil {
					return Conversation{}, fmt.Errorf("render the arguments of tool call %s (%s) as text: %w", call.ID, call.Name, err)
				}
				lines = append(lines, fmt.Sprintf("[called tool %s (call %s) with %s]", call.Name, call.ID, args))
			}
			out.Turns = append(out.Turns, Turn{Kind: TurnAssistant, Text: strings.Join(lines, "\n")})
		case t.Kind == TurnResults:
			parts := make([]string, 0, len(t.Results))
			for _, r := range t.Results {
				name := r.Name
				if name == "" {
					name = names[r.ID]
				}
				if name == "" {
					name = "(unknown)"
				}
				outcome := "ok"
				if r.IsError {
					outcome = "failed"
				}
				content := r.Content
				if strings.TrimSpace(content) == "" {
					content = EmptyToolResult
				}
				parts = append(parts, fmt.Sprintf("[result of tool %s (call %s): %s]\n%s", name, r.ID, outcome, content))
			}
			out.Turns = append(out.Turns, Turn{Kind: TurnUser, Text: strings.Join(parts, "\n\n")})
		default:
			out.Turns = append(out.Turns, Turn{Kind: t.Kind, Text: t.Text})
		}
	}
	return out, nil
}
