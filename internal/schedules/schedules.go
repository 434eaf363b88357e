// Package schedules is scheduled runs' service: it validates and keeps a
// tenant's schedules (core.ScheduleStore), mirrors each to the
// deployment's scheduler (core.Scheduler: EventBridge Scheduler on AWS),
// and turns a fire time into a run through the runner, recording every
// fire time it reaches as a trigger (the run, or why it skipped or
// failed). In baton dev there is no outside scheduler: Loop reads the
// store on the clock and fires what is due.
//
// A fire time starts at most one run: its run id is derived from the
// schedule and the fire time (core.ScheduledRunID) and its trigger is
// recorded once, so a duplicate delivery, a retry after a crash and a
// catch-up on resume all come to the same run and record.
package schedules

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/baton-agents/baton/core"
	"github.com/baton-agents/baton/internal/cronspec"
	"github.com/baton-agents/baton/internal/durable"
	"github.com/baton-agents/baton/internal/runspec"
)

// Defaults of Config.
const (
	DefaultMinInterval      = time.Minute
	DefaultMaxPerTenant     = 100
	DefaultTriggerRetention = 90 * 24 * time.Hour
	DefaultMisfireGrace     = time.Minute
	// NextFireTimes is how many next fire times a view lists.
	NextFireTimes = 5
	// maxCatchUpRecords caps the skipped triggers one catch-up records
	// (the latest ones); the cursor moves past all of them.
	maxCatchUpRecords = 100
	// maxCatchUpScan bounds the fire times one catch-up walks.
	maxCatchUpScan = 100_000
)

// Principal fields of a scheduled run (its actor is the schedule's
// writer).
const (
	AuthSource     = "schedule"
	RequestContext = "schedule"
)

// Config is a deployment's schedule settings.
type Config struct {
	// MinInterval is the smallest gap between a schedule's fire times a
	// schedule may have (default 1m).
	MinInterval time.Duration
	// MaxPerTenant caps each tenant's schedules (default 100; < 0: none).
	MaxPerTenant int
	// TriggerRetention is how long a trigger's record is kept (90 days).
	TriggerRetention time.Duration
	// MisfireGrace is how late the in-process scheduler may reach a fire
	// time and still fire it as on time; later, the fire time was
	// missed (the scheduler was not running) and the missed policy
	// applies (default 1m).
	MisfireGrace time.Duration
}

func (c Config) withDefaults() Config {
	if c.MinInterval <= 0 {
		c.MinInterval = DefaultMinInterval
	}
	if c.MaxPerTenant == 0 {
		c.MaxPerTenant = DefaultMaxPerTenant
	}
	if c.TriggerRetention <= 0 {
		c.TriggerRetention = DefaultTriggerRetention
	}
	if c.MisfireGrace <= 0 {
		c.MisfireGrace = DefaultMisfireGrace
	}
	return c
}

// Service manages schedules and fires them.
type Service struct {
	Store     core.ScheduleStore
	Runner    *durable.Runner
	Validator runspec.Validator
	// Scheduler is the deployment's scheduler; nil in baton dev, whose
	// Loop fires schedules itself.
	Scheduler core.Scheduler
	Clock     core.Clock
	Log       *slog.Logger
	Config    Config
}

// New builds the service.
func New(store core.ScheduleStore, runner *durable.Runner, v runspec.Validator, sched core.Scheduler, clock core.Clock, log *slog.Logger, cfg Config) *Service {
	if clock == nil {
		clock = core.SystemClock{}
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Service{Store: store, Runner: runner, Validator: v, Scheduler: sched, Clock: clock, Log: log, Config: cfg.withDefaults()}
}

// View is a schedule as the API answers it.
type View struct {
	ID            string          `json:"schedule_id"`
	Agent         string          `json:"agent"`
	Alias         string          `json:"alias,omitempty"`
	AgentVersion  string          `json:"agent_version,omitempty"`
	Request       json.RawMessage `json:"request"`
	Cron          string          `json:"cron,omitempty"`
	At            *time.Time      `json:"at,omitempty"`
	Timezone      string          `json:"timezone"`
	Start         *time.Time      `json:"start,omitempty"`
	End           *time.Time      `json:"end,omitempty"`
	Overlap       string          `json:"overlap"`
	Missed        string          `json:"missed"`
	Paused        bool            `json:"paused"`
	NextFireTimes []time.Time     `json:"next_fire_times"`
	LastRunID     string          `json:"last_run_id,omitempty"`
	CreatedAt     time.Time       `json:"created_at"`
	UpdatedAt     time.Time       `json:"updated_at"`
}

// fieldErr is a 400 naming the field.
func fieldErr(field, format string, args ...any) error {
	return &runspec.Error{Status: http.StatusBadRequest, Code: "invalid_request", Message: field + ": " + fmt.Sprintf(format, args...),
		Details: map[string]any{"field": field}}
}

var errNoSchedule = runspec.Errorf(http.StatusNotFound, "not_found", "no such schedule")

// notFound maps a store's ErrNotFound to the API's 404.
func notFound(err error) error {
	if errors.Is(err, core.ErrNotFound) {
		return errNoSchedule
	}
	return err
}

// Create validates b and stores a new schedule of tenant's, written by
// p, then mirrors it to the deployment's scheduler.
func (s *Service) Create(ctx context.Context, tenant string, p *core.Principal, b Body) (View, error) {
	now := s.Clock.Now().UTC()
	sc := core.Schedule{Tenant: tenant, Timezone: "UTC", Overlap: core.OverlapSkip, Missed: core.MissedSkip, Principal: schedulePrincipal(p)}
	if err := b.apply(&sc, true); err != nil {
		return View{}, err
	}
	sc.ID = s.Runner.IDs.NewID("sch")
	sc.CreatedAt, sc.UpdatedAt, sc.Version, sc.Cursor = now, now, 1, now
	pl, err := s.check(ctx, sc, now, true, true)
	if err != nil {
		return View{}, err
	}
	if err := s.Store.CreateSchedule(ctx, sc, s.Config.MaxPerTenant); err != nil {
		if errors.Is(err, core.ErrScheduleLimit) {
			return View{}, &runspec.Error{Status: http.StatusTooManyRequests, Code: "schedule_limit_reached",
				Message: fmt.Sprintf("tenant %s has %d schedules, this deployment's limit; delete one to create another", tenant, s.Config.MaxPerTenant),
				Details: map[string]any{"limit": s.Config.MaxPerTenant}}
		}
		return View{}, fmt.Errorf("store schedule: %w", err)
	}
	if err := s.sync(ctx, sc, pl); err != nil {
		if derr := s.Store.DeleteSchedule(context.WithoutCancel(ctx), tenant, sc.ID); derr != nil {
			s.Log.ErrorContext(ctx, "undo a schedule the scheduler refused", "schedule_id", sc.ID, "err", derr)
		}
		return View{}, err
	}
	s.Log.InfoContext(ctx, "schedule created", "tenant", tenant, "schedule_id", sc.ID, "agent", sc.Agent, "cron", sc.Cron, "timezone", sc.Timezone)
	return s.view(sc, pl, now), nil
}

// Get reads one of tenant's schedules.
func (s *Service) Get(ctx context.Context, tenant, id string) (View, error) {
	sc, err := s.get(ctx, tenant, id)
	if err != nil {
		return View{}, err
	}
	pl, err := planOf(sc)
	if err != nil {
		return View{}, err
	}
	return s.view(sc, pl, s.Clock.Now()), nil
}

func (s *Service) get(ctx context.Context, tenant, id string) (core.Schedule, error) {
	if !validID(id) {
		return core.Schedule{}, errNoSchedule
	}
	sc, err := s.Store.GetSchedule(ctx, tenant, id)
	return sc, notFound(err)
}

// List lists tenant's schedules, a page at a time.
func (s *Service) List(ctx context.Context, tenant string, limit int, cursor string) ([]View, string, error) {
	list, next, err := s.Store.ListSchedules(ctx, tenant, limit, cursor)
	if err != nil {
		if errors.Is(err, core.ErrInvalidInput) {
			return nil, "", runspec.Errorf(http.StatusBadRequest, "invalid_cursor", "cursor is not a next_cursor this list returned")
		}
		return nil, "", err
	}
	now := s.Clock.Now()
	out := make([]View, 0, len(list))
	for _, sc := range list {
		pl, err := planOf(sc)
		if err != nil {
			return nil, "", err
		}
		out = append(out, s.view(sc, pl, now))
	}
	return out, next, nil
}

// Update changes one of tenant's schedules. A schedule that resumes
// catches up the fire times it missed while paused (its missed policy);
// a new expression, zone or start fires from now on.
func (s *Service) Update(ctx context.Context, tenant, id string, p *core.Principal, b Body) (View, error) {
	for attempt := 0; ; attempt++ {
		v, err := s.update(ctx, tenant, id, p, b)
		if errors.Is(err, core.ErrConflict) && attempt < 4 {
			continue
		}
		return v, err
	}
}

func (s *Service) update(ctx context.Context, tenant, id string, p *core.Principal, b Body) (View, error) {
	old, err := s.get(ctx, tenant, id)
	if err != nil {
		return View{}, err
	}
	now := s.Clock.Now().UTC()
	sc := old
	if err := b.apply(&sc, false); err != nil {
		return View{}, err
	}
	if b.changesRequest() {
		// A new run request runs as its writer.
		sc.Principal = schedulePrincipal(p)
	}
	pl, err := s.check(ctx, sc, now, b.timing(), b.changesRequest())
	if err != nil {
		return View{}, err
	}
	resumed := old.Paused && !sc.Paused
	if b.timing() {
		sc.Cursor = now
	} else if resumed {
		// The fire times missed while paused are handled before the
		// schedule is stored unpaused, so the scheduler never takes them
		// for due ones.
		last, err := s.catchUp(ctx, sc, pl, now, core.ReasonPaused)
		if err != nil {
			return View{}, err
		}
		if last.After(sc.Cursor) {
			sc.Cursor = last
		}
	}
	sc.Version, sc.UpdatedAt = old.Version+1, now
	if err := s.Store.UpdateSchedule(ctx, sc); err != nil {
		return View{}, notFound(err)
	}
	if err := s.sync(ctx, sc, pl); err != nil {
		// Put the stored schedule back as it was, so the store and the
		// scheduler agree.
		back := old
		back.Version, back.UpdatedAt = sc.Version+1, now
		if rerr := s.Store.UpdateSchedule(context.WithoutCancel(ctx), back); rerr != nil {
			s.Log.ErrorContext(ctx, "undo a schedule update the scheduler refused", "schedule_id", id, "err", rerr)
		}
		return View{}, err
	}
	if cur, err := s.Store.GetSchedule(ctx, tenant, id); err == nil {
		sc = cur // with the last run of a caught-up fire time
	}
	s.Log.InfoContext(ctx, "schedule updated", "tenant", tenant, "schedule_id", id, "paused", sc.Paused, "resumed", resumed)
	return s.view(sc, pl, now), nil
}

// Delete deletes one of tenant's schedules: first its counterpart in
// the deployment's scheduler, so a schedule that cannot be removed
// there stays whole.
func (s *Service) Delete(ctx context.Context, tenant, id string) error {
	sc, err := s.get(ctx, tenant, id)
	if err != nil {
		return err
	}
	if s.Scheduler != nil {
		if err := s.Scheduler.Remove(ctx, sc); err != nil {
			return schedulerErr(err)
		}
	}
	if err := s.Store.DeleteSchedule(ctx, tenant, id); err != nil {
		return notFound(err)
	}
	s.Log.InfoContext(ctx, "schedule deleted", "tenant", tenant, "schedule_id", id)
	return nil
}

// Triggers lists a schedule's triggers, latest first.
func (s *Service) Triggers(ctx context.Context, tenant, id string, limit int, cursor string) ([]core.Trigger, string, error) {
	if _, err := s.get(ctx, tenant, id); err != nil {
		return nil, "", err
	}
	list, next, err := s.Store.Triggers(ctx, id, limit, cursor)
	if errors.Is(err, core.ErrInvalidInput) {
		return nil, "", runspec.Errorf(http.StatusBadRequest, "invalid_cursor", "cursor is not a next_cursor this list returned")
	}
	return list, next, err
}

// check validates a schedule about to be written: its timing (when
// timing changed: the minimum interval, a one-off time in the future, a
// window that can fire) and its run request (when it changed: a schedule
// whose agent is gone can still be paused, and its fire times record
// why they fail). It returns its plan.
func (s *Service) check(ctx context.Context, sc core.Schedule, now time.Time, timing, request bool) (plan, error) {
	pl, err := planOf(sc)
	if err != nil {
		return plan{}, err
	}
	if timing {
		if pl.spec != nil {
			if gap := pl.spec.MinInterval(now); gap < s.Config.MinInterval {
				return plan{}, fieldErr("cron", "%q fires %s apart at its most frequent; this deployment's minimum interval is %s", sc.Cron, gap, s.Config.MinInterval)
			}
			if _, err := pl.spec.AWS(); err != nil {
				return plan{}, asFieldErr(err, "cron")
			}
		}
		if sc.At != nil && !sc.At.After(now) {
			return plan{}, fieldErr("at", "%s is in the past", sc.At.Format(time.RFC3339))
		}
		if sc.End != nil && !sc.End.After(now) {
			return plan{}, fieldErr("end", "%s is in the past", sc.End.Format(time.RFC3339))
		}
		if _, ok := pl.next(now); !ok {
			field := "cron"
			if sc.At != nil {
				field = "at"
			}
			return plan{}, fieldErr(field, "the schedule has no fire time between its start and its end")
		}
	}
	if !request {
		return pl, nil
	}
	req, err := s.startRequest(sc)
	if err != nil {
		return plan{}, err
	}
	if err := s.Runner.CheckStart(ctx, sc.Tenant, req); err != nil {
		ae := runspec.Classify(err)
		switch {
		case ae.Status >= 500:
			return plan{}, err
		case ae.Code == "unknown_agent":
			return plan{}, &runspec.Error{Status: ae.Status, Code: ae.Code, Message: "agent: " + ae.Message, Details: map[string]any{"field": "agent"}}
		case ae.Code == "unknown_agent_version":
			return plan{}, &runspec.Error{Status: ae.Status, Code: ae.Code, Message: "agent_version: " + ae.Message, Details: map[string]any{"field": "agent_version"}}
		}
		return plan{}, prefixRequest(ae)
	}
	return pl, nil
}

// startRequest is the start request a schedule's run starts with
// (without its run id, session or schedule reference).
func (s *Service) startRequest(sc core.Schedule) (durable.StartRequest, error) {
	var body runspec.Body
	if err := runspec.Decode(sc.Request, &body, false); err != nil {
		return durable.StartRequest{}, prefixRequest(err)
	}
	req, err := s.Validator.Request(body)
	if err != nil {
		return durable.StartRequest{}, prefixRequest(err)
	}
	if sc.Principal != nil {
		p := *sc.Principal
		p.AgentID = sc.Agent
		req.Principal = &p
	}
	return req, nil
}

// prefixRequest names the request field in a run request's refusal.
func prefixRequest(err error) error {
	ae := runspec.Classify(err)
	out := *ae
	out.Message = "request: " + ae.Message
	out.Details = map[string]any{"field": "request"}
	for k, v := range ae.Details {
		if k == "field" {
			out.Details["field"] = "request." + fmt.Sprint(v)
			continue
		}
		out.Details[k] = v
	}
	return &out
}

func asFieldErr(err error, field string) error {
	var ce *cronspec.Error
	if errors.As(err, &ce) {
		return &runspec.Error{Status: http.StatusBadRequest, Code: "invalid_request", Message: ce.Error(), Details: map[string]any{"field": ce.Field}}
	}
	return fieldErr(field, "%v", err)
}

// sync mirrors a schedule to the deployment's scheduler.
func (s *Service) sync(ctx context.Context, sc core.Schedule, pl plan) error {
	if s.Scheduler == nil {
		return nil
	}
	if pl.at != nil && !pl.at.After(s.Clock.Now()) {
		// A one-off schedule that has fired has nothing left to fire
		// (EventBridge Scheduler refuses an at() in the past).
		return nil
	}
	spec, err := pl.awsSpec(sc)
	if err != nil {
		return asFieldErr(err, "cron")
	}
	if err := s.Scheduler.Sync(ctx, sc, spec); err != nil {
		return schedulerErr(err)
	}
	return nil
}

func schedulerErr(err error) error {
	return &runspec.Error{Status: http.StatusServiceUnavailable, Code: "scheduler_unavailable",
		Message: fmt.Sprintf("the deployment's scheduler refused the change, so nothing changed; retry: %v", err)}
}

// view is the API's view of a schedule at now.
func (s *Service) view(sc core.Schedule, pl plan, now time.Time) View {
	v := View{ID: sc.ID, Agent: sc.Agent, Cron: sc.Cron, At: sc.At, Timezone: sc.Timezone, Start: sc.Start, End: sc.End,
		Overlap: sc.Overlap, Missed: sc.Missed, Paused: sc.Paused, LastRunID: sc.LastRunID, CreatedAt: sc.CreatedAt, UpdatedAt: sc.UpdatedAt,
		NextFireTimes: []time.Time{}}
	v.Request, v.Alias, v.AgentVersion = splitRequest(sc.Request)
	if !sc.Paused {
		after := now
		if sc.Cursor.After(after) {
			after = sc.Cursor
		}
		v.NextFireTimes = pl.nextN(after, NextFireTimes)
	}
	return v
}

// splitRequest takes the agent, alias and version out of a stored run
// request, as the API shows them beside it.
func splitRequest(raw json.RawMessage) (json.RawMessage, string, string) {
	var m map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&m); err != nil {
		return raw, "", ""
	}
	var alias, version string
	_ = json.Unmarshal(m["alias"], &alias)
	_ = json.Unmarshal(m["agent_version"], &version)
	delete(m, "agent")
	delete(m, "alias")
	delete(m, "agent_version")
	b, err := json.Marshal(m)
	if err != nil {
		return raw, alias, version
	}
	return b, alias, version
}

// schedulePrincipal is the principal a schedule's runs start as: its
// writer's, with the schedule as the auth source.
func schedulePrincipal(p *core.Principal) *core.Principal {
	if p == nil {
		return nil
	}
	cp := *p
	cp.AuthSource, cp.RequestContext, cp.Caller = AuthSource, RequestContext, nil
	cp.CapabilityCeiling = append([]string(nil), p.CapabilityCeiling...)
	return &cp
}

// validID reports whether id has the shape of a schedule id.
func validID(id string) bool {
	rest, ok := strings.CutPrefix(id, "sch-")
	if !ok || len(rest) == 0 || len(rest) > 64 {
		return false
	}
	for _, c := range rest {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}
