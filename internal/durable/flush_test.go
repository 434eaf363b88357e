package durable

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/baton-agents/baton/core"
)

type batchRecorder struct {
	core.DeltaStore
	batches []core.DeltaBatch
}

func (r *batchRecorder) PutDeltas(_ context.Context, b core.DeltaBatch) error {
	r.batches = append(r.batches, b)
	return nil
}

// TestFlushBatches: pending deltas are written as batches that each take
// deltas until their text reaches DeltaBatchBytes (one delta at least),
// numbered on from the publisher's position and index.
func TestFlushBatches(t *testing.T) {
	cases := []struct {
		sizes []int // the deltas' text lengths
		want  string
	}{
		{[]int{5, 5, 5}, "[5 5] [5]"},
		{[]int{4, 5, 5}, "[4 5 5]"},
		{[]int{10, 1}, "[10] [1]"},
		{[]int{25, 3, 9}, "[25] [3 9]"},
		{[]int{1}, "[1]"},
		{nil, ""},
	}
	for _, tc := range cases {
		t.Run(fmt.Sprint(tc.sizes), func(t *testing.T) {
			rec := &batchRecorder{}
			p := &publisher{store: rec, limits: Limits{DeltaBatchBytes: 10}.withDefaults(), clock: &core.FixedClock{T: time.Unix(0, 0)},
				log: slog.New(slog.DiscardHandler), runID: "run_1", pos: core.DeltaPos{Turn: 2, Batch: 3}, index: 7, full: make(chan struct{}, 1)}
			for _, n := range tc.sizes {
				p.pending = append(p.pending, core.TokenDelta{Text: strings.Repeat("x", n)})
			}
			p.flush(context.Background())
			var got []string
			batch, index := 3, 7
			for _, b := range rec.batches {
				var sizes []string
				for _, d := range b.Deltas {
					sizes = append(sizes, fmt.Sprint(len(d.Text)))
				}
				got = append(got, "["+strings.Join(sizes, " ")+"]")
				if b.RunID != "run_1" || b.Pos.Turn != 2 || b.Pos.Batch != batch || b.Index != index {
					t.Fatalf("batch %+v, want batch %d at index %d", b, batch, index)
				}
				batch, index = batch+1, index+len(b.Deltas)
			}
			if strings.Join(got, " ") != tc.want {
				t.Fatalf("batches %s, want %s", strings.Join(got, " "), tc.want)
			}
			if len(p.pending) != 0 || p.size != 0 {
				t.Fatalf("pending after the flush: %d deltas, %d bytes", len(p.pending), p.size)
			}
		})
	}
}
