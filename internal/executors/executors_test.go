package executors

import (
	"context"
	"strings"
	"testing"

	"github.com/baton-agents/baton/core"
	"github.com/baton-agents/baton/internal/agents"
)

func TestRouterAndTyped(t *testing.T) {
	reg, err := agents.Parse([]byte(`{"agents":[
	 {"slug":"a","model":{"provider":"x"},"tools":[{"name":"t/add","source":"go","description":"Add.","executor":{"type":"go","handler":"add"}}]},
	 {"slug":"b","model":{"provider":"x"},"tools":[{"name":"t/add","source":"go","description":"Echo.","executor":{"type":"go","handler":"echo"}}]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	g := NewGoRegistry()
	type args struct{ A, B int }
	g.Register("add", Typed(func(_ context.Context, p args, _ core.ToolCall) (int, error) { return p.A + p.B, nil }))
	r, err := NewRouter(reg, g, nil)
	if err != nil {
		t.Fatal(err)
	}
	out, err := r.Execute(context.Background(), core.ToolCall{Agent: "a", ToolName: "t/add", Parameters: map[string]any{"A": 2, "B": 3}})
	if err != nil || out != 5 {
		t.Fatalf("add = %v, %v", out, err)
	}
	out, err = r.Execute(context.Background(), core.ToolCall{Agent: "b", ToolName: "t/add", Parameters: map[string]any{"x": 1}})
	if err != nil || out.(map[string]any)["echo"] == nil {
		t.Fatalf("same tool name of another agent: %v, %v", out, err)
	}
	if _, err := r.Execute(context.Background(), core.ToolCall{Agent: "a", ToolName: "t/add", Parameters: map[string]any{"A": "two"}}); err == nil {
		t.Fatal("typed decode error not reported")
	}
	if _, err := r.Execute(context.Background(), core.ToolCall{Agent: "c", ToolName: "t/add"}); err == nil {
		t.Fatal("unknown agent executed")
	}
	if _, err := NewRouter(reg, NewGoRegistry(), nil); err == nil || !strings.Contains(err.Error(), `no Go handler named "add"`) {
		t.Fatalf("missing handler: %v", err)
	}
	reg2, _ := agents.Parse([]byte(`{"agents":[{"slug":"a","model":{"provider":"x"},"tools":[{"name":"t/x","source":"s","description":"d","executor":{"type":"lambda","function":"f"}}]}]}`))
	if _, err := NewRouter(reg2, g, nil); err == nil || !strings.Contains(err.Error(), "not available in this build") {
		t.Fatalf("lambda without factory: %v", err)
	}
}
