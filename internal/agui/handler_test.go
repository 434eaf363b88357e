package agui_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/baton-agents/baton/core"
	"github.com/baton-agents/baton/internal/agui"
	"github.com/baton-agents/baton/internal/app"
	"github.com/baton-agents/baton/internal/durable"
	"github.com/baton-agents/baton/internal/runspec"
)

const agentsJSON = `{"agents":[
 {"slug":"demo","model":{"provider":"scripted"},"allow_overrides":["model"],
  "tools":[{"name":"ability/send_email","source":"go","description":"Mail.","action_policy":"preview","executor":{"type":"go","handler":"echo"}}]},
 {"slug":"other","model":{"provider":"scripted","turns":[{"content":"Helped."}]}},
 {"slug":"lead","model":{"provider":"scripted"},"allow_overrides":["model"],
  "tools":[{"name":"agent/helper","description":"Ask for help.","executor":{"type":"agent","agent":"other"}}]}]}`

type env struct {
	a     *app.App
	h     agui.Handler
	clock *core.FixedClock
}

func newEnv(t *testing.T) *env {
	t.Helper()
	clock := &core.FixedClock{T: time.Date(2026, 5, 6, 7, 8, 9, 0, time.UTC)}
	a, err := app.Build(context.Background(), app.Config{Stores: app.Stores{Memory: true, Visibility: time.Minute}, Agents: app.Agents{JSON: agentsJSON},
		Providers: []string{"scripted"}, ExecuteTools: true, MaxBody: 64 << 10},
		app.Deps{Clock: clock, IDs: &core.SequentialIDs{}, Log: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	return &env{a: a, clock: clock, h: agui.Handler{Runner: a.Runner, Validator: runspec.Validator{Agents: a.Runner.Agents, Providers: []string{"scripted"}}, Log: a.Log}}
}

// pump runs the queued steps.
func (e *env) pump(t *testing.T) {
	t.Helper()
	for range 100 {
		ds, _ := e.a.Steps.Receive(context.Background(), 1, 0)
		if len(ds) == 0 {
			return
		}
		var s core.Step
		_ = json.Unmarshal(ds[0].Body, &s)
		if err := e.a.Runner.HandleStep(context.Background(), s, durable.Attempt{ReceiveCount: 1, Owner: ds[0].ReceiptHandle}); err != nil {
			t.Fatal(err)
		}
		_ = e.a.Steps.Delete(context.Background(), ds[0].ReceiptHandle)
	}
}

// run opens one AG-UI run as tenant, runs its steps and returns its events.
func (e *env) run(t *testing.T, tenant, agent, body string) []agui.Event {
	t.Helper()
	open, err := e.h.Open(context.Background(), tenant, &core.Principal{Tenant: tenant}, agent, []byte(body), time.Second)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	e.pump(t)
	var b strings.Builder
	if err := open(context.Background(), &b, func() {}); err != nil {
		t.Fatal(err)
	}
	var out []agui.Event
	for _, line := range strings.Split(b.String(), "\n") {
		if data, ok := strings.CutPrefix(line, "data: "); ok {
			var ev agui.Event
			if err := json.Unmarshal([]byte(data), &ev); err != nil {
				t.Fatal(err)
			}
			out = append(out, ev)
		}
	}
	return out
}

func (e *env) refused(t *testing.T, tenant, agent, body, code string) {
	t.Helper()
	evs := e.run(t, tenant, agent, body)
	if len(evs) != 1 || evs[0].Type != "RUN_ERROR" || evs[0].Code != code {
		t.Fatalf("want RUN_ERROR %s, got %+v", code, evs)
	}
}

// invalid: the request is answered with an HTTP error before any stream.
func (e *env) invalid(t *testing.T, tenant, agent, body string, status int, code string) {
	t.Helper()
	open, err := e.h.Open(context.Background(), tenant, &core.Principal{Tenant: tenant}, agent, []byte(body), time.Second)
	ae := runspec.Classify(err)
	if open != nil || err == nil || ae.Status != status || ae.Code != code {
		t.Fatalf("want HTTP %d %s before any stream, got %v (%d %s)", status, code, err, ae.Status, ae.Code)
	}
}

// TestInvalidRequestsAreHTTPErrors: one rule — a request that cannot
// succeed as written is an HTTP 4xx before any stream, whatever is wrong
// with it; only conflicts with the thread's state (409) are a RUN_ERROR
// stream.
func TestInvalidRequestsAreHTTPErrors(t *testing.T) {
	e := newEnv(t)
	msg := `"messages":[{"id":"u1","role":"user","content":"go"}]`
	model := `"model":{"provider":"scripted","turns":[{"content":"ok"}]}`
	for _, c := range []struct {
		name, agent, body string
		status            int
		code              string
	}{
		{"not JSON", "demo", `{`, 400, "invalid_body"},
		{"unknown agent", "nope", `{"threadId":"v1","runId":"a",` + msg + `}`, 400, "unknown_agent"},
		{"bad thread id", "demo", `{"threadId":"a b/c","runId":"a",` + msg + `}`, 400, "invalid_request"},
		{"negative max_turns", "demo", `{"threadId":"v2","runId":"a",` + msg + `,"forwardedProps":{"baton":{"max_turns":-5,` + model + `}}}`, 400, "invalid_request"},
		{"invalid message", "demo", `{"threadId":"v3","runId":"a","messages":[{"id":"u1","role":"wizard","content":"go"}]}`, 400, "invalid_message"},
		{"provider not enabled", "demo", `{"threadId":"v4","runId":"a",` + msg + `,"forwardedProps":{"baton":{"model":{"provider":"openai","model":"gpt"}}}}`, 400, "provider_not_enabled"},
	} {
		t.Run(c.name, func(t *testing.T) { e.invalid(t, "acme", c.agent, c.body, c.status, c.code) })
	}
}

const (
	askTool = `{"threadId":"t1","runId":"a","tools":[{"name":"f","description":"F."}],"messages":[{"id":"u1","role":"user","content":"go"}],
	"forwardedProps":{"baton":{"model":{"provider":"scripted","turns":[{"tool_calls":[{"id":"c1","name":"client/f","parameters":{}}]},{"content":"ok"}]}}}}`
	askMail = `{"threadId":"t2","runId":"a","messages":[{"id":"u1","role":"user","content":"go"}],
	"forwardedProps":{"baton":{"model":{"provider":"scripted","turns":[{"tool_calls":[{"id":"m1","name":"ability/send_email","parameters":{"to":"a"}}]},{"content":"ok"}]}}}}`
)

func TestToolMessageMatching(t *testing.T) {
	e := newEnv(t)
	evs := e.run(t, "acme", "demo", askTool)
	fin := evs[len(evs)-1]
	if fin.Type != "RUN_FINISHED" || fin.Outcome.(map[string]any)["pendingToolCallIds"].([]any)[0] != "c1" {
		t.Fatalf("%+v", evs)
	}
	answer := func(callID string) string {
		return `{"threadId":"t1","runId":"b","messages":[{"id":"u1","role":"user","content":"go"},{"id":"x","role":"assistant","toolCalls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}}]},{"id":"t","role":"tool","toolCallId":"` + callID + `","content":"{\"v\":1}"}]}`
	}
	e.refused(t, "acme", "demo", answer("c9"), "unknown_tool_call")
	e.refused(t, "acme", "other", answer("c1"), "thread_agent_mismatch")
	e.refused(t, "globex", "demo", answer("c1"), "unknown_tool_call")
	evs = e.run(t, "acme", "demo", answer("c1"))
	if fin := evs[len(evs)-1]; fin.Type != "RUN_FINISHED" || fin.RunID != "b" || fin.Outcome.(map[string]any)["type"] != "success" {
		t.Fatalf("%+v", evs)
	}
	e.refused(t, "acme", "demo", answer("c1"), "tool_call_already_answered")
}

func TestResumeMatching(t *testing.T) {
	e := newEnv(t)
	evs := e.run(t, "acme", "demo", askMail)
	ints := evs[len(evs)-1].Outcome.(map[string]any)["interrupts"].([]any)
	id := ints[0].(map[string]any)["id"].(string)
	resume := func(id, status, decision string) string {
		return `{"threadId":"t2","runId":"b","messages":[{"id":"u1","role":"user","content":"go"}],"resume":[{"interruptId":"` + id + `","status":"` + status + `","payload":{"decision":"` + decision + `"}}]}`
	}
	e.refused(t, "acme", "demo", resume("act_nope", "resolved", "accept"), "unknown_interrupt")
	e.invalid(t, "acme", "demo", resume(id, "resolved", "maybe"), 400, "invalid_resume")
	e.refused(t, "globex", "demo", resume(id, "resolved", "accept"), "unknown_interrupt")
	e.refused(t, "acme", "demo", `{"threadId":"t2","runId":"b","messages":[{"id":"u1","role":"user","content":"go"}]}`, "nothing_to_resume")
	evs = e.run(t, "acme", "demo", resume(id, "resolved", "accept"))
	if fin := evs[len(evs)-1]; fin.Type != "RUN_FINISHED" || fin.Outcome.(map[string]any)["type"] != "success" {
		t.Fatalf("%+v", evs)
	}
	e.refused(t, "acme", "demo", resume(id, "resolved", "accept"), "unknown_interrupt")
}

func TestResumeAlreadyDecided(t *testing.T) {
	e := newEnv(t)
	evs := e.run(t, "acme", "demo", `{"threadId":"t3","runId":"a","messages":[{"id":"u1","role":"user","content":"go"}],
	"forwardedProps":{"baton":{"model":{"provider":"scripted","turns":[{"tool_calls":[{"id":"m1","name":"ability/send_email","parameters":{"to":"a"}},{"id":"m2","name":"ability/send_email","parameters":{"to":"b"}}]},{"content":"ok"}]}}}}`)
	// The calls are decided one at a time: m1's interrupt first.
	ints := evs[len(evs)-1].Outcome.(map[string]any)["interrupts"].([]any)
	if len(ints) != 1 || ints[0].(map[string]any)["toolCallId"] != "m1" {
		t.Fatalf("%+v", evs)
	}
	first := `{"threadId":"t3","runId":"b","messages":[],"resume":[{"interruptId":"` + ints[0].(map[string]any)["id"].(string) + `","status":"resolved","payload":{"decision":"accept"}}]}`
	evs = e.run(t, "acme", "demo", first)
	left := evs[len(evs)-1].Outcome.(map[string]any)["interrupts"].([]any)
	if len(left) != 1 || left[0].(map[string]any)["toolCallId"] != "m2" {
		t.Fatalf("m2's interrupt is next: %+v", evs)
	}
	e.refused(t, "acme", "demo", first, "interrupt_already_decided")
}

func TestResumeExpired(t *testing.T) {
	e := newEnv(t)
	evs := e.run(t, "acme", "demo", askMail)
	in := evs[len(evs)-1].Outcome.(map[string]any)["interrupts"].([]any)[0].(map[string]any)
	e.clock.T = e.clock.T.Add(48 * time.Hour)
	e.refused(t, "acme", "demo", `{"threadId":"t2","runId":"b","messages":[],"resume":[{"interruptId":"`+in["id"].(string)+`","status":"resolved","payload":{"decision":"accept"}}]}`, "interrupt_expired")
}

// TestChildRunEventsAreCustomEvents: a run's child runs (sub-agents)
// show in its AG-UI stream as CUSTOM baton.child_event events, each with
// the child's run id and its committed event.
func TestChildRunEventsAreCustomEvents(t *testing.T) {
	e := newEnv(t)
	evs := e.run(t, "acme", "lead", `{"threadId":"t9","runId":"a","messages":[{"id":"u1","role":"user","content":"go"}],
	"forwardedProps":{"baton":{"model":{"provider":"scripted","turns":[{"tool_calls":[{"id":"k1","name":"agent/helper","parameters":{"task":"help"}}]},{"content":"Done."}]}}}}`)
	types := map[string]bool{}
	for _, ev := range evs {
		if ev.Type != "CUSTOM" || ev.Name != agui.ChildEventName {
			continue
		}
		v := ev.Value.(map[string]any)
		inner := v["event"].(map[string]any)
		if id, _ := v["run_id"].(string); !strings.HasPrefix(id, "r-") {
			t.Fatalf("child event without its run id: %+v", ev)
		}
		types[inner["type"].(string)] = true
	}
	if !types["run_started"] || !types["done"] {
		t.Fatalf("the child's events in the stream: %v (all: %+v)", types, evs)
	}
	if fin := evs[len(evs)-1]; fin.Type != "RUN_FINISHED" {
		t.Fatalf("last event %+v", fin)
	}
}
