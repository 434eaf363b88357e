package core

import (
	"context"
	"errors"
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
	apply := func(in Input) Output {
		t.Helper()
		o, err := m.Apply(ctx, st, tr, in)
		if err != nil {
			t.Fatalf("%T: %v", in, err)
		}
		st, tr = o.State, append(tr, o.Messages...)
		return o
	}
	o := apply(ModelReplied{Step: out.Next[0], Reply: ModelReply{ToolCalls: []ToolCallRequest{{ID: "c1", Name: "a2a/x", Parameters: map[string]any{"message": "go"}}}}})
	step := o.Next[0]
	plan, err := m.Plan(ctx, st, tr, step)
	if err != nil || plan.Kind != PlanTool || plan.Tool.Remote != nil {
		t.Fatalf("first plan %+v %v", plan, err)
	}
	o = apply(ToolDecided{Step: step, Decision: Decision{Kind: DecideAwaitRemote, Remote: &RemotePending{TaskID: "t-1", ContextID: "ctx-1", State: "TASK_STATE_WORKING"}, Wait: 2 * time.Second}})
	c := st.Calls[0]
	if st.Status != StatusRunning || c.Status != CallAwaitingRemote || c.StepSeq != 0 || len(o.Next) != 0 || c.Remote.Follows != 1 || !c.Remote.DueAt.Equal(t0.Add(2*time.Second)) {
		t.Fatalf("parked: run %s, call %+v, remote %+v, next %v", st.Status, c, c.Remote, o.Next)
	}
	if due, ok := st.DueAt(time.Hour); !ok || !due.Equal(t0.Add(2*time.Second)) {
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
