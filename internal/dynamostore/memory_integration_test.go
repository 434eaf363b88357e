//go:build integration

package dynamostore

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/baton-agents/baton/core"
)

// TestMemoryRoundTrips pins the requests of the memory calls: a write is
// one transaction, a page one query, a read one GetItem, an erasure one
// UpdateItem, the query's pages and a BatchWriteItem per 25 memories.
// Pages of large memories end at DynamoDB's 1 MB before the 1,000 limit.
func TestMemoryRoundTrips(t *testing.T) {
	f, c := newFixture(t)
	ctx := t.Context()
	scope := core.MemoryScope{Tenant: "acme", Subject: "alice"}
	vec := make([]int8, 1024)
	for i := range vec {
		vec[i] = int8(i)
	}
	const n = 400 // about 3 KB each: more than one 1 MB page
	c.take()
	for i := 0; i < n; i += core.MaxMemoryWrite {
		w := core.MemoryWrite{Scope: scope, Once: fmt.Sprintf("extract:run_%d", i), Since: time.Unix(1, 0)}
		for j := i; j < i+core.MaxMemoryWrite; j++ {
			w.Put = append(w.Put, core.Memory{ID: fmt.Sprintf("mem_%04d", j), Subject: "alice", Text: strings.Repeat("x", core.MaxMemoryText),
				CreatedAt: time.Unix(2, 0), UpdatedAt: time.Unix(2, 0), Vector: vec, Embedder: "e"})
		}
		if err := f.s.WriteMemories(ctx, w); err != nil {
			t.Fatal(err)
		}
	}
	if got := c.take(); fmt.Sprint(got) != fmt.Sprintf("map[TransactWriteItems:%d]", n/core.MaxMemoryWrite) {
		t.Fatalf("%d writes sent %v", n/core.MaxMemoryWrite, got)
	}
	page, next, err := f.s.Memories(ctx, scope, "", 0)
	if err != nil || len(page) == 0 || len(page) >= n || next == "" {
		t.Fatalf("the first page: %d memories, next %q, %v", len(page), next, err)
	}
	if got := c.take(); fmt.Sprint(got) != "map[Query:1]" {
		t.Fatalf("a page sent %v", got)
	}
	total, pages := len(page), 1
	for next != "" {
		if page, next, err = f.s.Memories(ctx, scope, next, 0); err != nil {
			t.Fatal(err)
		}
		total, pages = total+len(page), pages+1
	}
	if total != n || pages > 3 {
		t.Fatalf("%d memories in %d pages", total, pages)
	}
	c.take()
	if _, err := f.s.Memory(ctx, scope, "mem_0007"); err != nil {
		t.Fatal(err)
	}
	if got := c.take(); fmt.Sprint(got) != "map[GetItem:1]" {
		t.Fatalf("a read sent %v", got)
	}
	if deleted, err := f.s.EraseMemories(ctx, scope, time.Unix(3, 0)); err != nil || deleted != n {
		t.Fatalf("erase: %d, %v", deleted, err)
	}
	if got := c.take(); got["UpdateItem"] != 1 || got["BatchWriteItem"] != n/25 || got["Query"] < 2 || len(got) != 3 {
		t.Fatalf("an erasure sent %v", got)
	}
}
