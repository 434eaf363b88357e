package durable_test

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/baton-agents/baton/core"
	"github.com/baton-agents/baton/internal/durable"
)

// countingQueue counts the step messages the runner sends.
type countingQueue struct {
	core.StepQueue
	mu   sync.Mutex
	sent int
}

func (q *countingQueue) Enqueue(ctx context.Context, steps []core.QueuedStep) error {
	q.mu.Lock()
	q.sent += len(steps)
	q.mu.Unlock()
	return q.StepQueue.Enqueue(ctx, steps)
}

func (q *countingQueue) count() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.sent
}

const stallAfter = 2 * time.Minute // the runner's default

// TestInFlightStepsAreNotStalled: while a step's model call is retried
// in process, or its model or tool call runs long, the worker's
// model_retry and heartbeat commits keep the sweeper from sending the
// step again; a step whose worker crashed is sent again after
// StallAfter.
func TestInFlightStepsAreNotStalled(t *testing.T) {
	cases := []struct {
		name string
		// retries are the model call's in-process retries; ticks the
		// heartbeats while the model call (or, with tool, the tool call)
		// runs. Before each, the clock moves on 3/4 of StallAfter, so the
		// step would be stalled without them.
		retries, ticks int
		tool           bool
		// crash: the step is received and never handled.
		crash bool
	}{
		{name: "model call retried", retries: 3},
		{name: "long model call", ticks: 2},
		{name: "model call retried and long", retries: 1, ticks: 2},
		{name: "long tool call", ticks: 3, tool: true},
		{name: "crashed worker", crash: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			h := newHarness(t, nil)
			q := &countingQueue{StepQueue: h.q}
			h.eng.Queue = q
			tick := make(chan time.Time)
			var paces []time.Duration
			durable.SetHeartbeatTimer(h.eng, func(d time.Duration) <-chan time.Time { paces = append(paces, d); return tick })
			var runID string
			// progress moves the clock on, lets the worker prove it is
			// alive (do), and sweeps: nothing may be sent again.
			progress := func(do func()) {
				h.clock.T = h.clock.T.Add(stallAfter * 3 / 4)
				do()
				before := q.count()
				if _, err := h.eng.Sweep(ctx, 10); err != nil {
					t.Fatal(err)
				}
				if n := q.count() - before; n != 0 {
					t.Errorf("sweep at %s sent %d steps of a live worker again", h.clock.T.Sub(t0), n)
				}
			}
			heartbeat := func() {
				progress(func() {
					v := h.version(t, runID)
					tick <- h.clock.T
					h.waitVersion(t, runID, v+1)
				})
			}
			var turns []core.ScriptedTurn
			if tc.tool {
				turns = append(turns, turn("", call("c1", "ability/search", map[string]any{"q": "x"})))
				h.count.hook = func(core.ToolCall) {
					for range tc.ticks {
						heartbeat()
					}
				}
			}
			turns = append(turns, turn("done"))
			h.model = modelFunc(func(ctx context.Context, r core.ModelRequest) (core.ModelReply, error) {
				if r.Turn == 1 {
					for i := 1; i <= tc.retries; i++ {
						progress(func() {
							core.NotifyModelRetry(ctx, core.ModelRetry{Provider: "fake", Attempt: i, Status: 429, Code: "rate_limit_exceeded", Wait: time.Duration(i) * time.Second})
						})
					}
					if !tc.tool {
						for range tc.ticks {
							heartbeat()
						}
					}
				}
				return core.ScriptedModel{}.Complete(ctx, r)
			})
			runID = h.start(t, scripted(turns...), nil)
			if tc.crash {
				ds, err := h.q.Receive(ctx, 1, 0)
				if err != nil || len(ds) != 1 {
					t.Fatalf("receive: %v %d", err, len(ds))
				}
				before := q.count()
				h.clock.T = h.clock.T.Add(stallAfter - time.Second)
				if _, err := h.eng.Sweep(ctx, 10); err != nil || q.count() != before {
					t.Fatalf("sweep before StallAfter: %v, sent %d", err, q.count()-before)
				}
				h.clock.T = h.clock.T.Add(time.Second)
				if _, err := h.eng.Sweep(ctx, 10); err != nil {
					t.Fatal(err)
				}
				if n := q.count() - before; n != 1 {
					t.Fatalf("sweep after StallAfter sent %d steps, want the crashed worker's step again", n)
				}
				return
			}
			h.pump(t)
			if env := h.envelope(t, runID); env.Status != core.StatusCompleted || env.FinalContent != "done" {
				t.Fatalf("run: %s %q", env.Status, env.FinalContent)
			}
			evs, err := h.eng.Events(ctx, "acme", runID, 0, 1000, 0)
			if err != nil {
				t.Fatal(err)
			}
			var retries []core.Event
			for i, ev := range evs {
				if i > 0 && ev.Seq != evs[i-1].Seq+1 {
					t.Errorf("event seqs not contiguous: %d after %d", ev.Seq, evs[i-1].Seq)
				}
				if ev.Type == core.EventModelRetry {
					retries = append(retries, ev)
				}
			}
			if len(retries) != tc.retries {
				t.Fatalf("%d model_retry events, want %d", len(retries), tc.retries)
			}
			for i, ev := range retries {
				// Compare as JSON, as the events endpoint serves them.
				b, _ := json.Marshal(ev.Data)
				want, _ := json.Marshal(map[string]any{"provider": "fake", "attempt": i + 1, "status": 429, "code": "rate_limit_exceeded", "wait": (time.Duration(i+1) * time.Second).String()})
				if string(b) != string(want) || ev.Turn != 1 {
					t.Errorf("model_retry %d: turn %d data %s, want %s", i, ev.Turn, b, want)
				}
			}
			for _, d := range paces {
				if d != stallAfter/2 {
					t.Errorf("heartbeat paced at %s, want StallAfter/2", d)
				}
			}
		})
	}
}

func (h *harness) version(t *testing.T, runID string) int64 {
	t.Helper()
	rec, err := h.store.LoadRun(context.Background(), runID)
	if err != nil {
		t.Fatal(err)
	}
	return rec.State.Version
}

// waitVersion waits until the run's version reaches v (a heartbeat
// commits on the worker's own goroutine).
func (h *harness) waitVersion(t *testing.T, runID string, v int64) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for h.version(t, runID) < v {
		if time.Now().After(deadline) {
			t.Fatalf("run version never reached %d", v)
		}
		time.Sleep(time.Millisecond)
	}
}
