package core

import (
	"context"
	"testing"
)

// TestArenaOutputsOutsideTheRunner: a paused run's state carries its
// arena, and inputs applied to it outside the Runner still get outputs of
// their own: the first one is intact after the second, and after an
// input refused in between.
func TestArenaOutputsOutsideTheRunner(t *testing.T) {
	rn := &Runner{Machine: NewMachine(&FixedClock{T: t0}), Model: ScriptedModel{}}
	run, err := rn.Start(context.Background(), StartInput{RunID: "r", SessionID: "s", Messages: user("go"), RequestTools: []any{clientTool("client/ask")},
		Config: RunConfig{Model: scripted(turn("", call("c1", "client/ask", map[string]any{"day": "mon"})), turn("ok"))}})
	if err != nil || run.State.Status != StatusRuntimeToolPending || run.State.arena == nil {
		t.Fatalf("run %v: %v", run.State.Status, err)
	}
	first, err := rn.Machine.Apply(context.Background(), run.State, run.Transcript, Steer{Content: "one"})
	if err != nil {
		t.Fatal(err)
	}
	// An input refused meanwhile leaves the block with the first output.
	if _, err := rn.Machine.Apply(context.Background(), run.State, run.Transcript, ClientResult{RequestID: "no-such-request", Success: true}); err == nil {
		t.Fatal("a result for no request was accepted")
	}
	second, err := rn.Machine.Apply(context.Background(), run.State, run.Transcript, Cancel{Reason: "two"})
	if err != nil {
		t.Fatal(err)
	}
	if len(first.Events) != 1 || first.Events[0].Type != EventSteeringQueued || len(second.Events) == 0 || second.Events[0].Type != EventCancelled {
		t.Fatalf("outputs share their records: first %v, second %v", first.Events, second.Events)
	}
	// Through the Runner the block is lent again once an output is copied.
	if err := rn.Resume(context.Background(), run, Steer{Content: "three"}); err != nil || run.State.arena.output.lent {
		t.Fatalf("resume: %v, block still lent: %v", err, run.State.arena.output.lent)
	}
}

// TestSlab: values come from chunks that double up to slabMax; a slice
// is capped at its length, so appending past it never writes into the
// next value.
func TestSlab(t *testing.T) {
	var s slab[int]
	a, b := s.new(), s.new()
	*a, *b = 1, 2
	if a == b || *a != 1 || cap(s.free) != 14 {
		t.Fatalf("new: %d %d, %d free", *a, *b, cap(s.free))
	}
	x := s.slice(2)
	x = append(x, 7, 8)
	y := s.slice(1)
	y = append(y, 9)
	x = append(x, 10) // past its capacity: reallocates
	if y[0] != 9 || x[2] != 10 || len(s.slice(slabMax+1)) != 0 {
		t.Fatalf("slices overlap: %v %v", x, y)
	}
	if newOf[int](nil, nil) == nil || cap(sliceOf[int](nil, nil, 3)) != 3 {
		t.Fatal("without an arena values come from the heap")
	}
}

// TestSlabChunks: a slab's chunks double from 16 to slabMax values, a
// slice takes exactly the room left in a chunk without starting another,
// a larger one starts a new chunk, and only a slice of more than slabMax
// values comes from the heap.
func TestSlabChunks(t *testing.T) {
	var s slab[int]
	steps := []struct {
		name string
		take func()
		free int // values left in the current chunk
	}{
		{"new: the first chunk holds 16", func() { s.new() }, 15},
		{"slice of exactly the room left", func() { s.slice(15) }, 0},
		{"slice past the room: a chunk of 32", func() { s.slice(20) }, 12},
		{"slice of slabMax from a chunk", func() { s.slice(slabMax) }, 0},
		{"slice of more than slabMax from the heap", func() { s.slice(slabMax + 1) }, 0},
		{"chunks stay at slabMax", func() { s.new() }, slabMax - 1},
	}
	for _, st := range steps {
		st.take()
		if len(s.free) != st.free {
			t.Fatalf("%s: %d values left, want %d", st.name, len(s.free), st.free)
		}
	}
}
