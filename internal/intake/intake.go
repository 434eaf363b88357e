// Package intake is the intake queue's driving adapter: each message of
// the intake queue (a standard SQS queue) starts one run. The body is a
// POST /v1/runs body plus "tenant" and an optional "idempotency_key",
// validated by the API's own path (internal/runspec), so a message the
// API would refuse is refused with the same code and message.
//
// The tenant is trusted as written: only principals granted
// sqs:SendMessage on the intake queue can write a message, so that grant
// is the authority to start runs for any tenant (grant it as you would a
// token of every tenant).
//
// Outcomes, per message:
//   - valid: one run, whose principal is the intake (actor "intake",
//     auth source "sqs_intake", capability ceiling runs:write);
//   - a duplicate (the same idempotency_key, default the SQS message id,
//     for the same tenant, within the idempotency TTL): no second run;
//   - refused (invalid, unknown agent, idempotency_key reused with
//     another body): the handler itself sends the message to the
//     dead-letter queue, body unchanged, with the refusal in the message
//     attributes baton_error_code, baton_error_message and
//     baton_source_message_id, and reports the message done, so no run is
//     ever half created and SQS does not redrive it a second time;
//   - transient (a store or queue outage, the session busy with an
//     unfinished run, a key in flight): reported as a batch item failure,
//     so SQS delivers it again, and after the queue's maximum receives
//     redrives it to the dead-letter queue without baton_ attributes.
//
// A message {"schedule_fire": {"tenant", "schedule_id", "fire_time"}},
// which EventBridge Scheduler sends at a schedule's fire time, fires that
// schedule instead (internal/schedules): once per fire time, its trigger
// recorded; a transient failure is retried, and recorded as failed on the
// message's last receive.
package intake

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/baton-agents/baton/core"
	"github.com/baton-agents/baton/internal/durable"
	"github.com/baton-agents/baton/internal/runspec"
	"github.com/baton-agents/baton/internal/schedules"
)

// Dead-letter message attributes.
const (
	AttrErrorCode       = "baton_error_code"
	AttrErrorMessage    = "baton_error_message"
	AttrSourceMessageID = "baton_source_message_id"
)

// Principal fields of an intake run.
const (
	ActorID    = "intake"
	AuthSource = "sqs_intake"
)

// maxErrorMessage caps baton_error_message (SQS caps a message with its
// attributes at 256 KB; the body is kept whole).
const maxErrorMessage = 1024

// Sender sends a message with attributes: the intake dead-letter queue.
type Sender interface {
	Send(ctx context.Context, body string, attrs map[string]string) error
}

// Handler handles intake batches.
type Handler struct {
	Runner      *durable.Runner
	Validator   runspec.Validator
	Idem        core.IdempotencyStore
	DeadLetters Sender
	Clock       core.Clock
	Log         *slog.Logger
	// IdempotencyTTL is how long a key is remembered (default 24h);
	// InFlightLease is how long a started message holds its key before a
	// redelivery may take it over (default 2m: keep it above the intake
	// function's timeout and below the queue's visibility timeout).
	IdempotencyTTL time.Duration
	InFlightLease  time.Duration
	// Schedules fires the schedule_fire messages EventBridge Scheduler
	// sends (nil: they are refused to the dead-letter queue).
	Schedules ScheduleFirer
	// MaxReceives is the intake queue's receive count before SQS
	// redrives a message (default 5): on its last receive a fire time
	// that keeps failing is recorded as failed.
	MaxReceives int
}

// ScheduleFirer fires one fire time of a schedule (internal/schedules).
type ScheduleFirer interface {
	Fire(ctx context.Context, tenant, id string, fire time.Time, o schedules.FireOptions) (core.Trigger, error)
}

// message is an intake message.
type message struct {
	runspec.Body
	Tenant         string `json:"tenant"`
	IdempotencyKey string `json:"idempotency_key"`
}

// errRetry marks a message to deliver again.
var errRetry = errors.New("retry later")

// Handle processes a batch. It returns the messages to retry; it never
// fails the whole batch.
func (h *Handler) Handle(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
	var resp events.SQSEventResponse
	for _, rec := range ev.Records {
		if err := h.handle(ctx, rec); err != nil {
			h.log().WarnContext(ctx, "intake message will be retried", "message_id", rec.MessageId, "err", err)
			resp.BatchItemFailures = append(resp.BatchItemFailures, events.SQSBatchItemFailure{ItemIdentifier: rec.MessageId})
		}
	}
	return resp, nil
}

func (h *Handler) handle(ctx context.Context, rec events.SQSMessage) error {
	if strings.Contains(rec.Body, `"schedule_fire"`) {
		return h.fire(ctx, rec)
	}
	var m message
	if err := runspec.Decode([]byte(rec.Body), &m, false); err != nil {
		return h.deadLetter(ctx, rec, err)
	}
	tenant := strings.TrimSpace(m.Tenant)
	if !core.ValidTenant(tenant) {
		return h.deadLetter(ctx, rec, runspec.Errorf(http.StatusBadRequest, "invalid_request", "tenant must be %s", core.TenantPattern))
	}
	key := m.IdempotencyKey
	if key == "" {
		key = rec.MessageId
	}
	if !runspec.ValidIdempotencyKey(key) {
		return h.deadLetter(ctx, rec, runspec.Errorf(http.StatusBadRequest, "invalid_idempotency_key", "idempotency_key must be 1 to 255 visible ASCII characters"))
	}
	req, err := h.Validator.Request(m.Body)
	if err != nil {
		return h.deadLetter(ctx, rec, err)
	}
	caller, err := core.ParseCallerContext(nil, rec.MessageId, core.MaxChainDepth)
	if err != nil {
		return h.deadLetter(ctx, rec, runspec.Errorf(http.StatusBadRequest, "invalid_caller_context", "%v", err))
	}
	req.Principal = &core.Principal{ActorID: ActorID, AgentID: m.Agent, AuthSource: AuthSource, RequestContext: "intake",
		Tenant: tenant, CapabilityCeiling: []string{"runs:write"}, Caller: caller}

	scope := tenant + " intake"
	sum := sha256.Sum256([]byte(rec.Body))
	hash := hex.EncodeToString(sum[:])
	now := h.clock().Now()
	prev, err := h.Idem.BeginIdempotent(ctx, scope, key, hash, now, h.lease())
	if err != nil {
		return err
	}
	if prev != nil {
		switch {
		case prev.Hash != hash:
			return h.deadLetter(ctx, rec, runspec.Errorf(http.StatusUnprocessableEntity, "idempotency_key_reused", "this idempotency_key was used with a different message body"))
		case !prev.Done:
			return fmt.Errorf("%w: a message with idempotency_key %q is still being started", errRetry, key)
		}
		h.log().InfoContext(ctx, "intake duplicate dropped", "message_id", rec.MessageId, "tenant", tenant, "idempotency_key", key)
		return nil
	}
	snap, err := h.Runner.Start(ctx, tenant, req)
	if err != nil {
		if aerr := h.Idem.AbortIdempotent(ctx, scope, key); aerr != nil {
			h.log().ErrorContext(ctx, "abort intake idempotency key", "err", aerr)
		}
		if ae := runspec.Classify(err); ae.Status < 500 && ae.Status != http.StatusConflict && ae.Status != http.StatusTooManyRequests {
			return h.deadLetter(ctx, rec, ae)
		}
		return err
	}
	body, _ := json.Marshal(map[string]string{"run_id": snap.State.RunID, "session_id": snap.State.SessionID})
	if err := h.Idem.FinishIdempotent(ctx, scope, key, core.IdempotencyRecord{Hash: hash, Done: true, StatusCode: http.StatusAccepted, Body: body, ExpiresAt: now.Add(h.ttl())}); err != nil {
		h.log().ErrorContext(ctx, "store intake idempotency record", "err", err)
	}
	h.log().InfoContext(ctx, "intake run started", "message_id", rec.MessageId, "tenant", tenant, "run_id", snap.State.RunID, "idempotency_key", key)
	return nil
}

// fire handles a schedule's fire time: its trigger is recorded (the run
// it started, or why not); a transient failure is retried, and recorded
// as failed on the message's last receive.
func (h *Handler) fire(ctx context.Context, rec events.SQSMessage) error {
	var m struct {
		Fire *core.ScheduleFire `json:"schedule_fire"`
	}
	if err := runspec.Decode([]byte(rec.Body), &m, false); err != nil {
		return h.deadLetter(ctx, rec, err)
	}
	if m.Fire == nil || h.Schedules == nil {
		return h.deadLetter(ctx, rec, runspec.Errorf(http.StatusBadRequest, "invalid_request", "schedule_fire: this deployment fires no schedules here, or the message has none"))
	}
	at, err := time.Parse(time.RFC3339, m.Fire.FireTime)
	if err != nil || !core.ValidTenant(m.Fire.Tenant) {
		return h.deadLetter(ctx, rec, runspec.Errorf(http.StatusBadRequest, "invalid_request", "schedule_fire needs a tenant and an RFC 3339 fire_time, got %q and %q", m.Fire.Tenant, m.Fire.FireTime))
	}
	count, _ := strconv.Atoi(rec.Attributes["ApproximateReceiveCount"])
	t, err := h.Schedules.Fire(ctx, m.Fire.Tenant, m.Fire.ScheduleID, at, schedules.FireOptions{LastAttempt: count >= h.maxReceives()})
	switch {
	case errors.Is(err, schedules.ErrStale):
		h.log().WarnContext(ctx, "schedule fire dropped", "message_id", rec.MessageId, "err", err)
		return nil
	case err != nil:
		return err
	}
	h.log().InfoContext(ctx, "schedule fired", "message_id", rec.MessageId, "tenant", m.Fire.Tenant, "schedule_id", m.Fire.ScheduleID,
		"fire_time", m.Fire.FireTime, "outcome", t.Outcome, "run_id", t.RunID, "reason", t.Reason)
	return nil
}

func (h *Handler) maxReceives() int {
	if h.MaxReceives <= 0 {
		return 5
	}
	return h.MaxReceives
}

// deadLetter sends the message, body unchanged, to the dead-letter queue
// with the refusal in its attributes; the message is then done.
func (h *Handler) deadLetter(ctx context.Context, rec events.SQSMessage, refusal error) error {
	ae := runspec.Classify(refusal)
	msg := ae.Message
	if len(msg) > maxErrorMessage {
		msg = msg[:maxErrorMessage]
	}
	attrs := map[string]string{AttrErrorCode: ae.Code, AttrErrorMessage: msg, AttrSourceMessageID: rec.MessageId}
	if err := h.DeadLetters.Send(ctx, rec.Body, attrs); err != nil {
		return fmt.Errorf("dead-letter refused message (%s): %w", ae.Code, err)
	}
	h.log().WarnContext(ctx, "intake message dead-lettered", "message_id", rec.MessageId, "code", ae.Code, "message", msg)
	return nil
}

func (h *Handler) log() *slog.Logger {
	if h.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return h.Log
}

func (h *Handler) clock() core.Clock {
	if h.Clock == nil {
		return core.SystemClock{}
	}
	return h.Clock
}

func (h *Handler) ttl() time.Duration {
	if h.IdempotencyTTL <= 0 {
		return 24 * time.Hour
	}
	return h.IdempotencyTTL
}

func (h *Handler) lease() time.Duration {
	if h.InFlightLease <= 0 {
		return 2 * time.Minute
	}
	return h.InFlightLease
}
