package durable_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/baton-agents/baton/core"
	"github.com/baton-agents/baton/internal/durable"
	"github.com/baton-agents/baton/internal/telemetry"
)

// TestChainedStepRenewsItsLease: a step held by its invocation whose
// tool runs past the deployment's lease beats every third of the lease,
// each beat renewing it, so the sweeper never sends the step of a live
// worker; it runs from the committed run (no read) and its result says
// it was chained.
func TestChainedStepRenewsItsLease(t *testing.T) {
	ctx := context.Background()
	const term = 30 * time.Second
	loads := 0
	h := newHarness(t, func(s durable.Store) durable.Store { return &loadCounter{Store: s, loads: &loads} })
	h.opts.Limits.ChainLease = term
	h.eng = durable.New(h.opts)
	q := &countingQueue{StepQueue: h.q}
	h.eng.Queue = q
	tick := make(chan time.Time)
	var paces []time.Duration
	durable.SetHeartbeatTimer(h.eng, func(d time.Duration) <-chan time.Time { paces = append(paces, d); return tick })
	runID := h.start(t, scripted(turn("", call("c1", "ability/search", map[string]any{"q": "x"})), turn("done")), nil)
	h.count.hook = func(core.ToolCall) {
		for range 3 { // 75 s in all: well past the term
			h.clock.T = h.clock.T.Add(term * 5 / 6)
			v := h.version(t, runID)
			tick <- h.clock.T
			h.waitVersion(t, runID, v+1)
			before := q.count()
			if _, err := h.eng.Sweep(ctx, 10); err != nil {
				t.Fatal(err)
			}
			if q.count() != before {
				t.Errorf("the sweeper sent the step of a live chained worker at %s", h.clock.T.Sub(t0))
			}
		}
	}
	chain := h.chainNext(t)
	step, d, ok := chain.Next()
	if !ok || step.Kind != core.StepToolCall || !d.Chained() {
		t.Fatalf("held %+v %v", step, ok)
	}
	if _, _, again := chain.Next(); again {
		t.Fatal("Next gave the held step twice")
	}
	loadsBefore, pacesBefore := loads, len(paces)
	if err := h.eng.HandleStep(ctx, step, d); err != nil {
		t.Fatal(err)
	}
	held := paces[pacesBefore:]
	if loads != loadsBefore {
		t.Errorf("the chained step read its run %d times, want none", loads-loadsBefore)
	}
	for _, p := range held {
		if p != term/3 {
			t.Errorf("a held step's heartbeat paced at %s, want a third of its lease", p)
		}
	}
	if len(held) == 0 {
		t.Fatal("no heartbeat")
	}
	h.pump(t)
	if env := h.envelope(t, runID); env.Status != core.StatusCompleted || h.count.n["c1"] != 1 {
		t.Fatalf("run %s, executions %v", env.Status, h.count.n)
	}
	evs, _ := h.eng.Events(ctx, "acme", runID, 0, 1000, 0)
	for _, ev := range evs {
		if d, ok := ev.Data.(*core.ToolResultData); ok && !d.Chained {
			t.Errorf("tool_result of a chained step not marked: %+v", d)
		}
	}
}

// loadCounter counts run reads.
type loadCounter struct {
	durable.Store
	loads *int
}

func (l *loadCounter) LoadRun(ctx context.Context, id string) (core.RunRecord, error) {
	*l.loads++
	return l.Store.LoadRun(ctx, id)
}

// stepOf decodes a received step message.
func stepOf(t *testing.T, m core.ReceivedMessage) core.Step {
	t.Helper()
	var s core.Step
	if err := json.Unmarshal(m.Body, &s); err != nil {
		t.Fatal(err)
	}
	return s
}

// TestHandOff: a held step its invocation gives up is sent through the
// queue, where it is delivered and runs; an attempt that holds nothing
// sends nothing.
func TestHandOff(t *testing.T) {
	ctx := context.Background()
	h := newHarness(t, nil)
	q := &countingQueue{StepQueue: h.q}
	h.eng.Queue = q
	runID := h.start(t, scripted(turn("", call("c1", "ability/search", map[string]any{"q": "x"})), turn("done")), nil)
	chain := h.chainNext(t)
	before := q.count()
	h.eng.HandOff(ctx, core.Step{}, durable.Attempt{})
	if q.count() != before {
		t.Fatal("an attempt holding nothing sent a step")
	}
	step, d, ok := chain.Next()
	if !ok {
		t.Fatal("nothing held")
	}
	h.eng.HandOff(ctx, step, d)
	got, err := h.q.Receive(ctx, 1, 0)
	if err != nil || len(got) != 1 || stepOf(t, got[0]).Seq != step.Seq || stepOf(t, got[0]).Kind != core.StepToolCall {
		t.Fatalf("the handed-off step: %v %+v", err, got)
	}
	_ = h.q.ExtendVisibility(ctx, got[0].ReceiptHandle, 0)
	h.pump(t)
	if env := h.envelope(t, runID); env.Status != core.StatusCompleted || h.count.n["c1"] != 1 {
		t.Fatalf("run %s, executions %v", env.Status, h.count.n)
	}
}

// TestChainedStepSpans: a step's span says how it came, queued or
// chained.
func TestChainedStepSpans(t *testing.T) {
	ctx := context.Background()
	h := newHarness(t, nil)
	rec := tracetest.NewSpanRecorder()
	h.opts.Telemetry = telemetry.Settings{Provider: sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))}
	h.eng = durable.New(h.opts)
	h.start(t, scripted(turn("", call("c1", "ability/search", map[string]any{"q": "x"})), turn("done")), nil)
	chain := h.chainNext(t)
	step, d, _ := chain.Next()
	if err := h.eng.HandleStep(ctx, step, d); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range rec.Ended() {
		if !strings.HasPrefix(s.Name(), "step ") {
			continue
		}
		for _, kv := range s.Attributes() {
			if kv.Key == "baton.step.delivery" {
				got = append(got, s.Name()+" "+kv.Value.AsString())
			}
		}
	}
	if strings.Join(got, ", ") != "step model_turn queued, step tool_call chained" {
		t.Fatalf("step spans %v", got)
	}
}

// TestHeldStepWithoutALease: with no lease set (Limits.ChainLease zero),
// a held step's heartbeats keep the stall period's pace.
func TestHeldStepWithoutALease(t *testing.T) {
	ctx := context.Background()
	h := newHarness(t, nil)
	var paces []time.Duration
	durable.SetHeartbeatTimer(h.eng, func(d time.Duration) <-chan time.Time { paces = append(paces, d); return nil })
	h.start(t, scripted(turn("", call("c1", "ability/search", map[string]any{"q": "x"})), turn("done")), nil)
	chain := h.chainNext(t)
	step, d, ok := chain.Next()
	if !ok {
		t.Fatal("nothing held")
	}
	paces = nil
	if err := h.eng.HandleStep(ctx, step, d); err != nil {
		t.Fatal(err)
	}
	if len(paces) == 0 {
		t.Fatal("no heartbeat timer")
	}
	for _, p := range paces {
		if p != stallAfter/2 {
			t.Fatalf("a held step without a lease beats every %s, want half the stall period", p)
		}
	}
}

// chainNext delivers the next step message to the runner as a worker
// that may chain does, acknowledges it and returns its chain (which holds
// the run's next step, if its commit held one).
func (h *harness) chainNext(t *testing.T) *durable.Chain {
	t.Helper()
	ctx := context.Background()
	ds, err := h.q.Receive(ctx, 1, 0)
	if err != nil || len(ds) != 1 {
		t.Fatalf("receive: %v %d", err, len(ds))
	}
	chain := &durable.Chain{Owner: "inv-1"}
	if err := h.eng.HandleStep(ctx, stepOf(t, ds[0]), durable.Attempt{ReceiveCount: 1, Owner: "inv-1", Chain: chain}); err != nil {
		t.Fatal(err)
	}
	_ = h.q.Delete(ctx, ds[0].ReceiptHandle)
	return chain
}
