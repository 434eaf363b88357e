package durable

import (
	"context"
	"fmt"
	"time"

	"github.com/baton-agents/baton/core"
)

// Run callbacks (webhooks). A run whose config names a callback gets, for
// each notification its callback wants, one more outbox record in the
// transition's commit: the notification's delivery to the callback
// (core.Notification.Callback set, id "<event_id>@callback"), settled on
// its own, beside the record for the publisher. After the commit the
// committing process POSTs it once (CallbackSender); a 2xx marks it
// sent. A failure records the attempt on the record and moves its time
// so the sweeper sends it again CallbackBackoff after the failure,
// doubling per failure (at most an hour); after CallbackAttempts
// failures Baton gives up: one commit appends a callback_failed event to
// the run and stores the record as failed (kept, listed no more) — the
// failed-delivery record. Every POST of a notification carries its event
// id as the Idempotency-Key.

// CallbackSender POSTs a callback record's notification detail to its
// URL. It returns nil only for a 2xx answer, and the answer's HTTP
// status (0 when none arrived) either way. Errors never hold the secret.
type CallbackSender interface {
	Deliver(ctx context.Context, n core.Notification) (status int, err error)
}

// callbackSuffix ends the id of a callback record.
const callbackSuffix = "@callback"

// maxCallbackError bounds the last error a callback record keeps.
const maxCallbackError = 512

// callbackRecord is the delivery of notification n (event ev of a run of
// agent) to callback cb.
func callbackRecord(n core.Notification, ev, agent string, cb *core.Callback) core.Notification {
	n.Callback = &core.CallbackDelivery{EventID: n.ID, Event: ev, Agent: agent, URL: cb.URL, Format: cb.Format, Token: cb.Token}
	n.ID += callbackSuffix
	return n
}

// deliverCallbacks delivers the callback records of ns and returns the
// others.
func (e *Runner) deliverCallbacks(ctx context.Context, ns []core.Notification) []core.Notification {
	var rest []core.Notification
	for _, n := range ns {
		if n.Callback == nil {
			rest = append(rest, n)
			continue
		}
		if e.Callbacks != nil && !n.Callback.Failed {
			e.deliver(ctx, n)
		}
	}
	return rest
}

// deliver makes one attempt at a callback record and settles it: sent,
// to be tried again later, or failed for good.
func (e *Runner) deliver(ctx context.Context, n core.Notification) {
	status, err := e.Callbacks.Deliver(ctx, n)
	if err == nil {
		if err := e.Store.MarkNotificationSent(ctx, n.RunID, n.ID); err != nil {
			e.Log.WarnContext(ctx, "mark callback delivered", "run_id", n.RunID, "event_id", n.Callback.EventID, "err", err)
		}
		return
	}
	d := *n.Callback
	d.Attempts++
	d.LastStatus = status
	d.LastError, _ = truncate(err.Error(), maxCallbackError)
	n.Callback = &d
	log := e.Log.With("run_id", n.RunID, "event_id", d.EventID, "attempts", d.Attempts, "last_status", status)
	if d.Attempts < e.Limits.CallbackAttempts {
		var backoff time.Duration
		n.Time, backoff = e.retryAt(d.Attempts)
		log.WarnContext(ctx, "callback delivery failed; the sweeper tries again", "retry_in", backoff.String(), "err", d.LastError)
		if err := e.Store.UpdateNotification(ctx, n); err != nil {
			log.WarnContext(ctx, "record the failed callback delivery", "err", err)
		}
		return
	}
	d.Failed = true
	log.ErrorContext(ctx, "callback delivery failed for good", "err", d.LastError)
	if err := e.giveUp(ctx, n); err != nil {
		log.ErrorContext(ctx, "record the given-up callback delivery; the sweeper tries again", "err", err)
	}
}

// retryAt is the time to give an outbox record that failed attempts
// times so that the sweeper lists it again after the backoff (returned
// too): CallbackBackoff doubling per attempt, at most an hour. The
// sweeper lists a record NotifyAfter after its time. (Doubling step by
// step under the cap, not shifting by attempts-1, cannot overflow into
// a negative backoff however many attempts are allowed.)
func (e *Runner) retryAt(attempts int) (time.Time, time.Duration) {
	backoff := min(e.Limits.CallbackBackoff, time.Hour)
	for range attempts - 1 {
		backoff = min(2*backoff, time.Hour)
	}
	return e.Clock.Now().Add(backoff - e.Limits.NotifyAfter), backoff
}

// giveUp commits the callback_failed event of a failed callback record
// together with the record, failed.
func (e *Runner) giveUp(ctx context.Context, n core.Notification) error {
	rec, err := e.Store.LoadRun(ctx, n.RunID)
	if err != nil {
		return fmt.Errorf("load run %s: %w", n.RunID, err)
	}
	d := n.Callback
	next := e.applyTo(ctx, rec, []core.Message{}, core.CallbackFailed{EventID: d.EventID, Event: d.Event, Attempts: d.Attempts, LastStatus: d.LastStatus, LastError: d.LastError})
	_, err = e.commit(ctx, rec.Tenant, func(attempt int) (transition, error) {
		t, err := next(attempt)
		if err != nil {
			return t, err
		}
		t.store = func(w core.Write) error {
			w.Notifications = append(w.Notifications, n)
			return e.Store.Commit(ctx, w)
		}
		return t, nil
	})
	return err
}
