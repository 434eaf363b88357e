//go:build e2e

package tests

import (
	"fmt"
	"strings"
	"testing"
)

// mailTool is the agents-file declaration of mail/send, an http tool
// served at url+"/send" (newHTTPTool counts its requests) and signed with
// the secret in env: the side effect a fork must not repeat.
func mailTool(url, env string) map[string]any {
	return map[string]any{
		"name": "mail/send", "source": "mail", "description": "Send an email.",
		"parameters": map[string]any{"type": "object", "required": []any{"sku"},
			"properties": map[string]any{"sku": map[string]any{"type": "string", "description": "The recipient."}}},
		"executor": map[string]any{"type": "http", "url": url + "/send", "secret_env": env, "timeout": "10s"},
	}
}

// forkBody is a fork request body.
func forkBody(seq int, extra string) string {
	b := fmt.Sprintf(`{"seq":%d`, seq)
	if extra != "" {
		b += "," + extra
	}
	return b + "}"
}

// fork forks run id and waits for the fork to settle.
func (d *dev) fork(t *testing.T, id, body string, hdr ...string) map[string]any {
	t.Helper()
	r := d.call(t, "POST", "/v1/runs/"+id+"/fork", tokAcme, body, hdr...)
	if r.status != 202 {
		t.Fatalf("fork %s %s: %d %v", id, body, r.status, r.body)
	}
	f, _ := r.body["forked_from"].(map[string]any)
	if f["run_id"] != id || r.body["session_id"] == "" {
		t.Fatalf("fork answer %v", r.body)
	}
	return d.waitStatus(t, r.body["run_id"].(string))
}

// forkResults are a run view's tool_result messages.
func forkResults(v map[string]any) []map[string]any {
	var out []map[string]any
	for _, m := range result(v)["messages"].([]any) {
		m := m.(map[string]any)
		if m["role"] == "tool_result" {
			out = append(out, m)
		}
	}
	return out
}

// TestForkNeverRepeatsASideEffect, on each store: a run that emailed
// (an http tool whose receiver counts requests) is forked at its user
// message. In reuse mode with the same script the email is not sent
// again, the fork completes and its transcript, events and envelope mark
// the call replayed; in live mode it is sent once more; in replay mode a
// call the source never made gets not_recorded and nothing is sent. A
// fork of a fork of a fork works, a retried fork (Idempotency-Key) is one
// fork, bad fork points are 400s naming the valid ones, and another
// tenant can neither fork nor compare the run.
func TestForkNeverRepeatsASideEffect(t *testing.T) {
	secret := "e2e-mail-secret-" + randomSuffix() + randomSuffix()
	const env = "BATON_E2E_MAIL_SECRET"
	t.Setenv(env, secret)
	eachStore(t, func(t *testing.T, args []string) {
		mail := newHTTPTool(t, secret)
		file := writeAgentsFile(t, map[string]any{"agents": []any{map[string]any{
			"slug": "mailer", "model": map[string]any{"provider": "scripted"}, "allow_overrides": []any{"model"},
			"tools": []any{mailTool(mail.srv.URL, env)},
		}}})
		d := startDev(t, withAgentsFile(args, file))
		const script = `"model":{"provider":"scripted","turns":[
			{"content":"Mailing Ann.","tool_calls":[{"id":"m1","name":"mail/send","parameters":{"sku":"ann@example.com"}}]},
			{"content":"Ann has her email."}]}`
		src := start(t, d, `{"agent":"mailer","messages":[{"role":"user","content":"Email Ann."}],`+script+`}`)
		if v := d.waitStatus(t, src); v["status"] != "completed" {
			t.Fatalf("source: %v", v)
		}
		sent := func() int { calls, _ := mail.snapshot(); return len(calls) }
		if sent() != 1 {
			t.Fatalf("the source sent %d emails", sent())
		}

		// reuse: the same call gets the recorded result.
		re := d.fork(t, src, forkBody(1, script[:len(script)]))
		if re["status"] != "completed" || result(re)["final_content"] != "Ann has her email." || sent() != 1 {
			t.Fatalf("reuse fork: %d emails sent, %v", sent(), re)
		}
		trs := forkResults(re)
		if len(trs) != 1 || trs[0]["metadata"].(map[string]any)["replayed"] != true {
			t.Fatalf("reuse fork's results %v", trs)
		}
		from := trs[0]["metadata"].(map[string]any)["replayed_from"].(map[string]any)
		if from["run_id"] != src || from["seq"] != float64(4) {
			t.Fatalf("replayed_from %v, want message 4 of %s", from, src)
		}
		if recs := result(re)["tool_execution_results"].([]any); len(recs) != 1 || recs[0].(map[string]any)["replayed_from"] == nil {
			t.Fatalf("envelope records %v", recs)
		}
		replayedEvent := false
		for _, ev := range result(re)["events"].([]any) {
			ev := ev.(map[string]any)
			if ev["type"] == "tool_result" && ev["data"].(map[string]any)["replayed"] == true {
				replayedEvent = true
			}
			if ev["type"] == "run_forked" && ev["data"].(map[string]any)["forked_from"].(map[string]any)["tools"] != "reuse" {
				t.Errorf("run_forked %v", ev)
			}
		}
		if !replayedEvent {
			t.Error("no replayed tool_result event")
		}
		// The fork's transcript: the source's user message (shared),
		// then its own, in order.
		msgs := d.call(t, "GET", "/v1/runs/"+re["run_id"].(string)+"/messages?limit=2", tokAcme, "")
		page := msgs.body["messages"].([]any)
		if msgs.status != 200 || len(page) != 2 || page[0].(map[string]any)["seq"] != float64(1) || page[0].(map[string]any)["content"] != "Email Ann." ||
			page[1].(map[string]any)["seq"] != float64(2) || page[1].(map[string]any)["role"] != "assistant" {
			t.Fatalf("fork's transcript page %d %v", msgs.status, msgs.body)
		}

		// live: everything runs again.
		live := d.fork(t, src, forkBody(1, `"tools":"live",`+script))
		if live["status"] != "completed" || sent() != 2 {
			t.Fatalf("live fork: %d emails sent, %v", sent(), live)
		}
		if m := forkResults(live)[0]["metadata"].(map[string]any); m["replayed"] != nil {
			t.Fatalf("live fork replayed: %v", m)
		}

		// replay: a new call is not recorded, and nothing is sent.
		rp := d.fork(t, src, forkBody(1, `"tools":"replay","model":{"provider":"scripted","turns":[
			{"tool_calls":[{"id":"m1","name":"mail/send","parameters":{"sku":"ann@example.com"}},{"id":"m2","name":"mail/send","parameters":{"sku":"bob@example.com"}}]},
			{"content":"Done."}]}`))
		trs = forkResults(rp)
		if rp["status"] != "completed" || sent() != 2 || len(trs) != 2 || trs[0]["metadata"].(map[string]any)["replayed"] != true ||
			trs[1]["metadata"].(map[string]any)["error_type"] != "not_recorded" {
			t.Fatalf("replay fork: %d sent, results %v", sent(), trs)
		}

		// compare: the live fork and the source differ first at the
		// tool result (another send, another answer).
		c := d.call(t, "GET", "/v1/runs/"+src+"/compare/"+rp["run_id"].(string), tokAcme, "")
		if c.status != 200 {
			t.Fatalf("compare: %d %v", c.status, c.body)
		}
		div := c.body["diverged_at"].(map[string]any)
		if div["seq"] != float64(2) || !strings.Contains(fmt.Sprint(div["a"]), "Mailing Ann.") {
			t.Fatalf("diverged_at %v", div)
		}
		calls := c.body["b"].(map[string]any)["tool_calls"].([]any)
		if len(calls) != 2 || calls[0].(map[string]any)["outcome"] != "replayed" || calls[1].(map[string]any)["outcome"] != "not_recorded" ||
			c.body["a"].(map[string]any)["tool_calls"].([]any)[0].(map[string]any)["outcome"] != "executed" {
			t.Fatalf("compare tool calls a %v b %v", c.body["a"], calls)
		}
		if same := d.call(t, "GET", "/v1/runs/"+src+"/compare/"+src, tokAcme, ""); same.status != 200 || same.body["diverged_at"] != nil {
			t.Fatalf("a run compared with itself: %v", same.body)
		}

		// A fork of a fork of a fork, each reusing what the one before
		// recorded (a replayed result is a record too).
		prev := re
		for i := 0; i < 2; i++ {
			next := d.fork(t, prev["run_id"].(string), forkBody(1, script))
			if next["status"] != "completed" || forkResults(next)[0]["metadata"].(map[string]any)["replayed"] != true {
				t.Fatalf("fork %d of the chain: %v", i+2, next)
			}
			prev = next
		}
		if sent() != 2 {
			t.Fatalf("the chain of forks sent %d emails in all, want 2", sent())
		}
		// Forking at the assistant answer with a new one completes at once.
		ans := d.fork(t, src, forkBody(5, `"content":"Ann was emailed yesterday."`))
		if ans["status"] != "completed" || result(ans)["final_content"] != "Ann was emailed yesterday." {
			t.Fatalf("answer fork: %v", ans)
		}
		// The forks of the source are listed.
		list := d.call(t, "GET", "/v1/runs?forked_from="+src, tokAcme, "")
		if n := len(list.body["runs"].([]any)); list.status != 200 || n != 4 {
			t.Fatalf("forks of %s: %d listed (%d), want 4", src, n, list.status)
		}

		// A retried fork is one fork.
		key := []string{"Idempotency-Key", "fork-" + randomSuffix()}
		a := d.call(t, "POST", "/v1/runs/"+src+"/fork", tokAcme, forkBody(1, script), key...)
		b := d.call(t, "POST", "/v1/runs/"+src+"/fork", tokAcme, forkBody(1, script), key...)
		if a.status != 202 || b.status != 202 || a.body["run_id"] != b.body["run_id"] || b.header.Get("Idempotent-Replayed") != "true" {
			t.Fatalf("retried fork: %d %v / %d %v", a.status, a.body["run_id"], b.status, b.body["run_id"])
		}
		d.waitStatus(t, a.body["run_id"].(string))

		// Bad fork points name the valid ones; nothing is created.
		for _, tc := range []struct{ body, code, why string }{
			{forkBody(3, ""), "invalid_fork_point", "a tool_call message"},
			{forkBody(99, ""), "invalid_fork_point", "outside the transcript"},
			{forkBody(0, ""), "invalid_fork_point", "seq 0"},
			{`{}`, "invalid_request", "no seq"},
			{forkBody(1, `"tools":"sometimes"`), "invalid_request", "an unknown tool mode"},
			{forkBody(1, `"surprise":true`), "unknown_field", "an unknown field"},
		} {
			r := d.call(t, "POST", "/v1/runs/"+src+"/fork", tokAcme, tc.body)
			if r.status != 400 || errCode(r) != tc.code {
				t.Fatalf("%s: %d %v", tc.why, r.status, r.body)
			}
			if tc.code == "invalid_fork_point" {
				valid := r.body["error"].(map[string]any)["details"].(map[string]any)["valid"].([]any)
				if fmt.Sprint(valid) != "[map[role:user seq:1] map[role:assistant seq:2] map[role:assistant seq:5]]" {
					t.Fatalf("%s: valid points %v", tc.why, valid)
				}
			}
		}
		if n := len(d.call(t, "GET", "/v1/runs?forked_from="+src, tokAcme, "").body["runs"].([]any)); n != 5 {
			t.Fatalf("after the refused forks: %d forks, want 5", n)
		}

		// Another tenant: 404 for the fork and the comparison, nothing
		// created.
		if r := d.call(t, "POST", "/v1/runs/"+src+"/fork", tokGlobex, forkBody(1, "")); r.status != 404 || errCode(r) != "not_found" {
			t.Fatalf("cross-tenant fork: %d %v", r.status, r.body)
		}
		other := d.call(t, "POST", "/v1/runs", tokGlobex, `{"agent":"mailer","messages":[{"role":"user","content":"hi"}],"model":{"provider":"scripted","turns":[{"content":"hello"}]}}`)
		if other.status != 202 {
			t.Fatalf("globex run: %v", other.body)
		}
		for _, path := range []string{"/v1/runs/" + src + "/compare/" + other.body["run_id"].(string), "/v1/runs/" + other.body["run_id"].(string) + "/compare/" + src} {
			for _, tok := range []string{tokAcme, tokGlobex} {
				if r := d.call(t, "GET", path, tok, ""); r.status != 404 {
					t.Fatalf("cross-tenant compare %s: %d %v", path, r.status, r.body)
				}
			}
		}
		if r := d.call(t, "GET", "/v1/runs?forked_from="+src, tokGlobex, ""); r.status != 404 {
			t.Fatalf("globex lists acme's forks: %d %v", r.status, r.body)
		}
		if runs := d.call(t, "GET", "/v1/runs", tokGlobex, "").body["runs"].([]any); len(runs) != 1 {
			t.Fatalf("globex has %d runs, want its own one", len(runs))
		}
		if sent() != 2 {
			t.Fatalf("%d emails sent in all, want 2", sent())
		}
	})
}

// TestForkOnAnotherVersion: a fork with an edited user message on
// another agent version runs that version's prompt (the scripted
// provider echoes its request), and compare names the edited message as
// the first divergence.
func TestForkOnAnotherVersion(t *testing.T) {
	d := startVersionsDev(t, versionsArgs(t), 2)
	v2 := defaultVersion(t, d)
	pub := d.call(t, "POST", "/v1/agent-versions", tokAdmin, versionedAgents(1))
	if pub.status != 201 {
		t.Fatalf("publish v1: %d %v", pub.status, pub.body)
	}
	v1 := pub.body["id"].(string)
	src := start(t, d, `{"agent":"versioned","messages":[{"role":"user","content":"What is new?"}]}`)
	sv := d.waitStatus(t, src)
	if sv["status"] != "completed" || requestSystem(sv) != "You are version two." {
		t.Fatalf("source on v2: %v", sv)
	}
	f := d.fork(t, src, forkBody(1, `"content":"What changed since yesterday?","agent_version":"`+v1+`","tools":"replay"`))
	if f["agent_version"] != v1 || requestSystem(f) != "You are version one." || result(f)["final_content"] != "Answered by version one." {
		t.Fatalf("fork on v1 (%s; source on %s): %v", v1, v2, f)
	}
	msgs := fmt.Sprint(result(f)["request_metadata"].(map[string]any)["request_messages"])
	if !strings.Contains(msgs, "What changed since yesterday?") || strings.Contains(msgs, "What is new?") {
		t.Fatalf("the model was sent %s", msgs)
	}
	c := d.call(t, "GET", "/v1/runs/"+src+"/compare/"+f["run_id"].(string), tokAcme, "")
	div, _ := c.body["diverged_at"].(map[string]any)
	if c.status != 200 || div["seq"] != float64(1) || div["a"].(map[string]any)["content"] != "What is new?" || div["b"].(map[string]any)["content"] != "What changed since yesterday?" {
		t.Fatalf("compare: %d %v", c.status, c.body)
	}
	if c.body["a"].(map[string]any)["agent_version"] != v2 || c.body["b"].(map[string]any)["agent_version"] != v1 ||
		c.body["b"].(map[string]any)["final_answer"] != "Answered by version one." {
		t.Fatalf("compare sides %v", c.body)
	}
}

// TestForkReusesChildRuns: a planner whose three children finished,
// forked at its question with the same plan, reuses the children's
// outcomes: no child run is started again.
func TestForkReusesChildRuns(t *testing.T) {
	eachStore(t, func(t *testing.T, args []string) {
		d := startDev(t, args)
		const plan = `"parallel_tool_calls":true,"model":{"provider":"scripted","turns":[
			{"content":"Asking three researchers.","tool_calls":[
				{"id":"c1","name":"agent/researcher","parameters":{"task":"Research alpha."}},
				{"id":"c2","name":"agent/researcher","parameters":{"task":"Research gamma."}},
				{"id":"c3","name":"agent/researcher","parameters":{"task":"Research alpha again."}}]},
			{"content":"All three researchers answered."}]}`
		src := start(t, d, `{"agent":"planner","messages":[{"role":"user","content":"Research alpha and gamma."}],`+plan+`}`)
		sv := d.waitStatus(t, src)
		if sv["status"] != "completed" || len(sv["children"].([]any)) != 3 {
			t.Fatalf("planner: %v", sv)
		}
		before := len(d.call(t, "GET", "/v1/runs", tokAcme, "").body["runs"].([]any))
		f := d.fork(t, src, forkBody(1, plan))
		if f["status"] != "completed" || f["children"] != nil {
			t.Fatalf("fork: %v", f)
		}
		trs := forkResults(f)
		if len(trs) != 3 {
			t.Fatalf("fork results %v", trs)
		}
		for i, want := range []string{"Alpha: found.", "Gamma: found.", "Alpha: found."} {
			if trs[i]["metadata"].(map[string]any)["replayed"] != true || !strings.Contains(trs[i]["content"].(string), want) {
				t.Fatalf("result %d: %v, want %q replayed", i, trs[i], want)
			}
		}
		if kids := d.call(t, "GET", "/v1/runs?parent="+f["run_id"].(string), tokAcme, "").body["runs"].([]any); len(kids) != 0 {
			t.Fatalf("the fork started children: %v", kids)
		}
		if after := len(d.call(t, "GET", "/v1/runs", tokAcme, "").body["runs"].([]any)); after != before+1 {
			t.Fatalf("%d runs after the fork, %d before: want the fork alone", after, before)
		}
	})
}
