package core

import (
	"strings"
	"testing"
)

func TestNormalizeMessages(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    []Message
		wantErr string
	}{
		{name: "plain", in: `[{"role":"user","content":"hi"}]`, want: []Message{{Role: RoleUser, Content: "hi"}}},
		{name: "text parts", in: `[{"role":"assistant","content":[{"type":"text","text":"a"},{"type":"output_text","text":"b"},"c"]}]`,
			want: []Message{{Role: RoleAssistant, Content: "abc"}}},
		{name: "legacy roles", in: `[{"role":"developer","content":"s"},{"role":"human","content":"u"},{"role":"tool-call","tool_call_id":"c1","name":"ability/x","content":""},{"role":"tool","tool_call_id":"c1","content":"r"}]`,
			want: []Message{{Role: RoleSystem, Content: "s"}, {Role: RoleUser, Content: "u"},
				{Role: RoleToolCall, Metadata: map[string]any{"tool_call_id": "c1", "tool_name": "ability/x"}},
				{Role: RoleToolResult, Content: "r", Metadata: map[string]any{"tool_call_id": "c1"}}}},
		{name: "openai tool_calls expand", in: `[{"role":"assistant","content":"x","tool_calls":[{"id":"c1","function":{"name":"a/b","arguments":"{\"k\":1}"}},{"id":"c2","name":"a/c","parameters":{"z":true}}]}]`,
			want: []Message{{Role: RoleAssistant, Content: "x"},
				{Role: RoleToolCall, Metadata: map[string]any{"tool_call_id": "c1", "tool_name": "a/b", "parameters": map[string]any{"k": num("1")}}},
				{Role: RoleToolCall, Metadata: map[string]any{"tool_call_id": "c2", "tool_name": "a/c", "parameters": map[string]any{"z": true}}}}},
		{name: "untyped and input_text parts", in: `[{"role":"user","content":[{"text":"a"},{"type":"input_text","text":"b"},{"type":"text","value":"c"}]}]`,
			want: []Message{{Role: RoleUser, Content: "abc"}}},
		{name: "null content", in: `[{"role":"assistant","content":null}]`, want: []Message{{Role: RoleAssistant}}},
		{name: "missing role", in: `[{"content":"x"}]`, wantErr: "messages[0]: role is required"},
		{name: "role not string", in: `[{"role":3}]`, wantErr: "role must be a string, got number"},
		{name: "unknown role", in: `[{"role":"user","content":"a"},{"role":"robot","content":"x"}]`, wantErr: `messages[1]: unknown role "robot"`},
		{name: "content number", in: `[{"role":"user","content":5}]`, wantErr: "content must be a string or an array of text parts"},
		{name: "image part", in: `[{"role":"user","content":[{"type":"image","url":"x"}]}]`, wantErr: `unsupported content part type "image"`},
		{name: "part without text", in: `[{"role":"user","content":[{"type":"text"}]}]`, wantErr: `text part needs a string "text"`},
		{name: "tool result without id", in: `[{"role":"tool_result","content":"x"}]`, wantErr: "tool_result messages need metadata.tool_call_id"},
		{name: "tool call without name", in: `[{"role":"tool_call","tool_call_id":"c"}]`, wantErr: "tool_call messages need metadata.tool_name"},
		{name: "tool_calls on user", in: `[{"role":"user","tool_calls":[]}]`, wantErr: "tool_calls are only allowed on assistant messages"},
		{name: "bad arguments", in: `[{"role":"assistant","tool_calls":[{"id":"c","name":"a/b","arguments":"{nope"}]}]`, wantErr: "tool_calls[0]: arguments are not a JSON object"},
		{name: "call without id", in: `[{"role":"assistant","tool_calls":[{"name":"a/b"}]}]`, wantErr: "tool_calls[0]: id is required"},
		{name: "metadata not object", in: `[{"role":"user","content":"x","metadata":[1]}]`, wantErr: "metadata must be an object, got array"},
		{name: "not an object", in: `["hello"]`, wantErr: "message must be an object, got string"},
		{name: "not an array", in: `{"role":"user"}`, wantErr: "messages: not a JSON array"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := NormalizeMessagesJSON([]byte(tc.in))
			if wantedErr(t, err, tc.wantErr) {
				return
			}
			gb, wb := mustCanon(t, got), mustCanon(t, tc.want)
			if gb != wb {
				t.Fatalf("got  %s\nwant %s", gb, wb)
			}
		})
	}
}

// wantedErr fails t unless err is as a table case wants: nil when want is
// empty, else an error containing want. It reports whether an error was
// wanted, so the case has nothing more to check.
func wantedErr(t *testing.T, err error, want string) bool {
	t.Helper()
	if want == "" {
		if err != nil {
			t.Fatal(err)
		}
		return false
	}
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("err = %v, want it to contain %q", err, want)
	}
	return true
}

func mustCanon(t *testing.T, v any) string {
	t.Helper()
	b, err := CanonicalJSON(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestMessageJSONRoundTrip(t *testing.T) {
	in := Message{Role: RoleToolCall, Metadata: map[string]any{"tool_call_id": "c", "tool_name": "a/b", "parameters": map[string]any{"n": num("12345678901234567890")}}}
	b, err := in.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	var out Message
	if err := out.UnmarshalJSON(b); err != nil {
		t.Fatal(err)
	}
	if mustCanon(t, out) != mustCanon(t, in) {
		t.Fatalf("round trip changed the message: %s", b)
	}
	if !strings.Contains(string(b), "12345678901234567890") {
		t.Fatalf("large number lost precision: %s", b)
	}
}

func TestFinalContent(t *testing.T) {
	msgs := []Message{{Role: RoleAssistant, Content: "first"}, {Role: RoleToolCall}, {Role: RoleAssistant, Content: "  "}, {Role: RoleToolResult, Content: "x"}}
	if got := FinalContent(msgs); got != "first" {
		t.Fatalf("FinalContent = %q", got)
	}
	if got := FinalContent(nil); got != "" {
		t.Fatalf("FinalContent(nil) = %q", got)
	}
}

// TestNormalizeMessageValues: Message values (and pointers to them) are
// normalized like their JSON form, metadata included; a nil pointer is
// refused.
func TestNormalizeMessageValues(t *testing.T) {
	callMsg := Message{Role: "tool-call", Metadata: map[string]any{MetaToolCallID: "c1", MetaToolName: "a/b"}}
	got, err := NormalizeMessages([]any{callMsg, &Message{Role: "user", Content: "hi"}, Message{Role: RoleAssistant, Content: "ok"}})
	if err != nil {
		t.Fatal(err)
	}
	want := []Message{{Role: RoleToolCall, Metadata: map[string]any{MetaToolCallID: "c1", MetaToolName: "a/b"}}, {Role: RoleUser, Content: "hi"}, {Role: RoleAssistant, Content: "ok"}}
	if mustCanon(t, got) != mustCanon(t, want) {
		t.Fatalf("got %+v", got)
	}
	_, err = NormalizeMessages([]any{(*Message)(nil)})
	wantedErr(t, err, "messages[0]: message is null")
}
