package durable_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/baton-agents/baton/core"
	"github.com/baton-agents/baton/internal/durable"
)

// recorder is a notification publisher that records what it accepts;
// fail, when set, decides the fate of each Publish call first (an error
// refuses the batch; it may panic, like a crash after the commit).
type recorder struct {
	mu   sync.Mutex
	got  []core.Notification
	fail func(ns []core.Notification) error
}

func (r *recorder) Publish(_ context.Context, ns []core.Notification) error {
	r.mu.Lock()
	fail := r.fail
	r.mu.Unlock()
	if fail != nil {
		if err := fail(ns); err != nil {
			return err
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.got = append(r.got, ns...)
	return nil
}

func (r *recorder) sent() []core.Notification {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]core.Notification(nil), r.got...)
}

func detail(t *testing.T, n core.Notification) durable.NotificationDetail {
	t.Helper()
	var d durable.NotificationDetail
	if err := json.Unmarshal(n.Detail, &d); err != nil {
		t.Fatalf("notification %s: %v", n.ID, err)
	}
	if d.EventID != n.ID {
		t.Fatalf("detail event_id %q, notification id %q", d.EventID, n.ID)
	}
	return d
}

func (h *harness) unsent(t *testing.T) []core.Notification {
	t.Helper()
	ns, err := h.store.UnsentNotifications(context.Background(), h.clock.T.Add(time.Hour), 0)
	if err != nil {
		t.Fatal(err)
	}
	return ns
}

func (h *harness) decide(t *testing.T, runID, decision string) {
	t.Helper()
	rec, err := h.eng.Get(context.Background(), "acme", runID)
	if err != nil {
		t.Fatal(err)
	}
	_, acts := rec.State.Pending()
	if _, err := h.eng.Apply(context.Background(), "acme", runID, core.ApprovalDecision{ActionID: acts[0].ActionID, Decision: decision}); err != nil {
		t.Fatal(err)
	}
}

// A run that pauses for approval and finishes after accept gets exactly
// one paused and one finished notification, each marked sent; the
// paused one carries the action's redacted preview.
func TestNotificationsPausedThenFinished(t *testing.T) {
	h := newHarness(t, nil)
	id := h.start(t, scripted(turn("", call("c1", "ability/send_email", map[string]any{"to": "a@example.com", "api_key": "sk-secret"})), turn("Sent it.")), nil)
	h.pump(t)
	got := h.notes.sent()
	if len(got) != 1 || got[0].DetailType != core.NotificationPaused {
		t.Fatalf("after the pause: %+v", got)
	}
	d := detail(t, got[0])
	if d.Status != core.StatusApprovalRequired || d.Event != "paused" || d.RunID != id || d.Tenant != "acme" || d.Agent != "demo" || d.SessionID != "s-1" {
		t.Fatalf("paused detail: %+v", d)
	}
	if d.Pending == nil || len(d.Pending.Actions) != 1 {
		t.Fatalf("paused pending: %+v", d.Pending)
	}
	a := d.Pending.Actions[0]
	params, _ := a.Preview["parameters"].(map[string]any)
	if a.ToolName != "ability/send_email" || params["to"] != "a@example.com" || params["api_key"] != core.RedactedValue || a.ExpiresAt.IsZero() {
		t.Fatalf("paused action: %+v", a)
	}
	if string(got[0].Detail) == "" || json.Valid(got[0].Detail) == false {
		t.Fatal("detail is not JSON")
	}

	h.decide(t, id, "accept")
	h.pump(t)
	got = h.notes.sent()
	if len(got) != 2 || got[1].DetailType != core.NotificationFinished {
		t.Fatalf("after accept: %+v", got)
	}
	d = detail(t, got[1])
	if d.Status != core.StatusCompleted || d.FinalContent != "Sent it." || d.Usage == nil || d.Pending != nil {
		t.Fatalf("finished detail: %+v", d)
	}
	if got[0].ID == got[1].ID {
		t.Fatalf("two notifications share id %s", got[0].ID)
	}
	if un := h.unsent(t); len(un) != 0 {
		t.Fatalf("unsent after publishing: %+v", un)
	}
	// The sweeper has nothing to send again.
	h.clock.T = h.clock.T.Add(time.Hour)
	if _, err := h.eng.Sweep(context.Background(), 10); err != nil {
		t.Fatal(err)
	}
	if n := len(h.notes.sent()); n != 2 {
		t.Fatalf("the sweeper sent again: %d notifications", n)
	}
}

// Steps that neither pause nor finish (server tools, turns) publish
// nothing; a client tool pause is a paused notification.
func TestNotificationsOnlyForQualifyingTransitions(t *testing.T) {
	h := newHarness(t, nil)
	h.start(t, scripted(turn("", call("c1", "ability/search", map[string]any{"q": "a"})), turn("", call("c2", "client/get_calendar", map[string]any{"day": "mon"})), turn("Done.")), func(r *durable.StartRequest) {
		r.RequestTools = []any{map[string]any{"name": "client/get_calendar", "description": "Calendar.", "parameters": map[string]any{"type": "object"}}}
	})
	h.pump(t)
	got := h.notes.sent()
	if len(got) != 1 {
		t.Fatalf("notifications: %+v", got)
	}
	d := detail(t, got[0])
	if d.Status != core.StatusRuntimeToolPending || len(d.Pending.ToolRequests) != 1 || d.Pending.ToolRequests[0].Parameters["day"] != "mon" || len(d.Pending.Actions) != 0 {
		t.Fatalf("paused detail: %+v", d)
	}
}

// A crash between the commit and the publish (here: the publisher
// panics, then fails) leaves the notification unsent; the sweeper sends
// it once NotifyAfter has passed, with the same event id, and then never
// again.
func TestNotificationCrashBetweenCommitAndPublish(t *testing.T) {
	for _, mode := range []string{"panic", "error"} {
		t.Run(mode, func(t *testing.T) {
			h := newHarness(t, nil)
			h.notes.fail = func([]core.Notification) error {
				if mode == "panic" {
					panic("crash after the commit")
				}
				return errors.New("eventbridge unavailable")
			}
			id := h.start(t, scripted(turn("", call("c1", "ability/send_email", map[string]any{"to": "b"})), turn("Sent.")), nil)
			func() {
				defer func() { _ = recover() }()
				h.pump(t)
			}()
			if n := len(h.notes.sent()); n != 0 {
				t.Fatalf("published despite the crash: %d", n)
			}
			st, err := h.eng.Get(context.Background(), "acme", id)
			if err != nil || st.State.Status != core.StatusApprovalRequired {
				t.Fatalf("the commit did not stand: %v %v", st.State.Status, err)
			}
			un := h.unsent(t)
			if len(un) != 1 {
				t.Fatalf("unsent: %+v", un)
			}
			h.notes.fail = nil
			// Before NotifyAfter the committing process still owns it.
			if _, err := h.eng.Sweep(context.Background(), 10); err != nil {
				t.Fatal(err)
			}
			if n := len(h.notes.sent()); n != 0 {
				t.Fatalf("the sweeper sent too early: %d", n)
			}
			h.clock.T = h.clock.T.Add(31 * time.Second)
			for range 2 {
				if _, err := h.eng.Sweep(context.Background(), 10); err != nil {
					t.Fatal(err)
				}
			}
			got := h.notes.sent()
			if len(got) != 1 || got[0].ID != un[0].ID || got[0].DetailType != core.NotificationPaused || string(got[0].Detail) != string(un[0].Detail) {
				t.Fatalf("swept: %+v, stored %+v", got, un)
			}
		})
	}
}

// An expiry by the sweeper is a Baton Pending Expired notification; a
// re-send after a failed publish carries the same event id.
func TestNotificationExpiredSameIDOnResend(t *testing.T) {
	h := newHarness(t, nil)
	h.start(t, scripted(turn("", call("c1", "ability/send_email", map[string]any{"to": "b"})), turn("Gave up.")), nil)
	h.pump(t)
	var mu sync.Mutex
	var refused []core.Notification
	h.notes.fail = func(ns []core.Notification) error {
		mu.Lock()
		defer mu.Unlock()
		refused = append(refused, ns...)
		return errors.New("throttled")
	}
	h.clock.T = h.clock.T.Add(25 * time.Hour)
	if _, err := h.eng.Sweep(context.Background(), 10); err != nil {
		t.Fatal(err)
	}
	if len(refused) != 1 || refused[0].DetailType != core.NotificationExpired {
		t.Fatalf("refused: %+v", refused)
	}
	d := detail(t, refused[0])
	if len(d.Expired) != 1 || d.Expired[0].Kind != core.PendingActionKind || d.Status != core.StatusQueued {
		t.Fatalf("expired detail: %+v", d)
	}
	h.notes.fail = nil
	h.clock.T = h.clock.T.Add(time.Minute)
	if _, err := h.eng.Sweep(context.Background(), 10); err != nil {
		t.Fatal(err)
	}
	got := h.notes.sent()
	if len(got) != 2 || got[1].ID != refused[0].ID || got[0].DetailType != core.NotificationPaused {
		t.Fatalf("after the re-send: %+v", got)
	}
	h.pump(t)
	if got = h.notes.sent(); len(got) != 3 || got[2].DetailType != core.NotificationFinished {
		t.Fatalf("after the run finished: %+v", got)
	}
}

type unsentFails struct{ durable.Store }

func (unsentFails) UnsentNotifications(context.Context, time.Time, int) ([]core.Notification, error) {
	return nil, errors.New("table unavailable")
}

// A sweep that cannot list the unsent notifications says so.
func TestSweepReportsUnlistableNotifications(t *testing.T) {
	h := newHarness(t, func(s durable.Store) durable.Store { return unsentFails{s} })
	if _, err := h.eng.Sweep(context.Background(), 0); err == nil || !strings.Contains(err.Error(), "table unavailable") {
		t.Fatalf("sweep: %v", err)
	}
}
