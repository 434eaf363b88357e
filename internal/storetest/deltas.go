package storetest

import (
	"reflect"
	"testing"
	"time"

	"github.com/baton-agents/baton/core"
)

// testDeltas: batches come back in position order (turn, attempt,
// batch) from a position on, a batch at the same position is replaced,
// expired batches are not returned, and runs do not see each other's.
func testDeltas(t *testing.T, newStore func(*testing.T) Store) {
	s := newStore(t)
	ctx := t.Context()
	exp := t0.Add(5 * time.Minute)
	batch := func(run string, turn int, attempt int64, n, index int, text string) core.DeltaBatch {
		return core.DeltaBatch{RunID: run, Pos: core.DeltaPos{Turn: turn, Attempt: attempt, Batch: n}, Index: index, ExpiresAt: exp,
			Deltas: []core.TokenDelta{{Kind: core.DeltaToken, Text: text}, {Kind: core.DeltaThinking, Text: "ü" + text}}}
	}
	puts := []core.DeltaBatch{
		batch("run-a", 2, 1000, 0, 0, "t2a0"),
		batch("run-a", 1, 5000, 1, 2, "t1-late1"),
		batch("run-a", 1, 900, 0, 0, "t1-early0"),
		batch("run-a", 1, 5000, 0, 0, "t1-late0"),
		batch("run-a", 10, 1, 0, 0, "t10"),
		batch("run-b", 1, 900, 0, 0, "other run"),
		batch("run-a", 1, 5000, 1, 2, "t1-late1 again"),
	}
	for _, b := range puts {
		if err := s.PutDeltas(ctx, b); err != nil {
			t.Fatal(err)
		}
	}
	texts := func(from core.DeltaPos, now time.Time, limit int) []string {
		t.Helper()
		got, err := s.Deltas(ctx, "run-a", from, now, limit)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, b := range got {
			if b.RunID != "run-a" || len(b.Deltas) != 2 || b.Deltas[1].Text != "ü"+b.Deltas[0].Text || !b.ExpiresAt.Equal(exp) ||
				b.Deltas[0].Kind != core.DeltaToken || b.Deltas[1].Kind != core.DeltaThinking {
				t.Fatalf("batch read back as %+v", b)
			}
			out = append(out, b.Deltas[0].Text)
		}
		return out
	}
	want := []string{"t1-early0", "t1-late0", "t1-late1 again", "t2a0", "t10"}
	if got := texts(core.DeltaPos{}, t0, 0); !reflect.DeepEqual(got, want) {
		t.Fatalf("all batches: %q, want %q", got, want)
	}
	if got := texts(core.DeltaPos{Turn: 1, Attempt: 5000, Batch: 1}, t0, 0); !reflect.DeepEqual(got, want[2:]) {
		t.Fatalf("from a position: %q, want %q", got, want[2:])
	}
	if got := texts(core.DeltaPos{Turn: 2}, t0, 1); !reflect.DeepEqual(got, want[3:4]) {
		t.Fatalf("from turn 2, limit 1: %q", got)
	}
	if got := texts(core.DeltaPos{}, exp, 0); len(got) != 0 {
		t.Fatalf("expired batches returned: %q", got)
	}
	got, err := s.Deltas(ctx, "run-a", core.DeltaPos{Turn: 1, Attempt: 5000, Batch: 1}, t0, 0)
	if err != nil || len(got) == 0 || got[0].Index != 2 {
		t.Fatalf("index of a batch: %+v, %v", got, err)
	}
	if got, err := s.Deltas(ctx, "run-none", core.DeltaPos{}, t0, 0); err != nil || len(got) != 0 {
		t.Fatalf("unknown run: %v, %v", got, err)
	}
}
