//go:build e2e

package tests

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// writeCompactionAgents writes an agents file whose one agent,
// e2e-compact, has the given compaction block.
func writeCompactionAgents(t *testing.T, compaction map[string]any) string {
	t.Helper()
	file := map[string]any{"agents": []any{map[string]any{
		"slug": "e2e-compact", "label": "End-to-end compaction agent", "model": map[string]any{"provider": "scripted"},
		"allow_overrides": []any{"model"}, "system": "You are a test agent.", "max_turns": 4,
		"compaction": compaction,
	}}}
	return writeAgentsFile(t, file)
}

// TestCompactionEndToEnd grows a session over baton dev's HTTP API, on
// each store, to 30 messages (three runs of nine messages and a reply):
// the third run's first turn crosses max_messages, so a summary step runs
// on the scripted provider (the agent's compaction model) before it. The
// turn's own request, which the scripted provider echoes into
// request_metadata, holds the summary and the 6 newest messages only;
// the stored transcript keeps all 30 messages and the summary; the
// summary's usage is a line of its own in the envelope's usage.
func TestCompactionEndToEnd(t *testing.T) {
	agents := writeCompactionAgents(t, map[string]any{
		"enabled": true, "max_messages": 20, "recent_messages": 6, "prompt": "Summarize the e2e session.",
		"model": map[string]any{"provider": "scripted", "model": "summarizer-e2e",
			"options": map[string]any{"summary_usage": map[string]any{"prompt_tokens": 120, "completion_tokens": 30}}},
	})
	eachStore(t, func(t *testing.T, args []string) { compactionEndToEnd(t, withAgentsFile(args, agents)) })
}

func compactionEndToEnd(t *testing.T, args []string) {
	d := startDev(t, args)
	session := "s-compact-" + randomSuffix()
	var want []string // the session's messages as role:content, in order
	var id string
	var v map[string]any
	for run := 1; run <= 3; run++ {
		var msgs []map[string]any
		for i := 1; i <= 9; i++ {
			role := "user"
			if i%2 == 0 {
				role = "assistant"
			}
			content := fmt.Sprintf("run %d message %d", run, i)
			msgs = append(msgs, map[string]any{"role": role, "content": content})
			want = append(want, role+":"+content)
		}
		reply := fmt.Sprintf("Reply %d.", run)
		want = append(want, "assistant:"+reply)
		body, _ := json.Marshal(map[string]any{"agent": "e2e-compact", "session_id": session, "messages": msgs,
			"model": map[string]any{"provider": "scripted", "options": map[string]any{"echo_request": true},
				"turns": []any{map[string]any{"content": reply, "usage": map[string]any{"prompt_tokens": 10, "completion_tokens": 5}}}}})
		id = start(t, d, string(body))
		v = d.waitStatus(t, id)
		if v["status"] != "completed" {
			t.Fatalf("run %d: %v", run, v)
		}
		compactions := 0
		for _, ev := range result(v)["events"].([]any) {
			if strings.HasPrefix(ev.(map[string]any)["type"].(string), "compaction_") {
				compactions++
			}
		}
		if wantN := map[bool]int{true: 2, false: 0}[run == 3]; compactions != wantN {
			t.Fatalf("run %d has %d compaction events, want %d: %v", run, compactions, wantN, result(v)["events"])
		}
	}

	// The summary step: its events, from the events endpoint.
	r := d.call(t, "GET", "/v1/runs/"+id+"/events?after=0&limit=100", tokAcme, "")
	var started, completed map[string]any
	for _, e := range r.body["events"].([]any) {
		ev := e.(map[string]any)
		switch ev["type"] {
		case "compaction_started":
			started = ev["data"].(map[string]any)
		case "compaction_completed":
			completed = ev["data"].(map[string]any)
		}
	}
	if started == nil || completed == nil {
		t.Fatalf("no compaction_started/compaction_completed among %v", r.body["events"])
	}
	if completed["provider"] != "scripted" || completed["model"] != "summarizer-e2e" || completed["compacted_count"] != 23.0 ||
		completed["retained_count"] != 6.0 || fmt.Sprint(completed["usage"]) != "map[completion_tokens:30 prompt_tokens:120 total_tokens:150]" {
		t.Fatalf("compaction_completed %v", completed)
	}
	through := completed["compacted_through"].(float64)

	// The stored transcript keeps every message, and the summary.
	r = d.call(t, "GET", "/v1/runs/"+id+"/messages?after=0&limit=100", tokAcme, "")
	if r.status != 200 {
		t.Fatalf("messages: %d %v", r.status, r.body)
	}
	var stored []string
	var summarySeq float64
	for _, m := range r.body["messages"].([]any) {
		msg := m.(map[string]any)
		if meta, _ := msg["metadata"].(map[string]any); meta["source"] == "compaction" {
			summarySeq = msg["seq"].(float64)
			c := meta["compaction"].(map[string]any)
			if msg["content"] != "[Conversation summary: Summary of 23 earlier messages.]" || c["compacted_through"] != through {
				t.Fatalf("summary message %v", msg)
			}
			continue
		}
		stored = append(stored, msg["role"].(string)+":"+msg["content"].(string))
	}
	if strings.Join(stored, "\n") != strings.Join(want, "\n") {
		t.Fatalf("stored transcript (summary left out):\n%s\nwant:\n%s", strings.Join(stored, "\n"), strings.Join(want, "\n"))
	}
	if len(want) != 30 || through != 23 || summarySeq != 30 {
		t.Fatalf("%d messages, compacted through %v, summary at %v", len(want), through, summarySeq)
	}

	// What the model's turn was sent: the summary, then the messages after
	// the boundary, and nothing older.
	var sent []string
	for _, m := range result(v)["request_metadata"].(map[string]any)["request_messages"].([]any) {
		msg := m.(map[string]any)
		sent = append(sent, fmt.Sprintf("%v %v:%v", msg["seq"], msg["role"], msg["content"]))
	}
	wantSent := []string{"30 user:[Conversation summary: Summary of 23 earlier messages.]"}
	for seq := int(through) + 1; seq < int(summarySeq); seq++ {
		wantSent = append(wantSent, fmt.Sprintf("%d %s", seq, want[seq-1]))
	}
	if strings.Join(sent, "\n") != strings.Join(wantSent, "\n") || len(sent) != 7 {
		t.Fatalf("the turn was sent:\n%s\nwant:\n%s", strings.Join(sent, "\n"), strings.Join(wantSent, "\n"))
	}

	// The summary's usage is a line of its own and in the totals.
	if got := fmt.Sprint(result(v)["usage"]); got != "map[compaction:map[completion_tokens:30 prompt_tokens:120 total_tokens:150] completion_tokens:35 prompt_tokens:130 total_tokens:165]" {
		t.Fatalf("usage %s", got)
	}
}

// TestCompactionMisconfiguredAtLoad: baton dev refuses an agents file
// whose compaction block could never work, naming the agent and field.
func TestCompactionMisconfiguredAtLoad(t *testing.T) {
	if os.Getenv("BATON_E2E_BASE_URL") != "" {
		t.Skip("starts baton dev itself")
	}
	for _, tc := range []struct {
		name       string
		compaction map[string]any
		want       string
	}{
		{"provider not enabled", map[string]any{"enabled": true, "max_messages": 20, "model": map[string]any{"provider": "anthropic", "model": "claude-haiku-4-5"}},
			`agent e2e-compact: compaction.model.provider "anthropic" is not enabled in this deployment (enabled: scripted)`},
		{"no threshold", map[string]any{"enabled": true},
			"agents[0].compaction.max_messages: compaction.max_messages must be at least 2 when compaction is enabled, got 0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			devRefuses(t, writeCompactionAgents(t, tc.compaction), tc.want, "BATON_PROVIDERS=")
		})
	}
}

// devRefuses starts baton dev on the agents file and wants it to exit
// with status 1 and an output containing want. env adds to its
// environment.
func devRefuses(t *testing.T, agentsFile, want string, env ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, "dev", "--addr", "127.0.0.1:0", "--agents", agentsFile)
	cmd.Env = append(append(os.Environ(), "BATON_DEV_TOKENS=acme="+tokAcme), env...)
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 || !strings.Contains(string(out), want) {
		t.Fatalf("baton dev: %v, output:\n%s\nwant exit 1 and %q", err, out, want)
	}
}
