package memstore

import (
	"context"
	"sort"
	"time"

	"github.com/baton-agents/baton/core"
)

var _ core.DeltaStore = (*Store)(nil)

// PutDeltas stores a batch of streamed deltas, replacing one at the same
// position, and drops the run's expired batches.
func (s *Store) PutDeltas(_ context.Context, b core.DeltaBatch) error {
	b.Deltas = append([]core.TokenDelta(nil), b.Deltas...)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.deltas == nil {
		s.deltas = map[string][]core.DeltaBatch{}
	}
	list := s.deltas[b.RunID][:0:0]
	for _, old := range s.deltas[b.RunID] {
		if old.Pos != b.Pos && old.ExpiresAt.After(b.ExpiresAt.Add(-deltaRetention)) {
			list = append(list, old)
		}
	}
	i := sort.Search(len(list), func(i int) bool { return !list[i].Pos.Before(b.Pos) })
	list = append(list, core.DeltaBatch{})
	copy(list[i+1:], list[i:])
	list[i] = b
	s.deltas[b.RunID] = list
	return nil
}

// deltaRetention bounds how long expired batches are kept: a put drops
// the run's batches that expired this long before the new one expires.
const deltaRetention = time.Hour

// Deltas returns the run's unexpired batches at or after from, in order.
func (s *Store) Deltas(_ context.Context, runID string, from core.DeltaPos, now time.Time, limit int) ([]core.DeltaBatch, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []core.DeltaBatch
	for _, b := range s.deltas[runID] {
		if b.Pos.Before(from) || !now.Before(b.ExpiresAt) {
			continue
		}
		b.Deltas = append([]core.TokenDelta(nil), b.Deltas...)
		out = append(out, b)
		if limit > 0 && len(out) == limit {
			break
		}
	}
	return out, nil
}
