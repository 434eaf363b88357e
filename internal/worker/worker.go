package worker

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"maps"
	"strconv"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/baton-agents/baton/core"
	"github.com/baton-agents/baton/internal/durable"
)

// Worker handles step batches.
type Worker struct {
	Runner *durable.Runner
	Log    *slog.Logger
	// Extender and Visibility keep a batch's messages hidden while the
	// batch is handled: every Visibility/3, each message not yet handled
	// (the step in flight, and those waiting behind it) is hidden for
	// Visibility again, so a step that outlasts the queue's visibility
	// timeout (a slow model turn, a backlog in the batch) is never
	// delivered to a second worker, which would run it again. Visibility
	// must be the queue's visibility timeout; zero turns this off.
	Extender   core.VisibilityExtender
	Visibility time.Duration
	// Ticks paces the extensions (nil: a time.Ticker); a simulation
	// drives it on its own clock.
	Ticks func(every time.Duration) (ticks <-chan time.Time, stop func())
	// Chain sets when the worker continues a run's next step in the same
	// invocation instead of sending it through the queue (chain.go).
	Chain ChainLimits
	// Now reads the wall clock the invocation's deadline is on (nil:
	// time.Now).
	Now func() time.Time
	// Routes hand the messages of other kinds than a run's steps to
	// their handlers (a completed run's memory extraction, by kind);
	// every other message is a step of a run (Runner.HandleStep). A
	// routed message never chains.
	Routes map[core.StepKind]func(context.Context, core.Step, durable.Attempt) error
}

// Handle processes a batch. It returns the messages to retry; it never
// fails the whole batch.
func (w *Worker) Handle(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
	var resp events.SQSEventResponse
	failedGroups := map[string]bool{}
	hidden := w.keepHidden(ctx, ev.Records)
	defer hidden.stop()
	for i, rec := range ev.Records {
		// Only the batch's last step may chain: no other run waits
		// behind it.
		w.handle(ctx, rec, i == len(ev.Records)-1, failedGroups, &resp)
		hidden.done(rec.MessageId)
	}
	return resp, nil
}

// handle handles one record of a batch, adding it to resp's failures
// when it is to be retried; when it may chain, it goes on with the
// steps its commits hold (chain.go).
func (w *Worker) handle(ctx context.Context, rec events.SQSMessage, mayChain bool, failedGroups map[string]bool, resp *events.SQSEventResponse) {
	group := rec.Attributes["MessageGroupId"]
	if failedGroups[group] && group != "" {
		resp.BatchItemFailures = append(resp.BatchItemFailures, events.SQSBatchItemFailure{ItemIdentifier: rec.MessageId})
		return
	}
	step, ok := decodeStep(rec.Body)
	if !ok {
		w.Log.ErrorContext(ctx, "dropping a message that is not a step", "message_id", rec.MessageId)
		return
	}
	count, _ := strconv.Atoi(rec.Attributes["ApproximateReceiveCount"])
	if count < 1 {
		count = 1
	}
	d := durable.Attempt{ReceiveCount: count, Owner: rec.MessageId + "#" + strconv.Itoa(count)}
	var err error
	if route := w.Routes[step.Kind]; route != nil {
		err = route(ctx, step, d)
	} else {
		d.Chain = w.chain(ctx, d.Owner, mayChain, 0)
		err = w.Runner.HandleStep(ctx, step, d)
	}
	if err != nil {
		w.Log.WarnContext(ctx, "step will be retried", "run_id", step.RunID, "step_seq", step.Seq, "receive_count", count, "err", err)
		resp.BatchItemFailures = append(resp.BatchItemFailures, events.SQSBatchItemFailure{ItemIdentifier: rec.MessageId})
		failedGroups[group] = true
		return
	}
	w.continueChain(ctx, d.Chain)
}

// hider extends the visibility of a batch's open messages until stopped.
type hider struct {
	mu   sync.Mutex
	open map[string]string // message id → receipt handle
	quit chan struct{}
	wg   sync.WaitGroup
}

// keepHidden starts extending the visibility of recs' messages every
// Visibility/3, until each is done or the hider is stopped.
func (w *Worker) keepHidden(ctx context.Context, recs []events.SQSMessage) *hider {
	h := &hider{open: map[string]string{}, quit: make(chan struct{})}
	if w.Extender == nil || w.Visibility <= 0 {
		return h
	}
	for _, r := range recs {
		if r.ReceiptHandle != "" {
			h.open[r.MessageId] = r.ReceiptHandle
		}
	}
	if len(h.open) == 0 {
		return h
	}
	ticks, stop := w.ticks(w.Visibility / 3)
	h.wg.Add(1)
	go func() {
		defer h.wg.Done()
		defer stop()
		for {
			select {
			case <-h.quit:
				return
			case <-ticks:
			}
			h.mu.Lock()
			open := maps.Clone(h.open)
			h.mu.Unlock()
			for id, handle := range open {
				err := w.Extender.ExtendVisibility(context.WithoutCancel(ctx), handle, w.Visibility)
				if err == nil {
					continue
				}
				w.Log.WarnContext(ctx, "extend a step's visibility", "message_id", id, "err", err)
				if errors.Is(err, core.ErrNotFound) {
					h.done(id) // visible again, or deleted: nothing to hide
				}
			}
		}
	}()
	return h
}

// ticks paces the visibility extensions.
func (w *Worker) ticks(every time.Duration) (<-chan time.Time, func()) {
	if w.Ticks != nil {
		return w.Ticks(every)
	}
	t := time.NewTicker(every)
	return t.C, t.Stop
}

// done stops extending a message's visibility.
func (h *hider) done(id string) {
	h.mu.Lock()
	delete(h.open, id)
	h.mu.Unlock()
}

// stop ends the extensions.
func (h *hider) stop() {
	close(h.quit)
	h.wg.Wait()
}

func decodeStep(body string) (core.Step, bool) {
	dec := json.NewDecoder(bytes.NewReader([]byte(body)))
	dec.DisallowUnknownFields()
	var s core.Step
	if err := dec.Decode(&s); err != nil {
		return core.Step{}, false
	}
	return s, s.RunID != ""
}
