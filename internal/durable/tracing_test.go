package durable_test

import (
	"context"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/baton-agents/baton/core"
	"github.com/baton-agents/baton/internal/agents"
	"github.com/baton-agents/baton/internal/durable"
	"github.com/baton-agents/baton/internal/executors"
	"github.com/baton-agents/baton/internal/telemetry"
)

// TestModelAndToolSpans: what a run's chat and execute_tool spans say:
// the chat span is named by the requested model when there is one, the
// response model is the provider's when it names one (else the requested
// one), a stop reason is the finish reason, an unknown model is left out
// rather than recorded empty; a tool's failed output without an error
// type is a tool_error.
func TestModelAndToolSpans(t *testing.T) {
	for _, tc := range []struct {
		name      string
		model     string // requested
		chatNames []string
	}{
		{"a named model", "m1", []string{"chat m1", "chat m1"}},
		{"no model named", "", []string{"chat", "chat"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reg, err := agents.Parse([]byte(agentsFile))
			if err != nil {
				t.Fatal(err)
			}
			goh := executors.NewGoRegistry()
			goh.Register("count", func(context.Context, core.ToolCall) (any, error) {
				return map[string]any{"success": false, "error": "no such contact"}, nil
			})
			router, err := executors.NewRouter(reg.Executors(), goh, nil)
			if err != nil {
				t.Fatal(err)
			}
			h := newHarness(t, nil)
			rec := tracetest.NewSpanRecorder()
			h.opts.Tools = router
			h.opts.Telemetry = telemetry.Settings{Provider: sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))}
			h.eng = durable.New(h.opts)
			replies := []core.ModelReply{
				{ToolCalls: []core.ToolCallRequest{{ID: "c1", Name: "ability/search", Parameters: map[string]any{}}},
					RequestMetadata: map[string]any{"model": "m1-2026-01"}, StopReason: "tool_use"},
				{Content: "Done.", RequestMetadata: map[string]any{"model": ""}},
			}
			turn := 0
			h.model = modelFunc(func(context.Context, core.ModelRequest) (core.ModelReply, error) {
				r := replies[turn]
				turn++
				return r, nil
			})
			h.start(t, &core.ModelSpec{Provider: core.ProviderScripted, Model: tc.model}, nil)
			h.pump(t)

			var chats, tools []sdktrace.ReadOnlySpan
			for _, s := range rec.Ended() {
				switch {
				case s.Name() == "chat" || len(s.Name()) > 5 && s.Name()[:5] == "chat ":
					chats = append(chats, s)
				case s.Name() == "execute_tool ability/search":
					tools = append(tools, s)
				}
			}
			if len(chats) != 2 || len(tools) != 1 {
				t.Fatalf("%d chat spans, %d execute_tool spans; want 2 and 1", len(chats), len(tools))
			}
			attr := func(s sdktrace.ReadOnlySpan, key string) (attribute.Value, bool) {
				for _, kv := range s.Attributes() {
					if string(kv.Key) == key {
						return kv.Value, true
					}
				}
				return attribute.Value{}, false
			}
			for i, s := range chats {
				if s.Name() != tc.chatNames[i] {
					t.Errorf("chat span %d named %q, want %q", i, s.Name(), tc.chatNames[i])
				}
				if v, ok := attr(s, "gen_ai.request.model"); ok != (tc.model != "") || v.AsString() != tc.model {
					t.Errorf("chat span %d: request model %q (set %v), want %q", i, v.AsString(), ok, tc.model)
				}
			}
			if v, _ := attr(chats[0], "gen_ai.response.model"); v.AsString() != "m1-2026-01" {
				t.Errorf("the first chat's response model %q, want the provider's", v.AsString())
			}
			if v, ok := attr(chats[1], "gen_ai.response.model"); ok != (tc.model != "") || v.AsString() != tc.model {
				t.Errorf("the second chat's response model %q (set %v), want the requested %q", v.AsString(), ok, tc.model)
			}
			if v, _ := attr(chats[0], "gen_ai.response.finish_reasons"); len(v.AsStringSlice()) != 1 || v.AsStringSlice()[0] != "tool_use" {
				t.Errorf("the first chat's finish reasons %v, want [tool_use]", v.AsStringSlice())
			}
			if _, ok := attr(chats[1], "gen_ai.response.finish_reasons"); ok {
				t.Error("a reply without a stop reason has finish reasons")
			}
			if v, _ := attr(tools[0], "error.type"); v.AsString() != "tool_error" {
				t.Errorf("the tool span's error.type %q, want tool_error", v.AsString())
			}
		})
	}
}
