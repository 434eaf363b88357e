//go:build e2e

package tests

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/creack/pty"
)

// cliResult is what one `baton` client command printed and its exit code.
type cliResult struct {
	stdout, stderr string
	code           int
}

// cliEnv is the environment of a client command: the dev server's URL,
// a token, a fresh HOME (no profile), and extra variables.
func cliEnv(t *testing.T, d *dev, token string, extra ...string) []string {
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "BATON_URL=" + d.base}
	if token != "" {
		env = append(env, "BATON_TOKEN="+token)
	}
	return append(env, extra...)
}

// runCLI runs the real binary with stdin and waits for it (a two-minute
// guard ends a hung command).
func runCLI(t *testing.T, env []string, stdin string, args ...string) cliResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, args...)
	cmd.Env, cmd.Stdin = env, strings.NewReader(stdin)
	var out, errOut strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("baton %v: %v", args, err)
	}
	r := cliResult{out.String(), errOut.String(), code}
	for _, s := range []string{r.stdout, r.stderr} {
		if strings.Contains(s, "\x1b[") {
			t.Fatalf("baton %v coloured output that is not a terminal: %q", args, s)
		}
		if strings.Contains(s, "goroutine ") || strings.Contains(s, "panic:") {
			t.Fatalf("baton %v printed a Go stack: %s", args, s)
		}
	}
	return r
}

// writeJSON writes v to a file in a temp dir and returns its path.
func writeJSON(t *testing.T, v any) string {
	t.Helper()
	b, _ := json.Marshal(v)
	p := filepath.Join(t.TempDir(), "request.json")
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func scriptedModel(options map[string]any, turns ...any) map[string]any {
	m := map[string]any{"provider": "scripted", "turns": turns}
	if options != nil {
		m["options"] = options
	}
	return m
}

func callTurn(content, id, name string, params map[string]any) map[string]any {
	return map[string]any{"content": content, "tool_calls": []any{map[string]any{"id": id, "name": name, "parameters": params}}}
}

var runIDRe = regexp.MustCompile(`(r-[0-9a-f]{20,})`)

// transcript reads a run's messages through the API.
func transcript(t *testing.T, d *dev, runID string) []map[string]any {
	t.Helper()
	r := d.call(t, "GET", "/v1/runs/"+runID+"/messages?limit=1000", tokAcme, "")
	if r.status != 200 {
		t.Fatalf("messages: %d %v", r.status, r.body)
	}
	var out []map[string]any
	for _, m := range r.body["messages"].([]any) {
		out = append(out, m.(map[string]any))
	}
	return out
}

// checkPaired fails unless every tool_call of the transcript has exactly
// one tool_result after it, and returns the results by tool call id.
func checkPaired(t *testing.T, msgs []map[string]any) map[string]map[string]any {
	t.Helper()
	calls, results := map[string]int{}, map[string]map[string]any{}
	for i, m := range msgs {
		meta, _ := m["metadata"].(map[string]any)
		id, _ := meta["tool_call_id"].(string)
		switch m["role"] {
		case "tool_call":
			calls[id] = i
		case "tool_result":
			at, ok := calls[id]
			if !ok || at > i || results[id] != nil {
				t.Fatalf("tool_result %s without its call before it: %v", id, msgs)
			}
			results[id] = m
		}
	}
	for id := range calls {
		if results[id] == nil {
			t.Fatalf("tool_call %s has no result: %v", id, msgs)
		}
	}
	return results
}

// TestCLIEndToEnd drives the real `baton` client commands against
// `baton dev` (on the emulators when configured).
func TestCLIEndToEnd(t *testing.T) {
	d := startDev(t, devArgs(t))
	t.Run("streams before completion, client tool by --client-tool, --json", func(t *testing.T) { cliStreamAndClientTool(t, d) })
	t.Run("approvals at the interactive prompt", func(t *testing.T) { cliApprovalPrompt(t, d) })
	t.Run("--no-input at a pause, then submit and show", func(t *testing.T) { cliNoInput(t, d) })
	t.Run("runs ls paging and tenancy", func(t *testing.T) { cliRunsList(t, d) })
	t.Run("interrupt a running run", func(t *testing.T) { cliInterrupt(t, d) })
	t.Run("approve, cancel, steer and events", func(t *testing.T) { cliCommands(t, d) })
	t.Run("login profile", func(t *testing.T) { cliLogin(t, d) })
	t.Run("dev hint", func(t *testing.T) { cliDevHint(t, d) })
}

// cliStreamAndClientTool: the first turn's text is on the terminal while
// the run still waits on its client tool (whose command holds until the
// test lets it go), the tool's stdout becomes its result, and --json
// prints the final view.
func cliStreamAndClientTool(t *testing.T, d *dev) {
	gate := filepath.Join(t.TempDir(), "go")
	file := writeJSON(t, map[string]any{"agent": "e2e",
		"tools": []any{map[string]any{"name": "client/lookup", "description": "Look up.", "parameters": map[string]any{"type": "object"}}},
		"model": scriptedModel(map[string]any{"chunk_chars": 5, "chunk_delay": "10ms"},
			callTurn("Checking the stock levels now.", "c1", "client/lookup", map[string]any{"sku": "A-1"}),
			map[string]any{"content": "There are 7 left."})})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, "run", "--file", file, "--client-tool",
		"client/lookup=while [ ! -f "+gate+" ]; do sleep 0.05; done; sed 's/A-1/found/'", "How many?")
	cmd.Env = cliEnv(t, d, tokAcme)
	stdout, _ := cmd.StdoutPipe()
	var errOut strings.Builder
	cmd.Stderr = &errOut
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var seen strings.Builder
	buf := make([]byte, 4096)
	for !strings.Contains(seen.String(), "Checking the stock levels now.") {
		n, err := stdout.Read(buf)
		seen.Write(buf[:n])
		if err != nil {
			t.Fatalf("output ended before the streamed text: %q %s", seen.String(), errOut.String())
		}
	}
	m := runIDRe.FindStringSubmatch(seen.String())
	if m == nil {
		t.Fatalf("no run id in %q", seen.String())
	}
	if v := d.call(t, "GET", "/v1/runs/"+m[1], tokAcme, ""); v.body["status"] == "completed" {
		t.Fatalf("the run completed before its streamed text was shown")
	}
	if err := os.WriteFile(gate, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	rest, _ := io.ReadAll(stdout)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("baton run: %v\n%s%s\n%s", err, seen.String(), rest, errOut.String())
	}
	out := seen.String() + string(rest)
	for _, want := range []string{"client/lookup", "answered by", "There are 7 left.", "status completed"} {
		if !strings.Contains(out, want) {
			t.Fatalf("output lacks %q:\n%s", want, out)
		}
	}
	res := checkPaired(t, transcript(t, d, m[1]))["c1"]
	if !strings.Contains(res["content"].(string), `"found"`) {
		t.Fatalf("the client tool's stdout is not its result: %v", res)
	}
	// --json prints the final run view only.
	r := runCLI(t, cliEnv(t, d, tokAcme), "", "run", "--json", "--agent", "e2e", "--file",
		writeJSON(t, map[string]any{"model": scriptedModel(nil, map[string]any{"content": "Fine."})}), "hi")
	var v map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &v); err != nil || r.code != 0 || v["status"] != "completed" || result(v)["final_content"] != "Fine." {
		t.Fatalf("--json: %d %q %v", r.code, r.stdout, err)
	}
}

// ptyRun runs the binary on a pseudo-terminal; expect waits for text in
// its output after the last match, send types a line.
type ptyRun struct {
	t    *testing.T
	cmd  *exec.Cmd
	f    *os.File
	out  *syncBuffer
	from int
	done chan struct{}
}

func startPTY(t *testing.T, env []string, args ...string) *ptyRun {
	t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Env = env
	f, err := pty.Start(cmd)
	if err != nil {
		t.Fatal(err)
	}
	p := &ptyRun{t: t, cmd: cmd, f: f, out: &syncBuffer{}, done: make(chan struct{})}
	go func() { _, _ = io.Copy(p.out, f); close(p.done) }()
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = f.Close() })
	return p
}

func (p *ptyRun) expect(s string) {
	p.t.Helper()
	deadline := time.Now().Add(90 * time.Second) // a guard against a hung command
	for time.Now().Before(deadline) {
		all := p.out.String()
		if i := strings.Index(all[p.from:], s); i >= 0 {
			p.from += i + len(s)
			return
		}
		select {
		case <-p.done:
			if !strings.Contains(p.out.String()[p.from:], s) {
				p.t.Fatalf("output ended without %q:\n%s", s, p.out.String())
			}
		case <-time.After(20 * time.Millisecond):
		}
	}
	p.t.Fatalf("no %q in:\n%s", s, p.out.String())
}

func (p *ptyRun) send(line string) {
	if _, err := p.f.Write([]byte(line + "\r")); err != nil {
		p.t.Fatal(err)
	}
}

func (p *ptyRun) wait() int {
	<-p.done
	err := p.cmd.Wait()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	return 0
}

// cliApprovalPrompt: on a terminal, baton run shows each action's
// summary and preview and asks; a rejection with a reason and an
// acceptance reach the run, and the output is coloured.
func cliApprovalPrompt(t *testing.T, d *dev) {
	file := writeJSON(t, map[string]any{"model": scriptedModel(nil,
		callTurn("Sending the first.", "c1", "ability/send_email", map[string]any{"to": "ann@example.com"}),
		callTurn("Sending the second.", "c2", "ability/send_email", map[string]any{"to": "bob@example.com"}),
		map[string]any{"content": "Sent one of two."})})
	p := startPTY(t, cliEnv(t, d, tokAcme, "TERM=xterm"), "run", "--agent", "e2e", "--file", file, "Mail them")
	p.expect("approval required")
	p.expect("ann@example.com") // the summary and the preview
	p.expect("accept? [y/n] ")
	p.send("n")
	p.expect("reason (optional): ")
	p.send("too risky")
	p.expect("bob@example.com")
	p.expect("accept? [y/n] ")
	p.send("y")
	p.expect("Sent one of two.")
	if code := p.wait(); code != 0 {
		t.Fatalf("exit %d:\n%s", code, p.out.String())
	}
	if !strings.Contains(p.out.String(), "\x1b[") {
		t.Fatalf("no colour on a terminal:\n%q", p.out.String())
	}
	m := runIDRe.FindStringSubmatch(p.out.String())
	results := checkPaired(t, transcript(t, d, m[1]))
	r1, r2 := results["c1"]["metadata"].(map[string]any), results["c2"]["metadata"].(map[string]any)
	if r1["success"] != false || r1["error_type"] != "rejected" || !strings.Contains(results["c1"]["content"].(string), "too risky") || r2["success"] != true {
		t.Fatalf("decisions: %v / %v", results["c1"], results["c2"])
	}
}

// cliNoInput: --no-input exits 3 at a pause (on a terminal with NO_COLOR:
// no colour), naming the command that answers; submit answers it; runs
// show pairs the call with its result and shows the run's cost.
func cliNoInput(t *testing.T, d *dev) {
	file := writeJSON(t, map[string]any{"agent": "e2e",
		"tools": []any{map[string]any{"name": "client/ask", "description": "Ask.", "parameters": map[string]any{"type": "object"}}},
		"model": scriptedModel(nil, callTurn("", "c1", "client/ask", map[string]any{"q": "colour?"}), map[string]any{"content": "Blue it is."})})
	p := startPTY(t, cliEnv(t, d, tokAcme, "NO_COLOR=1", "TERM=xterm"), "run", "--no-input", "--file", file, "Pick")
	p.expect("baton submit ")
	if code := p.wait(); code != 3 {
		t.Fatalf("exit %d at a pause, want 3:\n%s", code, p.out.String())
	}
	if strings.Contains(p.out.String(), "\x1b[") {
		t.Fatalf("colour despite NO_COLOR:\n%q", p.out.String())
	}
	m := regexp.MustCompile(`baton submit (r-[0-9a-f]+) (\S+)`).FindStringSubmatch(p.out.String())
	env := cliEnv(t, d, tokAcme)
	if r := runCLI(t, env, "", "submit", m[1], m[2], "--result", `{"colour":"blue"}`); r.code != 0 || !strings.Contains(r.stdout, "queued") {
		t.Fatalf("submit: %+v", r)
	}
	d.waitStatus(t, m[1])
	r := runCLI(t, env, "", "runs", "show", m[1])
	if r.code != 0 || !regexp.MustCompile(`tool: client/ask \{"q":"colour\?"\} → ok \{"colour":"blue"\}`).MatchString(r.stdout) ||
		!strings.Contains(r.stdout, "assistant: Blue it is.") || !strings.Contains(r.stdout, "status completed") ||
		!regexp.MustCompile(`· cost: \$[0-9.]+ \(model \$[0-9.]+, AWS \$[0-9.]+\)`).MatchString(r.stdout) {
		t.Fatalf("runs show: %+v", r)
	}
	// A second answer is the API's conflict, printed as its code and message.
	if r := runCLI(t, env, "", "submit", m[1], m[2], "--result", `1`); r.code != 1 || !strings.Contains(r.stderr, "409") {
		t.Fatalf("second submit: %+v", r)
	}
}

// cliRunsList: runs ls pages newest first by cursor without duplicates,
// shows only the caller's tenant, and another tenant's run is a clear
// not-found.
func cliRunsList(t *testing.T, d *dev) {
	var mine []string
	for i := 0; i < 5; i++ {
		mine = append(mine, start(t, d, `{"agent":"e2e","messages":[{"role":"user","content":"hi"}],"model":{"provider":"scripted","turns":[{"content":"ok"}]}}`))
	}
	for _, id := range mine {
		d.waitStatus(t, id)
	}
	g := d.call(t, "POST", "/v1/runs", tokGlobex, `{"agent":"e2e","messages":[{"role":"user","content":"hi"}],"model":{"provider":"scripted","turns":[{"content":"ok"}]}}`)
	theirs := g.body["run_id"].(string)
	env := cliEnv(t, d, tokAcme)
	var listed []string
	cursor := ""
	for page := 0; ; page++ {
		args := []string{"runs", "ls", "--json", "--limit", "2"}
		if cursor != "" {
			args = append(args, "--cursor", cursor)
		}
		r := runCLI(t, env, "", args...)
		var p struct {
			Runs []struct {
				RunID string `json:"run_id"`
			} `json:"runs"`
			Next *string `json:"next_cursor"`
		}
		if err := json.Unmarshal([]byte(r.stdout), &p); err != nil || r.code != 0 || len(p.Runs) > 2 {
			t.Fatalf("page %d: %+v", page, r)
		}
		for _, x := range p.Runs {
			if slices.Contains(listed, x.RunID) {
				t.Fatalf("run %s listed twice", x.RunID)
			}
			listed = append(listed, x.RunID)
		}
		if p.Next == nil {
			break
		}
		cursor = *p.Next
	}
	if slices.Contains(listed, theirs) {
		t.Fatal("acme lists globex's run")
	}
	var order []string
	for _, id := range listed {
		if slices.Contains(mine, id) {
			order = append(order, id)
		}
	}
	want := slices.Clone(mine)
	slices.Reverse(want)
	if strings.Join(order, " ") != strings.Join(want, " ") {
		t.Fatalf("runs %v, want newest first %v", order, want)
	}
	// Human output: a table and the command for the next page.
	r := runCLI(t, env, "", "runs", "ls", "--limit", "2", "--status", "completed")
	if r.code != 0 || !strings.Contains(r.stdout, "STATUS") || !strings.Contains(r.stdout, "more: baton runs ls --limit 2 --status completed --cursor ") {
		t.Fatalf("runs ls: %+v", r)
	}
	// Another tenant's run is not found, said plainly.
	r = runCLI(t, cliEnv(t, d, tokGlobex), "", "runs", "show", mine[0])
	if r.code != 1 || !strings.Contains(r.stderr, "not_found: no such run") || !strings.Contains(r.stderr, "HTTP 404") {
		t.Fatalf("another tenant's run: %+v", r)
	}
	if r := runCLI(t, cliEnv(t, d, tokGlobex), "", "runs", "ls", "--json"); !strings.Contains(r.stdout, theirs) || strings.Contains(r.stdout, mine[0]) {
		t.Fatalf("globex's list: %+v", r)
	}
	if r := runCLI(t, env, "", "runs", "ls", "--status", "nope"); r.code != 1 || !strings.Contains(r.stderr, "invalid_query") {
		t.Fatalf("bad status: %+v", r)
	}
}

// cliInterrupt: a run whose model turn is still streaming is interrupted
// by baton interrupt: it ends interrupted with the normalized interrupt
// in the envelope and a valid transcript, and its session takes the next
// run, whose completion shows the interrupted run's late model reply was
// never appended.
func cliInterrupt(t *testing.T, d *dev) {
	session := "s-interrupt-" + randomSuffix()
	long := strings.Repeat("word ", 200)
	id := start(t, d, `{"agent":"e2e","session_id":"`+session+`","messages":[{"role":"user","content":"go"}],"model":{"provider":"scripted","options":{"chunk_chars":5,"chunk_delay":"50ms"},"turns":[{"content":"`+long+`"}]}}`)
	env := cliEnv(t, d, tokAcme)
	r := runCLI(t, env, "", "interrupt", id, "--action", "handoff", "--meta", "channel=ops", "--json")
	var v map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &v); err != nil || r.code != 0 {
		t.Fatalf("interrupt: %+v", r)
	}
	in, _ := result(v)["interrupted"].(map[string]any)
	if v["status"] != "interrupted" || in["action"] != "handoff" || in["channel"] != "ops" || in["source"] != "cli" || result(v)["completed"] != false {
		t.Fatalf("interrupted view: %v", v)
	}
	evs := d.call(t, "GET", "/v1/runs/"+id+"/events", tokAcme, "")
	found := false
	for _, e := range evs.body["events"].([]any) {
		found = found || e.(map[string]any)["type"] == "interrupt_received"
	}
	if !found {
		t.Fatalf("no interrupt_received event: %v", evs.body)
	}
	if r := runCLI(t, env, "", "interrupt", id); r.code != 1 || !strings.Contains(r.stderr, "run_finished") {
		t.Fatalf("second interrupt: %+v", r)
	}
	file := writeJSON(t, map[string]any{"model": scriptedModel(nil, map[string]any{"content": "Next."})})
	if r := runCLI(t, env, "", "run", "--agent", "e2e", "--session", session, "--file", file, "again"); r.code != 0 {
		t.Fatalf("next run on the session: %+v", r)
	}
	msgs := transcript(t, d, id)
	checkPaired(t, msgs)
	for _, m := range msgs {
		if m["content"] == long {
			t.Fatalf("the interrupted turn's reply was appended: %v", msgs)
		}
	}
	if got := d.call(t, "GET", "/v1/runs/"+id, tokAcme, ""); got.body["status"] != "interrupted" {
		t.Fatalf("status later: %v", got.body["status"])
	}
}

// cliCommands: approve and cancel by command, steering, events (and
// --follow on a finished run), and exit codes by status.
func cliCommands(t *testing.T, d *dev) {
	env := cliEnv(t, d, tokAcme)
	id := start(t, d, `{"agent":"e2e","messages":[{"role":"user","content":"mail"}],"model":{"provider":"scripted","turns":[
	 {"tool_calls":[{"id":"c1","name":"ability/send_email","parameters":{"to":"cy@example.com"}}]},
	 {"tool_calls":[{"id":"c2","name":"ability/send_email","parameters":{"to":"di@example.com"}}]},{"content":"unreachable"}]}}`)
	v := d.waitStatus(t, id)
	action := pending(v, "actions", "action_id")
	if r := runCLI(t, env, "", "approve", id, action, "--reject", "--reason", "not now"); r.code != 0 || !strings.Contains(r.stdout, "is queued") {
		t.Fatalf("approve --reject: %+v", r)
	}
	d.waitStatus(t, id)
	if r := runCLI(t, env, "", "steer", id, "also cc me"); r.code != 0 {
		t.Fatalf("steer: %+v", r)
	}
	if r := runCLI(t, env, "", "cancel", id, "--reason", "enough"); r.code != 0 || !strings.Contains(r.stdout, "cancelled") {
		t.Fatalf("cancel: %+v", r)
	}
	r := runCLI(t, env, "", "runs", "events", id, "--follow")
	for _, want := range []string{"approval_decided", "steering_queued", "cancelled"} {
		if r.code != 0 || !strings.Contains(r.stdout, want) {
			t.Fatalf("events lack %s: %+v", want, r)
		}
	}
	// The exit code of a run that stops at a budget.
	file := writeJSON(t, map[string]any{"agent": "e2e", "budgets": map[string]any{"tool_calls": 1}, "model": scriptedModel(nil,
		callTurn("", "c1", "ability/echo", map[string]any{"text": "a"}), callTurn("", "c2", "ability/echo", map[string]any{"text": "b"}), map[string]any{"content": "x"})})
	if r := runCLI(t, env, "", "run", "--file", file, "go"); r.code != 5 || !strings.Contains(r.stdout, "budget_exceeded") {
		t.Fatalf("budget: %+v", r)
	}
	if r := runCLI(t, env, "", "run", "--agent", "e2e"); r.code != 2 {
		t.Fatalf("no message: %+v", r)
	}
	if r := runCLI(t, env, "", "run", "--agent", "nope", "hi"); r.code != 1 || !strings.Contains(r.stderr, "unknown_agent") {
		t.Fatalf("unknown agent: %+v", r)
	}
}

// cliLogin: baton login writes the profile with mode 0600, and commands
// use it without BATON_URL or BATON_TOKEN.
func cliLogin(t *testing.T, d *dev) {
	home := t.TempDir()
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home}
	if r := runCLI(t, env, "", "login", "--url", d.base, "--token", tokAcme); r.code != 0 {
		t.Fatalf("login: %+v", r)
	}
	st, err := os.Stat(filepath.Join(home, ".config", "baton", "config.json"))
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("profile: %v %v", st, err)
	}
	if r := runCLI(t, env, "", "runs", "ls", "--limit", "1"); r.code != 0 || !strings.Contains(r.stdout, "r-") {
		t.Fatalf("runs ls with the profile: %+v", r)
	}
	if r := runCLI(t, append(env, "BATON_TOKEN=wrong-token-123"), "", "runs", "ls"); r.code != 1 || !strings.Contains(r.stderr, "unauthorized") {
		t.Fatalf("BATON_TOKEN over the profile: %+v", r)
	}
}

// cliDevHint: baton dev's start-up hint starts a run of the loaded file's
// first agent.
func cliDevHint(t *testing.T, d *dev) {
	if d.cmd == nil {
		t.Skip("a deployed stack prints no hint")
	}
	m := regexp.MustCompile(`-d '(\{.*\})'`).FindStringSubmatch(d.stdout.String())
	if m == nil || !strings.Contains(m[1], `"agent":"e2e"`) {
		t.Fatalf("hint: %s", d.stdout.String())
	}
	if r := d.call(t, "POST", "/v1/runs", tokAcme, m[1]); r.status != 202 {
		t.Fatalf("the hint's request: %d %v", r.status, r.body)
	}
}
