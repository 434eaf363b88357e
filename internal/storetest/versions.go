package storetest

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/baton-agents/baton/core"
)

func version(file string, at time.Time, by string) core.AgentVersion {
	return core.AgentVersion{ID: core.AgentVersionID([]byte(file)), File: []byte(file), Agents: []string{"a"}, PublishedAt: at, PublishedBy: by}
}

// testAgentVersions: a version is stored once (a second put of its id
// returns the first, unchanged), read back whole (a file over gzip's
// threshold too), listed newest first without files, and an unknown id is
// ErrNotFound; each creation writes one audit entry.
func testAgentVersions(t *testing.T, newStore func(*testing.T) Store) {
	s, ctx := newStore(t), context.Background()
	if _, err := s.GetAgentVersion(ctx, "av_0000000000000000"); !errors.Is(err, core.ErrNotFound) {
		t.Fatalf("unknown version: %v", err)
	}
	big := `{"agents":[{"slug":"a","system":"` + strings.Repeat("be brief. ", 5000) + `"}]}`
	v1, v2 := version(`{"agents":[{"slug":"a"}]}`, t0, "deploy"), version(big, t0.Add(time.Minute), "ops")
	for _, v := range []core.AgentVersion{v1, v2} {
		got, created, err := s.PutAgentVersion(ctx, v)
		if err != nil || !created || got.ID != v.ID {
			t.Fatalf("put %s: %+v %v %v", v.ID, got, created, err)
		}
	}
	again := v1
	again.PublishedAt, again.PublishedBy = t0.Add(time.Hour), "someone else"
	got, created, err := s.PutAgentVersion(ctx, again)
	if err != nil || created || !got.PublishedAt.Equal(t0) || got.PublishedBy != "deploy" {
		t.Fatalf("second put of one file: %+v created=%v %v; want the first, unchanged", got, created, err)
	}
	for _, v := range []core.AgentVersion{v1, v2} {
		got, err := s.GetAgentVersion(ctx, v.ID)
		if err != nil || !bytes.Equal(got.File, v.File) || !got.PublishedAt.Equal(v.PublishedAt) || got.PublishedBy != v.PublishedBy || len(got.Agents) != 1 {
			t.Fatalf("get %s: %v (file %d bytes, want %d)", v.ID, err, len(got.File), len(v.File))
		}
	}
	list, err := s.ListAgentVersions(ctx)
	if err != nil || len(list) != 2 || list[0].ID != v2.ID || list[1].ID != v1.ID || list[0].File != nil {
		t.Fatalf("list: %+v %v", list, err)
	}
	audit, err := s.ListAgentAudit(ctx, 10)
	if err != nil || len(audit) != 2 || audit[0].Version != v2.ID || audit[0].Action != core.AuditPublish || audit[0].By != "ops" {
		t.Fatalf("audit: %+v %v", audit, err)
	}
}

// testAgentVersionTooLarge: a file over MaxAgentVersionBytes is
// ErrInvalidInput, and nothing is stored.
func testAgentVersionTooLarge(t *testing.T, newStore func(*testing.T) Store) {
	s, ctx := newStore(t), context.Background()
	v := version(strings.Repeat("x", core.MaxAgentVersionBytes+1), t0, "ops")
	if _, _, err := s.PutAgentVersion(ctx, v); !errors.Is(err, core.ErrInvalidInput) {
		t.Fatalf("too large: %v", err)
	}
	if _, err := s.GetAgentVersion(ctx, v.ID); !errors.Is(err, core.ErrNotFound) {
		t.Fatalf("after a refused put: %v", err)
	}
	if list, _ := s.ListAgentVersions(ctx); len(list) != 0 {
		t.Fatalf("listed: %+v", list)
	}
	// At exactly the bound, a version is stored.
	v = version(strings.Repeat("x", core.MaxAgentVersionBytes), t0, "ops")
	if _, created, err := s.PutAgentVersion(ctx, v); err != nil || !created {
		t.Fatalf("a version of exactly %d bytes: created %v, %v", core.MaxAgentVersionBytes, created, err)
	}
	if got, err := s.GetAgentVersion(ctx, v.ID); err != nil || len(got.File) != core.MaxAgentVersionBytes {
		t.Fatalf("the version of exactly the bound read back: %d bytes, %v", len(got.File), err)
	}
}

// testAgentAliases: an alias is created at revision 1 only when none
// exists, changed only from the revision read, listed by name; each
// change writes an audit entry with the alias before and after.
func testAgentAliases(t *testing.T, newStore func(*testing.T) Store) {
	s, ctx := newStore(t), context.Background()
	va, vb := core.AgentVersionID([]byte("a")), core.AgentVersionID([]byte("b"))
	if _, err := s.GetAgentAlias(ctx, "prod"); !errors.Is(err, core.ErrNotFound) {
		t.Fatalf("unknown alias: %v", err)
	}
	a := core.AgentAlias{Name: "prod", Routes: []core.AliasRoute{{Version: va, Weight: 100}}, UpdatedAt: t0, UpdatedBy: "ops"}
	got, err := s.PutAgentAlias(ctx, a, 0)
	if err != nil || got.Revision != 1 {
		t.Fatalf("create: %+v %v", got, err)
	}
	if _, err := s.PutAgentAlias(ctx, a, 0); !errors.Is(err, core.ErrConflict) {
		t.Fatalf("second create: %v", err)
	}
	b := a
	b.Routes, b.Tenants, b.UpdatedAt = []core.AliasRoute{{Version: va, Weight: 70}, {Version: vb, Weight: 30}}, map[string]string{"acme": vb}, t0.Add(time.Minute)
	if _, err := s.PutAgentAlias(ctx, b, 7); !errors.Is(err, core.ErrConflict) {
		t.Fatalf("wrong revision: %v", err)
	}
	if got, err = s.PutAgentAlias(ctx, b, 1); err != nil || got.Revision != 2 {
		t.Fatalf("update: %+v %v", got, err)
	}
	read, err := s.GetAgentAlias(ctx, "prod")
	if err != nil || read.Revision != 2 || len(read.Routes) != 2 || read.Routes[1].Weight != 30 || read.Tenants["acme"] != vb {
		t.Fatalf("read back: %+v %v", read, err)
	}
	if _, err := s.PutAgentAlias(ctx, core.AgentAlias{Name: "canary", Routes: []core.AliasRoute{{Version: vb, Weight: 100}}, UpdatedAt: t0.Add(2 * time.Minute)}, 0); err != nil {
		t.Fatal(err)
	}
	list, err := s.ListAgentAliases(ctx)
	if err != nil || len(list) != 2 || list[0].Name != "canary" || list[1].Name != "prod" {
		t.Fatalf("list: %+v %v", list, err)
	}
	audit, err := s.ListAgentAudit(ctx, 2)
	if err != nil || len(audit) != 2 || audit[0].Alias != "canary" || audit[0].Before != nil || audit[1].Alias != "prod" ||
		audit[1].Before == nil || audit[1].Before.Revision != 1 || audit[1].After == nil || audit[1].After.Revision != 2 {
		t.Fatalf("audit: %+v %v", audit, err)
	}
}

// testAgentAliasesConcurrent: of writers that all read revision 1, one
// lands.
func testAgentAliasesConcurrent(t *testing.T, newStore func(*testing.T) Store) {
	s, ctx := newStore(t), context.Background()
	v := core.AgentVersionID([]byte("a"))
	a := core.AgentAlias{Name: "default", Routes: []core.AliasRoute{{Version: v, Weight: 100}}, UpdatedAt: t0}
	if _, err := s.PutAgentAlias(ctx, a, 0); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	landed := 0
	for i := range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			b := a
			b.UpdatedBy = strings.Repeat("w", i+1)
			if _, err := s.PutAgentAlias(ctx, b, 1); err == nil {
				mu.Lock()
				landed++
				mu.Unlock()
			} else if !errors.Is(err, core.ErrConflict) {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if got, _ := s.GetAgentAlias(ctx, "default"); landed != 1 || got.Revision != 2 {
		t.Fatalf("%d writers landed, revision %d; want 1 and 2", landed, got.Revision)
	}
}
