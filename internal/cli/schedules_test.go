package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// scheduleServer serves the schedule routes of the API on a list of
// schedules and their triggers, in pages of at most two (so a listing
// follows next_cursor), and records the requests and their bodies.
type scheduleServer struct {
	mu        sync.Mutex
	schedules []schedule
	triggers  map[string][]trigger
	requests  []string
	bodies    []string
	keys      []string // the Idempotency-Key of each create
}

func (s *scheduleServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests = append(s.requests, r.Method+" "+r.URL.RequestURI())
	var body map[string]any
	if r.Body != nil {
		raw, _ := io.ReadAll(r.Body)
		if len(raw) > 0 {
			s.bodies = append(s.bodies, string(raw))
			_ = json.Unmarshal(raw, &body)
		}
	}
	if r.Header.Get("Authorization") != "Bearer tok-1" {
		w.WriteHeader(401)
		fmt.Fprint(w, `{"error":{"code":"unauthorized","message":"the token is not valid"}}`)
		return
	}
	page := func(n int, key string, list any) {
		start, _ := strconv.Atoi(r.URL.Query().Get("cursor"))
		limit, _ := strconv.Atoi(r.URL.Query().Get("limit"))
		end := min(start+min(limit, 2), n)
		var next any
		if end < n {
			next = strconv.Itoa(end)
		}
		switch l := list.(type) {
		case []schedule:
			list = l[start:end]
		case []trigger:
			list = l[start:end]
		}
		_ = json.NewEncoder(w).Encode(map[string]any{key: list, "next_cursor": next})
	}
	find := func(id string) int {
		i := slices.IndexFunc(s.schedules, func(x schedule) bool { return x.ScheduleID == id })
		if i < 0 {
			w.WriteHeader(404)
			fmt.Fprintf(w, `{"error":{"code":"not_found","message":"no schedule %s"}}`, id)
		}
		return i
	}
	rest, one := strings.CutPrefix(r.URL.Path, "/v1/schedules/")
	id, sub, _ := strings.Cut(rest, "/")
	switch {
	case r.Method == "GET" && r.URL.Path == "/v1/schedules":
		page(len(s.schedules), "schedules", s.schedules)
	case r.Method == "POST" && r.URL.Path == "/v1/schedules":
		s.keys = append(s.keys, r.Header.Get("Idempotency-Key"))
		if body["agent"] == "full" {
			w.WriteHeader(429)
			fmt.Fprint(w, `{"error":{"code":"schedule_limit_reached","message":"tenant acme has 100 schedules, its limit","details":{"limit":100}}}`)
			return
		}
		if body["cron"] == "* * * * * *" {
			w.WriteHeader(400)
			fmt.Fprint(w, `{"error":{"code":"invalid_request","message":"cron: want five fields, cron(…) or rate(…)","details":{"field":"cron"}}}`)
			return
		}
		sc := schedule{ScheduleID: fmt.Sprintf("sch-%d", len(s.schedules)+1), Agent: body["agent"].(string), Timezone: "UTC", Overlap: "skip", Missed: "skip",
			NextFireTimes: []string{"2026-12-01T09:00:00Z", "2026-12-02T09:00:00Z"}, CreatedAt: "2026-11-27T10:00:00Z", UpdatedAt: "2026-11-27T10:00:00Z"}
		sc.Cron, _ = body["cron"].(string)
		sc.At, _ = body["at"].(string)
		if tz, ok := body["timezone"].(string); ok {
			sc.Timezone = tz
		}
		sc.Alias, _ = body["alias"].(string)
		sc.AgentVersion, _ = body["agent_version"].(string)
		if sc.Paused, _ = body["paused"].(bool); sc.Paused {
			sc.NextFireTimes = []string{}
		}
		sc.Request, _ = body["request"].(map[string]any)
		s.schedules = append(s.schedules, sc)
		w.WriteHeader(201)
		_ = json.NewEncoder(w).Encode(sc)
	case r.Method == "PATCH" && one && sub == "":
		if i := find(id); i >= 0 {
			s.schedules[i].Paused = body["paused"].(bool)
			s.schedules[i].NextFireTimes = []string{}
			if !s.schedules[i].Paused && s.schedules[i].At == "" {
				s.schedules[i].NextFireTimes = []string{"2026-11-27T11:00:00Z"}
			}
			_ = json.NewEncoder(w).Encode(s.schedules[i])
		}
	case r.Method == "DELETE" && one && sub == "":
		if i := find(id); i >= 0 {
			s.schedules = slices.Delete(s.schedules, i, i+1)
			w.WriteHeader(204)
		}
	case r.Method == "GET" && one && sub == "triggers":
		if find(id) >= 0 {
			page(len(s.triggers[id]), "triggers", s.triggers[id])
		}
	default:
		w.WriteHeader(404)
	}
}

// newScheduleServer serves three schedules, the first with five
// triggers; run runs baton schedules with args (stdin: the input) in a
// time zone an hour east of UTC.
func newScheduleServer(t *testing.T) (*scheduleServer, func(stdin string, args ...string) (int, string, string)) {
	local := time.Local
	time.Local = time.FixedZone("CET", 3600)
	t.Cleanup(func() { time.Local = local })
	s := &scheduleServer{triggers: map[string][]trigger{}}
	s.schedules = []schedule{
		{ScheduleID: "sch-morning-digest", Agent: "digest", Cron: "0 9 * * MON-FRI", Timezone: "Europe/Lisbon", Overlap: "skip", Missed: "skip",
			NextFireTimes: []string{"2026-11-30T09:00:00Z"}, LastRunID: "r-1234567890abc"},
		{ScheduleID: "sch-2", Agent: "triage", Alias: "prod", Cron: "rate(1 hour)", Timezone: "UTC", Paused: true, NextFireTimes: []string{}},
		{ScheduleID: "sch-3", Agent: "report", At: "2026-12-31T17:00:00Z", Timezone: "UTC", NextFireTimes: []string{}},
	}
	s.triggers["sch-morning-digest"] = []trigger{
		{FireTime: "2026-11-27T09:00:00Z", Outcome: "started", RunID: "r-1234567890abc", Reason: "caught_up: started 3m late"},
		{FireTime: "2026-11-26T09:00:00Z", Outcome: "skipped", Reason: "overlap: run r-0 is still running"},
		{FireTime: "2026-11-25T09:00:00Z", Outcome: "failed", Reason: "unknown_agent: no agent digest"},
		{FireTime: "2026-11-24T09:00:00Z", Outcome: "skipped", Reason: "paused: the schedule was paused"},
		{FireTime: "2026-11-21T09:00:00Z", Outcome: "started", RunID: "r-0"},
	}
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	return s, func(stdin string, args ...string) (int, string, string) {
		env, out, errOut := testEnv(map[string]string{"HOME": t.TempDir(), "BATON_URL": srv.URL, "BATON_TOKEN": "tok-1"})
		env.HTTP = srv.Client()
		env.Stdin = strings.NewReader(stdin)
		code := Main(context.Background(), append([]string{"schedules"}, args...), env)
		return code, out.String(), errOut.String()
	}
}

// columnsAlign: every line of a table starts its cells where the
// header's do (a line may end before its empty last cell).
func columnsAlign(t *testing.T, lines []string, headers ...string) {
	t.Helper()
	for _, h := range headers[1:] {
		at := strings.Index(lines[0], h)
		for _, l := range lines[1:] {
			if at >= len(l) && h == headers[len(headers)-1] {
				continue
			}
			if at <= 0 || at > len(l) || l[at-2:at] != "  " || l[at] == ' ' {
				t.Errorf("column %s (at %d) is not aligned in %q", h, at, l)
			}
		}
	}
}

// TestSchedulesList: baton schedules ls follows next_cursor and prints a
// table, its columns aligned, with each schedule's agent (and alias), its
// expression and zone, the next fire time in local time with the UTC,
// paused or active, and the last run; --json prints one object, --limit
// stops early and says more remain.
func TestSchedulesList(t *testing.T) {
	s, run := newScheduleServer(t)
	code, out, errOut := run("", "ls")
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if code != ExitOK || errOut != "" || len(lines) != 4 {
		t.Fatalf("ls: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	columnsAlign(t, lines, "ID", "AGENT", "WHEN", "NEXT", "STATE", "LAST RUN")
	for i, want := range [][]string{
		{"sch-morning-digest", "digest", "0 9 * * MON-FRI (Europe/Lisbon)", "Mon 2026-11-30 10:00 CET (09:00 UTC)", "active", "r-1234567890abc"},
		{"sch-2", "triage@prod", "rate(1 hour) (UTC)", "-", "paused", "-"},
		{"sch-3", "report", "at 2026-12-31T17:00:00Z (UTC)", "none", "active", "-"},
	} {
		if got := strings.Split(regexpSpaces(lines[i+1]), "|"); !slices.Equal(got, want) {
			t.Errorf("row %d: %q, want %q", i+1, got, want)
		}
	}
	if want := []string{"GET /v1/schedules?limit=100", "GET /v1/schedules?cursor=2&limit=100"}; !slices.Equal(s.requests, want) {
		t.Errorf("requests %q, want %q", s.requests, want)
	}
	code, out, _ = run("", "ls", "--limit", "1")
	if code != ExitOK || !strings.Contains(out, "sch-morning-digest") || strings.Contains(out, "sch-2") || !strings.Contains(out, "1 listed; more remain") {
		t.Fatalf("ls --limit 1: %d %q", code, out)
	}
	code, out, _ = run("", "ls", "--json")
	var got struct {
		Schedules  []schedule `json:"schedules"`
		NextCursor *string    `json:"next_cursor"`
	}
	if err := json.Unmarshal([]byte(out), &got); code != ExitOK || err != nil || len(got.Schedules) != 3 || got.NextCursor != nil || got.Schedules[1].Alias != "prod" {
		t.Fatalf("ls --json: %d %q", code, out)
	}
	if code, _, errOut := run("", "ls", "--limit", "-1"); code != ExitUsage || !strings.Contains(errOut, "--limit wants 1 or more") {
		t.Fatalf("ls --limit -1: %d %q", code, errOut)
	}
	s.schedules = nil
	if code, out, _ := run("", "ls"); code != ExitOK || out != "no schedules\n" {
		t.Fatalf("ls of none: %d %q", code, out)
	}
}

// regexpSpaces splits a table row at its runs of two or more spaces.
func regexpSpaces(line string) string {
	var cells []string
	for _, c := range strings.Split(line, "  ") {
		if c = strings.TrimSpace(c); c != "" {
			cells = append(cells, c)
		}
	}
	return strings.Join(cells, "|")
}

// TestSchedulesCreate: baton schedules create posts the schedule's body
// (--input as the request's user message; --request a start-run body,
// from a file or stdin, whose agent moves to the schedule) and prints the
// id and the next fire times; one of --cron/--at and of --input/--request
// is required, and the API's refusal names the field.
func TestSchedulesCreate(t *testing.T) {
	s, run := newScheduleServer(t)
	code, out, errOut := run("", "create", "--agent", "digest", "--cron", "0 9 * * MON-FRI", "--timezone", "Europe/Lisbon", "--input", "Summarise the news",
		"--start", "2026-12-01T00:00:00Z", "--end", "2027-01-01T00:00:00Z", "--overlap", "allow", "--missed", "run_once")
	if code != ExitOK || errOut != "" {
		t.Fatalf("create: %d %q %q", code, out, errOut)
	}
	want := "created schedule sch-4: digest, 0 9 * * MON-FRI (Europe/Lisbon)\nnext fire times:\n  Tue 2026-12-01 10:00 CET (09:00 UTC)\n  Wed 2026-12-02 10:00 CET (09:00 UTC)\n"
	if out != want {
		t.Errorf("create printed %q, want %q", out, want)
	}
	wantBody := `{"agent":"digest","cron":"0 9 * * MON-FRI","end":"2027-01-01T00:00:00Z","missed":"run_once","overlap":"allow",` +
		`"request":{"messages":[{"content":"Summarise the news","role":"user"}]},"start":"2026-12-01T00:00:00Z","timezone":"Europe/Lisbon"}`
	if s.bodies[0] != wantBody {
		t.Errorf("body %s, want %s", s.bodies[0], wantBody)
	}

	dir := t.TempDir()
	file := filepath.Join(dir, "req.json")
	_ = os.WriteFile(file, []byte(`{"agent":"report","alias":"prod","messages":[{"role":"user","content":"Month's report"}],"metadata":{"team":"ops"},"max_turns":3}`), 0o600)
	code, out, _ = run("", "create", "--at", "2026-12-31T17:00:00Z", "--request", file, "--paused")
	if code != ExitOK || out != "created schedule sch-5: report@prod, at 2026-12-31T17:00:00Z (UTC) (paused)\npaused: it fires nothing until resumed (baton schedules resume)\n" {
		t.Fatalf("create --request: %d %q", code, out)
	}
	wantBody = `{"agent":"report","alias":"prod","at":"2026-12-31T17:00:00Z","paused":true,"request":{"max_turns":3,"messages":[{"content":"Month's report","role":"user"}],"metadata":{"team":"ops"}}}`
	if s.bodies[1] != wantBody {
		t.Errorf("body %s, want %s", s.bodies[1], wantBody)
	}
	// The flags win over the file; stdin is -.
	code, out, _ = run(`{"agent":"report","messages":[{"role":"user","content":"hi"}]}`, "create", "--agent", "digest", "--version", "av_1", "--cron", "rate(1 day)", "--request", "-", "--json")
	var got schedule
	if err := json.Unmarshal([]byte(out), &got); code != ExitOK || err != nil || got.ScheduleID != "sch-6" || got.Agent != "digest" {
		t.Fatalf("create --request - --json: %d %q", code, out)
	}
	if wantBody = `{"agent":"digest","agent_version":"av_1","cron":"rate(1 day)","request":{"messages":[{"content":"hi","role":"user"}]}}`; s.bodies[2] != wantBody {
		t.Errorf("body %s, want %s", s.bodies[2], wantBody)
	}

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--agent", "a", "--input", "x"}, "--cron EXPR or --at TIME (one of the two)"},
		{[]string{"--agent", "a", "--input", "x", "--cron", "@daily", "--at", "2026-12-01T09:00:00Z"}, "--cron EXPR or --at TIME (one of the two)"},
		{[]string{"--agent", "a", "--cron", "@daily"}, "--input TEXT or --request FILE (one of the two)"},
		{[]string{"--cron", "@daily", "--input", "x"}, "name the agent: --agent SLUG"},
		{[]string{"--agent", "a", "--cron", "@daily", "--input", "x", "--alias", "p", "--version", "v"}, "--alias or --version, not both"},
		{[]string{"--agent", "a", "--cron", "@daily", "--request", filepath.Join(dir, "none.json")}, "--request: open"},
		{[]string{"--agent", "a", "--cron", "@daily", "--request", "-"}, "--request -: stdin is not a JSON object"},
		{[]string{"--agent", "a", "--cron", "@daily", "--input", "x", "--paused=maybe"}, `--paused "maybe" is not a valid value (want true or false)`},
	} {
		code, _, errOut := run("", append([]string{"create"}, tc.args...)...)
		if code == ExitOK || !strings.Contains(errOut, tc.want) {
			t.Errorf("create %q: exit %d, stderr %q, want %q", tc.args, code, errOut, tc.want)
		}
	}
	if code, _, errOut := run("", "create", "--agent", "a", "--cron", "* * * * * *", "--input", "x"); code != ExitError ||
		errOut != "baton schedules create: invalid_request: cron: want five fields, cron(…) or rate(…) (HTTP 400)\n" {
		t.Fatalf("a refused cron: %d %q", code, errOut)
	}
	// The limit of schedules is no transient error: no retry.
	if code, _, errOut := run("", "create", "--agent", "full", "--cron", "@daily", "--input", "x"); code != ExitError ||
		errOut != "baton schedules create: schedule_limit_reached: tenant acme has 100 schedules, its limit (HTTP 429)\n" {
		t.Fatalf("over the limit: %d %q", code, errOut)
	}
	if len(s.bodies) != 5 {
		t.Errorf("%d bodies sent, want 5 (no request for a usage error, no retry at the limit)", len(s.bodies))
	}
	for i, k := range s.keys {
		if !strings.HasPrefix(k, "cli-") || slices.Contains(s.keys[:i], k) {
			t.Errorf("create %d has Idempotency-Key %q (keys %q)", i, k, s.keys)
		}
	}
}

// TestSchedulesPauseResumeRemove: pause and resume patch paused (resume
// prints the next fire times), rm deletes; an unknown id is the API's
// not_found, exit 1.
func TestSchedulesPauseResumeRemove(t *testing.T) {
	s, run := newScheduleServer(t)
	if code, out, _ := run("", "pause", "sch-morning-digest"); code != ExitOK || out != "paused schedule sch-morning-digest\n" || !s.schedules[0].Paused {
		t.Fatalf("pause: %d %q", code, out)
	}
	if code, out, _ := run("", "resume", "sch-2"); code != ExitOK || out != "resumed schedule sch-2\nnext fire times:\n  Fri 2026-11-27 12:00 CET (11:00 UTC)\n" || s.schedules[1].Paused {
		t.Fatalf("resume: %d %q", code, out)
	}
	if code, out, _ := run("", "resume", "sch-3"); code != ExitOK || out != "resumed schedule sch-3\nit has no fire times left\n" {
		t.Fatalf("resume of a spent schedule: %d %q", code, out)
	}
	if code, out, _ := run("", "pause", "sch-2", "--json"); code != ExitOK || !strings.Contains(out, `"paused":true`) {
		t.Fatalf("pause --json: %d %q", code, out)
	}
	if code, out, _ := run("", "rm", "sch-3"); code != ExitOK || out != "deleted schedule sch-3 (its history stays until it expires)\n" || len(s.schedules) != 2 {
		t.Fatalf("rm: %d %q", code, out)
	}
	if code, _, errOut := run("", "rm", "sch-3"); code != ExitError || errOut != "baton schedules rm: not_found: no schedule sch-3 (HTTP 404)\n" {
		t.Fatalf("rm again: %d %q", code, errOut)
	}
	if code, _, errOut := run("", "pause"); code != ExitUsage || !strings.Contains(errOut, "wrong number of arguments") {
		t.Fatalf("pause without an id: %d %q", code, errOut)
	}
	if code, _, errOut := run("", "snooze", "x"); code != ExitUsage || !strings.Contains(errOut, `unknown schedules command "snooze"`) {
		t.Fatalf("an unknown command: %d %q", code, errOut)
	}
	want := []string{`PATCH /v1/schedules/sch-morning-digest`, `PATCH /v1/schedules/sch-2`, `PATCH /v1/schedules/sch-3`, `PATCH /v1/schedules/sch-2`, "DELETE /v1/schedules/sch-3", "DELETE /v1/schedules/sch-3"}
	if !slices.Equal(s.requests, want) || !slices.Equal(s.bodies, []string{`{"paused":true}`, `{"paused":false}`, `{"paused":false}`, `{"paused":true}`}) {
		t.Fatalf("requests %q %q", s.requests, s.bodies)
	}
}

// TestSchedulesHistory: baton schedules history lists the latest fire
// times first, each with its outcome, run and reason, in aligned columns;
// --limit (default 50) stops early, --json prints one object.
func TestSchedulesHistory(t *testing.T) {
	s, run := newScheduleServer(t)
	code, out, errOut := run("", "history", "sch-morning-digest")
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if code != ExitOK || errOut != "" || len(lines) != 6 {
		t.Fatalf("history: %d %q %q", code, out, errOut)
	}
	columnsAlign(t, lines, "FIRE TIME", "OUTCOME", "RUN", "REASON")
	for i, want := range []string{
		"Fri 2026-11-27 10:00 CET (09:00 UTC)|started|r-1234567890abc|caught_up: started 3m late",
		"Thu 2026-11-26 10:00 CET (09:00 UTC)|skipped|-|overlap: run r-0 is still running",
		"Wed 2026-11-25 10:00 CET (09:00 UTC)|failed|-|unknown_agent: no agent digest",
		"Tue 2026-11-24 10:00 CET (09:00 UTC)|skipped|-|paused: the schedule was paused",
		"Sat 2026-11-21 10:00 CET (09:00 UTC)|started|r-0",
	} {
		if got := regexpSpaces(lines[i+1]); got != want {
			t.Errorf("row %d: %q, want %q", i+1, got, want)
		}
	}
	want := []string{"GET /v1/schedules/sch-morning-digest/triggers?limit=50", "GET /v1/schedules/sch-morning-digest/triggers?cursor=2&limit=48",
		"GET /v1/schedules/sch-morning-digest/triggers?cursor=4&limit=46"}
	if !slices.Equal(s.requests, want) {
		t.Errorf("requests %q, want %q", s.requests, want)
	}
	if code, out, _ := run("", "history", "sch-morning-digest", "--limit", "2"); code != ExitOK || strings.Count(out, "\n") != 4 || !strings.Contains(out, "the latest 2 listed; older ones remain") {
		t.Fatalf("history --limit 2: %d %q", code, out)
	}
	code, out, _ = run("", "history", "sch-morning-digest", "--json", "--limit", "0")
	var got struct {
		Triggers   []trigger `json:"triggers"`
		NextCursor *string   `json:"next_cursor"`
	}
	if err := json.Unmarshal([]byte(out), &got); code != ExitOK || err != nil || len(got.Triggers) != 5 || got.Triggers[2].Outcome != "failed" || got.NextCursor != nil {
		t.Fatalf("history --json: %d %q", code, out)
	}
	if code, out, _ := run("", "history", "sch-2"); code != ExitOK || out != "no fire times yet\n" {
		t.Fatalf("history of a schedule that never fired: %d %q", code, out)
	}
	if code, _, errOut := run("", "history", "sch-none"); code != ExitError || !strings.Contains(errOut, "not_found") {
		t.Fatalf("history of an unknown schedule: %d %q", code, errOut)
	}
}

// TestFireTime: a fire time is written in the local zone with its UTC
// time, and the UTC day when the local day is another.
func TestFireTime(t *testing.T) {
	local := time.Local
	defer func() { time.Local = local }()
	time.Local = time.FixedZone("CET", 3600)
	for in, want := range map[string]string{
		"2026-11-30T09:00:00Z": "Mon 2026-11-30 10:00 CET (09:00 UTC)",
		"2026-11-29T23:30:00Z": "Mon 2026-11-30 00:30 CET (Sun 23:30 UTC)",
		"soon":                 "soon",
	} {
		if got := fireTime(in); got != want {
			t.Errorf("fireTime(%q) = %q, want %q", in, got, want)
		}
	}
	time.Local = time.UTC
	if got := fireTime("2026-11-30T09:00:00Z"); got != "Mon 2026-11-30 09:00 UTC" {
		t.Errorf("in UTC: %q", got)
	}
}

// TestSchedulesHelp: baton schedules -h names its commands, and each
// command's -h its flags.
func TestSchedulesHelp(t *testing.T) {
	_, run := newScheduleServer(t)
	if code, out, _ := run("", "-h"); code != ExitOK || !strings.Contains(out, "usage: baton schedules <command>") || !strings.Contains(out, "history ID") {
		t.Fatalf("schedules -h: %d %q", code, out)
	}
	code, _, errOut := run("", "create", "-h")
	for _, flag := range []string{"-agent", "-cron", "-at", "-timezone", "-input", "-request", "-start", "-end", "-overlap", "-missed", "-paused"} {
		if code != ExitOK || !strings.Contains(errOut, "  "+flag+" ") && !strings.Contains(errOut, "  "+flag+"\n") {
			t.Errorf("create -h: exit %d, no %s in %q", code, flag, errOut)
		}
	}
	if code, _, errOut := run(""); code != ExitUsage || !strings.Contains(errOut, "want schedules ls|create|pause|resume|rm|history") {
		t.Fatalf("schedules alone: %d %q", code, errOut)
	}
}
