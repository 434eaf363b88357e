//go:build e2e

package tests

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestGuardrailsEndToEnd runs an agent with declarative guardrails over
// baton dev's HTTP API, on each store: the input rule denies a user
// message holding a card number before the model is called (the
// scripted model would have answered, and its usage would show), and
// the output rule redacts an email address in the model's reply before
// it is committed (the transcript, final_content and the events hold the
// mask, never the address).
func TestGuardrailsEndToEnd(t *testing.T) {
	agents := writeAgentsFile(t, map[string]any{"agents": []any{map[string]any{
		"slug": "e2e-guarded", "model": map[string]any{"provider": "scripted"}, "allow_overrides": []any{"model"}, "max_turns": 4,
		"guardrails": map[string]any{
			"input":  []any{map[string]any{"type": "pii", "entities": []any{"card_number"}, "action": "deny"}},
			"output": []any{map[string]any{"type": "pii", "entities": []any{"email"}, "action": "redact"}},
		},
	}}})
	eachStore(t, func(t *testing.T, args []string) { guardrailsEndToEnd(t, withAgentsFile(args, agents)) })
}

func guardrailsEndToEnd(t *testing.T, args []string) {
	d := startDev(t, args)
	run := func(user, reply string) (string, map[string]any) {
		body, _ := json.Marshal(map[string]any{"agent": "e2e-guarded", "messages": []any{map[string]any{"role": "user", "content": user}},
			"model": map[string]any{"provider": "scripted", "turns": []any{map[string]any{"content": reply, "usage": map[string]any{"prompt_tokens": 10, "completion_tokens": 5}}}}})
		id := start(t, d, string(body))
		return id, d.waitStatus(t, id)
	}

	// Input: denied before the model call.
	id, v := run("Charge my card 4111 1111 1111 1111 please.", "Charged.")
	res := result(v)
	if v["status"] != "failed" {
		t.Fatalf("card number: status %v, want failed: %v", v["status"], v)
	}
	e, _ := res["error"].(map[string]any)
	if e["code"] != "guardrail" || e["message"] != "Input guardrail denied: a user message contains card number" {
		t.Fatalf("card number: error %v", res["error"])
	}
	if u := res["usage"].(map[string]any); u["total_tokens"] != 0.0 {
		t.Fatalf("the model was called: usage %v", u)
	}
	var sawError bool
	for _, ev := range res["events"].([]any) {
		ev := ev.(map[string]any)
		data, _ := ev["data"].(map[string]any)
		if ev["type"] == "error" && data["guardrail"] == "input" {
			sawError = true
		}
	}
	if !sawError {
		t.Fatalf("no input guardrail error event among %v", res["events"])
	}
	r := d.call(t, "GET", "/v1/runs/"+id+"/messages?after=0&limit=100", tokAcme, "")
	for _, m := range r.body["messages"].([]any) {
		if m.(map[string]any)["role"] == "assistant" {
			t.Fatalf("a denied run has an assistant message: %v", r.body["messages"])
		}
	}

	// Output: the reply's email address is redacted before the commit.
	id, v = run("Who should I write to?", "Write to ada@example.com today.")
	res = result(v)
	const want = "Write to [REDACTED] today."
	if v["status"] != "completed" || res["final_content"] != want {
		t.Fatalf("email: status %v final_content %q, want completed and %q", v["status"], res["final_content"], want)
	}
	r = d.call(t, "GET", "/v1/runs/"+id+"/messages?after=0&limit=100", tokAcme, "")
	msgs := r.body["messages"].([]any)
	if last := msgs[len(msgs)-1].(map[string]any); last["role"] != "assistant" || last["content"] != want {
		t.Fatalf("committed reply %v", last)
	}
	r = d.call(t, "GET", "/v1/runs/"+id+"/events?after=0&limit=100", tokAcme, "")
	var redacted bool
	for _, ev := range r.body["events"].([]any) {
		ev := ev.(map[string]any)
		if data, _ := ev["data"].(map[string]any); ev["type"] == "guardrail_redacted" && data["guardrail"] == "output" {
			redacted = true
		}
	}
	if !redacted {
		t.Fatalf("no guardrail_redacted event among %v", r.body["events"])
	}
	all, _ := json.Marshal([]any{v, r.body, msgs})
	if strings.Contains(string(all), "ada@example.com") {
		t.Fatalf("the address shows in the run view, events or messages: %s", all)
	}
}
