//go:build e2e

package tests

import (
	"encoding/json"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/baton-agents/baton/toolsig"
)

// TestSubAgentsEndToEnd: on each store, a planner fans out to three
// researcher child runs in parallel (agent/researcher); the beta child's
// email needs an approval, decided on the child's route; each child is
// created once, the parent waits for them, reads their answers in call
// order and completes, and its usage is its own plus its children's.
func TestSubAgentsEndToEnd(t *testing.T) {
	eachStore(t, func(t *testing.T, args []string) {
		d := startDev(t, args)
		id := start(t, d, `{"agent":"planner","messages":[{"role":"user","content":"Research alpha, beta and gamma."}],"parallel_tool_calls":true,
			"model":{"provider":"scripted","options":{"echo_request":true},"turns":[
			{"content":"Asking three researchers.","usage":{"prompt_tokens":10,"completion_tokens":2},"tool_calls":[
				{"id":"c1","name":"agent/researcher","parameters":{"task":"Research alpha."}},
				{"id":"c2","name":"agent/researcher","parameters":{"task":"Research beta.","context":"Mail beta@example.com first."}},
				{"id":"c3","name":"agent/researcher","parameters":{"task":"Research gamma."}}]},
			{"content":"All three researchers answered.","usage":{"prompt_tokens":10,"completion_tokens":2}}]}}`)

		// The beta child pauses for its approval; the parent waits.
		var beta string
		deadline := time.Now().Add(30 * time.Second)
		for beta == "" {
			v := d.call(t, "GET", "/v1/runs/"+id, tokAcme, "").body
			children, _ := v["children"].([]any)
			for _, c := range children {
				c := c.(map[string]any)
				if c["tool_call_id"] == "c2" {
					if cv := d.call(t, "GET", "/v1/runs/"+c["run_id"].(string), tokAcme, "").body; cv["status"] == "approval_required" {
						beta = c["run_id"].(string)
					}
				}
			}
			if time.Now().After(deadline) {
				t.Fatalf("the beta child never waited for its approval: %v", v)
			}
			time.Sleep(100 * time.Millisecond)
		}
		// The children run side by side: gamma, called after beta, ends
		// while beta waits.
		deadline = time.Now().Add(30 * time.Second)
		for {
			v := d.call(t, "GET", "/v1/runs/"+id, tokAcme, "").body
			if v["status"] != "running" {
				t.Fatalf("the parent while its child waits: %v", v["status"])
			}
			children, _ := v["children"].([]any)
			if len(children) == 3 && children[2].(map[string]any)["status"] == "completed" {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("the gamma child did not finish while beta waited: %v", children)
			}
			time.Sleep(100 * time.Millisecond)
		}
		// The parent's pending lists the child's approval, with the
		// child's run id; it is decided on the parent's route, and the
		// first decision wins over a later one on the child's.
		pv := d.call(t, "GET", "/v1/runs/"+id, tokAcme, "").body
		acts := pv["pending"].(map[string]any)["actions"].([]any)
		if len(acts) != 1 || acts[0].(map[string]any)["run_id"] != beta || acts[0].(map[string]any)["tool_name"] != "ability/send_email" {
			t.Fatalf("the parent's pending: %v", pv["pending"])
		}
		act := acts[0].(map[string]any)["action_id"].(string)
		// The CLI shows the child's approval on the parent.
		if r := runCLI(t, cliEnv(t, d, tokAcme), "", "runs", "show", id); r.code != 0 || !strings.Contains(r.stdout, "approval of ability/send_email of child run "+beta+", action "+act) {
			t.Fatalf("runs show of the waiting parent: %+v", r)
		}
		if r := d.call(t, "POST", "/v1/runs/"+id+"/approvals/"+act, tokAcme, `{"decision":"accept"}`); r.status != 202 {
			t.Fatalf("approve the child's email on the parent's route: %d %v", r.status, r.body)
		}
		if r := d.call(t, "POST", "/v1/runs/"+beta+"/approvals/"+act, tokAcme, `{"decision":"reject"}`); r.status != 409 {
			t.Fatalf("a second decision on the child's route: %d %v", r.status, r.body)
		}
		if r := d.call(t, "POST", "/v1/runs/"+id+"/approvals/"+act, tokAcme, `{"decision":"reject"}`); r.status != 409 {
			t.Fatalf("a second decision on the parent's route: %d %v", r.status, r.body)
		}

		v := d.waitStatus(t, id)
		if v["status"] != "completed" || result(v)["final_content"] != "All three researchers answered." {
			t.Fatalf("parent: %v", v)
		}
		var results []string
		for _, m := range result(v)["messages"].([]any) {
			if m := m.(map[string]any); m["role"] == "tool_result" {
				results = append(results, m["content"].(string))
			}
		}
		want := []string{"Alpha: found.", "Beta: found after approval.", "Gamma: found."}
		if len(results) != 3 {
			t.Fatalf("tool results %q", results)
		}
		for i, w := range want {
			if !strings.Contains(results[i], w) {
				t.Fatalf("result %d = %q, want %q (call order)", i, results[i], w)
			}
		}
		// The planner's final turn was given the three answers in call
		// order (the scripted model echoes what it was sent).
		var seen []string
		for _, m := range result(v)["request_metadata"].(map[string]any)["request_messages"].([]any) {
			if m := m.(map[string]any); m["role"] == "tool_result" {
				seen = append(seen, m["content"].(string))
			}
		}
		if len(seen) != 3 || !strings.Contains(seen[0], "Alpha") || !strings.Contains(seen[1], "Beta") || !strings.Contains(seen[2], "Gamma") {
			t.Fatalf("the planner's last turn saw %q", seen)
		}
		children := v["children"].([]any)
		if len(children) != 3 {
			t.Fatalf("children %v", children)
		}
		childTokens, childCost := 0.0, 0.0
		for _, c := range children {
			c := c.(map[string]any)
			if c["status"] != "completed" || c["agent"] != "researcher" {
				t.Fatalf("child %v", c)
			}
			childTokens += c["usage"].(map[string]any)["total_tokens"].(float64)
			childCost += c["cost"].(map[string]any)["total_usd"].(float64)
			cv := d.call(t, "GET", "/v1/runs/"+c["run_id"].(string), tokAcme, "").body
			if cv["status"] != "completed" {
				t.Fatalf("child run %v", cv)
			}
		}
		// The parent's cost is its own (its steps' AWS requests, metered
		// on the emulators; the embedded stores count none) and its
		// children's, each listed.
		own := result(v)["cost"].(map[string]any)["total_usd"].(float64) - childCost
		if own < 0 || strings.HasSuffix(t.Name(), "/emulators") && (childCost <= 0 || own <= 0) {
			t.Fatalf("cost: parent %v, children %v", result(v)["cost"], childCost)
		}
		// Own: 2 × 12 tokens; children: alpha 35, beta 35 + 46, gamma 35.
		if childTokens != 151 || result(v)["usage"].(map[string]any)["total_tokens"].(float64) != 24+151 {
			t.Fatalf("usage: children %v, parent %v", childTokens, result(v)["usage"])
		}
		// The CLI lists the children with their status and usage.
		if r := runCLI(t, cliEnv(t, d, tokAcme), "", "runs", "show", id); r.code != 0 || strings.Count(r.stdout, "child: r-") != 3 ||
			!strings.Contains(r.stdout, beta+" completed for call c2 · agent researcher · usage:") {
			t.Fatalf("runs show of the parent: %+v", r)
		}

		// children=1 adds the children's events, each with its run_id
		// and without an id (the stream's cursor stays the parent's).
		evs := readAll(t, openStreamQuery(t, d, id, "children=1", ""))
		if endStatus(t, evs) != "completed" {
			t.Fatalf("the tree's stream did not end with the completed parent")
		}
		done := map[string]bool{}
		approvals := 0
		for _, ev := range evs {
			var e map[string]any
			_ = json.Unmarshal([]byte(ev.Data), &e)
			rid, _ := e["run_id"].(string)
			if rid == "" || ev.Event == "end" {
				continue
			}
			if ev.ID != "" {
				t.Fatalf("a child's event carries an id: %+v", ev)
			}
			if ev.Event == "done" {
				done[rid] = true
			}
			if ev.Event == "approval_required" && rid == beta {
				approvals++
			}
		}
		if len(done) != 3 || approvals != 1 {
			t.Fatalf("children's done events %v, beta's approval_required %d", done, approvals)
		}

		// The tree is the tenant's alone.
		if r := d.call(t, "GET", "/v1/runs/"+beta, tokGlobex, ""); r.status != 404 {
			t.Fatalf("another tenant reads a child: %d", r.status)
		}

		// Cancelling a parent cancels its running child, whose open call
		// gets a result (a valid transcript).
		id = start(t, d, `{"agent":"planner","messages":[{"role":"user","content":"Research beta."}],
			"model":{"provider":"scripted","turns":[{"tool_calls":[{"id":"c1","name":"agent/researcher","parameters":{"task":"Research beta."}}]},{"content":"Never."}]}}`)
		child := waitChild(t, d, id, "approval_required")
		if r := d.call(t, "POST", "/v1/runs/"+id+"/cancel", tokAcme, `{"reason":"enough"}`); r.status/100 != 2 || r.body["status"] != "cancelled" {
			t.Fatalf("cancel the parent: %d %v", r.status, r.body)
		}
		cv := d.waitStatus(t, child)
		if cv["status"] != "cancelled" {
			t.Fatalf("the child after its parent's cancel: %v", cv["status"])
		}
		roles := map[string]int{}
		for _, m := range result(cv)["messages"].([]any) {
			roles[m.(map[string]any)["role"].(string)]++
		}
		if roles["tool_call"] != 1 || roles["tool_result"] != 1 {
			t.Fatalf("the cancelled child's transcript: %v", roles)
		}
	})
}

// waitChild waits until run id's first child run has status and returns
// the child's id.
func waitChild(t *testing.T, d *dev, id, status string) string {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		v := d.call(t, "GET", "/v1/runs/"+id, tokAcme, "").body
		if children, _ := v["children"].([]any); len(children) > 0 {
			c := children[0].(map[string]any)["run_id"].(string)
			if cv := d.call(t, "GET", "/v1/runs/"+c, tokAcme, "").body; cv["status"] == status {
				return c
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("run %s has no child in status %s: %v", id, status, v)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestSubAgentsSurviveCrashes: on the emulators, baton dev is killed
// (SIGKILL) once the planner's first child exists and again while the
// children's tools run, then started again: exactly three children exist,
// each child's tool (slow, over http) took effect exactly once, and the
// planner completes. The tool is retry_safe and, as docs/tools.md asks of
// such a tool, applies an Idempotency-Key's effect once: a request the
// kill interrupted is sent again with the same key. (A tool that is not
// retry_safe is never sent twice; its interrupted call is in_doubt:
// internal/durable's tests.)
func TestSubAgentsSurviveCrashes(t *testing.T) {
	if os.Getenv("BATON_TEST_DYNAMODB_ENDPOINT") == "" || os.Getenv("BATON_E2E_BASE_URL") != "" {
		t.Skip("needs baton dev on the emulators: embedded stores do not survive a crash by design")
	}
	secret := "e2e-subagent-tool-secret-" + randomSuffix() + randomSuffix()
	const env = "BATON_E2E_LOOKUP_SECRET"
	t.Setenv(env, secret)
	// The tool's effect is applied once per Idempotency-Key (effects);
	// requests counts what arrived, repeats included.
	var mu sync.Mutex
	effects, requests := map[string]int{}, map[string]int{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		if err := toolsig.Verify([]byte(secret), r.Header.Get(toolsig.HeaderTimestamp), r.Header.Get(toolsig.HeaderSignature), raw, time.Now()); err != nil {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		key := r.Header.Get("Idempotency-Key")
		mu.Lock()
		requests[key]++
		if requests[key] == 1 {
			effects[key]++
		}
		mu.Unlock()
		time.Sleep(1500 * time.Millisecond) // long enough to be killed in
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"success":true,"result":{"found":"yes"}}`)
	}))
	t.Cleanup(srv.Close)
	lookups := func() map[string]int {
		mu.Lock()
		defer mu.Unlock()
		return maps.Clone(effects)
	}
	file := writeAgentsFile(t, map[string]any{"agents": []any{
		map[string]any{"slug": "planner", "model": map[string]any{"provider": "scripted"}, "allow_overrides": []any{"model", "parallel_tool_calls"},
			"tools": []any{map[string]any{"name": "agent/researcher", "description": "Ask a researcher.", "executor": map[string]any{"type": "agent", "agent": "researcher"}}}},
		map[string]any{"slug": "researcher", "model": map[string]any{"provider": "scripted", "turns": []any{
			map[string]any{"tool_calls": []any{map[string]any{"id": "look", "name": "lab/lookup", "parameters": map[string]any{}}}},
			map[string]any{"content": "Looked it up."}}},
			"tools": []any{map[string]any{"name": "lab/lookup", "source": "lab", "description": "Look something up (slowly).",
				"runtime":  map[string]any{"retry_safe": true},
				"executor": map[string]any{"type": "http", "url": srv.URL + "/lookup", "secret_env": env, "timeout": "10s"}}}},
	}})
	args := withAgentsFile(devArgs(t), file)
	d := startDev(t, args)
	id := start(t, d, `{"agent":"planner","messages":[{"role":"user","content":"Research three things."}],"parallel_tool_calls":true,
		"model":{"provider":"scripted","turns":[{"tool_calls":[
			{"id":"c1","name":"agent/researcher","parameters":{"task":"one"}},
			{"id":"c2","name":"agent/researcher","parameters":{"task":"two"}},
			{"id":"c3","name":"agent/researcher","parameters":{"task":"three"}}]},
			{"content":"Three answers."}]}}`)
	crash := func(what string, ready func() bool) {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for !ready() {
			if time.Now().After(deadline) {
				t.Fatalf("never %s", what)
			}
			time.Sleep(20 * time.Millisecond)
		}
		if err := d.cmd.Process.Kill(); err != nil {
			t.Fatal(err)
		}
		_ = d.cmd.Wait()
		d = startDev(t, args)
	}
	crash("a first child", func() bool {
		children, _ := d.call(t, "GET", "/v1/runs/"+id, tokAcme, "").body["children"].([]any)
		return len(children) > 0
	})
	crash("a child's tool running", func() bool { return len(lookups()) > 0 })

	deadline := time.Now().Add(3 * time.Minute)
	var v map[string]any
	for {
		v = d.call(t, "GET", "/v1/runs/"+id+"?wait=5", tokAcme, "").body
		if v["status"] == "completed" || time.Now().After(deadline) {
			break
		}
	}
	if v["status"] != "completed" || result(v)["final_content"] != "Three answers." {
		t.Fatalf("the planner after two crashes: %v", v)
	}
	children := v["children"].([]any)
	runs := d.call(t, "GET", "/v1/runs?limit=100", tokAcme, "").body["runs"].([]any)
	if len(children) != 3 || len(runs) != 4 {
		t.Fatalf("%d children and %d runs, want 3 and 4 (the planner and its children)", len(children), len(runs))
	}
	// Each child's tool took effect exactly once (and answered: no
	// child's result is in doubt), and no request came from elsewhere.
	got := lookups()
	keys := map[string]bool{}
	for _, c := range children {
		c := c.(map[string]any)
		key := c["run_id"].(string) + ":look"
		keys[key] = true
		if got[key] != 1 {
			t.Errorf("child %s: its tool took effect %d times, want once (all: %v)", c["run_id"], got[key], got)
		}
		cv := d.call(t, "GET", "/v1/runs/"+c["run_id"].(string), tokAcme, "").body
		if cv["status"] != "completed" {
			t.Errorf("child %s: %v", c["run_id"], cv["status"])
		}
		for _, r := range result(cv)["tool_execution_results"].([]any) {
			if r := r.(map[string]any)["result"].(map[string]any); r["success"] != true {
				t.Errorf("child %s: tool result %v", c["run_id"], r)
			}
		}
	}
	for key := range got {
		if !keys[key] {
			t.Errorf("a tool call of no child: %s (all: %v)", key, got)
		}
	}
	mu.Lock()
	t.Logf("requests per call, repeats after a kill included: %v", requests)
	mu.Unlock()
}

// TestSubAgentsDepthEndToEnd: an agent that calls itself stops at its
// max_depth (2): the run two levels down gets a depth_exceeded result,
// and every level completes.
func TestSubAgentsDepthEndToEnd(t *testing.T) {
	d := startDev(t, devArgs(t))
	id := start(t, d, `{"agent":"deep","messages":[{"role":"user","content":"Go deep."}]}`)
	if v := d.waitStatus(t, id); v["status"] != "completed" {
		t.Fatalf("top: %v", v["status"])
	}
	run := id
	for depth := 1; depth <= 2; depth++ {
		v := d.call(t, "GET", "/v1/runs/"+run, tokAcme, "").body
		children, _ := v["children"].([]any)
		if len(children) != 1 {
			t.Fatalf("depth %d: children %v", depth-1, v["children"])
		}
		run = children[0].(map[string]any)["run_id"].(string)
		if cv := d.waitStatus(t, run); cv["status"] != "completed" {
			t.Fatalf("depth %d: %v", depth, cv["status"])
		}
	}
	v := d.call(t, "GET", "/v1/runs/"+run, tokAcme, "").body
	results := result(v)["tool_execution_results"].([]any)
	if len(results) != 1 || results[0].(map[string]any)["result"].(map[string]any)["error_type"] != "depth_exceeded" || v["children"] != nil {
		t.Fatalf("depth 2: results %v, children %v", results, v["children"])
	}
}

// TestHandoffEndToEnd: on each store, the front desk hands the run to
// billing, which answers with its own tool; the run view names billing
// as the agent and the events record the handoff.
func TestHandoffEndToEnd(t *testing.T) {
	eachStore(t, func(t *testing.T, args []string) {
		d := startDev(t, args)
		id := start(t, d, `{"agent":"support","messages":[{"role":"user","content":"I was charged twice for o-1."}],
			"model":{"provider":"scripted","turns":[{"content":"Billing handles that.","tool_calls":[{"id":"h1","name":"handoff/billing","parameters":{"reason":"a double charge"}}]}]}}`)
		v := d.waitStatus(t, id)
		if v["status"] != "completed" || v["agent"] != "billing" || result(v)["final_content"] != "Refunded order o-1." {
			t.Fatalf("after the handoff: %v %v %v", v["status"], v["agent"], result(v)["final_content"])
		}
		var handoff map[string]any
		for _, e := range result(v)["events"].([]any) {
			if e := e.(map[string]any); e["type"] == "agent_handoff" {
				handoff = e["data"].(map[string]any)
			}
		}
		if handoff["from"] != "support" || handoff["to"] != "billing" || handoff["tool_call_id"] != "h1" {
			t.Fatalf("agent_handoff %v", handoff)
		}
		var refunded bool
		for _, r := range result(v)["tool_execution_results"].([]any) {
			r := r.(map[string]any)
			refunded = refunded || (r["tool_name"] == "billing/refund" && r["result"].(map[string]any)["success"] == true)
		}
		if !refunded {
			t.Fatalf("billing's tool did not run: %v", result(v)["tool_execution_results"])
		}
	})
}

// TestSubAgentsCancelAWideTree: on each store, a planner with six
// children waiting for approvals is cancelled: the cancel lands (its
// commit carries one stop per running child besides its notifications)
// and every child ends cancelled.
func TestSubAgentsCancelAWideTree(t *testing.T) {
	eachStore(t, func(t *testing.T, args []string) {
		d := startDev(t, args)
		var calls []string
		for i := range 6 {
			calls = append(calls, `{"id":"c`+string(rune('1'+i))+`","name":"agent/researcher","parameters":{"task":"Research beta."}}`)
		}
		id := start(t, d, `{"agent":"planner","messages":[{"role":"user","content":"Research beta six times."}],"parallel_tool_calls":true,
			"model":{"provider":"scripted","turns":[{"tool_calls":[`+strings.Join(calls, ",")+`]},{"content":"Never."}]}}`)
		deadline := time.Now().Add(30 * time.Second)
		for {
			v := d.call(t, "GET", "/v1/runs/"+id, tokAcme, "").body
			if p, _ := v["pending"].(map[string]any); p != nil {
				if acts, _ := p["actions"].([]any); len(acts) == 6 {
					break
				}
			}
			if time.Now().After(deadline) {
				t.Fatalf("the six children never all waited: %v", v["pending"])
			}
			time.Sleep(100 * time.Millisecond)
		}
		if r := d.call(t, "POST", "/v1/runs/"+id+"/cancel", tokAcme, `{"reason":"enough"}`); r.status/100 != 2 || r.body["status"] != "cancelled" {
			t.Fatalf("cancel the parent of six: %d %v", r.status, r.body)
		}
		children := d.call(t, "GET", "/v1/runs/"+id, tokAcme, "").body["children"].([]any)
		if len(children) != 6 {
			t.Fatalf("children %v", children)
		}
		for _, c := range children {
			if cv := d.waitStatus(t, c.(map[string]any)["run_id"].(string)); cv["status"] != "cancelled" {
				t.Fatalf("child %v after its parent's cancel: %v", c, cv["status"])
			}
		}
	})
}
