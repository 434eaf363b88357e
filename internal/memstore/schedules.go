package memstore

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/baton-agents/baton/core"
)

var _ core.ScheduleStore = (*Store)(nil)

// schedules holds the schedules by id (ids are unique across tenants: a
// schedule's triggers are keyed by its id alone), stored as JSON; count
// counts each tenant's; triggers are each schedule's triggers by
// core.TriggerKey of their fire times (kept for good: ExpiresAt is
// when a store may forget one, not must).
type schedules struct {
	byID     map[string][]byte
	count    map[string]int
	triggers map[string]map[string]core.Trigger
}

func newSchedules() schedules {
	return schedules{byID: map[string][]byte{}, count: map[string]int{}, triggers: map[string]map[string]core.Trigger{}}
}

// scheduleLocked reads tenant's schedule id (ErrNotFound: none, or
// another tenant's).
func (s *Store) scheduleLocked(tenant, id string) (core.Schedule, error) {
	var sc core.Schedule
	b, ok := s.sched.byID[id]
	if ok {
		if err := json.Unmarshal(b, &sc); err != nil {
			return core.Schedule{}, fmt.Errorf("schedule %s: %w", id, err)
		}
	}
	if !ok || sc.Tenant != tenant {
		return core.Schedule{}, fmt.Errorf("schedule %s: %w", id, core.ErrNotFound)
	}
	return sc, nil
}

func (s *Store) putScheduleLocked(sc core.Schedule) error {
	b, err := core.MarshalSchedule(sc)
	if err != nil {
		return err
	}
	s.sched.byID[sc.ID] = b
	return nil
}

// CreateSchedule stores a new schedule at Version 1, counted against its
// tenant's limit.
func (s *Store) CreateSchedule(_ context.Context, sc core.Schedule, limit int) error {
	if err := core.ValidateScheduleKey(sc.Tenant, sc.ID); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.sched.byID[sc.ID]; ok {
		return fmt.Errorf("create schedule %s: %w: it exists", sc.ID, core.ErrConflict)
	}
	if limit > 0 && s.sched.count[sc.Tenant] >= limit {
		return fmt.Errorf("create schedule %s: %w (%d)", sc.ID, core.ErrScheduleLimit, limit)
	}
	sc.Version = 1
	if err := s.putScheduleLocked(sc); err != nil {
		return err
	}
	s.sched.count[sc.Tenant]++
	return nil
}

// GetSchedule reads tenant's schedule.
func (s *Store) GetSchedule(_ context.Context, tenant, id string) (core.Schedule, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.scheduleLocked(tenant, id)
}

// UpdateSchedule writes sc over the stored version sc.Version-1, keeping
// its id, tenant, creation time and last run.
func (s *Store) UpdateSchedule(_ context.Context, sc core.Schedule) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	old, err := s.scheduleLocked(sc.Tenant, sc.ID)
	if err != nil {
		return err
	}
	if old.Version != sc.Version-1 {
		return fmt.Errorf("update schedule %s: %w: version %d is stored, not %d", sc.ID, core.ErrConflict, old.Version, sc.Version-1)
	}
	sc.CreatedAt, sc.LastRunID = old.CreatedAt, old.LastRunID
	return s.putScheduleLocked(sc)
}

// DeleteSchedule deletes tenant's schedule and uncounts it; its triggers
// stay.
func (s *Store) DeleteSchedule(_ context.Context, tenant, id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, err := s.scheduleLocked(tenant, id); err != nil {
		return err
	}
	delete(s.sched.byID, id)
	s.sched.count[tenant]--
	return nil
}

// ListSchedules pages tenant's schedules in id order.
func (s *Store) ListSchedules(_ context.Context, tenant string, limit int, cursor string) ([]core.Schedule, string, error) {
	return s.listSchedules(limit, cursor, core.DecodeScheduleCursor, func(sc core.Schedule) (string, bool) {
		return sc.ID, sc.Tenant == tenant
	})
}

// AllSchedules pages every tenant's schedules by tenant, then id.
func (s *Store) AllSchedules(_ context.Context, limit int, cursor string) ([]core.Schedule, string, error) {
	return s.listSchedules(limit, cursor, core.DecodeScheduleListCursor, func(sc core.Schedule) (string, bool) {
		return core.ScheduleListKey(sc.Tenant, sc.ID), true
	})
}

// listSchedules pages the schedules keep keeps, ordered by the key it
// gives them, after the key cursor carries.
func (s *Store) listSchedules(limit int, cursor string, decode func(string) (string, error), keep func(core.Schedule) (string, bool)) ([]core.Schedule, string, error) {
	if err := core.ValidateSchedulePage(limit); err != nil {
		return nil, "", err
	}
	after := ""
	if cursor != "" {
		var err error
		if after, err = decode(cursor); err != nil {
			return nil, "", err
		}
	}
	type keyed struct {
		key string
		sc  core.Schedule
	}
	var all []keyed
	s.mu.Lock()
	for id := range s.sched.byID {
		var sc core.Schedule
		if err := json.Unmarshal(s.sched.byID[id], &sc); err != nil {
			s.mu.Unlock()
			return nil, "", fmt.Errorf("schedule %s: %w", id, err)
		}
		if key, ok := keep(sc); ok && key > after {
			all = append(all, keyed{key, sc})
		}
	}
	s.mu.Unlock()
	slices.SortFunc(all, func(a, b keyed) int { return strings.Compare(a.key, b.key) })
	out := []core.Schedule{}
	for _, k := range all[:min(limit, len(all))] {
		out = append(out, k.sc)
	}
	if len(all) > limit {
		return out, core.EncodeScheduleCursor(all[limit-1].key), nil
	}
	return out, "", nil
}

// RecordTrigger stores t unless a trigger of its fire time is stored,
// then moves the schedule's cursor (and, started, its last run) forward.
func (s *Store) RecordTrigger(_ context.Context, tenant string, t core.Trigger) (core.Trigger, bool, error) {
	if err := core.ValidateScheduleKey(tenant, t.ScheduleID); err != nil {
		return core.Trigger{}, false, err
	}
	if t.FireTime.IsZero() {
		return core.Trigger{}, false, fmt.Errorf("%w: a trigger needs a fire time", core.ErrInvalidInput)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	byKey := s.sched.triggers[t.ScheduleID]
	if byKey == nil {
		byKey = map[string]core.Trigger{}
		s.sched.triggers[t.ScheduleID] = byKey
	}
	key := core.TriggerKey(t.FireTime)
	stored, ok := byKey[key]
	if !ok {
		t.FireTime, t.RecordedAt, t.ExpiresAt = t.FireTime.UTC(), t.RecordedAt.UTC(), time.Time{}
		byKey[key], stored = t, t
	}
	if sc, err := s.scheduleLocked(tenant, t.ScheduleID); err == nil && sc.Cursor.Before(stored.FireTime) {
		sc.Cursor = stored.FireTime
		if stored.Outcome == core.TriggerStarted {
			sc.LastRunID = stored.RunID
		}
		if err := s.putScheduleLocked(sc); err != nil {
			return core.Trigger{}, false, err
		}
	}
	return stored, !ok, nil
}

// Trigger reads the trigger of a schedule's fire time.
func (s *Store) Trigger(_ context.Context, scheduleID string, fire time.Time) (core.Trigger, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.sched.triggers[scheduleID][core.TriggerKey(fire)]
	if !ok {
		return core.Trigger{}, fmt.Errorf("trigger %s %s: %w", scheduleID, core.TriggerKey(fire), core.ErrNotFound)
	}
	return t, nil
}

// Triggers pages a schedule's triggers, latest fire time first.
func (s *Store) Triggers(_ context.Context, scheduleID string, limit int, cursor string) ([]core.Trigger, string, error) {
	if err := core.ValidateSchedulePage(limit); err != nil {
		return nil, "", err
	}
	before := ""
	if cursor != "" {
		var err error
		if before, err = core.DecodeTriggerCursor(cursor); err != nil {
			return nil, "", err
		}
	}
	s.mu.Lock()
	var keys []string
	byKey := s.sched.triggers[scheduleID]
	for k := range byKey {
		if before == "" || k < before {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	slices.Reverse(keys)
	out := []core.Trigger{}
	for _, k := range keys[:min(limit, len(keys))] {
		out = append(out, byKey[k])
	}
	s.mu.Unlock()
	if len(keys) > limit {
		return out, core.EncodeScheduleCursor(keys[limit-1]), nil
	}
	return out, "", nil
}
