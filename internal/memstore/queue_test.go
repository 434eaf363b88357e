package memstore_test

import (
	"context"
	"errors"
	"fmt"
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

func TestDrainDeliversUntilEmpty(t *testing.T) {
	ctx := context.Background()
	q := memstore.NewStepQueue(time.Minute, 5, nil)
	enqueue := func(seq int64) {
		s := core.Step{Kind: core.StepModelTurn, Format: core.StepFormat, RunID: "r", Seq: seq}
		if err := q.Enqueue(ctx, []core.QueuedStep{{Step: s, Group: "g", DedupID: fmt.Sprint(seq)}}); err != nil {
			t.Fatal(err)
		}
	}
	enqueue(1)
	var seen []int64
	err := q.Drain(ctx, 10, func(s core.Step, m core.ReceivedMessage) error {
		seen = append(seen, s.Seq)
		if s.Seq < 3 {
			enqueue(s.Seq + 1) // a step schedules the next, in the same group
		}
		return nil
	})
	if err != nil || fmt.Sprint(seen) != "[1 2 3]" || q.Len() != 0 {
		t.Fatalf("drain: %v, saw %v, %d left", err, seen, q.Len())
	}
	enqueue(9)
	if err := q.Drain(ctx, 10, func(core.Step, core.ReceivedMessage) error { return errors.New("boom") }); err == nil || q.Len() != 1 {
		t.Fatalf("a failed delivery: %v, %d left", err, q.Len())
	}
	q = memstore.NewStepQueue(time.Minute, 5, nil)
	enqueue(1)
	forever := func(s core.Step, _ core.ReceivedMessage) error { enqueue(s.Seq + 1); return nil }
	if err := q.Drain(ctx, 3, forever); err == nil {
		t.Fatal("a queue that never runs dry drained")
	}
}

// TestMessageQueue: a standard message queue delivers messages with their
// attributes side by side (no groups), redelivers one not deleted after
// the visibility timeout, and moves it to its dead-letter queue after the
// maximum receives, attributes kept.
func TestMessageQueue(t *testing.T) {
	ctx := context.Background()
	clock := &fakeClock{now: time.Unix(1_700_000_000, 0)}
	dlq := memstore.NewMessageQueue(time.Minute, 1000, nil, clock.Now)
	q := memstore.NewMessageQueue(10*time.Second, 2, dlq, clock.Now)
	for i := 0; i < 3; i++ {
		if err := q.Send(ctx, fmt.Sprintf(`{"n":%d}`, i), map[string]string{"k": fmt.Sprint(i)}); err != nil {
			t.Fatal(err)
		}
	}
	got, err := q.Receive(ctx, 10, 0)
	if err != nil || len(got) != 3 {
		t.Fatalf("receive: %v %v", got, err)
	}
	if got[1].Attributes["k"] != "1" || string(got[1].Body) != `{"n":1}` || got[1].ReceiveCount != 1 {
		t.Fatalf("message %+v", got[1])
	}
	if again, _ := q.Receive(ctx, 10, 0); len(again) != 0 {
		t.Fatalf("in-flight messages delivered again: %v", again)
	}
	if err := q.Delete(ctx, got[0].ReceiptHandle); err != nil {
		t.Fatal(err)
	}
	clock.Advance(11 * time.Second)
	got, _ = q.Receive(ctx, 10, 0)
	if len(got) != 2 || got[0].ReceiveCount != 2 {
		t.Fatalf("redelivery: %+v", got)
	}
	clock.Advance(11 * time.Second)
	if got, _ = q.Receive(ctx, 10, 0); len(got) != 0 || q.Len() != 0 {
		t.Fatalf("after the maximum receives: %+v, %d left", got, q.Len())
	}
	dead, _ := dlq.Receive(ctx, 10, 0)
	if len(dead) != 2 || dead[0].Attributes["k"] == "" {
		t.Fatalf("dead letters %+v", dead)
	}
}

// TestStepQueueBounds: the step queue's bounds at their edges: a
// deduplication id is remembered for exactly DedupWindow, a queue made
// with no maximum receives dead-letters a message on its fifth, Receive
// takes at most max messages, and Drain gives up after exactly max
// deliveries.
func TestStepQueueBounds(t *testing.T) {
	ctx := context.Background()
	step := func(seq int64, dedup string) []core.QueuedStep {
		return []core.QueuedStep{{Step: core.Step{Kind: core.StepModelTurn, Format: core.StepFormat, RunID: "r", Seq: seq}, Group: "g" + fmt.Sprint(seq), DedupID: dedup}}
	}
	for _, tc := range []struct {
		after time.Duration
		want  int
	}{{memstore.DedupWindow - time.Nanosecond, 1}, {memstore.DedupWindow, 2}} {
		clock := &fakeClock{now: time.Unix(1_700_000_000, 0)}
		q := memstore.NewStepQueue(time.Minute, 5, clock.Now)
		_ = q.Enqueue(ctx, step(1, "d"))
		clock.Advance(tc.after)
		_ = q.Enqueue(ctx, step(2, "d"))
		if q.Len() != tc.want {
			t.Errorf("the same dedup id %v later: %d messages, want %d", tc.after, q.Len(), tc.want)
		}
	}

	clock := &fakeClock{now: time.Unix(1_700_000_000, 0)}
	q := memstore.NewStepQueue(time.Minute, 0, clock.Now)
	_ = q.Enqueue(ctx, step(1, "d"))
	for i := 1; i <= 5; i++ {
		got, _ := q.Receive(ctx, 1, 0)
		if len(got) != 1 || got[0].ReceiveCount != i {
			t.Fatalf("receive %d: %+v", i, got)
		}
		clock.Advance(2 * time.Minute)
	}
	if got, _ := q.Receive(ctx, 1, 0); len(got) != 0 || len(q.Dead()) != 1 {
		t.Fatalf("after 5 receives: %+v, %d dead; want the message dead-lettered", got, len(q.Dead()))
	}

	q = memstore.NewStepQueue(time.Minute, 5, nil)
	for seq := int64(1); seq <= 3; seq++ {
		_ = q.Enqueue(ctx, step(seq, fmt.Sprint(seq))) // three groups
	}
	if got, _ := q.Receive(ctx, 2, 0); len(got) != 2 {
		t.Fatalf("receive at most 2 of 3 visible messages: got %d", len(got))
	}

	q = memstore.NewStepQueue(time.Minute, 5, nil)
	_ = q.Enqueue(ctx, step(1, "1"))
	n := 0
	err := q.Drain(ctx, 3, func(s core.Step, _ core.ReceivedMessage) error {
		n++
		return q.Enqueue(ctx, step(s.Seq+1, fmt.Sprint(s.Seq+1)))
	})
	if err == nil || n != 3 {
		t.Fatalf("a queue that never runs dry: %d deliveries, error %v; want 3 and an error", n, err)
	}
}

// TestStepQueueReceiveWaits: Receive waits for a message sent while it
// waits, and returns it.
func TestStepQueueReceiveWaits(t *testing.T) {
	ctx := context.Background()
	q := memstore.NewStepQueue(time.Minute, 5, nil)
	sent := make(chan error, 1)
	go func() {
		time.Sleep(20 * time.Millisecond)
		sent <- q.Send(ctx, "hello", nil)
	}()
	got, err := q.Receive(ctx, 1, 10*time.Second)
	if err != nil || len(got) != 1 || string(got[0].Body) != "hello" {
		t.Fatalf("receive: %+v %v, want the message sent during the wait", got, err)
	}
	if err := <-sent; err != nil {
		t.Fatal(err)
	}
}
