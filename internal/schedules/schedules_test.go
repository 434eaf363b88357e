package schedules_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/baton-agents/baton/core"
	"github.com/baton-agents/baton/internal/app"
	"github.com/baton-agents/baton/internal/durable"
	"github.com/baton-agents/baton/internal/runspec"
	"github.com/baton-agents/baton/internal/schedules"
)

const agentsJSON = `{"agents":[{"slug":"demo","model":{"provider":"scripted"},"allow_overrides":["model"]},
	{"slug":"other","model":{"provider":"scripted"},"allow_overrides":["model"]},
	{"slug":"versioned","model":{"provider":"scripted"},"allow_overrides":["model","agent_version"]}]}`

// clock is a clock the test moves.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time  { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) set(t time.Time) { c.mu.Lock(); c.t = t; c.mu.Unlock() }

type env struct {
	a     *app.App
	svc   *schedules.Service
	clock *clock
	p     *core.Principal
}

var t0 = time.Date(2026, 5, 6, 10, 0, 30, 0, time.UTC)

func newEnv(t *testing.T, cfg schedules.Config, mutate ...func(*app.Config, *app.Deps)) *env {
	t.Helper()
	c := &clock{t: t0}
	conf := app.Config{Stores: app.Stores{Memory: true, Visibility: time.Minute}, Agents: app.Agents{JSON: agentsJSON}, Providers: []string{"scripted"}}
	deps := app.Deps{Clock: c, Log: slog.New(slog.DiscardHandler)}
	for _, m := range mutate {
		m(&conf, &deps)
	}
	a, err := app.Build(context.Background(), conf, deps)
	if err != nil {
		t.Fatal(err)
	}
	svc := schedules.New(a.Runner.Store, a.Runner, a.Schedules.Validator, nil, c, slog.New(slog.DiscardHandler), cfg)
	return &env{a: a, svc: svc, clock: c, p: &core.Principal{ActorID: "ops", AuthSource: "bearer_token", Tenant: "acme", CapabilityCeiling: []string{"runs:write"}}}
}

func str(s string) *string { return &s }

func body(cron string) schedules.Body {
	return schedules.Body{Agent: str("demo"), Cron: str(cron), Request: json.RawMessage(`{"messages":[{"role":"user","content":"digest"}],"model":{"provider":"scripted","turns":[{"content":"Digest sent."}]}}`)}
}

// drain runs every queued step.
func (e *env) drain(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	for {
		ds, err := e.a.Steps.Receive(ctx, 1, 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(ds) == 0 {
			return
		}
		var step core.Step
		if err := json.Unmarshal(ds[0].Body, &step); err != nil {
			t.Fatal(err)
		}
		if err := e.a.Runner.HandleStep(ctx, step, durable.Attempt{ReceiveCount: ds[0].ReceiveCount, Owner: ds[0].ReceiptHandle}); err != nil {
			t.Fatal(err)
		}
		if err := e.a.Steps.Delete(ctx, ds[0].ReceiptHandle); err != nil {
			t.Fatal(err)
		}
	}
}

func (e *env) triggers(t *testing.T, id string) []core.Trigger {
	t.Helper()
	list, _, err := e.svc.Triggers(context.Background(), "acme", id, 100, "")
	if err != nil {
		t.Fatal(err)
	}
	return list
}

func (e *env) tick(t *testing.T, at time.Time) {
	t.Helper()
	e.clock.set(at)
	if err := e.svc.Tick(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func apiErr(t *testing.T, err error) *runspec.Error {
	t.Helper()
	var ae *runspec.Error
	if !errors.As(err, &ae) {
		t.Fatalf("want an API error, got %v", err)
	}
	return ae
}

// TestBadInputNamesTheField: each refusal is a 400 naming its field,
// and nothing is stored.
func TestBadInputNamesTheField(t *testing.T) {
	e := newEnv(t, schedules.Config{MinInterval: 5 * time.Minute})
	ctx := context.Background()
	past := "2020-01-01T00:00:00Z"
	cases := []struct {
		name, field string
		edit        func(*schedules.Body)
	}{
		{"no agent", "agent", func(b *schedules.Body) { b.Agent = nil }},
		{"no timing", "cron", func(b *schedules.Body) { b.Cron = nil }},
		{"cron and at", "cron", func(b *schedules.Body) { b.At = str("2030-01-01T00:00:00Z") }},
		{"bad cron", "cron", func(b *schedules.Body) { b.Cron = str("61 * * * *") }},
		{"garbage cron", "cron", func(b *schedules.Body) { b.Cron = str("every day") }},
		{"too frequent", "cron", func(b *schedules.Body) { b.Cron = str("*/2 * * * *") }},
		{"too frequent rate", "cron", func(b *schedules.Body) { b.Cron = str("rate(1 minute)") }},
		{"dom and dow", "cron", func(b *schedules.Body) { b.Cron = str("0 9 1 * MON") }},
		{"unknown zone", "timezone", func(b *schedules.Body) { b.Timezone = str("Mars/Olympus_Mons") }},
		{"bad at", "at", func(b *schedules.Body) { b.Cron, b.At = nil, str("tomorrow") }},
		{"at in the past", "at", func(b *schedules.Body) { b.Cron, b.At = nil, str(past) }},
		{"start after end", "start", func(b *schedules.Body) {
			b.Start, b.End = json.RawMessage(`"2030-02-01T00:00:00Z"`), json.RawMessage(`"2030-01-01T00:00:00Z"`)
		}},
		{"bad start", "start", func(b *schedules.Body) { b.Start = json.RawMessage(`"soon"`) }},
		{"end in the past", "end", func(b *schedules.Body) { b.End = json.RawMessage(`"` + past + `"`) }},
		{"overlap", "overlap", func(b *schedules.Body) { b.Overlap = str("queue") }},
		{"missed", "missed", func(b *schedules.Body) { b.Missed = str("all") }},
		{"no request", "request", func(b *schedules.Body) { b.Request = nil }},
		{"agent in request", "request", func(b *schedules.Body) {
			b.Request = json.RawMessage(`{"agent":"demo","messages":[{"role":"user","content":"x"}]}`)
		}},
		{"request without messages", "request", func(b *schedules.Body) { b.Request = json.RawMessage(`{"metadata":{}}`) }},
		{"request field unknown", "request.colour", func(b *schedules.Body) {
			b.Request = json.RawMessage(`{"colour":"red","messages":[{"role":"user","content":"x"}]}`)
		}},
		{"unknown agent", "agent", func(b *schedules.Body) { b.Agent = str("nobody") }},
		{"unknown version", "agent_version", func(b *schedules.Body) { b.Agent, b.AgentVersion = str("versioned"), str("av_0000000000000000") }},
		{"no fire time before the end", "cron", func(b *schedules.Body) { b.Cron, b.End = str("0 9 1 1 *"), json.RawMessage(`"2026-06-01T00:00:00Z"`) }},
		{"at before the start", "at", func(b *schedules.Body) {
			b.Cron, b.At, b.Start = nil, str("2026-06-01T00:00:00Z"), json.RawMessage(`"2026-07-01T00:00:00Z"`)
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := body("0 9 * * *")
			c.edit(&b)
			_, err := e.svc.Create(ctx, "acme", e.p, b)
			ae := apiErr(t, err)
			if ae.Status != 400 || ae.Details["field"] != c.field {
				t.Fatalf("got %d %s %v (%s), want 400 naming %s", ae.Status, ae.Code, ae.Details, ae.Message, c.field)
			}
			if !strings.Contains(ae.Message, strings.Split(c.field, ".")[0]) {
				t.Fatalf("message %q does not name %s", ae.Message, c.field)
			}
		})
	}
	if list, _, _ := e.svc.List(ctx, "acme", 100, ""); len(list) != 0 {
		t.Fatalf("refused schedules were stored: %+v", list)
	}
}

// TestTenantLimit: the limit is a 429 naming it; a delete frees a place.
func TestTenantLimit(t *testing.T) {
	e := newEnv(t, schedules.Config{MaxPerTenant: 2})
	ctx := context.Background()
	var ids []string
	for i := 0; i < 2; i++ {
		v, err := e.svc.Create(ctx, "acme", e.p, body("0 9 * * *"))
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, v.ID)
	}
	_, err := e.svc.Create(ctx, "acme", e.p, body("0 9 * * *"))
	ae := apiErr(t, err)
	if ae.Status != 429 || ae.Code != "schedule_limit_reached" || ae.Details["limit"] != 2 {
		t.Fatalf("got %d %s %v", ae.Status, ae.Code, ae.Details)
	}
	if _, err := e.svc.Create(ctx, "other", e.p, body("0 9 * * *")); err != nil {
		t.Fatalf("another tenant has its own limit: %v", err)
	}
	if err := e.svc.Delete(ctx, "acme", ids[0]); err != nil {
		t.Fatal(err)
	}
	if _, err := e.svc.Create(ctx, "acme", e.p, body("0 9 * * *")); err != nil {
		t.Fatalf("after a delete: %v", err)
	}
	if _, err := e.svc.Get(ctx, "other", ids[1]); apiErr(t, err).Status != 404 {
		t.Fatal("another tenant's schedule was found")
	}
}

// TestThreeFireTimesThreeRuns: each fire time the clock reaches starts
// one run, tagged with the schedule; ticking again starts nothing more.
func TestThreeFireTimesThreeRuns(t *testing.T) {
	e := newEnv(t, schedules.Config{})
	ctx := context.Background()
	v, err := e.svc.Create(ctx, "acme", e.p, body("* * * * *"))
	if err != nil {
		t.Fatal(err)
	}
	want := []time.Time{t0.Truncate(time.Minute).Add(time.Minute), t0.Truncate(time.Minute).Add(2 * time.Minute)}
	if len(v.NextFireTimes) != schedules.NextFireTimes || !v.NextFireTimes[0].Equal(want[0]) || !v.NextFireTimes[1].Equal(want[1]) {
		t.Fatalf("next fire times %v", v.NextFireTimes)
	}
	e.tick(t, t0) // nothing due yet
	for i := 1; i <= 3; i++ {
		e.tick(t, t0.Truncate(time.Minute).Add(time.Duration(i)*time.Minute+2*time.Second))
		e.tick(t, t0.Truncate(time.Minute).Add(time.Duration(i)*time.Minute+3*time.Second))
		e.drain(t)
	}
	trs := e.triggers(t, v.ID)
	if len(trs) != 3 {
		t.Fatalf("%d triggers: %+v", len(trs), trs)
	}
	for i, tr := range trs {
		fire := t0.Truncate(time.Minute).Add(time.Duration(3-i) * time.Minute)
		if tr.Outcome != core.TriggerStarted || !tr.FireTime.Equal(fire) || tr.RunID != core.ScheduledRunID(v.ID, fire) {
			t.Fatalf("trigger %d: %+v", i, tr)
		}
		snap, err := e.a.Runner.Get(ctx, "acme", tr.RunID)
		if err != nil {
			t.Fatal(err)
		}
		if s := snap.State.Config.Schedule; s == nil || s.ID != v.ID || !s.FireTime.Equal(fire) || snap.State.Status != core.StatusCompleted {
			t.Fatalf("run %s: schedule %+v, status %s", tr.RunID, s, snap.State.Status)
		}
		if snap.State.SessionID != core.ScheduledSessionID(v.ID, fire) {
			t.Fatalf("run %s on session %s, want the fire time's own", tr.RunID, snap.State.SessionID)
		}
		if p := snap.State.Config.Principal; p == nil || p.ActorID != "ops" || p.AuthSource != schedules.AuthSource {
			t.Fatalf("run principal %+v", p)
		}
	}
	// A second delivery of a fire time lands on the same record.
	tr, err := e.svc.Fire(ctx, "acme", v.ID, trs[0].FireTime, schedules.FireOptions{})
	if err != nil || tr.RunID != trs[0].RunID {
		t.Fatalf("refire: %+v %v", tr, err)
	}
	page, err := e.a.Runner.List(ctx, "acme", core.RunListQuery{Limit: 10})
	if err != nil || len(page.Runs) != 3 || page.Runs[0].ScheduleID != v.ID {
		t.Fatalf("runs %+v %v", page.Runs, err)
	}
	got, _ := e.svc.Get(ctx, "acme", v.ID)
	if got.LastRunID != trs[0].RunID {
		t.Fatalf("last run %s, want %s", got.LastRunID, trs[0].RunID)
	}
}

// TestOverlapSkip: while the previous run is unfinished, a fire time is
// skipped and the skip recorded; with allow, it starts a run.
func TestOverlapSkip(t *testing.T) {
	for _, overlap := range []string{core.OverlapSkip, core.OverlapAllow} {
		t.Run(overlap, func(t *testing.T) {
			e := newEnv(t, schedules.Config{})
			b := body("* * * * *")
			b.Overlap = str(overlap)
			v, err := e.svc.Create(context.Background(), "acme", e.p, b)
			if err != nil {
				t.Fatal(err)
			}
			base := t0.Truncate(time.Minute)
			e.tick(t, base.Add(time.Minute+time.Second)) // the first run stays queued: no step runs
			e.tick(t, base.Add(2*time.Minute+time.Second))
			trs := e.triggers(t, v.ID)
			if len(trs) != 2 || trs[1].Outcome != core.TriggerStarted {
				t.Fatalf("triggers %+v", trs)
			}
			if overlap == core.OverlapAllow {
				if trs[0].Outcome != core.TriggerStarted {
					t.Fatalf("allow: %+v", trs[0])
				}
				return
			}
			if trs[0].Outcome != core.TriggerSkipped || trs[0].RunID != "" || !strings.HasPrefix(trs[0].Reason, "overlap: the previous run "+trs[1].RunID) {
				t.Fatalf("skip: %+v", trs[0])
			}
			e.drain(t) // the first run finishes: the next fire time starts one
			e.tick(t, base.Add(3*time.Minute+time.Second))
			if trs = e.triggers(t, v.ID); trs[0].Outcome != core.TriggerStarted {
				t.Fatalf("after the run finished: %+v", trs[0])
			}
		})
	}
}

// TestPausedFiresNone and the missed policy on resume: a paused schedule
// fires nothing; resuming records the fire times it missed as skipped,
// or with run_once starts one run for the latest of them.
func TestPausedFiresNone(t *testing.T) {
	for _, missed := range []string{core.MissedSkip, core.MissedRunOnce} {
		t.Run(missed, func(t *testing.T) {
			e := newEnv(t, schedules.Config{})
			ctx := context.Background()
			b := body("* * * * *")
			b.Missed, b.Paused = str(missed), func() *bool { v := true; return &v }()
			v, err := e.svc.Create(ctx, "acme", e.p, b)
			if err != nil {
				t.Fatal(err)
			}
			if len(v.NextFireTimes) != 0 || !v.Paused {
				t.Fatalf("a paused schedule lists fire times: %+v", v)
			}
			base := t0.Truncate(time.Minute)
			for i := 1; i <= 3; i++ {
				e.tick(t, base.Add(time.Duration(i)*time.Minute+time.Second))
			}
			if trs := e.triggers(t, v.ID); len(trs) != 0 {
				t.Fatalf("a paused schedule fired: %+v", trs)
			}
			resume := false
			got, err := e.svc.Update(ctx, "acme", v.ID, e.p, schedules.Body{Paused: &resume})
			if err != nil || got.Paused || len(got.NextFireTimes) == 0 {
				t.Fatalf("resume: %+v %v", got, err)
			}
			if want := map[string]string{core.MissedSkip: "", core.MissedRunOnce: core.ScheduledRunID(v.ID, base.Add(3*time.Minute))}[missed]; got.LastRunID != want {
				t.Fatalf("after resuming, last run %q, want %q", got.LastRunID, want)
			}
			e.tick(t, base.Add(3*time.Minute+2*time.Second))
			trs := e.triggers(t, v.ID)
			if len(trs) != 3 {
				t.Fatalf("triggers %+v", trs)
			}
			started := 0
			for _, tr := range trs {
				if tr.Outcome == core.TriggerStarted {
					started++
					if !tr.FireTime.Equal(base.Add(3*time.Minute)) || !strings.HasPrefix(tr.Reason, "caught_up: ") {
						t.Fatalf("the caught-up run: %+v", tr)
					}
				} else if tr.Outcome != core.TriggerSkipped || !strings.HasPrefix(tr.Reason, "paused: ") {
					t.Fatalf("a missed fire time: %+v", tr)
				}
			}
			if want := map[string]int{core.MissedSkip: 0, core.MissedRunOnce: 1}[missed]; started != want {
				t.Fatalf("%d runs started, want %d: %+v", started, want, trs)
			}
		})
	}
}

// TestMissedWhileDown: fire times the scheduler reaches later than its
// grace were missed (it was not running): skip records them, run_once
// starts one run for the latest.
func TestMissedWhileDown(t *testing.T) {
	for _, missed := range []string{core.MissedSkip, core.MissedRunOnce} {
		t.Run(missed, func(t *testing.T) {
			e := newEnv(t, schedules.Config{})
			b := body("*/5 * * * *")
			b.Missed = str(missed)
			v, err := e.svc.Create(context.Background(), "acme", e.p, b)
			if err != nil {
				t.Fatal(err)
			}
			// Down from 10:00:30 until 10:17:10: 10:05, 10:10, 10:15 missed.
			e.tick(t, t0.Truncate(time.Minute).Add(17*time.Minute+10*time.Second))
			e.tick(t, t0.Truncate(time.Minute).Add(17*time.Minute+20*time.Second))
			trs := e.triggers(t, v.ID)
			if len(trs) != 3 {
				t.Fatalf("triggers %+v", trs)
			}
			runs := 0
			for _, tr := range trs {
				if tr.Outcome == core.TriggerStarted {
					runs++
					if tr.FireTime.Minute() != 15 || !strings.Contains(tr.Reason, "not running") {
						t.Fatalf("%+v", tr)
					}
				} else if !strings.HasPrefix(tr.Reason, "missed: ") {
					t.Fatalf("%+v", tr)
				}
			}
			if want := map[string]int{core.MissedSkip: 0, core.MissedRunOnce: 1}[missed]; runs != want {
				t.Fatalf("%d runs, want %d", runs, want)
			}
		})
	}
}

// TestFailedTriggerIsRecorded: a fire time that cannot start its run
// (the tenant at its active-run limit) is recorded with the reason.
func TestFailedTriggerIsRecorded(t *testing.T) {
	e := newEnv(t, schedules.Config{}, func(c *app.Config, _ *app.Deps) { c.Limits.MaxActiveRuns = 1 })
	b := body("* * * * *")
	b.Overlap = str(core.OverlapAllow)
	v, err := e.svc.Create(context.Background(), "acme", e.p, b)
	if err != nil {
		t.Fatal(err)
	}
	base := t0.Truncate(time.Minute)
	e.tick(t, base.Add(time.Minute+time.Second))
	e.tick(t, base.Add(2*time.Minute+time.Second))
	trs := e.triggers(t, v.ID)
	if len(trs) != 2 || trs[0].Outcome != core.TriggerFailed || !strings.HasPrefix(trs[0].Reason, "too_many_active_runs: ") || trs[0].RunID != "" {
		t.Fatalf("triggers %+v", trs)
	}
}

// TestStaleFire: a fire time that is not the schedule's starts nothing.
func TestStaleFire(t *testing.T) {
	e := newEnv(t, schedules.Config{})
	v, err := e.svc.Create(context.Background(), "acme", e.p, body("0 9 * * *"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = e.svc.Fire(context.Background(), "acme", v.ID, time.Date(2026, 5, 7, 9, 1, 0, 0, time.UTC), schedules.FireOptions{})
	if !errors.Is(err, schedules.ErrStale) {
		t.Fatalf("got %v", err)
	}
	if _, err = e.svc.Fire(context.Background(), "other", v.ID, time.Date(2026, 5, 7, 9, 0, 0, 0, time.UTC), schedules.FireOptions{}); !errors.Is(err, schedules.ErrStale) {
		t.Fatalf("another tenant's fire: %v", err)
	}
	if trs := e.triggers(t, v.ID); len(trs) != 0 {
		t.Fatalf("%+v", trs)
	}
}

// TestDaylightSavingNextFireTimes: in Europe/Lisbon in 2026, 01:30 does
// not exist on 29 March (skipped) and occurs twice on 25 October (fires
// once, at the first).
func TestDaylightSavingNextFireTimes(t *testing.T) {
	e := newEnv(t, schedules.Config{})
	ctx := context.Background()
	b := body("30 1 * * *")
	b.Timezone = str("Europe/Lisbon")
	e.clock.set(time.Date(2026, 3, 27, 12, 0, 0, 0, time.UTC))
	v, err := e.svc.Create(ctx, "acme", e.p, b)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"2026-03-28T01:30:00Z", "2026-03-30T00:30:00Z", "2026-03-31T00:30:00Z"}
	for i, w := range want {
		if got := v.NextFireTimes[i].Format(time.RFC3339); got != w {
			t.Fatalf("spring: fire %d at %s, want %s (all: %v)", i, got, w, v.NextFireTimes)
		}
	}
	e.clock.set(time.Date(2026, 10, 24, 12, 0, 0, 0, time.UTC))
	v, err = e.svc.Get(ctx, "acme", v.ID)
	if err != nil {
		t.Fatal(err)
	}
	want = []string{"2026-10-25T00:30:00Z", "2026-10-26T01:30:00Z"}
	for i, w := range want {
		if got := v.NextFireTimes[i].Format(time.RFC3339); got != w {
			t.Fatalf("autumn: fire %d at %s, want %s (all: %v)", i, got, w, v.NextFireTimes)
		}
	}
}

// failingScheduler refuses every change.
type failingScheduler struct{ synced, removed int }

func (f *failingScheduler) Sync(context.Context, core.Schedule, core.ScheduleSpec) error {
	f.synced++
	return errors.New("ThrottlingException")
}
func (f *failingScheduler) Remove(context.Context, core.Schedule) error {
	f.removed++
	return errors.New("ThrottlingException")
}

// TestSchedulerRefusalChangesNothing: when EventBridge Scheduler refuses,
// the store is left as it was (create, update, delete).
func TestSchedulerRefusalChangesNothing(t *testing.T) {
	e := newEnv(t, schedules.Config{})
	ctx := context.Background()
	v, err := e.svc.Create(ctx, "acme", e.p, body("0 9 * * *"))
	if err != nil {
		t.Fatal(err)
	}
	f := &failingScheduler{}
	e.svc.Scheduler = f
	if _, err := e.svc.Create(ctx, "acme", e.p, body("0 9 * * *")); apiErr(t, err).Code != "scheduler_unavailable" {
		t.Fatal(err)
	}
	if list, _, _ := e.svc.List(ctx, "acme", 10, ""); len(list) != 1 {
		t.Fatalf("a refused create was kept: %d schedules", len(list))
	}
	if _, err := e.svc.Update(ctx, "acme", v.ID, e.p, schedules.Body{Cron: str("0 10 * * *")}); apiErr(t, err).Code != "scheduler_unavailable" {
		t.Fatal(err)
	}
	if got, _ := e.svc.Get(ctx, "acme", v.ID); got.Cron != "0 9 * * *" {
		t.Fatalf("a refused update was kept: %+v", got)
	}
	if err := e.svc.Delete(ctx, "acme", v.ID); apiErr(t, err).Code != "scheduler_unavailable" {
		t.Fatal(err)
	}
	if _, err := e.svc.Get(ctx, "acme", v.ID); err != nil {
		t.Fatalf("a refused delete deleted: %v", err)
	}
	if f.synced != 2 || f.removed != 1 {
		t.Fatalf("scheduler calls: %+v", f)
	}
}

// TestPatch: fields change one by one; a new expression fires from the
// update on; a new request keeps the alias chosen before.
func TestPatch(t *testing.T) {
	e := newEnv(t, schedules.Config{})
	ctx := context.Background()
	b := body("0 9 * * *")
	b.Alias = str("default")
	v, err := e.svc.Create(ctx, "acme", e.p, b)
	if err != nil {
		t.Fatal(err)
	}
	if v.Alias != "default" || strings.Contains(string(v.Request), "agent") {
		t.Fatalf("view %+v request %s", v, v.Request)
	}
	got, err := e.svc.Update(ctx, "acme", v.ID, e.p, schedules.Body{Cron: str("0 18 * * *"), Timezone: str("America/New_York"),
		Request: json.RawMessage(`{"messages":[{"role":"user","content":"evening"}]}`), End: json.RawMessage(`"2027-01-01T00:00:00Z"`)})
	if err != nil {
		t.Fatal(err)
	}
	if got.Cron != "0 18 * * *" || got.Timezone != "America/New_York" || got.Alias != "default" || !strings.Contains(string(got.Request), "evening") ||
		got.End == nil || got.NextFireTimes[0].Format(time.RFC3339) != "2026-05-06T22:00:00Z" {
		t.Fatalf("patched %+v (%s)", got, got.Request)
	}
	got, err = e.svc.Update(ctx, "acme", v.ID, e.p, schedules.Body{End: json.RawMessage(`null`), Overlap: str("allow")})
	if err != nil || got.End != nil || got.Overlap != "allow" || got.Cron != "0 18 * * *" {
		t.Fatalf("%+v %v", got, err)
	}
	if _, err := e.svc.Update(ctx, "acme", v.ID, e.p, schedules.Body{Cron: str("nope")}); apiErr(t, err).Details["field"] != "cron" {
		t.Fatal(err)
	}
	if _, err := e.svc.Update(ctx, "other", v.ID, e.p, schedules.Body{Paused: new(bool)}); apiErr(t, err).Status != 404 {
		t.Fatal(err)
	}
}

// TestAgentRemoved: a schedule whose agent is no longer deployed records
// each fire time as failed with the reason, and can still be paused and
// deleted.
func TestAgentRemoved(t *testing.T) {
	e := newEnv(t, schedules.Config{})
	ctx := context.Background()
	v, err := e.svc.Create(ctx, "acme", e.p, body("* * * * *"))
	if err != nil {
		t.Fatal(err)
	}
	// The deployment drops the agent: the stored request names one it
	// no longer has.
	sc, err := e.a.Runner.Store.GetSchedule(ctx, "acme", v.ID)
	if err != nil {
		t.Fatal(err)
	}
	sc.Agent, sc.Version = "retired", sc.Version+1
	sc.Request = json.RawMessage(strings.Replace(string(sc.Request), `"agent":"demo"`, `"agent":"retired"`, 1))
	if err := e.a.Runner.Store.UpdateSchedule(ctx, sc); err != nil {
		t.Fatal(err)
	}
	e.tick(t, t0.Truncate(time.Minute).Add(time.Minute+time.Second))
	trs := e.triggers(t, v.ID)
	if len(trs) != 1 || trs[0].Outcome != core.TriggerFailed || !strings.HasPrefix(trs[0].Reason, "unknown_agent: ") {
		t.Fatalf("triggers %+v", trs)
	}
	paused := true
	if got, err := e.svc.Update(ctx, "acme", v.ID, e.p, schedules.Body{Paused: &paused}); err != nil || !got.Paused {
		t.Fatalf("pause: %+v %v", got, err)
	}
	if err := e.svc.Delete(ctx, "acme", v.ID); err != nil {
		t.Fatal(err)
	}
}

// outage fails run starts while down, as a table outage would; conflicts
// makes that many schedule updates lose a race; gone makes a delete find
// the schedule gone.
type outage struct {
	durable.Store
	down      *bool
	conflicts *int
	gone      *bool
}

func (o outage) CreateRun(ctx context.Context, head core.SessionHead, w core.Write) error {
	if *o.down {
		return core.Retryable(errors.New("table unavailable"))
	}
	return o.Store.CreateRun(ctx, head, w)
}

func (o outage) UpdateSchedule(ctx context.Context, sc core.Schedule) error {
	if *o.conflicts > 0 {
		*o.conflicts--
		return core.ErrConflict
	}
	return o.Store.UpdateSchedule(ctx, sc)
}

func (o outage) DeleteSchedule(ctx context.Context, tenant, id string) error {
	if *o.gone {
		return core.ErrNotFound
	}
	return o.Store.DeleteSchedule(ctx, tenant, id)
}

func newOutageEnv(t *testing.T, cfg schedules.Config) (*env, outage) {
	o := outage{down: new(bool), conflicts: new(int), gone: new(bool)}
	e := newEnv(t, cfg, func(_ *app.Config, d *app.Deps) {
		d.WrapStore = func(s durable.Store) durable.Store { o.Store = s; return o }
	})
	return e, o
}

// TestTransientFailureInTick: a start that fails for a transient reason
// is retried on the next ticks; from half the grace on it is recorded as
// failed with the error.
func TestTransientFailureInTick(t *testing.T) {
	e, o := newOutageEnv(t, schedules.Config{})
	v, err := e.svc.Create(context.Background(), "acme", e.p, body("* * * * *"))
	if err != nil {
		t.Fatal(err)
	}
	fire := t0.Truncate(time.Minute).Add(time.Minute)
	*o.down = true
	for _, after := range []time.Duration{time.Second, 29 * time.Second} {
		e.clock.set(fire.Add(after))
		if err := e.svc.Tick(context.Background()); err == nil || !strings.Contains(err.Error(), "table unavailable") {
			t.Fatalf("a tick %s after the fire time: %v", after, err)
		}
		if trs := e.triggers(t, v.ID); len(trs) != 0 {
			t.Fatalf("recorded before half the grace: %+v", trs)
		}
	}
	e.tick(t, fire.Add(30*time.Second))
	trs := e.triggers(t, v.ID)
	if len(trs) != 1 || trs[0].Outcome != core.TriggerFailed || !strings.HasPrefix(trs[0].Reason, "internal: ") || !strings.Contains(trs[0].Reason, "table unavailable") {
		t.Fatalf("triggers %+v", trs)
	}
	// The next fire time, the table back, starts its run.
	*o.down = false
	e.tick(t, fire.Add(time.Minute+time.Second))
	if trs = e.triggers(t, v.ID); len(trs) != 2 || trs[0].Outcome != core.TriggerStarted {
		t.Fatalf("triggers %+v", trs)
	}
}

// TestUpdateRetriesConflicts: an update that loses a race with another
// writer reads again and applies the change; one that keeps losing says
// so.
func TestUpdateRetriesConflicts(t *testing.T) {
	e, o := newOutageEnv(t, schedules.Config{})
	ctx := context.Background()
	v, err := e.svc.Create(ctx, "acme", e.p, body("0 9 * * *"))
	if err != nil {
		t.Fatal(err)
	}
	*o.conflicts = 4
	if got, err := e.svc.Update(ctx, "acme", v.ID, e.p, schedules.Body{Cron: str("0 10 * * *")}); err != nil || got.Cron != "0 10 * * *" {
		t.Fatalf("after 4 conflicts: %+v %v", got, err)
	}
	*o.conflicts = 5
	if _, err := e.svc.Update(ctx, "acme", v.ID, e.p, schedules.Body{Cron: str("0 11 * * *")}); !errors.Is(err, core.ErrConflict) {
		t.Fatalf("after 5 conflicts: %v", err)
	}
	*o.gone = true
	if err := e.svc.Delete(ctx, "acme", v.ID); apiErr(t, err).Status != 404 {
		t.Fatalf("a schedule deleted meanwhile: %v", err)
	}
}

// TestMissedAndDueInOneTick: a tick that finds missed fire times and a
// due one records the missed and fires the due one in the same tick.
func TestMissedAndDueInOneTick(t *testing.T) {
	e := newEnv(t, schedules.Config{})
	b := body("* * * * *")
	b.Overlap = str(core.OverlapAllow)
	v, err := e.svc.Create(context.Background(), "acme", e.p, b)
	if err != nil {
		t.Fatal(err)
	}
	base := t0.Truncate(time.Minute)
	e.tick(t, base.Add(4*time.Minute+10*time.Second)) // 10:01 to 10:03 missed, 10:04 due
	trs := e.triggers(t, v.ID)
	if len(trs) != 4 || trs[0].Outcome != core.TriggerStarted || trs[0].Reason != "" || !trs[0].FireTime.Equal(base.Add(4*time.Minute)) {
		t.Fatalf("triggers %+v", trs)
	}
	for _, tr := range trs[1:] {
		if tr.Outcome != core.TriggerSkipped || !strings.HasPrefix(tr.Reason, "missed: ") {
			t.Fatalf("a missed fire time: %+v", tr)
		}
	}
}

// TestDueFireTimesSeeTheRunBefore: with a grace that lets a tick find
// several due fire times, each sees the run the one before started, so
// overlap skip holds within one tick.
func TestDueFireTimesSeeTheRunBefore(t *testing.T) {
	e := newEnv(t, schedules.Config{MisfireGrace: 5 * time.Minute})
	v, err := e.svc.Create(context.Background(), "acme", e.p, body("* * * * *"))
	if err != nil {
		t.Fatal(err)
	}
	e.tick(t, t0.Truncate(time.Minute).Add(3*time.Minute+time.Second))
	trs := e.triggers(t, v.ID)
	if len(trs) != 3 || trs[2].Outcome != core.TriggerStarted || trs[1].Outcome != core.TriggerSkipped || trs[0].Outcome != core.TriggerSkipped {
		t.Fatalf("triggers %+v", trs)
	}
}

// recorder is a scheduler that records what it is given.
type recorder struct {
	specs   []core.ScheduleSpec
	removed []string
}

func (r *recorder) Sync(_ context.Context, _ core.Schedule, spec core.ScheduleSpec) error {
	r.specs = append(r.specs, spec)
	return nil
}

func (r *recorder) Remove(_ context.Context, s core.Schedule) error {
	r.removed = append(r.removed, s.ID)
	return nil
}

// TestSchedulerSpecs: what EventBridge Scheduler is given for each kind
// of schedule: a cron in its six-field form and zone, a rate anchored at
// the schedule's creation minute, a one-off in UTC, a pause as disabled;
// a delete removes it.
func TestSchedulerSpecs(t *testing.T) {
	e := newEnv(t, schedules.Config{})
	rec := &recorder{}
	e.svc.Scheduler = rec
	ctx := context.Background()
	cron := body("0 9 * * MON-FRI")
	cron.Timezone = str("Europe/Lisbon")
	rate := body("rate(2 hours)")
	one := body("")
	one.Cron, one.At = nil, str("2026-10-25T01:30:00+01:00")
	one.Timezone = str("Europe/Lisbon")
	var ids []string
	for _, b := range []schedules.Body{cron, rate, one} {
		v, err := e.svc.Create(ctx, "acme", e.p, b)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, v.ID)
	}
	created := t0.Truncate(time.Minute)
	want := []core.ScheduleSpec{
		{Expression: "cron(0 9 ? * 2-6 *)", Timezone: "Europe/Lisbon", Enabled: true},
		{Expression: "rate(2 hours)", Timezone: "UTC", Start: &created, Enabled: true},
		{Expression: "at(2026-10-25T00:30:00)", Timezone: "UTC", Enabled: true},
	}
	for i, w := range want {
		got := rec.specs[i]
		if got.Expression != w.Expression || got.Timezone != w.Timezone || got.Enabled != w.Enabled || (got.Start == nil) != (w.Start == nil) ||
			(got.Start != nil && !got.Start.Equal(*w.Start)) || got.End != nil {
			t.Fatalf("spec %d: %+v, want %+v", i, got, w)
		}
	}
	paused := true
	if _, err := e.svc.Update(ctx, "acme", ids[0], e.p, schedules.Body{Paused: &paused}); err != nil {
		t.Fatal(err)
	}
	if got := rec.specs[3]; got.Enabled || got.Expression != "cron(0 9 ? * 2-6 *)" {
		t.Fatalf("paused: %+v", got)
	}
	if err := e.svc.Delete(ctx, "acme", ids[1]); err != nil || len(rec.removed) != 1 || rec.removed[0] != ids[1] {
		t.Fatalf("delete: %v %v", rec.removed, err)
	}
}

// TestOneOff: a one-off schedule fires once, at its time, on the session
// its request names.
func TestOneOff(t *testing.T) {
	e := newEnv(t, schedules.Config{})
	ctx := context.Background()
	at := t0.Add(90 * time.Second).Truncate(time.Minute)
	b := body("")
	b.Cron, b.At = nil, str(at.Format(time.RFC3339))
	b.Request = json.RawMessage(`{"session_id":"thread-1","messages":[{"role":"user","content":"once"}],"model":{"provider":"scripted","turns":[{"content":"ok"}]}}`)
	v, err := e.svc.Create(ctx, "acme", e.p, b)
	if err != nil {
		t.Fatal(err)
	}
	if len(v.NextFireTimes) != 1 || !v.NextFireTimes[0].Equal(at) || v.At == nil || !v.At.Equal(at) {
		t.Fatalf("view %+v", v)
	}
	e.tick(t, at.Add(time.Second))
	e.tick(t, at.Add(2*time.Minute))
	trs := e.triggers(t, v.ID)
	if len(trs) != 1 || trs[0].Outcome != core.TriggerStarted {
		t.Fatalf("triggers %+v", trs)
	}
	snap, err := e.a.Runner.Get(ctx, "acme", trs[0].RunID)
	if err != nil || snap.State.SessionID != "thread-1" {
		t.Fatalf("run session %s %v", snap.State.SessionID, err)
	}
	if got, _ := e.svc.Get(ctx, "acme", v.ID); len(got.NextFireTimes) != 0 {
		t.Fatalf("after it fired: %v", got.NextFireTimes)
	}
}

// TestPatchAliasAlone: a change of the alias alone keeps the request, and
// the agent alone keeps the alias.
func TestPatchAliasAlone(t *testing.T) {
	e := newEnv(t, schedules.Config{})
	ctx := context.Background()
	v, err := e.svc.Create(ctx, "acme", e.p, body("0 9 * * *"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := e.svc.Update(ctx, "acme", v.ID, e.p, schedules.Body{Alias: str("default")})
	if err != nil || got.Alias != "default" || string(got.Request) != string(v.Request) {
		t.Fatalf("alias alone: %+v (%s) %v", got, got.Request, err)
	}
	got, err = e.svc.Update(ctx, "acme", v.ID, e.p, schedules.Body{Agent: str("demo")})
	if err != nil || got.Alias != "default" || got.Agent != "demo" || string(got.Request) != string(v.Request) {
		t.Fatalf("agent alone: %+v %v", got, err)
	}
	// Another agent: the runs run it, with the same request.
	got, err = e.svc.Update(ctx, "acme", v.ID, e.p, schedules.Body{Agent: str("other")})
	if err != nil || got.Agent != "other" || string(got.Request) != string(v.Request) {
		t.Fatalf("another agent: %+v %v", got, err)
	}
	e.tick(t, time.Date(2026, 5, 7, 9, 0, 1, 0, time.UTC))
	trs := e.triggers(t, v.ID)
	if len(trs) != 1 {
		t.Fatalf("triggers %+v", trs)
	}
	if snap, err := e.a.Runner.Get(ctx, "acme", trs[0].RunID); err != nil || snap.State.Config.Agent != "other" {
		t.Fatalf("the run's agent: %v", err)
	}
	if _, err := e.svc.Update(ctx, "acme", v.ID, e.p, schedules.Body{AgentVersion: str("av_0000000000000000")}); apiErr(t, err).Status != 400 {
		t.Fatalf("a version the agent does not allow: %v", err)
	}
}

// TestRequestSize: a run request of more than 64 KiB is refused for its
// size; one of 64 KiB is not.
func TestRequestSize(t *testing.T) {
	e := newEnv(t, schedules.Config{})
	frame := `{"messages":[{"role":"user","content":"%s"}]}`
	for _, c := range []struct {
		size    int
		refused bool
	}{{64 << 10, false}, {64<<10 + 1, true}} {
		b := body("0 9 * * *")
		b.Request = json.RawMessage(strings.Replace(frame, "%s", strings.Repeat("x", c.size-len(frame)+2), 1))
		if len(b.Request) != c.size {
			t.Fatalf("built %d bytes", len(b.Request))
		}
		_, err := e.svc.Create(context.Background(), "acme", e.p, b)
		if refused := err != nil && strings.Contains(err.Error(), "larger than"); refused != c.refused {
			t.Fatalf("%d bytes: %v", c.size, err)
		}
	}
}

// TestStart: a schedule's first fire time is at or after its start (the
// start itself when it is one).
func TestStart(t *testing.T) {
	e := newEnv(t, schedules.Config{})
	for _, c := range []struct{ start, first string }{
		{"2026-06-01T09:00:00Z", "2026-06-01T09:00:00Z"},
		{"2026-06-01T09:00:01Z", "2026-06-02T09:00:00Z"},
	} {
		b := body("0 9 * * *")
		b.Start = json.RawMessage(`"` + c.start + `"`)
		v, err := e.svc.Create(context.Background(), "acme", e.p, b)
		if err != nil {
			t.Fatal(err)
		}
		if got := v.NextFireTimes[0].Format(time.RFC3339); got != c.first || v.Start == nil {
			t.Fatalf("start %s: first fire time %s, want %s", c.start, got, c.first)
		}
	}
}

// TestFireWhilePaused: a fire that arrives for a paused schedule (sent
// just before the pause reached EventBridge Scheduler) starts nothing and
// is recorded as skipped.
func TestFireWhilePaused(t *testing.T) {
	e := newEnv(t, schedules.Config{})
	ctx := context.Background()
	v, err := e.svc.Create(ctx, "acme", e.p, body("* * * * *"))
	if err != nil {
		t.Fatal(err)
	}
	paused := true
	if _, err := e.svc.Update(ctx, "acme", v.ID, e.p, schedules.Body{Paused: &paused}); err != nil {
		t.Fatal(err)
	}
	fire := t0.Truncate(time.Minute).Add(time.Minute)
	tr, err := e.svc.Fire(ctx, "acme", v.ID, fire, schedules.FireOptions{})
	if err != nil || tr.Outcome != core.TriggerSkipped || !strings.HasPrefix(tr.Reason, "paused: ") || tr.RunID != "" {
		t.Fatalf("%+v %v", tr, err)
	}
}

// TestLoop: the in-process scheduler ticks until its context ends.
func TestLoop(t *testing.T) {
	e := newEnv(t, schedules.Config{})
	v, err := e.svc.Create(context.Background(), "acme", e.p, body("* * * * *"))
	if err != nil {
		t.Fatal(err)
	}
	e.clock.set(t0.Truncate(time.Minute).Add(time.Minute + time.Second))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { e.svc.Loop(ctx, 0); close(done) }()
	deadline := time.Now().Add(10 * time.Second)
	for len(e.triggers(t, v.ID)) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the loop fired nothing")
		}
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the loop did not stop with its context")
	}
}
