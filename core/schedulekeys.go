package core

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// The keys and cursors the schedule stores share (ScheduleStore): a
// cursor is the last listed key, base64url-encoded, so it is opaque to
// clients and the same in every store.

// triggerKeyLayout is a fire time as a fixed-width key: UTC, nanoseconds,
// so keys sort as the times do.
const triggerKeyLayout = "2006-01-02T15:04:05.000000000Z"

// maxScheduleCursor bounds the key a cursor may carry.
const maxScheduleCursor = 1024

// TriggerKey is fire time t as a sortable fixed-width key.
func TriggerKey(t time.Time) string { return t.UTC().Format(triggerKeyLayout) }

// ScheduleListKey is a schedule's place among every tenant's schedules
// (ScheduleStore.AllSchedules): its tenant ('%' and '#' escaped), '#',
// its id. The keys sort by tenant, then id.
func ScheduleListKey(tenant, id string) string {
	return strings.NewReplacer("%", "%25", "#", "%23").Replace(tenant) + "#" + id
}

// EncodeScheduleCursor is the cursor of the page after key.
func EncodeScheduleCursor(key string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(key))
}

// DecodeScheduleCursor returns the key a cursor carries. A cursor that is
// not base64url, or carries no key or not text (UTF-8 without control
// characters), is ErrInvalidInput.
func DecodeScheduleCursor(cursor string) (string, error) {
	b, err := base64.RawURLEncoding.DecodeString(cursor)
	if err != nil || len(b) > maxScheduleCursor || !keyText(string(b)) {
		return "", fmt.Errorf("%w: the cursor is not one this list returned", ErrInvalidInput)
	}
	return string(b), nil
}

// DecodeScheduleListCursor returns the ScheduleListKey a cursor of
// AllSchedules carries (ErrInvalidInput: not one).
func DecodeScheduleListCursor(cursor string) (string, error) {
	key, err := DecodeScheduleCursor(cursor)
	if err != nil {
		return "", err
	}
	if tenant, id, ok := strings.Cut(key, "#"); !ok || tenant == "" || id == "" {
		return "", fmt.Errorf("%w: the cursor is not one this list returned", ErrInvalidInput)
	}
	return key, nil
}

// DecodeTriggerCursor returns the TriggerKey a cursor of Triggers carries
// (ErrInvalidInput: not one).
func DecodeTriggerCursor(cursor string) (string, error) {
	key, err := DecodeScheduleCursor(cursor)
	if err != nil {
		return "", err
	}
	if len(key) != len(triggerKeyLayout) {
		return "", fmt.Errorf("%w: the cursor is not one this list returned", ErrInvalidInput)
	}
	if _, err := time.Parse(triggerKeyLayout, key); err != nil {
		return "", fmt.Errorf("%w: the cursor is not one this list returned", ErrInvalidInput)
	}
	return key, nil
}

// ValidateSchedulePage checks a page's limit (at least 1).
func ValidateSchedulePage(limit int) error {
	if limit < 1 {
		return fmt.Errorf("%w: limit must be at least 1", ErrInvalidInput)
	}
	return nil
}

// maxScheduleKey bounds a schedule's tenant and id in the stores' keys.
const maxScheduleKey = 256

// ValidateScheduleKey checks a schedule's tenant and id as the stores key
// them: both set, UTF-8 text without control characters, at most 256
// bytes (ErrInvalidInput otherwise). A read of a key that fails it finds
// nothing.
func ValidateScheduleKey(tenant, id string) error {
	if err := validKeyPart("tenant", tenant); err != nil {
		return err
	}
	return ValidateScheduleID(id)
}

// ValidateScheduleID checks a schedule id as ValidateScheduleKey does.
func ValidateScheduleID(id string) error { return validKeyPart("schedule id", id) }

func validKeyPart(name, v string) error {
	if len(v) > maxScheduleKey || !keyText(v) {
		return fmt.Errorf("%w: a schedule's %s must be 1 to %d bytes of UTF-8 text without control characters", ErrInvalidInput, name, maxScheduleKey)
	}
	return nil
}

// keyText reports whether s is a non-empty UTF-8 text without control
// characters.
func keyText(s string) bool {
	if s == "" || !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if unicode.IsControl(r) {
			return false
		}
	}
	return true
}

// MaxScheduleBytes bounds a schedule's JSON (its run request is most of
// it), so a store keeps it in one item.
const MaxScheduleBytes = 256 << 10

// MarshalSchedule is the JSON a store keeps of a schedule: ErrInvalidInput
// when it cannot be encoded or is larger than MaxScheduleBytes.
func MarshalSchedule(s Schedule) ([]byte, error) {
	b, err := json.Marshal(s)
	if err != nil {
		return nil, fmt.Errorf("%w: schedule %s: %v", ErrInvalidInput, s.ID, err)
	}
	if len(b) > MaxScheduleBytes {
		return nil, fmt.Errorf("%w: schedule %s is %d bytes of JSON, more than %d", ErrInvalidInput, s.ID, len(b), MaxScheduleBytes)
	}
	return b, nil
}
