package memstore

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/baton-agents/baton/core"
)

// StepQueue is an in-memory FIFO step queue that behaves like SQS FIFO for Baton:
// messages of one group are delivered one at a time and in order, a
// dedup id is remembered for five minutes, a received message reappears
// after the visibility timeout unless deleted, and a message received
// MaxReceives times moves to the dead-letter list.
type StepQueue struct {
	mu          sync.Mutex
	clock       func() time.Time
	visibility  time.Duration
	maxReceives int
	seq         int
	msgs        []*qmsg
	dedup       map[string]time.Time
	dead        []core.ReceivedMessage
	notify      chan struct{}
	// deadTo receives the dead letters of a message queue
	// (NewMessageQueue) instead of dead.
	deadTo *StepQueue
}

type qmsg struct {
	d         core.ReceivedMessage
	invisible time.Time
	inFlight  bool
	receipt   int
}

var (
	_ core.StepQueue    = (*StepQueue)(nil)
	_ core.StepReceiver = (*StepQueue)(nil)
	_ core.MessageQueue = (*StepQueue)(nil)
)

// DedupWindow is how long SQS FIFO remembers a deduplication id.
const DedupWindow = 5 * time.Minute

// NewStepQueue returns a step queue; clock may be nil (wall clock).
func NewStepQueue(visibility time.Duration, maxReceives int, clock func() time.Time) *StepQueue {
	if clock == nil {
		clock = time.Now
	}
	if maxReceives <= 0 {
		maxReceives = 5
	}
	return &StepQueue{clock: clock, visibility: visibility, maxReceives: maxReceives, dedup: map[string]time.Time{}, notify: make(chan struct{}, 1)}
}

// NewMessageQueue returns a standard queue of opaque messages with
// attributes (core.MessageQueue), the embedded intake queue and its
// dead-letter queue: its messages (sent with Send) have no group, so they
// are delivered side by side, and a message received maxReceives times
// moves to dlq when it is set (to Dead otherwise).
func NewMessageQueue(visibility time.Duration, maxReceives int, dlq *StepQueue, clock func() time.Time) *StepQueue {
	q := NewStepQueue(visibility, maxReceives, clock)
	q.deadTo = dlq
	return q
}

// Send sends one message without group or deduplication id, as to a
// standard SQS queue.
func (q *StepQueue) Send(_ context.Context, body string, attrs map[string]string) error {
	q.mu.Lock()
	q.seq++
	d := core.ReceivedMessage{MessageID: "m-" + strconv.Itoa(q.seq), Body: []byte(body), SentAt: q.clock()}
	if len(attrs) > 0 {
		d.Attributes = make(map[string]string, len(attrs))
		for k, v := range attrs {
			d.Attributes[k] = v
		}
	}
	q.msgs = append(q.msgs, &qmsg{d: d})
	q.mu.Unlock()
	select {
	case q.notify <- struct{}{}:
	default:
	}
	return nil
}

// Enqueue sends step messages. A step without a group or a dedup id
// fails the call with core.ErrInvalidInput before any step is sent.
func (q *StepQueue) Enqueue(_ context.Context, steps []core.QueuedStep) error {
	for _, s := range steps {
		if s.Group == "" || s.DedupID == "" {
			return fmt.Errorf("enqueue step %s/%d: %w: group and dedup id are required", s.Step.RunID, s.Step.Seq, core.ErrInvalidInput)
		}
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	now := q.clock()
	for _, s := range steps {
		if at, ok := q.dedup[s.DedupID]; ok && now.Sub(at) < DedupWindow {
			continue
		}
		body, err := json.Marshal(s.Step)
		if err != nil {
			return err
		}
		q.dedup[s.DedupID] = now
		q.seq++
		q.msgs = append(q.msgs, &qmsg{d: core.ReceivedMessage{MessageID: "m-" + strconv.Itoa(q.seq), Body: body, Group: s.Group, DedupID: s.DedupID, SentAt: now}})
	}
	select {
	case q.notify <- struct{}{}:
	default:
	}
	return nil
}

// Receive returns up to max visible messages, waiting up to wait for one.
func (q *StepQueue) Receive(ctx context.Context, max int, wait time.Duration) ([]core.ReceivedMessage, error) {
	deadline := time.Now().Add(wait)
	for {
		if out := q.take(max); len(out) > 0 {
			return out, nil
		}
		left := time.Until(deadline)
		if left <= 0 {
			return nil, nil
		}
		if left > 50*time.Millisecond {
			left = 50 * time.Millisecond
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-q.notify:
		case <-time.After(left):
		}
	}
}

func (q *StepQueue) take(max int) []core.ReceivedMessage {
	q.mu.Lock()
	var dead []core.ReceivedMessage
	out := q.takeLocked(max, &dead)
	q.mu.Unlock()
	for _, d := range dead {
		_ = q.deadTo.Send(context.Background(), string(d.Body), d.Attributes)
	}
	return out
}

// takeLocked is take with q.mu held; the dead letters of a message queue
// are returned in dead, to be sent to deadTo once q.mu is released.
func (q *StepQueue) takeLocked(max int, dead *[]core.ReceivedMessage) []core.ReceivedMessage {
	now := q.clock()
	busy := map[string]bool{}
	var keep []*qmsg
	for _, m := range q.msgs {
		if m.inFlight && !now.Before(m.invisible) {
			m.inFlight = false
			if m.d.ReceiveCount >= q.maxReceives {
				if q.deadTo != nil {
					*dead = append(*dead, m.d)
				} else {
					q.dead = append(q.dead, m.d)
				}
				continue
			}
		}
		keep = append(keep, m)
	}
	q.msgs = keep
	for _, m := range q.msgs {
		if m.inFlight && m.d.Group != "" {
			busy[m.d.Group] = true
		}
	}
	var out []core.ReceivedMessage
	for _, m := range q.msgs {
		if len(out) >= max {
			break
		}
		if m.inFlight || busy[m.d.Group] {
			continue
		}
		if m.d.Group != "" {
			busy[m.d.Group] = true
		}
		m.inFlight = true
		m.invisible = now.Add(q.visibility)
		m.d.ReceiveCount++
		m.receipt++
		m.d.ReceiptHandle = m.d.MessageID + "#" + strconv.Itoa(m.receipt)
		out = append(out, m.d)
	}
	return out
}

// Delete removes a received message. A stale receipt handle is ignored
// (real FIFO SQS rejects an expired handle; the poller only logs either).
func (q *StepQueue) Delete(_ context.Context, receipt string) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	for i, m := range q.msgs {
		if m.inFlight && m.d.ReceiptHandle == receipt {
			q.msgs = append(q.msgs[:i], q.msgs[i+1:]...)
			select {
			case q.notify <- struct{}{}:
			default:
			}
			return nil
		}
	}
	return nil
}

// ExtendVisibility hides a received message for d from now.
func (q *StepQueue) ExtendVisibility(_ context.Context, receipt string, d time.Duration) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	now := q.clock()
	for _, m := range q.msgs {
		if m.inFlight && m.d.ReceiptHandle == receipt && now.Before(m.invisible) {
			m.invisible = now.Add(d)
			return nil
		}
	}
	return fmt.Errorf("extend the visibility of %s: %w", receipt, core.ErrNotFound)
}

// Dead returns the dead-lettered messages.
func (q *StepQueue) Dead() []core.ReceivedMessage {
	q.mu.Lock()
	defer q.mu.Unlock()
	return append([]core.ReceivedMessage(nil), q.dead...)
}

// Len counts messages not yet deleted or dead-lettered.
func (q *StepQueue) Len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.msgs)
}

// Drain delivers the queued steps one message at a time, as an event
// source mapping with batch size 1 does, until none is visible: handle
// gets each decoded step with its message, and the message is deleted
// when handle returns nil. It stops at handle's first error, and fails
// once max messages were delivered without the queue running dry (a run
// that never settles). Tests and local tools drive runs with it.
func (q *StepQueue) Drain(ctx context.Context, max int, handle func(core.Step, core.ReceivedMessage) error) error {
	for i := 0; i < max; i++ {
		ds, err := q.Receive(ctx, 1, 0)
		if err != nil {
			return err
		}
		if len(ds) == 0 {
			return nil
		}
		var step core.Step
		if err := json.Unmarshal(ds[0].Body, &step); err != nil {
			return fmt.Errorf("decode step message %s: %w", ds[0].MessageID, err)
		}
		if err := handle(step, ds[0]); err != nil {
			return err
		}
		if err := q.Delete(ctx, ds[0].ReceiptHandle); err != nil {
			return err
		}
	}
	return fmt.Errorf("the queue did not drain in %d deliveries", max)
}
