package storetest

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/baton-agents/baton/core"
)

// pageCase is one reader query; the reference filter gives its answer.
type pageCase struct {
	after, before int64
	limit         int
}

var pageCases = []pageCase{
	{0, 0, 0}, {0, 100, 0}, {2, 0, 0}, {0, 4, 0}, {1, 6, 2}, {0, 0, 3}, {4, 0, 10},
	{0, 0, 1}, {6, 0, 0}, {3, 4, 0}, {3, 3, 0}, {5, 2, 0}, {-1, 0, 2}, {100, 0, 0},
}

// window is the reference reading of (after, before, limit) over the
// committed seqs 1..last.
func window(pc pageCase, last int64) []int64 {
	var out []int64
	hi := pc.before
	if hi <= 0 || hi > last+1 {
		hi = last + 1
	}
	for seq := max(pc.after+1, 1); seq < hi; seq++ {
		if pc.limit > 0 && len(out) >= pc.limit {
			break
		}
		out = append(out, seq)
	}
	return out
}

// pages runs every page case: read must return the window of all, the
// records of seqs 1..last in order, that the case selects.
func pages[T any](t *testing.T, all []T, last int64, same func(t *testing.T, got, want []T), read func(pageCase) []T) {
	t.Helper()
	for _, pc := range pageCases {
		t.Run(fmt.Sprintf("after=%d,before=%d,limit=%d", pc.after, pc.before, pc.limit), func(t *testing.T) {
			var want []T
			for _, seq := range window(pc, last) {
				want = append(want, all[seq-1])
			}
			same(t, read(pc), want)
		})
	}
}

func testMessagesPaging(t *testing.T, newStore func(*testing.T) Store) {
	s := newStore(t)
	h := newHarness(t, s, "tenant-a")
	first := h.mustStart("r-1", "s-1", config(t, turn("Looking.", call("call_1", "ability/echo", map[string]any{"q": "a"})), turn("Done.")), nil,
		user("m1", "m2", "m3")...)
	all := append(first.Messages, allMessages(h.drive("r-1")...)...)
	last := all[len(all)-1].Seq
	if last < 7 {
		t.Fatalf("session has %d messages", last)
	}
	pages(t, all, last, sameMessages, func(pc pageCase) []core.Message { return h.messages("s-1", pc.after, pc.before, pc.limit) })
	t.Run("page through", func(t *testing.T) {
		var got []core.Message
		for next := int64(0); ; {
			page := h.messages("s-1", next, 0, 2)
			if len(page) == 0 {
				break
			}
			got = append(got, page...)
			next = page[len(page)-1].Seq
		}
		sameMessages(t, got, all)
	})
	t.Run("unknown session", func(t *testing.T) {
		if got := h.messages("s-unknown", 0, 0, 0); len(got) != 0 {
			t.Fatalf("got %d messages", len(got))
		}
	})
}

func testEventsPaging(t *testing.T, newStore func(*testing.T) Store) {
	s := newStore(t)
	h := newHarness(t, s, "tenant-a")
	first := h.mustStart("r-1", "s-1", config(t, turn("Looking.", call("call_1", "ability/echo", map[string]any{"q": "a"})), turn("Done.")), nil, user("Hi")...)
	all := append(first.Events, allEvents(h.drive("r-1")...)...)
	last := all[len(all)-1].Seq
	if last < 6 {
		t.Fatalf("run has %d events", last)
	}
	pages(t, all, last, sameEvents, func(pc pageCase) []core.Event { return h.events("r-1", pc.after, pc.before, pc.limit) })
	t.Run("unknown run", func(t *testing.T) {
		if got := h.events("r-unknown", 0, 0, 0); len(got) != 0 {
			t.Fatalf("got %d events", len(got))
		}
	})
}

func testToolRecords(t *testing.T, newStore func(*testing.T) Store) {
	s := newStore(t)
	h := newHarness(t, s, "tenant-a")
	first := h.mustStart("r-1", "s-1", config(t,
		turn("", call("call_1", "ability/echo", map[string]any{"q": "a"}), call("call_2", "ability/echo", map[string]any{"q": "b", "api_token": "secret"})),
		turn("", call("call_3", "ability/echo", map[string]any{"q": "c"})),
		turn("Done.")), nil, user("Hi")...)
	outs := append([]core.Output{first}, h.drive("r-1")...)
	var results []core.ToolExecutionResult
	var audit []core.AuditEvent
	for _, o := range outs {
		results = append(results, o.ToolResults...)
		audit = append(audit, o.Audit...)
	}
	if len(results) != 3 || len(audit) != 3 {
		t.Fatalf("run recorded %d results and %d audit events", len(results), len(audit))
	}
	msgs := allMessages(outs...)
	for _, r := range results {
		i := slices.IndexFunc(msgs, func(m core.Message) bool { return m.Seq == r.Seq })
		if i < 0 || msgs[i].Role != core.RoleToolResult || msgs[i].ToolCallID() != r.ToolCallID {
			t.Fatalf("result of %s has seq %d, which is not its tool_result message", r.ToolCallID, r.Seq)
		}
	}
	st := h.load("r-1")
	for _, before := range []int64{0, st.NextMsgSeq, results[2].Seq + 1, results[2].Seq, results[1].Seq, results[0].Seq + 1, results[0].Seq, 1} {
		t.Run(fmt.Sprintf("before=%d", before), func(t *testing.T) {
			gotR, gotA, err := s.ToolRecords(h.ctx, "r-1", before)
			if err != nil {
				t.Fatal(err)
			}
			var wantR []core.ToolExecutionResult
			var wantA []core.AuditEvent
			for i := range results {
				if before <= 0 || results[i].Seq < before {
					wantR = append(wantR, results[i])
					wantA = append(wantA, audit[i])
				}
			}
			if len(gotR) != len(wantR) || len(gotA) != len(wantA) {
				t.Fatalf("got %d results and %d audit events, want %d and %d", len(gotR), len(gotA), len(wantR), len(wantA))
			}
			for i := range wantR {
				if gotR[i].Seq != wantR[i].Seq || canonical(t, gotR[i]) != canonical(t, wantR[i]) {
					t.Fatalf("result %d: got seq %d %s, want seq %d %s", i, gotR[i].Seq, canonical(t, gotR[i]), wantR[i].Seq, canonical(t, wantR[i]))
				}
				if gotA[i].Seq != wantA[i].Seq || canonical(t, gotA[i]) != canonical(t, wantA[i]) {
					t.Fatalf("audit %d: got seq %d %s, want seq %d %s", i, gotA[i].Seq, canonical(t, gotA[i]), wantA[i].Seq, canonical(t, wantA[i]))
				}
			}
		})
	}
	gotR, gotA, err := s.ToolRecords(h.ctx, "r-unknown", 0)
	if err != nil || len(gotR) != 0 || len(gotA) != 0 {
		t.Fatalf("unknown run: %d results, %d audit events, %v", len(gotR), len(gotA), err)
	}
}

func testPendingItem(t *testing.T, newStore func(*testing.T) Store) {
	s := newStore(t)
	email := func(t *testing.T) core.RunConfig {
		cfg := config(t, turn("", call("call_1", "ability/send", map[string]any{"q": "hi"})), turn("Done."))
		cfg.Tools = append(cfg.Tools, serverTool(t, "ability/send", map[string]any{"action_policy": "preview"}))
		return cfg
	}
	calendar := func(t *testing.T) core.RunConfig {
		return config(t, turn("", call("call_1", "client/get_calendar", map[string]any{"day": "monday"})), turn("Done."))
	}
	cases := []struct {
		name       string
		cfg        func(t *testing.T) core.RunConfig
		kind       string
		answer     func(h *harness, id string) core.Input
		wantStatus string
	}{
		{"client request answered", calendar, core.PendingToolRequestKind,
			func(_ *harness, id string) core.Input {
				return core.ClientResult{RequestID: id, Success: true, Result: map[string]any{"free": true}}
			}, core.PendingResolved},
		{"client request expired", calendar, core.PendingToolRequestKind,
			func(h *harness, _ string) core.Input { h.clock.T = h.clock.T.Add(25 * time.Hour); return core.Expire{} }, core.PendingExpired},
		{"action rejected", email, core.PendingActionKind,
			func(_ *harness, id string) core.Input {
				return core.ApprovalDecision{ActionID: id, Decision: "reject", Reason: "no"}
			}, core.PendingResolved},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, s, "tenant-a")
			runID := fmt.Sprintf("r-%d", i)
			h.mustStart(runID, fmt.Sprintf("s-%d", i), tc.cfg(t), []any{clientTool("client/get_calendar")}, user("Hi")...)
			h.drive(runID)
			st := h.load(runID)
			reqs, acts := st.Pending()
			var want core.PendingItem
			switch {
			case tc.kind == core.PendingToolRequestKind && len(reqs) == 1:
				want = core.PendingItem{RunID: runID, ID: reqs[0].RequestID, Kind: tc.kind, ToolCallID: "call_1", Status: core.PendingOpen, ExpiresAt: reqs[0].ExpiresAt}
			case tc.kind == core.PendingActionKind && len(acts) == 1:
				want = core.PendingItem{RunID: runID, ID: acts[0].ActionID, Kind: tc.kind, ToolCallID: "call_1", Status: core.PendingOpen, ExpiresAt: acts[0].ExpiresAt}
			default:
				t.Fatalf("run is %s with %d requests and %d actions", st.Status, len(reqs), len(acts))
			}
			samePending(t, h, runID, want)
			_, err := s.PendingItem(h.ctx, runID, "unknown")
			wantErr(t, "unknown pending id", err, core.ErrNotFound)
			_, err = s.PendingItem(h.ctx, "r-other", want.ID)
			wantErr(t, "pending id of another run", err, core.ErrNotFound)
			h.resume(runID, tc.answer(h, want.ID))
			want.Status = tc.wantStatus
			samePending(t, h, runID, want)
		})
	}
}

func samePending(t *testing.T, h *harness, runID string, want core.PendingItem) {
	t.Helper()
	got, err := h.s.PendingItem(h.ctx, runID, want.ID)
	if err != nil {
		t.Fatalf("pending item %s: %v", want.ID, err)
	}
	if !got.ExpiresAt.Equal(want.ExpiresAt) {
		t.Fatalf("pending item expires at %s, want %s", got.ExpiresAt, want.ExpiresAt)
	}
	got.ExpiresAt = want.ExpiresAt
	if got != want {
		t.Fatalf("pending item: got %+v, want %+v", got, want)
	}
}

func testDueRuns(t *testing.T, newStore func(*testing.T) Store) {
	s := newStore(t)
	h := newHarness(t, s, "tenant-a")
	// Runs started at t0+offset are due at t0+offset+stallAfter.
	starts := []struct {
		run    string
		offset time.Duration
	}{
		{"r-3b", 20 * time.Second}, {"r-1", 0}, {"r-3a", 20 * time.Second}, {"r-2", 10 * time.Second}, {"r-4", time.Hour},
	}
	for i, st := range starts {
		h.clock.T = t0.Add(st.offset)
		h.mustStart(st.run, fmt.Sprintf("s-%d", i), config(t, turn("Hello.")), nil, user("Hi")...)
	}
	// A run whose write has no DueAt is never due.
	head := h.head("s-never")
	never := h.startOutput(head, "r-never", "s-never", config(t, turn("Hello.")), nil, user("Hi"))
	w := h.write(core.RunState{}, never)
	w.DueAt = nil
	if err := s.CreateRun(h.ctx, head, w); err != nil {
		t.Fatal(err)
	}
	// A store never aliases the caller's DueAt.
	head = h.head("s-alias")
	alias := h.startOutput(head, "r-alias", "s-alias", config(t, turn("Hello.")), nil, user("Hi"))
	w = h.write(core.RunState{}, alias)
	far := t0.Add(48 * time.Hour)
	w.DueAt = &far
	if err := s.CreateRun(h.ctx, head, w); err != nil {
		t.Fatal(err)
	}
	far = t0.Add(-time.Hour)

	due := func(now time.Duration, limit int, want ...string) func() error {
		return func() error {
			got, err := s.DueRuns(h.ctx, t0.Add(now), limit)
			if err != nil {
				return err
			}
			if !slices.Equal(got, want) && !(len(got) == 0 && len(want) == 0) {
				return fmt.Errorf("DueRuns(t0+%s, %d) = %v, want %v", now, limit, got, want)
			}
			return nil
		}
	}
	eventually(t, due(0, 0))
	eventually(t, due(stallAfter-time.Nanosecond, 0))
	eventually(t, due(stallAfter, 0, "r-1"))
	eventually(t, due(stallAfter+20*time.Second, 0, "r-1", "r-2", "r-3a", "r-3b"))
	eventually(t, due(stallAfter+20*time.Second, 2, "r-1", "r-2"))
	eventually(t, due(stallAfter+20*time.Second, 3, "r-1", "r-2", "r-3a"))
	eventually(t, due(24*time.Hour, 0, "r-1", "r-2", "r-3a", "r-3b", "r-4"))
	eventually(t, due(72*time.Hour, 0, "r-1", "r-2", "r-3a", "r-3b", "r-4", "r-alias"))

	// Finishing r-1 removes it; a step of r-2 moves its DueAt past r-4's.
	h.clock.T = t0.Add(2 * time.Hour)
	h.drive("r-1")
	eventually(t, due(stallAfter+20*time.Second, 0, "r-2", "r-3a", "r-3b"))
	h.resume("r-2", core.Steer{Content: "later"})
	eventually(t, due(72*time.Hour, 0, "r-3a", "r-3b", "r-4", "r-2", "r-alias"))
	eventually(t, due(72*time.Hour, 1, "r-3a"))
}
