package core

import (
	"context"
	"encoding/json"
	"errors"
	"time"
)

// Scheduled runs: a schedule starts a run of an agent on a clock (a cron
// expression in an IANA time zone, a rate, or one time), and records every
// fire time it reaches as a trigger: the run it started, or why it
// skipped or failed. A schedule's runs carry its id (RunConfig.Schedule).
//
// A fire time starts at most one run: the run's id is derived from the
// schedule and the fire time (ScheduledRunID), and a trigger is stored
// once per (schedule, fire time) (ScheduleStore.RecordTrigger), so a
// duplicate delivery, a retry after a crash, and a missed fire time
// caught up on resume all land on the same run and the same record.

// Schedule policies.
const (
	// OverlapSkip skips a fire time while the schedule's previous run is
	// unfinished; OverlapAllow starts a run anyway.
	OverlapSkip  = "skip"
	OverlapAllow = "allow"
	// MissedSkip records fire times the scheduler missed (it was paused,
	// or not running) as skipped; MissedRunOnce starts one run, for the
	// latest of them, when the scheduler reaches them.
	MissedSkip    = "skip"
	MissedRunOnce = "run_once"
)

// Trigger outcomes.
const (
	TriggerStarted = "started"
	TriggerSkipped = "skipped"
	TriggerFailed  = "failed"
)

// Trigger reason codes: a trigger's Reason starts with one, then ": "
// and the detail.
const (
	ReasonOverlap = "overlap" // skipped: the previous run is unfinished
	ReasonPaused  = "paused"  // skipped: the schedule was paused at the fire time
	ReasonMissed  = "missed"  // skipped: the scheduler was not running at the fire time
	// ReasonCaughtUp is a started trigger's reason when its run started
	// late, for a fire time the scheduler missed (MissedRunOnce).
	ReasonCaughtUp = "caught_up"
)

// ErrScheduleLimit is a schedule refused because its tenant has the
// deployment's limit of schedules.
var ErrScheduleLimit = errors.New("the tenant has its limit of schedules")

// Schedule is a tenant's schedule.
type Schedule struct {
	ID     string `json:"schedule_id"`
	Tenant string `json:"tenant"`
	// Agent is the agent its runs run (also in Request).
	Agent string `json:"agent"`
	// Request is the start-run body (POST /v1/runs) each run starts with,
	// the agent, alias or version included, validated when the schedule
	// was written and again at each fire time.
	Request json.RawMessage `json:"request"`
	// Cron is the expression: five fields, cron(…) or rate(…); At is a
	// one-off time instead (exactly one of the two). Timezone is the IANA
	// zone both are read in (default "UTC").
	Cron     string     `json:"cron,omitempty"`
	At       *time.Time `json:"at,omitempty"`
	Timezone string     `json:"timezone"`
	// Start and End bound the fire times (optional).
	Start *time.Time `json:"start,omitempty"`
	End   *time.Time `json:"end,omitempty"`
	// Overlap is OverlapSkip or OverlapAllow; Missed is MissedSkip or
	// MissedRunOnce.
	Overlap string `json:"overlap"`
	Missed  string `json:"missed"`
	Paused  bool   `json:"paused"`
	// Principal is who wrote the schedule: its runs start as it (auth
	// source "schedule").
	Principal *Principal `json:"principal,omitempty"`
	CreatedAt time.Time  `json:"created_at"`
	UpdatedAt time.Time  `json:"updated_at"`
	// Version counts the schedule's writes (1 when created): an update
	// names the version it read (ScheduleStore.UpdateSchedule).
	Version int64 `json:"version"`
	// Cursor is the last fire time handled: the fire times after it are
	// the scheduler's to reach. RecordTrigger moves it forward; an update
	// may set it (a new expression starts from the update's time).
	Cursor time.Time `json:"cursor"`
	// LastRunID is the run of the latest started trigger (the overlap
	// policy asks whether it is unfinished); only RecordTrigger sets it.
	LastRunID string `json:"last_run_id,omitempty"`
}

// Trigger is one fire time of a schedule and what came of it.
type Trigger struct {
	ScheduleID string    `json:"schedule_id"`
	FireTime   time.Time `json:"fire_time"`
	// Outcome is TriggerStarted (RunID set), TriggerSkipped or
	// TriggerFailed (Reason set: a reason code, ": ", the detail).
	Outcome    string    `json:"outcome"`
	RunID      string    `json:"run_id,omitempty"`
	Reason     string    `json:"reason,omitempty"`
	RecordedAt time.Time `json:"recorded_at"`
	// ExpiresAt is when the store may forget the record (its TTL).
	ExpiresAt time.Time `json:"-"`
}

// ScheduleRef is a scheduled run's schedule and fire time.
type ScheduleRef struct {
	ID       string    `json:"schedule_id"`
	FireTime time.Time `json:"fire_time"`
}

// ScheduleStore keeps schedules and their triggers. Every read and
// write of a schedule names its tenant: another tenant's schedule is
// ErrNotFound.
type ScheduleStore interface {
	// CreateSchedule stores a new schedule (Version 1) and counts it
	// against its tenant's limit: ErrConflict when the id exists,
	// ErrScheduleLimit when the tenant has limit schedules already
	// (limit <= 0: none).
	CreateSchedule(ctx context.Context, s Schedule, limit int) error
	// GetSchedule reads a schedule (ErrNotFound: none).
	GetSchedule(ctx context.Context, tenant, id string) (Schedule, error)
	// UpdateSchedule writes s, whose Version is the one read plus one,
	// when the stored version is s.Version-1 (ErrConflict otherwise,
	// ErrNotFound when there is none). It writes every field but ID,
	// Tenant, CreatedAt and LastRunID.
	UpdateSchedule(ctx context.Context, s Schedule) error
	// DeleteSchedule deletes a schedule and uncounts it (ErrNotFound:
	// none). Its triggers stay until they expire.
	DeleteSchedule(ctx context.Context, tenant, id string) error
	// ListSchedules lists tenant's schedules in id order, at most limit,
	// after cursor ("" first); next is the following page's cursor (""
	// none). A bad cursor is ErrInvalidInput.
	ListSchedules(ctx context.Context, tenant string, limit int, cursor string) (list []Schedule, next string, err error)
	// AllSchedules lists every tenant's schedules (the in-process
	// scheduler of baton dev), paged the same way.
	AllSchedules(ctx context.Context, limit int, cursor string) (list []Schedule, next string, err error)
	// RecordTrigger stores t for (t.ScheduleID, t.FireTime) unless one
	// is stored, and returns the stored one and whether this call stored
	// it. It moves the schedule's Cursor to t.FireTime when that is
	// later, and, for a started trigger, its LastRunID to t.RunID (a
	// deleted schedule is no error: the trigger is stored alone).
	RecordTrigger(ctx context.Context, tenant string, t Trigger) (Trigger, bool, error)
	// Trigger reads the trigger of (scheduleID, fire) (ErrNotFound: none).
	Trigger(ctx context.Context, scheduleID string, fire time.Time) (Trigger, error)
	// Triggers lists a schedule's triggers, latest fire time first, at
	// most limit, after cursor, as ListSchedules pages.
	Triggers(ctx context.Context, scheduleID string, limit int, cursor string) (list []Trigger, next string, err error)
}

// ScheduledRunID is the run a schedule starts for a fire time: the same
// on every attempt, so a fire time starts one run.
func ScheduledRunID(scheduleID string, fire time.Time) string {
	return "r-" + digest(13, "schedule", scheduleID, fire.UTC().Format(time.RFC3339))
}

// ScheduledSessionID is that run's session, when its request names none.
func ScheduledSessionID(scheduleID string, fire time.Time) string {
	return "s-" + digest(13, "schedule-session", scheduleID, fire.UTC().Format(time.RFC3339))
}

// ScheduleSpec is how a schedule fires, in EventBridge Scheduler's terms.
type ScheduleSpec struct {
	// Expression is cron(…) (six fields), rate(…) or at(yyyy-mm-ddThh:mm:ss).
	Expression string
	// Timezone is the IANA zone Expression is read in.
	Timezone   string
	Start, End *time.Time
	// Enabled is false for a paused schedule.
	Enabled bool
}

// Scheduler fires a deployment's schedules at their times: on AWS,
// EventBridge Scheduler, whose schedules send a ScheduleFire to the
// intake queue at each fire time. baton dev has none: its in-process
// scheduler reads the store.
type Scheduler interface {
	// Sync creates or replaces the schedule's counterpart.
	Sync(ctx context.Context, s Schedule, spec ScheduleSpec) error
	// Remove deletes it (one that is gone is no error).
	Remove(ctx context.Context, s Schedule) error
}

// ScheduleFire is the intake message of one fire time: {"schedule_fire":
// {…}}. FireTime is RFC 3339 (EventBridge Scheduler's
// <aws.scheduler.scheduled-time>).
type ScheduleFire struct {
	Tenant     string `json:"tenant"`
	ScheduleID string `json:"schedule_id"`
	FireTime   string `json:"fire_time"`
}

// ScheduleID is the schedule's id ("" on nil: a run no schedule started).
func (r *ScheduleRef) ScheduleID() string {
	if r == nil {
		return ""
	}
	return r.ID
}
