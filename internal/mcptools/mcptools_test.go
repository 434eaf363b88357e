package mcptools

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/baton-agents/baton/core"
	"github.com/baton-agents/baton/internal/toolspec"
)

// fixture is an MCP server of the test on the SDK's in-memory transport.
type fixture struct {
	srv      *mcp.Server
	mu       sync.Mutex
	metas    []mcp.Meta
	release  chan struct{}
	connects int
}

func textTool(name string, h func(args map[string]any) *mcp.CallToolResult) (*mcp.Tool, mcp.ToolHandler) {
	return &mcp.Tool{Name: name, Description: "The " + name + " tool.", InputSchema: map[string]any{"type": "object",
			"properties": map[string]any{"n": map[string]any{"type": "integer"}}}},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var args map[string]any
			_ = jsonUnmarshal(req.Params.Arguments, &args)
			return h(args), nil
		}
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	f := &fixture{srv: mcp.NewServer(&mcp.Implementation{Name: "fixture", Version: "1"}, &mcp.ServerOptions{PageSize: 2}), release: make(chan struct{})}
	t.Cleanup(func() { close(f.release) })
	add := func(tool *mcp.Tool, h mcp.ToolHandler) {
		f.srv.AddTool(tool, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			f.mu.Lock()
			f.metas = append(f.metas, req.Params.Meta)
			f.mu.Unlock()
			return h(ctx, req)
		})
	}
	add(textTool("structured", func(map[string]any) *mcp.CallToolResult {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: `{"ignored":true}`}}, StructuredContent: map[string]any{"success": "yes", "sum": 3}}
	}))
	add(textTool("text", func(map[string]any) *mcp.CallToolResult {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "hello"}, &mcp.TextContent{Text: "world"}}}
	}))
	add(textTool("json-text", func(map[string]any) *mcp.CallToolResult {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: `{"a":[1,2]}`}}}
	}))
	add(textTool("fails", func(map[string]any) *mcp.CallToolResult {
		return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "account locked"}}}
	}))
	add(textTool("big", func(map[string]any) *mcp.CallToolResult {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strings.Repeat("x", 4096)}}}
	}))
	slow, _ := textTool("slow", nil)
	add(slow, func(ctx context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		select {
		case <-ctx.Done():
		case <-f.release:
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "late"}}}, nil
	})
	return f
}

func (f *fixture) transport(ctx context.Context, _ string, _ toolspec.MCPServer, _ string) (mcp.Transport, error) {
	ct, st := mcp.NewInMemoryTransports()
	if _, err := f.srv.Connect(ctx, st, nil); err != nil {
		return nil, err
	}
	f.mu.Lock()
	f.connects++
	f.mu.Unlock()
	return ct, nil
}

func manager(f *fixture, spec toolspec.MCPServer, max int64) *Manager {
	return New(map[string][]toolspec.MCPServer{"a": {spec}}, Options{Transport: f.transport, MaxResultBytes: max})
}

func call(t *testing.T, m *Manager, tool string) (any, error) {
	t.Helper()
	return m.Execute(context.Background(), core.ToolCall{Agent: "a", RunID: "run_1", ToolCallID: "call_" + tool, ToolName: "mcp/fx/" + tool, Parameters: map[string]any{"n": 1}})
}

// Discovery lists every page, keeps the allow-list, names the tools
// mcp/<server>/<tool> with the server's description and schema, and
// applies the overrides.
func TestDiscover(t *testing.T) {
	f := newFixture(t)
	spec := toolspec.MCPServer{Name: "fx", Tools: []string{"structured", "text", "json-text", "fails", "big"},
		ToolOverrides: map[string]toolspec.MCPToolOverride{"fails": {ActionPolicy: "preview", Runtime: map[string]any{"retry_safe": true}}}}
	got := manager(f, spec, 0).Discover(context.Background(), "a", "acme")
	if len(got.Unavailable) != 0 {
		t.Fatalf("unavailable %v", got.Unavailable)
	}
	var names []string
	for _, d := range got.Tools {
		names = append(names, d.Name)
	}
	if strings.Join(names, ",") != "mcp/fx/big,mcp/fx/fails,mcp/fx/json-text,mcp/fx/structured,mcp/fx/text" {
		t.Fatalf("tools %v (want the 5 allowed of 6, over 3 pages)", names)
	}
	d := got.Tools[1]
	if d.Description != "The fails tool." || d.Source != "fx" || d.ActionPolicy != "preview" || !d.RetrySafe() || d.Parameters["type"] != "object" || d.Categories[0] != Category {
		t.Fatalf("declaration %+v", d)
	}
	if _, err := call(t, New(map[string][]toolspec.MCPServer{"a": {spec}}, Options{Transport: f.transport}), "slow"); err == nil {
		t.Fatal("a tool outside the allow-list was called")
	}
}

// A server that cannot be reached is reported, not an error, and left
// alone until RetryAfter.
func TestDiscoverUnavailable(t *testing.T) {
	var tries int
	m := New(map[string][]toolspec.MCPServer{"a": {{Name: "down"}}}, Options{Transport: func(context.Context, string, toolspec.MCPServer, string) (mcp.Transport, error) {
		tries++
		return nil, errors.New("connection refused")
	}})
	for i := 0; i < 2; i++ {
		got := m.Discover(context.Background(), "a", "")
		if len(got.Tools) != 0 || len(got.Unavailable) != 1 || got.Unavailable[0].Source != "mcp/down" || !strings.Contains(got.Unavailable[0].Error, "connection refused") {
			t.Fatalf("%+v", got)
		}
	}
	if tries != 1 {
		t.Fatalf("%d connection attempts, want 1 within RetryAfter", tries)
	}
}

// One test per mapping rule of a tools/call result, each on its own
// server (run alone, each still checks what it names).
func TestResultMapping(t *testing.T) {
	spec := toolspec.MCPServer{Name: "fx", Timeout: "100ms"}
	fresh := func(t *testing.T) (*fixture, *Manager) {
		f := newFixture(t)
		return f, manager(f, spec, 2048)
	}
	t.Run("structured content is the result", func(t *testing.T) {
		_, m := fresh(t)
		out, err := call(t, m, "structured")
		res := core.NormalizeToolOutput(core.ToolDeclaration{Name: "mcp/fx/structured"}, out, err)
		r, _ := res.Result.(map[string]any)
		if !res.Success || r["success"] != "yes" || r["sum"] == nil {
			t.Fatalf("%+v", res)
		}
	})
	t.Run("text content is the result", func(t *testing.T) {
		_, m := fresh(t)
		out, err := call(t, m, "text")
		res := core.NormalizeToolOutput(core.ToolDeclaration{Name: "mcp/fx/text"}, out, err)
		if !res.Success || res.Result != "hello\nworld" {
			t.Fatalf("%+v", res)
		}
		out, err = call(t, m, "json-text")
		res = core.NormalizeToolOutput(core.ToolDeclaration{Name: "mcp/fx/json-text"}, out, err)
		if r, _ := res.Result.(map[string]any); !res.Success || r["a"] == nil {
			t.Fatalf("%+v", res)
		}
	})
	t.Run("isError is a failed tool_error result", func(t *testing.T) {
		_, m := fresh(t)
		out, err := call(t, m, "fails")
		res := core.NormalizeToolOutput(core.ToolDeclaration{Name: "mcp/fx/fails"}, out, err)
		if res.Success || res.ErrorType != ErrTypeToolError || res.Error != "account locked" {
			t.Fatalf("%+v", res)
		}
	})
	t.Run("a timeout is an executor_exception", func(t *testing.T) {
		_, m := fresh(t)
		out, err := call(t, m, "slow")
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("%v %v", out, err)
		}
		res := core.NormalizeToolOutput(core.ToolDeclaration{Name: "mcp/fx/slow"}, out, err)
		if res.Success || res.ErrorType != core.ErrTypeExecutorException || !strings.Contains(res.Error, "timed out after 100ms") {
			t.Fatalf("%+v", res)
		}
		// The session was dropped; the next call reconnects and works.
		if out, err := call(t, m, "text"); err != nil || out.(map[string]any)["result"] != "hello\nworld" {
			t.Fatalf("after the timeout: %v %v", out, err)
		}
	})
	t.Run("an oversized result is a failed response_too_large result", func(t *testing.T) {
		_, m := fresh(t)
		out, err := call(t, m, "big")
		res := core.NormalizeToolOutput(core.ToolDeclaration{Name: "mcp/fx/big"}, out, err)
		if res.Success || res.ErrorType != ErrTypeResponseTooLarge || !strings.Contains(res.Error, "2048-byte limit") {
			t.Fatalf("%+v", res)
		}
	})
	t.Run("the idempotency key travels in _meta", func(t *testing.T) {
		f, m := fresh(t)
		if _, err := call(t, m, "text"); err != nil {
			t.Fatal(err)
		}
		f.mu.Lock()
		defer f.mu.Unlock()
		if len(f.metas) != 1 || f.metas[0][MetaIdempotencyKey] != "run_1:call_text" {
			t.Fatalf("_meta of the one call: %v, want %s run_1:call_text", f.metas, MetaIdempotencyKey)
		}
	})
}

// notifications/tools/list_changed makes the next discovery list again.
func TestListChanged(t *testing.T) {
	f := newFixture(t)
	m := manager(f, toolspec.MCPServer{Name: "fx"}, 0)
	ctx := context.Background()
	if n := len(m.Discover(ctx, "a", "").Tools); n != 6 {
		t.Fatalf("%d tools", n)
	}
	f.srv.RemoveTools("big")
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if n := len(m.Discover(ctx, "a", "").Tools); n == 5 {
			return
		}
	}
	t.Fatal("the removed tool is still listed after list_changed")
}

func jsonUnmarshal(b []byte, v any) error {
	if len(b) == 0 {
		return nil
	}
	return json.Unmarshal(b, v)
}

// TestWrongTransportSaysWhichToTry: a server reached with the other MCP
// transport (an HTTP+SSE server configured as Streamable HTTP, and the
// reverse) is unavailable with an error that says which transport to
// try; a server that works with its transport is listed.
func TestWrongTransportSaysWhichToTry(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "s", Version: "1"}, nil)
	srv.AddTool(textTool("ping", func(map[string]any) *mcp.CallToolResult {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "pong"}}}
	}))
	sse := httptest.NewServer(mcp.NewSSEHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	defer sse.Close()
	streamable := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	defer streamable.Close()
	for _, tc := range []struct {
		name, url, transport, want string
	}{
		{"sse server as streamable", sse.URL, toolspec.MCPStreamable, `try "transport": "sse"`},
		{"streamable server as sse", streamable.URL, toolspec.MCPSSE, `remove "transport": "sse"`},
		{"sse server as sse", sse.URL, toolspec.MCPSSE, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := New(map[string][]toolspec.MCPServer{"a": {{Name: "srv", URL: tc.url, Transport: tc.transport}}}, Options{})
			got := m.Discover(context.Background(), "a", "")
			if tc.want == "" {
				if len(got.Unavailable) != 0 || len(got.Tools) != 1 {
					t.Fatalf("%+v", got)
				}
				return
			}
			if len(got.Unavailable) != 1 || !strings.Contains(got.Unavailable[0].Error, tc.want) {
				t.Fatalf("%+v", got)
			}
		})
	}
}
