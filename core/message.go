package core

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Normalized message roles.
const (
	RoleSystem     = "system"
	RoleUser       = "user"
	RoleAssistant  = "assistant"
	RoleToolCall   = "tool_call"
	RoleToolResult = "tool_result"
)

// Metadata keys that the loop writes on messages.
const (
	MetaToolCallID = "tool_call_id"
	MetaToolName   = "tool_name"
	MetaParameters = "parameters"
	MetaSuccess    = "success"
	MetaErrorType  = "error_type"
	MetaTurn       = "turn"
	MetaSource     = "source"
)

// Message is the normalized transcript envelope. Content is plain text;
// tool_call and tool_result messages carry metadata.tool_call_id.
//
// Seq is the message's position in its session transcript. It is assigned
// by the machine when the message is appended and is not part of the JSON
// envelope; transcript pages carry it beside the message.
type Message struct {
	Role     string         `json:"role"`
	Content  string         `json:"content"`
	Metadata map[string]any `json:"metadata,omitempty"`
	Seq      int64          `json:"-"`
}

// ToolCallID returns metadata.tool_call_id, or "".
func (m Message) ToolCallID() string {
	s, _ := m.Metadata[MetaToolCallID].(string)
	return s
}

// ToolName returns metadata.tool_name, or "".
func (m Message) ToolName() string {
	s, _ := m.Metadata[MetaToolName].(string)
	return s
}

// NormalizeMessages normalizes loose message inputs: role/content maps,
// content given as text parts, legacy role spellings ("tool-call", "tool",
// "function", "developer") and OpenAI-style assistant messages carrying
// tool_calls, which expand into one assistant message and one tool_call
// message per call. Errors name the offending index.
func NormalizeMessages(raw []any) ([]Message, error) {
	out := make([]Message, 0, len(raw))
	for i, r := range raw {
		msgs, err := normalizeMessage(r)
		if err != nil {
			return nil, fmt.Errorf("messages[%d]: %w", i, err)
		}
		out = append(out, msgs...)
	}
	return out, nil
}

// NormalizeMessagesJSON decodes a JSON array of loose messages and
// normalizes it.
func NormalizeMessagesJSON(data []byte) ([]Message, error) {
	var raw []any
	if err := decodeJSON(data, &raw); err != nil {
		return nil, fmt.Errorf("messages: not a JSON array of objects: %w", err)
	}
	return NormalizeMessages(raw)
}

var roleAliases = map[string]string{
	"system":        RoleSystem,
	"developer":     RoleSystem,
	"user":          RoleUser,
	"human":         RoleUser,
	"assistant":     RoleAssistant,
	"model":         RoleAssistant,
	"tool_call":     RoleToolCall,
	"tool-call":     RoleToolCall,
	"function_call": RoleToolCall,
	"tool_use":      RoleToolCall,
	"tool_result":   RoleToolResult,
	"tool-result":   RoleToolResult,
	"tool":          RoleToolResult,
	"function":      RoleToolResult,
}

func normalizeMessage(r any) ([]Message, error) {
	switch t := r.(type) {
	case Message:
		r = map[string]any{"role": t.Role, "content": t.Content, "metadata": anyMap(t.Metadata)}
	case *Message:
		if t == nil {
			return nil, fmt.Errorf("message is null")
		}
		r = map[string]any{"role": t.Role, "content": t.Content, "metadata": anyMap(t.Metadata)}
	}
	m, ok := r.(map[string]any)
	if !ok {
		g, err := ToJSONValue(r)
		if err != nil {
			return nil, fmt.Errorf("message is not JSON: %w", err)
		}
		if m, ok = g.(map[string]any); !ok {
			return nil, fmt.Errorf("message must be an object, got %s", jsonKind(g))
		}
	}
	roleRaw, present := m["role"]
	if !present {
		return nil, fmt.Errorf("role is required")
	}
	roleStr, ok := roleRaw.(string)
	if !ok {
		return nil, fmt.Errorf("role must be a string, got %s", jsonKind(roleRaw))
	}
	role, ok := roleAliases[strings.ToLower(strings.TrimSpace(roleStr))]
	if !ok {
		return nil, fmt.Errorf("unknown role %q (want system, user, assistant, tool_call or tool_result)", roleStr)
	}
	content, err := normalizeContent(m["content"])
	if err != nil {
		return nil, err
	}
	var meta map[string]any
	if mr, present := m["metadata"]; present && mr != nil {
		mm, ok := mr.(map[string]any)
		if !ok {
			g, err := ToJSONValue(mr)
			if err != nil {
				return nil, fmt.Errorf("metadata is not JSON: %w", err)
			}
			if mm, ok = g.(map[string]any); !ok {
				return nil, fmt.Errorf("metadata must be an object, got %s", jsonKind(g))
			}
		}
		meta = cloneObject(mm)
	}
	lift := func(from, to string) error {
		v, present := m[from]
		if !present || v == nil {
			return nil
		}
		s, ok := v.(string)
		if !ok {
			return fmt.Errorf("%s must be a string, got %s", from, jsonKind(v))
		}
		if meta == nil {
			meta = map[string]any{}
		}
		if _, has := meta[to]; !has {
			meta[to] = s
		}
		return nil
	}
	if err := lift("tool_call_id", MetaToolCallID); err != nil {
		return nil, err
	}
	if err := lift("tool_name", MetaToolName); err != nil {
		return nil, err
	}
	if err := lift("name", MetaToolName); err != nil {
		return nil, err
	}

	var out []Message
	if tc, present := m["tool_calls"]; present && tc != nil {
		if role != RoleAssistant {
			return nil, fmt.Errorf("tool_calls are only allowed on assistant messages")
		}
		calls, ok := tc.([]any)
		if !ok {
			return nil, fmt.Errorf("tool_calls must be an array, got %s", jsonKind(tc))
		}
		if content != "" {
			out = append(out, Message{Role: RoleAssistant, Content: content, Metadata: meta})
		}
		for j, c := range calls {
			msg, err := legacyToolCall(c)
			if err != nil {
				return nil, fmt.Errorf("tool_calls[%d]: %w", j, err)
			}
			out = append(out, msg)
		}
		return out, nil
	}

	msg := Message{Role: role, Content: content, Metadata: meta}
	if role == RoleToolCall || role == RoleToolResult {
		id, _ := msg.Metadata[MetaToolCallID].(string)
		if strings.TrimSpace(id) == "" {
			return nil, fmt.Errorf("%s messages need metadata.tool_call_id", role)
		}
	}
	if role == RoleToolCall {
		if name, _ := msg.Metadata[MetaToolName].(string); strings.TrimSpace(name) == "" {
			return nil, fmt.Errorf("tool_call messages need metadata.tool_name")
		}
	}
	return []Message{msg}, nil
}

func anyMap(m map[string]any) any {
	if m == nil {
		return nil
	}
	return m
}

func normalizeContent(c any) (string, error) {
	switch t := c.(type) {
	case nil:
		return "", nil
	case string:
		return t, nil
	case []any:
		var b strings.Builder
		for i, p := range t {
			switch part := p.(type) {
			case string:
				b.WriteString(part)
			case map[string]any:
				typ, _ := part["type"].(string)
				if typ != "" && typ != "text" && typ != "input_text" && typ != "output_text" {
					return "", fmt.Errorf("content[%d]: unsupported content part type %q (only text parts are supported)", i, typ)
				}
				txt, ok := part["text"].(string)
				if !ok {
					txt, ok = part["value"].(string)
				}
				if !ok {
					return "", fmt.Errorf("content[%d]: text part needs a string \"text\"", i)
				}
				b.WriteString(txt)
			default:
				return "", fmt.Errorf("content[%d]: must be a string or a text part, got %s", i, jsonKind(p))
			}
		}
		return b.String(), nil
	default:
		return "", fmt.Errorf("content must be a string or an array of text parts, got %s", jsonKind(c))
	}
}

// legacyToolCall converts an OpenAI-style or Baton-style call object into a
// tool_call message.
func legacyToolCall(c any) (Message, error) {
	m, ok := c.(map[string]any)
	if !ok {
		return Message{}, fmt.Errorf("must be an object, got %s", jsonKind(c))
	}
	id, _ := m["id"].(string)
	name, _ := m["name"].(string)
	params := m["parameters"]
	if params == nil {
		params = m["arguments"]
	}
	if fn, ok := m["function"].(map[string]any); ok {
		if name == "" {
			name, _ = fn["name"].(string)
		}
		if params == nil {
			params = fn["arguments"]
		}
	}
	if strings.TrimSpace(id) == "" {
		return Message{}, fmt.Errorf("id is required")
	}
	if strings.TrimSpace(name) == "" {
		return Message{}, fmt.Errorf("name is required")
	}
	args, err := parseArguments(params)
	if err != nil {
		return Message{}, err
	}
	return toolCallMessage(id, name, args), nil
}

// parseArguments accepts call arguments as an object or as a JSON string
// that holds an object.
func parseArguments(p any) (map[string]any, error) {
	switch t := p.(type) {
	case nil:
		return map[string]any{}, nil
	case map[string]any:
		return t, nil
	case string:
		if strings.TrimSpace(t) == "" {
			return map[string]any{}, nil
		}
		var obj map[string]any
		if err := decodeJSON([]byte(t), &obj); err != nil {
			return nil, fmt.Errorf("arguments are not a JSON object: %w", err)
		}
		if obj == nil {
			obj = map[string]any{}
		}
		return obj, nil
	default:
		return nil, fmt.Errorf("arguments must be an object, got %s", jsonKind(p))
	}
}

func toolCallMessage(id, name string, params map[string]any) Message {
	if params == nil {
		params = map[string]any{}
	}
	return Message{Role: RoleToolCall, Content: "", Metadata: map[string]any{
		MetaToolCallID: id,
		MetaToolName:   name,
		MetaParameters: params,
	}}
}

// FinalContent returns the content of the last assistant message with
// non-empty text, or "".
func FinalContent(msgs []Message) string {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == RoleAssistant && strings.TrimSpace(msgs[i].Content) != "" {
			return msgs[i].Content
		}
	}
	return ""
}

// MarshalJSON keeps metadata deterministic and drops an empty metadata map.
func (m Message) MarshalJSON() ([]byte, error) {
	type wire struct {
		Role     string         `json:"role"`
		Content  string         `json:"content"`
		Metadata map[string]any `json:"metadata,omitempty"`
	}
	var meta map[string]any
	if len(m.Metadata) > 0 {
		meta = m.Metadata
	}
	return marshalNoEscape(wire{Role: m.Role, Content: m.Content, Metadata: meta})
}

// UnmarshalJSON decodes a normalized envelope, keeping numbers exact.
func (m *Message) UnmarshalJSON(b []byte) error {
	var w struct {
		Role     string         `json:"role"`
		Content  string         `json:"content"`
		Metadata map[string]any `json:"metadata"`
	}
	if err := decodeJSON(b, &w); err != nil {
		return err
	}
	*m = Message{Role: w.Role, Content: w.Content, Metadata: w.Metadata}
	return nil
}

var _ json.Marshaler = Message{}
