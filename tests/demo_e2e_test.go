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

	t.Run("the CLI says why a run failed", func(t *testing.T) {
		file := writeJSON(t, map[string]any{"agent": "demo", "model": map[string]any{"provider": "scripted", "turns": []any{map[string]any{"error": "the model is overloaded"}}}})
		r := runCLI(t, env, "", "run", "--file", file, "hi")
		const why = "failed (model_error: scripted model error: the model is overloaded)"
		if r.code != 4 || !strings.Contains(r.stdout, "status "+why) {
			t.Fatalf("baton run: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
		}
		runID := strings.Fields(r.stdout)[1]
		if s := runCLI(t, env, "", "runs", "show", runID); s.code != 0 || !strings.Contains(s.stdout, "status "+why) {
			t.Fatalf("runs show: exit %d\n%s\n%s", s.code, s.stdout, s.stderr)
		}
	})

	t.Run("baton run prints turns that were not streamed; runs show redacts", func(t *testing.T) {
		file := writeJSON(t, map[string]any{"agent": "demo", "stream_tokens": false, "model": map[string]any{"provider": "scripted", "turns": []any{
			map[string]any{"content": "First, a look.", "tool_calls": []any{map[string]any{"id": "c1", "name": "ability/echo", "parameters": map[string]any{"text": "x", "api_token": "sekrit-canary-42"}}}},
			map[string]any{"content": "All done, no streaming."}}}})
		r := runCLI(t, env, "", "run", "--file", file, "hi")
		if r.code != 0 || strings.Count(r.stdout, "First, a look.") != 1 || strings.Count(r.stdout, "All done, no streaming.") != 1 {
			t.Fatalf("baton run: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
		}
		runID := strings.Fields(r.stdout)[1]
		s := runCLI(t, env, "", "runs", "show", runID)
		if s.code != 0 || strings.Contains(s.stdout, "sekrit-canary-42") || !strings.Contains(s.stdout, `"api_token":"[redacted]"`) {
			t.Fatalf("runs show: exit %d\n%s", s.code, s.stdout)
		}
	})

	t.Run("login checks the token", func(t *testing.T) {
		home := t.TempDir()
		bad := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home}
		r := runCLI(t, bad, "", "login", "--url", d.base, "--token", "not-a-token-000")
		if r.code != 1 || !strings.Contains(r.stderr, "refused the token, nothing saved") {
			t.Fatalf("login: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
		}
		if _, err := os.Stat(filepath.Join(home, ".config", "baton", "config.json")); err == nil {
			t.Fatal("a refused token was saved")
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
