package openai

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/baton-agents/baton/core"
	"github.com/baton-agents/baton/internal/providers/providertest"
)

// TestLoop drives a run through core's in-process runner with this
// provider: the tool call's parameters, the tool result and the usage go
// through the machine's state and transcript and back to the wire.
func TestLoop(t *testing.T) {
	srv := providertest.Replay(t, "loop", checkHeaders)
	var sleeps providertest.Sleeps
	p := suite.Provider(t, srv.URL, &sleeps, nil)
	decl, err := core.NormalizeServerTool(map[string]any{
		"name": "weather/current", "source": "http", "description": "Current weather for a city.",
		"parameters": map[string]any{"type": "object", "required": []any{"city"},
			"properties": map[string]any{"city": map[string]any{"type": "string"}, "days": map[string]any{"type": "integer"}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	var got core.ToolCall
	rn := &core.Runner{
		Machine: core.NewMachine(&core.FixedClock{}),
		Model:   p,
		Tools: core.ToolExecutorFunc(func(_ context.Context, c core.ToolCall) (any, error) {
			got = c
			return map[string]any{"temp_c": 21}, nil
		}),
	}
	run, err := rn.Start(context.Background(), core.StartInput{
		RunID: "r-loop", SessionID: "s-loop",
		Config:   core.RunConfig{Model: core.ModelSpec{Provider: Name, Model: "gpt-4o-mini"}, System: "Answer briefly.", Tools: []core.ToolDeclaration{decl}},
		Messages: []core.Message{{Role: core.RoleUser, Content: "Weather in Paris?"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	env := run.Envelope()
	if run.State.Status != core.StatusCompleted || env.FinalContent != "It is 21°C in Paris." {
		t.Fatalf("status %s, final %q", run.State.Status, env.FinalContent)
	}
	if got.ToolName != "weather/current" || got.ToolCallID != "call_w1" || got.Parameters["city"] != "Paris" {
		t.Errorf("tool call %+v", got)
	}
	u, _ := json.Marshal(env.Usage)
	if string(u) != `{"cache_read_tokens":96,"completion_tokens":21,"prompt_tokens":150,"total_tokens":171}` {
		t.Errorf("usage %s", u)
	}
	if env.RequestMetadata["request_id"] != "req_loop_2" {
		t.Errorf("request metadata %v", env.RequestMetadata)
	}
}
