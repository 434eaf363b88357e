package openapitest_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/baton-agents/baton/events"
	"github.com/baton-agents/baton/internal/openapitest"
)

// TestTransport: exchanges through the transport are checked and
// counted, bodies reach the caller intact, other requests pass by.
func TestTransport(t *testing.T) {
	c, err := openapitest.New(events.OpenAPI)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/v1/runs":
			_, _ = io.WriteString(w, `{"runs":[],"next_cursor":null}`)
		case "/v1/runs/r-1":
			_, _ = io.WriteString(w, `{"runs":[]}`) // not a run view
		default:
			_, _ = io.WriteString(w, `{}`)
		}
	}))
	defer srv.Close()
	client := &http.Client{Transport: c.Transport(http.DefaultTransport, func(r *http.Request) bool { return strings.HasPrefix(r.URL.Path, "/v1/") })}
	get := func(path string) string {
		req, _ := http.NewRequest("GET", srv.URL+path, nil)
		req.Header.Set("Authorization", "Bearer x")
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}
	if b := get("/v1/runs"); b != `{"runs":[],"next_cursor":null}` {
		t.Fatalf("body %q", b)
	}
	if len(c.Problems()) != 0 {
		t.Fatalf("a documented exchange: %v", c.Problems())
	}
	get("/other")
	get("/v1/runs/r-1")
	if p := c.Problems(); len(p) != 1 || !strings.Contains(p[0], "GET /v1/runs/r-1") {
		t.Fatalf("problems %v", p)
	}
	if seen := c.Seen(); !slices.Equal(seen["GET /v1/runs"], []int{200}) || len(seen) != 2 {
		t.Fatalf("seen %v", seen)
	}
	if unseen := c.Unseen(); slices.Contains(unseen, "GET /v1/runs") || !slices.Contains(unseen, "POST /v1/runs") {
		t.Fatalf("unseen %v", unseen)
	}
}
