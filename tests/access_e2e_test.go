//go:build e2e

package tests

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"testing"
)

// writeAccessAgents writes an agents file with a CRM agent: its
// crm/update_contact tool requires the crm:write scope and an approval;
// crm/find_contact is open to every token.
func writeAccessAgents(t *testing.T) string {
	t.Helper()
	echo := map[string]any{"type": "go", "handler": "echo"}
	file := map[string]any{"agents": []any{map[string]any{
		"slug": "e2e-crm", "model": map[string]any{"provider": "scripted"}, "allow_overrides": []any{"model"},
		"tools": []any{
			map[string]any{"name": "crm/update_contact", "source": "crm", "description": "Update a contact.", "executor": echo,
				"action_policy": "preview", "access": map[string]any{"scopes": []any{"crm:write"}}},
			map[string]any{"name": "crm/find_contact", "source": "crm", "description": "Find a contact.", "executor": echo},
		},
	}}}
	return writeAgentsFile(t, file)
}

// TestToolAccessEndToEnd runs baton dev, on each store, with a tool gated
// by the crm:write scope: a run started by a token without the scope
// never offers it to the model and refuses a call to it by name
// (tool_not_found, nothing executed); a run started by a token holding
// the scope (BATON_DEV_TOKENS' +crm:write) offers and runs it, after an
// approval that another token gives and that approval_decided and the
// audit record attribute to that token.
func TestToolAccessEndToEnd(t *testing.T) {
	eachStore(t, func(t *testing.T, args []string) { toolAccessEndToEnd(t, withAgentsFile(args, writeAccessAgents(t))) })
}

func toolAccessEndToEnd(t *testing.T, args []string) {
	d := startDev(t, args)
	const body = `{"agent":"e2e-crm","messages":[{"role":"user","content":"update ann"}],"model":{"provider":"scripted","turns":[
		{"tool_calls":[{"id":"c1","name":"crm/update_contact","parameters":{"who":"ann"}},{"id":"c2","name":"crm/find_contact","parameters":{"who":"ann"}}]},
		{"content":"Done."}]}}`
	startAs := func(token string) string {
		r := d.call(t, "POST", "/v1/runs", token, body)
		if r.status != 202 {
			t.Fatalf("start: %d %v", r.status, r.body)
		}
		return r.body["run_id"].(string)
	}
	eventsOf := func(v map[string]any, typ string) []map[string]any {
		var out []map[string]any
		for _, ev := range result(v)["events"].([]any) {
			if ev := ev.(map[string]any); ev["type"] == typ {
				out = append(out, ev["data"].(map[string]any))
			}
		}
		return out
	}
	offered := func(v map[string]any) string { return fmt.Sprint(eventsOf(v, "run_started")[0]["tools"]) }

	t.Run("without the scope the tool is hidden", func(t *testing.T) {
		v := d.waitStatus(t, startAs(tokAcme))
		if v["status"] != "completed" {
			t.Fatalf("%v", v)
		}
		if got := offered(v); strings.Contains(got, "crm/update_contact") || !strings.Contains(got, "crm/find_contact") {
			t.Errorf("tools offered to the model: %s", got)
		}
		results := result(v)["tool_execution_results"].([]any)
		gated := results[0].(map[string]any)["result"].(map[string]any)
		if gated["success"] != false || gated["error_type"] != "tool_not_found" {
			t.Errorf("call to the hidden tool: %v", gated)
		}
		if open := results[1].(map[string]any)["result"].(map[string]any); open["success"] != true {
			t.Errorf("call to the open tool: %v", open)
		}
		if len(eventsOf(v, "approval_required")) != 0 {
			t.Error("the hidden tool asked for an approval")
		}
	})

	t.Run("with the scope the tool runs; the approver is recorded", func(t *testing.T) {
		id := startAs(tokAcmeCRM)
		v := d.waitStatus(t, id)
		if v["status"] != "approval_required" {
			t.Fatalf("%v", v)
		}
		if got := offered(v); !strings.Contains(got, "crm/update_contact") {
			t.Errorf("tools offered to the model: %s", got)
		}
		act := pending(v, "actions", "action_id")
		if r := d.call(t, "POST", "/v1/runs/"+id+"/approvals/"+act, tokAcme, `{"decision":"accept"}`); r.status != 202 {
			t.Fatalf("approve: %d %v", r.status, r.body)
		}
		v = d.waitStatus(t, id)
		if v["status"] != "completed" {
			t.Fatalf("%v", v)
		}
		results := result(v)["tool_execution_results"].([]any)
		if gated := results[0].(map[string]any)["result"].(map[string]any); gated["success"] != true {
			t.Errorf("call to the gated tool: %v", gated)
		}
		sum := sha256.Sum256([]byte(tokAcme))
		want := fmt.Sprint(map[string]any{"tenant": "acme", "actor_id": "acme", "auth_source": "bearer_token", "request_context": "rest",
			"token_id": hex.EncodeToString(sum[:])[:16]})
		decided := eventsOf(v, "approval_decided")
		if len(decided) != 1 || decided[0]["decision"] != "accept" || fmt.Sprint(decided[0]["resolver"]) != want {
			t.Errorf("approval_decided: %v, want resolver %s", decided, want)
		}
		audit := result(v)["tool_audit_events"].([]any)[0].(map[string]any)
		if approval, _ := audit["approval"].(map[string]any); approval["decision"] != "accept" || fmt.Sprint(approval["resolver"]) != want {
			t.Errorf("audit approval: %v, want resolver %s", audit["approval"], want)
		}
	})
}
