package memstore

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/baton-agents/baton/core"
)

var _ core.MemoryStore = (*Store)(nil)

// memScope is one scope's memories: by id, with their ids sorted; when
// it was last erased; and the ids each Once key's write put (kept
// through erasures).
type memScope struct {
	mems     map[string]core.Memory
	ids      []string
	erasedAt time.Time
	once     map[string][]string
}

// cloneMemory copies m's vector, so nothing the store keeps or returns
// aliases the caller's memory.
func cloneMemory(m core.Memory) core.Memory {
	if len(m.Vector) == 0 {
		m.Vector = nil
	} else {
		m.Vector = slices.Clone(m.Vector)
	}
	return m
}

// memScopeLocked returns scope's memories, creating them when create is
// set (nil otherwise).
func (s *Store) memScopeLocked(scope core.MemoryScope, create bool) *memScope {
	key := pairKey(scope.Tenant, scope.Subject)
	ms := s.memories[key]
	if ms == nil && create {
		ms = &memScope{mems: map[string]core.Memory{}, once: map[string][]string{}}
		s.memories[key] = ms
	}
	return ms
}

// WriteMemories applies a write atomically.
func (s *Store) WriteMemories(_ context.Context, w core.MemoryWrite) error {
	if err := w.Validate(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	ms := s.memScopeLocked(w.Scope, true)
	if w.Once != "" {
		if _, ok := ms.once[w.Once]; ok {
			return fmt.Errorf("memory write %s: %w", w.Once, core.ErrMemoryDone)
		}
	}
	if !w.Since.IsZero() && !ms.erasedAt.IsZero() && !ms.erasedAt.Before(w.Since) {
		return fmt.Errorf("memory write: %w", core.ErrErased)
	}
	put := make([]string, 0, len(w.Put))
	for _, m := range w.Put {
		if _, ok := ms.mems[m.ID]; !ok {
			i, _ := slices.BinarySearch(ms.ids, m.ID)
			ms.ids = slices.Insert(ms.ids, i, m.ID)
		}
		ms.mems[m.ID] = cloneMemory(m)
		put = append(put, m.ID)
	}
	for _, id := range w.Delete {
		ms.removeLocked(id)
	}
	if w.Once != "" {
		ms.once[w.Once] = put
	}
	return nil
}

// removeLocked removes memory id, reporting whether the scope had it.
func (ms *memScope) removeLocked(id string) bool {
	if _, ok := ms.mems[id]; !ok {
		return false
	}
	delete(ms.mems, id)
	if i, ok := slices.BinarySearch(ms.ids, id); ok {
		ms.ids = slices.Delete(ms.ids, i, i+1)
	}
	return true
}

// Memories pages a scope's memories in id order, at most
// core.MemoryPageSize a call.
func (s *Store) Memories(_ context.Context, scope core.MemoryScope, cursor string, limit int) ([]core.Memory, string, error) {
	if err := scope.Validate(); err != nil {
		return nil, "", err
	}
	after, limit, err := core.MemoryPage(cursor, limit)
	if err != nil {
		return nil, "", err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	ms := s.memScopeLocked(scope, false)
	if ms == nil {
		return []core.Memory{}, "", nil
	}
	start := 0
	if after != "" {
		i, found := slices.BinarySearch(ms.ids, after)
		if found {
			i++
		}
		start = i
	}
	end := min(start+limit, len(ms.ids))
	out := make([]core.Memory, 0, end-start)
	for _, id := range ms.ids[start:end] {
		out = append(out, cloneMemory(ms.mems[id]))
	}
	next := ""
	if end < len(ms.ids) {
		next = core.EncodeMemoryCursor(ms.ids[end-1])
	}
	return out, next, nil
}

// Memory reads one memory of a scope.
func (s *Store) Memory(_ context.Context, scope core.MemoryScope, id string) (core.Memory, error) {
	if err := scope.Validate(); err != nil {
		return core.Memory{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if ms := s.memScopeLocked(scope, false); ms != nil {
		if m, ok := ms.mems[id]; ok {
			return cloneMemory(m), nil
		}
	}
	return core.Memory{}, fmt.Errorf("memory %s: %w", id, core.ErrNotFound)
}

// DeleteMemory removes one memory of a scope.
func (s *Store) DeleteMemory(_ context.Context, scope core.MemoryScope, id string) error {
	if err := scope.Validate(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if ms := s.memScopeLocked(scope, false); ms == nil || !ms.removeLocked(id) {
		return fmt.Errorf("memory %s: %w", id, core.ErrNotFound)
	}
	return nil
}

// EraseMemories records the scope's erasure at at (or keeps a later one)
// and deletes its memories; its Once keys stay.
func (s *Store) EraseMemories(_ context.Context, scope core.MemoryScope, at time.Time) (int, error) {
	if err := scope.Validate(); err != nil {
		return 0, err
	}
	if at.IsZero() {
		return 0, fmt.Errorf("%w: an erasure needs a time", core.ErrInvalidInput)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	ms := s.memScopeLocked(scope, true)
	if at.After(ms.erasedAt) {
		ms.erasedAt = at
	}
	n := len(ms.mems)
	ms.mems, ms.ids = map[string]core.Memory{}, nil
	return n, nil
}

// MemoryOnce returns the ids the write of a Once key put.
func (s *Store) MemoryOnce(_ context.Context, scope core.MemoryScope, once string) ([]string, error) {
	if err := scope.Validate(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if ms := s.memScopeLocked(scope, false); ms != nil {
		if ids, ok := ms.once[once]; ok {
			return slices.Clone(ids), nil
		}
	}
	return nil, fmt.Errorf("memory write %s: %w", once, core.ErrNotFound)
}
