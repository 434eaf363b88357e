//go:build e2e

package tests

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"strings"
	"testing"
	"time"
)

// shopAgents is an agents file whose shop agent checks the stock with an
// http tool (newHTTPTool counts its requests) when asked about stock and
// answers stockAnswer, and greets otherwise; judge scores every answer
// 0.9.
func shopAgents(url, env, stockAnswer string) map[string]any {
	return map[string]any{"agents": []any{
		map[string]any{"slug": "shop", "model": map[string]any{"provider": "scripted", "turns": []any{
			map[string]any{"if_user_said": "stock", "content": "", "tool_calls": []any{map[string]any{"id": "s1", "name": "inventory/check_stock", "parameters": map[string]any{"sku": "A-1"}}}},
			map[string]any{"if_user_said": "stock", "content": stockAnswer},
			map[string]any{"content": "Hello from the shop."}}},
			"allow_overrides": []any{"model"}, "tools": []any{stockTool(url, env)}},
		map[string]any{"slug": "judge", "model": map[string]any{"provider": "scripted", "turns": []any{
			map[string]any{"content": `{"score": 0.9, "reason": "polite and on topic"}`}}}},
	}}
}

// evalView polls an eval until it is no longer running.
func (d *dev) waitEval(t *testing.T, id string, within time.Duration) map[string]any {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		r := d.call(t, "GET", "/v1/evals/"+id, tokAcme, "")
		if r.status != 200 {
			t.Fatalf("get eval %s: %d %v", id, r.status, r.body)
		}
		if r.body["status"] != "running" {
			return r.body
		}
		if time.Now().After(deadline) {
			t.Fatalf("eval %s still running: %v", id, r.body["progress"])
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func startEval(t *testing.T, d *dev, body map[string]any) string {
	t.Helper()
	b, _ := json.Marshal(body)
	r := d.call(t, "POST", "/v1/evals", tokAcme, string(b))
	if r.status != 202 {
		t.Fatalf("start eval: %d %v", r.status, r.body)
	}
	return r.body["eval_id"].(string)
}

// casesOf maps an eval view's cases by id.
func casesOf(v map[string]any) map[string]map[string]any {
	out := map[string]map[string]any{}
	for _, c := range v["cases"].([]any) {
		c := c.(map[string]any)
		out[c["id"].(string)] = c
	}
	return out
}

// TestEvalsReplayRecordedRuns, on each store: ten recorded runs of the
// shop agent (five checked the stock with the http tool) become a
// dataset of from_run cases, the recorded answer and trajectory their
// reference. Evaluated on the recorded version in replay mode, every
// case passes and the tool is not called; on a version whose script
// answers the stock question differently, those five cases fail with
// the divergence shown, and the greetings pass. A malformed case and a
// case from another tenant's run are refused with their place, and
// nothing starts.
func TestEvalsReplayRecordedRuns(t *testing.T) {
	secret := "e2e-evals-secret-" + randomSuffix() + randomSuffix()
	const env = "BATON_E2E_EVALS_SECRET"
	t.Setenv(env, secret)
	eachStore(t, func(t *testing.T, args []string) {
		inv := newHTTPTool(t, secret)
		d := startDev(t, withAgentsFile(args, writeAgentsFile(t, shopAgents(inv.srv.URL, env, "A-1 is in stock."))))
		var ids []string
		for i := 0; i < 10; i++ {
			q := fmt.Sprintf("hello number %d", i)
			if i%2 == 0 {
				q = fmt.Sprintf("stock of A-1, please (%d)", i)
			}
			id := start(t, d, `{"agent":"shop","messages":[{"role":"user","content":"`+q+`"}]}`)
			if v := d.waitStatus(t, id); v["status"] != "completed" {
				t.Fatalf("recorded run %d: %v", i, v)
			}
			ids = append(ids, id)
		}
		sent := func() int { calls, _ := inv.snapshot(); return len(calls) }
		if sent() != 5 {
			t.Fatalf("the recorded runs called the tool %d times", sent())
		}
		// The dataset: each recorded run's answer and trajectory.
		var dataset []any
		for _, id := range ids {
			v := d.call(t, "GET", "/v1/runs/"+id, tokAcme, "").body
			var tools []any
			for _, m := range result(v)["messages"].([]any) {
				m := m.(map[string]any)
				if m["role"] == "tool_call" {
					md := m["metadata"].(map[string]any)
					tools = append(tools, map[string]any{"name": md["tool_name"], "parameters": md["parameters"]})
				}
			}
			dataset = append(dataset, map[string]any{"id": id, "from_run": id, "expect": map[string]any{
				"final": map[string]any{"equals": result(v)["final_content"]}, "trajectory": map[string]any{"mode": "exact", "tools": append([]any{}, tools...)}}})
		}
		same := d.waitEval(t, startEval(t, d, map[string]any{"agent": "shop", "concurrency": 4, "dataset": dataset}), time.Minute)
		if same["status"] != "completed" || same["progress"].(map[string]any)["passed"] != float64(10) || same["totals"].(map[string]any)["pass_rate"] != float64(1) {
			t.Fatalf("the recorded version: %v %v", same["progress"], casesOf(same))
		}
		if sent() != 5 {
			t.Fatalf("replaying the recorded runs called the tool %d more times", sent()-5)
		}
		for _, c := range casesOf(same) {
			run := d.call(t, "GET", "/v1/runs/"+c["run_id"].(string), tokAcme, "").body
			ev, _ := run["eval"].(map[string]any)
			if run["forked_from"] == nil || run["agent_version"] != same["agent_version"] || ev["eval_id"] != same["eval_id"] || ev["case"] != c["index"] {
				t.Fatalf("case run %v", run)
			}
		}

		// Another version: the stock answer changed.
		v2file, _ := json.Marshal(shopAgents(inv.srv.URL, env, "A-1 is sold out."))
		pub := d.call(t, "POST", "/v1/agent-versions", tokAdmin, string(v2file))
		if pub.status != 201 {
			t.Fatalf("publish v2: %d %v", pub.status, pub.body)
		}
		v2 := pub.body["id"].(string)
		// The same cases, by reference to the first eval's dataset.
		other := d.waitEval(t, startEval(t, d, map[string]any{"agent": "shop", "agent_version": v2, "concurrency": 4, "dataset_from": same["eval_id"], "name": "v2"}), time.Minute)
		if other["agent_version"] != v2 || other["progress"].(map[string]any)["failed"] != float64(5) || other["totals"].(map[string]any)["pass_rate"] != 0.5 {
			t.Fatalf("v2: %v", other["progress"])
		}
		for i, id := range ids {
			c := casesOf(other)[id]
			if c["pass"] != (i%2 == 1) {
				t.Fatalf("case %d on v2: %v", i, c)
			}
			if i%2 == 0 {
				div := c["diverged_at"].(map[string]any)
				if div["expected"].(map[string]any)["content"] != "A-1 is in stock." || div["got"].(map[string]any)["content"] != "A-1 is sold out." {
					t.Fatalf("case %d's divergence: %v", i, div)
				}
				if !strings.Contains(fmt.Sprint(c["checks"]), "final.equals") {
					t.Fatalf("case %d's checks: %v", i, c["checks"])
				}
			}
		}
		if sent() != 5 {
			t.Fatalf("the v2 eval called the tool %d more times", sent()-5)
		}
		tagged := 0
		for _, r := range d.call(t, "GET", "/v1/runs?limit=100", tokAcme, "").body["runs"].([]any) {
			if ev, ok := r.(map[string]any)["eval"].(map[string]any); ok && ev["eval_id"] == same["eval_id"] {
				tagged++
			}
		}
		if tagged != 10 {
			t.Fatalf("%d runs of the list say they are the first eval's cases, want 10", tagged)
		}
		list := d.call(t, "GET", "/v1/evals?limit=1", tokAcme, "")
		if evs := list.body["evals"].([]any); list.status != 200 || len(evs) != 1 || evs[0].(map[string]any)["eval_id"] != other["eval_id"] || list.body["next_cursor"] == nil {
			t.Fatalf("list: %d %v", list.status, list.body)
		}

		// Bad input: nothing starts.
		before := len(d.call(t, "GET", "/v1/runs?limit=100", tokAcme, "").body["runs"].([]any))
		for _, tc := range []struct {
			body string
			line float64
		}{
			{`{"agent":"shop","dataset":[{"id":"a","from_run":"` + ids[0] + `"},{"id":"b"}]}`, 2},
			{`{"agent":"shop","dataset":[{"id":"a","from_run":"` + ids[0] + `"},{"id":"a","from_run":"` + ids[1] + `"}]}`, 2},
			{`{"agent":"shop","dataset":[{"id":"a","from_run":"` + ids[0] + `"},{"id":"b","from_run":"` + ids[1] + `"},{"id":"c","from_run":"x","expect":{"max_turns":"three"}}]}`, 3},
			{`{"agent":"shop","dataset":[{"id":"a","from_run":"` + ids[0] + `","surprise":true}]}`, 1},
		} {
			r := d.call(t, "POST", "/v1/evals", tokAcme, tc.body)
			if r.status != 400 || errCode(r) != "invalid_dataset" || r.body["error"].(map[string]any)["details"].(map[string]any)["line"] != tc.line {
				t.Fatalf("%s: %d %v", tc.body, r.status, r.body)
			}
		}
		r := d.call(t, "POST", "/v1/evals", tokGlobex, `{"agent":"shop","dataset":[{"id":"a","from_run":"`+ids[0]+`"}]}`)
		if r.status != 400 || errCode(r) != "invalid_dataset" || !strings.Contains(r.body["error"].(map[string]any)["message"].(string), "no such run of this tenant") {
			t.Fatalf("another tenant's recorded run: %d %v", r.status, r.body)
		}
		for _, body := range []string{
			`{"agent":"shop","dataset":[{"id":"a","from_run":"r-x"}],"concurrency":0}`,
			`{"agent":"shop"}`,
			`{"agent":"shop","dataset":[{"id":"a","from_run":"r-x"}],"dataset_from":"` + same["eval_id"].(string) + `"}`,
		} {
			if r := d.call(t, "POST", "/v1/evals", tokAcme, body); r.status != 400 || errCode(r) != "invalid_request" {
				t.Fatalf("%s: %d %v", body, r.status, r.body)
			}
		}
		if r := d.call(t, "POST", "/v1/evals", tokGlobex, `{"agent":"shop","dataset_from":"`+same["eval_id"].(string)+`"}`); r.status != 400 || errCode(r) != "invalid_dataset" {
			t.Fatalf("another tenant's dataset_from: %d %v", r.status, r.body)
		}
		if after := len(d.call(t, "GET", "/v1/runs?limit=100", tokAcme, "").body["runs"].([]any)); after != before {
			t.Fatalf("refused evals started %d runs", after-before)
		}
		if r := d.call(t, "GET", "/v1/evals/"+other["eval_id"].(string), tokGlobex, ""); r.status != 404 {
			t.Fatalf("another tenant reads the eval: %d", r.status)
		}
	})
}

// TestEvalsJudgeAndCancel: cases with a rubric are scored by the judge
// agent, whose runs are children of the case runs; the eval's cost is
// the sum of its runs' result.cost. A cancelled eval starts no more
// cases and cancels its running ones.
func TestEvalsJudgeAndCancel(t *testing.T) {
	t.Setenv("BATON_E2E_UNUSED", "an-unused-secret-"+randomSuffix())
	eachStore(t, func(t *testing.T, args []string) {
		d := startDev(t, withAgentsFile(args, writeAgentsFile(t, shopAgents("http://127.0.0.1:9", "BATON_E2E_UNUSED", "never"))))
		var dataset []any
		for i := 0; i < 3; i++ {
			dataset = append(dataset, map[string]any{"id": fmt.Sprint("greet-", i), "input": map[string]any{"messages": []any{map[string]any{"role": "user", "content": fmt.Sprint("hello ", i)}}},
				"expect": map[string]any{"final": map[string]any{"contains": []any{"Hello"}}, "rubric": "Is the greeting polite?"}})
		}
		v := d.waitEval(t, startEval(t, d, map[string]any{"agent": "shop", "judge": "judge", "concurrency": 2, "dataset": dataset}), time.Minute)
		if v["status"] != "completed" || v["progress"].(map[string]any)["passed"] != float64(3) {
			t.Fatalf("judged eval: %v", v)
		}
		var sum float64
		for _, c := range casesOf(v) {
			j := c["judge"].(map[string]any)
			if j["score"] != 0.9 || j["reason"] != "polite and on topic" {
				t.Fatalf("judge of %s: %v", c["id"], j)
			}
			kids := d.call(t, "GET", "/v1/runs?parent="+c["run_id"].(string), tokAcme, "").body["runs"].([]any)
			if len(kids) != 1 || kids[0].(map[string]any)["run_id"] != j["run_id"] || kids[0].(map[string]any)["agent"] != "judge" {
				t.Fatalf("the judge of %s as its case run's child: %v", c["id"], kids)
			}
			for _, id := range []string{c["run_id"].(string), j["run_id"].(string)} {
				cost, _ := result(d.call(t, "GET", "/v1/runs/"+id, tokAcme, "").body)["cost"].(map[string]any)
				usd, _ := cost["total_usd"].(float64)
				sum += usd
			}
		}
		if got, _ := v["totals"].(map[string]any)["cost_usd"].(float64); math.Abs(got-sum) > 1e-12 {
			t.Fatalf("the eval's cost %g, its runs' %g", got, sum)
		}

		// Cancel: slow cases (a client tool without an answer waits).
		var waiting []any
		for i := 0; i < 6; i++ {
			waiting = append(waiting, map[string]any{"id": fmt.Sprint("wait-", i), "input": map[string]any{
				"messages": []any{map[string]any{"role": "user", "content": "wait"}},
				"tools":    []any{map[string]any{"name": "client/ask", "description": "Ask.", "parameters": map[string]any{"type": "object"}}},
				"model":    map[string]any{"provider": "scripted", "turns": []any{map[string]any{"tool_calls": []any{map[string]any{"id": "a1", "name": "client/ask", "parameters": map[string]any{}}}}}}}})
		}
		r := d.call(t, "POST", "/v1/evals", tokAcme, mustJSON(map[string]any{"agent": "shop", "concurrency": 2, "dataset": waiting}))
		if r.status != 202 {
			t.Fatalf("start: %v", r.body)
		}
		id := r.body["eval_id"].(string)
		if c := d.call(t, "POST", "/v1/evals/"+id+"/cancel", tokAcme, ""); c.status != 202 || c.body["status"] != "cancelled" {
			t.Fatalf("cancel: %d %v", c.status, c.body)
		}
		cv := d.waitEval(t, id, time.Minute)
		deadline := time.Now().Add(30 * time.Second)
		for cv["progress"].(map[string]any)["scored"] != float64(2) && time.Now().Before(deadline) {
			time.Sleep(200 * time.Millisecond)
			cv = d.call(t, "GET", "/v1/evals/"+id, tokAcme, "").body
		}
		p := cv["progress"].(map[string]any)
		if cv["status"] != "cancelled" || p["scored"] != float64(2) || p["failed"] != float64(2) || p["started"] != float64(2) {
			t.Fatalf("cancelled eval: %v %v", cv["status"], p)
		}
	})
}

// TestEvalSurvivesKill, on the emulators: 200 cases at concurrency 20,
// and baton dev killed (SIGKILL) in the middle and started again: every
// case is scored, once, and each has one run.
func TestEvalSurvivesKill(t *testing.T) {
	if os.Getenv("BATON_TEST_DYNAMODB_ENDPOINT") == "" || os.Getenv("BATON_E2E_BASE_URL") != "" {
		t.Skip("needs baton dev on the emulators: embedded stores do not survive a restart by design")
	}
	t.Setenv("BATON_E2E_UNUSED", "an-unused-secret-"+randomSuffix())
	args := withAgentsFile(devArgs(t), writeAgentsFile(t, shopAgents("http://127.0.0.1:9", "BATON_E2E_UNUSED", "never")))
	d := startDev(t, args)
	var dataset []any
	for i := 0; i < 200; i++ {
		dataset = append(dataset, map[string]any{"id": fmt.Sprint("c", i), "input": map[string]any{"messages": []any{map[string]any{"role": "user", "content": fmt.Sprint("hello ", i)}}},
			"expect": map[string]any{"final": map[string]any{"equals": "Hello from the shop."}}})
	}
	id := startEval(t, d, map[string]any{"agent": "shop", "concurrency": 20, "dataset": dataset})
	deadline := time.Now().Add(2 * time.Minute)
	for {
		p := d.call(t, "GET", "/v1/evals/"+id, tokAcme, "").body["progress"].(map[string]any)
		if p["scored"].(float64) >= 40 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the eval never reached 40 scored cases: %v", p)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err := d.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = d.cmd.Wait()
	d = startDev(t, args)
	v := d.waitEval(t, id, 5*time.Minute)
	p := v["progress"].(map[string]any)
	if v["status"] != "completed" || p["scored"] != float64(200) || p["passed"] != float64(200) {
		t.Fatalf("after the kill: %v %v", v["status"], p)
	}
	runs := map[string]bool{}
	for cursor := ""; ; {
		page := d.call(t, "GET", "/v1/runs?agent=shop&limit=100"+cursor, tokAcme, "").body
		for _, r := range page["runs"].([]any) {
			runs[r.(map[string]any)["run_id"].(string)] = true
		}
		next, _ := page["next_cursor"].(string)
		if next == "" {
			break
		}
		cursor = "&cursor=" + next
	}
	if len(runs) != 200 {
		t.Fatalf("%d case runs, want 200", len(runs))
	}
	for _, c := range casesOf(v) {
		if !runs[c["run_id"].(string)] || c["status"] != "scored" {
			t.Fatalf("case %v", c)
		}
	}
}
