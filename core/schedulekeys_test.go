package core

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestTriggerKeyOrder: trigger keys are fixed width and sort as their
// times do, whatever the zone the time is in; their cursors round-trip.
func TestTriggerKeyOrder(t *testing.T) {
	lisbon, err := time.LoadLocation("Europe/Lisbon")
	if err != nil {
		t.Fatal(err)
	}
	times := []time.Time{
		{},
		time.Date(1999, 12, 31, 23, 59, 59, 999_999_999, time.UTC),
		time.Date(2026, 3, 29, 1, 30, 0, 0, lisbon),
		time.Date(2026, 3, 29, 1, 30, 0, 1, time.UTC),
		time.Date(2026, 10, 25, 1, 30, 0, 0, time.FixedZone("+14", 14*3600)),
		time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC),
	}
	slices.SortFunc(times, func(a, b time.Time) int { return a.Compare(b) })
	var keys []string
	for _, tm := range times {
		k := TriggerKey(tm)
		if len(k) != len(triggerKeyLayout) {
			t.Fatalf("%s: key %q is not fixed width", tm, k)
		}
		got, err := DecodeTriggerCursor(EncodeScheduleCursor(k))
		if err != nil || got != k {
			t.Fatalf("%s: cursor round trip: %q %v", tm, got, err)
		}
		keys = append(keys, k)
	}
	if !slices.IsSorted(keys) {
		t.Fatalf("keys out of order: %v", keys)
	}
}

// TestScheduleListKey: list keys sort by tenant, then id, and a tenant's
// '#' never reads as the separator.
func TestScheduleListKey(t *testing.T) {
	for _, tc := range []struct{ tenant, id, want string }{
		{"acme", "sch_1", "acme#sch_1"},
		{"a#b", "c", "a%23b#c"},
		{"a%23b", "c", "a%2523b#c"},
	} {
		k := ScheduleListKey(tc.tenant, tc.id)
		if k != tc.want {
			t.Fatalf("%q %q: %q, want %q", tc.tenant, tc.id, k, tc.want)
		}
		if got, err := DecodeScheduleListCursor(EncodeScheduleCursor(k)); err != nil || got != k {
			t.Fatalf("%q: cursor round trip: %q %v", k, got, err)
		}
	}
	if ScheduleListKey("a", "z") > ScheduleListKey("ab", "a") || ScheduleListKey("a", "a") > ScheduleListKey("a", "b") {
		t.Fatal("list keys do not sort by tenant, then id")
	}
}

// TestScheduleCursorRefusals: cursors no list returned, and keys no
// store can hold, are ErrInvalidInput.
func TestScheduleCursorRefusals(t *testing.T) {
	for _, c := range []string{"", "!!", "AAAA", EncodeScheduleCursor("a\nb"), "_-8", EncodeScheduleCursor(strings.Repeat("x", 1025))} {
		if _, err := DecodeScheduleCursor(c); !errors.Is(err, ErrInvalidInput) {
			t.Fatalf("cursor %q: %v", c, err)
		}
	}
	for _, c := range []string{EncodeScheduleCursor("acme"), EncodeScheduleCursor("#id"), EncodeScheduleCursor("acme#")} {
		if _, err := DecodeScheduleListCursor(c); !errors.Is(err, ErrInvalidInput) {
			t.Fatalf("list cursor %q: %v", c, err)
		}
	}
	for _, c := range []string{EncodeScheduleCursor("sch_1"), EncodeScheduleCursor("2026-03-29T01:30:00Z"), EncodeScheduleCursor("2026-13-29T01:30:00.000000000Z")} {
		if _, err := DecodeTriggerCursor(c); !errors.Is(err, ErrInvalidInput) {
			t.Fatalf("trigger cursor %q: %v", c, err)
		}
	}
	for _, k := range [][2]string{{"", "id"}, {"acme", ""}, {"acme", strings.Repeat("x", 257)}, {"acme", "a\x00b"}, {"ac\xffme", "id"}} {
		if err := ValidateScheduleKey(k[0], k[1]); !errors.Is(err, ErrInvalidInput) {
			t.Fatalf("key %q: %v", k, err)
		}
	}
	if err := ValidateScheduleKey("a#b", "sch_ünï"); err != nil {
		t.Fatal(err)
	}
	if err := ValidateSchedulePage(0); !errors.Is(err, ErrInvalidInput) {
		t.Fatalf("limit 0: %v", err)
	}
}

// TestScheduleKeyBounds: the bounds at and just past each: a cursor key
// of 1024 bytes, a tenant or id of 256 bytes, a page of 1, and a
// schedule of MaxScheduleBytes of JSON.
func TestScheduleKeyBounds(t *testing.T) {
	key := strings.Repeat("x", 1024)
	if got, err := DecodeScheduleCursor(EncodeScheduleCursor(key)); err != nil || got != key {
		t.Fatalf("a 1024-byte key: %v", err)
	}
	long := strings.Repeat("x", 256)
	if err := ValidateScheduleKey(long, long); err != nil {
		t.Fatalf("a 256-byte tenant and id: %v", err)
	}
	if err := ValidateScheduleKey(long+"x", "id"); !errors.Is(err, ErrInvalidInput) {
		t.Fatalf("a 257-byte tenant: %v", err)
	}
	if err := ValidateSchedulePage(1); err != nil {
		t.Fatalf("limit 1: %v", err)
	}
	s := Schedule{ID: "sch_1", Tenant: "acme", Request: json.RawMessage(`""`)}
	b, err := MarshalSchedule(s)
	if err != nil {
		t.Fatal(err)
	}
	// Grow the request's string to make the JSON exactly the bound.
	s.Request = json.RawMessage(`"` + strings.Repeat("x", MaxScheduleBytes-len(b)) + `"`)
	if b, err := MarshalSchedule(s); err != nil || len(b) != MaxScheduleBytes {
		t.Fatalf("a schedule of exactly MaxScheduleBytes: %d bytes, %v", len(b), err)
	}
	s.Request = json.RawMessage(`"` + strings.Repeat("x", MaxScheduleBytes-len(b)+1) + `"`)
	if _, err := MarshalSchedule(s); !errors.Is(err, ErrInvalidInput) {
		t.Fatalf("a schedule one byte over: %v", err)
	}
	if _, err := MarshalSchedule(Schedule{ID: "sch_1", Request: json.RawMessage(`{`)}); !errors.Is(err, ErrInvalidInput) {
		t.Fatalf("a request that is not JSON: %v", err)
	}
}
