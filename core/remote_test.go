package core

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"
)

// TestRemoteCallLifecycle walks a remote agent tool's call through core:
// parked while its task works (a due time, no step), scheduled again by
// FollowRemote only when due and then planned without mediation, turned
// into a client-tool request per question (each round its own request
// id), its answer to be sent with a derived message id, and resolved by
// the executor's result.
func TestRemoteCallLifecycle(t *testing.T) {
	ctx := context.Background()
	clock := &FixedClock{T: t0}
	m := NewMachine(clock)
	decl := ToolDeclaration{Name: "a2a/x", Source: "a2a", Description: "Ask x.", Executor: ExecutorRemoteAgent, Scope: ScopeRun, Parameters: DefaultRemoteAgentParameters()}
	out, err := m.Start(ctx, StartInput{RunID: "r-1", SessionID: "s-1", FirstSeq: 1,
		Config: RunConfig{Model: scripted(turn("done")), Tools: []ToolDeclaration{decl}}, Messages: user("hi")})
	if err != nil {
		t.Fatal(err)
	}
	st, tr := out.State, out.Messages
	apply := applier(t, m, &st, &tr)
	o := apply(ModelReplied{Step: out.Next[0], Reply: ModelReply{ToolCalls: []ToolCallRequest{{ID: "c1", Name: "a2a/x", Parameters: map[string]any{"message": "go"}}}}})
	step := o.Next[0]
	plan, err := m.Plan(ctx, st, tr, step)
	if err != nil || plan.Kind != PlanTool || plan.Tool.Remote != nil {
		t.Fatalf("first plan %+v %v", plan, err)
	}
	// A decision to park the call with no task to follow is refused.
	for _, kind := range []DecisionKind{DecideAwaitRemote, DecideRemoteInput} {
		if _, err := m.Apply(ctx, st, tr, ToolDecided{Step: step, Decision: Decision{Kind: kind, Remote: &RemotePending{State: "TASK_STATE_WORKING"}}}); !errors.Is(err, ErrInvalidInput) {
			t.Fatalf("%s without a task id: %v, want invalid input", kind, err)
		}
	}
	o = apply(ToolDecided{Step: step, Decision: Decision{Kind: DecideAwaitRemote, Remote: &RemotePending{TaskID: "t-1", ContextID: "ctx-1", State: "TASK_STATE_WORKING"}, Wait: 2 * time.Second}})
	c := st.Calls[0]
	if st.Status != StatusRunning || c.Status != CallAwaitingRemote || c.StepSeq != 0 || len(o.Next) != 0 || c.Remote.Follows != 1 || !c.Remote.DueAt.Equal(t0.Add(2*time.Second)) {
		t.Fatalf("parked: run %s, call %+v, remote %+v, next %v", st.Status, c, c.Remote, o.Next)
	}
	if due, ok := st.DueAt(Stall{After: time.Hour}); !ok || !due.Equal(t0.Add(2*time.Second)) {
		t.Fatalf("run due %s %v", due, ok)
	}
	if p, _ := m.Plan(ctx, st, tr, step); p.Kind != PlanSkip {
		t.Fatalf("the parked call's old step plans %s, want skip", p.Kind)
	}
	clock.T = t0.Add(time.Second)
	if _, err := m.Apply(ctx, st, tr, FollowRemote{}); !errors.Is(err, ErrNothingToApply) {
		t.Fatalf("follow before due: %v", err)
	}
	clock.T = t0.Add(2 * time.Second)
	o = apply(FollowRemote{})
	if len(o.Next) != 1 || st.Calls[0].Status != CallPending || st.Calls[0].Remote.DueAt != nil {
		t.Fatalf("followed: next %v, call %+v", o.Next, st.Calls[0])
	}
	step = o.Next[0]
	plan, err = m.Plan(ctx, st, tr, step)
	if err != nil || plan.Kind != PlanTool || plan.Tool.Remote == nil || plan.Tool.Remote.TaskID != "t-1" {
		t.Fatalf("follow plan %+v %v", plan, err)
	}
	ask := func(asked string) PendingToolRequest {
		t.Helper()
		apply(ToolDecided{Step: step, Decision: Decision{Kind: DecideRemoteInput, Remote: &RemotePending{TaskID: "t-1", ContextID: "ctx-1", Question: map[string]any{"question": "Which?"}, Asked: asked}}})
		reqs, _ := st.Pending()
		if st.Status != StatusRuntimeToolPending || len(reqs) != 1 || reqs[0].Parameters["question"] != "Which?" || reqs[0].Parameters["task_id"] != "t-1" || st.Calls[0].Remote.Asked != asked {
			t.Fatalf("asked: run %s, pending %+v", st.Status, reqs)
		}
		return reqs[0]
	}
	first := ask("q1")
	o = apply(ClientResult{RequestID: first.RequestID, Success: true, Result: "Paris"})
	c = st.Calls[0]
	if len(o.Next) != 1 || c.Status != CallPending || c.Remote.Reply == nil || c.Remote.Reply.Result != "Paris" || c.Remote.Reply.MessageID != derivedID("msg", "r-1", first.RequestID) || c.Remote.Question != nil {
		t.Fatalf("answered: next %v, call %+v, remote %+v", o.Next, c, c.Remote)
	}
	step = o.Next[0]
	if second := ask("q2"); second.RequestID == first.RequestID {
		t.Fatal("a second question reuses the first request's id")
	}
	reqs, _ := st.Pending()
	o = apply(ClientResult{RequestID: reqs[0].RequestID, Success: true, Result: "Rome"})
	step = o.Next[0]
	apply(ToolExecuted{Step: step, Output: map[string]any{"success": true, "result": "Sunny in Rome"}})
	if st.Calls != nil || st.ModelStep == 0 {
		t.Fatalf("resolved: calls %+v, model step %d", st.Calls, st.ModelStep)
	}
}

// TestAbandonedRemoteTasks: a remote task the run gives up on (the run is
// cancelled while the task works or while its step is in flight, the
// task's question expires or is answered with a failure) is listed for
// cancelling; a task that ended on its own, a call without a task and an
// unchanged call are not.
func TestAbandonedRemoteTasks(t *testing.T) {
	ctx := context.Background()
	decl := ToolDeclaration{Name: "a2a/x", Source: "a2a", Description: "Ask x.", Executor: ExecutorRemoteAgent, Scope: ScopeRun, Parameters: DefaultRemoteAgentParameters()}
	working := &RemotePending{TaskID: "t-1", ContextID: "ctx-1", State: "TASK_STATE_WORKING"}
	// started parks the run's one call c1 as decided, with a second call
	// c2 that has no task yet when two is set.
	started := func(t *testing.T, clock *FixedClock, d *Decision, two bool) (*Machine, RunState, []Message, Step) {
		t.Helper()
		m := NewMachine(clock)
		out, err := m.Start(ctx, StartInput{RunID: "r-1", SessionID: "s-1", FirstSeq: 1,
			Config: RunConfig{Model: scripted(turn("done")), Tools: []ToolDeclaration{decl}, ParallelToolCalls: true}, Messages: user("hi")})
		if err != nil {
			t.Fatal(err)
		}
		calls := []ToolCallRequest{{ID: "c1", Name: "a2a/x", Parameters: map[string]any{"message": "go"}}}
		if two {
			calls = append(calls, ToolCallRequest{ID: "c2", Name: "a2a/x", Parameters: map[string]any{"message": "too"}})
		}
		o, err := m.Apply(ctx, out.State, out.Messages, ModelReplied{Step: out.Next[0], Reply: ModelReply{ToolCalls: calls}})
		if err != nil {
			t.Fatal(err)
		}
		st, tr, step := o.State, append(out.Messages, o.Messages...), o.Next[0]
		if d != nil {
			o, err = m.Apply(ctx, st, tr, ToolDecided{Step: step, Decision: *d})
			if err != nil {
				t.Fatal(err)
			}
			st, tr = o.State, append(tr, o.Messages...)
		}
		return m, st, tr, step
	}
	want := []AbandonedTask{{ToolCallID: "c1", ToolName: "a2a/x", TaskID: "t-1"}}
	// apply applies in to st and lists the tasks the transition gave up.
	apply := func(t *testing.T, m *Machine, st RunState, tr []Message, in Input) (Output, []AbandonedTask) {
		t.Helper()
		out, err := m.Apply(ctx, st, tr, in)
		if err != nil {
			t.Fatalf("%T: %v", in, err)
		}
		return out, AbandonedRemoteTasks(st, out)
	}
	parked := &Decision{Kind: DecideAwaitRemote, Remote: working, Wait: time.Second}
	asking := func() *Decision {
		return &Decision{Kind: DecideRemoteInput, Remote: &RemotePending{TaskID: "t-1", State: "TASK_STATE_INPUT_REQUIRED", Question: map[string]any{"question": "Which?"}}}
	}

	t.Run("cancelled while the task works", func(t *testing.T) {
		m, st, tr, _ := started(t, &FixedClock{T: t0}, parked, true)
		if _, got := apply(t, m, st, tr, Cancel{Reason: "enough"}); !slices.Equal(got, want) {
			t.Fatalf("abandoned %+v, want %+v", got, want)
		}
	})
	t.Run("interrupted while the step follows the task", func(t *testing.T) {
		clock := &FixedClock{T: t0}
		m, st, tr, _ := started(t, clock, parked, false)
		clock.T = t0.Add(time.Second)
		o, _ := apply(t, m, st, tr, FollowRemote{})
		if _, got := apply(t, m, o.State, tr, Interrupt{Reason: "stop"}); !slices.Equal(got, want) {
			t.Fatalf("abandoned %+v, want %+v", got, want)
		}
	})
	t.Run("question expired", func(t *testing.T) {
		clock := &FixedClock{T: t0}
		m, st, tr, _ := started(t, clock, asking(), false)
		clock.T = t0.Add(DefaultPendingTTL)
		if _, got := apply(t, m, st, tr, Expire{}); !slices.Equal(got, want) {
			t.Fatalf("abandoned %+v, want %+v", got, want)
		}
	})
	t.Run("question answered with a failure", func(t *testing.T) {
		m, st, tr, _ := started(t, &FixedClock{T: t0}, asking(), false)
		reqs, _ := st.Pending()
		if _, got := apply(t, m, st, tr, ClientResult{RequestID: reqs[0].RequestID, Success: false, Error: "no idea"}); !slices.Equal(got, want) {
			t.Fatalf("abandoned %+v, want %+v", got, want)
		}
	})
	t.Run("ended on its own", func(t *testing.T) {
		clock := &FixedClock{T: t0}
		m, st, tr, _ := started(t, clock, parked, false)
		clock.T = t0.Add(time.Second)
		// A follow-up that changes nothing lists nothing; the executor's
		// result (even one that says cancelled) is the task's own end.
		o, got := apply(t, m, st, tr, FollowRemote{})
		if len(got) != 0 {
			t.Fatalf("abandoned %+v after a follow-up", got)
		}
		if _, got := apply(t, m, o.State, tr, ToolExecuted{Step: o.Next[0], Output: map[string]any{"success": false, "error": "the task failed", "error_type": "cancelled"}}); len(got) != 0 {
			t.Fatalf("abandoned %+v after the executor's result", got)
		}
	})
	t.Run("no task yet", func(t *testing.T) {
		m, st, tr, _ := started(t, &FixedClock{T: t0}, nil, false)
		if _, got := apply(t, m, st, tr, Cancel{Reason: "enough"}); len(got) != 0 {
			t.Fatalf("abandoned %+v for a call that never sent its message", got)
		}
	})
}

// TestRemoteFollowsAndRounds: a call's Follows counts the follow-ups
// scheduled since its last message was sent (it starts again at 1 once
// the client's answer went out), and Rounds counts the task's questions.
func TestRemoteFollowsAndRounds(t *testing.T) {
	ctx := context.Background()
	clock := &FixedClock{T: t0}
	m := NewMachine(clock)
	decl := ToolDeclaration{Name: "a2a/x", Source: "a2a", Description: "Ask x.", Executor: ExecutorRemoteAgent, Scope: ScopeRun, Parameters: DefaultRemoteAgentParameters()}
	out, err := m.Start(ctx, StartInput{RunID: "r-1", SessionID: "s-1", FirstSeq: 1,
		Config: RunConfig{Model: scripted(turn("done")), Tools: []ToolDeclaration{decl}}, Messages: user("hi")})
	if err != nil {
		t.Fatal(err)
	}
	st, tr := out.State, out.Messages
	apply := applier(t, m, &st, &tr)
	step := apply(ModelReplied{Step: out.Next[0], Reply: ModelReply{ToolCalls: []ToolCallRequest{{ID: "c1", Name: "a2a/x", Parameters: map[string]any{"message": "go"}}}}}).Next[0]
	park := func(wantFollows int) {
		t.Helper()
		apply(ToolDecided{Step: step, Decision: Decision{Kind: DecideAwaitRemote, Remote: &RemotePending{TaskID: "t-1", State: "TASK_STATE_WORKING"}, Wait: time.Second}})
		if r := st.Calls[0].Remote; r.Follows != wantFollows || r.Reply != nil {
			t.Fatalf("parked: follows %d (want %d), reply %+v", r.Follows, wantFollows, r.Reply)
		}
		clock.T = clock.T.Add(time.Second)
		step = apply(FollowRemote{}).Next[0]
	}
	ask := func(wantRounds int) {
		t.Helper()
		apply(ToolDecided{Step: step, Decision: Decision{Kind: DecideRemoteInput, Remote: &RemotePending{TaskID: "t-1", Question: map[string]any{"question": "Which?"}}}})
		if r := st.Calls[0].Remote; r.Rounds != wantRounds || r.Follows != 0 {
			t.Fatalf("asked: rounds %d (want %d), follows %d", r.Rounds, wantRounds, r.Follows)
		}
		reqs, _ := st.Pending()
		step = apply(ClientResult{RequestID: reqs[0].RequestID, Success: true, Result: "this one"}).Next[0]
	}
	park(1)
	park(2)
	ask(1)
	park(1) // the answer was sent with this step
	park(2)
	ask(2)
	park(1)
}

// TestAbandonedBehindAnEarlierCall: a remote task whose question the
// client answers with a failure is given up on also while an earlier
// parallel call still runs, when its result waits in the state to be
// appended after that call's.
func TestAbandonedBehindAnEarlierCall(t *testing.T) {
	ctx := context.Background()
	m := NewMachine(&FixedClock{T: t0})
	decl := ToolDeclaration{Name: "a2a/x", Source: "a2a", Description: "Ask x.", Executor: ExecutorRemoteAgent, Scope: ScopeRun, Parameters: DefaultRemoteAgentParameters()}
	out, err := m.Start(ctx, StartInput{RunID: "r-1", SessionID: "s-1", FirstSeq: 1, Messages: user("hi"),
		Config: RunConfig{Model: scripted(turn("done")), Tools: []ToolDeclaration{serverTool("ability/search", nil), decl}, ParallelToolCalls: true}})
	if err != nil {
		t.Fatal(err)
	}
	o, err := m.Apply(ctx, out.State, out.Messages, ModelReplied{Step: out.Next[0], Reply: ModelReply{ToolCalls: []ToolCallRequest{
		{ID: "c1", Name: "ability/search", Parameters: map[string]any{"q": "a"}}, {ID: "c2", Name: "a2a/x", Parameters: map[string]any{"message": "go"}}}}})
	if err != nil || len(o.Next) != 2 {
		t.Fatalf("%v, next %v", err, o.Next)
	}
	tr := append(out.Messages, o.Messages...)
	o, err = m.Apply(ctx, o.State, tr, ToolDecided{Step: o.Next[1], Decision: Decision{Kind: DecideRemoteInput,
		Remote: &RemotePending{TaskID: "t-2", State: "TASK_STATE_INPUT_REQUIRED", Question: map[string]any{"question": "Which?"}}}})
	if err != nil {
		t.Fatal(err)
	}
	st := o.State
	reqs, _ := st.Pending()
	answered, err := m.Apply(ctx, st, tr, ClientResult{RequestID: reqs[0].RequestID, Success: false, Error: "no idea"})
	if err != nil {
		t.Fatal(err)
	}
	if _, c := answered.State.call("c2"); c == nil || c.Status != CallResolved || len(answered.ToolResults) != 0 {
		t.Fatalf("c2 %+v, results %+v: not waiting behind c1", c, answered.ToolResults)
	}
	want := []AbandonedTask{{ToolCallID: "c2", ToolName: "a2a/x", TaskID: "t-2"}}
	if got := AbandonedRemoteTasks(st, answered); !slices.Equal(got, want) {
		t.Fatalf("abandoned %+v, want %+v", got, want)
	}
}
