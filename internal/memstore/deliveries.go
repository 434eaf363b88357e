package memstore

import (
	"cmp"
	"context"
	"slices"

	"github.com/baton-agents/baton/core"
)

// NoteDelivery adds a delivery note to its step's sums.
func (s *Store) NoteDelivery(_ context.Context, runID string, n core.DeliveryNote) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	m := s.deliveries[runID]
	if m == nil {
		m = map[deliveryKey]core.StepDeliveries{}
		s.deliveries[runID] = m
	}
	k := deliveryKey{n.Step.Seq, n.Step.CallID}
	d, ok := m[k]
	if !ok {
		d = core.StepDeliveries{StepSeq: n.Step.Seq, Kind: n.Step.Kind, ToolCallID: n.Step.CallID}
	}
	if d.Turn == 0 {
		d.Turn = n.Turn
	}
	if n.Redelivered {
		d.Redeliveries++
	}
	if n.Stale {
		d.Stale++
	}
	d.LastAt = n.At
	m[k] = d
	return nil
}

// Deliveries returns the run's delivery sums by step seq, then call id.
func (s *Store) Deliveries(_ context.Context, runID string) ([]core.StepDeliveries, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []core.StepDeliveries
	for _, d := range s.deliveries[runID] {
		out = append(out, d)
	}
	slices.SortFunc(out, func(a, b core.StepDeliveries) int {
		return cmp.Or(cmp.Compare(a.StepSeq, b.StepSeq), cmp.Compare(a.ToolCallID, b.ToolCallID))
	})
	return out, nil
}
