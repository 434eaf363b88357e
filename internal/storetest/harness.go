package storetest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/baton-agents/baton/core"
)

// Store is every storage port of core's distributed runtime.
type Store = core.Storage

// t0 is the suite's epoch.
var t0 = time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)

// stallAfter is the DueAt of a run with scheduled steps, past its update.
const stallAfter = time.Minute

// harness drives runs of one tenant through the machine and the store
// under test, like the distributed runner does: every step loads the
// committed state and transcript, and commits its output.
type harness struct {
	t      *testing.T
	ctx    context.Context
	s      Store
	clock  *core.FixedClock
	m      *core.Machine
	io     core.IO
	tenant string
	// activeLimit is the ActiveLimit of the harness's writes.
	activeLimit int
}

func newHarness(t *testing.T, s Store, tenant string) *harness {
	clock := &core.FixedClock{T: t0}
	return &harness{
		t: t, ctx: context.Background(), s: s, clock: clock, m: core.NewMachine(clock),
		io:     core.IO{Model: core.ScriptedModel{}, Tools: core.ToolExecutorFunc(execute)},
		tenant: tenant,
	}
}

// execute is the suite's tool executor: ability/echo echoes its
// parameters and ability/big returns bigText.
func execute(_ context.Context, c core.ToolCall) (any, error) {
	switch c.ToolName {
	case "ability/echo":
		return map[string]any{"echo": c.Parameters}, nil
	case "ability/big":
		return bigText, nil
	}
	return nil, fmt.Errorf("no handler for %s", c.ToolName)
}

// bigText is a 1 MiB string mixing one- to four-byte UTF-8 characters, so
// any chunking splits characters.
var bigText = func() string {
	var b strings.Builder
	pieces := []string{"abcdefghij", "é", "漢字", "🙂", "\"quoted\"\n", "<&>", "\\"}
	for i := 0; b.Len() < 1<<20; i++ {
		b.WriteString(pieces[i%len(pieces)])
		fmt.Fprintf(&b, "%d", i)
	}
	return b.String()
}()

func serverTool(t *testing.T, name string, extra map[string]any) core.ToolDeclaration {
	t.Helper()
	raw := map[string]any{
		"name": name, "source": "contract", "description": "Contract tool " + name,
		"parameters": map[string]any{"type": "object", "properties": map[string]any{"q": map[string]any{"type": "string"}}},
	}
	for k, v := range extra {
		raw[k] = v
	}
	g, err := core.ToJSONValue(raw)
	if err != nil {
		t.Fatal(err)
	}
	d, err := core.NormalizeServerTool(g)
	if err != nil {
		t.Fatalf("declare %s: %v", name, err)
	}
	return d
}

func clientTool(name string) map[string]any {
	return map[string]any{"name": name, "description": "Client tool " + name,
		"parameters": map[string]any{"type": "object", "required": []any{"day"}, "properties": map[string]any{"day": map[string]any{"type": "string"}}}}
}

// config is a scripted run with the echo and big server tools.
func config(t *testing.T, turns ...core.ScriptedTurn) core.RunConfig {
	return core.RunConfig{
		Agent: "contract", System: "You are a contract test.",
		Model: core.ModelSpec{Provider: core.ProviderScripted, Model: "script-1", Turns: turns},
		Tools: []core.ToolDeclaration{serverTool(t, "ability/echo", nil), serverTool(t, "ability/big", nil)},
	}
}

func turn(content string, calls ...core.ToolCallRequest) core.ScriptedTurn {
	return core.ScriptedTurn{Content: content, ToolCalls: calls,
		Usage: map[string]any{"prompt_tokens": json.Number("10"), "completion_tokens": json.Number("5")}}
}

func call(id, name string, params map[string]any) core.ToolCallRequest {
	if params == nil {
		params = map[string]any{}
	}
	return core.ToolCallRequest{ID: id, Name: name, Parameters: params}
}

func user(contents ...string) []core.Message {
	out := make([]core.Message, len(contents))
	for i, c := range contents {
		out[i] = core.Message{Role: core.RoleUser, Content: c}
	}
	return out
}

// write is the Write of a transition from prev to out.
func (h *harness) write(prev core.RunState, out core.Output) core.Write {
	w := core.Write{Tenant: h.tenant, PrevVersion: prev.Version, Output: out, Pending: core.PendingItems(prev, out.State), ActiveLimit: h.activeLimit}
	if due, ok := out.State.DueAt(core.Stall{After: stallAfter}); ok {
		w.DueAt = &due
	}
	return w
}

func (h *harness) head(session string) core.SessionHead {
	h.t.Helper()
	head, err := h.s.SessionHead(h.ctx, h.tenant, session)
	if err != nil {
		h.t.Fatalf("session head %s: %v", session, err)
	}
	return head
}

// startOutput computes a run's first transition from head.
func (h *harness) startOutput(head core.SessionHead, runID, session string, cfg core.RunConfig, reqTools []any, msgs []core.Message) core.Output {
	h.t.Helper()
	out, err := h.m.Start(h.ctx, core.StartInput{RunID: runID, SessionID: session, Config: cfg, RequestTools: reqTools, Messages: msgs, FirstSeq: head.NextSeq})
	if err != nil {
		h.t.Fatalf("start %s: %v", runID, err)
	}
	return out
}

// start reads the session head, starts a run from it and creates it.
func (h *harness) start(runID, session string, cfg core.RunConfig, reqTools []any, msgs ...core.Message) (core.Output, error) {
	h.t.Helper()
	head := h.head(session)
	out := h.startOutput(head, runID, session, cfg, reqTools, msgs)
	return out, h.s.CreateRun(h.ctx, head, h.write(core.RunState{}, out))
}

func (h *harness) mustStart(runID, session string, cfg core.RunConfig, reqTools []any, msgs ...core.Message) core.Output {
	h.t.Helper()
	out, err := h.start(runID, session, cfg, reqTools, msgs...)
	if err != nil {
		h.t.Fatalf("create run %s: %v", runID, err)
	}
	return out
}

func (h *harness) record(runID string) core.RunRecord {
	h.t.Helper()
	rec, err := h.s.LoadRun(h.ctx, runID)
	if err != nil {
		h.t.Fatalf("load run %s: %v", runID, err)
	}
	return rec
}

func (h *harness) load(runID string) core.RunState {
	h.t.Helper()
	return h.record(runID).State
}

func (h *harness) messages(session string, after, before int64, limit int) []core.Message {
	h.t.Helper()
	msgs, err := h.s.Messages(h.ctx, h.tenant, session, after, before, limit)
	if err != nil {
		h.t.Fatalf("messages %s (%d, %d, %d): %v", session, after, before, limit, err)
	}
	return msgs
}

func (h *harness) events(runID string, after, before int64, limit int) []core.Event {
	h.t.Helper()
	evs, err := h.s.Events(h.ctx, runID, after, before, limit)
	if err != nil {
		h.t.Fatalf("events %s (%d, %d, %d): %v", runID, after, before, limit, err)
	}
	return evs
}

// next computes the output of the run's first scheduled step from the
// committed state, without committing it; ok is false when no step is
// scheduled.
func (h *harness) next(runID string) (prev core.RunState, out core.Output, ok bool) {
	h.t.Helper()
	prev = h.load(runID)
	steps := prev.ScheduledSteps()
	if len(steps) == 0 {
		return prev, core.Output{}, false
	}
	transcript := h.messages(prev.SessionID, 0, prev.NextMsgSeq, 0)
	plan, err := h.m.Plan(h.ctx, prev, transcript, steps[0])
	if err != nil {
		h.t.Fatalf("plan %s step %d: %v", runID, steps[0].Seq, err)
	}
	if plan.Kind == core.PlanSkip {
		h.t.Fatalf("plan %s step %d: skipped: %s", runID, steps[0].Seq, plan.Reason)
	}
	in := h.io.Perform(h.ctx, steps[0], plan)
	out, err = h.m.Apply(h.ctx, prev, transcript, in)
	if err != nil {
		h.t.Fatalf("apply %s step %d: %v", runID, steps[0].Seq, err)
	}
	return prev, out, true
}

// step performs and commits the run's next step.
func (h *harness) step(runID string) (core.Output, bool) {
	h.t.Helper()
	prev, out, ok := h.next(runID)
	if !ok {
		return out, false
	}
	h.commit(prev, out)
	return out, true
}

func (h *harness) commit(prev core.RunState, out core.Output) {
	h.t.Helper()
	if err := h.s.Commit(h.ctx, h.write(prev, out)); err != nil {
		h.t.Fatalf("commit %s v%d: %v", out.State.RunID, out.State.Version, err)
	}
}

// drive performs steps until the run waits for nothing it can do itself,
// and returns every output it committed.
func (h *harness) drive(runID string) []core.Output {
	h.t.Helper()
	var outs []core.Output
	for i := 0; ; i++ {
		if i > 50 {
			h.t.Fatalf("run %s did not settle", runID)
		}
		out, ok := h.step(runID)
		if !ok {
			return outs
		}
		outs = append(outs, out)
	}
}

// failCallback commits a callback_failed event of notification eventID to
// a finished run, as the write after the finish it is, and returns the
// state it was applied to.
func (h *harness) failCallback(runID, eventID string) core.RunState {
	h.t.Helper()
	prev := h.load(runID)
	out, err := h.m.Apply(h.ctx, prev, nil, core.CallbackFailed{EventID: eventID, Event: "finished", Attempts: 5, LastStatus: 500})
	if err != nil {
		h.t.Fatal(err)
	}
	w := h.write(prev, out)
	w.AfterFinish = true
	if err := h.s.Commit(h.ctx, w); err != nil {
		h.t.Fatalf("commit after finish: %v", err)
	}
	return prev
}

// resume applies an outside input to the committed state and commits it.
func (h *harness) resume(runID string, in core.Input) core.Output {
	h.t.Helper()
	prev := h.load(runID)
	transcript := h.messages(prev.SessionID, 0, prev.NextMsgSeq, 0)
	out, err := h.m.Apply(h.ctx, prev, transcript, in)
	if err != nil {
		h.t.Fatalf("apply %T to %s: %v", in, runID, err)
	}
	h.commit(prev, out)
	return out
}

// ---- comparisons ----

func canonical(t *testing.T, v any) string {
	t.Helper()
	b, err := core.CanonicalJSON(v)
	if err != nil {
		t.Fatalf("canonical JSON: %v", err)
	}
	return string(b)
}

func stateJSON(t *testing.T, st core.RunState) string {
	t.Helper()
	b, err := core.MarshalState(st)
	if err != nil {
		t.Fatalf("marshal state: %v", err)
	}
	return string(b)
}

func sameState(t *testing.T, got, want core.RunState) {
	t.Helper()
	if g, w := stateJSON(t, got), stateJSON(t, want); g != w {
		t.Fatalf("state differs:\n got %s\nwant %s", clip(g), clip(w))
	}
}

func messageKey(t *testing.T, m core.Message) string {
	return fmt.Sprintf("%d %s", m.Seq, canonical(t, m))
}

func sameMessages(t *testing.T, got, want []core.Message) {
	t.Helper()
	sameRecords(t, "message", got, want, func(m core.Message) int64 { return m.Seq }, messageKey)
}

func sameEvents(t *testing.T, got, want []core.Event) {
	t.Helper()
	sameRecords(t, "event", got, want, func(e core.Event) int64 { return e.Seq }, func(t *testing.T, e core.Event) string { return canonical(t, e) })
}

// sameRecords fails t unless got and want hold the same records (of
// kind what) in the same order, compared by key.
func sameRecords[T any](t *testing.T, what string, got, want []T, seq func(T) int64, key func(*testing.T, T) string) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d %ss %v, want %d %v", len(got), what, seqsOf(got, seq), len(want), seqsOf(want, seq))
	}
	for i := range want {
		if g, w := key(t, got[i]), key(t, want[i]); g != w {
			t.Fatalf("%s %d differs:\n got %s\nwant %s", what, i, clip(g), clip(w))
		}
	}
}

func seqs(msgs []core.Message) []int64 {
	return seqsOf(msgs, func(m core.Message) int64 { return m.Seq })
}

func seqsOf[T any](records []T, seq func(T) int64) []int64 {
	out := make([]int64, len(records))
	for i, r := range records {
		out[i] = seq(r)
	}
	return out
}

func clip(s string) string {
	if len(s) > 600 {
		return s[:600] + fmt.Sprintf("… (%d bytes)", len(s))
	}
	return s
}

func sameBytes(t *testing.T, what string, got, want []byte) {
	t.Helper()
	if !bytes.Equal(got, want) {
		t.Fatalf("%s: got %d bytes, want %d bytes (first difference at %d)", what, len(got), len(want), firstDiff(got, want))
	}
}

func firstDiff(a, b []byte) int {
	for i := 0; i < len(a) && i < len(b); i++ {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// allMessages collects the messages of outs in order.
func allMessages(outs ...core.Output) []core.Message {
	var out []core.Message
	for _, o := range outs {
		out = append(out, o.Messages...)
	}
	return out
}

func allEvents(outs ...core.Output) []core.Event {
	var out []core.Event
	for _, o := range outs {
		out = append(out, o.Events...)
	}
	return out
}

// eventually retries check until it passes or five seconds pass; stores
// whose indexes lag a commit pass it after the lag.
func eventually(t *testing.T, check func() error) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		err := check()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal(err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
