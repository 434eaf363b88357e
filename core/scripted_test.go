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

// TestScriptedTurnPlainPrefix: with the run's defaults (the script's
// leading unconditional turns counted), a turn past them is still
// chosen among the turns that apply, and a script that is all plain is
// exhausted past its end (an error, not a panic).
func TestScriptedTurnPlainPrefix(t *testing.T) {
	spec := RunConfig{Model: ModelSpec{Provider: ProviderScripted, Turns: []ScriptedTurn{
		{Content: "first"},
		{Content: "calendar", IfOffered: "client/get_calendar"},
		{Content: "last"},
	}}}.withDefaults().Model
	calendar := []ToolDeclaration{{Name: "client/get_calendar"}}
	for _, c := range []struct {
		tools []ToolDeclaration
		turn  int
		want  string
	}{{nil, 1, "first"}, {nil, 2, "last"}, {calendar, 2, "calendar"}, {calendar, 3, "last"}} {
		reply, err := ScriptedModel{}.Complete(context.Background(), ModelRequest{Turn: c.turn, Model: spec, Tools: c.tools})
		if err != nil || reply.Content != c.want {
			t.Errorf("turn %d with %d tools: %q %v, want %q", c.turn, len(c.tools), reply.Content, err, c.want)
		}
	}
	plain := RunConfig{Model: scripted(turn("a"), turn("b"))}.withDefaults().Model
	if _, err := (ScriptedModel{}).Complete(context.Background(), ModelRequest{Turn: 3, Model: plain}); err == nil || !strings.Contains(err.Error(), "exhausted") {
		t.Fatalf("turn 3 of 2: %v", err)
	}
}

// TestScriptedStopReason: a reply with tool calls stops for tool_use,
// one without ends its turn.
func TestScriptedStopReason(t *testing.T) {
	spec := scripted(turn("calling", call("c1", "ability/search", nil)), turn("done"))
	for i, want := range []string{"tool_use", "end_turn"} {
		reply, err := ScriptedModel{}.Complete(context.Background(), ModelRequest{Turn: i + 1, Model: spec})
		if err != nil || reply.StopReason != want {
			t.Errorf("turn %d: stop reason %q %v, want %q", i+1, reply.StopReason, err, want)
		}
	}
}

// TestScriptedTurnZero: a request for turn 0 (no model turn has that
// number) finds no scripted turn: an error, not a panic, even for a
// script whose turns are all plain.
func TestScriptedTurnZero(t *testing.T) {
	spec := RunConfig{Model: scripted(turn("a"), turn("b"))}.withDefaults().Model
	if _, err := (ScriptedModel{}).Complete(context.Background(), ModelRequest{Turn: 0, Model: spec}); err == nil || !strings.Contains(err.Error(), "exhausted") {
		t.Fatalf("turn 0: %v", err)
	}
}

// TestScriptedPlainPrefixStopsAtAConditionalTurn: a script that starts
// with a conditional turn (IfOffered or IfUserSaid) has no plain prefix:
// its first turn is played only when it applies.
func TestScriptedPlainPrefixStopsAtAConditionalTurn(t *testing.T) {
	for _, first := range []ScriptedTurn{{Content: "calendar", IfOffered: "client/get_calendar"}, {Content: "weather", IfUserSaid: "weather"}} {
		spec := RunConfig{Model: ModelSpec{Provider: ProviderScripted, Turns: []ScriptedTurn{first, {Content: "plain"}}}}.withDefaults().Model
		reply, err := ScriptedModel{}.Complete(context.Background(), ModelRequest{Turn: 1, Model: spec, Messages: user("hello")})
		if err != nil || reply.Content != "plain" {
			t.Errorf("first turn %q: %q %v, want the plain turn", first.Content, reply.Content, err)
		}
	}
}

// TestScriptedSummaryMetadata: a summary reply names the model in its
// request metadata when the spec names one.
func TestScriptedSummaryMetadata(t *testing.T) {
	for _, model := range []string{"script-1", ""} {
		reply, err := ScriptedModel{}.Complete(context.Background(), ModelRequest{Purpose: PurposeSummary, Summarizes: 3, Model: ModelSpec{Provider: ProviderScripted, Model: model}})
		if err != nil || reply.RequestMetadata["purpose"] != PurposeSummary {
			t.Fatalf("%q: %+v %v", model, reply, err)
		}
		if got, has := reply.RequestMetadata["model"]; has != (model != "") || (has && got != model) {
			t.Errorf("model %q: metadata %v", model, reply.RequestMetadata)
		}
	}
}

// TestScriptedChunkDelayZero: a chunk_delay of "0s" is no delay, not an
// error; a negative one is refused.
func TestScriptedChunkDelayZero(t *testing.T) {
	for delay, ok := range map[string]bool{"0s": true, "-1ms": false} {
		_, _, err := scriptedChunking(map[string]any{ScriptedChunkChars: float64(2), ScriptedChunkDelay: delay})
		if (err == nil) != ok {
			t.Errorf("chunk_delay %q: %v", delay, err)
		}
	}
}

// TestScriptedChunkDelayZeroNeverWaits: a chunk_delay of "0s" streams as
// no chunk_delay does, never waiting between chunks, so even a call
// whose context is already done gets every chunk and the reply (a
// timer of 0 would race the context at every chunk).
func TestScriptedChunkDelayZeroNeverWaits(t *testing.T) {
	content := strings.Repeat("ab", 32)
	for _, opts := range []map[string]any{
		{ScriptedChunkChars: float64(1)},
		{ScriptedChunkChars: float64(1), ScriptedChunkDelay: "0s"},
	} {
		var got []TokenDelta
		ctx, cancel := context.WithCancel(WithTokenSink(context.Background(), func(d TokenDelta) { got = append(got, d) }))
		cancel()
		spec := ModelSpec{Provider: ProviderScripted, Options: opts, Turns: []ScriptedTurn{{Content: content}}}
		reply, err := ScriptedModel{}.Complete(ctx, ModelRequest{Turn: 1, Model: spec})
		if err != nil || reply.Content != content || len(got) != len(content) {
			t.Errorf("options %v: %v, reply %q, %d deltas, want %d", opts, err, reply.Content, len(got), len(content))
		}
	}
}

// TestScriptedStreamStopsOnCancel: with a chunk_delay, streaming waits
// between chunks and gives up (a retryable error) once the call's
// context is done, without emitting the rest.
func TestScriptedStreamStopsOnCancel(t *testing.T) {
	var got []TokenDelta
	ctx, cancel := context.WithCancel(WithTokenSink(context.Background(), func(d TokenDelta) { got = append(got, d) }))
	cancel()
	spec := ModelSpec{Provider: ProviderScripted, Options: map[string]any{ScriptedChunkChars: float64(2), ScriptedChunkDelay: "1h"}, Turns: []ScriptedTurn{{Content: "Hello"}}}
	_, err := ScriptedModel{}.Complete(ctx, ModelRequest{Turn: 1, Model: spec})
	if err == nil || !IsRetryable(err) || len(got) != 0 {
		t.Fatalf("cancelled: %v (retryable %v), %d deltas", err, err != nil && IsRetryable(err), len(got))
	}
}
