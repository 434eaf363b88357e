package providers

import (
	"reflect"
	"testing"

	"github.com/baton-agents/baton/core"
)

func call(id, name string) core.Message {
	return core.Message{Role: core.RoleToolCall, Metadata: map[string]any{core.MetaToolCallID: id, core.MetaToolName: name, core.MetaParameters: map[string]any{"x": id}}}
}

func result(id string, ok bool, content string) core.Message {
	return core.Message{Role: core.RoleToolResult, Content: content, Metadata: map[string]any{core.MetaToolCallID: id, core.MetaSuccess: ok}}
}

func TestBuildConversation(t *testing.T) {
	req := core.ModelRequest{
		System: "Be brief.",
		Messages: []core.Message{
			{Role: core.RoleSystem, Content: "Summary: hello."},
			{Role: core.RoleUser, Content: "hi"},
			{Role: core.RoleAssistant, Content: "checking"},
			call("c1", "a/x"), call("c2", "a/y"),
			result("c1", true, "r1"), result("c2", false, "boom"),
			call("c3", "a/x"),
			result("c3", true, "r3"),
			{Role: core.RoleUser, Content: "thanks"},
		},
	}
	c, err := BuildConversation(req)
	if err != nil {
		t.Fatal(err)
	}
	if got := c.SystemText(); got != "Be brief.\n\nSummary: hello." {
		t.Errorf("system %q", got)
	}
	want := []Turn{
		{Kind: TurnUser, Text: "hi"},
		{Kind: TurnAssistant, Text: "checking", Calls: []Call{{"c1", "a/x", map[string]any{"x": "c1"}}, {"c2", "a/y", map[string]any{"x": "c2"}}}},
		{Kind: TurnResults, Results: []Result{{ID: "c1", Content: "r1"}, {ID: "c2", Content: "boom", IsError: true}}},
		{Kind: TurnAssistant, Calls: []Call{{"c3", "a/x", map[string]any{"x": "c3"}}}},
		{Kind: TurnResults, Results: []Result{{ID: "c3", Content: "r3"}}},
		{Kind: TurnUser, Text: "thanks"},
	}
	if !reflect.DeepEqual(c.Turns, want) {
		t.Errorf("turns\n got %+v\nwant %+v", c.Turns, want)
	}
	alt := c.Alternate()
	roles := []string{}
	for _, m := range alt {
		roles = append(roles, m.Role)
	}
	if !reflect.DeepEqual(roles, []string{"user", "assistant", "user", "assistant", "user"}) {
		t.Errorf("roles %v", roles)
	}
	last := alt[len(alt)-1]
	if len(last.Parts) != 2 || last.Parts[0].Result == nil || last.Parts[1].Text != "thanks" {
		t.Errorf("last message %+v: want the tool result then the text", last)
	}
}

func TestAlternateEdges(t *testing.T) {
	c, err := BuildConversation(core.ModelRequest{Messages: []core.Message{
		{Role: core.RoleAssistant, Content: "earlier answer"},
		{Role: core.RoleUser, Content: ""},
		{Role: core.RoleUser, Content: "a"},
		{Role: core.RoleUser, Content: "b"},
		{Role: core.RoleAssistant, Content: ""},
		{Role: core.RoleAssistant, Content: "c"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	alt := c.Alternate()
	want := []AltMessage{
		{Role: "user", Parts: []Part{{Text: Placeholder}}},
		{Role: "assistant", Parts: []Part{{Text: "earlier answer"}}},
		{Role: "user", Parts: []Part{{Text: "a"}, {Text: "b"}}},
		{Role: "assistant", Parts: []Part{{Text: "c"}}},
	}
	if !reflect.DeepEqual(alt, want) {
		t.Errorf("alternate\n got %+v\nwant %+v", alt, want)
	}
}

func TestBuildConversationErrors(t *testing.T) {
	for _, m := range []core.Message{
		{Role: "narrator", Content: "x"},
		{Role: core.RoleToolCall, Metadata: map[string]any{core.MetaToolName: "a/b"}},
		{Role: core.RoleToolResult, Content: "x"},
	} {
		if _, err := BuildConversation(core.ModelRequest{Messages: []core.Message{m}}); err == nil {
			t.Errorf("message %+v: no error", m)
		}
	}
}

func TestToolSchema(t *testing.T) {
	if got := ToolSchema(nil); !reflect.DeepEqual(got, map[string]any{"type": "object", "properties": map[string]any{}}) {
		t.Errorf("empty schema: %v", got)
	}
	in := map[string]any{"type": "object", "properties": map[string]any{"a": map[string]any{"type": "string"}}}
	got := ToolSchema(in)
	if !reflect.DeepEqual(got, in) {
		t.Errorf("schema changed: %v", got)
	}
}

func TestToolHistoryAsText(t *testing.T) {
	named := result("c2", false, "boom")
	named.Metadata[core.MetaToolName] = "a/y"
	cases := []struct {
		name string
		msgs []core.Message
		want []Turn
	}{
		{
			name: "calls and results become text",
			msgs: []core.Message{
				{Role: core.RoleUser, Content: "hi"},
				{Role: core.RoleAssistant, Content: "checking"},
				call("c1", "a/x"), call("c2", "a/y"),
				result("c1", true, `{"n":1}`), named,
				{Role: core.RoleUser, Content: "thanks"},
			},
			want: []Turn{
				{Kind: TurnUser, Text: "hi"},
				{Kind: TurnAssistant, Text: "checking\n[called tool a/x (call c1) with {\"x\":\"c1\"}]\n[called tool a/y (call c2) with {\"x\":\"c2\"}]"},
				{Kind: TurnUser, Text: "[result of tool a/x (call c1): ok]\n{\"n\":1}\n\n[result of tool a/y (call c2): failed]\nboom"},
				{Kind: TurnUser, Text: "thanks"},
			},
		},
		{
			name: "a call with no text, an empty result, a result of an unknown call",
			msgs: []core.Message{
				call("c3", "a/z"),
				result("c3", true, " "),
				result("gone", true, "late"),
			},
			want: []Turn{
				{Kind: TurnAssistant, Text: "[called tool a/z (call c3) with {\"x\":\"c3\"}]"},
				{Kind: TurnUser, Text: "[result of tool a/z (call c3): ok]\n(empty)\n\n[result of tool (unknown) (call gone): ok]\nlate"},
			},
		},
		{
			name: "no tool history is unchanged",
			msgs: []core.Message{{Role: core.RoleUser, Content: "hi"}, {Role: core.RoleAssistant, Content: "hello"}},
			want: []Turn{{Kind: TurnUser, Text: "hi"}, {Kind: TurnAssistant, Text: "hello"}},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, err := BuildConversation(core.ModelRequest{System: "sys", Messages: tc.msgs})
			if err != nil {
				t.Fatal(err)
			}
			orig, _ := BuildConversation(core.ModelRequest{System: "sys", Messages: tc.msgs})
			got, err := c.ToolHistoryAsText()
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got.Turns, tc.want) {
				t.Errorf("turns\n got %#v\nwant %#v", got.Turns, tc.want)
			}
			if !reflect.DeepEqual(got.System, []string{"sys"}) {
				t.Errorf("system %v", got.System)
			}
			if !reflect.DeepEqual(c, orig) {
				t.Errorf("the conversation was modified:\n got %+v\nwant %+v", c, orig)
			}
			for _, m := range got.Alternate() {
				for _, p := range m.Parts {
					if p.Call != nil || p.Result != nil {
						t.Errorf("alternate still has a tool block: %+v", p)
					}
				}
			}
		})
	}
}
