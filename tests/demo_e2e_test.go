//go:build e2e

package tests

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// demoArgs runs baton dev with its bundled demo agent (no --agents).
func demoArgs(t *testing.T) []string {
	var args []string
	for i, a := range devArgs(t) {
		if a == "--agents" || i > 0 && devArgs(t)[i-1] == "--agents" {
			continue
		}
		args = append(args, a)
	}
	return args
}

// TestDemoExamples: the examples a newcomer tries first complete on the
// bundled demo agent, with no model of their own: `baton run --agent demo
// "Plan my week"`, the same with a client tool answered by a local
// command, and the README's AG-UI HttpAgent snippet; a failed run says
// why in baton run, runs show and AG-UI's RUN_ERROR.
func TestDemoExamples(t *testing.T) {
	if os.Getenv("BATON_E2E_BASE_URL") != "" {
		t.Skip("starts baton dev itself, with the bundled demo agent")
	}
	d := startDev(t, demoArgs(t))
	env := cliEnv(t, d, tokAcme)

	t.Run("baton run", func(t *testing.T) {
		r := runCLI(t, env, "", "run", "--agent", "demo", "Plan my week")
		if r.code != 0 || !strings.Contains(r.stdout, "Here is your week") || !strings.Contains(r.stdout, "ability/echo") || !strings.Contains(r.stdout, "status completed") {
			t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
		}
		if strings.Contains(r.stdout, "calendar") {
			t.Fatalf("the calendar turn is played only when the client tool is offered:\n%s", r.stdout)
		}
	})

	t.Run("baton run --client-tool", func(t *testing.T) {
		dir := t.TempDir()
		script := filepath.Join(dir, "calendar.sh")
		if err := os.WriteFile(script, []byte("#!/bin/sh\necho '{\"events\": [\"standup 9:00\"]}'\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		r := runCLI(t, env, "", "run", "--agent", "demo", "--client-tool", "client/get_calendar="+script, "Plan my week")
		if r.code != 0 || !strings.Contains(r.stdout, "client/get_calendar") || !strings.Contains(r.stdout, "Here is your week") || !strings.Contains(r.stdout, "status completed") {
			t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
		}
	})

	t.Run("AG-UI HttpAgent", func(t *testing.T) {
		// The README's snippet: a frontend tool the demo script does not
		// call, one user message.
		r := aguiRunAgent(t, d, "demo", tokAcme, map[string]any{"threadId": "thread-" + randomSuffix(),
			"messages": []any{map[string]any{"id": "u1", "role": "user", "content": "hi"}},
			"tools":    []any{map[string]any{"name": "get_weather", "description": "Weather in a city.", "parameters": map[string]any{"type": "object"}}},
		})
		r.finished(t, "success")
		last := r.Messages[len(r.Messages)-1]
		if c, _ := last["content"].(string); last["role"] != "assistant" || !strings.HasPrefix(c, "Here is your week") {
			t.Fatalf("messages %v", r.Messages)
		}
	})

	t.Run("a failed run says why", func(t *testing.T) {
		failing := map[string]any{"provider": "scripted", "turns": []any{map[string]any{"error": "the model is overloaded"}}}
		r := aguiRunAgent(t, d, "demo", tokAcme, map[string]any{"threadId": "thread-" + randomSuffix(),
			"messages":       []any{map[string]any{"id": "u1", "role": "user", "content": "hi"}},
			"forwardedProps": map[string]any{"baton": map[string]any{"model": failing}},
		})
		e := r.event(t, "RUN_ERROR")
		if msg, _ := e["message"].(string); !strings.Contains(msg, "the model is overloaded") || e["code"] == "run_failed" {
			t.Fatalf("RUN_ERROR %v", e)
		}
	})
}
