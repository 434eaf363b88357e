package memory

import (
	"context"
	"sync"
	"testing"

	"github.com/baton-agents/baton/core"
	"github.com/baton-agents/baton/internal/memstore"
)

// countingStore is a store (memstore in the tests) that counts the
// pages read and the writes made; with pageSize set, a Memories call
// asking for the store's page size gets that many.
type countingStore struct {
	core.MemoryStore
	mu       sync.Mutex
	pages    int
	writes   int
	pageSize int
	// failWrites, when set, fails every write.
	failWrites error
}

// backingStore is the store the tests' harness counts: memstore, or
// DynamoDB in TestServiceOnDynamoDB (-tags integration).
var backingStore = func(*testing.T) core.MemoryStore { return memstore.New() }

func newStore(store core.MemoryStore) *countingStore { return &countingStore{MemoryStore: store} }

func (c *countingStore) Memories(ctx context.Context, scope core.MemoryScope, cursor string, limit int) ([]core.Memory, string, error) {
	c.mu.Lock()
	c.pages++
	if limit == 0 {
		limit = c.pageSize
	}
	c.mu.Unlock()
	return c.MemoryStore.Memories(ctx, scope, cursor, limit)
}

func (c *countingStore) WriteMemories(ctx context.Context, w core.MemoryWrite) error {
	if c.failWrites != nil {
		return c.failWrites
	}
	err := c.MemoryStore.WriteMemories(ctx, w)
	if err == nil {
		c.mu.Lock()
		c.writes++
		c.mu.Unlock()
	}
	return err
}

func (c *countingStore) counters() benchCounters {
	c.mu.Lock()
	defer c.mu.Unlock()
	return benchCounters{pages: c.pages}
}

// all returns the scope's memories by id.
func (c *countingStore) all(t *testing.T, scope core.MemoryScope) map[string]core.Memory {
	t.Helper()
	out := map[string]core.Memory{}
	cursor := ""
	for {
		page, next, err := c.MemoryStore.Memories(context.Background(), scope, cursor, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range page {
			out[m.ID] = m
		}
		if next == "" {
			return out
		}
		cursor = next
	}
}
