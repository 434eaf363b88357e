package agui

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/baton-agents/baton/core"
)

func types(evs []Event) string {
	var s []string
	for _, e := range evs {
		s = append(s, e.Type)
	}
	return strings.Join(s, " ")
}

func call(id, name string, params map[string]any) core.Message {
	return core.Message{Role: core.RoleToolCall, Metadata: map[string]any{core.MetaToolCallID: id, core.MetaToolName: name, core.MetaParameters: params}}
}

func toolResult(id, name, content string) core.Message {
	return core.Message{Role: core.RoleToolResult, Content: content, Metadata: map[string]any{core.MetaToolCallID: id, core.MetaToolName: name}}
}

func TestTranslatorCommittedRun(t *testing.T) {
	transcript := []core.Message{
		{Role: core.RoleAssistant, Content: "Let me look."},
		call("c1", "client/get_weather", map[string]any{"city": "Oslo"}),
		call("c2", "ability/echo", nil),
		toolResult("c2", "ability/echo", `{"ok":true}`),
		toolResult("c1", "client/get_weather", `sunny`),
	}
	tr := &Translator{RunID: "r1", Load: func(_ context.Context, from, to int64) ([]core.Message, error) {
		return transcript[from-1 : to], nil
	}}
	var out []Event
	for _, ev := range []core.Event{
		{Type: core.EventTurnStarted, Turn: 1},
		{Type: core.EventMessagesUpdated, Turn: 1, Data: core.Fields{"reason": core.MessagesModelReply, "from_seq": float64(1), "to_seq": float64(3)}},
		{Type: core.EventMessagesUpdated, Turn: 1, Data: core.Fields{"reason": core.MessagesToolResult, "from_seq": float64(4), "to_seq": float64(5)}},
		{Type: core.EventMessagesUpdated, Turn: 1, Data: core.Fields{"reason": "user_input", "from_seq": float64(6), "to_seq": float64(6)}},
	} {
		evs, err := tr.Event(context.Background(), ev)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, evs...)
	}
	out = append(out, tr.End("th", "agui-run", core.RunState{RunID: "r1", Status: core.StatusCompleted})...)
	want := "STEP_STARTED TEXT_MESSAGE_START TEXT_MESSAGE_CONTENT TEXT_MESSAGE_END " +
		"TOOL_CALL_START TOOL_CALL_ARGS TOOL_CALL_END TOOL_CALL_START TOOL_CALL_ARGS TOOL_CALL_END STEP_FINISHED " +
		"TOOL_CALL_RESULT RUN_FINISHED"
	if got := types(out); got != want {
		t.Fatalf("events\n got %s\nwant %s", got, want)
	}
	if out[1].MessageID != "baton-r1-1" || out[4].ToolCallName != "get_weather" || out[4].ParentMessageID != "baton-r1-1" || out[7].ToolCallName != "ability/echo" {
		t.Fatalf("names and ids: %+v", out)
	}
	if out[5].Delta != `{"city":"Oslo"}` || out[8].Delta != "{}" {
		t.Fatalf("args: %q %q", out[5].Delta, out[8].Delta)
	}
	if r := out[11]; r.ToolCallID != "c2" || *r.Content != `{"ok":true}` || r.Role != "tool" || r.MessageID != "baton-result-c2" {
		t.Fatalf("result: %+v (a client tool's result is not sent back)", r)
	}
	fin := out[12]
	if fin.ThreadID != "th" || fin.RunID != "agui-run" || !reflect.DeepEqual(fin.Outcome, map[string]any{"type": "success"}) {
		t.Fatalf("finish: %+v", fin)
	}
}

func TestTranslatorStreamedText(t *testing.T) {
	tr := &Translator{RunID: "r1", Load: func(context.Context, int64, int64) ([]core.Message, error) {
		return []core.Message{{Role: core.RoleAssistant, Content: "Hello there"}}, nil
	}}
	out := tr.Deltas(core.DeltaBatch{Pos: core.DeltaPos{Turn: 2}, Deltas: []core.TokenDelta{
		{Kind: core.DeltaThinking, Text: "hmm"}, {Kind: core.DeltaToken, Text: "Hello"}, {Kind: core.DeltaToken, Text: ""}}})
	out = append(out, tr.Deltas(core.DeltaBatch{Pos: core.DeltaPos{Turn: 2}, Deltas: []core.TokenDelta{{Kind: core.DeltaToken, Text: " there"}}})...)
	evs, err := tr.Event(context.Background(), core.Event{Type: core.EventMessagesUpdated, Turn: 2, Data: core.Fields{"reason": core.MessagesModelReply, "from_seq": json.Number("3"), "to_seq": json.Number("3")}})
	if err != nil {
		t.Fatal(err)
	}
	out = append(out, evs...)
	// The deltas come before the turn's turn_started (committed with the
	// reply): they open the turn's step.
	if got := types(out); got != "STEP_STARTED TEXT_MESSAGE_START TEXT_MESSAGE_CONTENT TEXT_MESSAGE_CONTENT TEXT_MESSAGE_END STEP_FINISHED" {
		t.Fatalf("the streamed text is sent once: %s", got)
	}
	if out[0].StepName != "turn_2" || out[1].MessageID != "baton-r1-2" || out[4].MessageID != "baton-r1-2" {
		t.Fatalf("ids: %+v", out)
	}
}

func TestTranslatorEnd(t *testing.T) {
	tr := &Translator{RunID: "r1"}
	if out := tr.End("th", "x", core.RunState{RunID: "r1", Status: core.StatusFailed}); types(out) != "RUN_ERROR" || out[0].Code != "run_failed" {
		t.Fatalf("failed: %+v", out)
	}
	failed := core.RunState{RunID: "r1", Status: core.StatusFailed, Error: &core.RunError{Code: "model_error", Message: "scripted model error: boom"}}
	if out := tr.End("th", "x", failed); out[0].Code != "model_error" || out[0].Message != "scripted model error: boom (the run r1 ended with status failed)" {
		t.Fatalf("a failed run's reason: %+v", out)
	}
	if out := tr.End("th", "x", core.RunState{RunID: "r1", Status: core.StatusCancelled}); !reflect.DeepEqual(out[0].Outcome, map[string]any{"type": "cancelled"}) || out[0].Result != nil {
		t.Fatalf("cancelled: %+v", out)
	}
	tr.Event(context.Background(), core.Event{Type: core.EventTurnStarted, Turn: 1})
	if out := tr.End("th", "x", core.RunState{RunID: "r1", Status: core.StatusMaxTurnsReached}); types(out) != "STEP_FINISHED RUN_FINISHED" {
		t.Fatalf("an open step is closed: %s", types(out))
	}
}

func TestToolNames(t *testing.T) {
	for agui, baton := range map[string]string{"get_weather": "client/get_weather", "client/x": "client/x", "ability/echo": "ability/echo"} {
		if got := toBaton(agui); got != baton {
			t.Errorf("toBaton(%s) = %s, want %s", agui, got, baton)
		}
	}
	if toAGUI("client/get_weather") != "get_weather" || toAGUI("ability/echo") != "ability/echo" {
		t.Fatal("toAGUI")
	}
}

func TestDecodeAndLoose(t *testing.T) {
	if _, err := Decode([]byte(`{"threadId":"t"}`)); err == nil || !strings.Contains(err.Error(), "runId") {
		t.Fatalf("no runId: %v", err)
	}
	if _, err := Decode([]byte(`[`)); err == nil {
		t.Fatal("not JSON")
	}
	in, err := Decode([]byte(`{"threadId":"t","runId":"r","future":1,"messages":[
		{"id":"u1","role":"user","content":[{"type":"text","text":"a"},{"type":"image"},{"type":"text","text":"b"}]},
		{"id":"a1","role":"assistant","content":"","toolCalls":[{"id":"c1","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Oslo\"}"}}]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	raw, err := loose(in.Messages)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(raw)
	want := `[{"content":"ab","metadata":{"agui_message_id":"u1"},"role":"user"},{"content":"","metadata":{"parameters":{"city":"Oslo"},"tool_call_id":"c1","tool_name":"client/get_weather"},"role":"tool_call"}]`
	if string(b) != want {
		t.Fatalf("loose\n got %s\nwant %s", b, want)
	}
	for _, m := range []Message{{Role: "tool", ToolCallID: "c1"}, {Role: "activity"}, {Role: "assistant", ToolCalls: []ToolCall{{ID: "c", Function: struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	}{"f", "[1]"}}}}} {
		if _, err := loose([]Message{m}); err == nil {
			t.Errorf("loose accepted %+v", m)
		}
	}
}

func ids(ms []Message) string {
	var s []string
	for _, m := range ms {
		s = append(s, m.ID)
	}
	return strings.Join(s, ",")
}

func TestNewMessages(t *testing.T) {
	transcript := []core.Message{
		{Role: core.RoleUser, Content: "hi", Metadata: map[string]any{MetaMessageID: "u1"}},
		{Role: core.RoleAssistant, Content: "calling"},
		call("c1", "client/f", nil),
		toolResult("c1", "client/f", "x"),
		{Role: core.RoleAssistant, Content: "done"},
	}
	tc := func(id string) []ToolCall { return []ToolCall{{ID: id}} }
	tests := []struct {
		name string
		in   []Message
		want string
	}{
		{"a new thread keeps all", nil, ""},
		{"by stored id", []Message{{ID: "u1", Role: "user"}, {ID: "u2", Role: "user"}}, "u2"},
		{"by emitted id", []Message{{ID: "u1", Role: "user"}, {ID: "baton-r-1", Role: "assistant"}, {ID: "u2", Role: "user"}}, "u2"},
		{"by tool call", []Message{{ID: "x", Role: "assistant", ToolCalls: tc("c1")}, {ID: "u3", Role: "user"}}, "u3"},
		{"by tool result", []Message{{ID: "t1", Role: "tool", ToolCallID: "c1"}, {ID: "u3", Role: "user"}}, "u3"},
		{"by count when none is known", []Message{{ID: "a", Role: "user"}, {ID: "b"}, {ID: "c"}, {ID: "d"}, {ID: "e", Role: "user"}}, "e"},
		{"a known message last leaves nothing", []Message{{ID: "zz", Role: "user"}, {ID: "u1", Role: "user"}}, ""},
	}
	for _, tt := range tests {
		tr := transcript
		if tt.in == nil {
			tr, tt.in = nil, []Message{{ID: "n1"}}
			tt.want = "n1"
		}
		if got := ids(newMessages(tt.in, tr)); got != tt.want {
			t.Errorf("%s: got %q, want %q", tt.name, got, tt.want)
		}
	}
	before, tools := trailingTools([]Message{{ID: "u", Role: "user"}, {ID: "t1", Role: "tool"}, {ID: "t2", Role: "tool"}})
	if ids(before) != "u" || ids(tools) != "t1,t2" {
		t.Fatalf("trailingTools: %s | %s", ids(before), ids(tools))
	}
}
