package worker_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/baton-agents/baton/core"
	"github.com/baton-agents/baton/internal/agents"
	"github.com/baton-agents/baton/internal/app"
	"github.com/baton-agents/baton/internal/durable"
	"github.com/baton-agents/baton/internal/memstore"
)

// faultyStore fails the loads or the commits of the runs named in it, as
// a store that times out would.
type faultyStore struct {
	durable.Store
	mu            sync.Mutex
	loads, writes map[string]bool
	// after: a run's commits fail once this many more have landed.
	after map[string]int
}

// failCommitsAfter fails the run's commits once n more have landed.
func (f *faultyStore) failCommitsAfter(run string, n int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.after == nil {
		f.after = map[string]int{}
	}
	f.after[run] = n
}

func (f *faultyStore) failing(m map[string]bool, run string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return m[run]
}

func (f *faultyStore) set(m map[string]bool, run string, on bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	m[run] = on
}

func (f *faultyStore) LoadRun(ctx context.Context, id string) (core.RunRecord, error) {
	if f.failing(f.loads, id) {
		return core.RunRecord{}, core.Retryable(context.DeadlineExceeded)
	}
	return f.Store.LoadRun(ctx, id)
}

func (f *faultyStore) Commit(ctx context.Context, w core.Write) error {
	run := w.Output.State.RunID
	f.mu.Lock()
	if n, ok := f.after[run]; ok {
		if n == 0 {
			delete(f.after, run)
			f.writes[run] = true
		} else {
			f.after[run] = n - 1
		}
	}
	f.mu.Unlock()
	if f.failing(f.writes, run) {
		return core.Retryable(fmt.Errorf("commit: %w", context.DeadlineExceeded))
	}
	return f.Store.Commit(ctx, w)
}

const batchAgents = `{"agents":[{"slug":"a","model":{"provider":"scripted"},"allow_overrides":["model","parallel_tool_calls"],
 "tools":[{"name":"pay/charge","source":"pay","description":"Charge a card (not retry-safe).","executor":{"type":"go","handler":"charge"}}]}]}`

// batchEnv is an app on the embedded stores with a fixed clock, a
// faulty store and a counted charge tool.
type batchEnv struct {
	a       *app.App
	store   *faultyStore
	clock   *core.FixedClock
	q       *memstore.StepQueue
	mu      sync.Mutex
	charges map[string]int
	// sent counts the steps sent through the queue, by run; while
	// dropSends, sends fail.
	sent      map[string]int
	dropSends bool
}

// countingQueue counts the steps sent.
type countingQueue struct {
	app.Queue
	e *batchEnv
}

func (q *countingQueue) Enqueue(ctx context.Context, steps []core.QueuedStep) error {
	q.e.mu.Lock()
	if q.e.dropSends {
		q.e.mu.Unlock()
		return core.Retryable(context.DeadlineExceeded)
	}
	for _, s := range steps {
		q.e.sent[s.Step.RunID]++
	}
	q.e.mu.Unlock()
	return q.Queue.Enqueue(ctx, steps)
}

// newBatchEnv is a worker whose every step goes through the queue;
// newChainEnv's chains them.
func newBatchEnv(t *testing.T) *batchEnv { return newChainEnv(t, app.Chain{Off: true}) }

func newChainEnv(t *testing.T, chain app.Chain) *batchEnv {
	t.Helper()
	e := &batchEnv{clock: &core.FixedClock{T: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}, charges: map[string]int{}, sent: map[string]int{}}
	a, err := app.Build(context.Background(), app.Config{Stores: app.Stores{Memory: true, Visibility: time.Minute}, Agents: app.Agents{JSON: batchAgents},
		Providers: []string{"scripted"}, ExecuteTools: true, MaxReceives: 3, Chain: chain},
		app.Deps{Clock: e.clock, IDs: &core.SequentialIDs{}, Log: slog.New(slog.DiscardHandler),
			ToolHandlers: map[string]app.ToolHandler{"charge": func(_ context.Context, c core.ToolCall) (any, error) {
				e.mu.Lock()
				e.charges[c.ToolCallID]++
				e.mu.Unlock()
				return map[string]any{"charged": true}, nil
			}},
			WrapStore: func(s durable.Store) durable.Store {
				e.store = &faultyStore{Store: s, loads: map[string]bool{}, writes: map[string]bool{}}
				return e.store
			},
			WrapQueue: func(q app.Queue) app.Queue { return &countingQueue{Queue: q, e: e} }})
	if err != nil {
		t.Fatal(err)
	}
	e.a, e.q = a, a.Steps.(*countingQueue).Queue.(*memstore.StepQueue)
	return e
}

// start starts a run of the scripted model on a session of its own.
func (e *batchEnv) start(t *testing.T, session string, turns ...core.ScriptedTurn) string {
	t.Helper()
	return e.startWith(t, session, agents.Overrides{}, turns...)
}

// startWith is start with overrides.
func (e *batchEnv) startWith(t *testing.T, session string, o agents.Overrides, turns ...core.ScriptedTurn) string {
	t.Helper()
	m := core.ModelSpec{Provider: core.ProviderScripted, Turns: turns}
	o.Model = &m
	rec, err := e.a.Runner.Start(context.Background(), "acme", durable.StartRequest{Agent: "a", SessionID: session,
		Messages: []core.Message{{Role: core.RoleUser, Content: "go"}}, Overrides: o})
	if err != nil {
		t.Fatal(err)
	}
	return rec.State.RunID
}

// batch receives up to ten messages and hands them to the worker as the
// event source mapping does; it deletes those not reported failed and
// returns the failed ones' run ids.
func (e *batchEnv) batch(t *testing.T) (received []string, failed []string) {
	t.Helper()
	return e.batchIn(t, context.Background())
}

// batchIn is batch in an invocation of ctx (its deadline).
func (e *batchEnv) batchIn(t *testing.T, ctx context.Context) (received []string, failed []string) {
	t.Helper()
	ds, err := e.q.Receive(context.Background(), 10, 0)
	if err != nil {
		t.Fatal(err)
	}
	ev := events.SQSEvent{}
	run := map[string]string{}
	for _, d := range ds {
		var s core.Step
		_ = json.Unmarshal(d.Body, &s)
		run[d.MessageID] = s.RunID
		received = append(received, s.RunID)
		ev.Records = append(ev.Records, events.SQSMessage{MessageId: d.MessageID, ReceiptHandle: d.ReceiptHandle, Body: string(d.Body),
			Attributes: map[string]string{"ApproximateReceiveCount": strconv.Itoa(d.ReceiveCount), "MessageGroupId": d.Group}})
	}
	resp, err := e.a.Worker.Handle(ctx, ev)
	if err != nil {
		t.Fatal(err)
	}
	bad := map[string]bool{}
	for _, f := range resp.BatchItemFailures {
		bad[f.ItemIdentifier] = true
		failed = append(failed, run[f.ItemIdentifier])
	}
	for _, d := range ds {
		if !bad[d.MessageID] {
			if err := e.q.Delete(context.Background(), d.ReceiptHandle); err != nil {
				t.Fatal(err)
			}
		}
	}
	return received, failed
}

func (e *batchEnv) status(t *testing.T, runID string) core.RunStatus {
	t.Helper()
	snap, err := e.a.Runner.Get(context.Background(), "acme", runID)
	if err != nil {
		t.Fatal(err)
	}
	return snap.State.Status
}

// TestBatchFailureAtEachPosition: in a batch of five steps of five runs,
// a step that fails at any position is the one failure the batch
// reports; the other four steps are processed (their runs complete).
func TestBatchFailureAtEachPosition(t *testing.T) {
	for p := range 5 {
		t.Run(fmt.Sprintf("position %d", p), func(t *testing.T) {
			e := newBatchEnv(t)
			var runs []string
			for i := range 5 {
				runs = append(runs, e.start(t, fmt.Sprintf("s-%d", i), core.ScriptedTurn{Content: "done"}))
			}
			e.store.set(e.store.loads, runs[p], true)
			received, failed := e.batch(t)
			if strings.Join(received, ",") != strings.Join(runs, ",") {
				t.Fatalf("received %v, want the five runs' steps in order %v", received, runs)
			}
			if len(failed) != 1 || failed[0] != runs[p] {
				t.Fatalf("failures %v, want exactly %s", failed, runs[p])
			}
			e.store.set(e.store.loads, runs[p], false)
			for i, r := range runs {
				want := core.RunStatus(core.StatusCompleted)
				if i == p {
					want = core.StatusQueued
				}
				if got := e.status(t, r); got != want {
					t.Errorf("run %d: %s, want %s", i, got, want)
				}
			}
		})
	}
}

// TestPoisonStepDeadLettersAndRedriveChargesOnce: a tool step whose
// commit keeps failing after the tool ran is received MaxReceives times
// and then dead-lettered; the dead letter holds no tool parameter (no
// secret); redriven once the store is healthy, it records the charge's
// outcome as in doubt instead of charging again, and the run ends.
func TestPoisonStepDeadLettersAndRedriveChargesOnce(t *testing.T) {
	e := newBatchEnv(t)
	const canary = "sk_live_canary_4242"
	run := e.start(t, "s-poison",
		core.ScriptedTurn{ToolCalls: []core.ToolCallRequest{{ID: "c1", Name: "pay/charge", Parameters: map[string]any{"amount": 5, "api_key": canary}}}},
		core.ScriptedTurn{Content: "done"})
	if _, failed := e.batch(t); len(failed) != 0 { // the model turn
		t.Fatalf("model turn failed: %v", failed)
	}
	e.store.set(e.store.writes, run, true)
	for receive := 1; receive <= 3; receive++ {
		received, failed := e.batch(t)
		if len(received) != 1 || len(failed) != 1 {
			t.Fatalf("receive %d: received %v, failed %v", receive, received, failed)
		}
		e.clock.T = e.clock.T.Add(10 * time.Minute) // past the visibility timeout and the intent's lease
	}
	if received, _ := e.batch(t); len(received) != 0 {
		t.Fatalf("the poison step was received a fourth time: %v", received)
	}
	dead := e.q.Dead()
	if len(dead) != 1 || dead[0].ReceiveCount != 3 {
		t.Fatalf("dead letters %+v", dead)
	}
	if b := string(dead[0].Body); strings.Contains(b, canary) || strings.Contains(b, "api_key") {
		t.Fatalf("the dead letter holds the tool's parameters: %s", b)
	}
	if n := e.charges["c1"]; n != 1 {
		t.Fatalf("charged %d times before the redrive", n)
	}

	// The store is healthy again; an operator redrives the dead letter.
	e.store.set(e.store.writes, run, false)
	var step core.Step
	if err := json.Unmarshal(dead[0].Body, &step); err != nil {
		t.Fatal(err)
	}
	if err := e.q.Enqueue(context.Background(), []core.QueuedStep{{Step: step, Group: dead[0].Group, DedupID: dead[0].MessageID + "-redrive"}}); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 5 && e.status(t, run) != core.StatusCompleted; i++ {
		e.batch(t)
	}
	if st := e.status(t, run); st != core.StatusCompleted {
		t.Fatalf("after the redrive the run is %s", st)
	}
	if n := e.charges["c1"]; n != 1 {
		t.Fatalf("charged %d times, want once", n)
	}
	snap, _ := e.a.Runner.Get(context.Background(), "acme", run)
	v, err := e.a.Runner.View(context.Background(), snap, 0)
	if err != nil {
		t.Fatal(err)
	}
	res := v.Result.ToolExecutionResults
	if len(res) != 1 || !strings.Contains(canon(res[0].Result), "in_doubt") {
		t.Fatalf("the charge's recorded outcome: %+v", res)
	}
}

func canon(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
