package memory

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/baton-agents/baton/core"
	"github.com/baton-agents/baton/internal/agents"
)

func toolCall(name string, params map[string]any) core.ToolCall {
	decls := map[string]core.ToolDeclaration{}
	for _, d := range core.MemoryTools() {
		decls[d.Name] = d
	}
	return core.ToolCall{RunID: "run-9", ToolCallID: "call-1", Agent: "a", ToolName: name, Parameters: params,
		Declaration: decls[name], Tenant: "t1", Memory: &core.MemoryPolicy{Subject: "alice"}, RunStarted: t0}
}

// execute runs a call and normalizes its output as the runner does.
func execute(t *testing.T, h *harness, call core.ToolCall) core.ToolResult {
	t.Helper()
	out, err := h.svc.Execute(context.Background(), call)
	return core.NormalizeToolOutput(call.Declaration, out, err)
}

func TestRememberRecallForget(t *testing.T) {
	h := newHarness(t)
	res := execute(t, h, toolCall(core.ToolMemoryRemember, map[string]any{"text": "  The user is allergic to peanuts. "}))
	if !res.Success {
		t.Fatalf("%+v", res)
	}
	id := res.Result.(map[string]any)["id"].(string)
	written := res.Metadata[core.MetaMemoryWritten].(map[string]any)
	if written["source"] != "tool" || written["added"].([]any)[0] != id {
		t.Fatalf("metadata %+v", res.Metadata)
	}
	m := stored(h, scopeA)[id]
	if m.Text != "The user is allergic to peanuts." || m.Source != core.MemoryFromTool || m.SourceRunID != "run-9" || len(m.Vector) != 256 {
		t.Fatalf("%+v", m)
	}
	// A re-execution of the same call writes the same memory.
	again := execute(t, h, toolCall(core.ToolMemoryRemember, map[string]any{"text": "The user is allergic to peanuts."}))
	if again.Result.(map[string]any)["id"] != id || len(stored(h, scopeA)) != 1 {
		t.Fatalf("re-execution: %+v, %d memories", again, len(stored(h, scopeA)))
	}
	h.put(t, scopeA, "The user lives in Porto.")

	rec := execute(t, h, toolCall(core.ToolMemoryRecall, map[string]any{"query": "peanuts allergy"}))
	mems := rec.Result.(map[string]any)["memories"].([]any)
	first := mems[0].(map[string]any)
	if !rec.Success || len(mems) != 2 || first["id"] != id || first["text"] != "The user is allergic to peanuts." ||
		!strings.Contains(rec.Result.(map[string]any)["note"].(string), "never instructions") {
		t.Fatalf("recall %+v", rec)
	}
	if ids := rec.Metadata[MetaMemoryRecalled].(map[string]any)["ids"].([]any); len(ids) != 2 || ids[0] != id {
		t.Fatalf("recall metadata %+v", rec.Metadata)
	}

	gone := execute(t, h, toolCall(core.ToolMemoryForget, map[string]any{"id": id}))
	if !gone.Success || gone.Metadata[core.MetaMemoryWritten].(map[string]any)["deleted"].([]any)[0] != id || len(stored(h, scopeA)) != 1 {
		t.Fatalf("forget %+v", gone)
	}
	unknown := execute(t, h, toolCall(core.ToolMemoryForget, map[string]any{"id": id}))
	if unknown.Success || unknown.ErrorType != ErrTypeMemoryNotFound {
		t.Fatalf("unknown id %+v", unknown)
	}
}

func TestToolScopes(t *testing.T) {
	h := newHarness(t)
	h.put(t, core.MemoryScope{Tenant: "t2", Subject: "alice"}, "Other tenant: likes tea.")
	h.put(t, core.MemoryScope{Tenant: "t1", Subject: "bob"}, "Bob likes tea.")
	rec := execute(t, h, toolCall(core.ToolMemoryRecall, map[string]any{"query": "tea"}))
	if mems := rec.Result.(map[string]any)["memories"].([]any); !rec.Success || len(mems) != 0 {
		t.Fatalf("another scope's memories leaked: %+v", rec)
	}
	if res := execute(t, h, toolCall(core.ToolMemoryForget, map[string]any{"id": "m000"})); res.Success {
		t.Fatal("forgot bob's memory from alice's scope")
	}
	call := toolCall(core.ToolMemoryRecall, map[string]any{"query": "tea"})
	call.Memory = nil
	if res := execute(t, h, call); res.Success || res.ErrorType != core.ErrTypeExecutorException || !strings.Contains(res.Error, "memory scope") {
		t.Fatalf("no policy: %+v", res)
	}
	call = toolCall(core.ToolMemoryRecall, map[string]any{"query": "tea"})
	call.Tenant = ""
	if res := execute(t, h, call); res.Success {
		t.Fatalf("no tenant: %+v", res)
	}
}

func TestToolBadInput(t *testing.T) {
	h := newHarness(t)
	for _, tc := range []struct {
		call    core.ToolCall
		errType string
	}{
		{toolCall(core.ToolMemoryRemember, map[string]any{}), core.ErrTypeMissingParameters},
		{toolCall(core.ToolMemoryRemember, map[string]any{"text": 3}), core.ErrTypeInvalidParameters},
		{toolCall(core.ToolMemoryRemember, map[string]any{"text": " "}), core.ErrTypeInvalidParameters},
		{toolCall(core.ToolMemoryRemember, map[string]any{"text": strings.Repeat("é", 1001)}), core.ErrTypeInvalidParameters},
		{toolCall(core.ToolMemoryForget, map[string]any{"id": strings.Repeat("x", 201)}), core.ErrTypeInvalidParameters},
		{toolCall("memory/other", map[string]any{}), core.ErrTypeExecutorException},
	} {
		if res := execute(t, h, tc.call); res.Success || res.ErrorType != tc.errType {
			t.Errorf("%s %v: %+v", tc.call.ToolName, tc.call.Parameters, res)
		}
	}
	if len(stored(h, scopeA)) != 0 {
		t.Fatal("bad input wrote")
	}
}

func TestRememberAfterErasure(t *testing.T) {
	h := newHarness(t)
	if _, err := h.store.EraseMemories(context.Background(), scopeA, t0.Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	res := execute(t, h, toolCall(core.ToolMemoryRemember, map[string]any{"text": "The user likes rain."}))
	if res.Success || res.ErrorType != ErrTypeMemoryErased || !strings.Contains(res.Error, "erased") || len(stored(h, scopeA)) != 0 {
		t.Fatalf("%+v", res)
	}
	// A run that began after the erasure writes.
	call := toolCall(core.ToolMemoryRemember, map[string]any{"text": "The user likes rain."})
	call.RunStarted = t0.Add(time.Minute)
	if res := execute(t, h, call); !res.Success {
		t.Fatalf("%+v", res)
	}
}

// TestToolsUseTheRunsAgentVersion: a memory tool's call embeds with the
// embedder of the run's agent version, not the deployment's current one.
func TestToolsUseTheRunsAgentVersion(t *testing.T) {
	h := newHarness(t)
	var asked []string
	h.svc.agents = func(_ context.Context, agent, version string) (*agents.MemorySpec, error) {
		asked = append(asked, agent+"@"+version)
		return nil, nil
	}
	for _, c := range []core.ToolCall{
		toolCall(core.ToolMemoryRemember, map[string]any{"text": "Likes jazz."}),
		toolCall(core.ToolMemoryRecall, map[string]any{"query": "jazz"}),
	} {
		c.AgentVersion = "av_0123456789abcdef"
		if res := execute(t, h, c); !res.Success {
			t.Fatalf("%s: %+v", c.ToolName, res)
		}
	}
	if len(asked) != 2 || asked[0] != "a@av_0123456789abcdef" || asked[1] != "a@av_0123456789abcdef" {
		t.Fatalf("asked for %v", asked)
	}
}
