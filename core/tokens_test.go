package core

import (
	"context"
	"strings"
	"testing"
	"time"
)

func TestScriptedModelStreamsChunksOnlyWithASink(t *testing.T) {
	spec := ModelSpec{Provider: ProviderScripted, Options: map[string]any{ScriptedChunkChars: float64(4)},
		Turns: []ScriptedTurn{{Content: "Hello, streaming world", Thinking: "hmm, ok"}}}
	req := ModelRequest{Turn: 1, Model: spec}
	var got []TokenDelta
	ctx := WithTokenSink(context.Background(), func(d TokenDelta) { got = append(got, d) })
	streamed, err := ScriptedModel{}.Complete(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	plain, err := ScriptedModel{}.Complete(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if streamed.Content != plain.Content || plain.Content != "Hello, streaming world" {
		t.Fatalf("streamed reply %q, plain %q", streamed.Content, plain.Content)
	}
	var text, thinking strings.Builder
	tokens := 0
	for _, d := range got {
		if len([]rune(d.Text)) > 4 {
			t.Fatalf("chunk %q is longer than chunk_chars", d.Text)
		}
		switch d.Kind {
		case DeltaToken:
			tokens++
			text.WriteString(d.Text)
		case DeltaThinking:
			if tokens > 0 {
				t.Fatal("thinking streamed after content")
			}
			thinking.WriteString(d.Text)
		}
	}
	if text.String() != plain.Content || thinking.String() != "hmm, ok" || tokens != 6 {
		t.Fatalf("deltas rebuild %q / %q in %d token chunks", text.String(), thinking.String(), tokens)
	}
}

func TestScriptedModelRejectsBadChunkOptions(t *testing.T) {
	ctx := WithTokenSink(context.Background(), func(TokenDelta) {})
	for _, opts := range []map[string]any{{ScriptedChunkChars: "four"}, {ScriptedChunkChars: float64(2), ScriptedChunkDelay: "soon"}} {
		_, err := ScriptedModel{}.Complete(ctx, ModelRequest{Turn: 1, Model: ModelSpec{Options: opts, Turns: []ScriptedTurn{{Content: "x"}}}})
		if err == nil || !strings.Contains(err.Error(), "scripted model") {
			t.Fatalf("options %v: err %v", opts, err)
		}
	}
}

func TestEmitTokenSwallowsSinkPanics(t *testing.T) {
	ctx := WithTokenSink(context.Background(), func(TokenDelta) { panic("boom") })
	if !StreamsTokens(ctx) || StreamsTokens(context.Background()) {
		t.Fatal("StreamsTokens")
	}
	EmitToken(ctx, TokenDelta{Kind: DeltaToken, Text: "x"})
}

func TestRunConfigRejectsBadScriptedChunking(t *testing.T) {
	cfg := RunConfig{Model: ModelSpec{Provider: ProviderScripted, Options: map[string]any{ScriptedChunkChars: float64(3), ScriptedChunkDelay: "-1s"}}}
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "chunk_delay") {
		t.Fatalf("err %v", err)
	}
	cfg.Model.Options[ScriptedChunkDelay] = "10ms"
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
}

// steppingClock moves on a second at each reading.
type steppingClock struct{ t time.Time }

func (c *steppingClock) Now() time.Time { c.t = c.t.Add(time.Second); return c.t }

// TestRunnerSinkStartsATurnBeforeItsTokens: the in-process runner's sink
// gets each streamed turn's turn_started before the turn's first token,
// once per turn, and the committed turn_started carries the time its
// model call began, not the reply's.
func TestRunnerSinkStartsATurnBeforeItsTokens(t *testing.T) {
	var sunk []Event
	clock := &steppingClock{t: t0}
	rn := &Runner{Machine: NewMachine(clock),
		Sink: EventSinkFunc(func(_ context.Context, ev Event) error { sunk = append(sunk, ev); return nil })}
	spec := scripted(turn("Hello there"), turn("Bye now"))
	spec.Options = map[string]any{ScriptedChunkChars: float64(4)}
	rn.Model = ScriptedModel{}
	run, err := rn.Start(context.Background(), StartInput{RunID: "r-1", SessionID: "s-1", Config: RunConfig{Model: spec}, Messages: user("hi")})
	if err != nil {
		t.Fatal(err)
	}
	starts := map[int]int{}
	for i, ev := range sunk {
		switch ev.Type {
		case EventTurnStarted:
			starts[ev.Turn]++
		case EventToken:
			if starts[ev.Turn] != 1 {
				t.Fatalf("sink event %d: a token of turn %d before its start: %+v", i, ev.Turn, sunk)
			}
		}
	}
	if starts[1] != 1 {
		t.Fatalf("turn starts %v", starts)
	}
	for _, ev := range run.Events {
		if ev.Type != EventTurnStarted {
			continue
		}
		var reply time.Time
		for _, later := range run.Events {
			if later.Type == EventMessagesUpdated && later.Turn == ev.Turn {
				reply = later.At
			}
		}
		if !ev.At.Before(reply) {
			t.Fatalf("turn %d started at %s, not before its reply at %s", ev.Turn, ev.At, reply)
		}
	}
}
