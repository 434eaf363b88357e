package core

import (
	"context"
	"strings"
	"testing"
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
