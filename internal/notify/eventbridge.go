package notify

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/baton-agents/baton/core"
	"github.com/baton-agents/baton/internal/wait"
)

// PutEventsAPI calls EventBridge operations over its JSON 1.1 protocol
// (in and out are the operation's request and response, JSON-encoded);
// an awsenv.JSONClient of awsenv.EventBridgeService implements it, so
// the generated EventBridge client is not linked.
type PutEventsAPI interface {
	Call(ctx context.Context, op string, in, out any) error
}

// putEventsEntry is a PutEvents request entry.
type putEventsEntry struct {
	Source       string       `json:"Source"`
	DetailType   string       `json:"DetailType"`
	Detail       string       `json:"Detail"`
	Time         epochSeconds `json:"Time"`
	EventBusName string       `json:"EventBusName,omitempty"`
}

// epochSeconds is a timestamp as the JSON protocol carries it: seconds
// since the epoch, to the millisecond.
type epochSeconds time.Time

func (t epochSeconds) MarshalJSON() ([]byte, error) {
	return strconv.AppendFloat(nil, float64(time.Time(t).UnixMilli())/1e3, 'f', -1, 64), nil
}

// putEventsOutput is a PutEvents response.
type putEventsOutput struct {
	FailedEntryCount int `json:"FailedEntryCount"`
	Entries          []struct {
		EventID      string `json:"EventId"`
		ErrorCode    string `json:"ErrorCode"`
		ErrorMessage string `json:"ErrorMessage"`
	} `json:"Entries"`
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

// entry is the PutEvents entry of a notification.
func (p *EventBridge) entry(n core.Notification) putEventsEntry {
	return putEventsEntry{Source: core.NotificationSource, DetailType: n.DetailType, Detail: string(n.Detail), Time: epochSeconds(n.Time), EventBusName: p.bus}
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
		in := struct {
			Entries []putEventsEntry `json:"Entries"`
		}{make([]putEventsEntry, len(pending))}
		for i, n := range pending {
			in.Entries[i] = p.entry(n)
		}
		var out putEventsOutput
		if err := p.api.Call(ctx, "PutEvents", in, &out); err != nil {
			last = fmt.Errorf("put events: %w", err)
			continue
		}
		if out.FailedEntryCount == 0 {
			return nil
		}
		var failed []core.Notification
		for i, r := range out.Entries {
			if i < len(pending) && r.ErrorCode != "" {
				failed = append(failed, pending[i])
				last = fmt.Errorf("put event %s: %s: %s", pending[i].ID, r.ErrorCode, r.ErrorMessage)
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
