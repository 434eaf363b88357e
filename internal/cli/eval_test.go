package cli

import (
	"context"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestReadDataset: a dataset's cases are its non-blank lines, sent as
// they are; a line that is not a case is a usage error naming its number.
func TestReadDataset(t *testing.T) {
	good := "{\"id\":\"c1\",\"input\":{\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]},\"expect\":{\"max_turns\":2.50}}\n\n  \r\n{\"id\":\"c2\",\"from_run\":\"r-1\"}\r\n"
	cases, lines, err := readDataset(strings.NewReader(good), "d.jsonl")
	if err != nil || len(cases) != 2 || len(lines) != 2 || lines[0] != 1 || lines[1] != 4 {
		t.Fatalf("cases %s, err %v", cases, err)
	}
	if string(cases[0]) != `{"id":"c1","input":{"messages":[{"role":"user","content":"hi"}]},"expect":{"max_turns":2.50}}` || string(cases[1]) != `{"id":"c2","from_run":"r-1"}` {
		t.Fatalf("cases changed: %s", cases)
	}
	for _, tc := range []struct{ data, want string }{
		{"{\"id\":\"c1\",\"from_run\":\"r\"}\n{\"id\":\"c2\",", "line 2: not JSON"},
		{"\n\n[1,2]\n", "line 3: not JSON"},
		{"null\n", "line 1: a case is a JSON object"},
		{"{\"id\":\"c1\",\"from_run\":\"r\"} {\"id\":\"c2\"}\n", "line 1: more than one JSON value"},
		{"{\"from_run\":\"r\"}\n", `line 1: a case needs an "id" string`},
		{"{\"id\":7,\"from_run\":\"r\"}\n", `line 1: a case needs an "id" string`},
		{"{\"id\":\"" + strings.Repeat("x", 129) + "\",\"from_run\":\"r\"}\n", "line 1: the id is 129 characters long, at most 128"},
		{"{\"id\":\"c1\",\"from_run\":\"r\"}\n{\"id\":\"c1\",\"from_run\":\"r2\"}\n", `line 2: id "c1" is already the id of line 1`},
		{"{\"id\":\"c1\"}\n", `line 1: case "c1" needs "input" or "from_run", one of them`},
		{"{\"id\":\"c1\",\"from_run\":\"r\",\"input\":{}}\n", `one of them`},
		{"{\"id\":\"c1\",\"input\":\"hi\"}\n", `case "c1": "input" is a JSON object`},
		{"{\"id\":\"c1\",\"from_run\":\"\"}\n", `case "c1": "from_run" is a run id`},
		{"{\"id\":\"c1\",\"from_run\":\"r\",\"expect\":[]}\n", `case "c1": "expect" is a JSON object`},
		{"\n \n", "d.jsonl has no cases"},
	} {
		_, _, err := readDataset(strings.NewReader(tc.data), "d.jsonl")
		var ue *usageError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "nothing was sent") {
			t.Errorf("%q: %v, want a usage error with %q", tc.data, err, tc.want)
		}
	}
}

// evalServer is a fake API of evals: each POST /v1/evals starts an eval
// whose view goes through views (one per GET, the last one kept).
type evalServer struct {
	mu      sync.Mutex
	posts   []map[string]any
	keys    []string
	gets    map[string]int
	views   map[string][]string // eval id → its views, in order
	other   []string            // other requests, "METHOD path"
	onGet   func()
	created int
}

func (s *evalServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	switch {
	case r.Method == http.MethodPost && r.URL.Path == "/v1/evals":
		var body map[string]any
		b, _ := io.ReadAll(r.Body)
		_ = json.Unmarshal(b, &body)
		s.posts = append(s.posts, body)
		s.keys = append(s.keys, r.Header.Get("Idempotency-Key"))
		s.created++
		id := fmt.Sprintf("ev_%d", s.created)
		w.WriteHeader(http.StatusAccepted)
		_, _ = w.Write([]byte(s.views[id][0]))
	case r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/v1/evals/"):
		id := strings.TrimPrefix(r.URL.Path, "/v1/evals/")
		vs, ok := s.views[id]
		if !ok {
			w.WriteHeader(http.StatusNotFound)
			_, _ = w.Write([]byte(`{"error":{"code":"not_found","message":"no such eval"}}`))
			return
		}
		if s.gets == nil {
			s.gets = map[string]int{}
		}
		s.gets[id]++
		_, _ = w.Write([]byte(vs[min(s.gets[id], len(vs)-1)]))
		if s.onGet != nil {
			s.onGet()
		}
	default:
		s.other = append(s.other, r.Method+" "+r.URL.Path)
		http.NotFound(w, r)
	}
}

// evalJSON is an eval view: status, the progress and totals, and cases
// given as "id:pass" or "id:fail" (scored), "id:running" (not yet).
func evalJSON(id, version, status string, cases ...string) string {
	var cs []map[string]any
	passed, failed := 0, 0
	for i, c := range cases {
		name, state, _ := strings.Cut(c, ":")
		m := map[string]any{"id": name, "index": i, "run_id": "r-" + id + "-" + name, "status": "scored", "turns": 2 + i, "total_tokens": 100 * (i + 1), "cost_usd": 0.001 * float64(i+1), "duration_ms": 1500}
		switch state {
		case "pass":
			passed++
			m["pass"] = true
			m["checks"] = []any{map[string]any{"name": "final.equals", "pass": true, "detail": ""}}
			m["final_answer"] = "Done."
		case "fail":
			failed++
			m["pass"] = false
			m["checks"] = []any{
				map[string]any{"name": "final.equals", "pass": true, "detail": ""},
				map[string]any{"name": "trajectory", "pass": false, "detail": "call 1: want ability/echo, got ability/search"},
				map[string]any{"name": "max_turns", "pass": false, "detail": "4 turns, at most 3"},
			}
			m["judge"] = map[string]any{"run_id": "r-judge", "score": 0.25, "reason": "Used the wrong tool."}
		default:
			m["status"] = state
		}
		cs = append(cs, m)
	}
	var rate any
	if passed+failed > 0 {
		rate = float64(passed) / float64(passed+failed)
	}
	v := map[string]any{"eval_id": id, "name": "smoke", "agent": "demo", "agent_version": version, "tools": "replay", "status": status,
		"created_at": "2026-11-27T10:00:00Z", "progress": map[string]any{"total": len(cases), "started": len(cases), "scored": passed + failed, "passed": passed, "failed": failed},
		"totals": map[string]any{"pass_rate": rate, "mean_turns": 2.5, "total_tokens": 300, "mean_tokens": 150, "cost_usd": 0.003, "mean_duration_ms": 1500},
		"cases":  cs}
	if status != "running" {
		v["ended_at"] = "2026-11-27T10:00:12.5Z"
	}
	b, _ := json.Marshal(v)
	return string(b)
}

func fastPoll(t *testing.T) {
	old := evalPoll
	evalPoll = time.Millisecond
	t.Cleanup(func() { evalPoll = old })
}

const twoCases = "{\"id\":\"c1\",\"from_run\":\"r-1\"}\n{\"id\":\"c2\",\"input\":{\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]},\"expect\":{\"final\":{\"contains\":[\"hi\"]}}}\n"

// TestEvalRunAgainst: eval run sends the dataset's cases and the flags
// as an eval, and a second one of the first's cases (dataset_from) on
// --against's version, shows their progress
// on stderr until both end, prints the cases side by side with the
// deltas and both totals, writes both views (--json) and JUnit XML
// (--junit) that reads back with encoding/xml, and exits 1 because the
// first eval's pass rate is below --min-pass.
func TestEvalRunAgainst(t *testing.T) {
	fastPoll(t)
	s := &evalServer{views: map[string][]string{
		"ev_1": {evalJSON("ev_1", "av_1", "running", "c1:running", "c2:running"), evalJSON("ev_1", "av_1", "running", "c1:pass", "c2:running"), evalJSON("ev_1", "av_1", "completed", "c1:pass", "c2:fail")},
		"ev_2": {evalJSON("ev_2", "av_2", "running", "c1:running", "c2:running"), evalJSON("ev_2", "av_2", "completed", "c1:pass", "c2:pass")},
	}}
	srv := httptest.NewServer(s)
	defer srv.Close()
	dir := t.TempDir()
	data := filepath.Join(dir, "smoke.jsonl")
	if err := os.WriteFile(data, []byte(twoCases), 0o600); err != nil {
		t.Fatal(err)
	}
	jsonOut, junitOut := filepath.Join(dir, "out.json"), filepath.Join(dir, "out.xml")
	env, out, errOut := testEnv(map[string]string{"HOME": t.TempDir(), "BATON_URL": srv.URL})
	code := Main(context.Background(), []string{"eval", "run", data, "--agent", "demo", "--alias", "prod", "--against", "av_2", "--tools", "reuse",
		"--concurrency", "3", "--judge", "grader", "--min-pass", "0.9", "--json", jsonOut, "--junit", junitOut}, env)
	if code != ExitError {
		t.Fatalf("exit %d, want 1 (pass rate 50%% < 90%%)\nstdout:\n%s\nstderr:\n%s", code, out.String(), errOut.String())
	}
	if len(s.posts) != 2 || s.keys[0] == "" || s.keys[0] == s.keys[1] {
		t.Fatalf("posts %v keys %q", s.posts, s.keys)
	}
	a, _ := json.Marshal(s.posts[0])
	want := `{"agent":"demo","alias":"prod","concurrency":3,"dataset":[{"from_run":"r-1","id":"c1"},{"expect":{"final":{"contains":["hi"]}},"id":"c2","input":{"messages":[{"content":"hi","role":"user"}]}}],"judge":"grader","name":"smoke","tools":"reuse"}`
	if string(a) != want {
		t.Fatalf("first body %s\nwant %s", a, want)
	}
	b, _ := json.Marshal(s.posts[1])
	if want := `{"agent":"demo","agent_version":"av_2","concurrency":3,"dataset_from":"ev_1","judge":"grader","name":"smoke","tools":"reuse"}`; string(b) != want {
		t.Fatalf("second body %s\nwant %s", b, want)
	}
	for _, want := range []string{"eval ev_1 started: 2 cases on agent demo version av_1", "eval ev_2 started", "keeps running on the server (baton eval cancel ev_1 ev_2 stops it)",
		"eval ev_1: 0/2 scored, 0 passed, 0 failed", "eval ev_1: 1/2 scored, 1 passed, 0 failed", "eval ev_1: 2/2 scored, 1 passed, 1 failed", "eval ev_2: 2/2 scored, 2 passed, 0 failed",
		"eval ev_1: pass rate 50.0% is below --min-pass 90.0%"} {
		if !strings.Contains(errOut.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut.String())
		}
	}
	lines := strings.Split(out.String(), "\n")
	row := func(prefix string) string {
		for _, l := range lines {
			if strings.HasPrefix(l, prefix) {
				return strings.Join(strings.Fields(l), " ")
			}
		}
		t.Fatalf("no line %q in:\n%s", prefix, out.String())
		return ""
	}
	for prefix, want := range map[string]string{
		"CASE":          "CASE A av_1 B av_2 TURNS TOKENS COST RUN A RUN B FIRST FAILING CHECK",
		"c1 ":           "c1 pass pass 2 100 $0.001000 r-ev_1-c1 r-ev_2-c1",
		"c2 ":           "c2 FAIL pass 3 200 $0.002000 r-ev_1-c2 r-ev_2-c2 A trajectory: call 1: want ability/echo, got ability/search",
		"pass rate":     "pass rate 50.0% (1 of 2) 100.0% (2 of 2) +50.0 points",
		"tokens":        "tokens 300 300 0",
		"mean duration": "mean duration 1.5s 1.5s 0",
	} {
		if got := row(prefix); got != want {
			t.Errorf("row %q:\n got %q\nwant %q", prefix, got, want)
		}
	}
	var both struct{ A, B evalView }
	raw, _ := os.ReadFile(jsonOut)
	if err := json.Unmarshal(raw, &both); err != nil || both.A.EvalID != "ev_1" || both.B.EvalID != "ev_2" || both.A.Status != "completed" || len(both.B.Cases) != 2 {
		t.Fatalf("--json: %v %s", err, raw)
	}
	var doc junitSuites
	raw, _ = os.ReadFile(junitOut)
	if !strings.HasPrefix(string(raw), "<?xml") {
		t.Fatalf("junit lacks the XML header: %s", raw)
	}
	if err := xml.Unmarshal(raw, &doc); err != nil {
		t.Fatalf("junit: %v\n%s", err, raw)
	}
	if doc.Tests != 4 || doc.Failures != 1 || len(doc.Suites) != 2 || doc.Time != "25.000" {
		t.Fatalf("testsuites %+v", doc)
	}
	s1 := doc.Suites[0]
	if s1.Name != "ev_1" || s1.Tests != 2 || s1.Failures != 1 || s1.Time != "12.500" || s1.Timestamp != "2026-11-27T10:00:00" || len(s1.Cases) != 2 {
		t.Fatalf("suite %+v", s1)
	}
	c1, c2 := s1.Cases[0], s1.Cases[1]
	if c1.Name != "c1" || c1.Classname != "eval/demo" || c1.Time != "1.500" || c1.Failure != nil || c1.SystemOut != "run r-ev_1-c1\nfinal answer: Done.\n" {
		t.Fatalf("passing case %+v", c1)
	}
	if f := c2.Failure; f == nil || f.Type != "trajectory" || f.Message != "trajectory: call 1: want ability/echo, got ability/search" ||
		f.Text != "trajectory: call 1: want ability/echo, got ability/search\nmax_turns: 4 turns, at most 3\n" || !strings.Contains(c2.SystemOut, "judge score 0.25: Used the wrong tool.") {
		t.Fatalf("failing case %+v", c2)
	}
	if doc.Suites[1].Failures != 0 || doc.Suites[1].Name != "ev_2" {
		t.Fatalf("second suite %+v", doc.Suites[1])
	}
}

// TestEvalRunPasses: one eval that passes exits 0 with its table and
// totals; a terminal's stderr gets a bar redrawn in place.
func TestEvalRunPasses(t *testing.T) {
	fastPoll(t)
	s := &evalServer{views: map[string][]string{
		"ev_1": {evalJSON("ev_1", "av_1", "running", "c1:running", "c2:running"), evalJSON("ev_1", "av_1", "completed", "c1:pass", "c2:pass")},
	}}
	srv := httptest.NewServer(s)
	defer srv.Close()
	data := writeFile(t, twoCases)
	env, out, errOut := testEnv(map[string]string{"HOME": t.TempDir(), "BATON_URL": srv.URL})
	env.StderrTTY = true
	code := Main(context.Background(), []string{"eval", "run", data, "--agent", "demo", "--version", "av_1"}, env)
	if code != ExitOK {
		t.Fatalf("exit %d\n%s\n%s", code, out.String(), errOut.String())
	}
	if v := s.posts[0]["agent_version"]; v != "av_1" || s.posts[0]["name"] != "body" {
		t.Fatalf("body %v", s.posts[0])
	}
	for _, want := range []string{"\r\x1b[Kev_1 [------------------------] 0/2 scored", "\r\x1b[Kev_1 [########################] 2/2 scored, 2 passed, 0 failed"} {
		if !strings.Contains(errOut.String(), want) {
			t.Errorf("stderr lacks %q: %q", want, errOut.String())
		}
	}
	for _, want := range []string{"eval ev_1 smoke  agent demo version av_1, tools replay  completed 2/2 scored",
		"\nCASE  RESULT  TURNS  TOKENS  COST       RUN        FIRST FAILING CHECK\n", "\nc1    pass    2      100     $0.001000  r-ev_1-c1\n",
		"totals: pass rate 100.0% (2 of 2) · mean 2.5 turns · 300 tokens · cost $0.003000 · mean duration 1.5s"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("stdout lacks %q:\n%s", want, out.String())
		}
	}
}

// TestEvalRunInterrupted: Ctrl-C while watching cancels nothing: the
// command says the eval keeps running and how to see and stop it, sends no
// cancel, and exits 6.
func TestEvalRunInterrupted(t *testing.T) {
	fastPoll(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s := &evalServer{views: map[string][]string{"ev_1": {evalJSON("ev_1", "av_1", "running", "c1:running")}}}
	s.onGet = cancel
	srv := httptest.NewServer(s)
	defer srv.Close()
	env, _, errOut := testEnv(map[string]string{"HOME": t.TempDir(), "BATON_URL": srv.URL})
	code := Main(ctx, []string{"eval", "run", writeFile(t, "{\"id\":\"c1\",\"from_run\":\"r-1\"}"), "--agent", "demo"}, env)
	if code != ExitCancelled || !strings.Contains(errOut.String(), "stopped watching; still running on the server: baton eval show ev_1, baton eval cancel ev_1") {
		t.Fatalf("exit %d, stderr %q", code, errOut.String())
	}
	if len(s.other) != 0 {
		t.Fatalf("requests besides the eval's: %v", s.other)
	}
}

// TestEvalRunCancelled: an eval cancelled on the server ends the command
// with its cases so far (the unscored ones shown as such), exit 1.
func TestEvalRunCancelled(t *testing.T) {
	fastPoll(t)
	s := &evalServer{views: map[string][]string{"ev_1": {evalJSON("ev_1", "av_1", "cancelled", "c1:pass", "c2:running")}}}
	srv := httptest.NewServer(s)
	defer srv.Close()
	env, out, errOut := testEnv(map[string]string{"HOME": t.TempDir(), "BATON_URL": srv.URL})
	code := Main(context.Background(), []string{"eval", "run", writeFile(t, twoCases), "--agent", "demo", "--min-pass", "0"}, env)
	if code != ExitError || !strings.Contains(errOut.String(), "eval ev_1 was cancelled") || !strings.Contains(out.String(), "\nc2    running ") {
		t.Fatalf("exit %d\n%s\n%s", code, out.String(), errOut.String())
	}
}

// TestEvalRunUsageErrors: bad command lines and datasets exit 2 with one
// line naming the mistake, and send nothing.
func TestEvalRunUsageErrors(t *testing.T) {
	var sent int
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { sent++ }))
	defer srv.Close()
	good := writeFile(t, twoCases)
	bad := writeFile(t, "{\"id\":\"c1\",\"from_run\":\"r-1\"}\n{\"id\":\"c2\" \"from_run\":\"r-2\"}\n")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{good}, "name the agent to evaluate: --agent A"},
		{[]string{good, "--agent", "demo", "--version", "av_1", "--alias", "prod"}, "give --version or --alias, not both"},
		{[]string{good, "--agent", "demo", "--against", ""}, "--version, --alias and --against want a name"},
		{[]string{good, "--agent", "demo", "--tools", "rerun"}, `--tools wants replay, reuse or live; got "rerun"`},
		{[]string{good, "--agent", "demo", "--concurrency", "51"}, "--concurrency wants 1 to 50; got 51"},
		{[]string{good, "--agent", "demo", "--min-pass", "90"}, "--min-pass wants a pass rate from 0 to 1; got 90"},
		{[]string{good, "--agent", "demo", "--json", ""}, "--json and --junit want a file name"},
		{[]string{bad, "--agent", "demo"}, "line 2: not JSON"},
		{[]string{"--agent", "demo"}, "wrong number of arguments"},
	} {
		env, _, errOut := testEnv(map[string]string{"HOME": t.TempDir(), "BATON_URL": srv.URL})
		code := Main(context.Background(), append([]string{"eval", "run"}, tc.args...), env)
		if code != ExitUsage || !strings.Contains(errOut.String(), "baton eval run: ") || !strings.Contains(errOut.String(), tc.want) {
			t.Errorf("%v: exit %d, stderr %q, want %q", tc.args, code, errOut.String(), tc.want)
		}
	}
	if sent != 0 {
		t.Fatalf("%d requests sent for bad command lines", sent)
	}
}

// TestEvalShowListCancel: show prints an eval's table (a judge column
// when a case was judged), ls a page of evals with the next page's
// command, cancel posts to the eval's cancel route; an unknown eval is
// the API's not_found.
func TestEvalShowListCancel(t *testing.T) {
	var posted []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch {
		case r.Method == http.MethodGet && r.URL.Path == "/v1/evals/ev_1":
			_, _ = w.Write([]byte(evalJSON("ev_1", "av_1", "completed", "c1:pass", "c2:fail")))
		case r.Method == http.MethodGet && r.URL.Path == "/v1/evals":
			if r.URL.Query().Get("limit") != "1" || r.URL.Query().Get("cursor") != "p2" {
				t.Errorf("list query %s", r.URL.RawQuery)
			}
			_, _ = w.Write([]byte(`{"evals":[` + evalJSON("ev_1", "av_1", "completed", "c1:pass", "c2:fail") + `],"next_cursor":"p3"}`))
		case r.Method == http.MethodPost && r.URL.Path == "/v1/evals/ev_1/cancel":
			posted = append(posted, r.Header.Get("Idempotency-Key"))
			w.WriteHeader(http.StatusAccepted)
			_, _ = w.Write([]byte(evalJSON("ev_1", "av_1", "cancelled", "c1:pass", "c2:running")))
		default:
			w.WriteHeader(http.StatusNotFound)
			_, _ = w.Write([]byte(`{"error":{"code":"not_found","message":"no such eval"}}`))
		}
	}))
	defer srv.Close()
	run := func(args ...string) (int, string, string) {
		env, out, errOut := testEnv(map[string]string{"HOME": t.TempDir(), "BATON_URL": srv.URL})
		return Main(context.Background(), args, env), out.String(), errOut.String()
	}
	code, out, _ := run("eval", "show", "ev_1")
	if code != 0 || !strings.Contains(out, "RUN        JUDGE  FIRST FAILING CHECK") || !strings.Contains(out, "c2    FAIL    3      200     $0.002000  r-ev_1-c2  0.25   trajectory: call 1") {
		t.Fatalf("show: exit %d\n%s", code, out)
	}
	if code, out, _ = run("eval", "show", "ev_1", "--json"); code != 0 || !strings.HasPrefix(out, `{"agent":"demo"`) {
		t.Fatalf("show --json: exit %d %s", code, out)
	}
	code, out, _ = run("eval", "ls", "--limit", "1", "--cursor", "p2")
	if code != 0 || !strings.Contains(out, "EVAL  NAME   AGENT  VERSION  STATUS     SCORED  PASS RATE  CREATED") || !strings.Contains(out, "ev_1  smoke  demo   av_1     completed  2/2     50.0%") ||
		!strings.Contains(out, "more: baton eval ls --limit 1 --cursor p3") {
		t.Fatalf("ls: exit %d\n%s", code, out)
	}
	if code, out, _ = run("eval", "cancel", "ev_1", "ev_1"); code != 0 || out != strings.Repeat("eval ev_1 cancelled: 1/2 scored, 1 passed, 0 failed\n", 2) || len(posted) != 2 || posted[0] == "" {
		t.Fatalf("cancel: exit %d %q %q", code, out, posted)
	}
	if code, _, errOut := run("eval", "cancel", "ev_9"); code != ExitError || errOut != "baton eval cancel: eval ev_9: not_found: no such eval (HTTP 404)\n" {
		t.Fatalf("cancel of an unknown eval: exit %d %q", code, errOut)
	}
	if code, _, errOut := run("eval", "show", "ev_9"); code != ExitError || errOut != "baton eval show: not_found: no such eval (HTTP 404)\n" {
		t.Fatalf("unknown eval: exit %d %q", code, errOut)
	}
	if code, _, errOut := run("eval", "judge"); code != ExitUsage || !strings.Contains(errOut, "unknown eval command") {
		t.Fatalf("unknown command: exit %d %q", code, errOut)
	}
}

// TestEvalDatasetFromRuns: a case per finished run of the agent (pages
// followed up to --limit; runs still going and evals' case runs
// skipped), each replaying its
// run and expecting its final answer and its own tool calls (not an
// earlier run's of the session) with their parameters, in order.
func TestEvalDatasetFromRuns(t *testing.T) {
	var queries []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/v1/runs":
			queries = append(queries, r.URL.RawQuery)
			if r.URL.Query().Get("cursor") == "" {
				_, _ = w.Write([]byte(`{"runs":[{"run_id":"r-2","status":"completed"},{"run_id":"r-busy","status":"running"},{"run_id":"r-case","status":"completed","eval":{"eval_id":"ev_1","case":0}}],"next_cursor":"c2"}`))
				return
			}
			_, _ = w.Write([]byte(`{"runs":[{"run_id":"r-1","status":"failed"},{"run_id":"r-0","status":"completed"}],"next_cursor":null}`))
		case "/v1/runs/r-2":
			_, _ = w.Write([]byte(`{"run_id":"r-2","first_seq":4,"result":{"final_content":"Monday is free."}}`))
		case "/v1/runs/r-2/messages":
			_, _ = w.Write([]byte(`{"messages":[
				{"seq":2,"role":"tool_call","content":"","metadata":{"tool_name":"ability/old","parameters":{}}},
				{"seq":4,"role":"user","content":"What is on Monday?"},
				{"seq":5,"role":"tool_call","content":"","metadata":{"tool_call_id":"c1","tool_name":"client/get_calendar","parameters":{"day":"monday","n":2}}},
				{"seq":6,"role":"tool_result","content":"{}","metadata":{"tool_call_id":"c1"}},
				{"seq":7,"role":"tool_call","content":"","metadata":{"tool_name":"ability/echo"}},
				{"seq":8,"role":"assistant","content":"Monday is free."}],"next":8}`))
		case "/v1/runs/r-1":
			_, _ = w.Write([]byte(`{"run_id":"r-1","first_seq":1,"result":{"final_content":""}}`))
		case "/v1/runs/r-1/messages":
			_, _ = w.Write([]byte(`{"messages":[{"seq":1,"role":"user","content":"hi"}],"next":1}`))
		default:
			t.Errorf("unexpected %s", r.URL)
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	env, out, errOut := testEnv(map[string]string{"HOME": t.TempDir(), "BATON_URL": srv.URL})
	code := Main(context.Background(), []string{"eval", "dataset", "--from-runs", "--agent", "demo", "--status", "", "--since", "2026-11-01T00:00:00Z", "--limit", "2"}, env)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	want := `{"id":"r-2","from_run":"r-2","expect":{"final":{"equals":"Monday is free."},"trajectory":{"mode":"exact","tools":[{"name":"client/get_calendar","parameters":{"day":"monday","n":2}},{"name":"ability/echo","parameters":{}}]}}}
{"id":"r-1","from_run":"r-1","expect":{"trajectory":{"mode":"exact","tools":[]}}}
`
	if out.String() != want {
		t.Fatalf("dataset:\n%s\nwant:\n%s", out.String(), want)
	}
	if len(queries) != 2 || queries[0] != "agent=demo&limit=2&since=2026-11-01T00%3A00%3A00Z" || queries[1] != "agent=demo&cursor=c2&limit=1&since=2026-11-01T00%3A00%3A00Z" {
		t.Fatalf("queries %q", queries)
	}
	if !strings.Contains(errOut.String(), "skipped r-busy: running, not finished") || !strings.Contains(errOut.String(), "skipped r-case: a case run of an eval") || !strings.Contains(errOut.String(), "2 cases from runs of agent demo") {
		t.Fatalf("stderr %q", errOut.String())
	}
	// What it writes is a dataset eval run reads.
	if cases, _, err := readDataset(strings.NewReader(out.String()), "out"); err != nil || len(cases) != 2 {
		t.Fatalf("read back: %v", err)
	}
	for _, args := range [][]string{{"--agent", "demo"}, {"--from-runs"}, {"--from-runs", "--agent", "demo", "--since", "yesterday"}, {"--from-runs", "--agent", "demo", "--limit", "0"}} {
		env, _, _ := testEnv(map[string]string{"HOME": t.TempDir(), "BATON_URL": srv.URL})
		if code := Main(context.Background(), append([]string{"eval", "dataset"}, args...), env); code != ExitUsage {
			t.Errorf("%v: exit %d", args, code)
		}
	}
}

// TestSinceTime: --since takes a time or a duration back from now.
func TestSinceTime(t *testing.T) {
	now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	if got, _ := sinceTime("24h", now); got != "2026-11-26T12:00:00Z" {
		t.Fatalf("24h: %s", got)
	}
	if got, _ := sinceTime("2026-11-01T09:00:00+01:00", now); got != "2026-11-01T08:00:00Z" {
		t.Fatalf("time: %s", got)
	}
	if _, err := sinceTime("-2h", now); err == nil {
		t.Fatal("a negative duration is accepted")
	}
}

// TestAliasIfEval: agents alias --if-eval moves the alias only after an
// eval of that version that completed and passed (every case, or
// --min-pass's rate); a refusal exits 1 naming why and touches no alias.
func TestAliasIfEval(t *testing.T) {
	views := map[string]string{
		"ev_run":  evalJSON("ev_run", "av_2", "running", "c1:pass", "c2:running"),
		"ev_v1":   evalJSON("ev_v1", "av_1", "completed", "c1:pass", "c2:pass"),
		"ev_fail": evalJSON("ev_fail", "av_2", "completed", "c1:pass", "c2:fail"),
		"ev_ok":   evalJSON("ev_ok", "av_2", "completed", "c1:pass", "c2:pass"),
		"ev_can":  evalJSON("ev_can", "av_2", "cancelled", "c1:pass", "c2:pass"),
	}
	var aliasCalls []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if id, ok := strings.CutPrefix(r.URL.Path, "/v1/evals/"); ok {
			if v, ok := views[id]; ok {
				_, _ = w.Write([]byte(v))
				return
			}
			w.WriteHeader(http.StatusNotFound)
			_, _ = w.Write([]byte(`{"error":{"code":"not_found","message":"no such eval"}}`))
			return
		}
		aliasCalls = append(aliasCalls, r.Method+" "+r.URL.Path)
		if r.Method == http.MethodGet {
			_, _ = w.Write([]byte(`{"name":"prod","routes":[{"version":"av_1","weight":100}],"revision":3}`))
			return
		}
		_, _ = w.Write([]byte(`{"name":"prod","routes":[{"version":"av_2","weight":100}],"revision":4}`))
	}))
	defer srv.Close()
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--if-eval", "ev_run"}, 1, "eval ev_run is running, not completed (1/2 scored, 1 passed, 0 failed); the alias was not moved"},
		{[]string{"--if-eval", "ev_can"}, 1, "eval ev_can is cancelled, not completed"},
		{[]string{"--if-eval", "ev_v1"}, 1, "eval ev_v1 ran on version av_1, not av_2; the alias was not moved"},
		{[]string{"--if-eval", "ev_fail"}, 1, "eval ev_fail did not pass: 1 of 2 cases failed (pass rate 50.0%; --min-pass sets a lower bar); the alias was not moved"},
		{[]string{"--if-eval", "ev_fail", "--min-pass", "0.75"}, 1, "eval ev_fail has pass rate 50.0%, below --min-pass 75.0%"},
		{[]string{"--if-eval", "ev_none"}, 1, "reading eval ev_none: not_found: no such eval (HTTP 404); the alias was not moved"},
		{[]string{"--min-pass", "0.5"}, 2, "--min-pass goes with --if-eval"},
		{[]string{"--if-eval", "ev_ok", "--min-pass", "2"}, 2, "--min-pass wants a pass rate from 0 to 1"},
	} {
		env, _, errOut := testEnv(map[string]string{"HOME": t.TempDir(), "BATON_URL": srv.URL})
		code := Main(context.Background(), append([]string{"agents", "alias", "prod", "av_2"}, tc.args...), env)
		if code != tc.code || !strings.Contains(errOut.String(), "baton agents alias: "+tc.want) && !strings.Contains(errOut.String(), tc.want) {
			t.Errorf("%v: exit %d, stderr %q, want %d %q", tc.args, code, errOut.String(), tc.code, tc.want)
		}
	}
	if len(aliasCalls) != 0 {
		t.Fatalf("refusals touched the alias: %v", aliasCalls)
	}
	for _, args := range [][]string{{"--if-eval", "ev_ok"}, {"--if-eval", "ev_fail", "--min-pass", "0.5"}} {
		env, out, errOut := testEnv(map[string]string{"HOME": t.TempDir(), "BATON_URL": srv.URL})
		code := Main(context.Background(), append([]string{"agents", "alias", "prod", "av_2"}, args...), env)
		if code != 0 || !strings.Contains(out.String(), "passed on av_2: pass rate") || !strings.Contains(out.String(), "alias prod → av_2 100% (revision 4)") {
			t.Fatalf("%v: exit %d\n%s\n%s", args, code, out.String(), errOut.String())
		}
	}
	if len(aliasCalls) != 4 {
		t.Fatalf("alias calls %v, want a GET and a PUT per move", aliasCalls)
	}
}

// TestEvalRunRefusedCase: a case the API refuses (invalid_dataset, the
// case's position in details.line) is named by its line in the file,
// blank lines counted, and exits 2.
func TestEvalRunRefusedCase(t *testing.T) {
	for _, tc := range []struct{ details, want string }{
		{`{"line":2}`, "baton eval run: FILE line 4: invalid_dataset: invalid dataset: line 2: expect.final.regex: missing closing ) (HTTP 400); nothing was started\n"},
		{`{"line":9}`, "baton eval run: FILE: invalid_dataset: invalid dataset: line 2: expect.final.regex: missing closing ) (HTTP 400); nothing was started\n"},
	} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusBadRequest)
			_, _ = w.Write([]byte(`{"error":{"code":"invalid_dataset","message":"invalid dataset: line 2: expect.final.regex: missing closing )","details":` + tc.details + `}}`))
		}))
		data := writeFile(t, "{\"id\":\"c1\",\"from_run\":\"r-1\"}\n\n\n{\"id\":\"c2\",\"from_run\":\"r-2\",\"expect\":{\"final\":{\"regex\":\"(\"}}}\n")
		env, _, errOut := testEnv(map[string]string{"HOME": t.TempDir(), "BATON_URL": srv.URL})
		code := Main(context.Background(), []string{"eval", "run", data, "--agent", "demo"}, env)
		srv.Close()
		if want := strings.ReplaceAll(tc.want, "FILE", data); code != ExitUsage || errOut.String() != want {
			t.Errorf("exit %d, stderr %q\nwant %q", code, errOut.String(), want)
		}
	}
}
