package memstore_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/baton-agents/baton/core"
	"github.com/baton-agents/baton/internal/memstore"
	"github.com/baton-agents/baton/internal/queuetest"
)

// contractQueue adapts a memstore.StepQueue to the contract suite.
type contractQueue struct{ *memstore.StepQueue }

func (q contractQueue) DeadLetters(context.Context) ([]core.ReceivedMessage, error) {
	return q.Dead(), nil
}

// fakeClockQueue is a contractQueue on a clock the suite advances.
type fakeClockQueue struct {
	contractQueue
	clock *fakeClock
}

func (q fakeClockQueue) Advance(d time.Duration) { q.clock.Advance(d) }

type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

func TestQueueContract(t *testing.T) {
	t.Run("FakeClock", func(t *testing.T) {
		queuetest.RunContract(t, func(t *testing.T) queuetest.Queue {
			c := &fakeClock{now: time.Now()}
			q := memstore.NewStepQueue(queuetest.Visibility, queuetest.MaxReceives, c.Now)
			return fakeClockQueue{contractQueue{q}, c}
		})
	})
	t.Run("WallClock", func(t *testing.T) {
		if testing.Short() {
			t.Skip("waits out visibility timeouts")
		}
		queuetest.RunContract(t, func(t *testing.T) queuetest.Queue {
			return contractQueue{memstore.NewStepQueue(queuetest.Visibility, queuetest.MaxReceives, nil)}
		})
	})
}
