package durable_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"

	"github.com/baton-agents/baton/core"
	"github.com/baton-agents/baton/internal/a2atool"
	"github.com/baton-agents/baton/internal/durable"
	"github.com/baton-agents/baton/internal/executors"
)

// remoteAgent is an A2A agent served by the official Go SDK's server in
// process. What it does depends on the first message's text: "quick"
// answers at once, "slow" works until released, "ask" asks for a city
// and then answers with the city it was given, "fail" fails. It counts
// the messages it received by message id.
type remoteAgent struct {
	mu      sync.Mutex
	got     map[string]int
	release chan struct{}
	srv     *httptest.Server
	// cancels counts the CancelTask requests by task id.
	cancels map[string]int
}

func newRemoteAgent(t *testing.T) *remoteAgent {
	t.Helper()
	ra := &remoteAgent{got: map[string]int{}, release: make(chan struct{}), cancels: map[string]int{}}
	mux := http.NewServeMux()
	ra.srv = httptest.NewServer(mux)
	t.Cleanup(ra.srv.Close)
	card := &a2a.AgentCard{Name: "Remote", Version: "1.0.0", Description: "A test agent.",
		SupportedInterfaces: []*a2a.AgentInterface{a2a.NewAgentInterface(ra.srv.URL+"/a2a", a2a.TransportProtocolJSONRPC)},
		DefaultInputModes:   []string{"text/plain"}, DefaultOutputModes: []string{"text/plain"}}
	mux.Handle("/.well-known/agent-card.json", a2asrv.NewStaticAgentCardHandler(card))
	mux.Handle("/a2a", a2asrv.NewJSONRPCHandler(a2asrv.NewHandler(ra)))
	return ra
}

func (ra *remoteAgent) received(id string) int {
	ra.mu.Lock()
	defer ra.mu.Unlock()
	return ra.got[id]
}

func (ra *remoteAgent) total() int {
	ra.mu.Lock()
	defer ra.mu.Unlock()
	n := 0
	for _, c := range ra.got {
		n += c
	}
	return n
}

func text(m *a2a.Message) string {
	var s []string
	for _, p := range m.Parts {
		s = append(s, p.Text())
	}
	return strings.Join(s, " ")
}

func (ra *remoteAgent) Execute(ctx context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	ra.mu.Lock()
	ra.got[ec.Message.ID]++
	ra.mu.Unlock()
	return func(yield func(a2a.Event, error) bool) {
		if ec.StoredTask != nil {
			// The answer to "ask"'s question.
			if yield(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateWorking, nil), nil) &&
				yield(a2a.NewArtifactEvent(ec, a2a.NewTextPart("Sunny in "+text(ec.Message))), nil) {
				yield(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateCompleted, nil), nil)
			}
			return
		}
		if !yield(a2a.NewSubmittedTask(ec, ec.Message), nil) {
			return
		}
		switch text(ec.Message) {
		case "quick":
			if yield(a2a.NewArtifactEvent(ec, a2a.NewTextPart("quick answer")), nil) {
				yield(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateCompleted, nil), nil)
			}
		case "slow":
			if !yield(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateWorking, nil), nil) {
				return
			}
			select {
			case <-ra.release:
			case <-ctx.Done():
				return
			}
			if yield(a2a.NewArtifactEvent(ec, a2a.NewTextPart("slow answer")), nil) {
				yield(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateCompleted, nil), nil)
			}
		case "ask":
			q := a2a.NewMessage(a2a.MessageRoleAgent, a2a.NewTextPart("Which city?"), a2a.NewDataPart(map[string]any{"choices": []any{"Paris", "Rome"}}))
			yield(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateInputRequired, q), nil)
		default:
			yield(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateFailed, a2a.NewMessage(a2a.MessageRoleAgent, a2a.NewTextPart("no capacity"))), nil)
		}
	}
}

func (ra *remoteAgent) Cancel(_ context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	ra.mu.Lock()
	ra.cancels[string(ec.TaskID)]++
	ra.mu.Unlock()
	return func(yield func(a2a.Event, error) bool) {
		yield(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateCanceled, nil), nil)
	}
}

// remoteFile declares the remote agent as a tool of the demo agent.
func remoteFile(ra *remoteAgent) string {
	return `{"agents":[{"slug":"demo","model":{"provider":"scripted"},"allow_overrides":["model"],"tools":[
  {"name":"a2a/remote","description":"Ask the remote agent.","executor":{"type":"a2a","card_url":"` + ra.srv.URL + `/.well-known/agent-card.json","timeout":"300ms"}}]}]}`
}

// newRemoteHarness is a harness whose demo agent has the remote agent
// as its tool a2a/remote; wrapStore may wrap its store.
func newRemoteHarness(t *testing.T, ra *remoteAgent, wrapStore func(durable.Store) durable.Store) *harness {
	t.Helper()
	h := newHarnessFactories(t, remoteFile(ra), wrapStore,
		map[string]executors.Factory{"a2a": a2atool.Factory(a2atool.Options{Poll: 20 * time.Millisecond})})
	h.opts.Limits.RemoteFollow, h.opts.Limits.RemoteFollowMax = 2*time.Second, 5*time.Second
	h.eng = durable.New(h.opts)
	return h
}

// askRemote starts a run whose model calls the remote agent with
// message, then answers with what the tool returned.
func (h *harness) askRemote(t *testing.T, message string) string {
	t.Helper()
	return h.start(t, scripted(turn("Asking.", call("c1", "a2a/remote", map[string]any{"message": message})), turn("Done.")), nil)
}

// toolResult is the run's one recorded tool result.
func (h *harness) toolResult(t *testing.T, runID string) core.ToolResult {
	t.Helper()
	res, _, err := h.store.ToolRecords(context.Background(), runID, math.MaxInt64)
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 1 {
		t.Fatalf("want one tool result, got %d", len(res))
	}
	r := res[0]
	if r.ResultRef != "" {
		// The body is the call's tool_result message.
		msgs, err := h.store.Messages(context.Background(), "acme", h.run(t, runID).SessionID, 0, math.MaxInt64, 1000)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range msgs {
			if m.Role == core.RoleToolResult && m.Metadata[core.MetaToolCallID] == r.ToolCallID {
				r.Result.Result = m.Content
			}
		}
	}
	return r.Result
}

func (h *harness) sweep(t *testing.T) {
	t.Helper()
	if _, err := h.eng.Sweep(context.Background(), 100); err != nil {
		t.Fatal(err)
	}
}

// TestRemoteAgentCompletesWithinTheStep: the task completes while the
// step follows it: the artifact is the result, one message was sent,
// with the call's idempotency key as its id.
func TestRemoteAgentCompletesWithinTheStep(t *testing.T) {
	ra := newRemoteAgent(t)
	h := newRemoteHarness(t, ra, nil)
	id := h.askRemote(t, "quick")
	h.pump(t)
	if st := h.run(t, id); st.Status != core.StatusCompleted {
		t.Fatalf("status %s, want completed", st.Status)
	}
	res := h.toolResult(t, id)
	if !res.Success || res.Result != "quick answer" || res.Metadata["a2a_state"] != "TASK_STATE_COMPLETED" {
		t.Fatalf("result %+v", res)
	}
	if n := ra.received(core.IdempotencyKey(id, "c1")); n != 1 || ra.total() != 1 {
		t.Fatalf("the agent received the call's message %d times (%d messages), want once", n, ra.total())
	}
}

// TestRemoteAgentStillWorkingParksTheCall: a task still working when
// the step's time is up parks the call (awaiting_remote, no step, a due
// time the run's due time includes); the sweeper schedules its step when
// due, with a doubling wait, and the call completes once the task does,
// the message having been sent once.
func TestRemoteAgentStillWorkingParksTheCall(t *testing.T) {
	ra := newRemoteAgent(t)
	h := newRemoteHarness(t, ra, nil)
	id := h.askRemote(t, "slow")
	h.pump(t)
	parked := func(wait time.Duration) {
		t.Helper()
		st := h.run(t, id)
		if st.Status != core.StatusRunning || len(st.Calls) != 1 || st.Calls[0].Status != core.CallAwaitingRemote || st.Calls[0].StepSeq != 0 {
			t.Fatalf("run %s, calls %+v: want the call awaiting_remote with no step", st.Status, st.Calls)
		}
		r := st.Calls[0].Remote
		want := h.clock.T.Add(wait)
		if r == nil || r.TaskID == "" || r.DueAt == nil || !r.DueAt.Equal(want) {
			t.Fatalf("remote %+v, want a task due at %s", r, want)
		}
		if due, ok := st.DueAt(core.Stall{After: time.Hour}); !ok || !due.Equal(want) {
			t.Fatalf("run due at %s (%v), want %s", due, ok, want)
		}
		if len(st.ScheduledSteps()) != 0 {
			t.Fatal("a parked call has a scheduled step")
		}
	}
	parked(2 * time.Second)
	h.clock.T = h.clock.T.Add(time.Second)
	h.sweep(t)
	h.pump(t)
	parked(time.Second) // not due yet: nothing moved
	h.clock.T = h.clock.T.Add(time.Second)
	h.sweep(t)
	h.pump(t)
	parked(4 * time.Second) // followed again, still working: twice the wait
	close(ra.release)
	h.clock.T = h.clock.T.Add(4 * time.Second)
	h.sweep(t)
	h.pump(t)
	if st := h.run(t, id); st.Status != core.StatusCompleted {
		t.Fatalf("status %s, want completed", st.Status)
	}
	if res := h.toolResult(t, id); !res.Success || res.Result != "slow answer" {
		t.Fatalf("result %+v", res)
	}
	if ra.total() != 1 {
		t.Fatalf("the agent received %d messages, want 1", ra.total())
	}
}

// TestRemoteAgentInputRequired: a task that asks for input becomes a
// client-tool request carrying the question and the task id; the
// client's answer is sent to the task (once, even when the step runs
// twice) and the call completes with the task.
func TestRemoteAgentInputRequired(t *testing.T) {
	ra := newRemoteAgent(t)
	h := newRemoteHarness(t, ra, nil)
	id := h.askRemote(t, "ask")
	h.pump(t)
	st := h.run(t, id)
	reqs, _ := st.Pending()
	if st.Status != core.StatusRuntimeToolPending || len(reqs) != 1 {
		t.Fatalf("status %s, pending %+v: want one client-tool request", st.Status, reqs)
	}
	q := reqs[0].Parameters
	if q["question"] != "Which city?" || q["task_id"] != st.Calls[0].Remote.TaskID || q["task_id"] == "" {
		t.Fatalf("request parameters %v", q)
	}
	if canon(t, q["data"]) != `[{"choices":["Paris","Rome"]}]` {
		t.Fatalf("request data %s", canon(t, q["data"]))
	}
	if _, err := h.eng.Apply(context.Background(), "acme", id, core.ClientResult{RequestID: reqs[0].RequestID, Success: true, Result: "Paris"}); err != nil {
		t.Fatal(err)
	}
	// The follow-up step runs twice (a redelivery): it is sent once.
	err := h.q.Drain(context.Background(), 100, func(step core.Step, m core.ReceivedMessage) error {
		if step.Kind != core.StepToolCall {
			return h.eng.HandleStep(context.Background(), step, durable.Attempt{ReceiveCount: 1, Owner: "model"})
		}
		for i, owner := range []string{"first", "second"} {
			if err := h.eng.HandleStep(context.Background(), step, durable.Attempt{ReceiveCount: i + 1, Owner: owner}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if st := h.run(t, id); st.Status != core.StatusCompleted {
		t.Fatalf("status %s, want completed", st.Status)
	}
	if res := h.toolResult(t, id); !res.Success || res.Result != "Sunny in Paris" {
		t.Fatalf("result %+v", res)
	}
	if ra.total() != 2 {
		t.Fatalf("the agent received %d messages, want 2 (the call's and the answer)", ra.total())
	}
}

// crashAfterSend fails the first commit after a remote task was
// recorded, as a worker killed between the send and its commit.
type crashAfterSend struct {
	durable.Store
	mu    sync.Mutex
	armed bool
	// crashed: a commit failed after a recorded send.
	crashed bool
}

func (s *crashAfterSend) SettleIntent(ctx context.Context, runID, callID, owner string, sent *core.RemoteSent) error {
	s.mu.Lock()
	s.armed = s.armed || sent != nil
	s.mu.Unlock()
	return s.Store.SettleIntent(ctx, runID, callID, owner, sent)
}

func (s *crashAfterSend) Commit(ctx context.Context, w core.Write) error {
	s.mu.Lock()
	armed := s.armed
	s.armed = false
	s.crashed = s.crashed || armed
	s.mu.Unlock()
	if armed {
		return errors.New("worker killed")
	}
	return s.Store.Commit(ctx, w)
}

// TestRemoteAgentRedeliveryNeverSendsAgain: an attempt that sent the
// message and recorded its task, then died before its commit, leaves
// the task to the next attempt, which follows it and sends nothing.
func TestRemoteAgentRedeliveryNeverSendsAgain(t *testing.T) {
	ra := newRemoteAgent(t)
	var crash *crashAfterSend
	h := newRemoteHarness(t, ra, func(s durable.Store) durable.Store { crash = &crashAfterSend{Store: s}; return crash })
	id := h.askRemote(t, "quick")
	err := h.q.Drain(context.Background(), 100, func(step core.Step, m core.ReceivedMessage) error {
		err := h.eng.HandleStep(context.Background(), step, durable.Attempt{ReceiveCount: 1, Owner: "killed"})
		if err != nil && step.Kind == core.StepToolCall {
			err = h.eng.HandleStep(context.Background(), step, durable.Attempt{ReceiveCount: 2, Owner: "next"})
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if st := h.run(t, id); st.Status != core.StatusCompleted {
		t.Fatalf("status %s, want completed", st.Status)
	}
	if res := h.toolResult(t, id); !res.Success || res.Result != "quick answer" {
		t.Fatalf("result %+v", res)
	}
	if ra.total() != 1 {
		t.Fatalf("the agent received %d messages, want 1", ra.total())
	}
	if !crash.crashed {
		t.Fatal("no attempt recorded its sent message before the crash")
	}
}

// TestRemoteAgentInDoubtWithoutARecordedTask: an attempt interrupted
// before any task was recorded leaves the call in doubt: the next
// attempt sends nothing and the call fails in_doubt.
func TestRemoteAgentInDoubtWithoutARecordedTask(t *testing.T) {
	ra := newRemoteAgent(t)
	h := newRemoteHarness(t, ra, nil)
	id := h.askRemote(t, "quick")
	// The earlier attempt claimed the call long ago and died.
	if _, err := h.store.ClaimIntent(context.Background(), id, "c1", "dead", h.clock.T.Add(-time.Hour), time.Minute); err != nil {
		t.Fatal(err)
	}
	h.pump(t)
	if res := h.toolResult(t, id); res.Success || res.ErrorType != core.ErrTypeInDoubt || !strings.HasSuffix(res.Error, "may have sent its message to the remote agent, and the tool is not marked retry_safe, so it was not sent again.") {
		t.Fatalf("result %+v, want in_doubt, its message not sent again", res)
	}
	if ra.total() != 0 {
		t.Fatalf("the agent received %d messages, want none", ra.total())
	}
}

// TestRemoteAgentFailedTask: a task that fails is a failed result
// naming the remote state and its message.
func TestRemoteAgentFailedTask(t *testing.T) {
	ra := newRemoteAgent(t)
	h := newRemoteHarness(t, ra, nil)
	id := h.askRemote(t, "fail")
	h.pump(t)
	res := h.toolResult(t, id)
	if res.Success || res.ErrorType != a2atool.ErrTypeRemoteTask || !strings.Contains(res.Error, "TASK_STATE_FAILED") || !strings.Contains(res.Error, "no capacity") {
		t.Fatalf("result %+v", res)
	}
	if st := h.run(t, id); st.Status != core.StatusCompleted {
		t.Fatalf("status %s, want completed (the model saw the failure)", st.Status)
	}
}

// TestRemoteAgentUnreachable: an agent card that cannot be read is a
// retryable step error that sends nothing, and the call's next attempt
// is a first one (not in doubt); the run's stream hears of each failed
// attempt at once (a tool_retry event naming the tool, the attempt, the
// reason and the wait before the next), not only after the last one.
func TestRemoteAgentUnreachable(t *testing.T) {
	ra := newRemoteAgent(t)
	h := newRemoteHarness(t, ra, nil)
	h.opts.Limits.Redelivery = 20 * time.Second
	h.eng = durable.New(h.opts)
	id := h.askRemote(t, "quick")
	ra.srv.Close()
	err := h.q.Drain(context.Background(), 100, func(step core.Step, m core.ReceivedMessage) error {
		err := h.eng.HandleStep(context.Background(), step, durable.Attempt{ReceiveCount: 1, Owner: "a"})
		if step.Kind == core.StepToolCall {
			if err == nil || !core.IsRetryable(err) || !strings.Contains(err.Error(), "agent card") {
				t.Fatalf("step error %v, want a retryable error naming the agent card", err)
			}
			evs, eerr := h.store.Events(context.Background(), id, 0, math.MaxInt64, 100)
			if eerr != nil {
				t.Fatal(eerr)
			}
			var retries []core.Event
			for _, e := range evs {
				if e.Type == core.EventToolRetry {
					retries = append(retries, e)
				}
			}
			if len(retries) != 1 {
				t.Fatalf("%d tool_retry events after the failed attempt, want 1", len(retries))
			}
			var d core.ToolRetryData
			b, _ := json.Marshal(retries[0].Data)
			if json.Unmarshal(b, &d) != nil || d.ToolName != "a2a/remote" || d.ToolCallID != "c1" || d.Attempt != 1 || d.Attempts != 5 /* the default MaxReceives */ ||
				d.Wait != "20s" || !strings.Contains(d.Reason, "agent card") {
				t.Fatalf("tool_retry %s", b)
			}
			if st := h.run(t, id); st.Status != core.StatusRunning || len(st.ScheduledSteps()) != 1 {
				t.Fatalf("after the event: status %s, steps %v (the step stays current)", st.Status, st.ScheduledSteps())
			}
			c, cerr := h.store.ClaimIntent(context.Background(), id, "c1", "b", h.clock.T, time.Minute)
			if cerr != nil || !c.Claimed || c.Previous {
				t.Fatalf("claim after the failed attempt: %+v %v, want a first attempt", c, cerr)
			}
			return nil
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

func (ra *remoteAgent) cancelled(task string) int {
	ra.mu.Lock()
	defer ra.mu.Unlock()
	return ra.cancels[task]
}

// routerTasks cancels remote tasks with the harness's a2a executors, as
// the composition root's adapter does.
type routerTasks struct{ r *executors.Router }

func (rt routerTasks) CancelRemoteTask(ctx context.Context, tenant, agent, tool, taskID string) error {
	e, _ := rt.r.Lookup(agent, tool)
	return e.(core.RemoteTaskCanceller).CancelTask(ctx, tenant, taskID)
}

// failingTasks never reaches the remote agent.
type failingTasks struct{ calls *int }

func (f failingTasks) CancelRemoteTask(context.Context, string, string, string, string) error {
	*f.calls++
	return errors.New("connection refused")
}

// unsentRemote lists the run's unsent remote-cancel records as the
// sweeper would see them at now.
func (h *harness) unsentRemote(t *testing.T, now time.Time) []core.Notification {
	t.Helper()
	ns, err := h.store.UnsentNotifications(context.Background(), now, 0)
	if err != nil {
		t.Fatal(err)
	}
	var out []core.Notification
	for _, n := range ns {
		if n.Remote != nil {
			out = append(out, n)
		}
	}
	return out
}

// TestRemoteTaskCancelledWhenTheRunEnds: a run cancelled while its call's
// remote task works stores one record asking the remote agent to cancel
// the task. A process with the A2A client (the worker) cancels it at
// once; one without (the API) leaves it, and the sweeper cancels it once
// NotifyAfter has passed, once. A remote agent that cannot be reached is
// tried again with a backoff, and given up after CallbackAttempts.
func TestRemoteTaskCancelledWhenTheRunEnds(t *testing.T) {
	ctx := context.Background()
	parked := func(t *testing.T, h *harness) (string, string) {
		t.Helper()
		id := h.askRemote(t, "slow")
		h.pump(t)
		st := h.run(t, id)
		if len(st.Calls) != 1 || st.Calls[0].Status != core.CallAwaitingRemote {
			t.Fatalf("calls %+v, want the call awaiting its remote task", st.Calls)
		}
		return id, st.Calls[0].Remote.TaskID
	}
	cancel := func(t *testing.T, h *harness, e *durable.Runner, id string) {
		t.Helper()
		if _, err := e.Apply(ctx, "acme", id, core.Cancel{Reason: "not needed"}); err != nil {
			t.Fatal(err)
		}
		if st := h.run(t, id); st.Status != core.StatusCancelled {
			t.Fatalf("status %s, want cancelled", st.Status)
		}
	}

	// cancelledOnce checks the remote agent got one cancel of task and no
	// remote-cancel record is left unsent.
	cancelledOnce := func(t *testing.T, h *harness, ra *remoteAgent, task string) {
		t.Helper()
		if n := ra.cancelled(task); n != 1 {
			t.Fatalf("the remote agent got %d cancels of task %s, want 1", n, task)
		}
		if ns := h.unsentRemote(t, h.clock.T.Add(time.Hour)); len(ns) != 0 {
			t.Fatalf("unsent remote-cancel records left: %+v", ns)
		}
	}

	t.Run("by the committing process", func(t *testing.T) {
		ra := newRemoteAgent(t)
		h := newRemoteHarness(t, ra, nil)
		h.opts.RemoteTasks = routerTasks{h.opts.Tools.(*executors.Router)}
		h.eng = durable.New(h.opts)
		id, task := parked(t, h)
		cancel(t, h, h.eng, id)
		cancelledOnce(t, h, ra, task)
	})

	t.Run("by the sweeper", func(t *testing.T) {
		ra := newRemoteAgent(t)
		h := newRemoteHarness(t, ra, nil)
		id, task := parked(t, h)
		cancel(t, h, h.eng, id) // the API: no A2A client
		ns := h.unsentRemote(t, h.clock.T.Add(time.Hour))
		if ra.cancelled(task) != 0 || len(ns) != 1 || len(ns[0].Remote.Tasks) != 1 || ns[0].Remote.Tasks[0] != (core.AbandonedTask{ToolCallID: "c1", ToolName: "a2a/remote", TaskID: task}) || ns[0].Remote.Agent != "demo" || ns[0].Remote.Tenant != "acme" {
			t.Fatalf("after the API's cancel: %d cancels, records %+v", ra.cancelled(task), ns)
		}
		// The sweeper has the A2A client and no publisher (a deployment
		// without an event bus): it still looks for the records.
		opts := h.opts
		opts.RemoteTasks, opts.Notifier = routerTasks{h.opts.Tools.(*executors.Router)}, nil
		sweeper := durable.New(opts)
		if _, err := sweeper.Sweep(ctx, 100); err != nil {
			t.Fatal(err)
		}
		if n := ra.cancelled(task); n != 0 {
			t.Fatalf("the sweeper cancelled before NotifyAfter (%d)", n)
		}
		h.clock.T = h.clock.T.Add(time.Minute)
		for range 2 {
			if _, err := sweeper.Sweep(ctx, 100); err != nil {
				t.Fatal(err)
			}
		}
		cancelledOnce(t, h, ra, task)
	})

	t.Run("unreachable", func(t *testing.T) {
		ra := newRemoteAgent(t)
		h := newRemoteHarness(t, ra, nil)
		calls := 0
		h.opts.RemoteTasks = failingTasks{&calls}
		h.opts.Limits.CallbackAttempts, h.opts.Limits.CallbackBackoff = 3, 10*time.Second
		h.eng = durable.New(h.opts)
		id, _ := parked(t, h)
		cancel(t, h, h.eng, id)
		for i := 0; i < 10 && calls < 3; i++ {
			h.clock.T = h.clock.T.Add(time.Minute)
			if _, err := h.eng.Sweep(ctx, 100); err != nil {
				t.Fatal(err)
			}
			if ns := h.unsentRemote(t, h.clock.T.Add(time.Hour)); calls < 3 && (len(ns) != 1 || ns[0].Remote.Attempts != calls || !strings.Contains(ns[0].Remote.LastError, "connection refused")) {
				t.Fatalf("after %d attempts: %+v", calls, ns)
			}
		}
		h.clock.T = h.clock.T.Add(time.Hour)
		if _, err := h.eng.Sweep(ctx, 100); err != nil {
			t.Fatal(err)
		}
		if calls != 3 {
			t.Fatalf("%d attempts, want CallbackAttempts (3)", calls)
		}
		if ns := h.unsentRemote(t, h.clock.T.Add(time.Hour)); len(ns) != 0 {
			t.Fatalf("the given-up record is still listed: %+v", ns)
		}
	})
}

// TestRemoteAgentUnreachableOnTheLastReceive: an unreachable remote agent
// makes the step retry until the queue's last receive (MaxReceives),
// which records the call's failure instead, and the run goes on.
func TestRemoteAgentUnreachableOnTheLastReceive(t *testing.T) {
	ra := newRemoteAgent(t)
	h := newRemoteHarness(t, ra, nil)
	h.opts.Limits.MaxReceives = 3
	h.eng = durable.New(h.opts)
	id := h.askRemote(t, "quick")
	ra.srv.Close()
	ctx := context.Background()
	ds, _ := h.q.Receive(ctx, 1, 0)
	var step core.Step
	_ = json.Unmarshal(ds[0].Body, &step)
	if err := h.eng.HandleStep(ctx, step, durable.Attempt{ReceiveCount: 1, Owner: "model"}); err != nil {
		t.Fatal(err)
	}
	_ = h.q.Delete(ctx, ds[0].ReceiptHandle)
	ds, _ = h.q.Receive(ctx, 1, 0)
	_ = json.Unmarshal(ds[0].Body, &step)
	if step.Kind != core.StepToolCall {
		t.Fatalf("step %+v", step)
	}
	for _, tc := range []struct {
		receive int
		retry   bool
	}{{1, true}, {2, true}, {3, false}} {
		err := h.eng.HandleStep(ctx, step, durable.Attempt{ReceiveCount: tc.receive, Owner: fmt.Sprint("w", tc.receive)})
		if tc.retry != (err != nil && core.IsRetryable(err)) || (!tc.retry && err != nil) {
			t.Fatalf("receive %d of 3: error %v, want a retry %v", tc.receive, err, tc.retry)
		}
	}
	_ = h.q.Delete(ctx, ds[0].ReceiptHandle)
	h.pump(t)
	if r := h.toolResult(t, id); r.Success || !strings.Contains(r.Error, "agent card") {
		t.Fatalf("the call's result %+v, want the unreachable agent's failure", r)
	}
	if st := h.run(t, id); st.Status != core.StatusCompleted {
		t.Fatalf("run %s", st.Status)
	}
}
