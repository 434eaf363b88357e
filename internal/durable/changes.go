package durable

import (
	"context"
	"sync"
	"time"

	"github.com/baton-agents/baton/core"
)

// Changes tells a process's live streams when a run changed through this
// process's stores: a delta batch written, a run created or a transition
// committed. Where every writer of the runs is one process (baton dev on
// DynamoDB and SQS: the API, the pollers' worker and the sweeper), a
// stream waits on it instead of polling the store, as on the embedded
// store; elsewhere (Lambda) the other writers are other processes and
// streams poll. Wrap the stores with Store and Deltas; the wrapped delta
// store is the core.ChangeNotifier a stream looks for.
type Changes struct {
	mu      sync.Mutex
	waiting map[string]waiter
	pruned  time.Time
	now     func() time.Time
}

type waiter struct {
	c     chan struct{}
	since time.Time
}

// NewChanges returns an empty Changes.
func NewChanges() *Changes { return &Changes{waiting: map[string]waiter{}, now: time.Now} }

// Changed returns a channel closed at the run's next change through this
// process. A channel nobody closed for changesKept is closed anyway (a
// reader then reads once for nothing), so readers that went away leave
// nothing behind.
func (c *Changes) Changed(runID string) <-chan struct{} {
	now := c.now()
	c.mu.Lock()
	defer c.mu.Unlock()
	if w, ok := c.waiting[runID]; ok {
		return w.c
	}
	if now.Sub(c.pruned) >= changesKept {
		for id, w := range c.waiting {
			if now.Sub(w.since) >= changesKept {
				close(w.c)
				delete(c.waiting, id)
			}
		}
		c.pruned = now
	}
	w := waiter{c: make(chan struct{}), since: now}
	c.waiting[runID] = w
	return w.c
}

// changesKept is how long a channel waits for a change before it is
// closed anyway; a stream asks again far more often (its pause is at most
// a second).
const changesKept = 30 * time.Second

func (c *Changes) notify(runID string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if w, ok := c.waiting[runID]; ok {
		close(w.c)
		delete(c.waiting, runID)
	}
}

// Store wraps s so that its run creations and commits notify c.
func (c *Changes) Store(s Store) Store { return changedStore{Store: s, c: c} }

// Deltas wraps d so that its writes notify c; the result is the
// core.ChangeNotifier a stream waits on.
func (c *Changes) Deltas(d core.DeltaStore) core.DeltaStore {
	return changedDeltas{DeltaStore: d, c: c}
}

type changedStore struct {
	Store
	c *Changes
}

func (s changedStore) CreateRun(ctx context.Context, head core.SessionHead, w core.Write) error {
	err := s.Store.CreateRun(ctx, head, w)
	if err == nil {
		s.c.notify(w.Output.State.RunID)
	}
	return err
}

func (s changedStore) Commit(ctx context.Context, w core.Write) error {
	err := s.Store.Commit(ctx, w)
	if err == nil {
		s.c.notify(w.Output.State.RunID)
	}
	return err
}

type changedDeltas struct {
	core.DeltaStore
	c *Changes
}

var _ core.ChangeNotifier = changedDeltas{}

func (d changedDeltas) PutDeltas(ctx context.Context, b core.DeltaBatch) error {
	err := d.DeltaStore.PutDeltas(ctx, b)
	if err == nil {
		d.c.notify(b.RunID)
	}
	return err
}

func (d changedDeltas) Changed(runID string) <-chan struct{} { return d.c.Changed(runID) }
