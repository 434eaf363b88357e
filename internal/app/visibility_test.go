package app

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/baton-agents/baton/core"
	"github.com/baton-agents/baton/internal/durable"
	"github.com/baton-agents/baton/internal/local"
)

// slowModel answers after a delay longer than the queue's visibility
// timeout, counting its calls.
type slowModel struct {
	calls atomic.Int32
	delay time.Duration
}

func (m *slowModel) Complete(ctx context.Context, _ core.ModelRequest) (core.ModelReply, error) {
	m.calls.Add(1)
	select {
	case <-ctx.Done():
		return core.ModelReply{}, core.Retryable(ctx.Err())
	case <-time.After(m.delay):
	}
	return core.ModelReply{Content: "done", StopReason: "end_turn"}, nil
}

// TestSlowStepIsNotDeliveredTwice: a model turn that outlasts the
// queue's visibility timeout three times over, with two pollers on the
// queue (baton dev's), is called once: the worker keeps the message
// hidden while it works. (Before, the second poller received the message
// again after 1 s and called the model a second time.)
func TestSlowStepIsNotDeliveredTwice(t *testing.T) {
	model := &slowModel{delay: 3500 * time.Millisecond}
	a, err := Build(context.Background(), Config{Stores: Stores{Memory: true, Visibility: time.Second},
		Agents: Agents{JSON: `{"agents":[{"slug":"a","model":{"provider":"scripted"}}]}`}, Providers: []string{ProviderScripted}},
		Deps{Log: quiet, Model: model})
	if err != nil {
		t.Fatal(err)
	}
	if a.Worker.Visibility != time.Second || a.Worker.Extender == nil {
		t.Fatalf("the worker does not extend visibility: %+v", a.Worker)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for range 2 {
		wg.Add(1)
		go func() { defer wg.Done(); local.Poll(ctx, a.Steps, a.Worker.Handle, quiet) }()
	}
	defer func() { cancel(); wg.Wait() }()
	rec, err := a.Runner.Start(ctx, "t", durable.StartRequest{Agent: "a", Messages: []core.Message{{Role: core.RoleUser, Content: "hi"}}})
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		snap, err := a.Runner.Get(ctx, "t", rec.State.RunID)
		if err != nil {
			t.Fatal(err)
		}
		if core.IsTerminal(snap.State.Status) {
			if snap.State.Status != core.StatusCompleted {
				t.Fatalf("status %s", snap.State.Status)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the run did not finish: %s", snap.State.Status)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if n := model.calls.Load(); n != 1 {
		t.Fatalf("the model was called %d times, want once", n)
	}
}
