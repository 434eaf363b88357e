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
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	b, err := os.ReadFile("testdata/agents.json")
	if err != nil {
		t.Fatal(err)
	}
	a, err := app.Build(ctx, app.Config{Stores: app.Stores{Memory: true, Visibility: 5 * time.Second}, Agents: app.Agents{Bytes: b},
		Providers: []string{"scripted"}, ExecuteTools: true}, app.Deps{Log: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	// tokAcme is labelled ann: her own subject; the back office's token
	// names any subject of acme; globex has an ann too.
	const tokBackOffice, tokGlobexAnn = "tok-acme-backoffice-1", "tok-globex-ann-01"
	for _, tk := range []app.Token{
		{Token: tokAcme, Tenant: "acme", Label: "ann"},
		{Token: tokBackOffice, Tenant: "acme", Label: "back-office", Scopes: app.DevScopes()},
		{Token: tokGlobexAnn, Tenant: "globex", Label: "ann"},
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
	d := &dev{out: &syncBuffer{}}
	select {
	case d.base = <-ready:
	case err := <-served:
		t.Fatalf("serve: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("the server did not start")
	}

	// A run of ann's, which her memories name as their source.
	r := d.call(t, "POST", "/v1/runs", tokAcme, `{"agent":"e2e","messages":[{"role":"user","content":"I like green tea."}],"model":{"provider":"scripted","turns":[{"content":"Noted."}]}}`)
	runID, _ := r.body["run_id"].(string)
	if r.status != 202 || runID == "" {
		t.Fatalf("start a run: %d %v", r.status, r.body)
	}
	d.waitStatus(t, runID)

	ms := a.API.Memories
	if ms == nil {
		t.Fatal("the embedded store keeps no memories")
	}
	created := time.Date(2026, 5, 6, 7, 8, 9, 0, time.UTC)
	seed := func(tenant, subject string, texts ...string) {
		t.Helper()
		k := 0
		for len(texts) > 0 {
			n := min(len(texts), core.MaxMemoryWrite)
			w := core.MemoryWrite{Scope: core.MemoryScope{Tenant: tenant, Subject: subject}}
			for _, text := range texts[:n] {
				k++
				created = created.Add(time.Minute)
				m := core.Memory{ID: fmt.Sprintf("mem-%s-%03d", subject, k), Subject: subject, Text: text, Source: core.MemoryFromExtraction, SourceRunID: runID, CreatedAt: created, UpdatedAt: created}
				if k == 1 { // the model called memory/remember
					m.Source = core.MemoryFromTool
				}
				w.Put = append(w.Put, m)
			}
			if err := ms.WriteMemories(ctx, w); err != nil {
				t.Fatal(err)
			}
			texts = texts[n:]
		}
	}
	ann := []string{"Ann prefers green tea, no sugar.", "Ann's flight home is on Friday the 14th; she wants an aisle seat.",
		"Ann signs her e-mails \"A.\" and wants replies in English, not French.\nShe reads them on her phone."}
	for i := len(ann); i < 55; i++ { // more than a page (50)
		ann = append(ann, fmt.Sprintf("Ann's fact number %d.", i+1))
	}
	seed("acme", "ann", ann...)
	seed("acme", "bob", "Bob works nights.", "Bob's dog is called Rex.")
	seed("globex", "ann", "Globex's Ann is another person.")

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
	runNodeWith(t, node, "console/memories.mjs", map[string]any{"base": d.base, "token": tokAcme, "backoffice": tokBackOffice, "chromium": browser,
		"artifacts": artifacts, "run": runID, "count": len(ann)}, &out)
	if len(out.Passed) != 6 {
		t.Fatalf("passed %v", out.Passed)
	}
	// What the page did is what the stores hold: ann erased, bob less
	// one memory, globex's ann untouched.
	count := func(tenant, subject string) int {
		page, _, err := ms.Memories(ctx, core.MemoryScope{Tenant: tenant, Subject: subject}, "", 100)
		if err != nil {
			t.Fatal(err)
		}
		return len(page)
	}
	if n, b, g := count("acme", "ann"), count("acme", "bob"), count("globex", "ann"); n != 0 || b != 1 || g != 1 {
		t.Fatalf("after the page: acme/ann %d, acme/bob %d, globex/ann %d memories; want 0, 1, 1", n, b, g)
	}
	if r := d.call(t, "GET", "/v1/memories", tokGlobexAnn, ""); r.status != 200 || len(r.body["memories"].([]any)) != 1 {
		t.Fatalf("globex's ann: %d %v", r.status, r.body)
	}
	t.Logf("memories in Chromium: %s; screenshots in %s", strings.Join(out.Passed, ", "), artifacts)
	cancel()
	select {
	case <-served:
	case <-time.After(15 * time.Second):
		t.Error("the server did not stop")
	}
}
