package storetest

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/baton-agents/baton/core"
)

// RunContract runs the storage contract against stores made by newStore.
// Each subtest runs in parallel on its own fresh store, so newStore must
// be safe to call from several goroutines.
func RunContract(t *testing.T, newStore func(t *testing.T) Store) {
	tests := []struct {
		name string
		run  func(t *testing.T, newStore func(*testing.T) Store)
	}{
		{"SessionHead/missing", testSessionHeadMissing},
		{"CreateRun/new_session", testCreateRunNewSession},
		{"CreateRun/fork_session_base", testForkSessionBase},
		{"CreateRun/lock_held", testCreateRunLockHeld},
		{"CreateRun/stale_head", testCreateRunStaleHead},
		{"CreateRun/duplicate_run_id", testCreateRunDuplicateID},
		{"CreateRun/concurrent", func(t *testing.T, newStore func(*testing.T) Store) { testCreateRunConcurrent(t, newStore(t), 2) }},
		{"CreateRun/concurrent_large", func(t *testing.T, newStore func(*testing.T) Store) { testCreateRunConcurrent(t, newStore(t), 120) }},
		{"CreateRun/large_write", testCreateRunLarge},
		{"LoadRun/unknown", testLoadRunUnknown},
		{"Commit/advances_run", testCommitAdvances},
		{"Commit/wrong_prev_version", testCommitWrongVersion},
		{"Commit/stale_writer", testCommitStaleWriter},
		{"Commit/unknown_run", testCommitUnknownRun},
		{"Commit/unencodable_write", testUnencodableWrite},
		{"Commit/terminal_releases_lock", testCommitReleasesLock},
		{"Commit/large_write", testCommitLarge},
		{"Commit/concurrent", func(t *testing.T, newStore func(*testing.T) Store) { testCommitConcurrent(t, newStore(t), 0) }},
		{"Commit/concurrent_large", func(t *testing.T, newStore func(*testing.T) Store) { testCommitConcurrent(t, newStore(t), 120) }},
		{"Sessions/tenant_scoped", testTenantScoped},
		{"Messages/paging", testMessagesPaging},
		{"Events/paging", testEventsPaging},
		{"ToolRecords/by_seq", testToolRecords},
		{"PendingItem/read_back", testPendingItem},
		{"DueRuns/order_limit_removal", testDueRuns},
		{"Outbox/commit_list_mark", testOutbox},
		{"Outbox/many_in_one_commit", testOutboxMany},
		{"Outbox/update_fail", testOutboxUpdate},
		{"Commit/after_finish", testCommitAfterFinish},
		{"ClaimIntent/lease", testClaimIntent},
		{"SettleIntent/sent_or_forgotten", testSettleIntent},
		{"Idempotency/begin_finish", testIdempotency},
		{"Idempotency/abort", testIdempotencyAbort},
		{"Tokens/put_lookup", testTokens},
		{"Deltas/order_replace_expiry", testDeltas},
		{"Deliveries/sums", testDeliveries},
		{"Numbers/exact", testNumbers},
		{"LargeMessage/round_trip", testLargeMessage},
		{"ListRuns/newest_first_paged", testListRuns},
		{"ListRuns/entries_and_filters", testListEntries},
		{"Limits/active_runs", testActiveRuns},
		{"Limits/token_bucket", testTokenBucket},
		{"Limits/token_bucket_concurrent", testTokenBucketConcurrent},
		{"AgentVersions/put_get_list", testAgentVersions},
		{"AgentVersions/too_large", testAgentVersionTooLarge},
		{"AgentAliases/revisions_audit", testAgentAliases},
		{"AgentAliases/concurrent", testAgentAliasesConcurrent},
		{"Evals/create_list_cancel_results", testEvals},
		{"Memories/round_trip_paging", testMemoriesRoundTrip},
		{"Memories/replace_delete", testMemoriesReplaceDelete},
		{"Memories/scopes", testMemoriesScopes},
		{"Memories/once", testMemoriesOnce},
		{"Memories/erase", testMemoriesErase},
		{"Memories/invalid", testMemoriesInvalid},
		{"Memories/concurrent", testMemoriesConcurrent},
		{"Schedules/create_get_list", testSchedulesCRUD},
		{"Schedules/limit", testSchedulesLimit},
		{"Schedules/limit_concurrent", testSchedulesLimitConcurrent},
		{"Schedules/update", testSchedulesUpdate},
		{"Schedules/all_tenants", testAllSchedules},
		{"Triggers/record_cursor_paging", testTriggers},
		{"Triggers/concurrent", testTriggersConcurrent},
		{"Triggers/deleted_schedule", testTriggersDeletedSchedule},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.run(t, newStore)
		})
	}
}

func wantErr(t *testing.T, what string, err, target error) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Fatalf("%s: got error %v, want %v", what, err, target)
	}
}

func wantHead(t *testing.T, got, want core.SessionHead) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("session head: got %+v, want %+v", got, want)
	}
}

func testSessionHeadMissing(t *testing.T, newStore func(*testing.T) Store) {
	s := newStore(t)
	h := newHarness(t, s, "tenant-a")
	head := h.head("s-missing")
	if head.Exists || head.ActiveRun != "" {
		t.Fatalf("missing session: got %+v, want Exists false and no active run", head)
	}
}

func testCreateRunNewSession(t *testing.T, newStore func(*testing.T) Store) {
	s := newStore(t)
	h := newHarness(t, s, "tenant-a")
	out := h.mustStart("r-1", "s-1", config(t, turn("Hello.")), nil, user("Hi", "Plan my week")...)
	wantHead(t, h.head("s-1"), core.SessionHead{Exists: true, NextSeq: out.State.NextMsgSeq, ActiveRun: "r-1"})
	rec := h.record("r-1")
	if rec.Tenant != "tenant-a" {
		t.Fatalf("tenant: got %q, want tenant-a", rec.Tenant)
	}
	sameState(t, rec.State, out.State)
	sameMessages(t, h.messages("s-1", 0, out.State.NextMsgSeq, 0), out.Messages)
	sameEvents(t, h.events("r-1", 0, out.State.NextEventSeq, 0), out.Events)
	if len(out.Messages) != 2 || out.Messages[0].Seq != 1 {
		t.Fatalf("start wrote %v", seqs(out.Messages))
	}
}

// testForkSessionBase: a fork's first run creates its session with the
// transcript base (where its shared prefix is) and messages from the fork
// point on; the head keeps the base for the session's later runs, and the
// session's own messages are only those from the fork point on.
func testForkSessionBase(t *testing.T, newStore func(*testing.T) Store) {
	s := newStore(t)
	h := newHarness(t, s, "tenant-a")
	src := h.mustStart("r-1", "s-1", config(t, turn("Hello.")), nil, user("Hi", "Plan my week", "Thanks")...)
	h.drive("r-1")
	base := core.ForkBase(nil, "s-1", 3)
	cfg := config(t, turn("Forked."))
	cfg.ForkedFrom = &core.ForkRef{RunID: "r-1", Seq: 3, Tools: core.ForkToolsReuse}
	head := core.SessionHead{NextSeq: 3}
	out, err := h.m.Start(h.ctx, core.StartInput{RunID: "r-2", SessionID: "s-2", Config: cfg, Messages: user("Plan my month"), FirstSeq: 3})
	if err != nil {
		t.Fatal(err)
	}
	out.State.Base = base
	if err := h.s.CreateRun(h.ctx, head, h.write(core.RunState{}, out)); err != nil {
		t.Fatal(err)
	}
	wantHead(t, h.head("s-2"), core.SessionHead{Exists: true, NextSeq: 4, ActiveRun: "r-2", Base: base})
	if st := h.load("r-2"); !reflect.DeepEqual(st.Base, base) || st.FirstMsgSeq != 3 || *st.Config.ForkedFrom != *cfg.ForkedFrom {
		t.Fatalf("fork state: base %v first %d forked_from %+v", st.Base, st.FirstMsgSeq, st.Config.ForkedFrom)
	}
	if got := h.messages("s-2", 0, 100, 0); len(got) != 1 || got[0].Seq != 3 || got[0].Content != "Plan my month" {
		t.Fatalf("fork session's own messages: %+v", got)
	}
	if got := h.messages("s-1", 0, src.State.NextMsgSeq, 0); len(got) != 3 {
		t.Fatalf("the source session: %d messages", len(got))
	}
	h.drive("r-2")
	next := h.mustStart("r-3", "s-2", config(t, turn("Again.")), nil, user("More")...)
	if next.State.FirstMsgSeq != 5 {
		t.Fatalf("the session's next run starts at %d", next.State.FirstMsgSeq)
	}
	if got := h.head("s-2"); !reflect.DeepEqual(got.Base, base) {
		t.Fatalf("the head lost its base after a second run: %+v", got)
	}
}

func testCreateRunLockHeld(t *testing.T, newStore func(*testing.T) Store) {
	cases := []struct {
		name    string
		prepare func(h *harness, session string)
	}{
		{"queued run", func(h *harness, session string) {
			h.mustStart("r-1", session, config(t, turn("Hello.")), nil, user("Hi")...)
		}},
		{"paused run", func(h *harness, session string) {
			h.mustStart("r-1", session, config(t, turn("", call("call_1", "client/get_calendar", map[string]any{"day": "monday"}))),
				[]any{clientTool("client/get_calendar")}, user("Hi")...)
			h.drive("r-1")
			if st := h.load("r-1"); st.Status != core.StatusRuntimeToolPending {
				t.Fatalf("status %s, want %s", st.Status, core.StatusRuntimeToolPending)
			}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := newStore(t)
			h := newHarness(t, s, "tenant-"+tc.name)
			tc.prepare(h, "s-1")
			head := h.head("s-1")
			before := h.messages("s-1", 0, head.NextSeq, 0)
			_, err := h.start("r-2", "s-1", config(t, turn("Second.")), nil, user("Again")...)
			wantErr(t, "second run on a locked session", err, core.ErrLockHeld)
			_, err = s.LoadRun(h.ctx, "r-2")
			wantErr(t, "load refused run", err, core.ErrNotFound)
			wantHead(t, h.head("s-1"), head)
			sameMessages(t, h.messages("s-1", 0, 0, 0), before)
		})
	}
}

func testCreateRunStaleHead(t *testing.T, newStore func(*testing.T) Store) {
	s := newStore(t)
	h := newHarness(t, s, "tenant-a")
	h.mustStart("r-1", "s-1", config(t, turn("Hello.")), nil, user("Hi")...)
	h.drive("r-1")
	head := h.head("s-1")
	if head.ActiveRun != "" || head.NextSeq != 3 {
		t.Fatalf("finished session: %+v", head)
	}
	msgs := h.messages("s-1", 0, 0, 0)
	cases := []struct {
		name    string
		session string
		head    core.SessionHead
	}{
		{"session created since read", "s-1", core.SessionHead{NextSeq: 1}},
		{"session advanced since read", "s-1", core.SessionHead{Exists: true, NextSeq: 2}},
		{"head from the future", "s-1", core.SessionHead{Exists: true, NextSeq: 9}},
		{"session does not exist", "s-new", core.SessionHead{Exists: true, NextSeq: 3}},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			runID := fmt.Sprintf("r-stale-%d", i)
			out := h.startOutput(tc.head, runID, tc.session, config(t, turn("Late.")), nil, user("Late"))
			err := s.CreateRun(h.ctx, tc.head, h.write(core.RunState{}, out))
			wantErr(t, "create from a stale head", err, core.ErrConflict)
			_, err = s.LoadRun(h.ctx, runID)
			wantErr(t, "load refused run", err, core.ErrNotFound)
		})
	}
	wantHead(t, h.head("s-1"), head)
	sameMessages(t, h.messages("s-1", 0, 0, 0), msgs)
	if got := h.head("s-new"); got.Exists {
		t.Fatalf("refused run created session s-new: %+v", got)
	}
}

func testCreateRunDuplicateID(t *testing.T, newStore func(*testing.T) Store) {
	s := newStore(t)
	h := newHarness(t, s, "tenant-a")
	first := h.mustStart("r-1", "s-1", config(t, turn("Hello.")), nil, user("Hi")...)
	cases := []struct {
		name    string
		tenant  string
		session string
	}{
		{"same tenant, other session", "tenant-a", "s-2"},
		{"other tenant", "tenant-b", "s-1"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			o := newHarness(t, s, tc.tenant)
			o.clock.T = t0.Add(time.Minute)
			_, err := o.start("r-1", tc.session, config(t, turn("Other.")), nil, user("Other", "run", "with", "more", "messages")...)
			wantErr(t, "duplicate run id", err, core.ErrConflict)
			if tc.session != "s-1" || tc.tenant != "tenant-a" {
				if got := o.head(tc.session); got.Exists {
					t.Fatalf("refused run created its session: %+v", got)
				}
			}
		})
	}
	rec := h.record("r-1")
	if rec.Tenant != "tenant-a" {
		t.Fatalf("tenant changed to %q", rec.Tenant)
	}
	sameState(t, rec.State, first.State)
	sameEvents(t, h.events("r-1", 0, 0, 0), first.Events)
	sameMessages(t, h.messages("s-1", 0, 0, 0), first.Messages)
}

// testCreateRunConcurrent creates eight runs with msgs messages each on
// one new session at once: exactly one is created, and the transcript is
// its own.
func testCreateRunConcurrent(t *testing.T, s Store, msgs int) {
	const writers = 8
	h := newHarness(t, s, "tenant-a")
	head := h.head("s-1")
	outs := make([]core.Output, writers)
	for i := range outs {
		contents := make([]string, msgs)
		for j := range contents {
			contents[j] = fmt.Sprintf("writer %d, message %d", i, j)
		}
		outs[i] = h.startOutput(head, fmt.Sprintf("r-%d", i), "s-1", config(t, turn("Hello.")), nil, user(contents...))
	}
	winner := race(t, "create a run on one session", writers, func(i int) error {
		return s.CreateRun(h.ctx, head, h.write(core.RunState{}, outs[i]))
	}, core.ErrConflict, core.ErrLockHeld)
	want := outs[winner]
	wantHead(t, h.head("s-1"), core.SessionHead{Exists: true, NextSeq: want.State.NextMsgSeq, ActiveRun: want.State.RunID})
	sameMessages(t, h.messages("s-1", 0, 0, 0), want.Messages)
	sameEvents(t, h.events(want.State.RunID, 0, 0, 0), want.Events)
	for i := range outs {
		if i == winner {
			continue
		}
		_, err := s.LoadRun(h.ctx, outs[i].State.RunID)
		wantErr(t, "load losing run", err, core.ErrNotFound)
	}
}

// race calls write(0) to write(n-1) at once: exactly one call must
// succeed, and every other fail with one of losers. It returns the index
// of the winner.
func race(t *testing.T, what string, n int, write func(i int) error, losers ...error) int {
	t.Helper()
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = write(i)
		}()
	}
	wg.Wait()
	winner := -1
	for i, err := range errs {
		switch {
		case err == nil:
			if winner >= 0 {
				t.Fatalf("%s: writers %d and %d both succeeded", what, winner, i)
			}
			winner = i
		case slices.ContainsFunc(losers, func(l error) bool { return errors.Is(err, l) }):
		default:
			t.Fatalf("%s: writer %d: %v", what, i, err)
		}
	}
	if winner < 0 {
		t.Fatalf("%s: no writer succeeded: %v", what, errs)
	}
	return winner
}

// testCreateRunLarge creates runs whose first write exceeds one DynamoDB
// transaction: more than 100 records, and more than 4 MB.
func testCreateRunLarge(t *testing.T, newStore func(*testing.T) Store) {
	many := make([]string, 150)
	for i := range many {
		many[i] = fmt.Sprintf("message %d", i+1)
	}
	huge := make([]string, 5)
	for i := range huge {
		huge[i] = fmt.Sprintf("%d:%s", i, bigText)
	}
	cases := []struct {
		name string
		msgs []string
	}{
		{"150 messages", many},
		{"5 MiB of messages", huge},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := newStore(t)
			h := newHarness(t, s, "tenant-"+tc.name)
			out := h.mustStart("r-1", "s-1", config(t, turn("Hello.")), nil, user(tc.msgs...)...)
			wantHead(t, h.head("s-1"), core.SessionHead{Exists: true, NextSeq: int64(len(tc.msgs)) + 1, ActiveRun: "r-1"})
			sameMessages(t, h.messages("s-1", 0, 0, 0), out.Messages)
			sameState(t, h.load("r-1"), out.State)
			outs := h.drive("r-1")
			sameMessages(t, h.messages("s-1", 0, 0, 0), allMessages(append([]core.Output{out}, outs...)...))
			if st := h.load("r-1"); st.Status != core.StatusCompleted {
				t.Fatalf("status %s", st.Status)
			}
		})
	}
}

func testLoadRunUnknown(t *testing.T, newStore func(*testing.T) Store) {
	s := newStore(t)
	_, err := s.LoadRun(t.Context(), "r-unknown")
	wantErr(t, "load unknown run", err, core.ErrNotFound)
}

func testCommitAdvances(t *testing.T, newStore func(*testing.T) Store) {
	s := newStore(t)
	h := newHarness(t, s, "tenant-a")
	first := h.mustStart("r-1", "s-1", config(t, turn("Searching.", call("call_1", "ability/echo", map[string]any{"q": "x"})), turn("Done.")), nil, user("Hi")...)
	outs := []core.Output{first}
	for {
		h.clock.T = h.clock.T.Add(time.Second)
		out, ok := h.step("r-1")
		if !ok {
			break
		}
		outs = append(outs, out)
		sameState(t, h.load("r-1"), out.State)
		active := "r-1"
		if core.IsTerminal(out.State.Status) {
			active = ""
		}
		wantHead(t, h.head("s-1"), core.SessionHead{Exists: true, NextSeq: out.State.NextMsgSeq, ActiveRun: active})
		sameMessages(t, h.messages("s-1", 0, out.State.NextMsgSeq, 0), allMessages(outs...))
		sameEvents(t, h.events("r-1", 0, out.State.NextEventSeq, 0), allEvents(outs...))
	}
	if len(outs) < 3 {
		t.Fatalf("run took %d transitions", len(outs))
	}
}

func testCommitWrongVersion(t *testing.T, newStore func(*testing.T) Store) {
	s := newStore(t)
	h := newHarness(t, s, "tenant-a")
	first := h.mustStart("r-1", "s-1", config(t, turn("Searching.", call("call_1", "ability/echo", map[string]any{"q": "x"})), turn("Done.")), nil, user("Hi")...)
	second, _ := h.step("r-1")
	committed := []core.Output{first, second}
	prev, out, _ := h.next("r-1")
	large := withEvents(out, 120, "large")
	cases := []struct {
		name string
		out  core.Output
		prev int64
	}{
		{"zero", out, 0},
		{"behind", out, prev.Version - 1},
		{"ahead", out, prev.Version + 1},
		{"far ahead", out, prev.Version + 7},
		{"large write", large, prev.Version + 1},
	}
	head := h.head("s-1")
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := h.write(prev, tc.out)
			w.PrevVersion = tc.prev
			wantErr(t, "commit with a wrong version", s.Commit(h.ctx, w), core.ErrConflict)
			sameState(t, h.load("r-1"), second.State)
			wantHead(t, h.head("s-1"), head)
			sameMessages(t, h.messages("s-1", 0, 0, 0), allMessages(committed...))
			sameMessages(t, h.messages("s-1", 0, head.NextSeq, 0), allMessages(committed...))
			sameEvents(t, h.events("r-1", 0, 0, 0), allEvents(committed...))
			sameEvents(t, h.events("r-1", 0, second.State.NextEventSeq, 0), allEvents(committed...))
		})
	}
	h.commit(prev, large)
	sameState(t, h.load("r-1"), large.State)
	sameMessages(t, h.messages("s-1", 0, 0, 0), allMessages(first, second, large))
	sameEvents(t, h.events("r-1", 0, 0, 0), allEvents(first, second, large))
}

// withEvents returns out with n more status events (a write of more than
// 100 records when n is large), each naming writer.
func withEvents(out core.Output, n int, writer string) core.Output {
	st := out.State
	evs := append([]core.Event(nil), out.Events...)
	for i := 0; i < n; i++ {
		evs = append(evs, core.Event{Seq: st.NextEventSeq, Type: core.EventStatus, Turn: st.Turn, At: st.UpdatedAt,
			Data: core.Fields{"writer": writer, "i": fmt.Sprint(i)}})
		st.NextEventSeq++
	}
	out.State, out.Events = st, evs
	return out
}

// withContent returns out with the content of its messages replaced, so
// two writers of the same transition write different records.
func withContent(out core.Output, writer string) core.Output {
	msgs := make([]core.Message, len(out.Messages))
	for i, m := range out.Messages {
		m.Content = writer + ": " + m.Content
		msgs[i] = m
	}
	out.Messages = msgs
	return out
}

// testCommitStaleWriter commits a transition, then lets a writer that
// computed another transition from the same version try to commit: its
// records must never replace the committed ones.
func testCommitStaleWriter(t *testing.T, newStore func(*testing.T) Store) {
	for _, size := range []int{0, 120} {
		t.Run(fmt.Sprintf("%d extra events", size), func(t *testing.T) {
			s := newStore(t)
			h := newHarness(t, s, fmt.Sprintf("tenant-%d", size))
			first := h.mustStart("r-1", "s-1", config(t, turn("Hello.")), nil, user("Hi")...)
			prev, out, _ := h.next("r-1")
			winner := withEvents(withContent(out, "winner"), size, "winner")
			loser := withEvents(withContent(out, "loser"), size, "loser")
			h.commit(prev, winner)
			wantErr(t, "stale writer", s.Commit(h.ctx, h.write(prev, loser)), core.ErrConflict)
			sameState(t, h.load("r-1"), winner.State)
			sameMessages(t, h.messages("s-1", 0, 0, 0), allMessages(first, winner))
			sameEvents(t, h.events("r-1", 0, 0, 0), allEvents(first, winner))
		})
	}
}

func testCommitUnknownRun(t *testing.T, newStore func(*testing.T) Store) {
	s := newStore(t)
	h := newHarness(t, s, "tenant-a")
	head := h.head("s-1")
	first := h.startOutput(head, "r-ghost", "s-1", config(t, turn("Hello.")), nil, user("Hi"))
	out, err := h.m.Apply(h.ctx, first.State, first.Messages, core.Cancel{Reason: "gone"})
	if err != nil {
		t.Fatal(err)
	}
	wantErr(t, "commit of an unknown run", s.Commit(h.ctx, h.write(first.State, out)), core.ErrNotFound)
	_, err = s.LoadRun(h.ctx, "r-ghost")
	wantErr(t, "load unknown run", err, core.ErrNotFound)
	if got := h.head("s-1"); got.Exists {
		t.Fatalf("commit of an unknown run created its session: %+v", got)
	}
}

// testUnencodableWrite hands the store writes holding a value JSON cannot
// encode: they fail with an error (never a panic) and change nothing.
func testUnencodableWrite(t *testing.T, newStore func(*testing.T) Store) {
	s := newStore(t)
	h := newHarness(t, s, "tenant-a")
	bad := core.Fields{"ratio": math.NaN()}
	head := h.head("s-1")
	out := h.startOutput(head, "r-0", "s-1", config(t, turn("Hello.")), nil, user("Hi"))
	out.Events[0].Data = bad
	if err := s.CreateRun(h.ctx, head, h.write(core.RunState{}, out)); err == nil {
		t.Fatal("CreateRun stored an event holding NaN")
	}
	_, err := s.LoadRun(h.ctx, "r-0")
	wantErr(t, "load refused run", err, core.ErrNotFound)
	if got := h.head("s-1"); got.Exists {
		t.Fatalf("refused run created its session: %+v", got)
	}

	first := h.mustStart("r-1", "s-1", config(t, turn("Hello.")), nil, user("Hi")...)
	prev, next, _ := h.next("r-1")
	next.Messages = append([]core.Message(nil), next.Messages...)
	next.Messages[0].Metadata = bad
	if err := s.Commit(h.ctx, h.write(prev, next)); err == nil {
		t.Fatal("Commit stored a message holding NaN")
	}
	sameState(t, h.load("r-1"), first.State)
	sameMessages(t, h.messages("s-1", 0, 0, 0), first.Messages)
	sameEvents(t, h.events("r-1", 0, 0, 0), first.Events)
}

func testCommitReleasesLock(t *testing.T, newStore func(*testing.T) Store) {
	cases := []struct {
		name     string
		cfg      core.RunConfig
		reqTools []any
		finish   func(h *harness)
		status   core.RunStatus
	}{
		{"completed", config(t, turn("Hello.")), nil, func(h *harness) { h.drive("r-1") }, core.StatusCompleted},
		{"cancelled while paused",
			config(t, turn("", call("call_1", "client/get_calendar", map[string]any{"day": "monday"})), turn("Done.")),
			[]any{clientTool("client/get_calendar")},
			func(h *harness) {
				h.drive("r-1")
				h.resume("r-1", core.Cancel{Reason: "enough"})
			}, core.StatusCancelled},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := newStore(t)
			h := newHarness(t, s, "tenant-"+tc.name)
			h.mustStart("r-1", "s-1", tc.cfg, tc.reqTools, user("Hi")...)
			tc.finish(h)
			st := h.load("r-1")
			if st.Status != tc.status {
				t.Fatalf("status %s, want %s", st.Status, tc.status)
			}
			wantHead(t, h.head("s-1"), core.SessionHead{Exists: true, NextSeq: st.NextMsgSeq})
			earlier := h.messages("s-1", 0, 0, 0)
			next := h.mustStart("r-2", "s-1", config(t, turn("Again.")), nil, user("Once more")...)
			if next.State.FirstMsgSeq != st.NextMsgSeq {
				t.Fatalf("second run starts at %d, want %d", next.State.FirstMsgSeq, st.NextMsgSeq)
			}
			wantHead(t, h.head("s-1"), core.SessionHead{Exists: true, NextSeq: next.State.NextMsgSeq, ActiveRun: "r-2"})
			sameMessages(t, h.messages("s-1", 0, 0, 0), append(earlier, next.Messages...))
			outs := h.drive("r-2")
			sameMessages(t, h.messages("s-1", 0, 0, 0), append(append(earlier, next.Messages...), allMessages(outs...)...))
			wantHead(t, h.head("s-1"), core.SessionHead{Exists: true, NextSeq: h.load("r-2").NextMsgSeq})
		})
	}
}

// testCommitLarge commits transitions of more than 100 records and of
// more than 4 MB.
func testCommitLarge(t *testing.T, newStore func(*testing.T) Store) {
	cases := []struct {
		name   string
		events int
		bigs   int
	}{
		{"150 events", 150, 0},
		{"5 MiB of messages", 0, 5},
		{"both", 110, 5},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := newStore(t)
			h := newHarness(t, s, "tenant-"+tc.name)
			first := h.mustStart("r-1", "s-1", config(t, turn("Hello.")), nil, user("Hi")...)
			prev := h.load("r-1")
			big := core.Output{State: prev}
			for i := 0; i < tc.bigs; i++ {
				big.Messages = append(big.Messages, core.Message{Role: core.RoleUser, Content: fmt.Sprintf("%d:%s", i, bigText), Seq: big.State.NextMsgSeq})
				big.State.NextMsgSeq++
			}
			big = withEvents(big, tc.events, "big")
			big.State.Version++
			h.commit(prev, big)
			sameState(t, h.load("r-1"), big.State)
			wantHead(t, h.head("s-1"), core.SessionHead{Exists: true, NextSeq: big.State.NextMsgSeq, ActiveRun: "r-1"})
			sameMessages(t, h.messages("s-1", 0, 0, 0), allMessages(first, big))
			sameEvents(t, h.events("r-1", 0, 0, 0), allEvents(first, big))
			outs := h.drive("r-1")
			if st := h.load("r-1"); st.Status != core.StatusCompleted {
				t.Fatalf("status %s", st.Status)
			}
			all := append([]core.Output{first, big}, outs...)
			sameMessages(t, h.messages("s-1", 0, 0, 0), allMessages(all...))
			sameEvents(t, h.events("r-1", 0, 0, 0), allEvents(all...))
		})
	}
}

// testCommitConcurrent commits eight different transitions from the same
// version at once: exactly one wins, and every record readers see is the
// winner's.
func testCommitConcurrent(t *testing.T, s Store, extraEvents int) {
	const writers = 8
	h := newHarness(t, s, "tenant-a")
	first := h.mustStart("r-1", "s-1", config(t, turn("Hello.")), nil, user("Hi")...)
	prev := h.load("r-1")
	step := prev.ScheduledSteps()[0]
	outs := make([]core.Output, writers)
	for i := range outs {
		reply := core.ModelReplied{Step: step, Reply: core.ModelReply{Content: fmt.Sprintf("writer %d", i)}}
		out, err := h.m.Apply(h.ctx, prev, first.Messages, reply)
		if err != nil {
			t.Fatal(err)
		}
		outs[i] = withEvents(out, extraEvents, fmt.Sprint(i))
	}
	winner := race(t, fmt.Sprintf("commit version %d", prev.Version+1), writers, func(i int) error {
		return s.Commit(h.ctx, h.write(prev, outs[i]))
	}, core.ErrConflict)
	want := outs[winner]
	sameState(t, h.load("r-1"), want.State)
	wantHead(t, h.head("s-1"), core.SessionHead{Exists: true, NextSeq: want.State.NextMsgSeq})
	sameMessages(t, h.messages("s-1", 0, 0, 0), allMessages(first, want))
	sameEvents(t, h.events("r-1", 0, 0, 0), allEvents(first, want))
}

func testTenantScoped(t *testing.T, newStore func(*testing.T) Store) {
	s := newStore(t)
	cases := []struct {
		name         string
		tenantA, sA  string
		tenantB, sB  string
		wantSeparate bool
	}{
		{"same session id", "tenant-a", "s-shared", "tenant-b", "s-shared", true},
		{"separators in ids", "t#1", "x", "t", "1#x", true},
		{"prefix tenant", "t", "1x", "t1", "x", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a := newHarness(t, s, tc.tenantA)
			b := newHarness(t, s, tc.tenantB)
			outA := a.mustStart("r-a-"+tc.name, tc.sA, config(t, turn("Hello A.")), nil, user("from A", "also from A")...)
			if got := b.head(tc.sB); got.Exists || got.ActiveRun != "" {
				t.Fatalf("tenant B sees tenant A's session: %+v", got)
			}
			if got := b.messages(tc.sB, 0, 0, 0); len(got) != 0 {
				t.Fatalf("tenant B reads %d messages of tenant A", len(got))
			}
			outB := b.mustStart("r-b-"+tc.name, tc.sB, config(t, turn("Hello B.")), nil, user("from B")...)
			if outB.State.FirstMsgSeq != 1 {
				t.Fatalf("tenant B's session starts at %d", outB.State.FirstMsgSeq)
			}
			sameMessages(t, a.messages(tc.sA, 0, 0, 0), outA.Messages)
			sameMessages(t, b.messages(tc.sB, 0, 0, 0), outB.Messages)
			wantHead(t, a.head(tc.sA), core.SessionHead{Exists: true, NextSeq: 3, ActiveRun: outA.State.RunID})
			wantHead(t, b.head(tc.sB), core.SessionHead{Exists: true, NextSeq: 2, ActiveRun: outB.State.RunID})
		})
	}
}
