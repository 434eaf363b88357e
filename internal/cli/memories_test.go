package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// memoryServer serves the memory routes of the API on a map of subjects
// to memories, in pages of at most two (so a listing follows
// next_cursor), and records the requests.
type memoryServer struct {
	mu       sync.Mutex
	subjects map[string][]memory
	requests []string
}

func (s *memoryServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests = append(s.requests, r.Method+" "+r.URL.RequestURI())
	if r.Header.Get("Authorization") != "Bearer tok-1" {
		w.WriteHeader(401)
		fmt.Fprint(w, `{"error":{"code":"unauthorized","message":"the token is not valid"}}`)
		return
	}
	subject := r.URL.Query().Get("subject")
	if subject == "" {
		subject = "me"
	}
	mems := s.subjects[subject]
	id, one := strings.CutPrefix(r.URL.Path, "/v1/memories/")
	switch {
	case r.Method == "GET" && r.URL.Path == "/v1/memories":
		start, _ := strconv.Atoi(r.URL.Query().Get("cursor"))
		limit, _ := strconv.Atoi(r.URL.Query().Get("limit"))
		end := min(start+min(limit, 2), len(mems))
		next := ""
		if end < len(mems) {
			next = strconv.Itoa(end)
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"memories": mems[start:end], "next_cursor": next})
	case r.Method == "DELETE" && r.URL.Path == "/v1/memories":
		delete(s.subjects, subject)
		_ = json.NewEncoder(w).Encode(map[string]any{"subject": subject, "deleted": len(mems), "erased_at": "2026-05-06T07:08:09Z"})
	case r.Method == "DELETE" && one:
		i := slices.IndexFunc(mems, func(m memory) bool { return m.ID == id })
		if i < 0 {
			w.WriteHeader(404)
			fmt.Fprintf(w, `{"error":{"code":"not_found","message":"the subject has no memory %s"}}`, id)
			return
		}
		s.subjects[subject] = slices.Delete(mems, i, i+1)
		w.WriteHeader(204)
	default:
		w.WriteHeader(404)
	}
}

func newMemoryServer(t *testing.T) (*memoryServer, func(args ...string) (int, string, string)) {
	s := &memoryServer{subjects: map[string][]memory{}}
	for i := 1; i <= 5; i++ {
		s.subjects["me"] = append(s.subjects["me"], memory{ID: fmt.Sprintf("m%d", i), Subject: "me", Source: "extraction", SourceRunID: "r-1",
			Text: fmt.Sprintf("fact %d: %s", i, strings.Repeat("long ", 30*(i/5))), CreatedAt: "2026-05-06T07:08:09Z"})
	}
	s.subjects["alice"] = []memory{{ID: "a1", Subject: "alice", Source: "tool", Text: "Alice likes\ntea."}}
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	return s, func(args ...string) (int, string, string) {
		env, out, errOut := testEnv(map[string]string{"HOME": t.TempDir(), "BATON_URL": srv.URL, "BATON_TOKEN": "tok-1"})
		env.HTTP = srv.Client()
		code := Main(context.Background(), append([]string{"memories"}, args...), env)
		return code, out.String(), errOut.String()
	}
}

// TestMemoriesList: baton memories ls follows next_cursor to list every
// memory of the subject as a table (text on one line, cut), or as one
// JSON object; --limit stops early and says more remain.
func TestMemoriesList(t *testing.T) {
	s, run := newMemoryServer(t)
	code, out, errOut := run("ls")
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if code != ExitOK || errOut != "" || len(lines) != 6 || !strings.HasPrefix(lines[0], "ID ") || !strings.Contains(lines[0], "CREATED") {
		t.Fatalf("ls: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	if !strings.HasPrefix(lines[1], "m1 ") || !strings.Contains(lines[1], "extraction") || !strings.HasSuffix(lines[1], " fact 1:") {
		t.Errorf("first row %q", lines[1])
	}
	if !strings.HasSuffix(lines[5], "…") || len([]rune(lines[5])) > 28+1+19+1+10+1+73 {
		t.Errorf("a long text is not cut: %q", lines[5])
	}
	if want := []string{"GET /v1/memories?limit=100", "GET /v1/memories?cursor=2&limit=100", "GET /v1/memories?cursor=4&limit=100"}; !slices.Equal(s.requests, want) {
		t.Errorf("requests %q, want %q", s.requests, want)
	}

	s.requests = nil
	code, out, _ = run("ls", "--limit", "3", "--subject", "me")
	if code != ExitOK || strings.Count(out, "\nm") != 3 || !strings.Contains(out, "3 listed; more remain") {
		t.Fatalf("ls --limit 3: exit %d, %q", code, out)
	}
	if want := []string{"GET /v1/memories?limit=3&subject=me", "GET /v1/memories?cursor=2&limit=1&subject=me"}; !slices.Equal(s.requests, want) {
		t.Errorf("requests %q, want %q", s.requests, want)
	}

	code, out, _ = run("ls", "--subject", "alice", "--json")
	var got struct {
		Memories   []memory `json:"memories"`
		NextCursor string   `json:"next_cursor"`
	}
	if err := json.Unmarshal([]byte(out), &got); code != ExitOK || err != nil || len(got.Memories) != 1 || got.Memories[0].Text != "Alice likes\ntea." || got.NextCursor != "" {
		t.Fatalf("ls --json: exit %d, %q", code, out)
	}
	if code, out, _ = run("ls", "--subject", "nobody"); code != ExitOK || out != "no memories\n" {
		t.Fatalf("ls of a subject without memories: %d %q", code, out)
	}
}

// TestMemoriesRemove: baton memories rm deletes one memory, says when
// there is none (exit 1 with the API's code), and rm --all --subject
// erases the subject without asking and prints the count.
func TestMemoriesRemove(t *testing.T) {
	s, run := newMemoryServer(t)
	if code, out, errOut := run("rm", "m2"); code != ExitOK || out != "deleted memory m2\n" || errOut != "" {
		t.Fatalf("rm m2: %d %q %q", code, out, errOut)
	}
	if code, _, errOut := run("rm", "m2"); code != ExitError || errOut != "baton memories rm: not_found: the subject has no memory m2 (HTTP 404)\n" {
		t.Fatalf("rm m2 again: %d %q", code, errOut)
	}
	if code, _, _ := run("rm", "a1", "--subject", "alice"); code != ExitOK || len(s.subjects["alice"]) != 0 {
		t.Fatalf("rm a1 of alice: %d %v", code, s.subjects["alice"])
	}
	if code, out, _ := run("rm", "--all", "--subject", "me"); code != ExitOK || !strings.HasPrefix(out, "erased the memories of me: 4 deleted (at ") {
		t.Fatalf("rm --all: %d %q", code, out)
	}
	if code, out, _ := run("rm", "--all", "--subject", "me", "--json"); code != ExitOK || out != `{"subject":"me","deleted":0,"erased_at":"2026-05-06T07:08:09Z"}`+"\n" {
		t.Fatalf("rm --all again: %d %q", code, out)
	}
	want := []string{"DELETE /v1/memories/m2", "DELETE /v1/memories/m2", "DELETE /v1/memories/a1?subject=alice", "DELETE /v1/memories?subject=me", "DELETE /v1/memories?subject=me"}
	if !slices.Equal(s.requests, want) {
		t.Fatalf("requests %q, want %q", s.requests, want)
	}
}

// TestMemoriesUsage: bad command lines exit 2 with one line naming the
// mistake and send nothing; baton memories -h lists the commands.
func TestMemoriesUsage(t *testing.T) {
	s, run := newMemoryServer(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"rm"}, "name the memory to delete"},
		{[]string{"rm", "--all"}, "--all erases one subject's memories: name it with --subject"},
		{[]string{"rm", "m1", "--all", "--subject", "me"}, "give a memory ID or --all, not both"},
		{[]string{"rm", "m1", "m2"}, "wrong number of arguments"},
		{[]string{"ls", "--limit", "-1"}, "--limit wants 1 or more"},
		{[]string{"ls", "extra"}, "wrong number of arguments"},
		{[]string{"forget"}, `unknown memories command "forget"`},
		{nil, "want memories ls|rm"},
	} {
		code, _, errOut := run(tc.args...)
		if code != ExitUsage || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: exit %d, stderr %q, want %q", tc.args, code, errOut, tc.want)
		}
	}
	if len(s.requests) != 0 {
		t.Fatalf("sent %q", s.requests)
	}
	if code, out, errOut := run("-h"); code != ExitOK || errOut != "" || !strings.HasPrefix(out, "usage: baton memories <command>") || !strings.Contains(out, "rm --all --subject S") {
		t.Fatalf("memories -h: %d %q %q", code, out, errOut)
	}
}
