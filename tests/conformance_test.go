package tests

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/baton-agents/baton/core"
	"github.com/baton-agents/baton/internal/agents"
	"github.com/baton-agents/baton/internal/durable"
	"github.com/baton-agents/baton/internal/executors"
	"github.com/baton-agents/baton/internal/memstore"
)

// This file is untagged: it runs with go test ./... and needs no
// emulator. It checks the §13.1 event vocabulary of the agent-loop
// extensions seed on one scripted run, driven in process (core.Runner
// with a Sink) and by the distributed runtime (internal/durable on the
// embedded stores, one queued step at a time).

const conformanceAgents = `{"agents":[{"slug":"conf","model":{"provider":"scripted"},
 "allow_overrides":["model","parallel_tool_calls","context_budget"],
 "system":"Be brief.","max_turns":8,
 "tools":[
  {"name":"ability/search","source":"go","description":"Search.","parameters":{"type":"object","properties":{"q":{"type":"string"}}},"executor":{"type":"go","handler":"search"}},
  {"name":"ability/boom","source":"go","description":"Crashes.","executor":{"type":"go","handler":"boom"}}
 ]}]}`

var conformanceT0 = time.Date(2026, 5, 6, 7, 8, 9, 0, time.UTC)

const steering = "Also check b."

// conformanceRun is the one scripted run: two parallel server calls in
// the first turn, one of whose handlers panics; a steering message
// applied once both results are in; a context budget the second turn's
// view exceeds, so it is trimmed; and streamed thinking and content.
func conformanceRun() (agents.Overrides, []core.Message) {
	parallel, budget := true, 300
	model := &core.ModelSpec{Provider: core.ProviderScripted, Model: "script-1",
		Options: map[string]any{core.ScriptedChunkChars: json.Number("4")},
		Turns: []core.ScriptedTurn{
			{Thinking: "Two lookups.", ToolCalls: []core.ToolCallRequest{
				{ID: "c1", Name: "ability/search", Parameters: map[string]any{"q": "a", "api_key": "sk-live-1"}},
				{ID: "c2", Name: "ability/boom", Parameters: map[string]any{}},
			}, Usage: map[string]any{"prompt_tokens": json.Number("3"), "completion_tokens": json.Number("2")}},
			{Thinking: "Steered.", Content: "Found a; b is next.", Usage: map[string]any{"prompt_tokens": json.Number("3"), "completion_tokens": json.Number("2")}},
		}}
	msgs := []core.Message{{Role: core.RoleUser, Content: "Look things up. " + strings.Repeat("Context that will not fit. ", 12)}}
	return agents.Overrides{Model: model, ParallelToolCalls: &parallel, ContextBudget: &budget}, msgs
}

// conformanceTools builds the agent's registry and its Go tools;
// onSearch runs inside the search handler.
func conformanceTools(t *testing.T, onSearch func()) (*agents.Registry, core.ToolExecutor) {
	t.Helper()
	reg, err := agents.Parse([]byte(conformanceAgents))
	if err != nil {
		t.Fatal(err)
	}
	goh := executors.NewGoRegistry()
	goh.Register("search", func(_ context.Context, c core.ToolCall) (any, error) {
		if onSearch != nil {
			onSearch()
		}
		return map[string]any{"hits": []any{c.Parameters["q"]}, "token": "raw-secret"}, nil
	})
	goh.Register("boom", func(context.Context, core.ToolCall) (any, error) {
		var m map[string]int
		m["x"]++ // a nil map write: a genuine runtime panic
		return nil, nil
	})
	router, err := executors.NewRouter(reg.Executors(), goh, nil)
	if err != nil {
		t.Fatal(err)
	}
	return reg, router
}

// runConformanceInProcess drives the run with core.Runner: the search handler stops
// the drive once the first turn's calls run, and the steering message is
// applied with Resume, as a caller steers a run it drives.
func runConformanceInProcess(t *testing.T, runID string) (*core.Run, []core.Event) {
	t.Helper()
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	reg, tools := conformanceTools(t, stop)
	a, _ := reg.Get("conf")
	ov, msgs := conformanceRun()
	cfg, err := a.RunConfig(ov)
	if err != nil {
		t.Fatal(err)
	}
	// The Runner calls its sink on one goroutine at a time.
	var sunk []core.Event
	sink := core.EventSinkFunc(func(_ context.Context, ev core.Event) error { sunk = append(sunk, ev); return nil })
	rn := &core.Runner{Machine: core.NewMachine(&core.FixedClock{T: conformanceT0}), Model: core.ScriptedModel{}, Tools: tools, Sink: sink}
	run, err := rn.Start(ctx, core.StartInput{RunID: runID, SessionID: "s-1", Config: cfg, Messages: msgs})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("start: %v (the search handler should have stopped the drive)", err)
	}
	if err := rn.Resume(context.Background(), run, core.Steer{Content: steering}); err != nil {
		t.Fatal(err)
	}
	return run, sunk
}

// runConformanceDistributed drives the run through the durable runner on
// the embedded stores, one queued step at a time, applying the steering
// message through the run API before the second model turn's step.
func runConformanceDistributed(t *testing.T) (string, core.Envelope, []core.Event) {
	t.Helper()
	ctx := context.Background()
	clock := &core.FixedClock{T: conformanceT0}
	reg, tools := conformanceTools(t, nil)
	q := memstore.NewStepQueue(time.Hour, 5, func() time.Time { return clock.T })
	eng := durable.New(durable.Options{Store: memstore.New(), Queue: q, Agents: reg, Model: core.ScriptedModel{}, Tools: tools,
		Clock: clock, IDs: &core.SequentialIDs{}})
	ov, msgs := conformanceRun()
	snap, err := eng.Start(ctx, "acme", durable.StartRequest{Agent: "conf", SessionID: "s-1", Messages: msgs, Overrides: ov})
	if err != nil {
		t.Fatal(err)
	}
	runID := snap.State.RunID
	steered := false
	err = q.Drain(ctx, 100, func(step core.Step, m core.ReceivedMessage) error {
		if rec, _ := eng.Get(ctx, "acme", runID); step.Kind == core.StepModelTurn && rec.State.Turn == 1 && !steered {
			if _, err := eng.Apply(ctx, "acme", runID, core.Steer{Content: steering}); err != nil {
				return err
			}
			steered = true
		}
		return eng.HandleStep(ctx, step, durable.Attempt{ReceiveCount: m.ReceiveCount, Owner: m.ReceiptHandle})
	})
	if err != nil {
		t.Fatal(err)
	}
	if !steered {
		t.Fatal("the run never reached its second turn")
	}
	rec, err := eng.Get(ctx, "acme", runID)
	if err != nil {
		t.Fatal(err)
	}
	view, err := eng.View(ctx, rec, 0)
	if err != nil {
		t.Fatal(err)
	}
	evs, err := eng.Events(ctx, "acme", runID, 0, 1000, 0)
	if err != nil {
		t.Fatal(err)
	}
	return runID, view.Result, evs
}

func TestEventVocabularyConformance(t *testing.T) {
	runID, distEnv, distEvents := runConformanceDistributed(t)
	run, sunk := runConformanceInProcess(t, runID)
	procEnv := run.Envelope()

	if distEnv.Status != core.StatusCompleted || procEnv.Status != core.StatusCompleted {
		t.Fatalf("status: distributed %s, in process %s", distEnv.Status, procEnv.Status)
	}
	a, _ := core.CanonicalJSON(distEnv)
	b, _ := core.CanonicalJSON(procEnv)
	if string(a) != string(b) {
		t.Fatalf("the distributed envelope differs from the in-process one:\n%s\n%s", a, b)
	}

	t.Run("distributed, stored events", func(t *testing.T) {
		checkVocabulary(t, distEvents, distEnv, false)
	})
	t.Run("in process, stored events", func(t *testing.T) {
		checkVocabulary(t, run.Events, procEnv, false)
	})
	t.Run("in process, sink", func(t *testing.T) {
		var committed []core.Event
		var deltas []core.Event
		for _, ev := range sunk {
			if ev.Type == core.EventToken || ev.Type == core.EventThinking {
				deltas = append(deltas, ev)
			} else {
				committed = append(committed, ev)
			}
		}
		checkVocabulary(t, committed, procEnv, true)
		checkDeltas(t, deltas, procEnv)
	})
}

// checkVocabulary checks the §13.1 events of the conformance run: that
// every name is there, their order, and their payloads. sink says evs are
// what a Runner's Sink got, which carry messages.
func checkVocabulary(t *testing.T, evs []core.Event, env core.Envelope, sink bool) {
	t.Helper()
	seen := map[string]bool{}
	for _, ev := range evs {
		seen[ev.Type] = true
	}
	for _, name := range []string{"tool_call_start", "tool_result", "messages_updated", "status", "error", "done",
		"turn_started", "tool_call", "completed"} {
		if !seen[name] {
			t.Errorf("no %s event", name)
		}
	}
	find := func(typ, callID string) int {
		for i, ev := range evs {
			if ev.Type == typ && (callID == "" || ev.Fields()["tool_call_id"] == callID) {
				return i
			}
		}
		t.Fatalf("no %s event for %q", typ, callID)
		return -1
	}
	msgSeq := func(pred func(core.Message) bool) int64 {
		for _, m := range env.Messages {
			if pred(m) {
				return m.Seq
			}
		}
		t.Fatal("message not found")
		return 0
	}
	// checkUpdated finds the messages_updated of reason after index i
	// whose range starts at seq (the message appended) and checks it.
	checkUpdated := func(after int, reason string, seq int64) int {
		t.Helper()
		for i := after + 1; i < len(evs); i++ {
			ev := evs[i]
			if ev.Type != core.EventMessagesUpdated || ev.Fields()["reason"] != reason || num(ev.Fields()["from_seq"]) != seq {
				continue
			}
			to := num(ev.Fields()["to_seq"])
			if to < seq {
				t.Errorf("%s messages_updated range %d..%d", reason, seq, to)
			}
			checkSinkMessages(t, ev, sink, to)
			return i
		}
		t.Fatalf("no messages_updated (%s) from seq %d after event %d", reason, seq, after)
		return -1
	}

	// Tool calls: the agents-api tool_call, then tool_call_start before
	// execution, an error for the panic, tool_result after execution,
	// then messages_updated for the appended result.
	for _, c := range []struct{ id, name, args, result string }{
		{"c1", "ability/search", `{"api_key":"[redacted]","q":"a"}`, `{"hits":["a"],"token":"[redacted]"}`},
		{"c2", "ability/boom", `{}`, "Tool execution failed: panic: assignment to entry in nil map"},
	} {
		call, start, result := find("tool_call", c.id), find("tool_call_start", c.id), find("tool_result", c.id)
		if !(call < start && start < result) {
			t.Errorf("%s: tool_call at %d, tool_call_start at %d, tool_result at %d", c.id, call, start, result)
		}
		if d := evs[start].Fields(); d["name"] != c.name || d["arguments"] != c.args {
			t.Errorf("%s tool_call_start data %v, want name %s arguments %s", c.id, d, c.name, c.args)
		}
		if d := evs[result].Fields(); d["name"] != c.name || d["result"] != c.result {
			t.Errorf("%s tool_result data %v, want name %s result %s", c.id, d, c.name, c.result)
		}
		seq := msgSeq(func(m core.Message) bool { return m.Role == core.RoleToolResult && m.ToolCallID() == c.id })
		checkUpdated(result, core.MessagesToolResult, seq)
	}
	// Parallel calls: both start before either result.
	if find("tool_call_start", "c2") > find("tool_result", "c1") {
		t.Error("parallel calls: c2 started after c1's result")
	}
	// The panic: a non-fatal error event before its result; the run went on.
	if e := find("error", "c2"); e > find("tool_result", "c2") || !strings.Contains(fmt.Sprint(evs[e].Fields()["message"]), "panicked") {
		t.Errorf("error event %v at %d", evs[e].Data, e)
	}

	// Steering: queued, then drained at the top of turn 2 with
	// messages_updated and a status; then the view is trimmed.
	turn2 := -1
	for i, ev := range evs {
		if ev.Type == core.EventTurnStarted && ev.Turn == 2 {
			turn2 = i
		}
	}
	if q := find("steering_queued", ""); q > turn2 {
		t.Errorf("steering_queued at %d after turn 2 started at %d", q, turn2)
	}
	steerSeq := msgSeq(func(m core.Message) bool { return m.Role == core.RoleUser && m.Content == steering })
	drained := checkUpdated(turn2, core.MessagesSteering, steerSeq)
	status := find("status", "")
	if status < drained || !strings.Contains(fmt.Sprint(evs[status].Fields()["message"]), "steering") {
		t.Errorf("status %v at %d, steering drained at %d", evs[status].Data, status, drained)
	}
	trimmed := -1
	for i := drained + 1; i < len(evs); i++ {
		if evs[i].Type == core.EventMessagesUpdated && evs[i].Fields()["reason"] == core.MessagesContextTrimmed {
			trimmed = i
			break
		}
	}
	if trimmed < 0 || num(evs[trimmed].Fields()["dropped"]) < 1 || num(evs[trimmed].Fields()["budget"]) != 300 {
		t.Fatalf("no context_trimmed messages_updated after the steering drain")
	}
	checkSinkMessages(t, evs[trimmed], sink, steerSeq)
	// The final reply, then completed and done: done is last.
	reply := msgSeq(func(m core.Message) bool { return m.Role == core.RoleAssistant })
	checkUpdated(trimmed, core.MessagesModelReply, reply)
	n := len(evs)
	if evs[n-1].Type != core.EventDone || evs[n-2].Type != core.EventCompleted {
		t.Fatalf("the run ends with %s, %s; want completed, done", evs[n-2].Type, evs[n-1].Type)
	}
	if evs[n-1].Fields()["response"] != env.FinalContent || env.FinalContent != "Found a; b is next." {
		t.Errorf("done response %v, final content %q", evs[n-1].Fields()["response"], env.FinalContent)
	}
	checkSinkMessages(t, evs[n-1], sink, env.Messages[len(env.Messages)-1].Seq)
}

// checkSinkMessages: a sink's messages_updated and done carry the
// transcript through seq; stored events carry no messages.
func checkSinkMessages(t *testing.T, ev core.Event, sink bool, through int64) {
	t.Helper()
	var msgs []core.Message
	switch d := ev.Data.(type) {
	case *core.MessagesUpdatedData:
		msgs = d.Messages
	case *core.ContextTrimmedData:
		msgs = d.Messages
	case *core.DoneData:
		msgs = d.Messages
	}
	_, stored := ev.Fields()["messages"]
	switch {
	case !sink && (msgs != nil || stored):
		t.Errorf("stored %s event carries messages", ev.Type)
	case sink && (len(msgs) == 0 || msgs[0].Seq != 1 || msgs[len(msgs)-1].Seq != through):
		t.Errorf("sink's %s (%v) carries %d messages, want seq 1..%d", ev.Type, ev.Fields()["reason"], len(msgs), through)
	}
}

// checkDeltas: the in-process sink got the scripted thinking and content
// in chunk_chars pieces, each of its turn, with seq 0.
func checkDeltas(t *testing.T, deltas []core.Event, env core.Envelope) {
	t.Helper()
	text := map[string]string{}
	for _, ev := range deltas {
		tok, _ := ev.Fields()["token"].(string)
		if ev.Seq != 0 || len([]rune(tok)) > 4 || tok == "" {
			t.Errorf("delta %+v", ev)
		}
		text[fmt.Sprintf("%d/%s", ev.Turn, ev.Type)] += tok
	}
	want := map[string]string{"1/thinking": "Two lookups.", "2/thinking": "Steered.", "2/token": env.FinalContent}
	if fmt.Sprint(text) != fmt.Sprint(want) {
		t.Errorf("deltas rebuild %v, want %v", text, want)
	}
	for _, ev := range env.Events {
		if ev.Type == core.EventToken || ev.Type == core.EventThinking {
			t.Error("a token event entered the envelope")
		}
	}
}

// num reads an event's integer field, stored (json.Number) or in memory.
func num(v any) int64 {
	switch n := v.(type) {
	case int:
		return int64(n)
	case int64:
		return n
	case float64:
		return int64(n)
	case json.Number:
		i, _ := n.Int64()
		return i
	}
	return -1
}
