package durable_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/baton-agents/baton/core"
	"github.com/baton-agents/baton/internal/durable"
)

// conflictingStore answers every commit with a version conflict while
// conflict is set, and counts the commits it was asked for.
type conflictingStore struct {
	durable.Store
	mu       sync.Mutex
	conflict bool
	commits  int
}

func (c *conflictingStore) Commit(ctx context.Context, w core.Write) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.conflict {
		c.commits++
		return core.ErrConflict
	}
	return c.Store.Commit(ctx, w)
}

// TestCommitAttempts: a run that changes under every attempt is tried
// CommitAttempts times (8 unless set), then the caller is told the run
// is busy.
func TestCommitAttempts(t *testing.T) {
	for _, tc := range []struct{ set, want int }{{1, 1}, {3, 3}, {0, 8}} {
		cs := &conflictingStore{}
		h := newHarness(t, func(s durable.Store) durable.Store { cs.Store = s; return cs })
		h.opts.Limits.CommitAttempts = tc.set
		h.eng = durable.New(h.opts)
		id := h.start(t, scripted(turn("Hello.")), nil)
		cs.conflict = true
		_, err := h.eng.Apply(context.Background(), "acme", id, core.Cancel{Reason: "enough"})
		if !errors.Is(err, durable.ErrContention) || cs.commits != tc.want {
			t.Errorf("CommitAttempts %d: %d commits, error %v; want %d commits and ErrContention", tc.set, cs.commits, err, tc.want)
		}
	}
}

// withoutNotifier rebuilds h's runner without a notification publisher:
// the outbox records between runs and to callbacks are still written
// and delivered (a deployment without an event bus).
func withoutNotifier(h *harness) {
	h.opts.Notifier = nil
	h.eng = durable.New(h.opts)
}

// TestChildRunsWithoutNotifier: with no publisher, a child's end still
// reaches its parent, and a cancelled parent still stops its running
// children.
func TestChildRunsWithoutNotifier(t *testing.T) {
	h := newHarnessWith(t, childrenFile, nil)
	withoutNotifier(h)
	id := h.startAgent(t, "planner", scripted(
		turn("", call("c1", "agent/researcher", map[string]any{"task": "alpha"}), call("c2", "agent/researcher", map[string]any{"task": "beta"})),
		turn("Both in.")), true)
	h.pump(t)
	beta := core.ChildRunID(id, "c2")
	if st := h.run(t, core.ChildRunID(id, "c1")); st.Status != core.StatusCompleted {
		t.Fatalf("alpha child %s", st.Status)
	}
	st := h.run(t, id)
	if len(st.Children) != 2 || st.Children[0].Status != core.StatusCompleted || st.Children[1].Status != core.StatusRunning {
		t.Fatalf("the parent's children %+v: the alpha child's end did not reach it", st.Children)
	}
	if _, err := h.eng.Apply(context.Background(), "acme", id, core.Cancel{Reason: "enough"}); err != nil {
		t.Fatal(err)
	}
	h.pump(t)
	if st := h.run(t, beta); st.Status != core.StatusCancelled {
		t.Fatalf("the running child of a cancelled parent is %s", st.Status)
	}
}

// TestCallbacksWithoutNotifier: with no publisher, a run's callback is
// still posted, and the sweeper posts a failed one again.
func TestCallbacksWithoutNotifier(t *testing.T) {
	h := newHarness(t, nil)
	h.opts.Notifier = nil
	rc := &receiver{t: t, status: func(n int) int {
		if n == 0 {
			return http.StatusServiceUnavailable
		}
		return http.StatusOK
	}}
	withCallbacks(t, h, rc, 3)
	h.start(t, scripted(turn("Done.")), withCallback)
	h.pump(t)
	if n := len(rc.got()); n != 1 {
		t.Fatalf("posts after the run finished: %d, want 1", n)
	}
	h.clock.T = h.clock.T.Add(time.Minute)
	if _, err := h.eng.Sweep(context.Background(), 0); err != nil {
		t.Fatal(err)
	}
	got := rc.got()
	if len(got) != 2 || got[1].key != got[0].key || !strings.HasSuffix(got[0].key, ":finished") {
		t.Fatalf("posts after a sweep: %+v, want the finished event posted again", got)
	}
	if un := h.unsent(t); len(un) != 0 {
		t.Fatalf("unsent after the retry: %+v", un)
	}
}

// TestNewDefaults: a runner given no id source makes random ids; one
// given an id source uses it.
func TestNewDefaults(t *testing.T) {
	h := newHarness(t, nil)
	h.opts.IDs = &core.SequentialIDs{}
	h.eng = durable.New(h.opts)
	rec, err := h.eng.Start(context.Background(), "acme", durable.StartRequest{Agent: "demo", Messages: userMsg("hi")})
	if err != nil {
		t.Fatal(err)
	}
	want := (&core.SequentialIDs{}).NewID("r")
	if rec.State.RunID != want {
		t.Fatalf("run id %q, want the id source's %q", rec.State.RunID, want)
	}
	h.opts.IDs = nil
	h.eng = durable.New(h.opts)
	a, err := h.eng.Start(context.Background(), "acme", durable.StartRequest{Agent: "demo", Messages: userMsg("hi")})
	if err != nil {
		t.Fatal(err)
	}
	b, err := h.eng.Start(context.Background(), "acme", durable.StartRequest{Agent: "demo", Messages: userMsg("hi")})
	if err != nil {
		t.Fatal(err)
	}
	if a.State.RunID == "" || a.State.RunID == b.State.RunID || a.State.SessionID == b.State.SessionID {
		t.Fatalf("random ids: runs %q and %q, sessions %q and %q", a.State.RunID, b.State.RunID, a.State.SessionID, b.State.SessionID)
	}
}
