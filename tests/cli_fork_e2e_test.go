//go:build e2e

package tests

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"
)

// TestCLIFork drives `baton runs fork` and `baton runs compare` against
// baton dev (on the emulators when configured): a finished run whose
// tool ran is forked at its user message with an edited question in
// reuse mode; the command follows the fork to its end, its call answered
// from the source's record (marked replayed, nothing ran); runs show
// names the fork's origin and the replayed result (the fork's model comes
// from --file); runs ls --forked-from
// lists the fork; compare names the first divergent message and the two
// runs' calls (executed, replayed); the same --idempotency-key makes the
// command run again the same fork; a tool call is refused as a fork
// point with the points the run has; another tenant gets not_found.
func TestCLIFork(t *testing.T) {
	d := startDev(t, devArgs(t))
	model := scriptedModel(nil, callTurn("Echoing.", "c1", "ability/echo", map[string]any{"text": "hello fork"}), map[string]any{"content": "Echoed it."})
	b, _ := json.Marshal(map[string]any{"agent": "e2e", "messages": []any{map[string]any{"role": "user", "content": "Echo hello fork"}}, "model": model})
	src := start(t, d, string(b))
	if v := d.waitStatus(t, src); v["status"] != "completed" {
		t.Fatalf("source run: %v", v)
	}
	var user, call int64
	for _, m := range transcript(t, d, src) {
		seq := int64(m["seq"].(float64))
		switch {
		case m["role"] == "user" && user == 0:
			user = seq
		case m["role"] == "tool_call" && call == 0:
			call = seq
		}
	}
	env := cliEnv(t, d, tokAcme)
	// The fork's model: the same script again (a fork runs on its agent's
	// model unless its body overrides it; --file carries the override).
	body := writeJSON(t, map[string]any{"model": model})

	r := runCLI(t, env, "", "runs", "fork", src, "--at", itoa(user), "--edit", "Echo hello fork, please", "--file", body, "--no-input", "--idempotency-key", "fork-e2e-1")
	m := runIDRe.FindAllString(r.stdout, -1)
	if r.code != 0 || len(m) < 2 {
		t.Fatalf("fork: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	fork := m[1] // the first is the source, in the "forked" line
	for _, want := range []string{"forked " + src + " at message " + itoa(user) + " (tools: reuse)\n", "run " + fork + " (agent e2e", "ability/echo ok replayed", "Echoed it.", "status completed"} {
		if !strings.Contains(r.stdout, want) {
			t.Fatalf("fork output lacks %q:\n%s", want, r.stdout)
		}
	}
	if again := runCLI(t, env, "", "runs", "fork", src, "--at", itoa(user), "--edit", "Echo hello fork, please", "--file", body, "--no-input", "--idempotency-key", "fork-e2e-1"); again.code != 0 || !strings.Contains(again.stdout, "run "+fork+" ") {
		t.Fatalf("the same key again: exit %d, want fork %s\n%s\n%s", again.code, fork, again.stdout, again.stderr)
	}

	show := runCLI(t, env, "", "runs", "show", fork)
	for _, want := range []string{"forked from " + src + " at message " + itoa(user) + " (tools: reuse)", "(replayed from " + src + " message ", itoa(user) + " user: Echo hello fork, please"} {
		if show.code != 0 || !strings.Contains(show.stdout, want) {
			t.Fatalf("runs show of the fork lacks %q: exit %d\n%s\n%s", want, show.code, show.stdout, show.stderr)
		}
	}
	ls := runCLI(t, env, "", "runs", "ls", "--forked-from", src)
	if ls.code != 0 || strings.Count(ls.stdout, "\nr-") != 1 || !strings.Contains(ls.stdout, fork) {
		t.Fatalf("runs ls --forked-from: exit %d, want the one fork %s\n%s", ls.code, fork, ls.stdout)
	}

	cmp := runCLI(t, env, "", "runs", "compare", src, fork)
	for _, want := range []string{
		src + " and " + fork + " diverge at message " + itoa(user) + ":",
		"  A " + itoa(user) + " user: Echo hello fork\n", "  B " + itoa(user) + " user: Echo hello fork, please\n",
		"forked from", "1 executed", "1 replayed", "ability/echo executed ok", "ability/echo replayed ok",
	} {
		if cmp.code != 0 || !strings.Contains(cmp.stdout, want) {
			t.Fatalf("compare lacks %q: exit %d\n%s\n%s", want, cmp.code, cmp.stdout, cmp.stderr)
		}
	}

	bad := runCLI(t, env, "", "runs", "fork", src, "--at", itoa(call))
	if bad.code != 1 || !strings.Contains(bad.stderr, "invalid_fork_point") || !strings.Contains(bad.stderr, itoa(user)+" (user)") {
		t.Fatalf("a fork at a tool call: exit %d, stderr %q", bad.code, bad.stderr)
	}
	other := cliEnv(t, d, tokGlobex)
	for _, args := range [][]string{{"runs", "fork", src, "--at", itoa(user)}, {"runs", "compare", src, fork}} {
		if r := runCLI(t, other, "", args...); r.code != 1 || !strings.Contains(r.stderr, "not_found") {
			t.Fatalf("another tenant's %v: exit %d, stderr %q", args, r.code, r.stderr)
		}
	}
	if ls := runCLI(t, env, "", "runs", "ls", "--forked-from", src); strings.Count(ls.stdout, "\nr-") != 1 {
		t.Fatalf("after the refused forks: %s", ls.stdout)
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
