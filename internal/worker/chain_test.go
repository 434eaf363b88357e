package worker_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/baton-agents/baton/core"
	"github.com/baton-agents/baton/internal/agents"
	"github.com/baton-agents/baton/internal/app"
)

// charge is a scripted turn that calls pay/charge once.
func charge(id string) core.ScriptedTurn {
	return core.ScriptedTurn{ToolCalls: []core.ToolCallRequest{{ID: id, Name: "pay/charge", Parameters: map[string]any{"amount": 1, "ref": id}}}}
}

// chainedFlags are, in order, the chained marks of a run's turn_started
// and tool_result events ("T" chained, "q" queued).
func (e *batchEnv) chainedFlags(t *testing.T, run string) string {
	t.Helper()
	evs, err := e.a.Store.Events(context.Background(), run, 0, 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	out := ""
	for _, ev := range evs {
		if ev.Type != core.EventTurnStarted && ev.Type != core.EventToolResult {
			continue
		}
		if b, _ := json.Marshal(ev.Data); strings.Contains(string(b), `"chained":true`) {
			out += "T"
		} else {
			out += "q"
		}
	}
	return out
}

// TestChainRunsARunInOneInvocation: a run of three turns and two tool
// calls is one message: the worker that handles its first step
// continues each next one in the invocation, and the events say which
// steps were chained.
func TestChainRunsARunInOneInvocation(t *testing.T) {
	e := newChainEnv(t, app.Chain{})
	run := e.start(t, "s-1", charge("c1"), charge("c2"), core.ScriptedTurn{Content: "done"})
	if received, failed := e.batch(t); len(received) != 1 || len(failed) != 0 {
		t.Fatalf("received %v, failed %v", received, failed)
	}
	if st := e.status(t, run); st != core.StatusCompleted {
		t.Fatalf("run %s after one message", st)
	}
	if n := e.sent[run]; n != 1 {
		t.Fatalf("%d steps went through the queue, want 1 (the first)", n)
	}
	if got := e.chainedFlags(t, run); got != "qTTTT" {
		t.Fatalf("turn_started/tool_result chained marks %q, want qTTTT", got)
	}
	if e.charges["c1"] != 1 || e.charges["c2"] != 1 {
		t.Fatalf("charges %v", e.charges)
	}
	snap, _ := e.a.Runner.Get(context.Background(), "acme", run)
	if snap.State.Held != 0 {
		t.Fatalf("a finished run holds a step: %d", snap.State.Held)
	}
}

// TestChainLimits: the chain stops at its cap (the next step is sent),
// only the last step of a batch chains (no other run waits behind it),
// and an invocation with less than MinRemaining left chains nothing.
func TestChainLimits(t *testing.T) {
	t.Run("cap", func(t *testing.T) {
		e := newChainEnv(t, app.Chain{Steps: 2})
		run := e.start(t, "s-1", charge("c1"), charge("c2"), core.ScriptedTurn{Content: "done"})
		e.batch(t)
		if n, flags := e.sent[run], e.chainedFlags(t, run); n != 2 || flags != "qTT" {
			t.Fatalf("after one message: %d sent, marks %q; want 2 sent (the first and the one after the cap), qTT", n, flags)
		}
		e.batch(t)
		if st, flags := e.status(t, run), e.chainedFlags(t, run); st != core.StatusCompleted || flags != "qTTqT" {
			t.Fatalf("run %s, marks %q", st, flags)
		}
	})
	t.Run("last of the batch", func(t *testing.T) {
		e := newChainEnv(t, app.Chain{})
		first := e.start(t, "s-1", charge("a1"), core.ScriptedTurn{Content: "done"})
		last := e.start(t, "s-2", charge("b1"), core.ScriptedTurn{Content: "done"})
		if received, _ := e.batch(t); len(received) != 2 {
			t.Fatalf("received %v", received)
		}
		if e.status(t, last) != core.StatusCompleted || e.sent[last] != 1 {
			t.Fatalf("the batch's last run: %s, %d sent", e.status(t, last), e.sent[last])
		}
		if e.status(t, first) == core.StatusCompleted || e.sent[first] != 2 {
			t.Fatalf("the batch's first run chained: %s, %d sent", e.status(t, first), e.sent[first])
		}
	})
	t.Run("deadline", func(t *testing.T) {
		deadline := time.Now().Add(time.Hour)
		ctx, cancel := context.WithDeadline(context.Background(), deadline)
		defer cancel()
		for _, tc := range []struct {
			left  time.Duration
			chain bool
		}{{time.Minute, true}, {time.Minute - time.Nanosecond, false}} {
			e := newChainEnv(t, app.Chain{MinRemaining: time.Minute})
			e.a.Worker.Now = func() time.Time { return deadline.Add(-tc.left) }
			run := e.start(t, "s-1", charge("c1"), core.ScriptedTurn{Content: "done"})
			e.batchIn(t, ctx)
			if chained := e.sent[run] == 1; chained != tc.chain {
				t.Fatalf("with %s left (at least a minute needed): chained %v, %d sent", tc.left, chained, e.sent[run])
			}
		}
	})
	t.Run("off", func(t *testing.T) {
		e := newChainEnv(t, app.Chain{Off: true})
		run := e.start(t, "s-1", charge("c1"), core.ScriptedTurn{Content: "done"})
		e.batch(t)
		if e.sent[run] != 2 {
			t.Fatalf("chaining off: %d sent", e.sent[run])
		}
	})
}

// TestChainFansOutThroughTheQueue: parallel tool calls go to the queue
// as today (one message each); the step after them chains again.
func TestChainFansOutThroughTheQueue(t *testing.T) {
	e := newChainEnv(t, app.Chain{})
	m := core.ScriptedTurn{ToolCalls: []core.ToolCallRequest{{ID: "p1", Name: "pay/charge", Parameters: map[string]any{"amount": 1}}, {ID: "p2", Name: "pay/charge", Parameters: map[string]any{"amount": 2}}}}
	parallel := true
	run := e.startWith(t, "s-1", agents.Overrides{ParallelToolCalls: &parallel}, m, core.ScriptedTurn{Content: "done"})
	e.batch(t) // the model turn: two tool steps sent
	if e.sent[run] != 3 {
		t.Fatalf("%d sent after the fan-out, want 3", e.sent[run])
	}
	for i := 0; i < 4 && e.status(t, run) != core.StatusCompleted; i++ {
		e.batch(t)
	}
	if st := e.status(t, run); st != core.StatusCompleted || e.sent[run] != 3 {
		t.Fatalf("run %s with %d sent: the last tool step should chain the final turn", st, e.sent[run])
	}
	if e.charges["p1"] != 1 || e.charges["p2"] != 1 {
		t.Fatalf("charges %v", e.charges)
	}
}

// TestChainedStepThatFailsGoesToTheQueue: a chained step whose commit
// fails is handed to the queue, which retries it as it does a sent
// step; the charge it made is not made again.
func TestChainedStepThatFailsGoesToTheQueue(t *testing.T) {
	e := newChainEnv(t, app.Chain{})
	run := e.start(t, "s-1", charge("c1"), core.ScriptedTurn{Content: "done"})
	e.store.failCommitsAfter(run, 1) // the model turn commits; the chained tool step's commit fails
	if _, failed := e.batch(t); len(failed) != 0 {
		t.Fatalf("the message of the first step failed: %v", failed)
	}
	if e.sent[run] != 2 {
		t.Fatalf("%d sent: the failed chained step was not handed to the queue", e.sent[run])
	}
	e.store.set(e.store.writes, run, false)
	e.clock.T = e.clock.T.Add(10 * time.Minute) // past the intent's lease
	for i := 0; i < 3 && e.status(t, run) != core.StatusCompleted; i++ {
		e.batch(t)
	}
	if st := e.status(t, run); st != core.StatusCompleted || e.charges["c1"] != 1 {
		t.Fatalf("run %s, charges %v", st, e.charges)
	}
}

// TestHeldStepOfADeadInvocation: the invocation that held a run's next
// step dies in it (the step's commit and its hand-off to the queue are
// lost); the sweeper leaves the step alone while the lease lasts and
// sends it once it has passed, and the run ends without a second charge.
func TestHeldStepOfADeadInvocation(t *testing.T) {
	e := newChainEnv(t, app.Chain{Lease: 20 * time.Second})
	run := e.start(t, "s-1", charge("c1"), core.ScriptedTurn{Content: "done"})
	e.store.failCommitsAfter(run, 1) // the model turn's commit holds the tool step
	e.dropSends = true
	e.batch(t)
	e.store.set(e.store.writes, run, false)
	e.dropSends = false
	snap, _ := e.a.Runner.Get(context.Background(), "acme", run)
	if h, ok := snap.State.HeldStep(); !ok || h.Kind != core.StepToolCall {
		t.Fatalf("the run's hold: %+v %v", h, ok)
	}
	e.clock.T = e.clock.T.Add(15 * time.Second)
	if _, err := e.a.Sweep(context.Background(), 10); err != nil {
		t.Fatal(err)
	}
	if received, _ := e.batch(t); len(received) != 0 {
		t.Fatalf("the sweeper sent a held step before its lease passed: %v", received)
	}
	e.clock.T = e.clock.T.Add(10 * time.Minute)
	if _, err := e.a.Sweep(context.Background(), 10); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3 && e.status(t, run) != core.StatusCompleted; i++ {
		e.batch(t)
	}
	if st := e.status(t, run); st != core.StatusCompleted || e.charges["c1"] != 1 {
		t.Fatalf("run %s, charges %v", st, e.charges)
	}
}
