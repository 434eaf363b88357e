package storetest

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/baton-agents/baton/core"
)

// listAll pages through a tenant's runs with page size limit and returns
// them in order, failing on a run listed twice.
func (h *harness) listAll(status core.RunStatus, limit int, between func(page int)) []core.RunSummary {
	h.t.Helper()
	var all []core.RunSummary
	seen := map[string]bool{}
	cursor := ""
	for page := 0; ; page++ {
		p, err := h.s.ListRuns(h.ctx, h.tenant, core.RunListQuery{Status: status, Limit: limit, Cursor: cursor})
		if err != nil {
			h.t.Fatalf("list runs (page %d): %v", page, err)
		}
		if len(p.Runs) > limit {
			h.t.Fatalf("page %d holds %d runs, limit %d", page, len(p.Runs), limit)
		}
		for _, r := range p.Runs {
			if seen[r.RunID] {
				h.t.Fatalf("run %s listed twice", r.RunID)
			}
			seen[r.RunID] = true
			all = append(all, r)
		}
		if p.Next == "" {
			return all
		}
		if page > 100 {
			h.t.Fatal("the list never ends")
		}
		cursor = p.Next
		if between != nil {
			between(page)
		}
	}
}

func runIDs(rs []core.RunSummary) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.RunID
	}
	return out
}

// testListRuns lists a tenant's runs newest first, page by page, without
// another tenant's runs, without duplicates when runs are created
// between pages, by status, and refuses a cursor it did not return.
func testListRuns(t *testing.T, newStore func(*testing.T) Store) {
	s := newStore(t)
	a := newHarness(t, s, "list-tenant-a")
	b := newHarness(t, s, "list-tenant-b")
	// Five runs of A, the last two created at the same instant (ordered
	// by run id), and B's runs in between.
	for i := 1; i <= 5; i++ {
		if i != 5 {
			a.clock.T = t0.Add(time.Duration(i) * time.Second)
		}
		a.mustStart(fmt.Sprintf("r-a%d", i), fmt.Sprintf("s-a%d", i), config(t, turn("Hello.")), nil, user("Hi")...)
		b.clock.T = a.clock.T
		b.mustStart(fmt.Sprintf("r-b%d", i), fmt.Sprintf("s-b%d", i), config(t, turn("Hello.")), nil, user("Hi")...)
	}
	a.drive("r-a2")
	want := []string{"r-a5", "r-a4", "r-a3", "r-a2", "r-a1"}
	for _, limit := range []int{1, 2, 5, 10} {
		got := runIDs(a.listAll("", limit, nil))
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("limit %d: runs %v, want %v", limit, got, want)
		}
	}
	first := a.listAll("", 10, nil)[0]
	if first.SessionID != "s-a5" || first.Status != core.StatusQueued || !first.CreatedAt.Equal(t0.Add(4*time.Second)) {
		t.Fatalf("entry %+v", first)
	}
	// Runs created while a client pages sort before its cursor: the
	// pages go on without repeating or skipping a run.
	got := runIDs(a.listAll("", 2, func(page int) {
		a.clock.T = t0.Add(time.Duration(10+page) * time.Second)
		a.mustStart(fmt.Sprintf("r-a-new%d", page), fmt.Sprintf("s-new%d", page), config(t, turn("Hello.")), nil, user("Hi")...)
	}))
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("runs created between pages: %v, want %v", got, want)
	}
	if got := runIDs(a.listAll(core.StatusCompleted, 1, nil)); fmt.Sprint(got) != "[r-a2]" {
		t.Fatalf("completed runs %v", got)
	}
	if got := runIDs(b.listAll(core.StatusCompleted, 3, nil)); len(got) != 0 {
		t.Fatalf("tenant B lists completed runs %v", got)
	}
	if got := runIDs(b.listAll("", 3, nil)); fmt.Sprint(got) != "[r-b5 r-b4 r-b3 r-b2 r-b1]" {
		t.Fatalf("tenant B's runs %v", got)
	}
	if got := runIDs(newHarness(t, s, "list-tenant").listAll("", 3, nil)); len(got) != 0 {
		t.Fatalf("a tenant whose name prefixes others lists %v", got)
	}
	stamp := "2026-01-01T00:00:00.000000000Z#"
	for _, c := range []string{"nope", core.EncodeRunCursor("garbage"),
		core.EncodeRunCursor(stamp + strings.Repeat("r", 1100)), // longer than DynamoDB's sort key
		core.EncodeRunCursor(stamp + "r-\xff\xfe"),              // not UTF-8
		core.EncodeRunCursor(stamp + "r-\x00a"),                 // NUL
		core.EncodeRunCursor(stamp + "r-\x1b[0m"),               // control bytes
		core.EncodeRunCursor(stamp + "r b"),
		core.EncodeRunCursor(stamp + "r#1")} {
		if _, err := s.ListRuns(a.ctx, a.tenant, core.RunListQuery{Limit: 2, Cursor: c}); !errors.Is(err, core.ErrInvalidInput) {
			t.Fatalf("cursor %q: %v, want ErrInvalidInput", c, err)
		}
	}
}

// testListEntries: a list entry says what the run was asked (its first
// user message, whitespace folded, cut at core.TitleRunes), its agent
// version, where it stands and what it took; the agent, time, top-level and parent filters
// keep the runs they name, and a child run names its parent.
func testListEntries(t *testing.T, newStore func(*testing.T) Store) {
	s := newStore(t)
	h := newHarness(t, s, "entries-tenant")
	long := strings.Repeat("é", core.TitleRunes+10)
	planCfg := config(t, turn("Planned."))
	planCfg.AgentVersion = "av_contract1"
	h.mustStart("r-plan", "s-plan", planCfg, nil, user("  Plan\n the   trip  ", "Second message")...)
	h.drive("r-plan")
	h.clock.T = t0.Add(time.Minute)
	child := config(t, turn("Researched."))
	child.Agent = "researcher"
	child.Parent = &core.ParentRef{RunID: "r-plan", ToolCallID: "call-1", RootRunID: "r-plan", Depth: 1}
	h.mustStart("r-child", "s-child", child, nil, user(long)...)
	h.clock.T = t0.Add(2 * time.Minute)
	late := config(t, turn("Later."))
	late.Schedule = &core.ScheduleRef{ID: "sch-1", FireTime: t0}
	h.mustStart("r-late", "s-late", late, nil, user("Later")...)

	list := func(q core.RunListQuery) []core.RunSummary {
		t.Helper()
		q.Limit = 10
		p, err := s.ListRuns(h.ctx, h.tenant, q)
		if err != nil {
			t.Fatalf("list %+v: %v", q, err)
		}
		return p.Runs
	}
	byID := map[string]core.RunSummary{}
	for _, r := range list(core.RunListQuery{}) {
		byID[r.RunID] = r
	}
	plan, kid := byID["r-plan"], byID["r-child"]
	if plan.Title != "Plan the trip" || plan.AgentVersion != "av_contract1" || plan.Status != core.StatusCompleted || plan.Turns != 1 || plan.TotalTokens != 15 ||
		plan.EndedAt == nil || plan.Parent != nil || plan.Reason != "" || plan.UpdatedAt.IsZero() {
		t.Fatalf("the completed run's entry %+v", plan)
	}
	if kid.Title != strings.Repeat("é", core.TitleRunes)+"…" || kid.Agent != "researcher" || kid.AgentVersion != "" || kid.EndedAt != nil || kid.Turns != 0 ||
		kid.Parent == nil || *kid.Parent != *child.Parent {
		t.Fatalf("the child run's entry %+v", kid)
	}
	if byID["r-late"].ScheduleID != "sch-1" || plan.ScheduleID != "" {
		t.Fatalf("a scheduled run's entry %+v", byID["r-late"])
	}
	for _, tc := range []struct {
		q    core.RunListQuery
		want string
	}{
		{core.RunListQuery{Agent: "researcher"}, "[r-child]"},
		{core.RunListQuery{Agent: "contract"}, "[r-late r-plan]"},
		{core.RunListQuery{TopLevel: true}, "[r-late r-plan]"},
		{core.RunListQuery{Parent: "r-plan"}, "[r-child]"},
		{core.RunListQuery{Parent: "r-late"}, "[]"},
		{core.RunListQuery{Since: t0.Add(time.Minute)}, "[r-late r-child]"},
		{core.RunListQuery{Until: t0.Add(time.Minute)}, "[r-plan]"},
		{core.RunListQuery{Since: t0.Add(time.Minute), Until: t0.Add(2 * time.Minute)}, "[r-child]"},
		{core.RunListQuery{Since: t0.Add(time.Hour)}, "[]"},
		{core.RunListQuery{TopLevel: true, Status: core.StatusQueued}, "[r-late]"},
	} {
		if got := fmt.Sprint(runIDs(list(tc.q))); got != tc.want {
			t.Errorf("%+v: %s, want %s", tc.q, got, tc.want)
		}
	}
	// A cursor and an end: the earlier of the two bounds the page.
	first, err := s.ListRuns(h.ctx, h.tenant, core.RunListQuery{Limit: 1})
	if err != nil || fmt.Sprint(runIDs(first.Runs)) != "[r-late]" || first.Next == "" {
		t.Fatalf("the first page of one: %+v, %v", first, err)
	}
	for _, tc := range []struct {
		until time.Time
		want  string
	}{{t0.Add(time.Minute), "[r-plan]"}, {t0.Add(time.Hour), "[r-child r-plan]"}} {
		p, err := s.ListRuns(h.ctx, h.tenant, core.RunListQuery{Limit: 10, Cursor: first.Next, Until: tc.until})
		if got := fmt.Sprint(runIDs(p.Runs)); err != nil || got != tc.want {
			t.Errorf("after the first page, until %s: %s, %v; want %s", tc.until, got, err, tc.want)
		}
	}
	// A filter that keeps few runs still pages without repeats.
	var paged []string
	cursor := ""
	for page := 0; page < 10; page++ {
		p, err := s.ListRuns(h.ctx, h.tenant, core.RunListQuery{TopLevel: true, Limit: 1, Cursor: cursor})
		if err != nil {
			t.Fatal(err)
		}
		paged = append(paged, runIDs(p.Runs)...)
		if cursor = p.Next; cursor == "" {
			break
		}
	}
	if fmt.Sprint(paged) != "[r-late r-plan]" {
		t.Fatalf("top-level runs one per page: %v", paged)
	}
}
