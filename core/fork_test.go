package core

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// forkRun drives a run the way a durable runner does: each tool_call
// step of a fork is planned with the source's recorded calls.
type forkRun struct {
	m        *Machine
	io       IO
	st       RunState
	tr       []Message
	events   []Event
	results  []ToolExecutionResult
	steps    []Step
	recorded []RecordedCall
}

func (f *forkRun) commit(out Output) {
	f.st = out.State
	f.tr = append(f.tr, out.Messages...)
	f.events = append(f.events, out.Events...)
	f.results = append(f.results, out.ToolResults...)
	f.steps = append(f.steps, out.Next...)
}

func (f *forkRun) drive(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	for len(f.steps) > 0 {
		step := f.steps[0]
		f.steps = f.steps[1:]
		st := f.st
		if st.NeedsRecorded(step) {
			st.UseRecorded(f.recorded)
		}
		plan, err := f.m.Plan(ctx, st, f.tr, step)
		if err != nil {
			t.Fatal(err)
		}
		if plan.Kind == PlanSkip {
			continue
		}
		out, err := f.m.Apply(ctx, f.st, f.tr, f.io.perform(ctx, step, plan, nil))
		if err != nil {
			t.Fatal(err)
		}
		f.commit(out)
	}
}

func (f *forkRun) event(typ string) *Event {
	for i := range f.events {
		if f.events[i].Type == typ {
			return &f.events[i]
		}
	}
	return nil
}

// sourceAndFork runs a source run whose model sends two emails and asks
// a client, then forks it at its user message with script and mode.
func sourceAndFork(t *testing.T, mode string, fork ModelSpec, cfg func(*RunConfig)) (src, f *forkRun, sent *int) {
	t.Helper()
	sent = new(int)
	tools := ToolExecutorFunc(func(_ context.Context, c ToolCall) (any, error) {
		*sent++
		return map[string]any{"sent_to": c.Parameters["q"], "n": *sent}, nil
	})
	m := NewMachine(&FixedClock{T: t0})
	io := IO{Model: ScriptedModel{}, Tools: tools}
	srcCfg := RunConfig{Model: scripted(
		turn("", call("c1", "mail/send", map[string]any{"q": "ann"})),
		turn("", call("c2", "mail/send", map[string]any{"q": "bob"})),
		turn("sent both"),
	), Tools: []ToolDeclaration{serverTool("mail/send", nil)}, Budgets: map[string]int{BudgetToolCalls: 3}}
	out, err := m.Start(context.Background(), StartInput{RunID: "r-src", SessionID: "s-src", Config: srcCfg, Messages: user("email ann and bob")})
	if err != nil {
		t.Fatal(err)
	}
	src = &forkRun{m: m, io: io}
	src.commit(out)
	src.drive(t)
	if src.st.Status != StatusCompleted || *sent != 2 {
		t.Fatalf("source: status %s, %d sent", src.st.Status, *sent)
	}
	fcfg := srcCfg
	fcfg.Model = fork
	fcfg.ForkedFrom = &ForkRef{RunID: "r-src", Seq: 1, Tools: mode}
	if cfg != nil {
		cfg(&fcfg)
	}
	out, err = m.Start(context.Background(), StartInput{RunID: "r-fork", SessionID: "s-fork", Config: fcfg, Messages: user("email ann and bob"), FirstSeq: 1})
	if err != nil {
		t.Fatal(err)
	}
	f = &forkRun{m: m, io: io, recorded: RecordedCalls("r-src", 1, src.results)}
	f.commit(out)
	f.drive(t)
	return src, f, sent
}

func TestForkReusesRecordedCallsAndRunsTheRestLive(t *testing.T) {
	_, f, sent := sourceAndFork(t, ForkToolsReuse, scripted(
		turn("", call("k1", "mail/send", map[string]any{"q": "bob"})),
		turn("", call("k2", "mail/send", map[string]any{"q": "cat"})),
		turn("done"),
	), nil)
	if f.st.Status != StatusCompleted {
		t.Fatalf("fork status %s (%+v)", f.st.Status, f.st.Error)
	}
	if *sent != 3 {
		t.Fatalf("%d emails sent in all, want 3 (bob's reused, cat's new)", *sent)
	}
	if ev := f.event(EventRunForked); ev == nil || !reflect.DeepEqual(ev.Data, &RunForkedData{ForkedFrom: ForkRef{RunID: "r-src", Seq: 1, Tools: ForkToolsReuse}}) {
		t.Fatalf("run_forked = %+v", ev)
	}
	var results []Message
	for _, m := range f.tr {
		if m.Role == RoleToolResult {
			results = append(results, m)
		}
	}
	if len(results) != 2 {
		t.Fatalf("results %+v", results)
	}
	bob, cat := results[0], results[1]
	if bob.Metadata[MetaReplayed] != true || bob.Metadata[MetaReplayedFrom] != (ReplayRef{RunID: "r-src", Seq: 5}) || !strings.Contains(bob.Content, `"n":2`) {
		t.Errorf("bob's result %+v: want bob's recorded result (seq 5 of the source)", bob)
	}
	if _, ok := cat.Metadata[MetaReplayed]; ok || !strings.Contains(cat.Content, `"n":3`) {
		t.Errorf("cat's result %+v: want a live result", cat)
	}
	if f.results[0].ReplayedFrom == nil || f.results[1].ReplayedFrom != nil {
		t.Errorf("records %+v", f.results)
	}
	var evs []*ToolResultData
	for _, ev := range f.events {
		if d, ok := ev.Data.(*ToolResultData); ok {
			evs = append(evs, d)
		}
	}
	if len(evs) != 2 || !evs[0].Replayed || evs[1].Replayed {
		t.Errorf("tool_result events %+v", evs)
	}
	// The replayed call counted against no budget: one of two left.
	if b := f.st.budget(BudgetToolCalls); b.Current != 1 {
		t.Errorf("tool_calls budget %+v, want 1 (the live call only)", b)
	}
}

// TestForkReplayedResultHasNoRuntime: a reused result carries none of
// the tool's runtime metadata (it was the source's run of the tool, not
// the fork's); a live one carries it.
func TestForkReplayedResultHasNoRuntime(t *testing.T) {
	_, f, _ := sourceAndFork(t, ForkToolsReuse, scripted(
		turn("", call("k1", "mail/send", map[string]any{"q": "bob"})),
		turn("", call("k2", "mail/send", map[string]any{"q": "cat"})),
		turn("done"),
	), func(c *RunConfig) {
		c.Tools = []ToolDeclaration{serverTool("mail/send", map[string]any{"runtime": map[string]any{"region": "eu-west-1"}})}
	})
	if len(f.results) != 2 || f.results[0].ReplayedFrom == nil {
		t.Fatalf("records %+v", f.results)
	}
	if rt := f.results[0].Runtime; rt != nil {
		t.Errorf("the reused result's runtime %v, want none", rt)
	}
	if rt := f.results[1].Runtime; rt["region"] != "eu-west-1" {
		t.Errorf("the live result's runtime %v, want the declaration's", rt)
	}
}

func TestForkReplayModeExecutesNothing(t *testing.T) {
	_, f, sent := sourceAndFork(t, ForkToolsReplay, scripted(
		turn("", call("k1", "mail/send", map[string]any{"q": "ann"}), call("k2", "mail/send", map[string]any{"q": "dan"})),
		turn("done"),
	), func(c *RunConfig) { c.ParallelToolCalls = true })
	if *sent != 2 || f.st.Status != StatusCompleted {
		t.Fatalf("%d sent, status %s: a replay fork executes nothing", *sent, f.st.Status)
	}
	var got []string
	for _, m := range f.tr {
		if m.Role == RoleToolResult {
			et, _ := m.Metadata[MetaErrorType].(string)
			got = append(got, m.ToolCallID()+":"+et)
		}
	}
	if want := []string{"k1:", "k2:" + ErrTypeNotRecorded}; !reflect.DeepEqual(got, want) {
		t.Fatalf("results %v, want %v", got, want)
	}
}

func TestForkLiveModeRunsEverythingAgain(t *testing.T) {
	_, f, sent := sourceAndFork(t, ForkToolsLive, scripted(
		turn("", call("k1", "mail/send", map[string]any{"q": "ann"})),
		turn("done"),
	), nil)
	if *sent != 3 || f.st.Status != StatusCompleted {
		t.Fatalf("%d sent, status %s", *sent, f.st.Status)
	}
	for _, m := range f.tr {
		if _, ok := m.Metadata[MetaReplayed]; ok {
			t.Fatalf("a live fork replayed %+v", m)
		}
	}
}

// TestForkTakesEachRecordedCallOnce: identical calls take the source's
// identical calls in order, parallel siblings included, and one more
// than the source made runs live.
func TestForkTakesEachRecordedCallOnce(t *testing.T) {
	m := NewMachine(&FixedClock{T: t0})
	sent := 0
	io := IO{Model: ScriptedModel{}, Tools: ToolExecutorFunc(func(context.Context, ToolCall) (any, error) { sent++; return sent, nil })}
	decl := serverTool("net/ping", map[string]any{"runtime": map[string]any{"duplicate_policy": "repeatable"}})
	ping := func(id string) ToolCallRequest { return call(id, "net/ping", map[string]any{"q": "x"}) }
	recs := []ToolExecutionResult{
		{ToolName: "net/ping", ToolCallID: "a", Parameters: map[string]any{"q": "x"}, Result: ToolResult{Success: true, Result: "first"}, Seq: 4},
		{ToolName: "net/ping", ToolCallID: "b", Parameters: map[string]any{"q": "x"}, Result: ToolResult{Success: true, Result: "second"}, Seq: 5},
		// Mediation refusals are no recorded outcome.
		{ToolName: "net/ping", ToolCallID: "c", Parameters: map[string]any{"q": "x"}, Result: ToolResult{Success: false, ErrorType: ErrTypeSkipped}, Seq: 6},
		// Before the fork point: history.
		{ToolName: "net/ping", ToolCallID: "d", Parameters: map[string]any{"q": "x"}, Result: ToolResult{Success: true, Result: "old"}, Seq: 2},
	}
	for _, parallel := range []bool{false, true} {
		sent = 0
		cfg := RunConfig{Model: scripted(turn("", ping("p1"), ping("p2"), ping("p3")), turn("done")), Tools: []ToolDeclaration{decl},
			ParallelToolCalls: parallel, ForkedFrom: &ForkRef{RunID: "r-src", Seq: 3, Tools: ForkToolsReuse}}
		out, err := m.Start(context.Background(), StartInput{RunID: "r-f", SessionID: "s-f", Config: cfg, Messages: user("go"), FirstSeq: 3})
		if err != nil {
			t.Fatal(err)
		}
		f := &forkRun{m: m, io: io, recorded: RecordedCalls("r-src", 3, recs)}
		f.commit(out)
		f.drive(t)
		var got []string
		for _, msg := range f.tr {
			if msg.Role == RoleToolResult {
				got = append(got, msg.Content)
			}
		}
		if want := []string{"first", "second", "1"}; !reflect.DeepEqual(got, want) || sent != 1 {
			t.Errorf("parallel %v: results %v (%d executed), want %v and one execution", parallel, got, sent, want)
		}
	}
}

// TestForkRecordedCallsMeetApprovalsAndClients: a recorded call that
// needed an approval or a client is answered without asking; an
// unrecorded one is asked in reuse mode and refused in replay mode.
func TestForkRecordedCallsMeetApprovalsAndClients(t *testing.T) {
	m := NewMachine(&FixedClock{T: t0})
	io := IO{Model: ScriptedModel{}, Tools: ToolExecutorFunc(func(context.Context, ToolCall) (any, error) { t.Error("a tool executed"); return nil, nil })}
	approve := serverTool("bank/pay", map[string]any{"action_policy": "preview"})
	recs := []ToolExecutionResult{
		{ToolName: "bank/pay", Parameters: map[string]any{"q": "10"}, Result: ToolResult{Success: true, Result: "paid 10"}, Seq: 3},
		{ToolName: "client/get_calendar", Parameters: map[string]any{"day": "mon"}, Result: ToolResult{Success: true, Result: "free"}, Seq: 5},
	}
	for _, tc := range []struct {
		mode, day string
		status    RunStatus
	}{
		{ForkToolsReuse, "mon", StatusCompleted},
		{ForkToolsReuse, "tue", StatusRuntimeToolPending},
		{ForkToolsReplay, "tue", StatusCompleted},
	} {
		cfg := RunConfig{Model: scripted(turn("", call("k1", "bank/pay", map[string]any{"q": "10"}), call("k2", "client/get_calendar", map[string]any{"day": tc.day})), turn("done")),
			Tools: []ToolDeclaration{approve}, ForkedFrom: &ForkRef{RunID: "r-src", Seq: 1, Tools: tc.mode}}
		out, err := m.Start(context.Background(), StartInput{RunID: "r-f", SessionID: "s-f", Config: cfg, Messages: user("go"),
			RequestTools: []any{clientTool("client/get_calendar")}})
		if err != nil {
			t.Fatal(err)
		}
		f := &forkRun{m: m, io: io, recorded: RecordedCalls("r-src", 1, recs)}
		f.commit(out)
		f.drive(t)
		if f.st.Status != tc.status {
			t.Errorf("%s %s: status %s, want %s", tc.mode, tc.day, f.st.Status, tc.status)
		}
		if f.event(EventApprovalRequired) != nil {
			t.Errorf("%s %s: the recorded payment asked for an approval", tc.mode, tc.day)
		}
	}
}

func TestForkAtAnAssistantMessage(t *testing.T) {
	m := NewMachine(&FixedClock{T: t0})
	// With an answer given, the fork completes at once with it.
	out, err := m.Start(context.Background(), StartInput{RunID: "r-f", SessionID: "s-f", FirstSeq: 2, Edited: true,
		Config:   RunConfig{Model: scripted(turn("never")), ForkedFrom: &ForkRef{RunID: "r-src", Seq: 2, Tools: ForkToolsReuse}},
		Messages: []Message{{Role: RoleAssistant, Content: "a better answer"}}})
	if err != nil {
		t.Fatal(err)
	}
	env := BuildEnvelope(out.State, out.Messages, out.Events, nil, nil)
	if out.State.Status != StatusCompleted || len(out.Next) != 0 || env.FinalContent != "a better answer" {
		t.Fatalf("status %s next %v final %q", out.State.Status, out.Next, env.FinalContent)
	}
	if d := out.Events[1].Data.(*RunForkedData); !d.Edited {
		t.Errorf("run_forked %+v", d)
	}
	// Without, the model is asked again.
	out, err = m.Start(context.Background(), StartInput{RunID: "r-g", SessionID: "s-g", FirstSeq: 2,
		Config: RunConfig{Model: scripted(turn("again")), ForkedFrom: &ForkRef{RunID: "r-src", Seq: 2, Tools: ForkToolsReuse}}})
	if err != nil {
		t.Fatal(err)
	}
	if out.State.Status != StatusQueued || len(out.Next) != 1 || out.Next[0].Kind != StepModelTurn || out.State.FirstMsgSeq != 2 {
		t.Fatalf("status %s next %v first %d", out.State.Status, out.Next, out.State.FirstMsgSeq)
	}
	// A run that is no fork needs a message, and a fork a valid origin.
	if _, err := m.Start(context.Background(), StartInput{RunID: "r-h", SessionID: "s-h", Config: RunConfig{Model: scripted(turn("x"))}}); err == nil {
		t.Error("a run without messages started")
	}
	if _, err := m.Start(context.Background(), StartInput{RunID: "r-h", SessionID: "s-h",
		Config: RunConfig{Model: scripted(turn("x")), ForkedFrom: &ForkRef{RunID: "r-src", Seq: 2, Tools: "sometimes"}}}); err == nil {
		t.Error("a fork with an unknown tool mode started")
	}
}

func TestForkPlannedWithoutItsRecordIsRefused(t *testing.T) {
	m := NewMachine(&FixedClock{T: t0})
	cfg := RunConfig{Model: scripted(turn("", call("k1", "net/ping", nil))), Tools: []ToolDeclaration{serverTool("net/ping", nil)},
		ForkedFrom: &ForkRef{RunID: "r-src", Seq: 1, Tools: ForkToolsReplay}}
	out, err := m.Start(context.Background(), StartInput{RunID: "r-f", SessionID: "s-f", Config: cfg, Messages: user("go")})
	if err != nil {
		t.Fatal(err)
	}
	f := &forkRun{m: m, io: IO{Model: ScriptedModel{}}}
	step := out.Next[0]
	f.commit(out)
	f.steps = nil
	plan, err := m.Plan(context.Background(), f.st, f.tr, step)
	if err != nil {
		t.Fatal(err)
	}
	out, err = m.Apply(context.Background(), f.st, f.tr, f.io.perform(context.Background(), step, plan, nil))
	if err != nil {
		t.Fatal(err)
	}
	f.commit(out)
	if _, err := m.Plan(context.Background(), f.st, f.tr, f.steps[0]); err == nil {
		t.Fatal("a replay fork's tool step was planned without the source's record")
	}
	if f.st.NeedsRecorded(Step{Kind: StepModelTurn}) {
		t.Error("a model turn needs no record")
	}
}

func TestForkBase(t *testing.T) {
	s := func(id string, before int64) TranscriptSegment {
		return TranscriptSegment{SessionID: id, Before: before}
	}
	for _, tc := range []struct {
		base []TranscriptSegment
		seq  int64
		want []TranscriptSegment
	}{
		{nil, 5, []TranscriptSegment{s("src", 5)}},
		// A fork of a fork, after the shared prefix: the prefix, then the fork's own.
		{[]TranscriptSegment{s("a", 4)}, 9, []TranscriptSegment{s("a", 4), s("src", 9)}},
		// Inside the shared prefix: only the prefix, cut.
		{[]TranscriptSegment{s("a", 4), s("b", 8)}, 6, []TranscriptSegment{s("a", 4), s("b", 6)}},
		{[]TranscriptSegment{s("a", 4), s("b", 8)}, 4, []TranscriptSegment{s("a", 4)}},
		{[]TranscriptSegment{s("a", 4), s("b", 8)}, 8, []TranscriptSegment{s("a", 4), s("b", 8)}},
	} {
		if got := ForkBase(tc.base, "src", tc.seq); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("ForkBase(%v, %d) = %v, want %v", tc.base, tc.seq, got, tc.want)
		}
	}
	if !ForkPoint(Message{Role: RoleUser}) || !ForkPoint(Message{Role: RoleAssistant}) || ForkPoint(Message{Role: RoleToolCall}) || ForkPoint(Message{Role: RoleToolResult}) || ForkPoint(Message{Role: RoleSystem}) {
		t.Error("fork points are user and assistant messages")
	}
	for _, m := range []string{ForkToolsReuse, ForkToolsReplay, ForkToolsLive} {
		if !ValidForkTools(m) {
			t.Errorf("%s refused", m)
		}
	}
	if ValidForkTools("") || ValidForkTools("Reuse") {
		t.Error("an unknown mode accepted")
	}
	if r, ok := replayRefOf(map[string]any{"run_id": "r", "seq": float64(3)}); !ok || r != (ReplayRef{"r", 3}) {
		t.Errorf("replayRefOf = %v %v", r, ok)
	}
	if _, ok := replayRefOf("x"); ok {
		t.Error("a string read as a reference")
	}
}

// TestForkParallelSiblingsTakeDistinctRecords: identical parallel calls
// planned side by side (before any result is in, as workers plan them)
// take the source's identical calls in call order, each once; one more
// than the source made runs live.
func TestForkParallelSiblingsTakeDistinctRecords(t *testing.T) {
	m := NewMachine(&FixedClock{T: t0})
	ctx := context.Background()
	ping := func(id string) ToolCallRequest { return call(id, "net/ping", map[string]any{"q": "x"}) }
	cfg := RunConfig{Model: scripted(turn("", ping("p1"), ping("p2"), ping("p3")), turn("done")), ParallelToolCalls: true,
		Tools:      []ToolDeclaration{serverTool("net/ping", map[string]any{"runtime": map[string]any{"duplicate_policy": "repeatable"}})},
		ForkedFrom: &ForkRef{RunID: "r-src", Seq: 1, Tools: ForkToolsReuse}}
	out, err := m.Start(ctx, StartInput{RunID: "r-f", SessionID: "s-f", Config: cfg, Messages: user("go")})
	if err != nil {
		t.Fatal(err)
	}
	f := &forkRun{m: m, io: IO{Model: ScriptedModel{}}}
	f.commit(out)
	step := f.steps[0]
	f.steps = nil
	plan, err := m.Plan(ctx, f.st, f.tr, step)
	if err != nil {
		t.Fatal(err)
	}
	out, err = m.Apply(ctx, f.st, f.tr, f.io.perform(ctx, step, plan, nil))
	if err != nil {
		t.Fatal(err)
	}
	f.commit(out)
	recs := RecordedCalls("r-src", 1, []ToolExecutionResult{
		{ToolName: "net/ping", Parameters: map[string]any{"q": "x"}, Result: ToolResult{Success: true, Result: "a"}, Seq: 3},
		{ToolName: "net/ping", Parameters: map[string]any{"q": "x"}, Result: ToolResult{Success: true, Result: "b"}, Seq: 4},
	})
	var got []string
	for _, s := range f.steps {
		st := f.st
		st.UseRecorded(recs)
		p, err := m.Plan(ctx, st, f.tr, s)
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case p.Kind == PlanTool:
			got = append(got, "live")
		case p.Kind == PlanApply:
			d := p.Input.(ToolDecided).Decision
			got = append(got, fmt.Sprint(d.Result.Result, "@", d.Replayed.Seq))
		}
	}
	if want := []string{"a@3", "b@4", "live"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("the siblings' plans %v, want %v", got, want)
	}
	// Once the first two are in (replayed, not yet appended behind a
	// pending sibling), the third still runs live.
	for _, s := range f.steps[:2] {
		st := f.st
		st.UseRecorded(recs)
		p, _ := m.Plan(ctx, st, f.tr, s)
		out, err := m.Apply(ctx, f.st, f.tr, p.Input)
		if err != nil {
			t.Fatal(err)
		}
		f.commit(out)
	}
	st := f.st
	st.UseRecorded(recs)
	if p, _ := m.Plan(ctx, st, f.tr, f.steps[2]); p.Kind != PlanTool {
		t.Fatalf("the third sibling after two replayed: %+v", p)
	}
}

// TestEvalCaseAnswers: an eval case's scripted answers (RecordedAnswer)
// answer its client calls — any call of the tool without parameters, a
// call with those parameters with them — each once, in order; in replay
// mode a call without an answer is not recorded.
func TestEvalCaseAnswers(t *testing.T) {
	m := NewMachine(&FixedClock{T: t0})
	answers := []RecordedCall{
		RecordedAnswer(ReplayRef{RunID: "ev-1", Seq: 1}, "client/get_calendar", map[string]any{"day": "tue"}, ToolResult{Success: true, Result: "tuesday"}),
		RecordedAnswer(ReplayRef{RunID: "ev-1", Seq: 2}, "client/get_calendar", nil, ToolResult{Success: true, Result: "any day"}),
	}
	for _, tc := range []struct {
		mode string
		want []string
	}{
		{ForkToolsLive, []string{"any day", "tuesday", "pending"}},
		{ForkToolsReplay, []string{"any day", "tuesday", ErrTypeNotRecorded}},
	} {
		day := func(id, d string) ToolCallRequest { return call(id, "client/get_calendar", map[string]any{"day": d}) }
		cfg := RunConfig{Model: scripted(turn("", day("k1", "mon"), day("k2", "tue"), day("k3", "wed")), turn("done")),
			Eval: &EvalRef{EvalID: "ev-1", Case: 0, Tools: tc.mode}}
		out, err := m.Start(context.Background(), StartInput{RunID: "r-c", SessionID: "s-c", Config: cfg, Messages: user("go"),
			RequestTools: []any{clientTool("client/get_calendar")}})
		if err != nil {
			t.Fatal(err)
		}
		if !out.State.NeedsRecorded(Step{Kind: StepToolCall}) {
			t.Fatalf("%s: an eval case with answers needs its record", tc.mode)
		}
		f := &forkRun{m: m, io: IO{Model: ScriptedModel{}}, recorded: answers}
		f.commit(out)
		f.drive(t)
		var got []string
		for _, c := range f.st.Calls {
			got = append(got, string(c.Status))
		}
		for _, msg := range f.tr {
			if msg.Role == RoleToolResult {
				et, _ := msg.Metadata[MetaErrorType].(string)
				got = append(got, strings.Trim(cmpOr(et, msg.Content), `"`))
			}
		}
		if tc.mode == ForkToolsLive {
			// The third call waits for its client.
			if f.st.Status != StatusRuntimeToolPending {
				t.Fatalf("live: status %s", f.st.Status)
			}
			continue
		}
		if f.st.Status != StatusCompleted || !reflect.DeepEqual(got, tc.want) {
			t.Fatalf("%s: %s %v, want %v", tc.mode, f.st.Status, got, tc.want)
		}
	}
	if _, ok := replayRefOf((*ReplayRef)(nil)); ok {
		t.Error("a nil reference read as one")
	}
	if r, ok := replayRefOf(&ReplayRef{RunID: "r", Seq: 2}); !ok || r.Seq != 2 {
		t.Error("a reference pointer not read")
	}
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
