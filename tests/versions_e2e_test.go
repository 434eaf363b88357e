//go:build e2e

package tests

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// tokAdmin holds agents:manage (publish versions, move aliases) beside
// the default scopes; tokAcme does not.
const tokAdmin = "tok-acme-admin-0"

// versionedAgents is an agents file whose one agent, versioned, answers
// with its version's words: v1 asks to send an email (an approval) and
// then answers; v2 has no tool and another prompt. Both echo what the
// model was sent (request_system, request_messages).
func versionedAgents(n int) string {
	if n == 1 {
		return `{"agents":[{"slug":"versioned","system":"You are version one.","allow_overrides":["agent_version"],
  "model":{"provider":"scripted","options":{"echo_request":true},"turns":[
    {"if_user_said":"mail","content":"Sending.","tool_calls":[{"id":"m1","name":"ability/send_email","parameters":{"to":"ann@example.com"}}]},
    {"content":"Answered by version one."}]},
  "tools":[{"name":"ability/send_email","source":"go","description":"Send an email.",
    "parameters":{"type":"object","required":["to"],"properties":{"to":{"type":"string"}}},
    "executor":{"type":"go","handler":"echo"},"action_policy":"preview"}]}]}`
	}
	return `{"agents":[{"slug":"versioned","system":"You are version two.","allow_overrides":["agent_version"],
  "model":{"provider":"scripted","options":{"echo_request":true},"turns":[{"content":"Answered by version two."}]}}]}`
}

func writeVersionFile(t *testing.T, n int) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), fmt.Sprintf("agents-v%d.json", n))
	if err := os.WriteFile(p, []byte(versionedAgents(n)), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// startVersionsDev starts baton dev on the versioned agents file n with an
// admin token; args are the store arguments to keep across a restart.
func startVersionsDev(t *testing.T, args []string, n int) *dev {
	t.Helper()
	args = append(append([]string(nil), args...), "--agents", writeVersionFile(t, n))
	return launchDev(t, args, "BATON_DEV_TOKENS=acme="+tokAcme+",acme="+tokAdmin+"+agents:manage", "AWS_ACCESS_KEY_ID=local", "AWS_SECRET_ACCESS_KEY=local")
}

// versionsArgs are devArgs without its agents file.
func versionsArgs(t *testing.T) []string {
	var out []string
	args := devArgs(t)
	for i := 0; i < len(args); i++ {
		if args[i] == "--agents" {
			i++
			continue
		}
		out = append(out, args[i])
	}
	return out
}

func defaultVersion(t *testing.T, d *dev) string {
	t.Helper()
	r := d.call(t, "GET", "/v1/agent-aliases/default", tokAdmin, "")
	if r.status != 200 {
		t.Fatalf("alias default: %d %v", r.status, r.body)
	}
	routes := r.body["routes"].([]any)
	if len(routes) != 1 {
		t.Fatalf("alias default: %v", r.body)
	}
	return routes[0].(map[string]any)["version"].(string)
}

func requestSystem(v map[string]any) string {
	s, _ := result(v)["request_metadata"].(map[string]any)["request_system"].(string)
	return s
}

// TestRunKeepsItsAgentVersion: a run paused on v1 finishes on v1 after v2
// (tool removed, prompt changed) is published and made the default and,
// on the emulators, baton dev restarts with v2 as its own file (a
// redeploy): the approved call runs once on v1's executor and the next
// model request carries v1's prompt. A new run uses v2. The CLI
// publishes, lists and diffs.
func TestRunKeepsItsAgentVersion(t *testing.T) {
	args := versionsArgs(t)
	d := startVersionsDev(t, args, 1)
	v1 := defaultVersion(t, d)

	id := start(t, d, `{"agent":"versioned","messages":[{"role":"user","content":"mail Ann"}]}`)
	v := d.waitStatus(t, id)
	if v["status"] != "approval_required" || v["agent_version"] != v1 || result(v)["agent_version"] != v1 {
		t.Fatalf("paused on v1 (%s)? %v", v1, v)
	}
	act := pending(v, "actions", "action_id")

	// Publish v2 and make it the default, with the CLI.
	env := cliEnv(t, d, tokAdmin)
	r := runCLI(t, env, "", "agents", "publish", writeVersionFile(t, 2), "--alias", "default")
	if r.code != 0 || !strings.Contains(r.stdout, "published") || !strings.Contains(r.stdout, "alias default → ") {
		t.Fatalf("publish: %d %s %s", r.code, r.stdout, r.stderr)
	}
	v2 := defaultVersion(t, d)
	if v2 == v1 || !strings.HasPrefix(r.stdout, v2+" published") {
		t.Fatalf("default is %s after publishing (v1 %s): %s", v2, v1, r.stdout)
	}
	if again := runCLI(t, env, "", "agents", "publish", writeVersionFile(t, 2)); again.code != 0 || !strings.Contains(again.stdout, v2+" already published") {
		t.Fatalf("second publish of one file: %d %s %s", again.code, again.stdout, again.stderr)
	}
	if ls := runCLI(t, env, "", "agents", "versions"); ls.code != 0 || !strings.Contains(ls.stdout, v1) || !strings.Contains(ls.stdout, v2) {
		t.Fatalf("versions: %d %s %s", ls.code, ls.stdout, ls.stderr)
	} else if line := lineWith(ls.stdout, v2); !strings.Contains(line, "default") {
		t.Fatalf("versions: v2's line has no default alias: %q", line)
	}
	diff := runCLI(t, env, "", "agents", "diff", v1, v2)
	for _, want := range []string{"agent versioned: changed", `-   "system": "You are version one."`, `+   "system": "You are version two."`, `-       "name": "ability/send_email"`} {
		if diff.code != 0 || !strings.Contains(diff.stdout, want) {
			t.Fatalf("diff lacks %q: %d\n%s%s", want, diff.code, diff.stdout, diff.stderr)
		}
	}
	if os.Getenv("BATON_TEST_DYNAMODB_ENDPOINT") != "" {
		// A redeploy: the same table, v2 as the bundled file.
		d.stop(t)
		d = startVersionsDev(t, args, 2)
		if got := defaultVersion(t, d); got != v2 {
			t.Fatalf("after the redeploy default is %s, want %s", got, v2)
		}
	}

	if r := d.call(t, "POST", "/v1/runs/"+id+"/approvals/"+act, tokAcme, `{"decision":"accept"}`); r.status != 202 {
		t.Fatalf("approve: %d %v", r.status, r.body)
	}
	v = d.waitStatus(t, id)
	res := result(v)
	if v["status"] != "completed" || res["final_content"] != "Answered by version one." || requestSystem(v) != "You are version one." || v["agent_version"] != v1 {
		t.Fatalf("the paused run did not finish on v1: %v", v)
	}
	sent := 0
	for _, x := range res["tool_execution_results"].([]any) {
		x := x.(map[string]any)
		if x["tool_name"] == "ability/send_email" {
			sent++
			if x["result"].(map[string]any)["success"] != true {
				t.Fatalf("the approved call failed: %v", x)
			}
		}
	}
	if sent != 1 {
		t.Fatalf("send_email ran %d times, want once", sent)
	}
	if ev := d.call(t, "GET", "/v1/runs/"+id+"/events", tokAcme, ""); ev.status != 200 {
		t.Fatalf("events: %d", ev.status)
	} else if first := ev.body["events"].([]any)[0].(map[string]any); first["type"] != "run_started" || first["data"].(map[string]any)["agent_version"] != v1 {
		t.Fatalf("run_started: %v", first)
	}

	id2 := start(t, d, `{"agent":"versioned","messages":[{"role":"user","content":"hello"}]}`)
	v = d.waitStatus(t, id2)
	if v["status"] != "completed" || v["agent_version"] != v2 || result(v)["final_content"] != "Answered by version two." || requestSystem(v) != "You are version two." {
		t.Fatalf("a new run is not on v2: %v", v)
	}
	// The agent allows agent_version: a request may pin v1.
	id3 := start(t, d, `{"agent":"versioned","agent_version":"`+v1+`","messages":[{"role":"user","content":"hello"}]}`)
	if v = d.waitStatus(t, id3); v["agent_version"] != v1 || result(v)["final_content"] != "Answered by version one." {
		t.Fatalf("a run pinned to v1: %v", v)
	}
}

func lineWith(s, sub string) string {
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			return l
		}
	}
	return ""
}

// TestCanaryAliasAndRollback: an alias at 30 % over 200 started runs
// sends 30 ± 8 % to the canary, each run recording the version it then
// runs on; rolling the alias back sends the next runs to the old version.
// Bad input is refused with the problem named and nothing stored.
func TestCanaryAliasAndRollback(t *testing.T) {
	d := startVersionsDev(t, versionsArgs(t), 1)
	v1 := defaultVersion(t, d)
	env := cliEnv(t, d, tokAdmin)
	pub := d.call(t, "POST", "/v1/agent-versions", tokAdmin, versionedAgents(2))
	if pub.status != 201 || pub.body["created"] != true {
		t.Fatalf("publish v2: %d %v", pub.status, pub.body)
	}
	v2 := pub.body["id"].(string)
	if r := runCLI(t, env, "", "agents", "alias", "canary", v1); r.code != 0 {
		t.Fatalf("alias canary: %d %s %s", r.code, r.stdout, r.stderr)
	}
	if r := runCLI(t, env, "", "agents", "alias", "canary", v2, "--weight", "30"); r.code != 0 || !strings.Contains(r.stdout, v2+" 30%") || !strings.Contains(r.stdout, v1+" 70%") {
		t.Fatalf("alias canary 30%%: %d %s %s", r.code, r.stdout, r.stderr)
	}

	const n = 200
	ids := map[string]string{}
	onV2 := 0
	for i := range n {
		r := d.call(t, "POST", "/v1/runs", tokAcme, fmt.Sprintf(`{"agent":"versioned","alias":"canary","session_id":"canary-%d","messages":[{"role":"user","content":"hello"}]}`, i))
		if r.status != 202 {
			t.Fatalf("start %d: %d %v", i, r.status, r.body)
		}
		ver := r.body["agent_version"].(string)
		if ver != v1 && ver != v2 {
			t.Fatalf("run on %s", ver)
		}
		if ver == v2 {
			onV2++
		}
		ids[r.body["run_id"].(string)] = ver
	}
	if share := onV2 * 100 / n; share < 22 || share > 38 {
		t.Fatalf("%d of %d runs on the canary (%d%%), want 30 ± 8%%", onV2, n, share)
	}
	t.Logf("%d of %d runs on the canary", onV2, n)
	for id, ver := range ids {
		v := d.waitStatus(t, id)
		want := map[string]string{v1: "Answered by version one.", v2: "Answered by version two."}[ver]
		if v["agent_version"] != ver || result(v)["final_content"] != want {
			t.Fatalf("run %s recorded %s and answered %v", id, ver, result(v)["final_content"])
		}
	}

	// Rollback: the alias back on v1 alone.
	if r := runCLI(t, env, "", "agents", "alias", "canary", v1); r.code != 0 || !strings.Contains(r.stdout, v1+" 100%") {
		t.Fatalf("rollback: %d %s %s", r.code, r.stdout, r.stderr)
	}
	for i := range 20 {
		r := d.call(t, "POST", "/v1/runs", tokAcme, fmt.Sprintf(`{"agent":"versioned","alias":"canary","session_id":"after-%d","messages":[{"role":"user","content":"hello"}]}`, i))
		if r.status != 202 || r.body["agent_version"] != v1 {
			t.Fatalf("after the rollback: %d %v", r.status, r.body)
		}
	}

	// Bad input: each a 4xx naming the problem, nothing stored.
	before := d.call(t, "GET", "/v1/agent-versions", tokAdmin, "")
	bad := []struct {
		method, path, body, code string
		status                   int
	}{
		{"POST", "/v1/agent-versions", `{"agents":[{"slug":"x","model":{"provider":"scripted"},"max_turns":"many"}]}`, "invalid_agents_file", 400},
		{"POST", "/v1/agent-versions", `{"agents":[{"slug":"x","model":{"provider":"scripted"},"tools":[{"name":"ability/x","description":"x","parameters":{"type":"object"},"executor":{"type":"go","handler":"nope"}}]}]}`, "invalid_agents_file", 400},
		{"POST", "/v1/agent-versions", `{"agents":[{"slug":"x","model":{"provider":"scripted"},"guardrails":{"input":[{"type":"regex","pattern":"[a-"}]}}]}`, "invalid_agents_file", 400},
		{"POST", "/v1/agent-versions", `{"agents":[{"slug":"x","model":{"provider":"scripted"},"system":"` + strings.Repeat("a", 360<<10) + `"}]}`, "agents_file_too_large", 413},
		{"PUT", "/v1/agent-aliases/prod", `{"version":"av_0123456789abcdef"}`, "unknown_agent_version", 400},
		{"PUT", "/v1/agent-aliases/prod", `{"routes":[{"version":"` + v1 + `","weight":60},{"version":"` + v2 + `","weight":30}]}`, "invalid_request", 400},
		{"PUT", "/v1/agent-aliases/Prod!", `{"version":"` + v1 + `"}`, "invalid_request", 400},
		{"PUT", "/v1/agent-aliases/canary", `{"version":"` + v2 + `","revision":1}`, "conflict", 409},
		{"POST", "/v1/runs", `{"agent":"versioned","alias":"nosuch","messages":[{"role":"user","content":"x"}]}`, "unknown_agent_version", 400},
	}
	for _, b := range bad {
		tok := tokAdmin
		if b.path == "/v1/runs" {
			tok = tokAcme
		}
		r := d.call(t, b.method, b.path, tok, b.body)
		if r.status != b.status || errCode(r) != b.code {
			t.Fatalf("%s %s: %d %v, want %d %s", b.method, b.path, r.status, r.body, b.status, b.code)
		}
		if b.code == "invalid_agents_file" {
			// Each problem says where it is, as baton agents validate does.
			details, _ := r.body["error"].(map[string]any)["details"].(map[string]any)
			problems, _ := details["problems"].([]any)
			if len(problems) == 0 || problems[0].(map[string]any)["line"] == nil || problems[0].(map[string]any)["path"] == "" {
				t.Fatalf("%s: problems without their place: %v", b.body, r.body)
			}
		}
	}
	after := d.call(t, "GET", "/v1/agent-versions", tokAdmin, "")
	if len(after.body["versions"].([]any)) != len(before.body["versions"].([]any)) {
		t.Fatalf("a refused publish stored a version")
	}
	if r := d.call(t, "GET", "/v1/agent-aliases/prod", tokAdmin, ""); r.status != 404 {
		t.Fatalf("a refused alias was stored: %v", r.body)
	}
	// Scope: a tenant token cannot publish or read versions.
	if r := d.call(t, "GET", "/v1/agent-versions", tokAcme, ""); r.status != 403 {
		t.Fatalf("without agents:manage: %d", r.status)
	}
	// One version with its file; the audit lists each change.
	if r := d.call(t, "GET", "/v1/agent-versions/"+v2, tokAdmin, ""); r.status != 200 || !strings.Contains(mustJSON(r.body["file"]), "You are version two.") {
		t.Fatalf("get version: %d %v", r.status, r.body)
	}
	if r := d.call(t, "GET", "/v1/agent-aliases", tokAdmin, ""); r.status != 200 || len(r.body["aliases"].([]any)) != 2 {
		t.Fatalf("aliases: %d %v", r.status, r.body)
	}
	audit := d.call(t, "GET", "/v1/agent-audit?limit=3", tokAdmin, "")
	entries, _ := audit.body["entries"].([]any)
	if audit.status != 200 || len(entries) != 3 || entries[0].(map[string]any)["alias"] != "canary" || entries[0].(map[string]any)["by"] != "acme/acme" {
		t.Fatalf("audit: %d %v", audit.status, audit.body)
	}
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
