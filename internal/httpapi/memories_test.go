package httpapi_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/baton-agents/baton/core"
	batonevents "github.com/baton-agents/baton/events"
	"github.com/baton-agents/baton/internal/app"
	"github.com/baton-agents/baton/internal/httpapi"
	"github.com/baton-agents/baton/internal/openapitest"
)

// memoryStore is the env's memory store, with the tokens the memory
// tests use: tok-acme-123 (label acme, the default scopes), tok-acme-bo
// and tok-globex-bo (back offices holding memories:subject), tok-nomem
// (runs only) and tok-anon (no label: no subject of its own).
func (e *env) memoryStore(t *testing.T) core.MemoryStore {
	t.Helper()
	ms := e.api.Memories
	if ms == nil {
		t.Fatal("the embedded store keeps no memories")
	}
	ctx := context.Background()
	for tok, tenant := range map[string]string{"tok-acme-bo": "acme", "tok-globex-bo": "globex"} {
		if err := e.api.Tokens.PutToken(ctx, httpapi.HashToken(tok), core.Token{Tenant: tenant, Label: "back-office", Scopes: append(app.Scopes(), httpapi.ScopeMemoriesSubject)}); err != nil {
			t.Fatal(err)
		}
	}
	_ = e.api.Tokens.PutToken(ctx, httpapi.HashToken("tok-nomem"), core.Token{Tenant: "acme", Label: "acme", Scopes: []string{httpapi.ScopeRunsRead, httpapi.ScopeRunsWrite}})
	_ = e.api.Tokens.PutToken(ctx, httpapi.HashToken("tok-anon"), core.Token{Tenant: "acme", Scopes: app.Scopes()})
	return ms
}

// seed writes n memories m1…mn of subject in tenant.
func seed(t *testing.T, ms core.MemoryStore, tenant, subject string, n int, at time.Time) {
	t.Helper()
	w := core.MemoryWrite{Scope: core.MemoryScope{Tenant: tenant, Subject: subject}}
	for i := 1; i <= n; i++ {
		w.Put = append(w.Put, core.Memory{ID: fmt.Sprintf("m%d", i), Subject: subject, Text: fmt.Sprintf("%s/%s fact %d", tenant, subject, i),
			Source: core.MemoryFromExtraction, SourceRunID: "r-" + tenant, CreatedAt: at, UpdatedAt: at})
	}
	if err := ms.WriteMemories(context.Background(), w); err != nil {
		t.Fatal(err)
	}
}

// texts lists the texts of a GET /v1/memories answer.
func texts(v map[string]any) []string {
	var out []string
	ms, _ := v["memories"].([]any)
	for _, m := range ms {
		out = append(out, m.(map[string]any)["text"].(string))
	}
	return out
}

// TestMemoriesList: GET /v1/memories answers the caller's own subject's
// memories (its token's label) with every field, in pages that
// next_cursor chains ("" on the last); another subject needs
// memories:subject, and the tenant is always the caller's.
func TestMemoriesList(t *testing.T) {
	e := newEnv(t)
	ms := e.memoryStore(t)
	seed(t, ms, "acme", "acme", 3, e.clock.T)
	seed(t, ms, "acme", "alice", 2, e.clock.T)
	seed(t, ms, "globex", "alice", 1, e.clock.T)
	seed(t, ms, "globex", "acme", 1, e.clock.T)

	st, v := e.mem(t, "GET", "/v1/memories", "tok-acme-123")
	if st != 200 || strings.Join(texts(v), "|") != "acme/acme fact 1|acme/acme fact 2|acme/acme fact 3" || v["next_cursor"] != "" {
		t.Fatalf("own memories: %d %v", st, v)
	}
	first := v["memories"].([]any)[0].(map[string]any)
	want := map[string]any{"id": "m1", "text": "acme/acme fact 1", "subject": "acme", "source": "extraction", "source_run_id": "r-acme",
		"created_at": "2026-05-06T07:08:09Z", "updated_at": "2026-05-06T07:08:09Z"}
	if fmt.Sprint(first) != fmt.Sprint(want) {
		t.Fatalf("memory %v, want %v", first, want)
	}
	// The caller's own subject named explicitly needs no extra scope.
	if st, v := e.mem(t, "GET", "/v1/memories?subject=acme", "tok-acme-123"); st != 200 || len(texts(v)) != 3 {
		t.Fatalf("own subject named: %d %v", st, v)
	}

	// Pages of one: next_cursor chains them.
	var all []string
	path := "/v1/memories?subject=alice&limit=1"
	for pages := 0; ; pages++ {
		st, v := e.mem(t, "GET", path, "tok-acme-bo")
		if st != 200 || pages > 3 {
			t.Fatalf("page %d: %d %v", pages, st, v)
		}
		all = append(all, texts(v)...)
		next, _ := v["next_cursor"].(string)
		if next == "" {
			break
		}
		path = "/v1/memories?subject=alice&limit=1&cursor=" + next
	}
	if strings.Join(all, "|") != "acme/alice fact 1|acme/alice fact 2" {
		t.Fatalf("alice's memories in acme: %v", all)
	}
	// globex's back office sees globex's alice, never acme's.
	if st, v := e.mem(t, "GET", "/v1/memories?subject=alice", "tok-globex-bo"); st != 200 || strings.Join(texts(v), "|") != "globex/alice fact 1" {
		t.Fatalf("globex alice: %d %v", st, v)
	}
	// globex's token labelled globex has no memories, whatever acme's subject acme has.
	if st, v := e.mem(t, "GET", "/v1/memories", "tok-globex-1"); st != 200 || len(texts(v)) != 0 || v["memories"] == nil {
		t.Fatalf("globex own: %d %v", st, v)
	}
	if st, v := e.mem(t, "GET", "/v1/memories?subject=acme", "tok-globex-bo"); st != 200 || strings.Join(texts(v), "|") != "globex/acme fact 1" {
		t.Fatalf("globex's subject acme: %d %v", st, v)
	}
}

// TestMemoriesErrors: every client mistake on the memory routes is a
// 4xx with its code, never a 500.
func TestMemoriesErrors(t *testing.T) {
	e := newEnv(t)
	ms := e.memoryStore(t)
	seed(t, ms, "acme", "acme", 1, e.clock.T)
	for _, tc := range []struct {
		name, method, path, token string
		status                    int
		code                      string
	}{
		{"no token", "GET", "/v1/memories", "", 401, "unauthorized"},
		{"read without memories:read", "GET", "/v1/memories", "tok-nomem", 403, "forbidden"},
		{"delete without memories:delete", "DELETE", "/v1/memories/m1", "tok-nomem", 403, "forbidden"},
		{"erase without memories:delete", "DELETE", "/v1/memories", "tok-readonly", 403, "forbidden"},
		{"another subject without memories:subject", "GET", "/v1/memories?subject=alice", "tok-acme-123", 403, "forbidden"},
		{"delete of another subject without memories:subject", "DELETE", "/v1/memories/m1?subject=alice", "tok-acme-123", 403, "forbidden"},
		{"erase of another subject without memories:subject", "DELETE", "/v1/memories?subject=alice", "tok-acme-123", 403, "forbidden"},
		{"empty subject", "GET", "/v1/memories?subject=", "tok-acme-bo", 400, "invalid_request"},
		{"control character in subject", "GET", "/v1/memories?subject=a%0Ab", "tok-acme-bo", 400, "invalid_request"},
		{"subject too long", "DELETE", "/v1/memories?subject=" + strings.Repeat("s", core.MaxSubjectLen+1), "tok-acme-bo", 400, "invalid_request"},
		{"no identity, no subject", "GET", "/v1/memories", "tok-anon", 400, "invalid_request"},
		{"no identity, no subject, erase", "DELETE", "/v1/memories", "tok-anon", 400, "invalid_request"},
		{"limit zero", "GET", "/v1/memories?limit=0", "tok-acme-123", 400, "invalid_query"},
		{"limit not a number", "GET", "/v1/memories?limit=ten", "tok-acme-123", 400, "invalid_query"},
		{"cursor not handed out", "GET", "/v1/memories?cursor=not*a*cursor", "tok-acme-123", 400, "invalid_cursor"},
		{"unknown memory", "DELETE", "/v1/memories/m9", "tok-acme-123", 404, "not_found"},
		{"id longer than any memory's", "DELETE", "/v1/memories/" + strings.Repeat("m", 5000), "tok-acme-123", 404, "not_found"},
		{"id no memory can have", "DELETE", "/v1/memories/m%0A1", "tok-acme-123", 404, "not_found"},
		{"wrong method", "POST", "/v1/memories", "tok-acme-123", 405, "method_not_allowed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := strings.ReplaceAll(tc.path, "%0A", "\n")
			st, v := e.mem(t, tc.method, path, tc.token)
			if st != tc.status || code(v) != tc.code {
				t.Fatalf("%d %v, want %d %s", st, v, tc.status, tc.code)
			}
		})
	}
	// Nothing was deleted by the refused requests.
	if st, v := e.mem(t, "GET", "/v1/memories", "tok-acme-123"); st != 200 || len(texts(v)) != 1 {
		t.Fatalf("after the refusals: %d %v", st, v)
	}
	// A subject without an identity of its own may be named with memories:subject.
	if st, v := e.mem(t, "GET", "/v1/memories?subject=acme", "tok-anon"); st != 403 || code(v) != "forbidden" {
		t.Fatalf("anon naming a subject without memories:subject: %d %v", st, v)
	}
}

// TestMemoriesDelete: DELETE /v1/memories/{id} deletes one memory of the
// subject (204, then 404); a memory of the same id in another subject or
// another tenant is not the one deleted, and no tenant's token deletes
// another tenant's memory, even holding memories:subject.
func TestMemoriesDelete(t *testing.T) {
	e := newEnv(t)
	ms := e.memoryStore(t)
	seed(t, ms, "acme", "acme", 2, e.clock.T)
	seed(t, ms, "acme", "alice", 2, e.clock.T)
	seed(t, ms, "globex", "alice", 2, e.clock.T)

	if st, v := e.mem(t, "DELETE", "/v1/memories/m1", "tok-acme-123"); st != http.StatusNoContent || v != nil {
		t.Fatalf("delete own m1: %d %v", st, v)
	}
	if st, v := e.mem(t, "DELETE", "/v1/memories/m1", "tok-acme-123"); st != 404 || code(v) != "not_found" {
		t.Fatalf("delete m1 again: %d %v", st, v)
	}
	if st, _ := e.mem(t, "DELETE", "/v1/memories/m2?subject=alice", "tok-acme-bo"); st != 204 {
		t.Fatalf("back office deletes alice's m2: %d", st)
	}
	check := func(tenant, subject, want string) {
		t.Helper()
		page, _, err := ms.Memories(context.Background(), core.MemoryScope{Tenant: tenant, Subject: subject}, "", 0)
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, m := range page {
			ids = append(ids, m.ID)
		}
		if strings.Join(ids, ",") != want {
			t.Fatalf("%s/%s holds %v, want %s", tenant, subject, ids, want)
		}
	}
	check("acme", "acme", "m2")
	check("acme", "alice", "m1")
	check("globex", "alice", "m1,m2")
	// globex's back office cannot reach acme's alice: its m1 is globex's.
	if st, _ := e.mem(t, "DELETE", "/v1/memories/m1?subject=alice", "tok-globex-bo"); st != 204 {
		t.Fatalf("globex deletes its alice's m1: %d", st)
	}
	if st, _ := e.mem(t, "DELETE", "/v1/memories/m2?subject=alice", "tok-globex-bo"); st != 204 {
		t.Fatalf("globex deletes its alice's m2: %d", st)
	}
	check("acme", "alice", "m1")
	check("globex", "alice", "")
}

// memDoc checks the memory tests' exchanges against the OpenAPI
// document (one checker: building it takes a while).
var memDoc = sync.OnceValues(func() (*openapitest.Checker, error) { return openapitest.New(batonevents.OpenAPI) })

// mem sends a request to a memory route and checks that the OpenAPI
// document describes the exchange; it returns the status and the JSON
// answer (nil for none).
func (e *env) mem(t *testing.T, method, path, token string) (int, map[string]any) {
	t.Helper()
	p, query, _ := strings.Cut(path, "?")
	req := events.APIGatewayProxyRequest{HTTPMethod: method, Path: p, Headers: map[string]string{}, QueryStringParameters: map[string]string{}}
	if token != "" {
		req.Headers["Authorization"] = "Bearer " + token
	}
	q := url.Values{}
	for _, kv := range strings.Split(query, "&") {
		if k, v, ok := strings.Cut(kv, "="); ok {
			req.QueryStringParameters[k] = v
			q.Set(k, v)
		}
	}
	resp, err := e.api.Handle(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := memDoc()
	if err != nil {
		t.Fatal(err)
	}
	seen := len(doc.Problems())
	hreq, err := http.NewRequest(method, (&url.URL{Scheme: "http", Host: "127.0.0.1:8080", Path: p, RawQuery: q.Encode()}).String(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range req.Headers {
		hreq.Header.Set(k, v)
	}
	hdr := http.Header{}
	for k, v := range resp.Headers {
		hdr.Set(k, v)
	}
	doc.Exchange(hreq, nil, &http.Response{StatusCode: resp.StatusCode, Header: hdr, Request: hreq}, []byte(resp.Body))
	if problems := doc.Problems()[seen:]; len(problems) > 0 {
		t.Fatalf("%s %s: the OpenAPI document does not describe the exchange: %v", method, path, problems)
	}
	if resp.Body == "" {
		return resp.StatusCode, nil
	}
	var out map[string]any
	if err := json.Unmarshal([]byte(resp.Body), &out); err != nil {
		t.Fatalf("%s %s: body is not JSON: %q", method, path, resp.Body)
	}
	return resp.StatusCode, out
}

// TestMemoriesErase: DELETE /v1/memories?subject= erases the subject at
// the API's clock (deleted, erased_at), again is deleted 0, and leaves
// the other subjects and the other tenants' same subject alone.
func TestMemoriesErase(t *testing.T) {
	e := newEnv(t)
	ms := e.memoryStore(t)
	seed(t, ms, "acme", "alice", 3, e.clock.T)
	seed(t, ms, "acme", "bob", 1, e.clock.T)
	seed(t, ms, "globex", "alice", 2, e.clock.T)
	e.clock.T = e.clock.T.Add(time.Hour)

	st, v := e.mem(t, "DELETE", "/v1/memories?subject=alice", "tok-acme-bo")
	if st != 200 || fmt.Sprint(v) != "map[deleted:3 erased_at:2026-05-06T08:08:09Z subject:alice]" {
		t.Fatalf("erase alice: %d %v", st, v)
	}
	if st, v := e.mem(t, "DELETE", "/v1/memories?subject=alice", "tok-acme-bo"); st != 200 || v["deleted"] != 0.0 {
		t.Fatalf("erase alice again: %d %v", st, v)
	}
	if st, v := e.mem(t, "GET", "/v1/memories?subject=alice", "tok-acme-bo"); st != 200 || len(texts(v)) != 0 {
		t.Fatalf("alice after the erasure: %d %v", st, v)
	}
	if st, v := e.mem(t, "GET", "/v1/memories?subject=bob", "tok-acme-bo"); st != 200 || len(texts(v)) != 1 {
		t.Fatalf("bob after alice's erasure: %d %v", st, v)
	}
	if st, v := e.mem(t, "GET", "/v1/memories?subject=alice", "tok-globex-bo"); st != 200 || len(texts(v)) != 2 {
		t.Fatalf("globex's alice after acme's alice's erasure: %d %v", st, v)
	}
	// The erasure refuses a write of a run that began before it.
	err := ms.WriteMemories(context.Background(), core.MemoryWrite{Scope: core.MemoryScope{Tenant: "acme", Subject: "alice"}, Since: e.clock.T.Add(-time.Minute),
		Put: []core.Memory{{ID: "late", Subject: "alice", Text: "late fact"}}})
	if !errors.Is(err, core.ErrErased) {
		t.Fatalf("a write of an earlier run after the erasure: %v", err)
	}
	// The caller's own subject, without ?subject=.
	seed(t, ms, "acme", "acme", 2, e.clock.T)
	if st, v := e.mem(t, "DELETE", "/v1/memories", "tok-acme-123"); st != 200 || v["subject"] != "acme" || v["deleted"] != 2.0 {
		t.Fatalf("erase own: %d %v", st, v)
	}
}
