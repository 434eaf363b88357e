package storetest

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/baton-agents/baton/core"
)

// The memory contract (core.MemoryStore): a scope's memories are put,
// replaced, read, listed in id order page by page and deleted; nothing
// crosses scopes; a write is all or nothing, at most once per Once key,
// and refused after an erasure of its scope at or after its Since.

var (
	alice    = core.MemoryScope{Tenant: "acme", Subject: "alice"}
	bob      = core.MemoryScope{Tenant: "acme", Subject: "bob"}
	alice2   = core.MemoryScope{Tenant: "globex", Subject: "alice"}
	hashA    = core.MemoryScope{Tenant: "a#b", Subject: "c"}
	hashB    = core.MemoryScope{Tenant: "a", Subject: "b#c"}
	memScope = []core.MemoryScope{alice, bob, alice2, hashA, hashB}
)

// memory is a memory of scope's subject written at t0.
func memory(scope core.MemoryScope, id, text string, vector ...int8) core.Memory {
	return core.Memory{ID: id, Subject: scope.Subject, Text: text, Source: core.MemoryFromTool, SourceRunID: "run_1",
		CreatedAt: t0, UpdatedAt: t0, Vector: vector, Embedder: "scripted-64"}
}

type memTest struct {
	t   *testing.T
	ctx context.Context
	s   Store
}

func newMemTest(t *testing.T, newStore func(*testing.T) Store) *memTest {
	return &memTest{t: t, ctx: context.Background(), s: newStore(t)}
}

func (m *memTest) write(w core.MemoryWrite) {
	m.t.Helper()
	if err := m.s.WriteMemories(m.ctx, w); err != nil {
		m.t.Fatalf("write to %+v: %v", w.Scope, err)
	}
}

// put writes n memories id-000… to scope, at most MaxMemoryWrite a
// write.
func (m *memTest) put(scope core.MemoryScope, prefix string, n int) {
	m.t.Helper()
	for i := 0; i < n; i += core.MaxMemoryWrite {
		w := core.MemoryWrite{Scope: scope}
		for j := i; j < min(n, i+core.MaxMemoryWrite); j++ {
			w.Put = append(w.Put, memory(scope, fmt.Sprintf("%s-%03d", prefix, j), fmt.Sprintf("fact %d of %s", j, scope.Subject), int8(j), -int8(j)))
		}
		m.write(w)
	}
}

// all lists scope's memories page by page, limit at a time.
func (m *memTest) all(scope core.MemoryScope, limit int) []core.Memory {
	m.t.Helper()
	var out []core.Memory
	cursor := ""
	for pages := 0; ; pages++ {
		if pages > 1000 {
			m.t.Fatalf("list %+v: more than 1000 pages", scope)
		}
		page, next, err := m.s.Memories(m.ctx, scope, cursor, limit)
		if err != nil {
			m.t.Fatalf("list %+v after %q: %v", scope, cursor, err)
		}
		if limit > 0 && len(page) > limit {
			m.t.Fatalf("list %+v: a page of %d, limit %d", scope, len(page), limit)
		}
		if len(page) == 0 && next != "" {
			m.t.Fatalf("list %+v: an empty page with a next cursor", scope)
		}
		out = append(out, page...)
		if next == "" {
			return out
		}
		cursor = next
	}
}

func (m *memTest) ids(scope core.MemoryScope) []string {
	m.t.Helper()
	var ids []string
	for _, mem := range m.all(scope, 0) {
		ids = append(ids, mem.ID)
	}
	return ids
}

func (m *memTest) read(scope core.MemoryScope, id string) core.Memory {
	m.t.Helper()
	got, err := m.s.Memory(m.ctx, scope, id)
	if err != nil {
		m.t.Fatalf("read %s of %+v: %v", id, scope, err)
	}
	return got
}

func (m *memTest) wantNone(scope core.MemoryScope, id string) {
	m.t.Helper()
	if got, err := m.s.Memory(m.ctx, scope, id); !errors.Is(err, core.ErrNotFound) {
		m.t.Fatalf("read %s of %+v: %+v, %v; want not found", id, scope, got, err)
	}
}

func (m *memTest) wantIDs(scope core.MemoryScope, want ...string) {
	m.t.Helper()
	if got := m.ids(scope); !slices.Equal(got, want) {
		m.t.Fatalf("memories of %+v: %v, want %v", scope, got, want)
	}
}

func sameMemory(t *testing.T, got, want core.Memory) {
	t.Helper()
	g, w := got, want
	g.CreatedAt, g.UpdatedAt, w.CreatedAt, w.UpdatedAt = time.Time{}, time.Time{}, time.Time{}, time.Time{}
	if !reflect.DeepEqual(g, w) || !got.CreatedAt.Equal(want.CreatedAt) || !got.UpdatedAt.Equal(want.UpdatedAt) {
		t.Fatalf("memory %s:\n got %+v\nwant %+v", want.ID, got, want)
	}
}

// testMemoriesRoundTrip: memories read back as written (texts up to the
// limit, every int8 of a vector, no vector as nil), list in id order page
// by page, and nothing returned aliases what was written or another
// result.
func testMemoriesRoundTrip(t *testing.T, newStore func(*testing.T) Store) {
	m := newMemTest(t, newStore)
	vec := make([]int8, 256)
	for i := range vec {
		vec[i] = int8(i - 128)
	}
	long := strings.Repeat("é", core.MaxMemoryText/2)
	a := memory(alice, "mem_b", "Prefers window seats.", vec...)
	a.CreatedAt, a.UpdatedAt = t0.Add(1234567891*time.Nanosecond), t0.Add(time.Hour+5*time.Nanosecond)
	a.Source, a.SourceRunID = core.MemoryFromExtraction, "run_77"
	b := memory(alice, "mem_a", long)
	b.Vector, b.Embedder, b.Source, b.SourceRunID = nil, "", "", ""
	c := memory(alice, "mem_c/é #1", "Lives in Lyon.", 127, -128, 0, 1, -1)
	input := slices.Clone(a.Vector)
	w := core.MemoryWrite{Scope: alice, Put: []core.Memory{a, b, c}}
	m.write(w)
	w.Put[0].Vector[0] = 99 // the caller's slice, after the write
	for _, want := range []core.Memory{a, b, c} {
		if want.ID == a.ID {
			want.Vector = input
		}
		sameMemory(t, m.read(alice, want.ID), want)
	}
	a.Vector = input
	got := m.read(alice, "mem_b")
	got.Vector[0] = 42
	sameMemory(t, m.read(alice, "mem_b"), a)
	m.wantNone(alice, "mem_none")

	// Pages of every size, in id order.
	m.put(alice, "mem_d", 57)
	var want []string
	for _, mem := range m.all(alice, 0) {
		want = append(want, mem.ID)
	}
	if len(want) != 60 || !slices.IsSorted(want) || want[0] != "mem_a" || want[1] != "mem_b" || want[59] != "mem_d-056" {
		t.Fatalf("one page of all: %d ids %v", len(want), want)
	}
	for _, limit := range []int{1, 7, 25, 59, 60, 61, 5000} {
		all := m.all(alice, limit)
		if len(all) != 60 {
			t.Fatalf("limit %d: %d memories", limit, len(all))
		}
		for i, mem := range all {
			if mem.ID != want[i] {
				t.Fatalf("limit %d: memory %d is %s, want %s", limit, i, mem.ID, want[i])
			}
		}
		sameMemory(t, all[1], a)
	}
	page, next, err := m.s.Memories(m.ctx, alice, "", 60)
	if err != nil || len(page) != 60 || next != "" {
		t.Fatalf("a page of exactly all: %d memories, next %q, %v", len(page), next, err)
	}
	page, next, err = m.s.Memories(m.ctx, alice, "", 2)
	if err != nil || len(page) != 2 || next == "" {
		t.Fatalf("the first page of two: %d, %q, %v", len(page), next, err)
	}
	page[0].Vector = append(page[0].Vector, 1)
	if again, _, _ := m.s.Memories(m.ctx, alice, "", 2); !reflect.DeepEqual(again[1].Vector, input) {
		t.Fatalf("a page's vector changed: %v", again[1].Vector)
	}
	if page, next, err = m.s.Memories(m.ctx, bob, "", 0); err != nil || len(page) != 0 || next != "" {
		t.Fatalf("an empty scope: %+v, %q, %v", page, next, err)
	}
	for _, bad := range []string{"!!", "not a cursor", base64.RawURLEncoding.EncodeToString([]byte("a\x00b")),
		base64.RawURLEncoding.EncodeToString([]byte(strings.Repeat("x", core.MaxMemoryID+1))), "bWVtX2E="} {
		if _, _, err := m.s.Memories(m.ctx, alice, bad, 0); !errors.Is(err, core.ErrInvalidInput) {
			t.Fatalf("cursor %q: %v, want invalid input", bad, err)
		}
	}
	if _, _, err := m.s.Memories(m.ctx, alice, "", -1); !errors.Is(err, core.ErrInvalidInput) {
		t.Fatalf("a negative limit: %v", err)
	}
}

// testMemoriesReplaceDelete: a put replaces the memory of its id; a
// write's Delete removes memories and ignores unknown ids; DeleteMemory
// of an unknown id is ErrNotFound.
func testMemoriesReplaceDelete(t *testing.T, newStore func(*testing.T) Store) {
	m := newMemTest(t, newStore)
	m.write(core.MemoryWrite{Scope: alice, Put: []core.Memory{memory(alice, "m1", "Likes tea.", 1, 2), memory(alice, "m2", "Has a dog."), memory(alice, "m3", "Works nights.")}})
	upd := memory(alice, "m1", "Likes green tea.", 3, 4, 5)
	upd.UpdatedAt, upd.Source = t0.Add(time.Hour), core.MemoryFromExtraction
	m.write(core.MemoryWrite{Scope: alice, Put: []core.Memory{upd}, Delete: []string{"m2", "m_unknown"}})
	sameMemory(t, m.read(alice, "m1"), upd)
	m.wantNone(alice, "m2")
	m.wantIDs(alice, "m1", "m3")
	m.write(core.MemoryWrite{Scope: alice, Delete: []string{"m2"}}) // deleted already
	if err := m.s.DeleteMemory(m.ctx, alice, "m3"); err != nil {
		t.Fatalf("delete m3: %v", err)
	}
	for _, id := range []string{"m3", "m_unknown", strings.Repeat("i", 3000), "a\x00b"} {
		if err := m.s.DeleteMemory(m.ctx, alice, id); !errors.Is(err, core.ErrNotFound) {
			t.Fatalf("delete %.20q: %v, want not found", id, err)
		}
		m.wantNone(alice, id)
	}
	if _, err := m.s.MemoryOnce(m.ctx, alice, strings.Repeat("o", 3000)); !errors.Is(err, core.ErrNotFound) {
		t.Fatalf("MemoryOnce of a key no write could use: %v", err)
	}
	m.wantIDs(alice, "m1")
}

// testMemoriesScopes: the same ids in five scopes (another subject,
// another tenant, and tenants and subjects holding the key separator)
// stay apart under every call.
func testMemoriesScopes(t *testing.T, newStore func(*testing.T) Store) {
	m := newMemTest(t, newStore)
	for _, sc := range memScope {
		m.write(core.MemoryWrite{Scope: sc, Once: "extract:run_1", Put: []core.Memory{
			memory(sc, "m1", "m1 of "+sc.Tenant+"/"+sc.Subject), memory(sc, "m2", "m2 of "+sc.Tenant+"/"+sc.Subject)}})
	}
	m.write(core.MemoryWrite{Scope: alice, Once: "extract:run_2", Put: []core.Memory{memory(alice, "m3", "only alice's")}})
	for _, sc := range memScope {
		for _, mem := range m.all(sc, 1) {
			if want := mem.ID + " of " + sc.Tenant + "/" + sc.Subject; mem.Text != want && mem.ID != "m3" || mem.Subject != sc.Subject {
				t.Fatalf("%+v lists %+v", sc, mem)
			}
		}
		if got := m.read(sc, "m2"); got.Text != "m2 of "+sc.Tenant+"/"+sc.Subject {
			t.Fatalf("%+v reads %+v", sc, got)
		}
		if sc != alice {
			m.wantNone(sc, "m3")
			if err := m.s.DeleteMemory(m.ctx, sc, "m3"); !errors.Is(err, core.ErrNotFound) {
				t.Fatalf("%+v deletes alice's m3: %v", sc, err)
			}
			if _, err := m.s.MemoryOnce(m.ctx, sc, "extract:run_2"); !errors.Is(err, core.ErrNotFound) {
				t.Fatalf("%+v sees alice's once key: %v", sc, err)
			}
		}
	}
	m.wantIDs(alice, "m1", "m2", "m3")
	if err := m.s.DeleteMemory(m.ctx, bob, "m1"); err != nil {
		t.Fatal(err)
	}
	m.write(core.MemoryWrite{Scope: hashA, Delete: []string{"m2"}})
	if n, err := m.s.EraseMemories(m.ctx, alice2, t0.Add(time.Hour)); err != nil || n != 2 {
		t.Fatalf("erase globex's alice: %d, %v", n, err)
	}
	m.wantIDs(alice, "m1", "m2", "m3")
	m.wantIDs(bob, "m2")
	m.wantIDs(alice2)
	m.wantIDs(hashA, "m1")
	m.wantIDs(hashB, "m1", "m2")
	// Only the erased scope refuses a write from before its erasure.
	for _, sc := range []core.MemoryScope{alice, bob, hashA, hashB} {
		m.write(core.MemoryWrite{Scope: sc, Since: t0, Put: []core.Memory{memory(sc, "m4", "later")}})
	}
	if err := m.s.WriteMemories(m.ctx, core.MemoryWrite{Scope: alice2, Since: t0, Put: []core.Memory{memory(alice2, "m4", "later")}}); !errors.Is(err, core.ErrErased) {
		t.Fatalf("a write to the erased scope: %v", err)
	}
	m.wantIDs(alice2)
}

// testMemoriesOnce: a write's Once key makes it happen once in its
// scope; MemoryOnce returns what it put.
func testMemoriesOnce(t *testing.T, newStore func(*testing.T) Store) {
	m := newMemTest(t, newStore)
	key := core.MemoryExtractID("run_1")
	m.write(core.MemoryWrite{Scope: alice, Once: key, Since: t0, Put: []core.Memory{memory(alice, "m2", "two"), memory(alice, "m1", "one")}, Delete: []string{"m9"}})
	err := m.s.WriteMemories(m.ctx, core.MemoryWrite{Scope: alice, Once: key, Since: t0, Put: []core.Memory{memory(alice, "m3", "three")}, Delete: []string{"m1"}})
	if !errors.Is(err, core.ErrMemoryDone) {
		t.Fatalf("the second write of %s: %v, want ErrMemoryDone", key, err)
	}
	m.wantIDs(alice, "m1", "m2")
	ids, err := m.s.MemoryOnce(m.ctx, alice, key)
	if slices.Sort(ids); err != nil || !slices.Equal(ids, []string{"m1", "m2"}) {
		t.Fatalf("MemoryOnce: %v, %v", ids, err)
	}
	m.write(core.MemoryWrite{Scope: alice, Once: "deletes-only", Delete: []string{"m2"}})
	if ids, err := m.s.MemoryOnce(m.ctx, alice, "deletes-only"); err != nil || len(ids) != 0 {
		t.Fatalf("MemoryOnce of a write that put nothing: %v, %v", ids, err)
	}
	if err := m.s.WriteMemories(m.ctx, core.MemoryWrite{Scope: alice, Once: "deletes-only"}); !errors.Is(err, core.ErrMemoryDone) {
		t.Fatalf("an empty write under a used key: %v", err)
	}
	if _, err := m.s.MemoryOnce(m.ctx, alice, "extract:run_unknown"); !errors.Is(err, core.ErrNotFound) {
		t.Fatalf("MemoryOnce of an unknown key: %v", err)
	}
	longest := strings.Repeat("o", core.MaxMemoryOnce)
	m.write(core.MemoryWrite{Scope: alice, Once: longest, Put: []core.Memory{memory(alice, "m4", "four")}})
	if ids, err := m.s.MemoryOnce(m.ctx, alice, longest); err != nil || !slices.Equal(ids, []string{"m4"}) {
		t.Fatalf("MemoryOnce of the longest key: %v, %v", ids, err)
	}
	m.wantIDs(alice, "m1", "m4")
}

// testMemoriesErase: an erasure deletes the scope's memories (more than
// one batch), refuses later writes from before it (with their Once
// markers), keeps the latest erasure time and the Once markers.
func testMemoriesErase(t *testing.T, newStore func(*testing.T) Store) {
	m := newMemTest(t, newStore)
	erased := t0.Add(time.Hour)
	m.put(alice, "m", 60)
	m.put(bob, "m", 3)
	done := core.MemoryExtractID("run_before")
	m.write(core.MemoryWrite{Scope: alice, Once: done, Since: t0, Put: []core.Memory{memory(alice, "x1", "extracted")}})
	if n, err := m.s.EraseMemories(m.ctx, alice, erased); err != nil || n != 61 {
		t.Fatalf("erase: %d, %v; want 61", n, err)
	}
	m.wantIDs(alice)
	m.wantNone(alice, "x1")
	if len(m.ids(bob)) != 3 {
		t.Fatalf("bob's memories after alice's erasure: %v", m.ids(bob))
	}
	// A run that started before the erasure writes nothing, not even its
	// Once marker; one that started after it writes.
	for _, since := range []time.Time{t0, erased.Add(-time.Nanosecond), erased} {
		err := m.s.WriteMemories(m.ctx, core.MemoryWrite{Scope: alice, Since: since, Once: "extract:run_late", Put: []core.Memory{memory(alice, "late", "late")}})
		if !errors.Is(err, core.ErrErased) {
			t.Fatalf("a write since %v: %v, want ErrErased", since, err)
		}
	}
	if err := m.s.WriteMemories(m.ctx, core.MemoryWrite{Scope: alice, Since: t0, Delete: []string{"m-001"}}); !errors.Is(err, core.ErrErased) {
		t.Fatalf("a delete since before the erasure: %v, want ErrErased", err)
	}
	m.wantIDs(alice)
	if _, err := m.s.MemoryOnce(m.ctx, alice, "extract:run_late"); !errors.Is(err, core.ErrNotFound) {
		t.Fatalf("the refused write's once key: %v", err)
	}
	// The extraction of the run that wrote before the erasure, delivered
	// again, is still done.
	err := m.s.WriteMemories(m.ctx, core.MemoryWrite{Scope: alice, Once: done, Since: t0, Put: []core.Memory{memory(alice, "x1", "extracted")}})
	if !errors.Is(err, core.ErrMemoryDone) {
		t.Fatalf("a redelivered extraction after the erasure: %v, want ErrMemoryDone", err)
	}
	if ids, err := m.s.MemoryOnce(m.ctx, alice, done); err != nil || !slices.Equal(ids, []string{"x1"}) {
		t.Fatalf("the once marker after the erasure: %v, %v", ids, err)
	}
	m.wantIDs(alice)
	m.write(core.MemoryWrite{Scope: alice, Since: erased.Add(time.Nanosecond), Once: "extract:run_late", Put: []core.Memory{memory(alice, "late", "late")}})
	m.write(core.MemoryWrite{Scope: alice, Put: []core.Memory{memory(alice, "tool", "no since")}})
	m.wantIDs(alice, "late", "tool")
	// An earlier erasure keeps the later erasure time.
	if n, err := m.s.EraseMemories(m.ctx, alice, t0); err != nil || n != 2 {
		t.Fatalf("erase again, earlier: %d, %v; want 2", n, err)
	}
	if err := m.s.WriteMemories(m.ctx, core.MemoryWrite{Scope: alice, Since: t0.Add(time.Minute), Put: []core.Memory{memory(alice, "y", "y")}}); !errors.Is(err, core.ErrErased) {
		t.Fatalf("a write between the two erasures: %v, want ErrErased", err)
	}
	if n, err := m.s.EraseMemories(m.ctx, alice, erased); err != nil || n != 0 {
		t.Fatalf("erase an empty scope: %d, %v", n, err)
	}
	if n, err := m.s.EraseMemories(m.ctx, core.MemoryScope{Tenant: "acme", Subject: "never-written"}, erased); err != nil || n != 0 {
		t.Fatalf("erase a scope never written: %d, %v", n, err)
	}
	if _, err := m.s.EraseMemories(m.ctx, bob, time.Time{}); !errors.Is(err, core.ErrInvalidInput) {
		t.Fatalf("an erasure without a time: %v", err)
	}
	if len(m.ids(bob)) != 3 {
		t.Fatalf("bob's memories at the end: %v", m.ids(bob))
	}
}

// testMemoriesInvalid: a write the contract refuses is ErrInvalidInput
// and writes nothing, not even its Once marker; calls on a scope without
// a tenant or subject are refused.
func testMemoriesInvalid(t *testing.T, newStore func(*testing.T) Store) {
	m := newMemTest(t, newStore)
	ok := memory(alice, "ok", "fine")
	many := make([]core.Memory, core.MaxMemoryWrite)
	for i := range many {
		many[i] = memory(alice, fmt.Sprintf("m%02d", i), "x")
	}
	tooLong := memory(alice, "long", strings.Repeat("x", core.MaxMemoryText+1))
	cases := map[string]core.MemoryWrite{
		"oversized text":  {Put: []core.Memory{ok, tooLong}},
		"too many":        {Put: many, Delete: []string{"one-more"}},
		"another subject": {Put: []core.Memory{ok, memory(bob, "bobs", "x")}},
		"no id":           {Put: []core.Memory{ok, memory(alice, "", "x")}},
		"no text":         {Put: []core.Memory{ok, memory(alice, "empty", "")}},
		"long id":         {Put: []core.Memory{ok, memory(alice, strings.Repeat("i", core.MaxMemoryID+1), "x")}},
		"control id":      {Put: []core.Memory{ok, memory(alice, "a\nb", "x")}},
		"bad delete id":   {Put: []core.Memory{ok}, Delete: []string{""}},
		"id twice":        {Put: []core.Memory{ok, memory(alice, "ok", "again")}},
		"put and delete":  {Put: []core.Memory{ok}, Delete: []string{"ok"}},
		"long once":       {Put: []core.Memory{ok}, Once: strings.Repeat("o", core.MaxMemoryOnce+1)},
		"long vector":     {Put: []core.Memory{ok, memory(alice, "vec", "x", make([]int8, core.MaxMemoryDims+1)...)}},
	}
	for name, w := range cases {
		w.Scope = alice
		if w.Once == "" {
			w.Once = "once:" + name
		}
		if err := m.s.WriteMemories(m.ctx, w); !errors.Is(err, core.ErrInvalidInput) {
			t.Fatalf("%s: %v, want invalid input", name, err)
		}
		if _, err := m.s.MemoryOnce(m.ctx, alice, w.Once); !errors.Is(err, core.ErrNotFound) {
			t.Fatalf("%s: the refused write's once key: %v", name, err)
		}
	}
	m.wantIDs(alice)
	m.write(core.MemoryWrite{Scope: alice, Put: many}) // the limit itself is fine
	if len(m.ids(alice)) != core.MaxMemoryWrite {
		t.Fatalf("a write of %d memories", core.MaxMemoryWrite)
	}
	largest := memory(alice, "largest", strings.Repeat("z", core.MaxMemoryText), make([]int8, core.MaxMemoryDims)...)
	largest.Vector[core.MaxMemoryDims-1] = -7
	m.write(core.MemoryWrite{Scope: alice, Put: []core.Memory{largest}})
	sameMemory(t, m.read(alice, "largest"), largest)
	for _, sc := range []core.MemoryScope{{Tenant: "acme"}, {Subject: "alice"}} {
		for what, err := range map[string]error{
			"write":  m.s.WriteMemories(m.ctx, core.MemoryWrite{Scope: sc, Put: []core.Memory{memory(sc, "m", "x")}}),
			"list":   second(m.s.Memories(m.ctx, sc, "", 0)),
			"read":   second(m.s.Memory(m.ctx, sc, "m00")),
			"delete": m.s.DeleteMemory(m.ctx, sc, "m00"),
			"erase":  second(m.s.EraseMemories(m.ctx, sc, t0)),
			"once":   second(m.s.MemoryOnce(m.ctx, sc, "x")),
		} {
			if !errors.Is(err, core.ErrInvalidInput) {
				t.Fatalf("%s on scope %+v: %v", what, sc, err)
			}
		}
	}
}

// second returns the error of a two-result call (a page's memories and
// cursor count as one result).
func second[T any](v T, rest ...any) error {
	if len(rest) == 0 {
		return nil
	}
	err, _ := rest[len(rest)-1].(error)
	return err
}

// testMemoriesConcurrent: of writers racing with one Once key exactly
// one writes; writers racing with an erasure either wrote before it (and
// it deleted what they wrote) or were refused.
func testMemoriesConcurrent(t *testing.T, newStore func(*testing.T) Store) {
	m := newMemTest(t, newStore)
	const writers = 6
	errs := make([]error, writers)
	var wg sync.WaitGroup
	for i := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = m.s.WriteMemories(m.ctx, core.MemoryWrite{Scope: alice, Once: "extract:race", Since: t0,
				Put: []core.Memory{memory(alice, fmt.Sprintf("w%d", i), "racer"), memory(alice, fmt.Sprintf("w%d-b", i), "racer")}})
		}()
	}
	wg.Wait()
	winner := -1
	for i, err := range errs {
		switch {
		case err == nil && winner >= 0:
			t.Fatalf("writers %d and %d both wrote", winner, i)
		case err == nil:
			winner = i
		case !errors.Is(err, core.ErrMemoryDone):
			t.Fatalf("writer %d: %v", i, err)
		}
	}
	if winner < 0 {
		t.Fatal("no writer wrote")
	}
	w := fmt.Sprintf("w%d", winner)
	m.wantIDs(alice, w, w+"-b")
	ids, err := m.s.MemoryOnce(m.ctx, alice, "extract:race")
	if slices.Sort(ids); err != nil || !slices.Equal(ids, []string{w, w + "-b"}) {
		t.Fatalf("MemoryOnce: %v, %v", ids, err)
	}

	// Writers from before an erasure, racing with it.
	erased := t0.Add(time.Hour)
	var eraseErr error
	for i := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range 4 {
				err := m.s.WriteMemories(m.ctx, core.MemoryWrite{Scope: bob, Since: t0, Put: []core.Memory{memory(bob, fmt.Sprintf("r%d-%d", i, j), "racer")}})
				if err != nil && !errors.Is(err, core.ErrErased) {
					t.Errorf("racer %d write %d: %v", i, j, err)
				}
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		_, eraseErr = m.s.EraseMemories(m.ctx, bob, erased)
	}()
	wg.Wait()
	if eraseErr != nil {
		t.Fatal(eraseErr)
	}
	m.wantIDs(bob)
}
