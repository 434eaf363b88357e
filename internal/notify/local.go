package notify

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"time"

	"github.com/baton-agents/baton/core"
)

// Event is a notification as an EventBridge entry shows it to a rule's
// target: what Poster POSTs.
type Event struct {
	Source     string          `json:"source"`
	DetailType string          `json:"detail-type"`
	Detail     json.RawMessage `json:"detail"`
	Time       time.Time       `json:"time"`
}

// EventOf is the event of a notification.
func EventOf(n core.Notification) Event {
	return Event{Source: core.NotificationSource, DetailType: n.DetailType, Detail: n.Detail, Time: n.Time}
}

// Poster POSTs each notification's event as JSON to a URL (baton dev's
// --notify-url); a response other than 2xx fails the publish.
type Poster struct {
	URL    string
	Client *http.Client
}

var _ core.NotificationPublisher = (*Poster)(nil)

// Publish POSTs the notifications one by one.
func (p *Poster) Publish(ctx context.Context, ns []core.Notification) error {
	c := p.Client
	if c == nil {
		c = &http.Client{Timeout: 10 * time.Second}
	}
	for _, n := range ns {
		body, err := json.Marshal(EventOf(n))
		if err != nil {
			return fmt.Errorf("encode notification %s: %w", n.ID, err)
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, p.URL, bytes.NewReader(body))
		if err != nil {
			return fmt.Errorf("notification %s: %w", n.ID, err)
		}
		req.Header.Set("Content-Type", "application/json")
		resp, err := c.Do(req)
		if err != nil {
			return fmt.Errorf("post notification %s: %w", n.ID, err)
		}
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
		_ = resp.Body.Close()
		if resp.StatusCode/100 != 2 {
			return fmt.Errorf("post notification %s: %s answered %d", n.ID, p.URL, resp.StatusCode)
		}
	}
	return nil
}

// Logger logs each notification (baton dev without --notify-url).
type Logger struct{ Log *slog.Logger }

var _ core.NotificationPublisher = Logger{}

// Publish logs the notifications.
func (l Logger) Publish(ctx context.Context, ns []core.Notification) error {
	for _, n := range ns {
		l.Log.InfoContext(ctx, "notification", "detail_type", n.DetailType, "run_id", n.RunID, "event_id", n.ID, "detail", string(n.Detail))
	}
	return nil
}
