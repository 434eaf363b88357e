//go:build e2e

package tests

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/baton-agents/baton/core"
	"github.com/baton-agents/baton/internal/app"
)

// memoryServer is the whole system served in process on the embedded
// stores, with its memory store at hand (no public route writes
// memories, so tests seed them there), three tokens (tokAcme is
// labelled ann: her own subject; tokMemBackOffice names any subject of
// acme; tokMemGlobexAnn is another tenant's ann) and a run of ann's
// that seeded memories name as their source. It stops when the test
// ends.
type memoryServer struct {
	d     *dev
	ms    core.MemoryStore
	runID string
	// created is the creation time of the last memory seed wrote.
	created time.Time
}

const tokMemBackOffice, tokMemGlobexAnn = "tok-acme-backoffice-1", "tok-globex-ann-01"

func serveMemories(t *testing.T) *memoryServer {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	b, err := os.ReadFile("testdata/agents.json")
	if err != nil {
		t.Fatal(err)
	}
	a, err := app.Build(ctx, app.Config{Stores: app.Stores{Memory: true, Visibility: 5 * time.Second}, Agents: app.Agents{Bytes: b},
		Providers: []string{"scripted"}, ExecuteTools: true}, app.Deps{Log: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	for _, tk := range []app.Token{
		{Token: tokAcme, Tenant: "acme", Label: "ann"},
		{Token: tokMemBackOffice, Tenant: "acme", Label: "back-office", Scopes: app.DevScopes()},
		{Token: tokMemGlobexAnn, Tenant: "globex", Label: "ann"},
	} {
		if err := a.PutToken(ctx, tk); err != nil {
			t.Fatal(err)
		}
	}
	ready := make(chan string, 1)
	served := make(chan error, 1)
	go func() {
		served <- a.Serve(ctx, app.ServeOptions{Addr: "127.0.0.1:0", Pollers: 1, Ready: func(base string) { ready <- base }})
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case <-served:
		case <-time.After(15 * time.Second):
			t.Error("the server did not stop")
		}
	})
	s := &memoryServer{d: &dev{out: &syncBuffer{}}, ms: a.API.Memories, created: time.Date(2026, 5, 6, 7, 8, 9, 0, time.UTC)}
	select {
	case s.d.base = <-ready:
	case err := <-served:
		t.Fatalf("serve: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("the server did not start")
	}
	if s.ms == nil {
		t.Fatal("the embedded store keeps no memories")
	}
	r := s.d.call(t, "POST", "/v1/runs", tokAcme, `{"agent":"e2e","messages":[{"role":"user","content":"I like green tea."}],"model":{"provider":"scripted","turns":[{"content":"Noted."}]}}`)
	if s.runID, _ = r.body["run_id"].(string); r.status != 202 || s.runID == "" {
		t.Fatalf("start a run: %d %v", r.status, r.body)
	}
	s.d.waitStatus(t, s.runID)
	return s
}

// seed writes texts as subject's memories in tenant, ids
// mem-<subject>-001… in order, a minute apart, from the server's run:
// the first by the memory/remember tool, the others by extraction.
func (s *memoryServer) seed(t *testing.T, tenant, subject string, texts ...string) {
	t.Helper()
	k := 0
	for len(texts) > 0 {
		n := min(len(texts), core.MaxMemoryWrite)
		w := core.MemoryWrite{Scope: core.MemoryScope{Tenant: tenant, Subject: subject}}
		for _, text := range texts[:n] {
			k++
			s.created = s.created.Add(time.Minute)
			m := core.Memory{ID: fmt.Sprintf("mem-%s-%03d", subject, k), Subject: subject, Text: text, Source: core.MemoryFromExtraction, SourceRunID: s.runID, CreatedAt: s.created, UpdatedAt: s.created}
			if k == 1 {
				m.Source = core.MemoryFromTool
			}
			w.Put = append(w.Put, m)
		}
		if err := s.ms.WriteMemories(context.Background(), w); err != nil {
			t.Fatal(err)
		}
		texts = texts[n:]
	}
}

// count is how many memories subject has in tenant.
func (s *memoryServer) count(t *testing.T, tenant, subject string) int {
	t.Helper()
	n, cursor := 0, ""
	for {
		page, next, err := s.ms.Memories(context.Background(), core.MemoryScope{Tenant: tenant, Subject: subject}, cursor, 0)
		if err != nil {
			t.Fatal(err)
		}
		n += len(page)
		if cursor = next; cursor == "" {
			return n
		}
	}
}

// TestConsoleMemoriesInBrowser drives the console's Memories page in
// headless Chromium (tests/console/memories.mjs) at 1,280 × 800, against
// the whole system served in process on embedded stores, whose memory
// store the test seeds (no public route writes memories): the caller's
// own memories listed with their created date, source, source run (a
// link to the run's page) and text, more than a page of them; another
// subject named in the subject field, refused (403) for a token without
// memories:subject and shown for one with it; one memory deleted; the
// subject erased after a confirmation, the other subject and the other
// tenant's same subject untouched; every button's label at 4.5:1 or
// more, no sideways scroll, no CSP violation; the screenshots go to
// tests/console/artifacts.
func TestConsoleMemoriesInBrowser(t *testing.T) {
	browser := chromiumPath(t)
	node := consoleNode(t)
	s := serveMemories(t)
	d, runID := s.d, s.runID
	ann := []string{"Ann prefers green tea, no sugar.", "Ann's flight home is on Friday the 14th; she wants an aisle seat.",
		"Ann signs her e-mails \"A.\" and wants replies in English, not French.\nShe reads them on her phone."}
	for i := len(ann); i < 55; i++ { // more than a page (50)
		ann = append(ann, fmt.Sprintf("Ann's fact number %d.", i+1))
	}
	s.seed(t, "acme", "ann", ann...)
	s.seed(t, "acme", "bob", "Bob works nights.", "Bob's dog is called Rex.")
	s.seed(t, "globex", "ann", "Globex's Ann is another person.")

	// The API answers the same lists the page shows (and reaches every
	// memory route for the suite's OpenAPI coverage).
	if r := d.call(t, "GET", "/v1/memories?limit=100", tokAcme, ""); r.status != 200 || len(r.body["memories"].([]any)) != 55 {
		t.Fatalf("GET /v1/memories: %d %v", r.status, r.body)
	}
	if r := d.call(t, "DELETE", "/v1/memories/mem-nobody", tokAcme, ""); r.status != 404 || errCode(r) != "not_found" {
		t.Fatalf("DELETE an unknown memory: %d %v", r.status, r.body)
	}
	if r := d.call(t, "DELETE", "/v1/memories?subject=bob", tokAcme, ""); r.status != 403 || errCode(r) != "forbidden" {
		t.Fatalf("erase bob without memories:subject: %d %v", r.status, r.body)
	}

	artifacts, _ := filepath.Abs("console/artifacts")
	var out struct{ Passed []string }
	runNodeWith(t, node, "console/memories.mjs", map[string]any{"base": d.base, "token": tokAcme, "backoffice": tokMemBackOffice, "chromium": browser,
		"artifacts": artifacts, "run": runID, "count": len(ann)}, &out)
	if len(out.Passed) != 6 {
		t.Fatalf("passed %v", out.Passed)
	}
	// What the page did is what the stores hold: ann erased, bob less
	// one memory, globex's ann untouched.
	if n, b, g := s.count(t, "acme", "ann"), s.count(t, "acme", "bob"), s.count(t, "globex", "ann"); n != 0 || b != 1 || g != 1 {
		t.Fatalf("after the page: acme/ann %d, acme/bob %d, globex/ann %d memories; want 0, 1, 1", n, b, g)
	}
	if r := d.call(t, "GET", "/v1/memories", tokMemGlobexAnn, ""); r.status != 200 || len(r.body["memories"].([]any)) != 1 {
		t.Fatalf("globex's ann: %d %v", r.status, r.body)
	}
	t.Logf("memories in Chromium: %s; screenshots in %s", strings.Join(out.Passed, ", "), artifacts)
}
