package storetest

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/baton-agents/baton/core"
)

// notification is a test outbox record of run at t0+offset.
func notification(run, kind string, offset time.Duration) core.Notification {
	id := run + ":" + kind
	return core.Notification{ID: id, RunID: run, DetailType: core.NotificationPaused,
		Detail: json.RawMessage(fmt.Sprintf(`{"event_id":%q,"n":12345678901234567}`, id)), Time: t0.Add(offset)}
}

// testOutbox: a commit's notifications are stored with it (and not when
// it fails), listed while unsent in time order up to a bound and a
// limit, and gone from the list once marked sent.
func testOutbox(t *testing.T, newStore func(*testing.T) Store) {
	s := newStore(t)
	h := newHarness(t, s, "tenant-a")
	unsent := func(before time.Duration, limit int, want ...string) func() error {
		return func() error {
			got, err := s.UnsentNotifications(h.ctx, t0.Add(before), limit)
			if err != nil {
				return err
			}
			ids := make([]string, len(got))
			for i, n := range got {
				ids[i] = n.ID
			}
			if !slices.Equal(ids, want) && !(len(ids) == 0 && len(want) == 0) {
				return fmt.Errorf("UnsentNotifications(t0+%s, %d) = %v, want %v", before, limit, ids, want)
			}
			return nil
		}
	}
	eventually(t, unsent(time.Hour, 0))

	// A new run's write and a commit's write carry notifications.
	head := h.head("s-1")
	out := h.startOutput(head, "r-1", "s-1", config(t, turn("Hello.")), nil, user("Hi"))
	w := h.write(core.RunState{}, out)
	w.Notifications = []core.Notification{notification("r-1", "a", 10*time.Second)}
	if err := s.CreateRun(h.ctx, head, w); err != nil {
		t.Fatal(err)
	}
	h.mustStart("r-2", "s-2", config(t, turn("Hello.")), nil, user("Hi")...)
	prev, next, _ := h.next("r-2")
	w = h.write(prev, next)
	w.Notifications = []core.Notification{notification("r-2", "b", 0), notification("r-2", "c", 20*time.Second)}
	if err := s.Commit(h.ctx, w); err != nil {
		t.Fatal(err)
	}
	// A commit that fails stores none of its notifications.
	w.Notifications = []core.Notification{notification("r-2", "lost", 0)}
	if err := s.Commit(h.ctx, w); !errors.Is(err, core.ErrConflict) {
		t.Fatalf("stale commit: got %v, want ErrConflict", err)
	}
	// A notification of another run is refused.
	prev, next, _ = h.next("r-1")
	w = h.write(prev, next)
	w.Notifications = []core.Notification{notification("r-2", "x", 0)}
	if err := s.Commit(h.ctx, w); !errors.Is(err, core.ErrInvalidInput) {
		t.Fatalf("foreign notification: got %v, want ErrInvalidInput", err)
	}

	eventually(t, unsent(-time.Nanosecond, 0))
	eventually(t, unsent(0, 0, "r-2:b"))
	eventually(t, unsent(time.Hour, 0, "r-2:b", "r-1:a", "r-2:c"))
	eventually(t, unsent(time.Hour, 2, "r-2:b", "r-1:a"))
	got, err := s.UnsentNotifications(h.ctx, t0, 0)
	if err != nil || len(got) != 1 {
		t.Fatalf("unsent: %v %v", got, err)
	}
	want := notification("r-2", "b", 0)
	if canonical(t, got[0]) != canonical(t, want) {
		t.Fatalf("notification read back:\n got %s\nwant %s", canonical(t, got[0]), canonical(t, want))
	}

	// Marking sent takes a notification out of the list; marking it again,
	// or an unknown one, is no error.
	for _, id := range []string{"r-2:b", "r-2:b", "r-2:unknown"} {
		if err := s.MarkNotificationSent(h.ctx, "r-2", id); err != nil {
			t.Fatalf("mark %s sent: %v", id, err)
		}
	}
	if err := s.MarkNotificationSent(h.ctx, "r-unknown", "x"); err != nil {
		t.Fatalf("mark sent on an unknown run: %v", err)
	}
	eventually(t, unsent(time.Hour, 0, "r-1:a", "r-2:c"))
}

// testOutboxMany: one commit carries many outbox records (a run that
// ends notifies its bus and callback, its parent, and stops its children)
// and they are all stored with it.
func testOutboxMany(t *testing.T, newStore func(*testing.T) Store) {
	s := newStore(t)
	h := newHarness(t, s, "tenant-a")
	h.mustStart("r-many", "s-many", config(t, turn("Hello.")), nil, user("Hi")...)
	prev, next, _ := h.next("r-many")
	w := h.write(prev, next)
	var want []string
	for i := range 12 {
		n := notification("r-many", fmt.Sprintf("n%02d", i), time.Duration(i)*time.Second)
		w.Notifications = append(w.Notifications, n)
		want = append(want, n.ID)
	}
	if err := s.Commit(h.ctx, w); err != nil {
		t.Fatalf("a commit with 12 outbox records: %v", err)
	}
	eventually(t, func() error {
		got, err := s.UnsentNotifications(h.ctx, t0.Add(time.Hour), 0)
		if err != nil {
			return err
		}
		var ids []string
		for _, n := range got {
			ids = append(ids, n.ID)
		}
		if !slices.Equal(ids, want) {
			return fmt.Errorf("unsent %v, want %v", ids, want)
		}
		return nil
	})
}

// callbackNotification is a test callback delivery record of run at
// t0+offset.
func callbackNotification(run, kind string, offset time.Duration) core.Notification {
	n := notification(run, kind, offset)
	n.ID += "@callback"
	n.Callback = &core.CallbackDelivery{EventID: run + ":" + kind, Event: "paused", Agent: "demo", URL: "https://hooks.example.com/baton"}
	return n
}

// testOutboxUpdate: UpdateNotification moves an unsent record in the
// list and stores its new content; a failed delivery is kept out of the
// list for good, also when a commit stores it; a sent record is left
// alone.
func testOutboxUpdate(t *testing.T, newStore func(*testing.T) Store) {
	s := newStore(t)
	h := newHarness(t, s, "tenant-a")
	h.mustStart("r-1", "s-1", config(t, turn("Hello.")), nil, user("Hi")...)
	prev, next, _ := h.next("r-1")
	w := h.write(prev, next)
	a, b, c := callbackNotification("r-1", "a", 0), callbackNotification("r-1", "b", time.Second), notification("r-1", "c", 2*time.Second)
	w.Notifications = []core.Notification{a, b, c}
	if err := s.Commit(h.ctx, w); err != nil {
		t.Fatal(err)
	}
	list := func(before time.Duration) ([]core.Notification, error) {
		return s.UnsentNotifications(h.ctx, t0.Add(before), 0)
	}
	ids := func(ns []core.Notification) []string {
		out := make([]string, len(ns))
		for i, n := range ns {
			out[i] = n.ID
		}
		return out
	}
	eventually(t, func() error {
		got, err := list(time.Hour)
		if err != nil || !slices.Equal(ids(got), []string{a.ID, b.ID, c.ID}) {
			return fmt.Errorf("unsent: %v %v", ids(got), err)
		}
		return nil
	})
	// a fails once: it moves to t0+1m with its attempt recorded.
	a.Time = t0.Add(time.Minute)
	a.Callback.Attempts, a.Callback.LastStatus, a.Callback.LastError = 1, 503, "down"
	if err := s.UpdateNotification(h.ctx, a); err != nil {
		t.Fatal(err)
	}
	// b fails for good; c is sent, and an update of it is ignored.
	b.Callback.Attempts, b.Callback.Failed = 5, true
	if err := s.UpdateNotification(h.ctx, b); err != nil {
		t.Fatal(err)
	}
	if err := s.MarkNotificationSent(h.ctx, "r-1", c.ID); err != nil {
		t.Fatal(err)
	}
	if err := s.UpdateNotification(h.ctx, c); err != nil {
		t.Fatal(err)
	}
	// An update of a failed or an unknown record changes nothing.
	b2 := b
	b2.Callback = &core.CallbackDelivery{EventID: b.Callback.EventID}
	if err := s.UpdateNotification(h.ctx, b2); err != nil {
		t.Fatal(err)
	}
	if err := s.UpdateNotification(h.ctx, callbackNotification("r-1", "unknown", 0)); err != nil {
		t.Fatal(err)
	}
	eventually(t, func() error {
		got, err := list(30 * time.Second)
		if err != nil || len(got) != 0 {
			return fmt.Errorf("unsent before a's new time: %v %v", ids(got), err)
		}
		got, err = list(time.Hour)
		if err != nil || len(got) != 1 || canonical(t, got[0]) != canonical(t, a) {
			return fmt.Errorf("unsent: %v %v, want only %s", ids(got), err, canonical(t, a))
		}
		return nil
	})

	// A commit that stores a failed delivery (the give-up commit) keeps
	// it out of the list.
	prev = h.load("r-1")
	next, err := h.m.Apply(h.ctx, prev, nil, core.CallbackFailed{EventID: a.Callback.EventID})
	if err != nil {
		t.Fatal(err)
	}
	w = h.write(prev, next)
	w.AfterFinish = core.IsTerminal(prev.Status)
	a.Callback.Failed = true
	w.Notifications = []core.Notification{a}
	if err := s.Commit(h.ctx, w); err != nil {
		t.Fatal(err)
	}
	eventually(t, func() error {
		got, err := list(time.Hour)
		if err != nil || len(got) != 0 {
			return fmt.Errorf("unsent after the failed record's commit: %v %v", ids(got), err)
		}
		return nil
	})
}

// testCommitAfterFinish: a write of an already finished run
// (AfterFinish) commits its events while the session has moved on to
// another run, and leaves that run's lock in place.
func testCommitAfterFinish(t *testing.T, newStore func(*testing.T) Store) {
	s := newStore(t)
	h := newHarness(t, s, "tenant-a")
	h.mustStart("r-1", "s-1", config(t, turn("Hello.")), nil, user("Hi")...)
	h.drive("r-1")
	if st := h.load("r-1"); !core.IsTerminal(st.Status) {
		t.Fatalf("r-1 is %s", st.Status)
	}
	h.mustStart("r-2", "s-1", config(t, turn("", call("c1", "client/get_calendar", map[string]any{"day": "monday"}))), []any{clientTool("client/get_calendar")}, user("Again")...)
	h.drive("r-2")
	if st := h.load("r-2"); st.Status != core.StatusRuntimeToolPending {
		t.Fatalf("r-2 is %s", st.Status)
	}

	prev := h.failCallback("r-1", "r-1:3:finished")
	evs := h.events("r-1", prev.NextEventSeq-1, 0, 0)
	if len(evs) != 1 || evs[0].Type != core.EventCallbackFailed || evs[0].Fields()["event_id"] != "r-1:3:finished" {
		t.Fatalf("events after finish: %+v", evs)
	}
	// r-2 still holds the session.
	if _, err := h.start("r-3", "s-1", config(t, turn("Hello.")), nil, user("Third")...); !errors.Is(err, core.ErrLockHeld) {
		t.Fatalf("a third run while r-2 is paused: got %v, want ErrLockHeld", err)
	}
}
