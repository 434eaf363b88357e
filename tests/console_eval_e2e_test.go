//go:build e2e

package tests

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestConsoleEvalsInBrowser drives the evals pages of the console in
// headless Chromium (tests/console/evals.mjs) at 1,280 × 800: two evals
// of one dataset (two recorded runs replayed, an input case, a judged
// case) on version one and on version two, whose replays fail their
// trajectory; the list with their progress and pass rates, an eval's
// cases with their failing checks, judge and runs, only the failed ones,
// the two side by side, the cases run again on version two from the
// page, Cancel on an eval whose case waits on a client
// tool; every new button's label at 4.5:1 or more, no sideways scroll,
// no CSP violation; the screenshots go to tests/console/artifacts.
func TestConsoleEvalsInBrowser(t *testing.T) {
	browser := chromiumPath(t)
	node := consoleNode(t)
	d, v1, v2 := startEvalDev(t)
	runs := recordRuns(t, d, 2)
	var dataset []any
	for _, id := range runs {
		dataset = append(dataset, map[string]any{"id": "replay-" + id[len(id)-6:], "from_run": id, "expect": map[string]any{
			"final": map[string]any{"equals": "Echoed it."}, "trajectory": map[string]any{"mode": "exact", "tools": []any{map[string]any{"name": "ability/echo"}}}}})
	}
	ask := map[string]any{"messages": []any{map[string]any{"role": "user", "content": "Echo hi"}}}
	dataset = append(dataset,
		map[string]any{"id": "asks", "input": ask, "expect": map[string]any{"final": map[string]any{"contains": []any{"Echoed"}}, "max_turns": 3}},
		map[string]any{"id": "judged", "input": ask, "expect": map[string]any{"rubric": "Says it echoed."}})
	startEval := func(version string, cases []any) string {
		b, _ := json.Marshal(map[string]any{"name": "echo smoke", "agent": "evalee", "agent_version": version, "judge": "grader", "dataset": cases})
		r := d.call(t, "POST", "/v1/evals", tokAcme, string(b))
		id, _ := r.body["eval_id"].(string)
		if r.status != 202 || id == "" {
			t.Fatalf("POST /v1/evals: %d %v", r.status, r.body)
		}
		return id
	}
	a, b := startEval(v1, dataset), startEval(v2, dataset)
	waitEval(t, d, a)
	waitEval(t, d, b)
	// A case whose script calls a client tool the case gives no result
	// for: its run waits, and so does the eval.
	waiting := map[string]any{"id": "waits", "input": map[string]any{
		"messages": ask["messages"],
		"tools": []any{map[string]any{"name": "client/confirm", "description": "Ask the person.",
			"parameters": map[string]any{"type": "object", "properties": map[string]any{}}}},
		"model": scriptedModel(nil, callTurn("Asking.", "call_confirm", "client/confirm", map[string]any{}), map[string]any{"content": "Confirmed."})}}
	running := startEval(v1, []any{waiting})
	if !caseWaits(t, d, running) {
		t.Logf("the waiting eval's case does not wait: the Cancel check is skipped")
		running = ""
	}
	artifacts, _ := filepath.Abs("console/artifacts")
	var out struct{ Passed []string }
	runNodeWith(t, node, "console/evals.mjs", map[string]any{"base": d.base, "token": tokAcme, "chromium": browser, "artifacts": artifacts, "a": a, "b": b, "v2": v2, "running": running}, &out)
	want := 6
	if running != "" {
		want = 7
	}
	if len(out.Passed) != want {
		t.Fatalf("passed %v", out.Passed)
	}
	t.Logf("evals in Chromium: %s; screenshots in %s", strings.Join(out.Passed, ", "), artifacts)
}

// TestConsoleEvalRows runs the unit tests of what the eval pages show
// (tests/console/evalrows.test.mjs) with Node's test runner: verdicts,
// failing checks, two evals paired by case id, rates and changes.
func TestConsoleEvalRows(t *testing.T) {
	node := aguiNode(t)
	if out, err := exec.Command(node, "--test", "console/evalrows.test.mjs").CombinedOutput(); err != nil {
		t.Fatalf("node --test: %v\n%s", err, out)
	}
}

// caseWaits waits until the eval's first case run waits on a client tool
// (true), or the eval ends (false).
func caseWaits(t *testing.T, d *dev, evalID string) bool {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		v := d.call(t, "GET", "/v1/evals/"+evalID, tokAcme, "").body
		if v["status"] != "running" {
			return false
		}
		if cs, _ := v["cases"].([]any); len(cs) > 0 {
			if id, _ := cs[0].(map[string]any)["run_id"].(string); id != "" {
				if r := d.call(t, "GET", "/v1/runs/"+id, tokAcme, ""); r.status == 200 && r.body["status"] == "runtime_tool_pending" {
					return true
				}
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
	return false
}
