package storetest

import (
	"reflect"
	"testing"
	"time"

	"github.com/baton-agents/baton/core"
)

// testDeliveries notes redelivered and stale deliveries of a run's steps
// and reads back their sums, ordered by step seq then call id, kept
// apart from another run's; a step's turn is the first note's that
// names one.
func testDeliveries(t *testing.T, newStore func(*testing.T) Store) {
	s := newStore(t)
	ctx := t.Context()
	if got, err := s.Deliveries(ctx, "run-none"); err != nil || len(got) != 0 {
		t.Fatalf("deliveries of a run with none: %v, %v", got, err)
	}
	model := core.Step{Kind: core.StepModelTurn, Format: core.StepFormat, RunID: "run-a", Seq: 3}
	toolB := core.Step{Kind: core.StepToolCall, Format: core.StepFormat, RunID: "run-a", Seq: 12, CallID: "call#b"}
	toolA := toolB
	toolA.CallID = "call-a"
	notes := []struct {
		run string
		n   core.DeliveryNote
	}{
		{"run-a", core.DeliveryNote{Step: toolB, Stale: true, At: t0.Add(4 * time.Second)}},
		{"run-a", core.DeliveryNote{Step: model, Turn: 2, Redelivered: true, At: t0.Add(time.Second)}},
		{"run-a", core.DeliveryNote{Step: model, Redelivered: true, Stale: true, At: t0.Add(2 * time.Second)}},
		{"run-a", core.DeliveryNote{Step: toolA, Turn: 0, Redelivered: true, At: t0.Add(3 * time.Second)}},
		{"run-b", core.DeliveryNote{Step: model, Stale: true, At: t0}},
		{"run-a", core.DeliveryNote{Step: model, Turn: 9, Stale: true, At: t0.Add(5 * time.Second)}},
		{"run-a", core.DeliveryNote{Step: toolB, Turn: 4, Redelivered: true, At: t0.Add(6 * time.Second)}},
	}
	for _, x := range notes {
		if err := s.NoteDelivery(ctx, x.run, x.n); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.Deliveries(ctx, "run-a")
	if err != nil {
		t.Fatal(err)
	}
	for i := range got {
		got[i].LastAt = got[i].LastAt.UTC()
	}
	want := []core.StepDeliveries{
		{StepSeq: 3, Kind: core.StepModelTurn, Turn: 2, Redeliveries: 2, Stale: 2, LastAt: t0.Add(5 * time.Second)},
		{StepSeq: 12, Kind: core.StepToolCall, ToolCallID: "call#b", Turn: 4, Redeliveries: 1, Stale: 1, LastAt: t0.Add(6 * time.Second)},
		{StepSeq: 12, Kind: core.StepToolCall, ToolCallID: "call-a", Redeliveries: 1, LastAt: t0.Add(3 * time.Second)},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("deliveries:\n got %+v\nwant %+v", got, want)
	}
	other, err := s.Deliveries(ctx, "run-b")
	if err != nil || len(other) != 1 || other[0].Stale != 1 || other[0].Redeliveries != 0 {
		t.Fatalf("another run's deliveries: %+v, %v", other, err)
	}
}
