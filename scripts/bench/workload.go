package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/baton-agents/baton/core"
)

// The workload: each turn is one model call that asks for one tool call
// (a Go tool handler returning a result of the configured size), then a
// final answer. A run of T turns has T tool-call turns plus the final
// turn, so 2T+1 steps, and its transcript holds 2T+2 messages (the user
// message, a tool_call and a tool_result per turn, the final answer).

const (
	// agentSlug is the benchmark agent.
	agentSlug = "bench"
	// benchProvider is the model provider that generates the workload's
	// replies from the turn number (see loopModel).
	benchProvider = "bench"
	// toolName is the workload's server tool.
	toolName = "ability/fetch_blob"
	// tenant owns every benchmark run.
	tenant = "bench"
)

// agentsJSON registers the benchmark agent: max_turns far above the
// longest run (500 tool turns + the final one) and a tool result cap
// above the largest result (64 KiB plus JSON quoting).
const agentsJSON = `{"agents":[{"slug":"bench","label":"Benchmark agent",
 "model":{"provider":"bench"},
 "allow_overrides":["model","max_turns"],
 "system":"You are a benchmark agent: call the tool when asked, then answer.",
 "max_turns":600,
 "tool_result_max_bytes":131072,
 "tools":[{"name":"ability/fetch_blob","source":"go",
   "description":"Return a text blob of the requested size.",
   "parameters":{"type":"object","required":["i","bytes"],
     "properties":{"i":{"type":"integer"},"bytes":{"type":"integer"}}},
   "executor":{"type":"go","handler":"blob"}}]}]}`

// blobHandler returns a string of exactly parameters.bytes bytes.
func blobHandler(_ context.Context, call core.ToolCall) (any, error) {
	n, err := intParam(call.Parameters["bytes"])
	if err != nil || n < 0 || n > 1<<20 {
		return nil, fmt.Errorf("bytes: want an integer from 0 to 1 MiB, got %v", call.Parameters["bytes"])
	}
	return blob(n), nil
}

// blob returns n bytes of printable ASCII that JSON encodes unescaped.
func blob(n int) string {
	const text = "The quick brown fox jumps over the lazy dog; pack my box with five dozen liquor jugs. "
	var b strings.Builder
	b.Grow(n)
	for b.Len() < n {
		b.WriteString(text[:min(len(text), n-b.Len())])
	}
	return b.String()
}

// intParam reads an integer that may have been decoded as json.Number,
// float64 or int.
func intParam(v any) (int, error) {
	switch x := v.(type) {
	case json.Number:
		n, err := strconv.Atoi(x.String())
		return n, err
	case float64:
		return int(x), nil
	case int:
		return x, nil
	case int64:
		return int(x), nil
	}
	return 0, fmt.Errorf("not a number: %T", v)
}

// loopModel is the workload's model: turn t ≤ turns asks for one tool
// call, turn turns+1 answers. Its parameters live in the run's model
// options, so the stored run configuration has the same size however
// many turns the run has (the scripted provider keeps its whole script
// in the configuration instead; see scriptedSpec).
type loopModel struct{}

// Complete returns the reply of req.Turn.
func (loopModel) Complete(_ context.Context, req core.ModelRequest) (core.ModelReply, error) {
	turns, err := intParam(req.Model.Options["turns"])
	if err != nil {
		return core.ModelReply{}, fmt.Errorf("bench model: options.turns: %w", err)
	}
	size, err := intParam(req.Model.Options["result_bytes"])
	if err != nil {
		return core.ModelReply{}, fmt.Errorf("bench model: options.result_bytes: %w", err)
	}
	usage := map[string]any{"prompt_tokens": json.Number("20"), "completion_tokens": json.Number("8")}
	meta := map[string]any{"provider": benchProvider, "turn": json.Number(strconv.Itoa(req.Turn))}
	if req.Turn > turns {
		return core.ModelReply{Content: finalAnswer(turns), Usage: usage, RequestMetadata: meta, StopReason: "end_turn"}, nil
	}
	call := core.ToolCallRequest{ID: fmt.Sprintf("call_%d", req.Turn), Name: toolName,
		Parameters: map[string]any{"i": json.Number(strconv.Itoa(req.Turn)), "bytes": json.Number(strconv.Itoa(size))}}
	return core.ModelReply{ToolCalls: []core.ToolCallRequest{call}, Usage: usage, RequestMetadata: meta, StopReason: "tool_use"}, nil
}

// finalAnswer is the workload's last assistant message.
func finalAnswer(turns int) string { return fmt.Sprintf("Done: %d tool calls.", turns) }

// models routes the benchmark provider and the scripted one.
func models() core.ModelRouter {
	return core.ModelRouter{benchProvider: loopModel{}, core.ProviderScripted: core.ScriptedModel{}}
}

// workload is one run's shape.
type workload struct {
	Turns       int  `json:"turns"`
	ResultBytes int  `json:"result_bytes"`
	Scripted    bool `json:"scripted,omitempty"`
	// NoChain runs the workload with the worker's chaining off: every
	// step goes through the queue (the comparison's baseline).
	NoChain bool `json:"no_chain,omitempty"`
}

func (w workload) String() string {
	s := fmt.Sprintf("%d turns × %s", w.Turns, sizeName(w.ResultBytes))
	if w.Scripted {
		s += " (scripted provider)"
	}
	if w.NoChain {
		s += " (chaining off)"
	}
	return s
}

// steps is the number of steps of a run: T tool calls and T+1 model turns.
func (w workload) steps() int { return 2*w.Turns + 1 }

// spec is the model the run uses.
func (w workload) spec() *core.ModelSpec {
	if w.Scripted {
		return w.scriptedSpec()
	}
	return &core.ModelSpec{Provider: benchProvider, Options: map[string]any{
		"turns": json.Number(strconv.Itoa(w.Turns)), "result_bytes": json.Number(strconv.Itoa(w.ResultBytes)),
	}}
}

// scriptedSpec is the same workload as a script for the scripted
// provider, whose turns are stored in the run configuration.
func (w workload) scriptedSpec() *core.ModelSpec {
	usage := map[string]any{"prompt_tokens": json.Number("20"), "completion_tokens": json.Number("8")}
	turns := make([]core.ScriptedTurn, 0, w.Turns+1)
	for i := 1; i <= w.Turns; i++ {
		turns = append(turns, core.ScriptedTurn{Usage: usage, ToolCalls: []core.ToolCallRequest{{
			ID: fmt.Sprintf("call_%d", i), Name: toolName,
			Parameters: map[string]any{"i": json.Number(strconv.Itoa(i)), "bytes": json.Number(strconv.Itoa(w.ResultBytes))},
		}}})
	}
	turns = append(turns, core.ScriptedTurn{Content: finalAnswer(w.Turns), Usage: usage})
	return &core.ModelSpec{Provider: core.ProviderScripted, Turns: turns}
}

// userMessage starts every run.
func userMessage() []core.Message {
	return []core.Message{{Role: core.RoleUser, Content: "Fetch the blobs, one per turn, then say you are done."}}
}

// check verifies a finished run: status completed, the transcript holds
// 2T+2 messages, and the last one is the final answer. A failure means
// the workload itself is wrong, and the benchmark exits non-zero.
func (w workload) check(status string, transcript []core.Message) error {
	if status != core.StatusCompleted {
		return fmt.Errorf("workload %s: status %q, want %q", w, status, core.StatusCompleted)
	}
	if got, want := len(transcript), 2*w.Turns+2; got != want {
		return fmt.Errorf("workload %s: transcript has %d messages, want %d", w, got, want)
	}
	last := transcript[len(transcript)-1]
	if last.Role != core.RoleAssistant || last.Content != finalAnswer(w.Turns) {
		return fmt.Errorf("workload %s: final answer missing: last message is %s %q", w, last.Role, last.Content)
	}
	results := 0
	for _, m := range transcript {
		if m.Role == core.RoleToolResult {
			if len(m.Content) != w.ResultBytes {
				return fmt.Errorf("workload %s: tool result %s has %d bytes, want %d", w, m.ToolCallID(), len(m.Content), w.ResultBytes)
			}
			results++
		}
	}
	if results != w.Turns {
		return fmt.Errorf("workload %s: %d tool results, want %d", w, results, w.Turns)
	}
	return nil
}

// sizeName prints a result size: 100 B, 8 KB, 64 KB.
func sizeName(n int) string {
	if n >= 1024 && n%1024 == 0 {
		return fmt.Sprintf("%d KB", n/1024)
	}
	return fmt.Sprintf("%d B", n)
}
