package notify

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge/types"

	"github.com/baton-agents/baton/core"
	"github.com/baton-agents/baton/internal/wait"
)

// PutEventsAPI is the part of the EventBridge client the publisher uses.
type PutEventsAPI interface {
	PutEvents(ctx context.Context, in *eventbridge.PutEventsInput, opts ...func(*eventbridge.Options)) (*eventbridge.PutEventsOutput, error)
}

// maxEntries is how many entries one PutEvents call takes.
const maxEntries = 10

// EventBridge publishes notifications to an event bus.
type EventBridge struct {
	api PutEventsAPI
	bus string
	// Attempts bounds the calls per batch: entries that failed
	// (FailedEntryCount > 0) or a failed call are sent again, alone,
	// after a back-off (default 3).
	Attempts int
	// Backoff is the first wait between attempts, doubling (default
	// 100ms).
	Backoff time.Duration
}

var _ core.NotificationPublisher = (*EventBridge)(nil)

// NewEventBridge returns a publisher to bus (a name or an ARN; "" is the
// default bus).
func NewEventBridge(api PutEventsAPI, bus string) *EventBridge {
	return &EventBridge{api: api, bus: bus, Attempts: 3, Backoff: 100 * time.Millisecond}
}

// Entry is the PutEvents entry of a notification.
func (p *EventBridge) Entry(n core.Notification) types.PutEventsRequestEntry {
	e := types.PutEventsRequestEntry{
		Source: aws.String(core.NotificationSource), DetailType: aws.String(n.DetailType),
		Detail: aws.String(string(n.Detail)), Time: aws.Time(n.Time),
	}
	if p.bus != "" {
		e.EventBusName = aws.String(p.bus)
	}
	return e
}

// Publish puts the notifications in batches of at most ten entries; of a
// batch with failed entries only those are sent again.
func (p *EventBridge) Publish(ctx context.Context, ns []core.Notification) error {
	var errs []error
	for lo := 0; lo < len(ns); lo += maxEntries {
		if err := p.batch(ctx, ns[lo:min(lo+maxEntries, len(ns))]); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func (p *EventBridge) batch(ctx context.Context, ns []core.Notification) error {
	pending := ns
	backoff := p.Backoff
	var last error
	for attempt := 0; attempt < max(p.Attempts, 1) && len(pending) > 0; attempt++ {
		if attempt > 0 {
			if err := wait.Sleep(ctx, backoff); err != nil {
				return err
			}
			backoff *= 2
		}
		entries := make([]types.PutEventsRequestEntry, len(pending))
		for i, n := range pending {
			entries[i] = p.Entry(n)
		}
		out, err := p.api.PutEvents(ctx, &eventbridge.PutEventsInput{Entries: entries})
		if err != nil {
			last = fmt.Errorf("put events: %w", err)
			continue
		}
		if out.FailedEntryCount == 0 {
			return nil
		}
		var failed []core.Notification
		for i, r := range out.Entries {
			if i < len(pending) && r.ErrorCode != nil {
				failed = append(failed, pending[i])
				last = fmt.Errorf("put event %s: %s: %s", pending[i].ID, aws.ToString(r.ErrorCode), aws.ToString(r.ErrorMessage))
			}
		}
		if len(failed) == 0 { // a count without per-entry errors: send all again
			failed = pending
			last = fmt.Errorf("put events: %d entries failed", out.FailedEntryCount)
		}
		pending = failed
	}
	if len(pending) == 0 {
		return nil
	}
	return fmt.Errorf("%d of %d notifications not published: %w", len(pending), len(ns), last)
}
