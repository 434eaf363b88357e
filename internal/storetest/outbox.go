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
