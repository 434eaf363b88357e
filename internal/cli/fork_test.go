package cli

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestForkUsageErrors: a fork's bad command lines exit 2 with one line
// naming the mistake, and send nothing.
func TestForkUsageErrors(t *testing.T) {
	var sent int
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { sent++ }))
	defer srv.Close()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"r-1"}, "name the message to fork at: --at SEQ"},
		{[]string{"r-1", "--at", "0"}, "--at wants a message's seq, 1 or more; got 0"},
		{[]string{"r-1", "--at", "-3"}, "--at wants a message's seq, 1 or more; got -3"},
		{[]string{"r-1", "--at", "two"}, `--at "two" is not a valid value (want a whole number)`},
		{[]string{"r-1", "--at", "2", "--tools", "rerun"}, `--tools wants reuse, replay or live; got "rerun"`},
		{[]string{"r-1", "--at", "2", "--tools", ""}, `--tools wants reuse, replay or live; got ""`},
		{[]string{"r-1", "--at", "2", "--version", "av_1", "--alias", "canary"}, "give --version or --alias, not both"},
		{[]string{"r-1", "--at", "2", "--version", ""}, "--version and --alias want a name"},
		{[]string{"r-1", "--at", "2", "--edit", "  "}, "--edit wants the text that replaces the message"},
		{[]string{"r-1", "--at", "2", "--idempotency-key", ""}, "--idempotency-key wants a key"},
		{[]string{"r-1", "--at", "2", "--client-tool", "lookup=./x"}, "starts with client/"},
		{[]string{"--at", "2"}, "wrong number of arguments"},
		{[]string{"r-1", "r-2", "--at", "2"}, "wrong number of arguments"},
	} {
		env, _, errOut := testEnv(map[string]string{"HOME": t.TempDir(), "BATON_URL": srv.URL})
		code := Main(context.Background(), append([]string{"runs", "fork"}, tc.args...), env)
		last := errOut.String()
		if i := strings.LastIndex(strings.TrimSuffix(last, "\n"), "\n"); i >= 0 {
			last = last[i+1:] // after the usage a wrong count prints
		}
		if code != ExitUsage || !strings.HasPrefix(last, "baton runs fork: ") || !strings.Contains(last, tc.want) {
			t.Errorf("%v: exit %d, stderr %q, want %q", tc.args, code, errOut.String(), tc.want)
		}
	}
	if sent != 0 {
		t.Fatalf("%d requests sent for bad command lines", sent)
	}
}

// forkServer is a fake API that answers a fork (after failing answers,
// if asked) and the fork's stream and view.
type forkServer struct {
	mu       sync.Mutex
	fails    []int // statuses the first fork requests get
	bodies   []map[string]any
	keys     []string
	forkView string
}

func (s *forkServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	switch {
	case r.Method == http.MethodPost && r.URL.Path == "/v1/runs/r-src/fork":
		var body map[string]any
		b, _ := io.ReadAll(r.Body)
		_ = json.Unmarshal(b, &body)
		s.bodies = append(s.bodies, body)
		s.keys = append(s.keys, r.Header.Get("Idempotency-Key"))
		if len(s.fails) > 0 {
			st := s.fails[0]
			s.fails = s.fails[1:]
			w.WriteHeader(st)
			_, _ = w.Write([]byte(`{"error":{"code":"unavailable","message":"try again"}}`))
			return
		}
		w.WriteHeader(http.StatusAccepted)
		_, _ = w.Write([]byte(`{"run_id":"r-fork","session_id":"s-fork","agent":"e2e","status":"queued","forked_from":{"run_id":"r-src","seq":3,"tools":"replay"}}`))
	case r.URL.Path == "/v1/runs/r-fork/stream":
		w.WriteHeader(http.StatusNoContent)
	case r.URL.Path == "/v1/runs/r-fork":
		_, _ = w.Write([]byte(s.forkView))
	default:
		http.NotFound(w, r)
	}
}

// TestForkPostsAndFollows: the flags become the fork's body over the
// --file's (the flags win), a transient failure is sent again with the
// same Idempotency-Key, and the fork is followed to its end like baton
// run's run, its origin named first.
func TestForkPostsAndFollows(t *testing.T) {
	old := retryPause
	retryPause = func(int) time.Duration { return time.Millisecond }
	t.Cleanup(func() { retryPause = old })
	s := &forkServer{fails: []int{http.StatusServiceUnavailable, http.StatusTooManyRequests},
		forkView: `{"run_id":"r-fork","session_id":"s-fork","agent":"e2e","status":"completed","result":{"final_content":"Edited answer.","turn_count":1,"usage":{"total_tokens":12}}}`}
	srv := httptest.NewServer(s)
	defer srv.Close()
	file := writeFile(t, `{"model":{"provider":"scripted","turns":[{"content":"x"}]},"alias":"canary","tools":"live","max_turns":4}`)
	env, out, errOut := testEnv(map[string]string{"HOME": t.TempDir(), "BATON_URL": srv.URL})
	env.HTTP = srv.Client()
	code := Main(context.Background(), []string{"runs", "fork", "r-src", "--at", "3", "--edit", "Ask it again", "--tools", "replay", "--version", "av_2", "--file", file, "--no-input"}, env)
	if code != ExitOK {
		t.Fatalf("exit %d, stderr %q, stdout %q", code, errOut.String(), out.String())
	}
	if len(s.bodies) != 3 || s.keys[0] == "" || s.keys[1] != s.keys[0] || s.keys[2] != s.keys[0] {
		t.Fatalf("%d fork requests with keys %q: want 3 with one key", len(s.bodies), s.keys)
	}
	got, _ := json.Marshal(s.bodies[2])
	want := `{"agent_version":"av_2","content":"Ask it again","max_turns":4,"model":{"provider":"scripted","turns":[{"content":"x"}]},"seq":3,"tools":"replay"}`
	if string(got) != want {
		t.Fatalf("body %s\nwant %s", got, want)
	}
	for _, line := range []string{"forked r-src at message 3 (tools: replay)\n", "run r-fork (agent e2e, session s-fork)\n", "Edited answer.\n", "status completed · 1 turn"} {
		if !strings.Contains(out.String(), line) {
			t.Fatalf("output lacks %q:\n%s", line, out.String())
		}
	}

	// --idempotency-key is the key; an error that is not transient is
	// not sent again.
	s.fails = []int{http.StatusBadRequest}
	s.bodies, s.keys = nil, nil
	env, _, errOut = testEnv(map[string]string{"HOME": t.TempDir(), "BATON_URL": srv.URL})
	env.HTTP = srv.Client()
	if code := Main(context.Background(), []string{"runs", "fork", "r-src", "--at", "1", "--idempotency-key", "k-1"}, env); code != ExitError || len(s.keys) != 1 || s.keys[0] != "k-1" {
		t.Fatalf("exit %d, keys %q, stderr %q", code, s.keys, errOut.String())
	}
	if got, _ := json.Marshal(s.bodies[0]); string(got) != `{"seq":1}` {
		t.Fatalf("a fork without options sent %s", got)
	}
}

// TestCompare: where the runs part (each side's message, shortened, on
// one line) and the side-by-side table: status, version, origin, final
// answer, turns, tokens, cost, duration and each tool call's outcome.
func TestCompare(t *testing.T) {
	cmp := `{
	 "diverged_at": {"seq": 3,
	   "a": {"seq": 3, "role": "tool_call", "content": "", "metadata": {"tool_name": "http/send_email", "parameters": {"to": "ann@example.com"}}},
	   "b": {"seq": 3, "role": "user", "content": "What about\n  Tuesday instead of Monday, and could you also check whether the room is free for the whole afternoon please? Thank you so much."}},
	 "a": {"run_id": "r-a", "status": "completed", "agent_version": "av_1", "final_answer": "Sent the email to Ann.", "turns": 2,
	       "total_tokens": 12345, "cost_usd": 0.0123, "duration_ms": 1250,
	       "tool_calls": [{"seq": 3, "tool_call_id": "c1", "tool_name": "http/send_email", "outcome": "executed", "success": true}]},
	 "b": {"run_id": "r-b", "status": "failed", "agent_version": "av_2", "forked_from": {"run_id": "r-a", "seq": 3, "tools": "replay"},
	       "final_answer": "The room is free on Tuesday afternoon, from one until five.", "turns": 3, "total_tokens": 900, "cost_usd": null, "duration_ms": 80,
	       "tool_calls": [{"seq": 4, "tool_call_id": "c1", "tool_name": "http/send_email", "outcome": "replayed", "success": true},
	                      {"seq": 6, "tool_call_id": "c2", "tool_name": "http/lookup_room", "outcome": "not_recorded", "success": false}]}
	}`
	var paths []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		paths = append(paths, r.URL.EscapedPath())
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(cmp))
	}))
	defer srv.Close()
	env, out, errOut := testEnv(map[string]string{"HOME": t.TempDir(), "BATON_URL": srv.URL})
	env.HTTP = srv.Client()
	if code := Main(context.Background(), []string{"runs", "compare", "r-a", "r-b"}, env); code != ExitOK {
		t.Fatalf("exit %d, stderr %q", code, errOut.String())
	}
	want := `r-a and r-b diverge at message 3:
  A 3 tool_call: http/send_email {"to":"ann@example.com"}
  B 3 user: What about Tuesday instead of Monday, and could you also check whether the room is free for the whole afternoon please?…

              A r-a                          B r-b
status        completed                      failed
version       av_1                           av_2
forked from                                  r-a at message 3 (tools: replay)
final answer  Sent the email to Ann.         The room is free on Tuesday afternoon,…
turns         2                              3
tokens        12,345                         900
cost          $0.012300                      not priced
duration      1.25s                          80ms
tool calls    1 executed                     1 replayed, 1 not recorded
              3 http/send_email executed ok  4 http/send_email replayed ok
                                             6 http/lookup_room not_recorded failed
`
	if out.String() != want {
		t.Fatalf("compare:\n%s\nwant:\n%s", out.String(), want)
	}
	if len(paths) != 1 || paths[0] != "/v1/runs/r-a/compare/r-b" {
		t.Fatalf("requests %v", paths)
	}
	env, out, _ = testEnv(map[string]string{"HOME": t.TempDir(), "BATON_URL": srv.URL})
	env.HTTP = srv.Client()
	if code := Main(context.Background(), []string{"runs", "compare", "r-a", "r-b", "--json"}, env); code != ExitOK || !json.Valid(out.Bytes()) {
		t.Fatalf("--json: exit %d, %q", code, out.String())
	}
	env, _, errOut = testEnv(map[string]string{"HOME": t.TempDir(), "BATON_URL": srv.URL})
	if code := Main(context.Background(), []string{"runs", "compare", "r-a"}, env); code != ExitUsage {
		t.Fatalf("one run: exit %d, %q", code, errOut.String())
	}
}

func writeFile(t *testing.T, text string) string {
	t.Helper()
	p := t.TempDir() + "/body.json"
	if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestCompareHeadline: the same transcripts say so; a side that ended
// before the divergence has no message there.
func TestCompareHeadline(t *testing.T) {
	for _, tc := range []struct{ cmp, want string }{
		{`{"diverged_at":null,"a":{"run_id":"r-a"},"b":{"run_id":"r-b"}}`, "r-a and r-b have the same transcript\n"},
		{`{"diverged_at":{"seq":5,"a":{"seq":5,"role":"assistant","content":"One more thing."},"b":null},"a":{"run_id":"r-a"},"b":{"run_id":"r-b"}}`,
			"r-a and r-b diverge at message 5:\n  A 5 assistant: One more thing.\n  B (no message)\n"},
	} {
		var cmp comparison
		if err := json.Unmarshal([]byte(tc.cmp), &cmp); err != nil {
			t.Fatal(err)
		}
		env, out, _ := testEnv(nil)
		showComparison(newPrinter(env, false), cmp)
		if !strings.HasPrefix(out.String(), tc.want+"\n") || !strings.Contains(out.String(), "tool calls    none") {
			t.Errorf("got:\n%s\nwant it to start:\n%s", out.String(), tc.want)
		}
	}
}
