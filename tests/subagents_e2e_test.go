//go:build e2e

package tests

import (
	"strings"
	"testing"
	"time"
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
			"model":{"provider":"scripted","turns":[
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
		children := v["children"].([]any)
		if len(children) != 3 {
			t.Fatalf("children %v", children)
		}
		childTokens := 0.0
		for _, c := range children {
			c := c.(map[string]any)
			if c["status"] != "completed" || c["agent"] != "researcher" {
				t.Fatalf("child %v", c)
			}
			childTokens += c["usage"].(map[string]any)["total_tokens"].(float64)
			cv := d.call(t, "GET", "/v1/runs/"+c["run_id"].(string), tokAcme, "").body
			if cv["status"] != "completed" {
				t.Fatalf("child run %v", cv)
			}
		}
		// Own: 2 × 12 tokens; children: alpha 35, beta 35 + 46, gamma 35.
		if childTokens != 151 || result(v)["usage"].(map[string]any)["total_tokens"].(float64) != 24+151 {
			t.Fatalf("usage: children %v, parent %v", childTokens, result(v)["usage"])
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
