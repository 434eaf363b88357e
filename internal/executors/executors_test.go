package executors

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/baton-agents/baton/core"
	"github.com/baton-agents/baton/internal/toolspec"
)

func TestRouter(t *testing.T) {
	tools := toolspec.Tools{
		"a": {"t/add": {Type: "go", Handler: "add"}},
		"b": {"t/add": {Type: "go", Handler: "echo"}},
	}
	g := NewGoRegistry()
	g.Register("add", func(_ context.Context, c core.ToolCall) (any, error) {
		return c.Parameters["A"].(int) + c.Parameters["B"].(int), nil
	})
	r, err := NewRouter(tools, g, nil)
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
	if _, err := r.Execute(context.Background(), core.ToolCall{Agent: "c", ToolName: "t/add"}); err == nil {
		t.Fatal("unknown agent executed")
	}
	if _, err := NewRouter(tools, NewGoRegistry(), nil); err == nil || !strings.Contains(err.Error(), `no Go handler named "add"`) {
		t.Fatalf("missing handler: %v", err)
	}
	lambdaOnly := toolspec.Tools{"a": {"t/x": {Type: "lambda", Function: "f"}}}
	if _, err := NewRouter(lambdaOnly, g, nil); err == nil || !strings.Contains(err.Error(), "not available in this build") {
		t.Fatalf("lambda without factory: %v", err)
	}
}

// callLog is a goroutine-safe record of the requests a fake server saw.
type callLog[T any] struct {
	mu    sync.Mutex
	items []T
}

func (l *callLog[T]) add(v T) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.items = append(l.items, v)
}

// all returns a copy of the requests seen so far.
func (l *callLog[T]) all() []T {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]T(nil), l.items...)
}
