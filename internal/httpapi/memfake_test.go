package httpapi_test

import (
	"context"
	"encoding/base64"
	"fmt"
	"slices"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/baton-agents/baton/core"
)

// installMemoryStore returns the API's memory store; until the embedded
// store keeps memories it installs fakeMemories, a map-backed store of
// the port's contract.
func (e *env) installMemoryStore(t *testing.T) core.MemoryStore {
	t.Helper()
	if e.api.Memories != nil {
		return e.api.Memories
	}
	f := &fakeMemories{mems: map[core.MemoryScope]map[string]core.Memory{}, erased: map[core.MemoryScope]time.Time{}, once: map[string][]string{}}
	e.api.Memories = f
	return f
}

type fakeMemories struct {
	mu     sync.Mutex
	mems   map[core.MemoryScope]map[string]core.Memory
	erased map[core.MemoryScope]time.Time
	once   map[string][]string
}

func (f *fakeMemories) WriteMemories(_ context.Context, w core.MemoryWrite) error {
	if err := w.Validate(); err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if at, ok := f.erased[w.Scope]; ok && !w.Since.IsZero() && !at.Before(w.Since) {
		return core.ErrErased
	}
	key := w.Scope.Tenant + "\x00" + w.Scope.Subject + "\x00" + w.Once
	if w.Once != "" {
		if _, done := f.once[key]; done {
			return core.ErrMemoryDone
		}
	}
	if f.mems[w.Scope] == nil {
		f.mems[w.Scope] = map[string]core.Memory{}
	}
	var ids []string
	for _, m := range w.Put {
		f.mems[w.Scope][m.ID] = m
		ids = append(ids, m.ID)
	}
	for _, id := range w.Delete {
		delete(f.mems[w.Scope], id)
	}
	if w.Once != "" {
		f.once[key] = ids
	}
	return nil
}

func (f *fakeMemories) Memories(_ context.Context, scope core.MemoryScope, cursor string, limit int) ([]core.Memory, string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	after := ""
	if cursor != "" {
		b, err := base64.RawURLEncoding.DecodeString(cursor)
		if err != nil || len(b) < 2 || b[0] != '>' {
			return nil, "", fmt.Errorf("%w: bad cursor", core.ErrInvalidInput)
		}
		after = string(b[1:])
	}
	if limit <= 0 {
		limit = 100
	}
	var ids []string
	for id := range f.mems[scope] {
		if id > after {
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	next := ""
	if len(ids) > limit {
		ids = ids[:limit]
		next = base64.RawURLEncoding.EncodeToString([]byte(">" + ids[limit-1]))
	}
	out := []core.Memory{}
	for _, id := range ids {
		out = append(out, f.mems[scope][id])
	}
	return out, next, nil
}

func (f *fakeMemories) Memory(_ context.Context, scope core.MemoryScope, id string) (core.Memory, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	m, ok := f.mems[scope][id]
	if !ok {
		return core.Memory{}, core.ErrNotFound
	}
	return m, nil
}

func (f *fakeMemories) DeleteMemory(_ context.Context, scope core.MemoryScope, id string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.mems[scope][id]; !ok {
		return core.ErrNotFound
	}
	delete(f.mems[scope], id)
	return nil
}

func (f *fakeMemories) EraseMemories(_ context.Context, scope core.MemoryScope, at time.Time) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if at.After(f.erased[scope]) {
		f.erased[scope] = at
	}
	n := len(f.mems[scope])
	delete(f.mems, scope)
	return n, nil
}

func (f *fakeMemories) MemoryOnce(_ context.Context, scope core.MemoryScope, once string) ([]string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	ids, ok := f.once[scope.Tenant+"\x00"+scope.Subject+"\x00"+once]
	if !ok {
		return nil, core.ErrNotFound
	}
	return slices.Clone(ids), nil
}
