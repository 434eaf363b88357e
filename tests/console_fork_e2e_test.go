//go:build e2e

package tests

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestConsoleForkInBrowser drives forks in the console in headless
// Chromium (tests/console/fork.mjs) at 1,280 × 800: "Fork from here" on
// the run's user and assistant messages only, its form starting a fork
// with an edited message, the fork's page with its lineage and its
// reused tool call marked replayed, the source's page listing the fork,
// a replay fork's unrecorded call shown as not_recorded, every new
// button's label at 4.5:1 or more, no sideways scroll, no CSP violation;
// the screenshots go to tests/console/artifacts.
func TestConsoleForkInBrowser(t *testing.T) {
	browser := chromiumPath(t)
	node := consoleNode(t)
	// The console's form overrides no model: the agent's own script
	// answers the source and its forks alike.
	d := startDev(t, withAgentsFile(devArgs(t), withEchoer(t)))
	artifacts, _ := filepath.Abs("console/artifacts")
	var out struct{ Passed []string }
	runNodeWith(t, node, "console/fork.mjs", map[string]any{"base": d.base, "token": tokAcme, "chromium": browser, "artifacts": artifacts}, &out)
	if len(out.Passed) != 6 {
		t.Fatalf("passed %v", out.Passed)
	}
	t.Logf("forks in Chromium: %s; screenshots in %s", strings.Join(out.Passed, ", "), artifacts)
}

// TestConsoleForkPoints runs the unit tests of where the console offers
// "Fork from here" (tests/console/forkpoints.test.mjs) with Node's test
// runner: a run's own user and assistant messages, never an earlier
// run's, a fork's source's, or a tool or system message.
func TestConsoleForkPoints(t *testing.T) {
	node := aguiNode(t)
	if out, err := exec.Command(node, "--test", "console/forkpoints.test.mjs").CombinedOutput(); err != nil {
		t.Fatalf("node --test: %v\n%s", err, out)
	}
}

// withEchoer writes testdata/agents.json with one more agent, echoer,
// whose scripted model calls ability/echo and then answers (a model
// override may replace the script).
func withEchoer(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("testdata/agents.json")
	if err != nil {
		t.Fatal(err)
	}
	var file map[string]any
	if err := json.Unmarshal(b, &file); err != nil {
		t.Fatal(err)
	}
	file["agents"] = append(file["agents"].([]any), map[string]any{
		"slug": "echoer", "model": map[string]any{"provider": "scripted", "turns": []any{
			callTurn("Echoing.", "call_echo", "ability/echo", map[string]any{"text": "hello fork"}),
			map[string]any{"content": "Echoed it."},
		}},
		"allow_overrides": []any{"model"},
		"tools": []any{map[string]any{"name": "ability/echo", "source": "go", "description": "Echo the parameters.",
			"parameters": map[string]any{"type": "object", "properties": map[string]any{"text": map[string]any{"type": "string"}}},
			"executor":   map[string]any{"type": "go", "handler": "echo"}}},
	})
	return writeAgentsFile(t, file)
}
