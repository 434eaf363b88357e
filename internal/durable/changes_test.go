package durable_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/baton-agents/baton/core"
	"github.com/baton-agents/baton/internal/durable"
	"github.com/baton-agents/baton/internal/memstore"
)

// writes is a store and delta store whose writes fail with err.
type writes struct {
	durable.Store
	failingDeltas
	err error
}

func (w *writes) CreateRun(context.Context, core.SessionHead, core.Write) error { return w.err }
func (w *writes) Commit(context.Context, core.Write) error                      { return w.err }
func (w *writes) PutDeltas(context.Context, core.DeltaBatch) error              { return w.err }

func closed(c <-chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

func TestChangesWakeOnWritesOfTheRun(t *testing.T) {
	ctx := context.Background()
	changes := durable.NewChanges()
	under := &writes{}
	st, deltas := changes.Store(under), changes.Deltas(under)
	notifier, ok := deltas.(core.ChangeNotifier)
	if !ok {
		t.Fatal("the wrapped delta store is no core.ChangeNotifier")
	}
	write := func(id string) core.Write {
		return core.Write{Output: core.Output{State: core.RunState{RunID: id}}}
	}
	for name, do := range map[string]func(id string) error{
		"create": func(id string) error { return st.CreateRun(ctx, core.SessionHead{}, write(id)) },
		"commit": func(id string) error { return st.Commit(ctx, write(id)) },
		"deltas": func(id string) error { return deltas.PutDeltas(ctx, core.DeltaBatch{RunID: id}) },
	} {
		mine, other := notifier.Changed("run-1"), notifier.Changed("run-2")
		if again := notifier.Changed("run-1"); again != mine {
			t.Fatalf("%s: a second reader of the run waits on another channel", name)
		}
		under.err = core.ErrConflict
		if err := do("run-1"); !errors.Is(err, core.ErrConflict) {
			t.Fatalf("%s: the store's error is lost: %v", name, err)
		}
		if closed(mine) {
			t.Fatalf("%s: a failed write woke the run's readers", name)
		}
		under.err = nil
		if err := do("run-1"); err != nil {
			t.Fatal(err)
		}
		if !closed(mine) || closed(other) {
			t.Fatalf("%s: the run's readers woke %v, another run's %v; want true, false", name, closed(mine), closed(other))
		}
		if closed(notifier.Changed("run-1")) {
			t.Fatalf("%s: the next change's channel is closed already", name)
		}
		if err := do("run-1"); err != nil {
			t.Fatal(err)
		}
		if err := do("run-2"); err != nil {
			t.Fatal(err)
		}
	}
}

func TestChangesCloseChannelsNobodyWoke(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	changes := durable.NewChanges()
	durable.SetChangesClock(changes, func() time.Time { return now })
	gone := changes.Changed("run-gone")
	now = now.Add(10 * time.Second)
	recent := changes.Changed("run-recent")
	now = now.Add(25 * time.Second)
	_ = changes.Changed("run-new")
	if !closed(gone) {
		t.Fatal("a channel nobody woke for 35 s is still open")
	}
	if closed(recent) {
		t.Fatal("a channel 25 s old was closed")
	}
}

// TestChangesPruneAtChangesKept: a channel nobody woke is closed once it
// is 30 s (changesKept) old, at exactly 30 s, when a later call finds the
// last pruning 30 s back; not a second earlier.
func TestChangesPruneAtChangesKept(t *testing.T) {
	for _, tc := range []struct {
		age        time.Duration
		wantClosed bool
	}{
		{30 * time.Second, true},
		{30*time.Second + time.Millisecond, true},
		{30*time.Second - time.Millisecond, false},
	} {
		now := time.Unix(1_700_000_000, 0)
		changes := durable.NewChanges()
		durable.SetChangesClock(changes, func() time.Time { return now })
		_ = changes.Changed("run-first") // prunes (nothing) and starts the period
		old := changes.Changed("run-old")
		now = now.Add(tc.age)
		_ = changes.Changed("run-new")
		if closed(old) != tc.wantClosed {
			t.Errorf("a channel %v old: closed %v, want %v", tc.age, closed(old), tc.wantClosed)
		}
	}
}

// TestChangesOverTheEmbeddedStore: over the embedded store (as baton dev
// wires it), a run's change channel closes at its next delta write, not
// for another run's, and a closed channel is not handed out again.
func TestChangesOverTheEmbeddedStore(t *testing.T) {
	s := memstore.New()
	deltas := durable.NewChanges().Deltas(s)
	notifier := deltas.(core.ChangeNotifier)
	ctx := context.Background()
	c := notifier.Changed("r-1")
	other := notifier.Changed("r-2")
	if err := deltas.PutDeltas(ctx, core.DeltaBatch{RunID: "r-1", ExpiresAt: time.Now().Add(time.Minute), Deltas: []core.TokenDelta{{Text: "x"}}}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-c:
	default:
		t.Fatal("a delta write did not signal")
	}
	select {
	case <-other:
		t.Fatal("another run's write signalled")
	default:
	}
	if notifier.Changed("r-1") == c {
		t.Fatal("a closed channel was handed out again")
	}
}
