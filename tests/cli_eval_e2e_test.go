//go:build e2e

package tests

import (
	"encoding/json"
	"encoding/xml"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// evalAgents is the agents file of the eval tests: evalee, whose version
// one calls ability/echo and then answers "Echoed it." and whose version
// two answers the same without the call; grader, a judge that scores
// every answer 0.5. Version one allows a model override (an input case
// may bring its own script).
func evalAgents(t *testing.T, n int) string {
	t.Helper()
	turns := []any{callTurn("Echoing.", "call_echo", "ability/echo", map[string]any{"text": "hello eval"}), map[string]any{"content": "Echoed it."}}
	if n == 2 {
		turns = []any{map[string]any{"content": "Echoed it."}}
	}
	evalee := map[string]any{"slug": "evalee", "model": map[string]any{"provider": "scripted", "turns": turns},
		"tools": []any{map[string]any{"name": "ability/echo", "source": "go", "description": "Echo the parameters.",
			"parameters": map[string]any{"type": "object", "properties": map[string]any{"text": map[string]any{"type": "string"}}},
			"executor":   map[string]any{"type": "go", "handler": "echo"}}}}
	if n == 1 {
		// A replay keeps its source's model where the agent lets a request
		// set it: version two does not, so its replays run its own.
		evalee["allow_overrides"] = []any{"model"}
	}
	grader := map[string]any{"slug": "grader", "model": map[string]any{"provider": "scripted", "turns": []any{
		map[string]any{"content": `{"score": 0.5, "reason": "Half of what the rubric asks."}`}}}}
	return writeAgentsFile(t, map[string]any{"agents": []any{evalee, grader}})
}

// startEvalDev starts baton dev on version one of evalAgents, with the
// admin token (agents:manage) beside the tenants' ones; it returns the
// server, version one's id (the default alias's) and version two's, published.
func startEvalDev(t *testing.T) (*dev, string, string) {
	t.Helper()
	args := append(versionsArgs(t), "--agents", evalAgents(t, 1))
	d := launchDev(t, args, "BATON_DEV_TOKENS=acme="+tokAcme+",globex="+tokGlobex+",acme="+tokAdmin+"+agents:manage", "AWS_ACCESS_KEY_ID=local", "AWS_SECRET_ACCESS_KEY=local")
	v1 := defaultVersion(t, d)
	b, err := os.ReadFile(evalAgents(t, 2))
	if err != nil {
		t.Fatal(err)
	}
	r := d.call(t, "POST", "/v1/agent-versions", tokAdmin, string(b))
	v2, _ := r.body["id"].(string)
	if r.status/100 != 2 || v2 == "" || v2 == v1 {
		t.Fatalf("publish version two: %d %v", r.status, r.body)
	}
	return d, v1, v2
}

// recordRuns runs evalee n times to completion and returns the run ids.
func recordRuns(t *testing.T, d *dev, n int) []string {
	t.Helper()
	var ids []string
	for i := 0; i < n; i++ {
		id := start(t, d, `{"agent":"evalee","messages":[{"role":"user","content":"Echo hello eval"}]}`)
		if v := d.waitStatus(t, id); v["status"] != "completed" {
			t.Fatalf("run %s: %v", id, v)
		}
		ids = append(ids, id)
	}
	return ids
}

// waitEval polls an eval until it is no longer running.
func waitEval(t *testing.T, d *dev, id string) map[string]any {
	t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for {
		r := d.call(t, "GET", "/v1/evals/"+id, tokAcme, "")
		if r.status != 200 {
			t.Fatalf("eval %s: %d %v", id, r.status, r.body)
		}
		if r.body["status"] != "running" {
			return r.body
		}
		if time.Now().After(deadline) {
			t.Fatalf("eval %s still running: %v", id, r.body)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

var evalIDRe = regexp.MustCompile(`eval (ev[-_][0-9A-Za-z_-]+) started`)

// TestCLIEval drives the eval commands against baton dev (on the
// emulators when configured): eval dataset --from-runs writes a case per
// recorded run (its answer and its one echo call); eval run sends it
// with an input case and a rubric case on version one against version
// two, prints both side by side (version two's replays fail their
// trajectory, the judge scores the rubric case) and writes the views and
// JUnit XML; --min-pass decides the exit code; a malformed dataset line
// is refused before anything is sent, and a case the API refuses is
// named by its line; eval ls and show read the evals, eval cancel stops
// one whose case waits;
// agents alias --if-eval moves the alias only after an eval that passed
// on that version.
func TestCLIEval(t *testing.T) {
	d, v1, v2 := startEvalDev(t)
	runs := recordRuns(t, d, 2)
	env := cliEnv(t, d, tokAcme)

	ds := runCLI(t, env, "", "eval", "dataset", "--from-runs", "--agent", "evalee")
	lines := strings.Split(strings.TrimSpace(ds.stdout), "\n")
	if ds.code != 0 || len(lines) != 2 || !strings.Contains(ds.stderr, "2 cases from runs of agent evalee") {
		t.Fatalf("dataset: exit %d\n%s\n%s", ds.code, ds.stdout, ds.stderr)
	}
	for i, l := range lines {
		id := runs[len(runs)-1-i] // newest first
		want := `{"id":"` + id + `","from_run":"` + id + `","expect":{"final":{"equals":"Echoed it."},"trajectory":{"mode":"exact","tools":[{"name":"ability/echo","parameters":{"text":"hello eval"}}]}}}`
		if l != want {
			t.Fatalf("dataset line %d:\n%s\nwant\n%s", i+1, l, want)
		}
	}
	data := filepath.Join(t.TempDir(), "echo.jsonl")
	extra := `{"id":"asks","input":{"messages":[{"role":"user","content":"Echo hi"}]},"expect":{"final":{"contains":["Echoed"]},"max_turns":3}}
{"id":"judged","input":{"messages":[{"role":"user","content":"Echo hi"}]},"expect":{"rubric":"Says it echoed."}}
`
	if err := os.WriteFile(data, []byte(ds.stdout+extra), 0o600); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	jsonOut, junitOut := filepath.Join(dir, "evals.json"), filepath.Join(dir, "evals.xml")
	r := runCLI(t, env, "", "eval", "run", data, "--agent", "evalee", "--version", v1, "--against", v2, "--judge", "grader", "--json", jsonOut, "--junit", junitOut)
	ids := evalIDRe.FindAllStringSubmatch(r.stderr, -1)
	if r.code != 0 || len(ids) != 2 {
		t.Fatalf("eval run --against: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	evA, evB := ids[0][1], ids[1][1]
	for _, want := range []string{"keeps running on the server", "eval " + evA + ": 4/4 scored, 4 passed, 0 failed", "eval " + evB + ": 4/4 scored, 2 passed, 2 failed"} {
		if !strings.Contains(r.stderr, want) {
			t.Fatalf("stderr lacks %q:\n%s", want, r.stderr)
		}
	}
	table := strings.Join(strings.Fields(r.stdout), " ") // columns aligned with runs of spaces
	for _, want := range []string{"A " + v1, "B " + v2, "pass FAIL 2 → 1 (-1)", "B trajectory: ", "pass rate 100.0% (4 of 4) 50.0% (2 of 4) -50.0 points"} {
		if !strings.Contains(table, want) {
			t.Fatalf("stdout lacks %q:\n%s", want, r.stdout)
		}
	}
	var both struct {
		A, B struct {
			Status       string `json:"status"`
			AgentVersion string `json:"agent_version"`
			Cases        []struct {
				ID    string `json:"id"`
				RunID string `json:"run_id"`
				Pass  bool   `json:"pass"`
				Judge *struct {
					Score float64 `json:"score"`
				} `json:"judge"`
			} `json:"cases"`
		}
	}
	raw, _ := os.ReadFile(jsonOut)
	if err := json.Unmarshal(raw, &both); err != nil || both.A.AgentVersion != v1 || both.B.AgentVersion != v2 || len(both.A.Cases) != 4 {
		t.Fatalf("--json: %v %s", err, raw)
	}
	for _, c := range both.A.Cases {
		if !c.Pass || c.RunID == "" || (c.ID == "judged") != (c.Judge != nil) || (c.Judge != nil && c.Judge.Score != 0.5) {
			t.Fatalf("version one's case %+v", c)
		}
	}
	var doc struct {
		Tests    int `xml:"tests,attr"`
		Failures int `xml:"failures,attr"`
		Suites   []struct {
			Name     string `xml:"name,attr"`
			Failures int    `xml:"failures,attr"`
			Cases    []struct {
				Name      string `xml:"name,attr"`
				Classname string `xml:"classname,attr"`
				Failure   *struct {
					Message string `xml:"message,attr"`
					Body    string `xml:",chardata"`
				} `xml:"failure"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	raw, _ = os.ReadFile(junitOut)
	if err := xml.Unmarshal(raw, &doc); err != nil || doc.Tests != 8 || doc.Failures != 2 || len(doc.Suites) != 2 || doc.Suites[0].Name != evA || doc.Suites[1].Failures != 2 {
		t.Fatalf("junit: %v\n%s", err, raw)
	}
	// An independent parser (libxml2's xmllint) reads the same report.
	for xpath, want := range map[string]string{
		"count(/testsuites/testsuite)": "2", "count(//testcase)": "8", "count(//testcase/failure)": "2",
		"string(/testsuites/@failures)": "2", "count(/testsuites/testsuite[2]/testcase[@classname='eval/evalee'])": "4",
	} {
		out, err := exec.Command("xmllint", "--xpath", xpath, junitOut).Output()
		if err != nil || strings.TrimSpace(string(out)) != want {
			t.Fatalf("xmllint --xpath %q: %q %v, want %s", xpath, out, err, want)
		}
	}
	for _, c := range doc.Suites[1].Cases {
		replay := c.Name != "asks" && c.Name != "judged"
		if c.Classname != "eval/evalee" || (c.Failure != nil) != replay || (replay && !strings.Contains(c.Failure.Body, "trajectory: ")) {
			t.Fatalf("version two's testcase %+v", c)
		}
	}

	// The pass rate gate: version two passes half.
	if r := runCLI(t, env, "", "eval", "run", data, "--agent", "evalee", "--version", v2, "--min-pass", "0.75"); r.code != 1 || !strings.Contains(r.stderr, "pass rate 50.0% is below --min-pass 75.0%") {
		t.Fatalf("below --min-pass: exit %d\n%s", r.code, r.stderr)
	}
	before := len(d.call(t, "GET", "/v1/evals?limit=100", tokAcme, "").body["evals"].([]any))
	bad := filepath.Join(t.TempDir(), "bad.jsonl")
	_ = os.WriteFile(bad, []byte(lines[0]+"\n{\"id\":\"x\",\"input\":\n"), 0o600)
	if r := runCLI(t, env, "", "eval", "run", bad, "--agent", "evalee"); r.code != 2 || !strings.Contains(r.stderr, "bad.jsonl line 2: not JSON") {
		t.Fatalf("a malformed line: exit %d\n%s", r.code, r.stderr)
	}
	// A case only the API refuses is named by its line, blank lines counted.
	refused := filepath.Join(t.TempDir(), "refused.jsonl")
	_ = os.WriteFile(refused, []byte(lines[0]+"\n\n"+`{"id":"y","input":{"messages":[{"role":"user","content":"hi"}]},"expect":{"final":{"regex":"("}}}`+"\n"), 0o600)
	if r := runCLI(t, env, "", "eval", "run", refused, "--agent", "evalee"); r.code != 2 || !strings.Contains(r.stderr, "refused.jsonl line 3: invalid_dataset: ") || !strings.Contains(r.stderr, "nothing was started") {
		t.Fatalf("a case the API refuses: exit %d\n%s", r.code, r.stderr)
	}
	if after := len(d.call(t, "GET", "/v1/evals?limit=100", tokAcme, "").body["evals"].([]any)); after != before {
		t.Fatalf("a malformed dataset started an eval: %d evals, were %d", after, before)
	}

	ls := runCLI(t, env, "", "eval", "ls")
	if ls.code != 0 || !strings.Contains(ls.stdout, evA) || !strings.Contains(ls.stdout, evB) || !strings.Contains(ls.stdout, "echo") {
		t.Fatalf("eval ls: exit %d\n%s", ls.code, ls.stdout)
	}
	show := runCLI(t, env, "", "eval", "show", evB)
	if show.code != 0 || !strings.Contains(show.stdout, "judged") || !strings.Contains(show.stdout, "0.50") || !strings.Contains(show.stdout, "trajectory: ") {
		t.Fatalf("eval show: exit %d\n%s", show.code, show.stdout)
	}
	if other := runCLI(t, cliEnv(t, d, tokGlobex), "", "eval", "show", evA); other.code != 1 || !strings.Contains(other.stderr, "not_found") {
		t.Fatalf("another tenant's eval: exit %d %s", other.code, other.stderr)
	}

	// eval cancel: an eval whose case waits on a client tool.
	waiting := map[string]any{"id": "waits", "input": map[string]any{
		"messages": []any{map[string]any{"role": "user", "content": "Echo hi"}},
		"tools": []any{map[string]any{"name": "client/confirm", "description": "Ask the person.",
			"parameters": map[string]any{"type": "object", "properties": map[string]any{}}}},
		"model": scriptedModel(nil, callTurn("Asking.", "call_confirm", "client/confirm", map[string]any{}), map[string]any{"content": "Confirmed."})}}
	wb, _ := json.Marshal(map[string]any{"agent": "evalee", "agent_version": v1, "dataset": []any{waiting}})
	wr := d.call(t, "POST", "/v1/evals", tokAcme, string(wb))
	waitingID, _ := wr.body["eval_id"].(string)
	if wr.status != 202 || !caseWaits(t, d, waitingID) {
		t.Fatalf("the waiting eval: %d %v", wr.status, wr.body)
	}
	if c := runCLI(t, env, "", "eval", "cancel", waitingID); c.code != 0 || c.stdout != "eval "+waitingID+" cancelled: 0/1 scored, 0 passed, 0 failed\n" {
		t.Fatalf("eval cancel: exit %d %q %q", c.code, c.stdout, c.stderr)
	}
	if v := waitEval(t, d, waitingID); v["status"] != "cancelled" {
		t.Fatalf("after eval cancel: %v", v)
	}

	// The alias gate.
	admin := cliEnv(t, d, tokAdmin)
	if r := runCLI(t, admin, "", "agents", "alias", "default", v2, "--if-eval", evB); r.code != 1 || !strings.Contains(r.stderr, "did not pass: 2 of 4 cases failed") {
		t.Fatalf("alias on a failed eval: exit %d\n%s", r.code, r.stderr)
	}
	if r := runCLI(t, admin, "", "agents", "alias", "default", v2, "--if-eval", evA); r.code != 1 || !strings.Contains(r.stderr, "ran on version "+v1+", not "+v2) {
		t.Fatalf("alias on another version's eval: exit %d\n%s", r.code, r.stderr)
	}
	if got := defaultVersion(t, d); got != v1 {
		t.Fatalf("refusals moved the alias to %s", got)
	}
	if r := runCLI(t, admin, "", "agents", "alias", "default", v2, "--if-eval", evB, "--min-pass", "0.5"); r.code != 0 || !strings.Contains(r.stdout, "alias default → "+v2+" 100%") {
		t.Fatalf("alias with --min-pass 0.5: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if got := defaultVersion(t, d); got != v2 {
		t.Fatalf("the alias is on %s, want %s", got, v2)
	}
}
