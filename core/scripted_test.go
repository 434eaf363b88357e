package core

import (
	"context"
	"strings"
	"testing"
)

func TestScriptedTurnIfOffered(t *testing.T) {
	spec := ModelSpec{Provider: ProviderScripted, Turns: []ScriptedTurn{
		{Content: "calendar", IfOffered: "client/get_calendar", ToolCalls: []ToolCallRequest{{ID: "c1", Name: "client/get_calendar"}}},
		{Content: "echo"},
		{Content: "done"},
	}}
	calendar := []ToolDeclaration{{Name: "ability/echo"}, {Name: "client/get_calendar"}}
	plain := []ToolDeclaration{{Name: "ability/echo"}}
	for _, c := range []struct {
		tools []ToolDeclaration
		turn  int
		want  string
	}{
		{calendar, 1, "calendar"}, {calendar, 2, "echo"}, {calendar, 3, "done"},
		{plain, 1, "echo"}, {plain, 2, "done"}, {nil, 1, "echo"},
	} {
		reply, err := ScriptedModel{}.Complete(context.Background(), ModelRequest{Turn: c.turn, Model: spec, Tools: c.tools})
		if err != nil {
			t.Fatalf("turn %d with %d tools: %v", c.turn, len(c.tools), err)
		}
		if reply.Content != c.want {
			t.Errorf("turn %d with %d tools: got %q, want %q", c.turn, len(c.tools), reply.Content, c.want)
		}
	}
	_, err := ScriptedModel{}.Complete(context.Background(), ModelRequest{Turn: 3, Model: spec, Tools: plain})
	if err == nil || !strings.Contains(err.Error(), "the script has 2 turn(s) for this request (1 more need a tool it is not offered)") {
		t.Fatalf("exhausted script: got %v", err)
	}
	_, err = ScriptedModel{}.Complete(context.Background(), ModelRequest{Turn: 4, Model: spec, Tools: calendar})
	if err == nil || !strings.Contains(err.Error(), "turn 4 was requested but the script has 3 turn(s)") {
		t.Fatalf("exhausted script: got %v", err)
	}
}
