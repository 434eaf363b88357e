package memory

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/baton-agents/baton/core"
)

// fakeStore is a small core.MemoryStore for this package's tests: the
// contract's semantics (Once, Since, erasure, id-ordered pages), with
// counters of the calls made.
type fakeStore struct {
	mu       sync.Mutex
	mems     map[core.MemoryScope]map[string]core.Memory
	erased   map[core.MemoryScope]time.Time
	once     map[core.MemoryScope]map[string][]string
	pageSize int
	pages    int
	writes   int
	failNext error
}

var _ core.MemoryStore = (*fakeStore)(nil)

func newFakeStore() *fakeStore {
	return &fakeStore{mems: map[core.MemoryScope]map[string]core.Memory{}, erased: map[core.MemoryScope]time.Time{},
		once: map[core.MemoryScope]map[string][]string{}, pageSize: 100}
}

func (f *fakeStore) WriteMemories(_ context.Context, w core.MemoryWrite) error {
	if err := w.Validate(); err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.failNext; err != nil {
		f.failNext = nil
		return err
	}
	if at, ok := f.erased[w.Scope]; ok && !w.Since.IsZero() && !at.Before(w.Since) {
		return core.ErrErased
	}
	if w.Once != "" {
		if _, done := f.once[w.Scope][w.Once]; done {
			return core.ErrMemoryDone
		}
		if f.once[w.Scope] == nil {
			f.once[w.Scope] = map[string][]string{}
		}
		ids := []string{}
		for _, m := range w.Put {
			ids = append(ids, m.ID)
		}
		f.once[w.Scope][w.Once] = ids
	}
	if f.mems[w.Scope] == nil {
		f.mems[w.Scope] = map[string]core.Memory{}
	}
	for _, m := range w.Put {
		m.Vector = slices.Clone(m.Vector)
		f.mems[w.Scope][m.ID] = m
	}
	for _, id := range w.Delete {
		delete(f.mems[w.Scope], id)
	}
	f.writes++
	return nil
}

func (f *fakeStore) Memories(_ context.Context, scope core.MemoryScope, cursor string, limit int) ([]core.Memory, string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.pages++
	if limit <= 0 {
		limit = f.pageSize
	}
	start := 0
	if cursor != "" {
		n, err := strconv.Atoi(cursor)
		if err != nil {
			return nil, "", fmt.Errorf("%w: bad cursor", core.ErrInvalidInput)
		}
		start = n
	}
	ids := make([]string, 0, len(f.mems[scope]))
	for id := range f.mems[scope] {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	end := min(start+limit, len(ids))
	var out []core.Memory
	for _, id := range ids[min(start, end):end] {
		m := f.mems[scope][id]
		m.Vector = slices.Clone(m.Vector)
		out = append(out, m)
	}
	next := ""
	if end < len(ids) {
		next = strconv.Itoa(end)
	}
	return out, next, nil
}

func (f *fakeStore) Memory(_ context.Context, scope core.MemoryScope, id string) (core.Memory, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	m, ok := f.mems[scope][id]
	if !ok {
		return core.Memory{}, core.ErrNotFound
	}
	return m, nil
}

func (f *fakeStore) DeleteMemory(_ context.Context, scope core.MemoryScope, id string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.mems[scope][id]; !ok {
		return core.ErrNotFound
	}
	delete(f.mems[scope], id)
	return nil
}

func (f *fakeStore) EraseMemories(_ context.Context, scope core.MemoryScope, at time.Time) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if at.After(f.erased[scope]) {
		f.erased[scope] = at
	}
	n := len(f.mems[scope])
	delete(f.mems, scope)
	return n, nil
}

func (f *fakeStore) MemoryOnce(_ context.Context, scope core.MemoryScope, once string) ([]string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	ids, ok := f.once[scope][once]
	if !ok {
		return nil, core.ErrNotFound
	}
	return ids, nil
}
