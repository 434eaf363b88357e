package durable_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/baton-agents/baton/core"
	"github.com/baton-agents/baton/internal/durable"
)

// failingDeltas is a delta store whose writes fail.
type failingDeltas struct{ puts int }

func (f *failingDeltas) PutDeltas(context.Context, core.DeltaBatch) error {
	f.puts++
	return errors.New("throttled")
}

func (f *failingDeltas) Deltas(context.Context, string, core.DeltaPos, time.Time, int) ([]core.DeltaBatch, error) {
	return nil, nil
}

func streamingModel(turns ...core.ScriptedTurn) *core.ModelSpec {
	m := scripted(turns...)
	m.Options = map[string]any{core.ScriptedChunkChars: 3}
	return m
}

// TestWorkerPublishesTokenDeltas: a worker performing a streamed model
// turn writes its deltas as batches of the turn, in order, before the
// turn is committed; the committed run is the same as without streaming.
func TestWorkerPublishesTokenDeltas(t *testing.T) {
	content := strings.Repeat("The quick brown fox jumps. ", 20)
	h := newHarness(t, nil)
	h.eng.Deltas = h.store
	h.eng.Limits.DeltaBatchBytes = 64
	runID := h.start(t, streamingModel(core.ScriptedTurn{Content: content, Thinking: "let me think"}), nil)
	h.pump(t)
	batches, err := h.store.Deltas(context.Background(), runID, core.DeltaPos{}, t0, 0)
	if err != nil {
		t.Fatal(err)
	}
	var text, thinking strings.Builder
	next := 0
	for i, b := range batches {
		if b.Pos.Turn != 1 || b.Pos.Batch != i || b.Pos.Attempt != t0.UnixMilli() || b.Index != next || !b.ExpiresAt.Equal(t0.Add(10*time.Minute)) {
			t.Fatalf("batch %d: %+v (next index %d)", i, b, next)
		}
		next += len(b.Deltas)
		for _, d := range b.Deltas {
			if d.Kind == core.DeltaThinking {
				thinking.WriteString(d.Text)
			} else {
				text.WriteString(d.Text)
			}
		}
	}
	if text.String() != content || thinking.String() != "let me think" {
		t.Fatalf("deltas rebuild %q / %q", text.String(), thinking.String())
	}
	if len(batches) < 2 {
		t.Fatalf("%d batches for %d bytes with a 64-byte batch limit", len(batches), len(content))
	}
	if env := h.envelope(t, runID); env.FinalContent != content || !env.Completed {
		t.Fatalf("envelope %+v", env)
	}
}

// TestTokenStreamingOffAndFailingWrites: a run with stream_tokens false
// writes no deltas, and failing delta writes never fail or change the
// step.
func TestTokenStreamingOffAndFailingWrites(t *testing.T) {
	h := newHarness(t, nil)
	h.eng.Deltas = h.store
	no := false
	runID := h.start(t, streamingModel(turn("hello there")), func(r *durable.StartRequest) { r.Overrides.StreamTokens = &no })
	h.pump(t)
	if batches, _ := h.store.Deltas(context.Background(), runID, core.DeltaPos{}, t0, 0); len(batches) != 0 {
		t.Fatalf("a run with stream_tokens false wrote %d batches", len(batches))
	}
	if env := h.envelope(t, runID); env.FinalContent != "hello there" {
		t.Fatalf("envelope %+v", env)
	}

	h2 := newHarness(t, nil)
	failing := &failingDeltas{}
	h2.eng.Deltas = failing
	runID = h2.start(t, streamingModel(turn("hello there")), nil)
	h2.pump(t)
	if env := h2.envelope(t, runID); env.FinalContent != "hello there" || !env.Completed || failing.puts == 0 {
		t.Fatalf("with failing delta writes (%d): %+v", failing.puts, env)
	}
}
