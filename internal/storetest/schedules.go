package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/baton-agents/baton/core"
)

// The schedule contract (core.ScheduleStore): a tenant's schedules are
// created (counted against a limit), read, updated by version and
// deleted, listed in id order page by page, and never reached from
// another tenant; schedule ids are unique across tenants (a schedule's
// triggers are keyed by its id alone). A trigger is stored once per
// fire time and moves its schedule's cursor forward only, and its last
// run only when started. Every tenant's schedules list page by page
// (AllSchedules may lag a create or delete: a DynamoDB index).

type schedTest struct {
	t   *testing.T
	ctx context.Context
	s   Store
}

func newSchedTest(t *testing.T, newStore func(*testing.T) Store) *schedTest {
	return &schedTest{t: t, ctx: context.Background(), s: newStore(t)}
}

// schedule is a schedule of tenant's with every field set, created at t0.
func schedule(tenant, id string) core.Schedule {
	at, start, end := t0.Add(48*time.Hour), t0.Add(time.Hour), t0.Add(30*24*time.Hour)
	return core.Schedule{
		ID: id, Tenant: tenant, Agent: "demo",
		Request:  json.RawMessage(`{"agent":"demo","messages":[{"role":"user","content":"Summarise the day: ünïcödé, \"quoted\"."}],"metadata":{"k":"v"}}`),
		Cron:     "0 9 * * MON-FRI",
		Timezone: "Europe/Lisbon", Start: &start, End: &end,
		Overlap: core.OverlapSkip, Missed: core.MissedRunOnce,
		Principal: &core.Principal{ActorID: "user_1", AuthSource: "token", Tenant: tenant, TokenID: "tok_1"},
		CreatedAt: t0, UpdatedAt: t0, Cursor: t0,
		// A create stores Version 1 whatever it is given, and
		// LastRunID is only RecordTrigger's to set; At is set here
		// only to check it round-trips.
		Version: 7, At: &at,
	}
}

func (st *schedTest) create(sc core.Schedule, limit int) {
	st.t.Helper()
	if err := st.s.CreateSchedule(st.ctx, sc, limit); err != nil {
		st.t.Fatalf("create schedule %s/%s: %v", sc.Tenant, sc.ID, err)
	}
}

func (st *schedTest) get(tenant, id string) core.Schedule {
	st.t.Helper()
	sc, err := st.s.GetSchedule(st.ctx, tenant, id)
	if err != nil {
		st.t.Fatalf("get schedule %s/%s: %v", tenant, id, err)
	}
	return sc
}

// sameSchedule compares schedules by their JSON, which has every field.
func sameSchedule(t *testing.T, what string, got, want core.Schedule) {
	t.Helper()
	g, err := json.Marshal(got)
	if err != nil {
		t.Fatal(err)
	}
	w, err := json.Marshal(want)
	if err != nil {
		t.Fatal(err)
	}
	if string(g) != string(w) {
		t.Fatalf("%s:\n got %s\nwant %s", what, g, w)
	}
}

func scheduleIDs(list []core.Schedule) []string {
	ids := make([]string, len(list))
	for i, sc := range list {
		ids[i] = sc.Tenant + "/" + sc.ID
	}
	return ids
}

// testSchedulesCRUD: a schedule reads back as written (Version 1); a
// tenant's schedules list in id order page by page; another tenant's
// schedule is not found by any call; an id in use, by any tenant, is a
// conflict; a deleted schedule is gone.
func testSchedulesCRUD(t *testing.T, newStore func(*testing.T) Store) {
	st := newSchedTest(t, newStore)
	ids := []string{"sch_c", "sch_a", "sch_e", "sch_b", "sch_d"}
	for _, id := range ids {
		st.create(schedule("acme", id), 0)
	}
	st.create(schedule("a#b", "sch_x"), 0)
	st.create(schedule("globex", "sch_g"), 0)
	want := schedule("acme", "sch_a")
	want.Version = 1
	sameSchedule(t, "sch_a read back", st.get("acme", "sch_a"), want)
	bare := core.Schedule{ID: "sch_bare", Tenant: "acme", Agent: "demo", Request: json.RawMessage(`{}`), Cron: "rate(5 minutes)", Timezone: "UTC",
		Overlap: core.OverlapAllow, Missed: core.MissedSkip, Paused: true, CreatedAt: t0, UpdatedAt: t0}
	st.create(bare, 0)
	bare.Version = 1
	sameSchedule(t, "a schedule without options", st.get("acme", "sch_bare"), bare)
	if err := st.s.DeleteSchedule(st.ctx, "acme", "sch_bare"); err != nil {
		t.Fatal(err)
	}

	var pages [][]string
	cursor := ""
	for {
		list, next, err := st.s.ListSchedules(st.ctx, "acme", 2, cursor)
		if err != nil {
			t.Fatalf("list after %q: %v", cursor, err)
		}
		pages = append(pages, scheduleIDs(list))
		if next == "" {
			break
		}
		if len(pages) > 5 {
			t.Fatalf("pages go on: %v", pages)
		}
		cursor = next
	}
	if fmt.Sprint(pages) != "[[acme/sch_a acme/sch_b] [acme/sch_c acme/sch_d] [acme/sch_e]]" {
		t.Fatalf("acme's pages: %v", pages)
	}
	list, next, err := st.s.ListSchedules(st.ctx, "acme", 5, "")
	if err != nil || len(list) != 5 || next != "" {
		t.Fatalf("one full page: %v %q %v", scheduleIDs(list), next, err)
	}
	want = schedule("acme", "sch_e")
	want.Version = 1
	sameSchedule(t, "a listed schedule", list[4], want)
	for tenant, wantIDs := range map[string]string{"a#b": "[a#b/sch_x]", "a": "[]", "globex": "[globex/sch_g]"} {
		list, next, err := st.s.ListSchedules(st.ctx, tenant, 10, "")
		if err != nil || fmt.Sprint(scheduleIDs(list)) != wantIDs || next != "" {
			t.Fatalf("%s's schedules: %v %q %v", tenant, scheduleIDs(list), next, err)
		}
	}
	for _, bad := range []string{"not base64!", "AAAA", "//8"} {
		if _, _, err := st.s.ListSchedules(st.ctx, "acme", 2, bad); !errors.Is(err, core.ErrInvalidInput) {
			t.Fatalf("list with cursor %q: %v", bad, err)
		}
	}
	if _, _, err := st.s.ListSchedules(st.ctx, "acme", 0, ""); !errors.Is(err, core.ErrInvalidInput) {
		t.Fatalf("list with limit 0: %v", err)
	}

	// Another tenant reaches nothing.
	other := schedule("globex", "sch_a")
	other.Version = 2
	wantErr(t, "globex reads acme's", getErr(st, "globex", "sch_a"), core.ErrNotFound)
	wantErr(t, "globex updates acme's", st.s.UpdateSchedule(st.ctx, other), core.ErrNotFound)
	wantErr(t, "globex deletes acme's", st.s.DeleteSchedule(st.ctx, "globex", "sch_a"), core.ErrNotFound)
	wantErr(t, "a# reads a#b's", getErr(st, "a", "sch_x"), core.ErrNotFound)
	sameSchedule(t, "acme's after globex tried", st.get("acme", "sch_a"), func() core.Schedule { s := schedule("acme", "sch_a"); s.Version = 1; return s }())
	wantErr(t, "an unknown id", getErr(st, "acme", "sch_none"), core.ErrNotFound)
	wantErr(t, "an empty id", getErr(st, "acme", ""), core.ErrNotFound)

	// Ids are unique: the same tenant's or another's.
	wantErr(t, "create an existing id", st.s.CreateSchedule(st.ctx, schedule("acme", "sch_a"), 0), core.ErrConflict)
	wantErr(t, "create another tenant's id", st.s.CreateSchedule(st.ctx, schedule("globex", "sch_a"), 0), core.ErrConflict)
	huge := schedule("acme", "sch_huge")
	huge.Request = json.RawMessage(`{"messages":[{"role":"user","content":"` + strings.Repeat("x", core.MaxScheduleBytes) + `"}]}`)
	wantErr(t, "create a schedule over the size bound", st.s.CreateSchedule(st.ctx, huge, 0), core.ErrInvalidInput)
	wantErr(t, "a refused create stored nothing", getErr(st, "acme", "sch_huge"), core.ErrNotFound)
	huge.ID, huge.Version = "sch_a", 2
	wantErr(t, "update a schedule over the size bound", st.s.UpdateSchedule(st.ctx, huge), core.ErrInvalidInput)
	wantErr(t, "create an unencodable schedule", st.s.CreateSchedule(st.ctx, func() core.Schedule {
		s := schedule("acme", "sch_bad")
		s.Request = json.RawMessage(`{"unterminated`)
		return s
	}(), 0), core.ErrInvalidInput)
	wantErr(t, "create without an id", st.s.CreateSchedule(st.ctx, schedule("acme", ""), 0), core.ErrInvalidInput)
	wantErr(t, "create without a tenant", st.s.CreateSchedule(st.ctx, schedule("", "sch_q"), 0), core.ErrInvalidInput)

	if err := st.s.DeleteSchedule(st.ctx, "acme", "sch_c"); err != nil {
		t.Fatalf("delete: %v", err)
	}
	wantErr(t, "read a deleted schedule", getErr(st, "acme", "sch_c"), core.ErrNotFound)
	wantErr(t, "delete it again", st.s.DeleteSchedule(st.ctx, "acme", "sch_c"), core.ErrNotFound)
	if list, _, err := st.s.ListSchedules(st.ctx, "acme", 10, ""); err != nil || fmt.Sprint(scheduleIDs(list)) != "[acme/sch_a acme/sch_b acme/sch_d acme/sch_e]" {
		t.Fatalf("acme's after a delete: %v %v", scheduleIDs(list), err)
	}
	// A deleted id is free again, for another tenant too.
	st.create(schedule("globex", "sch_c"), 0)
	st.get("globex", "sch_c")
}

func getErr(st *schedTest, tenant, id string) error {
	_, err := st.s.GetSchedule(st.ctx, tenant, id)
	return err
}

// testSchedulesLimit: a create at the tenant's limit is refused with
// core.ErrScheduleLimit, other tenants are counted apart, a refused or
// conflicting create takes no place, a delete frees one, and a limit of
// 0 is none.
func testSchedulesLimit(t *testing.T, newStore func(*testing.T) Store) {
	st := newSchedTest(t, newStore)
	st.create(schedule("acme", "sch_1"), 2)
	wantErr(t, "a conflicting create", st.s.CreateSchedule(st.ctx, schedule("acme", "sch_1"), 2), core.ErrConflict)
	st.create(schedule("acme", "sch_2"), 2)
	for i := 0; i < 2; i++ {
		wantErr(t, "a create at the limit", st.s.CreateSchedule(st.ctx, schedule("acme", "sch_3"), 2), core.ErrScheduleLimit)
	}
	wantErr(t, "a refused create took no id", getErr(st, "acme", "sch_3"), core.ErrNotFound)
	st.create(schedule("globex", "sch_g1"), 2)
	st.create(schedule("globex", "sch_g2"), 2)
	if err := st.s.DeleteSchedule(st.ctx, "acme", "sch_1"); err != nil {
		t.Fatal(err)
	}
	st.create(schedule("acme", "sch_3"), 2)
	wantErr(t, "full again", st.s.CreateSchedule(st.ctx, schedule("acme", "sch_4"), 2), core.ErrScheduleLimit)
	st.create(schedule("acme", "sch_4"), 3)
	st.create(schedule("acme", "sch_5"), 0)
	st.create(schedule("acme", "sch_6"), -1)
	wantErr(t, "over a lower limit", st.s.CreateSchedule(st.ctx, schedule("acme", "sch_7"), 5), core.ErrScheduleLimit)
	list, _, err := st.s.ListSchedules(st.ctx, "acme", 10, "")
	if err != nil || fmt.Sprint(scheduleIDs(list)) != "[acme/sch_2 acme/sch_3 acme/sch_4 acme/sch_5 acme/sch_6]" {
		t.Fatalf("acme's: %v %v", scheduleIDs(list), err)
	}
}

// testSchedulesLimitConcurrent: creates racing for the last places of a
// limit never store more than it.
func testSchedulesLimitConcurrent(t *testing.T, newStore func(*testing.T) Store) {
	st := newSchedTest(t, newStore)
	const limit, writers = 3, 6
	st.create(schedule("acme", "sch_0"), limit)
	var wg sync.WaitGroup
	errs := make([]error, writers)
	for i := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = st.s.CreateSchedule(st.ctx, schedule("acme", fmt.Sprintf("sch_w%d", i)), limit)
		}()
	}
	wg.Wait()
	created := 0
	for i, err := range errs {
		switch {
		case err == nil:
			created++
		case !errors.Is(err, core.ErrScheduleLimit):
			t.Fatalf("writer %d: %v", i, err)
		}
	}
	list, _, err := st.s.ListSchedules(st.ctx, "acme", 10, "")
	if err != nil || created != limit-1 || len(list) != limit {
		t.Fatalf("%d racing creates stored, %d listed (%v), want %d: %v", created, len(list), scheduleIDs(list), limit, err)
	}
}

// testSchedulesUpdate: an update names the version it read plus one (a
// stale one is a conflict); it writes every field but the id, tenant,
// creation time and last run, the cursor included.
func testSchedulesUpdate(t *testing.T, newStore func(*testing.T) Store) {
	st := newSchedTest(t, newStore)
	st.create(schedule("acme", "sch_u"), 0)
	if _, stored, err := st.s.RecordTrigger(st.ctx, "acme", core.Trigger{ScheduleID: "sch_u", FireTime: t0.Add(2 * time.Hour),
		Outcome: core.TriggerStarted, RunID: "r-first", RecordedAt: t0.Add(2 * time.Hour)}); err != nil || !stored {
		t.Fatalf("record: %v %v", stored, err)
	}
	read := st.get("acme", "sch_u")
	if read.Version != 1 || read.LastRunID != "r-first" {
		t.Fatalf("before the update: version %d, last run %q", read.Version, read.LastRunID)
	}
	up := read
	up.Version = 2
	up.Cron, up.Timezone, up.Paused, up.Overlap = "*/15 * * * *", "America/New_York", true, core.OverlapAllow
	up.Request = json.RawMessage(`{"agent":"other","messages":[{"role":"user","content":"Go."}]}`)
	up.Agent, up.Start, up.End, up.At = "other", nil, nil, nil
	up.UpdatedAt, up.Cursor = t0.Add(3*time.Hour), t0.Add(3*time.Hour)
	up.Principal = &core.Principal{ActorID: "user_2", AuthSource: "token", Tenant: "acme"}
	up.LastRunID, up.CreatedAt, up.Tenant = "r-update", t0.Add(time.Minute), "acme"
	if err := st.s.UpdateSchedule(st.ctx, up); err != nil {
		t.Fatalf("update: %v", err)
	}
	want := up
	want.LastRunID, want.CreatedAt = "r-first", t0
	sameSchedule(t, "after the update", st.get("acme", "sch_u"), want)

	wantErr(t, "the same version again", st.s.UpdateSchedule(st.ctx, up), core.ErrConflict)
	stale := read
	stale.Version = 2
	wantErr(t, "an update from a stale read", st.s.UpdateSchedule(st.ctx, stale), core.ErrConflict)
	skip := up
	skip.Version = 4
	wantErr(t, "a version ahead", st.s.UpdateSchedule(st.ctx, skip), core.ErrConflict)
	sameSchedule(t, "after refused updates", st.get("acme", "sch_u"), want)
	next := up
	next.Version, next.Paused, next.Cursor = 3, false, t0.Add(time.Hour) // an update may set the cursor back
	if err := st.s.UpdateSchedule(st.ctx, next); err != nil {
		t.Fatalf("the next update: %v", err)
	}
	want = next
	want.LastRunID, want.CreatedAt = "r-first", t0
	sameSchedule(t, "after the next update", st.get("acme", "sch_u"), want)
	// A record of a fire time stored already still moves the cursor to
	// it (it finishes a record interrupted between its two writes).
	if _, stored, err := st.s.RecordTrigger(st.ctx, "acme", core.Trigger{ScheduleID: "sch_u", FireTime: t0.Add(2 * time.Hour),
		Outcome: core.TriggerStarted, RunID: "r-again", RecordedAt: t0.Add(4 * time.Hour)}); err != nil || stored {
		t.Fatalf("record again: %v %v", stored, err)
	}
	want.Cursor = t0.Add(2 * time.Hour)
	sameSchedule(t, "after a second record", st.get("acme", "sch_u"), want)

	none := schedule("acme", "sch_none")
	none.Version = 2
	wantErr(t, "update an unknown schedule", st.s.UpdateSchedule(st.ctx, none), core.ErrNotFound)
	if err := st.s.DeleteSchedule(st.ctx, "acme", "sch_u"); err != nil {
		t.Fatal(err)
	}
	next.Version = 4
	wantErr(t, "update a deleted schedule", st.s.UpdateSchedule(st.ctx, next), core.ErrNotFound)
}

func (st *schedTest) record(tenant string, tr core.Trigger) (core.Trigger, bool) {
	st.t.Helper()
	got, stored, err := st.s.RecordTrigger(st.ctx, tenant, tr)
	if err != nil {
		st.t.Fatalf("record %s at %s: %v", tr.ScheduleID, tr.FireTime, err)
	}
	return got, stored
}

func sameTrigger(t *testing.T, what string, got, want core.Trigger) {
	t.Helper()
	if got.ScheduleID != want.ScheduleID || !got.FireTime.Equal(want.FireTime) || got.Outcome != want.Outcome || got.RunID != want.RunID ||
		got.Reason != want.Reason || !got.RecordedAt.Equal(want.RecordedAt) {
		t.Fatalf("%s: got %+v, want %+v", what, got, want)
	}
}

// testTriggers: a fire time's trigger is stored once (a second record
// returns the first); the schedule's cursor follows the latest fire time
// recorded, and its last run the started trigger of that fire time only;
// triggers list latest first page by page, each schedule's apart.
func testTriggers(t *testing.T, newStore func(*testing.T) Store) {
	st := newSchedTest(t, newStore)
	st.create(schedule("acme", "sch_t"), 0)
	st.create(schedule("acme", "sch_other"), 0)
	at := func(h int) time.Time { return t0.Add(time.Duration(h) * time.Hour) }
	started := func(h int) core.Trigger {
		return core.Trigger{ScheduleID: "sch_t", FireTime: at(h), Outcome: core.TriggerStarted, RunID: core.ScheduledRunID("sch_t", at(h)),
			Reason: "", RecordedAt: at(h).Add(time.Second), ExpiresAt: at(h).Add(90 * 24 * time.Hour)}
	}
	cursor := func(wantAt time.Time, wantRun string) {
		t.Helper()
		sc := st.get("acme", "sch_t")
		if !sc.Cursor.Equal(wantAt) || sc.LastRunID != wantRun || sc.Version != 1 {
			t.Fatalf("schedule: cursor %s, last run %q, version %d; want %s, %q, 1", sc.Cursor, sc.LastRunID, sc.Version, wantAt, wantRun)
		}
	}

	first := started(1)
	got, stored := st.record("acme", first)
	if !stored {
		t.Fatal("the first record was not stored")
	}
	sameTrigger(t, "the first record", got, first)
	cursor(at(1), first.RunID)
	again := core.Trigger{ScheduleID: "sch_t", FireTime: at(1).In(time.FixedZone("X", 3600)), Outcome: core.TriggerSkipped,
		Reason: core.ReasonOverlap + ": r-x is running", RecordedAt: at(5)}
	if got, stored = st.record("acme", again); stored {
		t.Fatal("a second record of a fire time was stored")
	}
	sameTrigger(t, "the second record returns the first", got, first)
	cursor(at(1), first.RunID)

	skipped := core.Trigger{ScheduleID: "sch_t", FireTime: at(2), Outcome: core.TriggerSkipped, Reason: core.ReasonPaused + ": the schedule is paused", RecordedAt: at(2)}
	st.record("acme", skipped)
	cursor(at(2), first.RunID)
	late := started(0) // caught up after later fire times: the cursor stays
	late.Reason = core.ReasonCaughtUp + ": started late"
	st.record("acme", late)
	cursor(at(2), first.RunID)
	third := started(3)
	st.record("acme", third)
	cursor(at(3), third.RunID)
	failed := core.Trigger{ScheduleID: "sch_t", FireTime: at(4), Outcome: core.TriggerFailed, Reason: "unknown_agent: no agent demo", RecordedAt: at(4)}
	st.record("acme", failed)
	cursor(at(4), third.RunID)
	st.record("acme", core.Trigger{ScheduleID: "sch_other", FireTime: at(9), Outcome: core.TriggerStarted, RunID: "r-other", RecordedAt: at(9)})
	cursor(at(4), third.RunID)

	want := []core.Trigger{failed, third, skipped, first, late}
	var all []core.Trigger
	pageCursor := ""
	for pages := 0; ; pages++ {
		list, next, err := st.s.Triggers(st.ctx, "sch_t", 2, pageCursor)
		if err != nil || len(list) == 0 || len(list) > 2 || pages > 3 {
			t.Fatalf("page %d after %q: %d triggers, %v", pages, pageCursor, len(list), err)
		}
		all = append(all, list...)
		if next == "" {
			break
		}
		pageCursor = next
	}
	if len(all) != len(want) {
		t.Fatalf("%d triggers listed, want %d: %+v", len(all), len(want), all)
	}
	for i := range want {
		sameTrigger(t, fmt.Sprintf("trigger %d", i), all[i], want[i])
	}
	if list, next, err := st.s.Triggers(st.ctx, "sch_other", 10, ""); err != nil || len(list) != 1 || list[0].RunID != "r-other" || next != "" {
		t.Fatalf("another schedule's triggers: %+v %q %v", list, next, err)
	}
	for _, tr := range want {
		got, err := st.s.Trigger(st.ctx, "sch_t", tr.FireTime.In(time.FixedZone("Y", -5*3600)))
		if err != nil {
			t.Fatalf("read the trigger at %s: %v", tr.FireTime, err)
		}
		sameTrigger(t, "a trigger read", got, tr)
	}
	wantErr(t, "read a fire time without a trigger", triggerErr(st, "sch_t", at(8)), core.ErrNotFound)
	wantErr(t, "read another schedule's fire time", triggerErr(st, "sch_other", at(1)), core.ErrNotFound)
	wantErr(t, "read an unknown schedule's trigger", triggerErr(st, "sch_none", at(1)), core.ErrNotFound)
	wantErr(t, "read a trigger without a schedule id", triggerErr(st, "", at(1)), core.ErrNotFound)
	if list, next, err := st.s.Triggers(st.ctx, "", 10, ""); err != nil || len(list) != 0 || next != "" {
		t.Fatalf("the triggers of no schedule id: %+v %q %v", list, next, err)
	}
	if list, next, err := st.s.Triggers(st.ctx, "sch_none", 10, ""); err != nil || len(list) != 0 || next != "" {
		t.Fatalf("an unknown schedule's triggers: %+v %q %v", list, next, err)
	}
	for _, bad := range []string{"not base64!", "AAAA", core.EncodeScheduleCursor("sch_t")} {
		if _, _, err := st.s.Triggers(st.ctx, "sch_t", 2, bad); !errors.Is(err, core.ErrInvalidInput) {
			t.Fatalf("triggers after cursor %q: %v", bad, err)
		}
	}
	wantErr(t, "a trigger without a fire time", recordErr(st, "acme", core.Trigger{ScheduleID: "sch_t", Outcome: core.TriggerSkipped}), core.ErrInvalidInput)
	wantErr(t, "a trigger without a schedule", recordErr(st, "acme", core.Trigger{FireTime: at(7), Outcome: core.TriggerSkipped}), core.ErrInvalidInput)
}

func triggerErr(st *schedTest, id string, fire time.Time) error {
	_, err := st.s.Trigger(st.ctx, id, fire)
	return err
}

func recordErr(st *schedTest, tenant string, tr core.Trigger) error {
	_, _, err := st.s.RecordTrigger(st.ctx, tenant, tr)
	return err
}

// testTriggersConcurrent: records of one fire time racing store one, and
// every racer gets it back; the schedule's last run is the stored one's.
func testTriggersConcurrent(t *testing.T, newStore func(*testing.T) Store) {
	st := newSchedTest(t, newStore)
	st.create(schedule("acme", "sch_r"), 0)
	const racers = 6
	fire := t0.Add(time.Hour)
	var wg sync.WaitGroup
	got := make([]core.Trigger, racers)
	stored := make([]bool, racers)
	errs := make([]error, racers)
	for i := range racers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got[i], stored[i], errs[i] = st.s.RecordTrigger(st.ctx, "acme", core.Trigger{ScheduleID: "sch_r", FireTime: fire,
				Outcome: core.TriggerStarted, RunID: fmt.Sprintf("r-%d", i), RecordedAt: fire})
		}()
	}
	wg.Wait()
	winner := -1
	for i := range racers {
		if errs[i] != nil {
			t.Fatalf("racer %d: %v", i, errs[i])
		}
		if stored[i] {
			if winner >= 0 {
				t.Fatalf("racers %d and %d both stored", winner, i)
			}
			winner = i
		}
	}
	if winner < 0 {
		t.Fatal("no racer stored")
	}
	for i := range racers {
		if got[i].RunID != got[winner].RunID {
			t.Fatalf("racer %d got %q, the stored one is %q", i, got[i].RunID, got[winner].RunID)
		}
	}
	if sc := st.get("acme", "sch_r"); sc.LastRunID != got[winner].RunID || !sc.Cursor.Equal(fire) {
		t.Fatalf("schedule: last run %q, cursor %s; want %q, %s", sc.LastRunID, sc.Cursor, got[winner].RunID, fire)
	}
	if list, _, err := st.s.Triggers(st.ctx, "sch_r", 10, ""); err != nil || len(list) != 1 {
		t.Fatalf("triggers: %+v %v", list, err)
	}
}

// testTriggersDeletedSchedule: a trigger of a deleted schedule is stored
// alone (no error) and brings nothing back.
func testTriggersDeletedSchedule(t *testing.T, newStore func(*testing.T) Store) {
	st := newSchedTest(t, newStore)
	st.create(schedule("acme", "sch_d"), 1)
	fire := t0.Add(time.Hour)
	st.record("acme", core.Trigger{ScheduleID: "sch_d", FireTime: fire, Outcome: core.TriggerStarted, RunID: "r-1", RecordedAt: fire})
	if err := st.s.DeleteSchedule(st.ctx, "acme", "sch_d"); err != nil {
		t.Fatal(err)
	}
	late := core.Trigger{ScheduleID: "sch_d", FireTime: fire.Add(time.Hour), Outcome: core.TriggerStarted, RunID: "r-2", RecordedAt: fire.Add(time.Hour)}
	if _, stored := st.record("acme", late); !stored {
		t.Fatal("a deleted schedule's trigger was not stored")
	}
	wantErr(t, "the deleted schedule", getErr(st, "acme", "sch_d"), core.ErrNotFound)
	if list, _, err := st.s.ListSchedules(st.ctx, "acme", 10, ""); err != nil || len(list) != 0 {
		t.Fatalf("acme's schedules: %v %v", scheduleIDs(list), err)
	}
	if list, _, err := st.s.Triggers(st.ctx, "sch_d", 10, ""); err != nil || len(list) != 2 || list[0].RunID != "r-2" {
		t.Fatalf("the deleted schedule's triggers: %+v %v", list, err)
	}
	if got, err := st.s.Trigger(st.ctx, "sch_d", late.FireTime); err != nil || got.RunID != "r-2" {
		t.Fatalf("read the deleted schedule's trigger: %+v %v", got, err)
	}
	st.create(schedule("acme", "sch_d2"), 1) // the delete freed its place
}

// testAllSchedules: every tenant's schedules list page by page, each
// once, as stored; a deleted one leaves the list.
func testAllSchedules(t *testing.T, newStore func(*testing.T) Store) {
	st := newSchedTest(t, newStore)
	want := map[string]core.Schedule{}
	for _, tenant := range []string{"acme", "globex", "a#b", "a"} {
		for i := range 3 {
			sc := schedule(tenant, fmt.Sprintf("sch_%s_%d", map[string]string{"acme": "ac", "globex": "gl", "a#b": "ab", "a": "a"}[tenant], i))
			st.create(sc, 0)
			sc.Version = 1
			want[sc.Tenant+"/"+sc.ID] = sc
		}
	}
	all := func(limit int) (map[string]core.Schedule, int, error) {
		got := map[string]core.Schedule{}
		cursor, pages := "", 0
		for {
			list, next, err := st.s.AllSchedules(st.ctx, limit, cursor)
			if err != nil {
				return nil, 0, err
			}
			if len(list) > limit {
				return nil, 0, fmt.Errorf("a page of %d, limit %d", len(list), limit)
			}
			pages++
			for _, sc := range list {
				key := sc.Tenant + "/" + sc.ID
				if _, dup := got[key]; dup {
					return nil, 0, fmt.Errorf("%s listed twice", key)
				}
				got[key] = sc
			}
			if next == "" {
				return got, pages, nil
			}
			if pages > 20 {
				return nil, 0, errors.New("the pages go on")
			}
			cursor = next
		}
	}
	eventually(t, func() error {
		got, pages, err := all(5)
		if err != nil {
			return err
		}
		if len(got) != len(want) || pages < 3 {
			return fmt.Errorf("%d schedules in %d pages, want %d in 3 or more: %v", len(got), pages, len(want), slices.Sorted(maps.Keys(got)))
		}
		return nil
	})
	got, _, err := all(5)
	if err != nil {
		t.Fatal(err)
	}
	for key, sc := range want {
		sameSchedule(t, "listed "+key, got[key], sc)
	}
	if err := st.s.DeleteSchedule(st.ctx, "globex", "sch_gl_1"); err != nil {
		t.Fatal(err)
	}
	eventually(t, func() error {
		got, _, err := all(100)
		if err != nil {
			return err
		}
		if _, ok := got["globex/sch_gl_1"]; ok || len(got) != len(want)-1 {
			return fmt.Errorf("after a delete: %v", slices.Sorted(maps.Keys(got)))
		}
		return nil
	})
	for _, bad := range []string{"not base64!", "AAAA", core.EncodeScheduleCursor("no-separator")} {
		if _, _, err := st.s.AllSchedules(st.ctx, 5, bad); !errors.Is(err, core.ErrInvalidInput) {
			t.Fatalf("every schedule after cursor %q: %v", bad, err)
		}
	}
	if _, _, err := st.s.AllSchedules(st.ctx, 0, ""); !errors.Is(err, core.ErrInvalidInput) {
		t.Fatalf("every schedule with limit 0: %v", err)
	}
}
