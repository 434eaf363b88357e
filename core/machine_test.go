package core

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"
)

func pausedClientRun(t *testing.T) (*Runner, *Run, *FixedClock) {
	t.Helper()
	clock := &FixedClock{T: t0}
	rn := &Runner{Machine: NewMachine(clock), Model: ScriptedModel{}}
	run, err := rn.Start(context.Background(), StartInput{RunID: "r-1", SessionID: "s-1",
		Config:       RunConfig{Model: scripted(turn("", call("c1", "client/get_calendar", map[string]any{"day": "mon"})), turn("done"))},
		RequestTools: []any{clientTool("client/get_calendar")}, Messages: user("hi")})
	if err != nil {
		t.Fatal(err)
	}
	if run.State.Status != StatusRuntimeToolPending {
		t.Fatalf("status = %s", run.State.Status)
	}
	return rn, run, clock
}

func TestApplyRejectsBadInputsWithoutChangingState(t *testing.T) {
	rn, run, clock := pausedClientRun(t)
	ctx := context.Background()
	reqs, _ := run.State.Pending()
	before, _ := MarshalState(run.State)

	_, err := rn.Machine.Apply(ctx, run.State, run.Transcript, ClientResult{RequestID: "treq_nope", Success: true})
	if !errors.Is(err, ErrNotFound) {
		t.Errorf("unknown request: err = %v, want ErrNotFound", err)
	}
	_, err = rn.Machine.Apply(ctx, run.State, run.Transcript, ApprovalDecision{ActionID: "act_x", Decision: "maybe"})
	if !errors.Is(err, ErrInvalidInput) {
		t.Errorf("bad decision: err = %v, want ErrInvalidInput", err)
	}
	_, err = rn.Machine.Apply(ctx, run.State, run.Transcript, Expire{})
	if !errors.Is(err, ErrNothingToApply) {
		t.Errorf("early expire: err = %v, want ErrNothingToApply", err)
	}
	_, err = rn.Machine.Apply(ctx, run.State, run.Transcript, ModelReplied{Step: Step{Kind: StepModelTurn, RunID: "r-1", Seq: 1}})
	if !errors.Is(err, ErrStaleStep) {
		t.Errorf("stale model step: err = %v, want ErrStaleStep", err)
	}
	_, err = rn.Machine.Apply(ctx, run.State, run.Transcript, nil)
	if !errors.Is(err, ErrInvalidInput) {
		t.Errorf("nil input: err = %v", err)
	}
	clock.T = clock.T.Add(DefaultPendingTTL)
	_, err = rn.Machine.Apply(ctx, run.State, run.Transcript, ClientResult{RequestID: reqs[0].RequestID, Success: true})
	if !errors.Is(err, ErrExpired) {
		t.Errorf("expired request: err = %v, want ErrExpired", err)
	}
	after, _ := MarshalState(run.State)
	if string(before) != string(after) {
		t.Fatal("a rejected input changed the caller's state")
	}
}

func TestFirstDecisionWins(t *testing.T) {
	rn, run, _ := pausedClientRun(t)
	ctx := context.Background()
	reqs, _ := run.State.Pending()
	if err := rn.Resume(ctx, run, ClientResult{RequestID: reqs[0].RequestID, Success: true, Result: "x"}); err != nil {
		t.Fatal(err)
	}
	if run.State.Status != StatusCompleted {
		t.Fatalf("status = %s", run.State.Status)
	}
	err := rn.Resume(ctx, run, ClientResult{RequestID: reqs[0].RequestID, Success: true, Result: "y"})
	if !errors.Is(err, ErrTerminal) {
		t.Fatalf("second submit: err = %v, want ErrTerminal", err)
	}
}

// TestRunnerStepsLeaveEarlierStatesAlone: the Runner applies its own
// steps' outcomes to the run's state in place, so a copy of the state
// taken before (a paused run's, with a call still to run) must not see
// them; and only a current step's outcome is applied in place, the
// outcomes a transition refuses are not.
func TestRunnerStepsLeaveEarlierStatesAlone(t *testing.T) {
	ctx := context.Background()
	rn := &Runner{Machine: NewMachine(&FixedClock{T: t0}), Model: ScriptedModel{},
		Tools: ToolExecutorFunc(func(_ context.Context, c ToolCall) (any, error) { return echo(c) })}
	run, err := rn.Start(ctx, StartInput{RunID: "r-1", SessionID: "s-1",
		Config: RunConfig{Model: scripted(turn("", call("c1", "client/get_calendar", map[string]any{"day": "mon"}),
			call("c2", "ability/search", map[string]any{"q": "x"})), turn("done")), Tools: []ToolDeclaration{serverTool("ability/search", nil)}},
		RequestTools: []any{clientTool("client/get_calendar")}, Messages: user("hi")})
	if err != nil {
		t.Fatal(err)
	}
	if run.State.Status != StatusRuntimeToolPending || len(run.State.Calls) != 2 {
		t.Fatalf("status %s with %d calls", run.State.Status, len(run.State.Calls))
	}
	snap := run.State
	before, _ := MarshalState(snap)
	reqs, _ := run.State.Pending()
	if err := rn.Resume(ctx, run, ClientResult{RequestID: reqs[0].RequestID, Success: true, Result: "free"}); err != nil {
		t.Fatal(err)
	}
	if run.State.Status != StatusCompleted || len(run.ToolResults) != 2 {
		t.Fatalf("status %s with %d results", run.State.Status, len(run.ToolResults))
	}
	if after, _ := MarshalState(snap); string(after) != string(before) {
		t.Fatalf("the run's steps changed an earlier copy of its state:\n%s\n%s", before, after)
	}

	st := snap
	for _, tc := range []struct {
		in    Input
		clean bool
	}{
		{&ToolExecuted{Step: Step{Kind: StepToolCall, RunID: "r-1", Seq: st.StepSeq + 1, CallID: "c2"}}, false}, // c2 is not scheduled yet
		{&ToolExecuted{Step: Step{Kind: StepToolCall, RunID: "r-1", Seq: 9, CallID: "c9"}}, false},
		{&ModelReplied{Step: Step{Kind: StepModelTurn, RunID: "r-1", Seq: st.StepSeq}}, false},
		{ModelReplied{Step: Step{Kind: StepModelTurn, RunID: "r-1", Seq: st.StepSeq}}, false}, // not a step outcome of the Runner's
	} {
		if got := st.appliesCleanly(tc.in); got != tc.clean {
			t.Errorf("%#v: appliesCleanly = %v", tc.in, got)
		}
		if _, err := rn.Machine.Apply(ctx, st, nil, tc.in); err == nil {
			t.Errorf("%#v: applied", tc.in)
		}
	}
	done := run.State
	if done.appliesCleanly(&ModelReplied{Step: Step{Kind: StepModelTurn, RunID: "r-1", Seq: done.StepSeq}}) {
		t.Error("an ended run's step applies cleanly")
	}
}

func TestResumeShowsQueuedBeforeTheNextStep(t *testing.T) {
	_, run, clock := pausedClientRun(t)
	m := NewMachine(clock)
	reqs, _ := run.State.Pending()
	out, err := m.Apply(context.Background(), run.State, run.Transcript, ClientResult{RequestID: reqs[0].RequestID, Success: true})
	if err != nil {
		t.Fatal(err)
	}
	if out.State.Status != StatusQueued || len(out.Next) != 1 || out.Next[0].Kind != StepModelTurn {
		t.Fatalf("status %s, next %+v", out.State.Status, out.Next)
	}
	if out.State.Version != run.State.Version+1 {
		t.Fatalf("version %d after %d", out.State.Version, run.State.Version)
	}
	// A duplicate delivery of an old step is planned as a skip.
	plan, err := m.Plan(context.Background(), out.State, run.Transcript, Step{Kind: StepModelTurn, RunID: "r-1", Seq: 1})
	if err != nil || plan.Kind != PlanSkip {
		t.Fatalf("old step plan = %+v, %v", plan, err)
	}
}

func TestSessionContinuationKeepsEarlierRuns(t *testing.T) {
	clock := &FixedClock{T: t0}
	rn := &Runner{Machine: NewMachine(clock), Model: ScriptedModel{}}
	ctx := context.Background()
	first, err := rn.Start(ctx, StartInput{RunID: "r-1", SessionID: "s-1", Config: RunConfig{Model: scripted(turn("one"))}, Messages: user("a")})
	if err != nil {
		t.Fatal(err)
	}
	second, err := rn.Continue(ctx, first.Transcript, StartInput{RunID: "r-2", SessionID: "s-1", Config: RunConfig{Model: scripted(turn("two"))}, Messages: user("b")})
	if err != nil {
		t.Fatal(err)
	}
	env := second.Envelope()
	if len(env.Messages) != 4 || env.FinalContent != "two" || env.Messages[2].Seq != 3 {
		t.Fatalf("messages %+v final %q", env.Messages, env.FinalContent)
	}
}

func TestEventSinkFailuresAreSwallowed(t *testing.T) {
	var seen int
	sinks := []EventSink{
		EventSinkFunc(func(context.Context, Event) error { seen++; return errors.New("sink down") }),
		EventSinkFunc(func(context.Context, Event) error { seen++; panic("sink panic") }),
	}
	for _, sink := range sinks {
		rn := &Runner{Machine: NewMachine(&FixedClock{T: t0}), Model: ScriptedModel{}, Sink: sink}
		run, err := rn.Start(context.Background(), StartInput{RunID: "r", SessionID: "s", Config: RunConfig{Model: scripted(turn("ok"))}, Messages: user("x")})
		if err != nil || run.State.Status != StatusCompleted {
			t.Fatalf("run with failing sink: %v %v", err, run)
		}
	}
	if seen == 0 {
		t.Fatal("sink never called")
	}
}

func TestStartValidation(t *testing.T) {
	m := NewMachine(&FixedClock{T: t0})
	cases := []StartInput{
		{SessionID: "s", Config: RunConfig{Model: scripted()}, Messages: user("x")},
		{RunID: "r", SessionID: "s", Config: RunConfig{Model: scripted()}},
		{RunID: "r", SessionID: "s", Config: RunConfig{}, Messages: user("x")},
		{RunID: "r", SessionID: "s", Config: RunConfig{Model: scripted(), Budgets: map[string]int{"dollars": 3}}, Messages: user("x")},
		{RunID: "r", SessionID: "s", Config: RunConfig{Model: scripted(), Budgets: map[string]int{"turns": 0}}, Messages: user("x")},
		{RunID: "r", SessionID: "s", Config: RunConfig{Model: scripted()}, Messages: []Message{{Role: "robot"}}},
	}
	for i, in := range cases {
		if _, err := m.Start(context.Background(), in); !errors.Is(err, ErrInvalidInput) {
			t.Errorf("case %d: err = %v, want ErrInvalidInput", i, err)
		}
	}
}

func TestStateRoundTripAndVersion(t *testing.T) {
	_, run, _ := pausedClientRun(t)
	b, err := MarshalState(run.State)
	if err != nil {
		t.Fatal(err)
	}
	back, err := UnmarshalState(b)
	if err != nil {
		t.Fatal(err)
	}
	b2, _ := MarshalState(back)
	if string(b) != string(b2) {
		t.Fatalf("state round trip differs:\n%s\n%s", b, b2)
	}
	if _, err := UnmarshalState([]byte(`{"v":99}`)); err == nil {
		t.Fatal("unknown state version accepted")
	}
	if exp, ok := run.State.NextExpiry(); !ok || !exp.Equal(t0.Add(DefaultPendingTTL)) {
		t.Fatalf("NextExpiry = %v %v", exp, ok)
	}
}

func TestModelIDsAreMadeUnique(t *testing.T) {
	rn := &Runner{Machine: NewMachine(&FixedClock{T: t0}), Model: ScriptedModel{},
		Tools: ToolExecutorFunc(func(_ context.Context, c ToolCall) (any, error) { return c.IdempotencyKey, nil })}
	run, err := rn.Start(context.Background(), StartInput{RunID: "r", SessionID: "s", Messages: user("x"),
		Config: RunConfig{Model: scripted(
			turn("", call("call_1", "ability/search", map[string]any{"q": "a"}), call("call_1", "ability/search", map[string]any{"q": "b"}), call("", "ability/search", map[string]any{"q": "c"})),
			turn("", call("call_1", "ability/search", map[string]any{"q": "d"})),
			turn("ok")), Tools: []ToolDeclaration{serverTool("ability/search", nil)}}})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, r := range run.ToolResults {
		ids = append(ids, r.ToolCallID+"="+fmt.Sprint(r.Result.Result))
	}
	want := "[call_1=r:call_1 call_1_2=r:call_1_2 call_1_3=r:call_1_3 call_1_4=r:call_1_4]"
	if fmt.Sprint(ids) != want {
		t.Fatalf("ids = %v, want %s", ids, want)
	}
}

func TestContextCancelStopsDriving(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	rn := &Runner{Machine: NewMachine(&FixedClock{T: t0}), Model: ScriptedModel{},
		Tools: ToolExecutorFunc(func(context.Context, ToolCall) (any, error) { cancel(); return "x", nil })}
	run, err := rn.Start(ctx, StartInput{RunID: "r", SessionID: "s", Messages: user("x"),
		Config: RunConfig{Model: scripted(turn("", call("c", "ability/search", nil)), turn("ok")), Tools: []ToolDeclaration{serverTool("ability/search", nil)}}})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v", err)
	}
	if IsTerminal(run.State.Status) {
		t.Fatalf("run ended although it was interrupted: %s", run.State.Status)
	}
}

func TestIDSources(t *testing.T) {
	a, b := RandomIDs{}.NewID("r"), RandomIDs{}.NewID("r")
	if a == b || len(a) != 2+26 {
		t.Fatalf("random ids %q %q", a, b)
	}
	var s SequentialIDs
	if got := []string{s.NewID("r"), s.NewID("r"), s.NewID("s")}; fmt.Sprint(got) != "[r-1 r-2 s-1]" {
		t.Fatalf("sequential ids %v", got)
	}
}

// TestStallResend: a run whose scheduled steps have not moved for the
// stall period schedules them again and moves its UpdatedAt; earlier, or
// without a scheduled step, there is nothing to apply.
func TestStallResend(t *testing.T) {
	clock := &FixedClock{T: t0}
	m := NewMachine(clock)
	out, err := m.Start(context.Background(), StartInput{RunID: "r-1", SessionID: "s-1", Config: RunConfig{Model: scripted(turn("hi"))}, Messages: user("hi")})
	if err != nil {
		t.Fatal(err)
	}
	st := out.State
	clock.T = t0.Add(time.Minute)
	if _, err := m.Apply(context.Background(), st, nil, StallResend{Stall: Stall{After: 2 * time.Minute}}); !errors.Is(err, ErrNothingToApply) {
		t.Fatalf("before the stall period: %v", err)
	}
	clock.T = t0.Add(2 * time.Minute)
	got, err := m.Apply(context.Background(), st, nil, StallResend{Stall: Stall{After: 2 * time.Minute}})
	if err != nil || len(got.Next) != 1 || got.Next[0].Kind != StepModelTurn || !got.State.UpdatedAt.Equal(clock.T) || len(got.Events) != 0 {
		t.Fatalf("after the stall period: %+v %v", got, err)
	}
	if _, err := m.Apply(context.Background(), got.State, nil, StallResend{Stall: Stall{After: 2 * time.Minute}}); !errors.Is(err, ErrNothingToApply) {
		t.Fatalf("right after a resend: %v", err)
	}
}

// TestOpensPending: the decisions that count against MaxOpenPending are
// those that open an item the run waits on an answer to: a client-tool
// request, an approval, a remote agent's question. A result, a handoff,
// a parked remote task and a child run open none.
func TestOpensPending(t *testing.T) {
	for k, want := range map[DecisionKind]bool{
		DecideAwaitClient: true, DecideAwaitApproval: true, DecideRemoteInput: true,
		DecideResult: false, DecideHandoff: false, DecideAwaitRemote: false, DecideAwaitChild: false,
	} {
		if got := opensPending(k); got != want {
			t.Errorf("opensPending(%s) = %v, want %v", k, got, want)
		}
	}
}

// A turn asking more than MaxOpenPending client-tool calls at once
// (parallel tool calls) opens that many requests; the calls beyond get a
// too_many_pending result, and the run goes on once the open ones are
// answered.
func TestOpenPendingCapped(t *testing.T) {
	ctx := context.Background()
	var calls []ToolCallRequest
	for i := 1; i <= MaxOpenPending+2; i++ {
		calls = append(calls, call(fmt.Sprintf("c%d", i), "client/get_calendar", map[string]any{"day": fmt.Sprint(i)}))
	}
	rn := &Runner{Machine: NewMachine(&FixedClock{T: t0}), Model: ScriptedModel{}}
	run, err := rn.Start(ctx, StartInput{RunID: "r-1", SessionID: "s-1",
		Config:       RunConfig{Model: scripted(turn("", calls...), turn("done")), ParallelToolCalls: true},
		RequestTools: []any{clientTool("client/get_calendar")}, Messages: user("hi")})
	if err != nil {
		t.Fatal(err)
	}
	reqs, _ := run.State.Pending()
	if run.State.Status != StatusRuntimeToolPending || len(reqs) != MaxOpenPending {
		t.Fatalf("status %s with %d open requests, want %s with %d", run.State.Status, len(reqs), StatusRuntimeToolPending, MaxOpenPending)
	}
	for _, r := range reqs {
		if err := rn.Resume(ctx, run, ClientResult{RequestID: r.RequestID, Success: true, Result: "ok"}); err != nil {
			t.Fatal(err)
		}
	}
	if run.State.Status != StatusCompleted {
		t.Fatalf("status %s after every request was answered", run.State.Status)
	}
	refused := map[string]bool{}
	for _, r := range run.ToolResults {
		if r.Result.Success {
			continue
		}
		if r.Result.ErrorType != ErrTypeTooManyPending || r.Result.Metadata["max_open_pending"] != MaxOpenPending {
			t.Fatalf("result of %s: %+v", r.ToolCallID, r.Result)
		}
		refused[r.ToolCallID] = true
	}
	if len(refused) != 2 || !refused[fmt.Sprintf("c%d", MaxOpenPending+1)] || !refused[fmt.Sprintf("c%d", MaxOpenPending+2)] {
		t.Fatalf("refused calls %v, want the last two", refused)
	}
	results := 0
	for _, m := range run.Transcript {
		if m.Role == RoleToolResult {
			results++
		}
	}
	if results != MaxOpenPending+2 {
		t.Fatalf("%d tool results in the transcript, want one per call (%d)", results, MaxOpenPending+2)
	}
}
