package memstore

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/baton-agents/baton/core"
)

var _ core.EvalStore = (*Store)(nil)

// CreateEval stores a new eval.
func (s *Store) CreateEval(_ context.Context, e core.EvalRecord) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.evals[e.ID]; ok {
		return fmt.Errorf("create eval %s: %w: it exists", e.ID, core.ErrConflict)
	}
	e.Dataset = bytes.Clone(e.Dataset)
	s.evals[e.ID] = e
	return nil
}

// GetEval reads an eval of tenant's.
func (s *Store) GetEval(_ context.Context, tenant, id string) (core.EvalRecord, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.evals[id]
	if !ok || e.Tenant != tenant {
		return core.EvalRecord{}, fmt.Errorf("eval %s: %w", id, core.ErrNotFound)
	}
	e.Dataset = bytes.Clone(e.Dataset)
	return e, nil
}

// ListEvals lists tenant's evals newest first, without their datasets.
func (s *Store) ListEvals(_ context.Context, tenant string, limit int, cursor string) ([]core.EvalRecord, string, error) {
	if limit < 1 {
		return nil, "", fmt.Errorf("%w: limit must be at least 1", core.ErrInvalidInput)
	}
	after := ""
	if cursor != "" {
		key, err := core.DecodeRunCursor(cursor)
		if err != nil {
			return nil, "", err
		}
		after = key
	}
	s.mu.Lock()
	var all []core.EvalRecord
	for _, e := range s.evals {
		if e.Tenant == tenant {
			e.Dataset = nil
			all = append(all, e)
		}
	}
	s.mu.Unlock()
	key := func(e core.EvalRecord) string { return core.RunListKey(e.CreatedAt, e.ID) }
	slices.SortFunc(all, func(a, b core.EvalRecord) int { return cmp.Compare(key(b), key(a)) })
	var out []core.EvalRecord
	for _, e := range all {
		if after != "" && key(e) >= after {
			continue
		}
		if len(out) == limit {
			return out, core.EncodeRunCursor(key(out[len(out)-1])), nil
		}
		out = append(out, e)
	}
	return out, "", nil
}

// CancelEval marks an eval cancelled, once.
func (s *Store) CancelEval(_ context.Context, tenant, id string, at time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.evals[id]
	if !ok || e.Tenant != tenant {
		return fmt.Errorf("eval %s: %w", id, core.ErrNotFound)
	}
	if !e.Cancelled {
		e.Cancelled, e.CancelledAt = true, &at
		s.evals[id] = e
	}
	return nil
}

// PutEvalResult stores a case's result unless one is stored.
func (s *Store) PutEvalResult(_ context.Context, evalID string, r core.EvalResult) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.evals[evalID]; !ok {
		return false, fmt.Errorf("eval %s: %w", evalID, core.ErrNotFound)
	}
	rs := s.evalResults[evalID]
	if rs == nil {
		rs = map[int]core.EvalResult{}
		s.evalResults[evalID] = rs
	}
	if _, ok := rs[r.Case]; ok {
		return false, nil
	}
	r.Data = bytes.Clone(r.Data)
	rs[r.Case] = r
	return true, nil
}

// EvalResults lists an eval's scored cases by case.
func (s *Store) EvalResults(_ context.Context, evalID string) ([]core.EvalResult, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]core.EvalResult, 0, len(s.evalResults[evalID]))
	for _, r := range s.evalResults[evalID] {
		r.Data = bytes.Clone(r.Data)
		out = append(out, r)
	}
	slices.SortFunc(out, func(a, b core.EvalResult) int { return cmp.Compare(a.Case, b.Case) })
	return out, nil
}
