package durable_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/baton-agents/baton/core"
	"github.com/baton-agents/baton/internal/agents"
	"github.com/baton-agents/baton/internal/durable"
	"github.com/baton-agents/baton/internal/executors"
	"github.com/baton-agents/baton/internal/memstore"
)

var t0 = time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)

const agentsFile = `{"agents":[{"slug":"demo","model":{"provider":"scripted"},
 "allow_overrides":["model","max_turns","budgets","parallel_tool_calls","callback"],
 "callback":{"secret_env":"CALLBACK_SECRET"},"callback_hosts":["hooks.example.com"],
 "system":"Be brief.","max_turns":8,
 "tools":[
  {"name":"ability/search","source":"go","description":"Search.","parameters":{"type":"object","properties":{"q":{"type":"string"}}},"executor":{"type":"go","handler":"count"}},
  {"name":"ability/charge","source":"go","description":"Charge a card once.","executor":{"type":"go","handler":"count"}},
  {"name":"ability/idempotent_charge","source":"go","description":"Charge, deduplicated by idempotency key.","runtime":{"retry_safe":true},"executor":{"type":"go","handler":"count"}},
  {"name":"ability/send_email","source":"go","description":"Send mail.","action_policy":"preview","executor":{"type":"go","handler":"count"}}
 ]},
 {"slug":"compact","model":{"provider":"scripted"},"allow_overrides":["model"],"system":"Be brief.","max_turns":8,
  "compaction":{"enabled":true,"max_messages":4,"recent_messages":2,"prompt":"Summarize tersely.",
   "model":{"provider":"scripted","model":"summarizer-1","options":{"summary_usage":{"prompt_tokens":40,"completion_tokens":8}}}},
  "tools":[
  {"name":"ability/search","source":"go","description":"Search.","parameters":{"type":"object","properties":{"q":{"type":"string"}}},"executor":{"type":"go","handler":"count"}}
 ]}]}`

// counter counts executions per tool_call_id.
type counter struct {
	mu   sync.Mutex
	n    map[string]int
	keys map[string]int
	hook func(core.ToolCall)
}

func (c *counter) handler(_ context.Context, call core.ToolCall) (any, error) {
	c.mu.Lock()
	c.n[call.ToolCallID]++
	c.keys[call.IdempotencyKey]++
	hook := c.hook
	c.mu.Unlock()
	if hook != nil {
		hook(call)
	}
	return map[string]any{"ok": call.Parameters}, nil
}

type harness struct {
	eng   *durable.Runner
	store *memstore.Store
	q     *memstore.StepQueue
	clock *core.FixedClock
	count *counter
	model core.ModelProvider
	// notes records the published notifications.
	notes *recorder
	// opts built eng.
	opts durable.Options
}

func newHarness(t *testing.T, wrapStore func(durable.Store) durable.Store) *harness {
	t.Helper()
	return newHarnessWith(t, agentsFile, wrapStore)
}

// newHarnessWith is newHarness on another agents file.
func newHarnessWith(t *testing.T, file string, wrapStore func(durable.Store) durable.Store) *harness {
	t.Helper()
	return newHarnessFactories(t, file, wrapStore, nil)
}

// newHarnessFactories is newHarnessWith with executor factories beyond
// go.
func newHarnessFactories(t *testing.T, file string, wrapStore func(durable.Store) durable.Store, factories map[string]executors.Factory) *harness {
	t.Helper()
	reg, err := agents.Parse([]byte(file))
	if err != nil {
		t.Fatal(err)
	}
	h := &harness{store: memstore.New(), clock: &core.FixedClock{T: t0}, count: &counter{n: map[string]int{}, keys: map[string]int{}}, notes: &recorder{}}
	h.q = memstore.NewStepQueue(time.Hour, 5, func() time.Time { return h.clock.T })
	goh := executors.NewGoRegistry()
	goh.Register("count", h.count.handler)
	router, err := executors.NewRouter(reg.Executors(), goh, factories)
	if err != nil {
		t.Fatal(err)
	}
	var store durable.Store = h.store
	if wrapStore != nil {
		store = wrapStore(store)
	}
	h.model = core.ScriptedModel{}
	h.opts = durable.Options{Store: store, Queue: h.q, Agents: reg, Tools: router, Clock: h.clock, IDs: &core.SequentialIDs{}, Notifier: h.notes,
		Model: modelFunc(func(ctx context.Context, r core.ModelRequest) (core.ModelReply, error) {
			return h.model.Complete(ctx, r)
		}), Limits: durable.Limits{IntentLease: time.Minute}}
	h.eng = durable.New(h.opts)
	return h
}

type modelFunc func(context.Context, core.ModelRequest) (core.ModelReply, error)

func (f modelFunc) Complete(ctx context.Context, r core.ModelRequest) (core.ModelReply, error) {
	return f(ctx, r)
}

// pump delivers queued steps one message at a time until the queue is
// empty, like the event source mapping with batch size 1.
func (h *harness) pump(t *testing.T) {
	t.Helper()
	err := h.q.Drain(context.Background(), 1000, func(step core.Step, m core.ReceivedMessage) error {
		if err := h.eng.HandleStep(context.Background(), step, durable.Attempt{ReceiveCount: m.ReceiveCount, Owner: m.ReceiptHandle}); err != nil {
			return fmt.Errorf("step %+v: %w", step, err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func scripted(turns ...core.ScriptedTurn) *core.ModelSpec {
	return &core.ModelSpec{Provider: core.ProviderScripted, Turns: turns}
}

func turn(content string, calls ...core.ToolCallRequest) core.ScriptedTurn {
	return core.ScriptedTurn{Content: content, ToolCalls: calls, Usage: map[string]any{"prompt_tokens": json.Number("3"), "completion_tokens": json.Number("2")}}
}

func call(id, name string, p map[string]any) core.ToolCallRequest {
	return core.ToolCallRequest{ID: id, Name: name, Parameters: p}
}

func userMsg(s string) []core.Message { return []core.Message{{Role: core.RoleUser, Content: s}} }

func (h *harness) start(t *testing.T, model *core.ModelSpec, mut func(*durable.StartRequest)) string {
	t.Helper()
	req := durable.StartRequest{Agent: "demo", SessionID: "s-1", Messages: userMsg("hi"), Overrides: agents.Overrides{Model: model}}
	if mut != nil {
		mut(&req)
	}
	rec, err := h.eng.Start(context.Background(), "acme", req)
	if err != nil {
		t.Fatal(err)
	}
	return rec.State.RunID
}

func (h *harness) envelope(t *testing.T, runID string) core.Envelope {
	t.Helper()
	rec, err := h.eng.Get(context.Background(), "acme", runID)
	if err != nil {
		t.Fatal(err)
	}
	v, err := h.eng.View(context.Background(), rec, 0)
	if err != nil {
		t.Fatal(err)
	}
	return v.Result
}

func canon(t *testing.T, v any) string {
	t.Helper()
	b, err := core.CanonicalJSON(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// parityCase is run through the in-process runner and the distributed
// runtime; the envelopes must be identical.
type parityCase struct {
	name string
	// agent is "demo" unless set; messages are "hi" unless set.
	agent    string
	messages []core.Message
	model    *core.ModelSpec
	parallel bool
	budgets  core.BudgetLimits
	tools    []any
	resumes  []func(st core.RunState) core.Input
	// check, when set, checks the envelope beyond parity.
	check func(t *testing.T, env core.Envelope)
}

func parityCases() []parityCase {
	clientTool := map[string]any{"name": "client/get_calendar", "description": "Calendar.", "parameters": map[string]any{"type": "object"}}
	submit := func(st core.RunState) core.Input {
		reqs, _ := st.Pending()
		return core.ClientResult{RequestID: reqs[0].RequestID, Success: true, Result: "free"}
	}
	decide := func(d string) func(core.RunState) core.Input {
		return func(st core.RunState) core.Input {
			_, acts := st.Pending()
			return core.ApprovalDecision{ActionID: acts[0].ActionID, Decision: d, Reason: "test"}
		}
	}
	return []parityCase{
		{name: "plain", model: scripted(turn("Hello."))},
		{name: "server_tool", model: scripted(turn("", call("c1", "ability/search", map[string]any{"q": "a"})), turn("Found."))},
		{name: "client_pause_resume", tools: []any{clientTool}, resumes: []func(core.RunState) core.Input{submit},
			model: scripted(turn("", call("c1", "client/get_calendar", map[string]any{})), turn("Free."))},
		{name: "approval_accept", resumes: []func(core.RunState) core.Input{decide("accept")},
			model: scripted(turn("", call("c1", "ability/send_email", map[string]any{})), turn("Sent."))},
		{name: "approval_reject", resumes: []func(core.RunState) core.Input{decide("reject")},
			model: scripted(turn("", call("c1", "ability/send_email", map[string]any{})), turn("Not sent."))},
		{name: "budget", budgets: core.BudgetLimits{"tool_calls": 1},
			model: scripted(turn("", call("c1", "ability/search", map[string]any{"q": "a"}), call("c2", "ability/search", map[string]any{"q": "b"})), turn("x"))},
		{name: "duplicate", model: scripted(turn("", call("c1", "ability/search", map[string]any{"q": "a"})), turn("", call("c2", "ability/search", map[string]any{"q": "a"})), turn("ok"))},
		{name: "parallel", parallel: true, tools: []any{clientTool}, resumes: []func(core.RunState) core.Input{submit, decide("accept")},
			model: scripted(turn("", call("c1", "ability/search", map[string]any{"q": "a"}), call("c2", "client/get_calendar", map[string]any{}), call("c3", "ability/send_email", map[string]any{})), turn("All done."))},
		{name: "cancel_while_paused", tools: []any{clientTool}, resumes: []func(core.RunState) core.Input{func(core.RunState) core.Input { return core.Cancel{Reason: "stop"} }},
			model: scripted(turn("", call("c1", "client/get_calendar", map[string]any{})), turn("x"))},
		{name: "steer_while_paused", tools: []any{clientTool}, resumes: []func(core.RunState) core.Input{func(core.RunState) core.Input { return core.Steer{Content: "also tuesday"} }, submit},
			model: scripted(turn("", call("c1", "client/get_calendar", map[string]any{})), turn("done"))},
		// Two summaries written by the agent's compaction model, each its
		// own step, with their usage in the totals and usage.compaction.
		{name: "compaction_by_model", agent: "compact", messages: session(5),
			model: scripted(turn("", call("c1", "ability/search", map[string]any{"q": "a"})), turn("", call("c2", "ability/search", map[string]any{"q": "b"})), turn("Searched.")),
			check: func(t *testing.T, env core.Envelope) {
				var summaries []string
				for _, ev := range env.Events {
					if ev.Type == core.EventCompactionCompleted {
						summaries = append(summaries, fmt.Sprint(ev.Fields()["model"], " ", ev.Fields()["compacted_through"]))
					}
				}
				if fmt.Sprint(summaries) != "[summarizer-1 3 summarizer-1 5 summarizer-1 8]" || env.Status != core.StatusCompleted {
					t.Fatalf("summaries %v, status %s", summaries, env.Status)
				}
				if got := canon(t, env.Usage); got != `{"compaction":{"completion_tokens":24,"prompt_tokens":120,"total_tokens":144},"completion_tokens":30,"prompt_tokens":129,"total_tokens":159}` {
					t.Fatalf("usage %s", got)
				}
			}},
	}
}

// session is n messages alternating user and assistant.
func session(n int) []core.Message {
	msgs := make([]core.Message, n)
	for i := range msgs {
		msgs[i] = core.Message{Role: map[bool]string{true: core.RoleUser, false: core.RoleAssistant}[i%2 == 0], Content: fmt.Sprintf("message %d", i+1)}
	}
	return msgs
}

func TestParityWithInProcessRunner(t *testing.T) {
	for _, pc := range parityCases() {
		t.Run(pc.name, func(t *testing.T) {
			// Distributed: one step per message over the in-memory ports.
			if pc.agent == "" {
				pc.agent = "demo"
			}
			if pc.messages == nil {
				pc.messages = userMsg("hi")
			}
			h := newHarness(t, nil)
			runID := h.start(t, pc.model, func(r *durable.StartRequest) {
				r.Agent, r.Messages = pc.agent, pc.messages
				r.RequestTools = pc.tools
				r.Overrides.Budgets = pc.budgets
				if pc.parallel {
					r.Overrides.ParallelToolCalls = &pc.parallel
				}
			})
			h.pump(t)
			for _, res := range pc.resumes {
				rec, err := h.eng.Get(context.Background(), "acme", runID)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := h.eng.Apply(context.Background(), "acme", runID, res(rec.State)); err != nil {
					t.Fatal(err)
				}
				h.pump(t)
			}
			dist := h.envelope(t, runID)

			// In process, with the same configuration.
			reg, _ := agents.Parse([]byte(agentsFile))
			a, _ := reg.Get(pc.agent)
			ov := agents.Overrides{Model: pc.model, Budgets: pc.budgets}
			if pc.parallel {
				ov.ParallelToolCalls = &pc.parallel
			}
			cfg, err := a.RunConfig(ov)
			if err != nil {
				t.Fatal(err)
			}
			h2 := newHarness(t, nil)
			rn := &core.Runner{Machine: core.NewMachine(h2.clock), Model: core.ScriptedModel{}, Tools: h2.opts.Tools}
			run, err := rn.Start(context.Background(), core.StartInput{RunID: runID, SessionID: "s-1", Config: cfg, RequestTools: pc.tools, Messages: pc.messages})
			if err != nil {
				t.Fatal(err)
			}
			for _, res := range pc.resumes {
				if err := rn.Resume(context.Background(), run, res(run.State)); err != nil {
					t.Fatal(err)
				}
			}
			if got, want := canon(t, dist), canon(t, run.Envelope()); got != want {
				t.Fatalf("distributed envelope differs from in-process:\n got %s\nwant %s", got, want)
			}
			if !core.IsTerminal(dist.Status) {
				t.Fatalf("run did not finish: %s", dist.Status)
			}
			if pc.check != nil {
				pc.check(t, dist)
			}
		})
	}
}

// dupQueue delivers every step twice (at-least-once delivery).
type dupQueue struct{ inner core.StepQueue }

func (d dupQueue) Enqueue(ctx context.Context, steps []core.QueuedStep) error {
	var all []core.QueuedStep
	for _, s := range steps {
		a, b := s, s
		a.DedupID += "#1"
		b.DedupID += "#2"
		all = append(all, a, b)
	}
	return d.inner.Enqueue(ctx, all)
}

func TestDuplicateConcurrentDeliveriesExecuteOnce(t *testing.T) {
	model := scripted(
		turn("", call("c1", "ability/charge", map[string]any{"n": json.Number("1")}), call("c2", "ability/search", map[string]any{"q": "a"})),
		turn("", call("c3", "ability/charge", map[string]any{"n": json.Number("2")})),
		turn("Charged twice."))
	clean := newHarness(t, nil)
	cleanID := clean.start(t, model, nil)
	clean.pump(t)
	want := clean.envelope(t, cleanID)
	if ds, err := clean.store.Deliveries(context.Background(), cleanID); err != nil || len(ds) != 0 {
		t.Fatalf("a run delivered once per step noted deliveries: %+v, %v", ds, err)
	}

	h := newHarness(t, nil)
	h.eng.Queue = dupQueue{h.q}
	runID := h.start(t, model, nil)
	// Deliver each received message twice, concurrently.
	for i := 0; i < 200; i++ {
		ds, _ := h.q.Receive(context.Background(), 1, 0)
		if len(ds) == 0 {
			break
		}
		var step core.Step
		_ = json.Unmarshal(ds[0].Body, &step)
		var wg sync.WaitGroup
		errs := make([]error, 2)
		for k := 0; k < 2; k++ {
			wg.Add(1)
			go func(k int) {
				defer wg.Done()
				errs[k] = h.eng.HandleStep(context.Background(), step, durable.Attempt{ReceiveCount: 1, Owner: fmt.Sprintf("%s/%d", ds[0].ReceiptHandle, k)})
			}(k)
		}
		wg.Wait()
		// A refused concurrent claim is retryable; deliver it again later.
		for _, err := range errs {
			if err != nil && !core.IsRetryable(err) {
				t.Fatal(err)
			}
			if err != nil {
				if err := h.eng.HandleStep(context.Background(), step, durable.Attempt{ReceiveCount: 2, Owner: ds[0].ReceiptHandle + "/retry"}); err != nil {
					t.Fatalf("retry: %v", err)
				}
			}
		}
		_ = h.q.Delete(context.Background(), ds[0].ReceiptHandle)
	}
	if ds, err := h.store.Deliveries(context.Background(), runID); err != nil || len(ds) == 0 {
		t.Fatalf("duplicated deliveries not noted: %+v, %v", ds, err)
	} else {
		for _, d := range ds {
			if d.Stale == 0 {
				t.Errorf("step %d (%s %s): a duplicate delivered concurrently, none noted stale: %+v", d.StepSeq, d.Kind, d.ToolCallID, d)
			}
		}
	}
	got := h.envelope(t, runID)
	if canon(t, got) != canon(t, want) {
		t.Fatalf("duplicated deliveries changed the envelope:\n got %s\nwant %s", canon(t, got), canon(t, want))
	}
	for id, n := range h.count.n {
		if n != 1 {
			t.Errorf("tool call %s executed %d times", id, n)
		}
	}
	if len(h.count.n) != 3 {
		t.Errorf("executed %d calls, want 3", len(h.count.n))
	}
}

// blockingModel lets a test hold a model call open.
func TestFencingRejectsAStaleWriter(t *testing.T) {
	h := newHarness(t, nil)
	release := make(chan struct{})
	entered := make(chan struct{}, 2)
	calls := 0
	var mu sync.Mutex
	h.model = modelFunc(func(ctx context.Context, r core.ModelRequest) (core.ModelReply, error) {
		mu.Lock()
		calls++
		first := calls == 1
		mu.Unlock()
		if first {
			entered <- struct{}{}
			<-release // the first worker stalls past its lease
		}
		return core.ScriptedModel{}.Complete(ctx, r)
	})
	runID := h.start(t, scripted(turn("Only once.")), nil)
	ds, _ := h.q.Receive(context.Background(), 1, 0)
	var step core.Step
	_ = json.Unmarshal(ds[0].Body, &step)
	done := make(chan error, 1)
	go func() {
		done <- h.eng.HandleStep(context.Background(), step, durable.Attempt{ReceiveCount: 1, Owner: "w1"})
	}()
	<-entered
	// The message is redelivered to a second worker, which completes.
	if err := h.eng.HandleStep(context.Background(), step, durable.Attempt{ReceiveCount: 2, Owner: "w2"}); err != nil {
		t.Fatal(err)
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatalf("stale worker: %v", err)
	}
	env := h.envelope(t, runID)
	n := 0
	for _, m := range env.Messages {
		if m.Role == core.RoleAssistant {
			n++
		}
	}
	if n != 1 || env.Status != core.StatusCompleted || env.TurnCount != 1 {
		t.Fatalf("stale writer changed the run: %d assistant messages, status %s, turns %d", n, env.Status, env.TurnCount)
	}
	// Both unusual deliveries are noted for the run's timeline: w2's (a
	// redelivery) and w1's (its outcome dropped as stale).
	snap, err := h.eng.Get(context.Background(), "acme", runID)
	if err != nil {
		t.Fatal(err)
	}
	v, err := h.eng.View(context.Background(), snap, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(v.Deliveries) != 1 {
		t.Fatalf("deliveries %+v, want one step's", v.Deliveries)
	}
	if d := v.Deliveries[0]; d.StepSeq != step.Seq || d.Kind != core.StepModelTurn || d.Turn != 1 || d.Redeliveries != 1 || d.Stale != 1 || d.LastAt.IsZero() {
		t.Fatalf("deliveries %+v, want step %d (model turn 1) redelivered once and stale once", d, step.Seq)
	}
	// The store itself refuses a commit from an old version.
	rec, _ := h.store.LoadRun(context.Background(), runID)
	err = h.store.Commit(context.Background(), core.Write{Tenant: "acme", PrevVersion: rec.State.Version - 1, Output: core.Output{State: rec.State}})
	if !errors.Is(err, core.ErrConflict) {
		t.Fatalf("commit from an old version: %v", err)
	}
}

// crashingStore fails the commit that records a given tool's result once,
// as if the worker died after the tool ran.
type crashingStore struct {
	durable.Store
	mu      sync.Mutex
	crashed bool
	tool    string
}

func (c *crashingStore) Commit(ctx context.Context, w core.Write) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, r := range w.Output.ToolResults {
		if r.ToolName == c.tool && !c.crashed {
			c.crashed = true
			return errors.New("worker crashed before recording the result")
		}
	}
	return c.Store.Commit(ctx, w)
}

func TestCrashBetweenExecutionAndRecord(t *testing.T) {
	for _, tc := range []struct {
		tool          string
		wantRuns      int
		wantErrorType string
	}{
		{"ability/charge", 1, core.ErrTypeInDoubt},
		{"ability/idempotent_charge", 2, ""},
	} {
		t.Run(tc.tool, func(t *testing.T) {
			cs := &crashingStore{tool: tc.tool}
			h := newHarness(t, func(s durable.Store) durable.Store { cs.Store = s; return cs })
			runID := h.start(t, scripted(turn("", call("c1", tc.tool, map[string]any{})), turn("done")), nil)
			ctx := context.Background()
			deliver := func(owner string, count int) error {
				ds, _ := h.q.Receive(ctx, 1, 0)
				if len(ds) == 0 {
					t.Fatal("no message")
				}
				var step core.Step
				_ = json.Unmarshal(ds[0].Body, &step)
				err := h.eng.HandleStep(ctx, step, durable.Attempt{ReceiveCount: count, Owner: owner})
				if err == nil {
					_ = h.q.Delete(ctx, ds[0].ReceiptHandle)
				}
				return err
			}
			if err := deliver("w1", 1); err != nil { // model turn
				t.Fatal(err)
			}
			if err := deliver("w2", 1); err == nil { // tool runs, commit "crashes"
				t.Fatal("crash not reported")
			}
			h.clock.T = h.clock.T.Add(2 * time.Hour) // visibility and intent lease pass
			if err := deliver("w3", 2); err != nil {
				t.Fatal(err)
			}
			h.pump(t)
			env := h.envelope(t, runID)
			if env.Status != core.StatusCompleted {
				t.Fatalf("status %s", env.Status)
			}
			if got := h.count.keys[runID+":c1"]; got != tc.wantRuns {
				t.Fatalf("executions with key %s:c1 = %d, want %d", runID, got, tc.wantRuns)
			}
			res := env.ToolExecutionResults[0].Result
			if res.ErrorType != tc.wantErrorType {
				t.Fatalf("result %+v, want error_type %q", res, tc.wantErrorType)
			}
		})
	}
}

func TestSessionLockAndTenantScoping(t *testing.T) {
	h := newHarness(t, nil)
	ctx := context.Background()
	clientTool := map[string]any{"name": "client/get_calendar", "description": "Calendar."}
	runID := h.start(t, scripted(turn("", call("c1", "client/get_calendar", nil)), turn("ok")), func(r *durable.StartRequest) { r.RequestTools = []any{clientTool} })
	h.pump(t)
	_, err := h.eng.Start(ctx, "acme", durable.StartRequest{Agent: "demo", SessionID: "s-1", Messages: userMsg("again")})
	if !errors.Is(err, durable.ErrSessionBusy) {
		t.Fatalf("second run on a paused session: %v", err)
	}
	// Another tenant's same session id is a separate session.
	other, err := h.eng.Start(ctx, "globex", durable.StartRequest{Agent: "demo", SessionID: "s-1", Messages: userMsg("mine"), Overrides: agents.Overrides{Model: scripted(turn("yours"))}})
	if err != nil {
		t.Fatal(err)
	}
	h.pump(t)
	if _, err := h.eng.Get(ctx, "globex", runID); !errors.Is(err, core.ErrNotFound) {
		t.Fatalf("other tenant read the run: %v", err)
	}
	rec, _ := h.eng.Get(ctx, "globex", other.State.RunID)
	v, _ := h.eng.View(ctx, rec, 0)
	if len(v.Result.Messages) != 2 {
		t.Fatalf("tenant sessions leaked: %+v", v.Result.Messages)
	}
	// Finish the first run; the session takes a new run, which sees the
	// whole transcript.
	if _, err := h.eng.Apply(ctx, "acme", runID, core.Cancel{}); err != nil {
		t.Fatal(err)
	}
	next, err := h.eng.Start(ctx, "acme", durable.StartRequest{Agent: "demo", SessionID: "s-1", Messages: userMsg("again"), Overrides: agents.Overrides{Model: scripted(turn("second"))}})
	if err != nil {
		t.Fatal(err)
	}
	h.pump(t)
	env := h.envelope(t, next.State.RunID)
	if len(env.Messages) != 5 || env.FinalContent != "second" {
		t.Fatalf("continued session: %d messages, final %q", len(env.Messages), env.FinalContent)
	}
	// A second decision on a decided item is a conflict.
	if _, err := h.eng.Apply(ctx, "acme", runID, core.Cancel{}); !errors.Is(err, durable.ErrFinished) {
		t.Fatalf("cancel after finish: %v", err)
	}
}

func TestExpiryBySweeperAndOnRead(t *testing.T) {
	h := newHarness(t, nil)
	ctx := context.Background()
	runID := h.start(t, scripted(turn("", call("c1", "client/get_calendar", nil)), turn("It expired.")), func(r *durable.StartRequest) {
		r.RequestTools = []any{map[string]any{"name": "client/get_calendar", "description": "Calendar."}}
	})
	h.pump(t)
	rec, _ := h.eng.Get(ctx, "acme", runID)
	reqs, _ := rec.State.Pending()
	h.clock.T = h.clock.T.Add(25 * time.Hour)
	n, err := h.eng.Sweep(ctx, 10)
	if err != nil || n != 1 {
		t.Fatalf("sweep: %d %v", n, err)
	}
	h.pump(t)
	env := h.envelope(t, runID)
	if env.Status != core.StatusCompleted || env.ToolExecutionResults[0].Result.ErrorType != core.ErrTypeTimedOut {
		t.Fatalf("after sweep: %s %+v", env.Status, env.ToolExecutionResults)
	}
	_, err = h.eng.Apply(ctx, "acme", runID, core.ClientResult{RequestID: reqs[0].RequestID, Success: true})
	if !errors.Is(err, durable.ErrFinished) && !errors.Is(err, durable.ErrAlreadyDecided) {
		t.Fatalf("late submit: %v", err)
	}
}

// countingStore counts the messages the runner reads.
type countingStore struct {
	durable.Store
	mu   sync.Mutex
	read []int
}

func (c *countingStore) Messages(ctx context.Context, tenant, session string, after, before int64, limit int) ([]core.Message, error) {
	m, err := c.Store.Messages(ctx, tenant, session, after, before, limit)
	c.mu.Lock()
	c.read = append(c.read, len(m))
	c.mu.Unlock()
	return m, err
}

func TestTranscriptCacheReadsOnlyNewMessages(t *testing.T) {
	cs := &countingStore{}
	h := newHarness(t, func(s durable.Store) durable.Store { cs.Store = s; return cs })
	var turns []core.ScriptedTurn
	for i := 1; i <= 6; i++ {
		turns = append(turns, turn("", call(fmt.Sprintf("c%d", i), "ability/search", map[string]any{"q": fmt.Sprint(i)})))
	}
	turns = append(turns, turn("done"))
	runID := h.start(t, scripted(turns...), nil)
	cs.read = nil
	h.pump(t)
	if env := h.envelope(t, runID); env.Status != core.StatusCompleted || len(env.Messages) != 14 {
		t.Fatalf("run: %s, %d messages", env.Status, len(env.Messages))
	}
	// The first step reads the run's first message; every later step finds
	// the messages the previous step committed already cached.
	if len(cs.read) != 1 || cs.read[0] != 1 {
		t.Fatalf("transcript reads: %v", cs.read)
	}
}

func TestToolResultsStoredOnce(t *testing.T) {
	h := newHarness(t, nil)
	runID := h.start(t, scripted(turn("", call("c1", "ability/search", map[string]any{"q": "big", "n": json.Number("12345678901234567890")})), turn("done")), nil)
	h.pump(t)
	stored, _, err := h.store.ToolRecords(context.Background(), runID, 0)
	if err != nil || len(stored) != 1 {
		t.Fatalf("records %v %v", stored, err)
	}
	if stored[0].ResultRef != "message_json" || stored[0].Result.Result != nil {
		t.Fatalf("the result body was stored twice: %+v", stored[0])
	}
	env := h.envelope(t, runID)
	got := env.ToolExecutionResults[0]
	if got.ResultRef != "" || canon(t, got.Result.Result) != `{"ok":{"n":12345678901234567890,"q":"big"}}` {
		t.Fatalf("restored result %+v", got)
	}
}

// recordReads counts the record reads a view makes.
type recordReads struct {
	countingStore
	events, records, deliveries int
}

func (c *recordReads) Deliveries(ctx context.Context, runID string) ([]core.StepDeliveries, error) {
	c.mu.Lock()
	c.deliveries++
	c.mu.Unlock()
	return c.Store.Deliveries(ctx, runID)
}

func (c *recordReads) Events(ctx context.Context, runID string, after, before int64, limit int) ([]core.Event, error) {
	c.mu.Lock()
	c.events++
	c.mu.Unlock()
	return c.Store.Events(ctx, runID, after, before, limit)
}

func (c *recordReads) ToolRecords(ctx context.Context, runID string, before int64) ([]core.ToolExecutionResult, []core.AuditEvent, error) {
	c.mu.Lock()
	c.records++
	c.mu.Unlock()
	return c.Store.ToolRecords(ctx, runID, before)
}

// TestViewsOfCommitsReadNothingBack: the view of what Start and Apply
// committed equals the view read from the store, and reads none of the
// records the commit itself wrote.
func TestViewsOfCommitsReadNothingBack(t *testing.T) {
	rr := &recordReads{}
	h := newHarness(t, func(s durable.Store) durable.Store { rr.Store = s; return rr })
	ctx := context.Background()
	viewJSON := func(s durable.Snapshot) string {
		t.Helper()
		v, err := h.eng.View(ctx, s, 0)
		if err != nil {
			t.Fatal(err)
		}
		return canon(t, v)
	}
	stored := func(runID string) string {
		t.Helper()
		s, err := h.eng.Get(ctx, "acme", runID)
		if err != nil {
			t.Fatal(err)
		}
		return viewJSON(s)
	}
	reads := func() (int, int, int) {
		rr.mu.Lock()
		defer rr.mu.Unlock()
		return len(rr.read), rr.events, rr.records + rr.deliveries
	}

	// A new session: the first view needs no read at all.
	snap, err := h.eng.Start(ctx, "acme", durable.StartRequest{Agent: "demo", SessionID: "s-1", Messages: userMsg("hi"),
		Overrides: agents.Overrides{Model: scripted(turn("", call("c1", "ability/send_email", map[string]any{"to": "a"})), turn("sent"))}})
	if err != nil {
		t.Fatal(err)
	}
	if len(snap.Written.Messages) != 1 || len(snap.Written.Events) == 0 {
		t.Fatalf("start wrote %d messages, %d events", len(snap.Written.Messages), len(snap.Written.Events))
	}
	m0, e0, r0 := reads()
	fromCommit := viewJSON(snap)
	if m, e, r := reads(); m != m0 || e != e0 || r != r0 {
		t.Fatalf("the first view read the store: %d message, %d event, %d record reads", m-m0, e-e0, r-r0)
	}
	if want := stored(snap.State.RunID); fromCommit != want {
		t.Fatalf("view of the start commit\n%s\nwant\n%s", fromCommit, want)
	}

	// An approval: the view of its commit equals the stored view.
	h.pump(t)
	g, err := h.eng.Get(ctx, "acme", snap.State.RunID)
	if err != nil {
		t.Fatal(err)
	}
	_, acts := g.State.Pending()
	if g.State.Status != core.StatusApprovalRequired || len(acts) != 1 {
		t.Fatalf("want a pending approval, got %s %v", g.State.Status, acts)
	}
	// A delivery note of the model turn: a later commit's view reads it.
	if err := rr.NoteDelivery(ctx, snap.State.RunID, core.DeliveryNote{Step: core.Step{Kind: core.StepModelTurn, RunID: snap.State.RunID, Seq: 1},
		Turn: 1, Redelivered: true, At: time.Unix(100, 0)}); err != nil {
		t.Fatal(err)
	}
	snap, err = h.eng.Apply(ctx, "acme", snap.State.RunID, core.ApprovalDecision{ActionID: acts[0].ActionID, Decision: "accept"})
	if err != nil {
		t.Fatal(err)
	}
	if len(snap.Written.Events) == 0 {
		t.Fatal("the approval wrote no event")
	}
	if v, err := h.eng.View(ctx, snap, 0); err != nil || len(v.Deliveries) != 1 {
		t.Fatalf("the approval's view: deliveries %+v, %v", v.Deliveries, err)
	}
	if got, want := viewJSON(snap), stored(snap.State.RunID); got != want {
		t.Fatalf("view of the approval commit\n%s\nwant\n%s", got, want)
	}

	// A second run on the session: earlier messages are read, its own are not.
	h.pump(t)
	snap, err = h.eng.Start(ctx, "acme", durable.StartRequest{Agent: "demo", SessionID: "s-1", Messages: userMsg("again"),
		Overrides: agents.Overrides{Model: scripted(turn("ok"))}})
	if err != nil {
		t.Fatal(err)
	}
	m0, e0, r0 = reads()
	fromCommit = viewJSON(snap)
	if _, e, r := reads(); e != e0 || r != r0 {
		t.Fatalf("the second run's first view read %d event and %d record pages", e-e0, r-r0)
	}
	if want := stored(snap.State.RunID); fromCommit != want {
		t.Fatalf("view of the second start\n%s\nwant\n%s", fromCommit, want)
	}
}

// TestCompactionSummaryRetriedLikeAModelTurn: a retryable error of the
// summary call retries the step (nothing is committed but the retry's
// model_retry event), as for a model turn; on the last receive the failure
// is applied: compaction_failed, the transcript as it was, and the turn
// goes on.
func TestCompactionSummaryRetriedLikeAModelTurn(t *testing.T) {
	for _, tc := range []struct {
		name string
		// fails is how many summary calls fail with a retryable error.
		fails int
		// count is the receive count of the first delivery.
		count   int
		wantErr bool
		want    string
	}{
		{"retried, then written", 1, 1, true, core.EventCompactionCompleted},
		{"failed on the last receive", 99, 5, false, core.EventCompactionFailed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, nil)
			summaryCalls := 0
			h.model = modelFunc(func(ctx context.Context, r core.ModelRequest) (core.ModelReply, error) {
				if r.Purpose == core.PurposeSummary {
					summaryCalls++
					if summaryCalls <= tc.fails {
						core.NotifyModelRetry(ctx, core.ModelRetry{Provider: r.Model.Provider, Attempt: 1, Status: 503})
						return core.ModelReply{}, core.Retryable(errors.New("summary model unavailable"))
					}
				}
				return core.ScriptedModel{}.Complete(ctx, r)
			})
			runID := h.start(t, scripted(turn("Done.")), func(r *durable.StartRequest) { r.Agent, r.Messages = "compact", session(5) })
			ctx := context.Background()
			ds, _ := h.q.Receive(ctx, 1, 0)
			var step core.Step
			_ = json.Unmarshal(ds[0].Body, &step)
			err := h.eng.HandleStep(ctx, step, durable.Attempt{ReceiveCount: tc.count, Owner: "w1"})
			if (err != nil) != tc.wantErr || (err != nil && !core.IsRetryable(err)) {
				t.Fatalf("first delivery: err %v, want a retryable error: %v", err, tc.wantErr)
			}
			if err == nil {
				_ = h.q.Delete(ctx, ds[0].ReceiptHandle)
			} else {
				rec, _ := h.eng.Get(ctx, "acme", runID)
				if rec.State.ModelStep != step.Seq || rec.State.CompactTurn != 0 {
					t.Fatalf("a retried summary step committed an outcome: %+v", rec.State)
				}
				if err := h.eng.HandleStep(ctx, step, durable.Attempt{ReceiveCount: tc.count + 1, Owner: "w2"}); err != nil {
					t.Fatal(err)
				}
				_ = h.q.Delete(ctx, ds[0].ReceiptHandle)
			}
			h.pump(t)
			env := h.envelope(t, runID)
			var types []string
			for _, ev := range env.Events {
				if ev.Type == core.EventModelRetry || strings.HasPrefix(ev.Type, "compaction_") {
					types = append(types, ev.Type)
				}
			}
			if want := fmt.Sprint([]string{core.EventModelRetry, core.EventCompactionStarted, tc.want}); fmt.Sprint(types) != want || env.Status != core.StatusCompleted {
				t.Fatalf("events %v, want %s; status %s", types, want, env.Status)
			}
			summaries := 0
			for _, m := range env.Messages {
				if m.Metadata["source"] == "compaction" {
					summaries++
				}
			}
			if wantSummaries := map[bool]int{true: 1, false: 0}[tc.want == core.EventCompactionCompleted]; summaries != wantSummaries || len(env.Messages) != 6+wantSummaries {
				t.Fatalf("%d summaries in %d messages", summaries, len(env.Messages))
			}
		})
	}
}

// TestEventsLongPoll: Events returns at once when there are events after
// the cursor (one read), and reads again while there are none and the
// run is not finished.
func TestEventsLongPoll(t *testing.T) {
	rr := &recordReads{}
	h := newHarness(t, func(s durable.Store) durable.Store { rr.Store = s; return rr })
	ctx := context.Background()
	snap, err := h.eng.Start(ctx, "acme", durable.StartRequest{Agent: "demo", SessionID: "s-1", Messages: userMsg("hi"),
		Overrides: agents.Overrides{Model: scripted(turn("hello"))}})
	if err != nil {
		t.Fatal(err)
	}
	// Not pumped: the run is queued, its start's events stored.
	events := func(after int64, wait time.Duration) ([]core.Event, int) {
		t.Helper()
		rr.mu.Lock()
		before := rr.events
		rr.mu.Unlock()
		evs, err := h.eng.Events(ctx, "acme", snap.State.RunID, after, 100, wait)
		if err != nil {
			t.Fatal(err)
		}
		rr.mu.Lock()
		defer rr.mu.Unlock()
		return evs, rr.events - before
	}
	if evs, n := events(0, 5*time.Second); len(evs) == 0 || n != 1 {
		t.Fatalf("with events to return: %d events after %d reads, want some after one", len(evs), n)
	}
	if evs, n := events(snap.State.NextEventSeq-1, 2*time.Second); len(evs) != 0 || n < 2 {
		t.Fatalf("with none yet: %d events after %d reads, want none after two or more", len(evs), n)
	}
}
