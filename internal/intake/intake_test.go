package intake_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/baton-agents/baton/core"
	"github.com/baton-agents/baton/internal/app"
	"github.com/baton-agents/baton/internal/durable"
	"github.com/baton-agents/baton/internal/intake"
)

const agentsJSON = `{"agents":[{"slug":"demo","model":{"provider":"scripted"},"allow_overrides":["model"]}]}`

// outageStore fails CreateRun while down is set, as a store outage.
type outageStore struct {
	durable.Store
	down  *atomic.Bool
	count *atomic.Int32
	// full refuses runs as a tenant at its active-run cap.
	full *atomic.Bool
}

func (s outageStore) CreateRun(ctx context.Context, head core.SessionHead, w core.Write) error {
	if s.down.Load() {
		return core.Retryable(errors.New("table unavailable"))
	}
	if s.full.Load() {
		return &core.TooManyActiveError{Tenant: w.Tenant, Limit: 1}
	}
	s.count.Add(1)
	return s.Store.CreateRun(ctx, head, w)
}

type env struct {
	a     *app.App
	down  *atomic.Bool
	full  *atomic.Bool
	runs  *atomic.Int32
	steps core.StepReceiver
}

func newEnv(t *testing.T) *env {
	t.Helper()
	e := &env{down: &atomic.Bool{}, full: &atomic.Bool{}, runs: &atomic.Int32{}}
	a, err := app.Build(context.Background(), app.Config{Stores: app.Stores{Memory: true, Visibility: time.Minute}, Agents: app.Agents{JSON: agentsJSON},
		Providers: []string{"scripted"}}, app.Deps{Clock: &core.FixedClock{T: time.Date(2026, 5, 6, 7, 8, 9, 0, time.UTC)}, IDs: &core.SequentialIDs{},
		Log: slog.New(slog.DiscardHandler), WrapStore: func(s durable.Store) durable.Store { return outageStore{s, e.down, e.runs, e.full} }})
	if err != nil {
		t.Fatal(err)
	}
	if a.Intake == nil || a.IntakeQueue == nil || a.IntakeDeadLetters == nil {
		t.Fatal("the embedded stores have no intake")
	}
	e.a, e.steps = a, a.Steps
	return e
}

func (e *env) handle(t *testing.T, recs ...events.SQSMessage) []string {
	t.Helper()
	resp, err := e.a.Intake.Handle(context.Background(), events.SQSEvent{Records: recs})
	if err != nil {
		t.Fatal(err)
	}
	var failed []string
	for _, f := range resp.BatchItemFailures {
		failed = append(failed, f.ItemIdentifier)
	}
	return failed
}

func (e *env) deadLetters(t *testing.T) []core.ReceivedMessage {
	t.Helper()
	ds, err := e.a.IntakeDeadLetters.Receive(context.Background(), 10, 0)
	if err != nil {
		t.Fatal(err)
	}
	return ds
}

func msg(id, body string) events.SQSMessage { return events.SQSMessage{MessageId: id, Body: body} }

func valid(extra string) string {
	return `{"tenant":"acme",` + extra + `"agent":"demo","messages":[{"role":"user","content":"hi"}],"model":{"provider":"scripted","turns":[{"content":"hello"}]}}`
}

func TestValidMessageStartsOneRun(t *testing.T) {
	e := newEnv(t)
	if failed := e.handle(t, msg("m-1", valid(`"metadata":{"source":"queue"},`))); len(failed) != 0 {
		t.Fatalf("failed: %v", failed)
	}
	if n := e.runs.Load(); n != 1 {
		t.Fatalf("%d runs", n)
	}
	ds, _ := e.steps.Receive(context.Background(), 10, 0)
	if len(ds) != 1 {
		t.Fatalf("%d first steps queued", len(ds))
	}
	var step core.Step
	if err := json.Unmarshal(ds[0].Body, &step); err != nil {
		t.Fatal(err)
	}
	rec, err := e.a.Runner.Get(context.Background(), "acme", step.RunID)
	if err != nil {
		t.Fatalf("the run is not acme's: %v", err)
	}
	p := rec.State.Config.Principal
	if p == nil || p.ActorID != intake.ActorID || p.AuthSource != intake.AuthSource || p.Tenant != "acme" || !p.HasScopes([]string{"runs:write"}) {
		t.Fatalf("principal %+v", p)
	}
	if len(e.deadLetters(t)) != 0 {
		t.Fatal("a valid message was dead-lettered")
	}
}

// TestInvalidMessagesAreDeadLettered: each refusal is the API's code and
// message, sent to the dead-letter queue with the body unchanged; no run
// is created and the message is reported done.
func TestInvalidMessagesAreDeadLettered(t *testing.T) {
	e := newEnv(t)
	cases := []struct{ body, code, message string }{
		{`{"tenant":"acme","agent":"demo","messages":[]}`, "invalid_request", "messages must hold at least one message"},
		{valid(`"colour":"red",`), "unknown_field", `unknown field "colour"`},
		{`{"agent":"demo","messages":[{"role":"user","content":"hi"}]}`, "invalid_request", "tenant must be 1 to 64 letters, digits, _ and -, starting with a letter or digit"},
		{`{"tenant":"acme#RUN#x","agent":"demo","messages":[{"role":"user","content":"hi"}]}`, "invalid_request", "tenant must be 1 to 64 letters, digits, _ and -, starting with a letter or digit"},
		{`not json`, "invalid_body", ""},
		{strings.Replace(valid(""), `"agent":"demo"`, `"agent":"nope"`, 1), "unknown_agent", ""},
		{strings.Replace(valid(""), `"scripted","turns"`, `"openai","turns"`, 1), "provider_not_enabled", `model provider "openai" is not enabled in this deployment (enabled: scripted)`},
		{valid(`"idempotency_key":"has space",`), "invalid_idempotency_key", "idempotency_key must be 1 to 255 visible ASCII characters"},
	}
	var recs []events.SQSMessage
	for i, c := range cases {
		recs = append(recs, msg(fmt.Sprintf("bad-%d", i), c.body))
	}
	if failed := e.handle(t, recs...); len(failed) != 0 {
		t.Fatalf("refused messages reported as failures: %v", failed)
	}
	if n := e.runs.Load(); n != 0 {
		t.Fatalf("%d runs from invalid messages", n)
	}
	dead := e.deadLetters(t)
	if len(dead) != len(cases) {
		t.Fatalf("%d dead letters, want %d", len(dead), len(cases))
	}
	bySource := map[string]core.ReceivedMessage{}
	for _, d := range dead {
		bySource[d.Attributes[intake.AttrSourceMessageID]] = d
	}
	for i, c := range cases {
		d, ok := bySource[fmt.Sprintf("bad-%d", i)]
		switch {
		case !ok:
			t.Errorf("case %d: not dead-lettered", i)
		case string(d.Body) != c.body:
			t.Errorf("case %d: body %q changed", i, d.Body)
		case d.Attributes[intake.AttrErrorCode] != c.code:
			t.Errorf("case %d: code %q, want %q", i, d.Attributes[intake.AttrErrorCode], c.code)
		case c.message != "" && d.Attributes[intake.AttrErrorMessage] != c.message:
			t.Errorf("case %d: message %q, want %q", i, d.Attributes[intake.AttrErrorMessage], c.message)
		case d.Attributes[intake.AttrErrorMessage] == "":
			t.Errorf("case %d: no error message", i)
		}
	}
}

// TestDuplicatesStartOneRun: a redelivery of one SQS message, and two
// messages with one idempotency_key, each start one run; the key reused
// with another body is refused.
func TestDuplicatesStartOneRun(t *testing.T) {
	e := newEnv(t)
	one := msg("m-1", valid(""))
	keyed := valid(`"idempotency_key":"order-42",`)
	if failed := e.handle(t, one, one, msg("m-2", keyed), msg("m-3", keyed)); len(failed) != 0 {
		t.Fatalf("failed: %v", failed)
	}
	if failed := e.handle(t, one, msg("m-4", keyed)); len(failed) != 0 {
		t.Fatalf("failed: %v", failed)
	}
	if n := e.runs.Load(); n != 2 {
		t.Fatalf("%d runs, want 2", n)
	}
	// Keys are the tenant's: globex's order-42 is its own run.
	if failed := e.handle(t, msg("m-5", strings.Replace(keyed, `"acme"`, `"globex"`, 1))); len(failed) != 0 || e.runs.Load() != 3 {
		t.Fatalf("failed %v, %d runs", failed, e.runs.Load())
	}
	other := strings.Replace(keyed, `"hi"`, `"hello"`, 1)
	if failed := e.handle(t, msg("m-6", other)); len(failed) != 0 || e.runs.Load() != 3 {
		t.Fatalf("failed %v, %d runs", failed, e.runs.Load())
	}
	dead := e.deadLetters(t)
	if len(dead) != 1 || dead[0].Attributes[intake.AttrErrorCode] != "idempotency_key_reused" {
		t.Fatalf("dead letters %+v", dead)
	}
}

// TestTransientFailureIsRetried: a store outage reports the message as
// a batch item failure, dead-letters nothing and leaves its key free, so
// the redelivery starts the run.
func TestTransientFailureIsRetried(t *testing.T) {
	e := newEnv(t)
	e.down.Store(true)
	if failed := e.handle(t, msg("m-ok", `{"tenant":"acme"}`), msg("m-1", valid(""))); len(failed) != 1 || failed[0] != "m-1" {
		t.Fatalf("failures %v, want [m-1]", failed)
	}
	if dead := e.deadLetters(t); len(dead) != 1 || dead[0].Attributes[intake.AttrSourceMessageID] != "m-ok" {
		t.Fatalf("dead letters %+v", dead)
	}
	e.down.Store(false)
	if failed := e.handle(t, msg("m-1", valid(""))); len(failed) != 0 || e.runs.Load() != 1 {
		t.Fatalf("redelivery: failed %v, %d runs", failed, e.runs.Load())
	}
}

// TestActiveRunCapIsRetried: a tenant at its active-run cap (429) is not
// a refusal of the message: it is retried, and started once a place is
// free.
func TestActiveRunCapIsRetried(t *testing.T) {
	e := newEnv(t)
	e.full.Store(true)
	if failed := e.handle(t, msg("m-1", valid(""))); len(failed) != 1 || len(e.deadLetters(t)) != 0 {
		t.Fatalf("at the cap: failures %v, %d dead letters", failed, len(e.deadLetters(t)))
	}
	e.full.Store(false)
	if failed := e.handle(t, msg("m-1", valid(""))); len(failed) != 0 || e.runs.Load() != 1 {
		t.Fatalf("redelivery: failed %v, %d runs", failed, e.runs.Load())
	}
}

// TestDeadLetterQueueOutageIsRetried: a refusal that cannot be
// dead-lettered is retried rather than lost.
func TestDeadLetterQueueOutageIsRetried(t *testing.T) {
	e := newEnv(t)
	h := *e.a.Intake
	h.DeadLetters = failingSender{}
	resp, _ := h.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{msg("m-1", `{}`)}})
	if len(resp.BatchItemFailures) != 1 {
		t.Fatalf("failures %v", resp.BatchItemFailures)
	}
}

type failingSender struct{}

func (failingSender) Send(context.Context, string, map[string]string) error {
	return core.Retryable(errors.New("queue unavailable"))
}
