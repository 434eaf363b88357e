package core

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite golden files")

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// scenario is one scripted run: a configuration, server tool handlers,
// hooks, and the outside inputs given each time the run pauses.
type scenario struct {
	name         string
	cfg          RunConfig
	requestTools []any
	messages     []Message
	handlers     map[string]func(ToolCall) (any, error)
	hooks        func(m *Machine)
	resumes      []func(st RunState, clock *FixedClock) Input
	// wantStatus is asserted besides the golden envelope.
	wantStatus RunStatus
	// io adds a summarizer or compactor; model wraps the scripted model.
	io    func(io *IO)
	model func(ModelProvider) ModelProvider
}

// scenarioEnv is fresh for every run of a scenario; handlers and hooks
// reach it through env.
type scenarioEnv struct {
	mu sync.Mutex
	// sent holds the outside inputs (a steer, a cancel) that handlers and
	// hooks sent while the run was driven, oldest first.
	sent []Input
	// stop cancels the context driving the run, as a caller does to get an
	// input in while the in-process runner drives; nil when stepwise.
	stop context.CancelFunc
}

var env *scenarioEnv

func newEnv() { env = &scenarioEnv{} }

// send is how a handler or hook gives the run an outside input: the
// harness applies it before the next step, the in-process one by stopping
// the drive and calling Runner.Resume.
func (e *scenarioEnv) send(in Input) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.sent = append(e.sent, in)
	if e.stop != nil {
		e.stop()
	}
}

// take removes and returns the oldest sent input, or nil.
func (e *scenarioEnv) take() Input {
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(e.sent) == 0 {
		return nil
	}
	in := e.sent[0]
	e.sent = e.sent[1:]
	return in
}

// driveContext returns a fresh context for one Start or Resume call;
// send cancels it.
func (e *scenarioEnv) driveContext() context.Context {
	e.mu.Lock()
	defer e.mu.Unlock()
	ctx, cancel := context.WithCancel(context.Background())
	e.stop = cancel
	return ctx
}

func (sc scenario) ports() IO {
	var model ModelProvider = ScriptedModel{}
	if sc.model != nil {
		model = sc.model(model)
	}
	io := IO{Model: model, Tools: sc.executor()}
	if sc.io != nil {
		sc.io(&io)
	}
	return io
}

func user(s string) []Message { return []Message{{Role: RoleUser, Content: s}} }

func turn(content string, calls ...ToolCallRequest) ScriptedTurn {
	return ScriptedTurn{Content: content, ToolCalls: calls, Usage: map[string]any{"prompt_tokens": json.Number("10"), "completion_tokens": json.Number("5")}}
}

func call(id, name string, params map[string]any) ToolCallRequest {
	if params == nil {
		params = map[string]any{}
	}
	return ToolCallRequest{ID: id, Name: name, Parameters: params}
}

func scripted(turns ...ScriptedTurn) ModelSpec {
	return ModelSpec{Provider: ProviderScripted, Model: "script-1", Turns: turns}
}

func serverTool(name string, extra map[string]any) ToolDeclaration {
	raw := map[string]any{
		"name": name, "source": "test", "description": "Test tool " + name,
		"parameters": map[string]any{"type": "object", "properties": map[string]any{"q": map[string]any{"type": "string"}}},
	}
	for k, v := range extra {
		raw[k] = v
	}
	g, err := ToJSONValue(raw)
	if err != nil {
		panic(err)
	}
	d, err := NormalizeServerTool(g)
	if err != nil {
		panic(err)
	}
	return d
}

func clientTool(name string) map[string]any {
	return map[string]any{"name": name, "description": "Client tool " + name,
		"parameters": map[string]any{"type": "object", "required": []any{"day"}, "properties": map[string]any{"day": map[string]any{"type": "string"}}}}
}

func echo(c ToolCall) (any, error) { return map[string]any{"echo": c.Parameters}, nil }

func submitFirst(success bool, result any, errMsg string) func(RunState, *FixedClock) Input {
	return func(st RunState, _ *FixedClock) Input {
		reqs, _ := st.Pending()
		return ClientResult{RequestID: reqs[0].RequestID, Success: success, Result: result, Error: errMsg}
	}
}

// approver is the principal the scenarios decide approvals as. Its
// capability ceiling, caller claims and request metadata must never reach
// an event or an audit record.
var approver = &Principal{
	Tenant: "acme", ActorID: "ops-lead", AuthSource: "bearer_token", RequestContext: "rest", TokenID: "9f86d081884c7d65",
	CapabilityCeiling: []string{"approvals:decide"}, Caller: &CallerContext{CallerHost: "self"},
	RequestMetadata: map[string]any{"authorization": "Bearer tok-secret-123"},
}

func decideFirst(decision, reason string) func(RunState, *FixedClock) Input {
	return func(st RunState, _ *FixedClock) Input {
		_, acts := st.Pending()
		return ApprovalDecision{ActionID: acts[0].ActionID, Decision: decision, Reason: reason, Resolver: approver}
	}
}

func expireAfter(d time.Duration) func(RunState, *FixedClock) Input {
	return func(_ RunState, c *FixedClock) Input {
		c.T = c.T.Add(d)
		return Expire{}
	}
}

func (sc scenario) executor() ToolExecutor {
	return ToolExecutorFunc(func(_ context.Context, c ToolCall) (any, error) {
		h, ok := sc.handlers[c.ToolName]
		if !ok {
			return nil, fmt.Errorf("no handler for %s", c.ToolName)
		}
		return h(c)
	})
}

func (sc scenario) machine(clock Clock) *Machine {
	m := NewMachine(clock)
	if sc.hooks != nil {
		sc.hooks(m)
	}
	return m
}

func (sc scenario) start() StartInput {
	msgs := sc.messages
	if msgs == nil {
		msgs = user("Plan my week")
	}
	return StartInput{RunID: "r-1", SessionID: "s-1", Config: sc.cfg, RequestTools: sc.requestTools, Messages: msgs}
}

// runInProcess drives the scenario through the in-process runner.
func runInProcess(t *testing.T, sc scenario) Envelope {
	t.Helper()
	clock := &FixedClock{T: t0}
	newEnv()
	io := sc.ports()
	rn := &Runner{Machine: sc.machine(clock), Model: io.Model, Tools: io.Tools, Summarizer: io.Summarizer, Compactor: io.Compactor}
	var run *Run
	// deliver resumes the run with each input sent while it was driven;
	// sending one stopped the drive, so err is the context's error then.
	deliver := func(err error) error {
		for errors.Is(err, context.Canceled) {
			in := env.take()
			if in == nil {
				break
			}
			err = rn.Resume(env.driveContext(), run, in)
		}
		return err
	}
	run, err := rn.Start(env.driveContext(), sc.start())
	if run == nil {
		t.Fatalf("start: %v", err)
	}
	if err := deliver(err); err != nil {
		t.Fatalf("start: %v", err)
	}
	for i, r := range sc.resumes {
		if err := deliver(rn.Resume(env.driveContext(), run, r(run.State, clock))); err != nil {
			t.Fatalf("resume %d: %v", i, err)
		}
	}
	return run.Envelope()
}

// stepStore holds a run the way the distributed runtime does: state and
// every record serialized, one step applied at a time.
type stepStore struct {
	state      []byte
	transcript [][]byte
	seqs       []int64
	events     [][]byte
	results    [][]byte
	audit      [][]byte
	queue      [][]byte
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func (s *stepStore) commit(t *testing.T, out Output) {
	b, err := MarshalState(out.State)
	if err != nil {
		t.Fatal(err)
	}
	s.state = b
	for _, m := range out.Messages {
		s.transcript = append(s.transcript, mustJSON(t, m))
		s.seqs = append(s.seqs, m.Seq)
	}
	for _, e := range out.Events {
		s.events = append(s.events, mustJSON(t, e))
	}
	for _, r := range out.ToolResults {
		s.results = append(s.results, mustJSON(t, r))
	}
	for _, a := range out.Audit {
		s.audit = append(s.audit, mustJSON(t, a))
	}
	for _, st := range out.Next {
		s.queue = append(s.queue, mustJSON(t, st))
	}
}

func loadAll[T any](t *testing.T, raw [][]byte) []T {
	t.Helper()
	out := make([]T, 0, len(raw))
	for _, b := range raw {
		var v T
		if err := decodeJSON(b, &v); err != nil {
			t.Fatalf("decode %T: %v", v, err)
		}
		out = append(out, v)
	}
	return out
}

func (s *stepStore) load(t *testing.T) (RunState, []Message) {
	st, err := UnmarshalState(s.state)
	if err != nil {
		t.Fatal(err)
	}
	msgs := loadAll[Message](t, s.transcript)
	for i := range msgs {
		msgs[i].Seq = s.seqs[i]
	}
	return st, msgs
}

// runStepwise drives the scenario one step at a time with every piece of
// state serialized to JSON and back between steps.
func runStepwise(t *testing.T, sc scenario) Envelope {
	t.Helper()
	clock := &FixedClock{T: t0}
	newEnv()
	m := sc.machine(clock)
	io := sc.ports()
	ctx := context.Background()
	out, err := m.Start(ctx, sc.start())
	if err != nil {
		t.Fatalf("start: %v", err)
	}
	s := &stepStore{}
	s.commit(t, out)
	apply := func(in Input) {
		st, tr := s.load(t)
		out, err := m.Apply(ctx, st, tr, in)
		if err != nil {
			t.Fatalf("apply %T: %v", in, err)
		}
		s.commit(t, out)
	}
	// deliver applies the inputs sent since it last looked, where the
	// in-process runner checks its context: before a step and after
	// planning it. It reports whether it applied any.
	deliver := func() bool {
		applied := false
		for in := env.take(); in != nil; in = env.take() {
			apply(in)
			applied = true
		}
		return applied
	}
	drain := func() {
		for len(s.queue) > 0 {
			if deliver() {
				continue
			}
			var step Step
			if err := decodeJSON(s.queue[0], &step); err != nil {
				t.Fatal(err)
			}
			st, tr := s.load(t)
			plan, err := m.Plan(ctx, st, tr, step)
			if err != nil {
				t.Fatalf("plan: %v", err)
			}
			if deliver() {
				continue
			}
			s.queue = s.queue[1:]
			in := io.Perform(ctx, step, plan)
			if in == nil {
				continue
			}
			apply(in)
		}
	}
	drain()
	for _, r := range sc.resumes {
		st, _ := s.load(t)
		apply(r(st, clock))
		drain()
	}
	st, tr := s.load(t)
	return BuildEnvelope(st, tr, loadAll[Event](t, s.events), loadAll[ToolExecutionResult](t, s.results), loadAll[AuditEvent](t, s.audit))
}

func envelopeJSON(t *testing.T, env Envelope) []byte {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(env); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func checkGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", "golden", name+".json")
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read golden (run go test ./core -run %s -update to create it): %v", t.Name(), err)
	}
	if !bytes.Equal(want, got) {
		t.Errorf("envelope differs from %s (rerun with -update if the change is intended)\n%s", path, diffLines(string(want), string(got)))
	}
}

func diffLines(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := 0; i < len(al) || i < len(bl); i++ {
		var x, y string
		if i < len(al) {
			x = al[i]
		}
		if i < len(bl) {
			y = bl[i]
		}
		if x != y {
			return fmt.Sprintf("first difference at line %d:\n- %s\n+ %s", i+1, x, y)
		}
	}
	return ""
}

func runScenarios(t *testing.T, scenarios []scenario) {
	for _, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) {
			env := runInProcess(t, sc)
			got := envelopeJSON(t, env)
			checkGolden(t, sc.name, got)
			if sc.wantStatus != "" && env.Status != sc.wantStatus {
				t.Errorf("status = %q, want %q", env.Status, sc.wantStatus)
			}
			checkTranscriptInvariant(t, env)
			stepwise := envelopeJSON(t, runStepwise(t, sc))
			if !bytes.Equal(got, stepwise) {
				t.Errorf("step-by-step envelope differs from in-process:\n%s", diffLines(string(got), string(stepwise)))
			}
		})
	}
}

// checkTranscriptInvariant: every tool_call has exactly one tool_result
// once the run is not waiting on it, and results follow their calls.
func checkTranscriptInvariant(t *testing.T, env Envelope) {
	t.Helper()
	open := map[string]bool{}
	for _, m := range env.Messages {
		switch m.Role {
		case RoleToolCall:
			open[m.ToolCallID()] = true
		case RoleToolResult:
			if !open[m.ToolCallID()] {
				t.Errorf("tool_result %s without an open tool_call", m.ToolCallID())
			}
			delete(open, m.ToolCallID())
		}
	}
	if IsTerminal(env.Status) && len(open) > 0 {
		t.Errorf("finished run has tool calls without results: %v", open)
	}
}

var errBoom = errors.New("connection refused")
