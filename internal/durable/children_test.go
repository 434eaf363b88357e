package durable_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/baton-agents/baton/core"
	"github.com/baton-agents/baton/internal/agents"
	"github.com/baton-agents/baton/internal/cost"
	"github.com/baton-agents/baton/internal/durable"
	"github.com/baton-agents/baton/internal/telemetry"
)

// childrenFile: a planner whose agent tool starts researcher runs; a
// researcher's script answers each topic differently, and the beta
// topic's needs an approved email first. deep calls itself.
const childrenFile = `{"agents":[
 {"slug":"planner","model":{"provider":"scripted"},"allow_overrides":["model","parallel_tool_calls","budgets"],"max_turns":8,
  "tools":[
   {"name":"agent/researcher","description":"Research a topic.","executor":{"type":"agent","agent":"researcher"}},
   {"name":"agent/typed","description":"Research, answering JSON.","executor":{"type":"agent","agent":"researcher"},
    "output_schema":{"type":"object","required":["score"],"properties":{"score":{"type":"integer"}}}}
  ]},
 {"slug":"researcher","model":{"provider":"scripted","turns":[
   {"if_user_said":"alpha","content":"Alpha findings.","usage":{"prompt_tokens":3,"completion_tokens":2}},
   {"if_user_said":"beta","content":"Mailing.","usage":{"prompt_tokens":3,"completion_tokens":2},"tool_calls":[{"id":"mail","name":"ability/send_email","parameters":{"to":"beta@example.com"}}]},
   {"if_user_said":"beta","content":"Beta findings.","usage":{"prompt_tokens":3,"completion_tokens":2}},
   {"if_user_said":"gamma","content":"Gamma findings.","usage":{"prompt_tokens":3,"completion_tokens":2}},
   {"if_user_said":"json-good","content":"{\"score\": 7}"},
   {"if_user_said":"json-bad","content":"{\"score\": \"high\"}"}
  ]},"max_turns":4,
  "tools":[{"name":"ability/send_email","source":"go","description":"Send mail.","action_policy":"preview","executor":{"type":"go","handler":"count"}}]},
 {"slug":"deep","model":{"provider":"scripted","turns":[
   {"content":"","tool_calls":[{"id":"again","name":"agent/deep","parameters":{"task":"go deeper"}}]},
   {"content":"Done at this level."}
  ]},"max_depth":2,
  "tools":[{"name":"agent/deep","description":"Ask yourself.","executor":{"type":"agent","agent":"deep"}}]}
]}`

func (h *harness) startAgent(t *testing.T, agent string, model *core.ModelSpec, parallel bool) string {
	t.Helper()
	req := durable.StartRequest{Agent: agent, SessionID: "s-" + agent, Messages: userMsg("plan"),
		Principal: &core.Principal{Tenant: "acme", TokenID: "tok-ops", AgentID: agent, CapabilityCeiling: []string{"ability/*", "agent/*"}}}
	if model != nil {
		req.Overrides = agents.Overrides{Model: model, ParallelToolCalls: &parallel}
	}
	rec, err := h.eng.Start(context.Background(), "acme", req)
	if err != nil {
		t.Fatal(err)
	}
	return rec.State.RunID
}

func (h *harness) run(t *testing.T, id string) core.RunState {
	t.Helper()
	snap, err := h.eng.Get(context.Background(), "acme", id)
	if err != nil {
		t.Fatal(err)
	}
	return snap.State
}

// TestChildRunsFanOut: a planner calls three researchers in parallel;
// each is a child run, created once; one waits for an approval; the
// parent waits with no step scheduled and, once every child ended,
// reads their answers in call order.
func TestChildRunsFanOut(t *testing.T) {
	h := newHarnessWith(t, childrenFile, nil)
	topic := func(id, task string) core.ToolCallRequest {
		return call(id, "agent/researcher", map[string]any{"task": "Research " + task})
	}
	id := h.startAgent(t, "planner", scripted(
		turn("Fanning out.", topic("c1", "alpha"), topic("c2", "beta"), topic("c3", "gamma")),
		turn("All three are in.")), true)
	h.pump(t)

	st := h.run(t, id)
	if st.Status != core.StatusRunning || len(st.ScheduledSteps()) != 0 {
		t.Fatalf("parent while a child waits: status %s, scheduled %v", st.Status, st.ScheduledSteps())
	}
	if _, ok := st.DueAt(core.Stall{After: time.Minute}); ok {
		t.Fatalf("a parent waiting only for children is due for the sweeper")
	}
	beta := core.ChildRunID(id, "c2")
	child := h.run(t, beta)
	if child.Status != core.StatusApprovalRequired || child.Config.Parent == nil || child.Config.Parent.RunID != id || child.Config.Parent.Depth != 1 {
		t.Fatalf("beta child: status %s, parent %+v", child.Status, child.Config.Parent)
	}
	// The child acts as its parent's caller (no wider: the same tenant,
	// token and capability ceiling), as its own agent, on its own session.
	pp, cp := st.Config.Principal, child.Config.Principal
	if cp == nil || cp.Tenant != "acme" || cp.TokenID != pp.TokenID || !slices.Equal(cp.CapabilityCeiling, pp.CapabilityCeiling) || cp.AgentID != "researcher" {
		t.Fatalf("beta child's principal %+v, parent's %+v", cp, pp)
	}
	if child.SessionID == st.SessionID || child.SessionID != core.ChildSessionID(id, "c2") {
		t.Fatalf("beta child's session %q, parent's %q", child.SessionID, st.SessionID)
	}
	_, acts := child.Pending()
	if _, err := h.eng.Apply(context.Background(), "acme", beta, core.ApprovalDecision{ActionID: acts[0].ActionID, Decision: "accept"}); err != nil {
		t.Fatal(err)
	}
	h.pump(t)

	st = h.run(t, id)
	if st.Status != core.StatusCompleted {
		t.Fatalf("parent status %s", st.Status)
	}
	env := h.envelope(t, id)
	var results []string
	for _, m := range env.Messages {
		if m.Role == core.RoleToolResult {
			results = append(results, m.Content)
		}
	}
	want := []string{"Alpha findings.", "Beta findings.", "Gamma findings."}
	if len(results) != 3 {
		t.Fatalf("results %q", results)
	}
	for i, w := range want {
		if !strings.Contains(results[i], w) {
			t.Fatalf("result %d is %q, want %q (call order)", i, results[i], w)
		}
	}
	started, finished := 0, 0
	for _, e := range env.Events {
		switch e.Type {
		case core.EventChildRunStarted:
			started++
		case core.EventChildRunFinished:
			finished++
		}
	}
	if started != 3 || finished != 3 {
		t.Fatalf("child_run_started %d, child_run_finished %d", started, finished)
	}
	// The parent's usage holds its own two turns and its children's four
	// (5 tokens each), and the view lists the children with theirs.
	if got := st.Usage.Number("total_tokens"); got != 30 {
		t.Fatalf("parent total_tokens %v, want 30 (10 own + 20 of its children)", got)
	}
	if len(st.Children) != 3 || st.Children[1].RunID != beta || st.Children[1].Status != core.StatusCompleted || st.Children[1].Usage["total_tokens"] == nil {
		t.Fatalf("children %+v", st.Children)
	}
	if n := h.count.n["mail"]; n != 1 {
		t.Fatalf("the approved email was sent %d times", n)
	}
	// The parent's outbox records are delivered and marked sent: a sweep
	// finds nothing more to deliver, and delivering again changes nothing.
	before := h.run(t, id).Version
	if _, err := h.eng.Sweep(context.Background(), 100); err != nil {
		t.Fatal(err)
	}
	if v := h.run(t, id).Version; v != before {
		t.Fatalf("a sweep after the parent completed changed it (version %d → %d)", before, v)
	}
}

// TestChildRunCreatedOnce: the step that starts a child, delivered again
// (before and after its commit), finds the same child.
func TestChildRunCreatedOnce(t *testing.T) {
	h := newHarnessWith(t, childrenFile, nil)
	id := h.startAgent(t, "planner", scripted(
		turn("", call("c1", "agent/researcher", map[string]any{"task": "alpha"})),
		turn("Done.")), false)
	// Run the planner's first turn, then deliver its tool step three
	// times before letting anything else run.
	ds, _ := h.q.Receive(context.Background(), 1, 0)
	var step core.Step
	_ = json.Unmarshal(ds[0].Body, &step)
	if err := h.eng.HandleStep(context.Background(), step, durable.Attempt{ReceiveCount: 1, Owner: "w"}); err != nil {
		t.Fatal(err)
	}
	_ = h.q.Delete(context.Background(), ds[0].ReceiptHandle)
	ds, _ = h.q.Receive(context.Background(), 1, 0)
	_ = json.Unmarshal(ds[0].Body, &step)
	if step.Kind != core.StepToolCall {
		t.Fatalf("step %+v", step)
	}
	for i := 1; i <= 3; i++ {
		if err := h.eng.HandleStep(context.Background(), step, durable.Attempt{ReceiveCount: i, Owner: "w" + string(rune('0'+i))}); err != nil {
			t.Fatal(err)
		}
	}
	_ = h.q.Delete(context.Background(), ds[0].ReceiptHandle)
	h.pump(t)
	page, err := h.eng.List(context.Background(), "acme", core.RunListQuery{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Runs) != 2 {
		t.Fatalf("%d runs, want the planner and one child", len(page.Runs))
	}
	if st := h.run(t, id); st.Status != core.StatusCompleted {
		t.Fatalf("parent %s", st.Status)
	}
}

// TestChildRunOutputSchemaAndDepth: an output_schema's match is the
// call's JSON result and a mismatch a tool error; a recursive agent
// stops at its max_depth with depth_exceeded.
func TestChildRunOutputSchemaAndDepth(t *testing.T) {
	h := newHarnessWith(t, childrenFile, nil)
	id := h.startAgent(t, "planner", scripted(
		turn("", call("good", "agent/typed", map[string]any{"task": "json-good"}), call("bad", "agent/typed", map[string]any{"task": "json-bad"})),
		turn("Typed.")), true)
	h.pump(t)
	env := h.envelope(t, id)
	byCall := map[string]core.ToolExecutionResult{}
	for _, r := range env.ToolExecutionResults {
		byCall[r.ToolCallID] = r
	}
	if r := byCall["good"].Result; !r.Success || r.Result.(map[string]any)["score"] == nil {
		t.Fatalf("good: %+v", r)
	}
	if r := byCall["bad"].Result; r.Success || r.ErrorType != core.ErrTypeInvalidOutput {
		t.Fatalf("bad: %+v", r)
	}

	d := h.startAgent(t, "deep", nil, false)
	h.pump(t)
	// deep (depth 0) → child (1) → grandchild (2): the grandchild's
	// call is refused, and every level completes.
	grand := core.ChildRunID(core.ChildRunID(d, "again"), "again")
	genv := h.envelope(t, grand)
	if len(genv.ToolExecutionResults) != 1 || genv.ToolExecutionResults[0].Result.ErrorType != core.ErrTypeDepthExceeded {
		t.Fatalf("grandchild results %+v", genv.ToolExecutionResults)
	}
	for _, r := range []string{d, core.ChildRunID(d, "again"), grand} {
		if st := h.run(t, r); st.Status != core.StatusCompleted {
			t.Fatalf("run %s: %s", r, st.Status)
		}
	}
}

// TestChildRunsStopWithParent: cancelling a parent cancels its running
// children (their open calls closed, so their transcripts stay valid);
// interrupting one interrupts them; a child that had ended is left alone.
func TestChildRunsStopWithParent(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   core.Input
		want core.RunStatus
	}{
		{"cancel", core.Cancel{Reason: "enough"}, core.StatusCancelled},
		{"interrupt", core.Interrupt{Reason: "stop now"}, core.StatusInterrupted},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarnessWith(t, childrenFile, nil)
			id := h.startAgent(t, "planner", scripted(
				turn("", call("c1", "agent/researcher", map[string]any{"task": "alpha"}), call("c2", "agent/researcher", map[string]any{"task": "beta"})),
				turn("Never.")), true)
			h.pump(t)
			beta := core.ChildRunID(id, "c2")
			if st := h.run(t, beta); st.Status != core.StatusApprovalRequired {
				t.Fatalf("beta %s", st.Status)
			}
			if _, err := h.eng.Apply(context.Background(), "acme", id, tc.in); err != nil {
				t.Fatal(err)
			}
			h.pump(t)
			if st := h.run(t, id); st.Status != tc.want {
				t.Fatalf("parent %s", st.Status)
			}
			if st := h.run(t, beta); st.Status != tc.want {
				t.Fatalf("running child %s, want %s", st.Status, tc.want)
			}
			if st := h.run(t, core.ChildRunID(id, "c1")); st.Status != core.StatusCompleted {
				t.Fatalf("finished child %s", st.Status)
			}
			env := h.envelope(t, beta)
			calls, results := 0, 0
			for _, m := range env.Messages {
				switch m.Role {
				case core.RoleToolCall:
					calls++
				case core.RoleToolResult:
					results++
				}
			}
			if calls != 1 || results != 1 || h.count.n["mail"] != 0 {
				t.Fatalf("beta's transcript: %d calls, %d results; mail sent %d times", calls, results, h.count.n["mail"])
			}
		})
	}
}

// TestChildRunsShareBudgets: a child starts with what its parent has
// left of the tree's budgets, and its spend counts in the parent's.
func TestChildRunsShareBudgets(t *testing.T) {
	h := newHarnessWith(t, childrenFile, nil)
	start := func(tokens int) string {
		req := durable.StartRequest{Agent: "planner", SessionID: "s-budget-" + string(rune('a'+tokens)), Messages: userMsg("plan"),
			Overrides: agents.Overrides{Model: scripted(turn("", call("c1", "agent/researcher", map[string]any{"task": "alpha"})), turn("Done.")),
				Budgets: core.BudgetLimits{core.BudgetTotalTokens: float64(tokens)}}}
		rec, err := h.eng.Start(context.Background(), "acme", req)
		if err != nil {
			t.Fatal(err)
		}
		return rec.State.RunID
	}
	// 20 tokens: the parent's first turn took 5, so its child may use 15
	// of them; the child's 5 and the parent's second turn's 5 make 15.
	id := start(20)
	h.pump(t)
	child := h.run(t, core.ChildRunID(id, "c1"))
	if len(child.Budgets) != 1 || child.Budgets[0].Name != core.BudgetTotalTokens || child.Budgets[0].Ceiling != 15 {
		t.Fatalf("the child's budgets %+v, want total_tokens 15", child.Budgets)
	}
	if st := h.run(t, id); st.Status != core.StatusCompleted || st.Usage.Number("total_tokens") != 15 {
		t.Fatalf("parent %s with %v tokens", st.Status, st.Usage.Number("total_tokens"))
	}
	// 8 tokens: the child may use 3; its one turn takes 5 (a final
	// answer is kept, as in any run: total_tokens is checked before a next
	// turn), and the parent, 10 tokens in with its child's, stops at once
	// with budget_exceeded instead of taking another turn.
	id = start(8)
	h.pump(t)
	child = h.run(t, core.ChildRunID(id, "c1"))
	if child.Budgets[0].Ceiling != 3 || child.Status != core.StatusCompleted {
		t.Fatalf("child %s with budgets %+v", child.Status, child.Budgets)
	}
	st := h.run(t, id)
	if st.Status != core.StatusBudgetExceeded || st.Budget != core.BudgetTotalTokens || st.Turn != 1 {
		t.Fatalf("parent %s (budget %q) after %d turns", st.Status, st.Budget, st.Turn)
	}
}

// TestChildRunJoinsParentTrace: a tree is one trace: the child's root
// span (invoke_agent) is a child of the parent's execute_tool span, and
// the child's steps continue that trace.
func TestChildRunJoinsParentTrace(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	h := newHarnessWith(t, childrenFile, nil)
	h.opts.Telemetry = telemetry.Settings{Provider: sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))}
	h.eng = durable.New(h.opts)
	h.startAgent(t, "planner", scripted(turn("", call("c1", "agent/researcher", map[string]any{"task": "alpha"})), turn("Done.")), false)
	h.pump(t)
	byName := map[string][]sdktrace.ReadOnlySpan{}
	for _, s := range rec.Ended() {
		byName[s.Name()] = append(byName[s.Name()], s)
	}
	root, tool, child := byName["invoke_agent planner"], byName["execute_tool agent/researcher"], byName["invoke_agent researcher"]
	if len(root) != 1 || len(tool) != 1 || len(child) != 1 {
		t.Fatalf("spans: %d planner roots, %d execute_tool, %d researcher roots", len(root), len(tool), len(child))
	}
	trace := root[0].SpanContext().TraceID()
	if child[0].SpanContext().TraceID() != trace || child[0].Parent().SpanID() != tool[0].SpanContext().SpanID() {
		t.Fatalf("the child's root span is not under the parent's execute_tool span")
	}
	steps := 0
	for _, s := range rec.Ended() {
		if s.SpanContext().TraceID() != trace {
			t.Errorf("span %s is in another trace", s.Name())
		}
		if strings.HasPrefix(s.Name(), "step ") {
			steps++
		}
	}
	if steps < 4 {
		t.Fatalf("%d step spans, want the parent's and the child's", steps)
	}
}

// TestChildRunNotificationsNameTheTree: a child's paused notification
// names its parent and its tree's first run.
func TestChildRunNotificationsNameTheTree(t *testing.T) {
	h := newHarnessWith(t, childrenFile, nil)
	id := h.startAgent(t, "planner", scripted(turn("", call("c2", "agent/researcher", map[string]any{"task": "beta"})), turn("Done.")), false)
	h.pump(t)
	beta := core.ChildRunID(id, "c2")
	for _, n := range h.notes.sent() {
		if d := detail(t, n); n.RunID == beta && d.Event == "paused" {
			if d.ParentRunID != id || d.RootRunID != id {
				t.Fatalf("the child's paused notification: parent %q, root %q", d.ParentRunID, d.RootRunID)
			}
			return
		}
	}
	t.Fatalf("no paused notification of the child among %d", len(h.notes.sent()))
}

const handoffFile = `{"agents":[
 {"slug":"support","label":"Front desk","model":{"provider":"scripted"},"allow_overrides":["model","budgets"],"system":"Help, or hand over.",
  "handoffs":["billing"],
  "tools":[{"name":"ability/search","source":"go","description":"Search.","executor":{"type":"go","handler":"count"}}]},
 {"slug":"billing","label":"Billing desk","system":"Refund what is owed.","model":{"provider":"scripted","options":{"echo_request":true},"turns":[
   {"content":"(turn 1 is the front desk's)"},
   {"content":"Refunding.","tool_calls":[{"id":"r1","name":"billing/refund","parameters":{"order":"o-1"}}]},
   {"content":"Refunded order o-1."}]},
  "tools":[{"name":"billing/refund","source":"go","description":"Refund an order.","executor":{"type":"go","handler":"count"}}]}
]}`

// TestHandoff: the front desk's model hands the run to billing, which
// answers with its own tools and system prompt; the run reports billing
// as its agent, with an agent_handoff event; budgets stay the run's.
func TestHandoff(t *testing.T) {
	h := newHarnessWith(t, handoffFile, nil)
	req := durable.StartRequest{Agent: "support", SessionID: "s-handoff", Messages: userMsg("I was charged twice."),
		Overrides: agents.Overrides{Model: scripted(turn("Billing can fix that.", call("h1", "handoff/billing", map[string]any{"reason": "a refund"}))),
			Budgets: core.BudgetLimits{core.BudgetToolCalls: 5}}}
	rec, err := h.eng.Start(context.Background(), "acme", req)
	if err != nil {
		t.Fatal(err)
	}
	if slices.Contains(rec.State.Config.Visible, "billing/refund") || !slices.Contains(rec.State.Config.Visible, "handoff/billing") {
		t.Fatalf("the front desk sees %v", rec.State.Config.Visible)
	}
	id := rec.State.RunID
	h.pump(t)
	st := h.run(t, id)
	if st.Status != core.StatusCompleted || st.Config.Agent != "billing" || st.Config.System != "Refund what is owed." {
		t.Fatalf("after the handoff: %s, agent %s, system %q", st.Status, st.Config.Agent, st.Config.System)
	}
	if !slices.Contains(st.Config.Visible, "billing/refund") || slices.Contains(st.Config.Visible, "ability/search") {
		t.Fatalf("billing sees %v", st.Config.Visible)
	}
	if st.Budgets[0].Name != core.BudgetToolCalls || st.Budgets[0].Ceiling != 5 || st.Budgets[0].Current != 2 {
		t.Fatalf("budgets %+v: the run's, counting both agents' calls", st.Budgets)
	}
	if h.count.n["r1"] != 1 {
		t.Fatalf("refund executed %d times", h.count.n["r1"])
	}
	env := h.envelope(t, id)
	if env.FinalContent != "Refunded order o-1." {
		t.Fatalf("final %q", env.FinalContent)
	}
	var handoff map[string]any
	for _, e := range env.Events {
		if e.Type == core.EventAgentHandoff {
			handoff = e.Fields()
		}
	}
	if handoff["from"] != "support" || handoff["to"] != "billing" || handoff["tool_call_id"] != "h1" {
		t.Fatalf("agent_handoff %v", handoff)
	}
	snap, _ := h.eng.Get(context.Background(), "acme", id)
	if v, err := h.eng.View(context.Background(), snap, 0); err != nil || v.Agent != "billing" {
		t.Fatalf("view agent %q, %v", v.Agent, err)
	}
}

// TestChildRunCostRollsUp: a parent's result.cost holds its own model
// calls and its children's, each child's figure listed beside it.
func TestChildRunCostRollsUp(t *testing.T) {
	h := newHarnessWith(t, childrenFile, nil)
	table := m1Prices(t)
	table.Models["scripted/"] = cost.ModelPrice{Input: 3, Output: 5}
	h.opts.Pricer, h.opts.Metering = table, &durable.Metering{}
	h.eng = durable.New(h.opts)
	planner := &core.ModelSpec{Provider: core.ProviderScripted, Model: "m1", Turns: []core.ScriptedTurn{
		turn("", call("c1", "agent/researcher", map[string]any{"task": "alpha"}), call("c3", "agent/researcher", map[string]any{"task": "gamma"})),
		turn("Both in.")}}
	id := h.startAgent(t, "planner", planner, true)
	h.pump(t)
	st := h.run(t, id)
	if st.Status != core.StatusCompleted || st.Cost == nil || len(st.Children) != 2 {
		t.Fatalf("parent %s, cost %+v, children %d", st.Status, st.Cost, len(st.Children))
	}
	// Own: two turns of 3 prompt and 2 completion tokens at $1/$2 per
	// million; each child: one turn of 3 and 2 at $3/$5.
	own := 2 * (3*1.0 + 2*2.0) / 1e6
	var children, childTotals float64
	for _, c := range st.Children {
		cs := h.run(t, c.RunID)
		if c.Cost == nil || c.Cost.TotalUSD != cs.Cost.TotalUSD || c.Cost.ModelUSD != cs.Cost.ModelUSD {
			t.Fatalf("child %s: listed cost %+v, its own %+v", c.RunID, c.Cost, cs.Cost)
		}
		children += cs.Cost.ModelUSD
		childTotals += cs.Cost.TotalUSD
	}
	if math.Abs(children-2*(3*3.0+2*5.0)/1e6) > 1e-12 || math.Abs(st.Cost.ModelUSD-(own+children)) > 1e-12 {
		t.Fatalf("model_usd %v, want own %v + children %v", st.Cost.ModelUSD, own, children)
	}
	if st.Cost.TotalUSD < childTotals || st.Cost.AWSUSD <= 0 {
		t.Fatalf("total %v below its children's %v (aws %v)", st.Cost.TotalUSD, childTotals, st.Cost.AWSUSD)
	}
}

// TestChildEndReachesParent: what the parent's call learns of how its
// child ended: an interrupted child's reason is in the call's failed
// result, and a finished child's tool calls count in the parent's
// tool_calls budget (the parent's own call and the child's email).
func TestChildEndReachesParent(t *testing.T) {
	ctx := context.Background()
	start := func(h *harness) (string, string) {
		req := durable.StartRequest{Agent: "planner", SessionID: "s-end", Messages: userMsg("plan"),
			Overrides: agents.Overrides{Model: scripted(turn("", call("c1", "agent/researcher", map[string]any{"task": "beta"})), turn("Done.")),
				Budgets: core.BudgetLimits{core.BudgetToolCalls: 10, core.BudgetTotalTokens: 1000}}}
		rec, err := h.eng.Start(ctx, "acme", req)
		if err != nil {
			t.Fatal(err)
		}
		h.pump(t)
		return rec.State.RunID, core.ChildRunID(rec.State.RunID, "c1")
	}
	t.Run("interrupted with a reason", func(t *testing.T) {
		h := newHarnessWith(t, childrenFile, nil)
		id, child := start(h)
		if _, err := h.eng.Apply(ctx, "acme", child, core.Interrupt{Reason: "the user stepped in"}); err != nil {
			t.Fatal(err)
		}
		h.pump(t)
		env := h.envelope(t, id)
		if len(env.ToolExecutionResults) != 1 {
			t.Fatalf("parent results %+v", env.ToolExecutionResults)
		}
		r := env.ToolExecutionResults[0].Result
		if r.Success || r.ErrorType != core.ErrTypeChildRun || !strings.HasSuffix(r.Error, "ended with status interrupted: the user stepped in") {
			t.Fatalf("the call's result %+v, want the child's interruption and its reason", r)
		}
	})
	t.Run("tool calls counted", func(t *testing.T) {
		h := newHarnessWith(t, childrenFile, nil)
		id, child := start(h)
		cst := h.run(t, child)
		_, acts := cst.Pending()
		if _, err := h.eng.Apply(ctx, "acme", child, core.ApprovalDecision{ActionID: acts[0].ActionID, Decision: "accept"}); err != nil {
			t.Fatal(err)
		}
		h.pump(t)
		st := h.run(t, id)
		if st.Status != core.StatusCompleted {
			t.Fatalf("parent %s", st.Status)
		}
		got := map[string]int{}
		for _, b := range st.Budgets {
			got[b.Name] = b.Current
		}
		if got[core.BudgetToolCalls] != 2 || got[core.BudgetTotalTokens] != 20 {
			t.Fatalf("parent budgets %+v, want 2 tool calls (its own and its child's) and 20 tokens (two turns each)", st.Budgets)
		}
	})
}

// childFailingStore fails the first commit failOn picks (a store error,
// as a throttled write), and refuses to create the child runs of calls in
// refuse with their error.
type childFailingStore struct {
	durable.Store
	mu     sync.Mutex
	failOn func(core.Write) bool
	failed bool
	refuse map[string]error
}

func (s *childFailingStore) Commit(ctx context.Context, w core.Write) error {
	s.mu.Lock()
	fail := !s.failed && s.failOn != nil && s.failOn(w)
	s.failed = s.failed || fail
	s.mu.Unlock()
	if fail {
		return errors.New("throttled")
	}
	return s.Store.Commit(ctx, w)
}

// appliesChildEnd: the write applies a child's end to its parent.
func appliesChildEnd(w core.Write) bool {
	return slices.ContainsFunc(w.Output.Events, func(e core.Event) bool { return e.Type == core.EventChildRunFinished })
}

func (s *childFailingStore) CreateRun(ctx context.Context, head core.SessionHead, w core.Write) error {
	if p := w.Output.State.Config.Parent; p != nil && s.refuse[p.ToolCallID] != nil {
		return s.refuse[p.ToolCallID]
	}
	return s.Store.CreateRun(ctx, head, w)
}

// TestChildEndDeliveredAgain: a child's end that could not be applied to
// its parent stays in the outbox, and the sweeper delivers it again; once
// delivered, nothing is left unsent.
func TestChildEndDeliveredAgain(t *testing.T) {
	fs := &childFailingStore{failOn: appliesChildEnd}
	h := newHarnessWith(t, childrenFile, func(s durable.Store) durable.Store { fs.Store = s; return fs })
	id := h.startAgent(t, "planner", scripted(
		turn("", call("c1", "agent/researcher", map[string]any{"task": "alpha"})),
		turn("Done.")), false)
	h.pump(t)
	if st := h.run(t, core.ChildRunID(id, "c1")); st.Status != core.StatusCompleted {
		t.Fatalf("child %s", st.Status)
	}
	if st := h.run(t, id); st.Status != core.StatusRunning || !fs.failed {
		t.Fatalf("parent %s (the delivery failed: %v), want still waiting for its child", st.Status, fs.failed)
	}
	var parents int
	for _, n := range h.unsent(t) {
		if n.Parent != nil {
			parents++
		}
	}
	if parents != 1 {
		t.Fatalf("%d unsent records for the parent, want the child's end", parents)
	}
	h.clock.T = h.clock.T.Add(time.Minute)
	h.sweep(t)
	h.pump(t)
	if st := h.run(t, id); st.Status != core.StatusCompleted {
		t.Fatalf("parent after the sweep %s", st.Status)
	}
	if un := h.unsent(t); len(un) != 0 {
		t.Fatalf("unsent after delivery: %+v", un)
	}
}

// TestChildRunThatCannotStart: a child the store refuses as invalid is
// the call's failed result, and the parent goes on; a child the store
// cannot create for another reason fails the step, to be tried again.
func TestChildRunThatCannotStart(t *testing.T) {
	fs := &childFailingStore{refuse: map[string]error{
		"bad":   fmt.Errorf("%w: too large", core.ErrInvalidInput),
		"flaky": errors.New("throttled"),
	}}
	h := newHarnessWith(t, childrenFile, func(s durable.Store) durable.Store { fs.Store = s; return fs })
	id := h.startAgent(t, "planner", scripted(
		turn("", call("bad", "agent/researcher", map[string]any{"task": "alpha"})),
		turn("Done.")), false)
	h.pump(t)
	env := h.envelope(t, id)
	if env.Status != core.StatusCompleted || len(env.ToolExecutionResults) != 1 {
		t.Fatalf("parent %s with results %+v", env.Status, env.ToolExecutionResults)
	}
	if r := env.ToolExecutionResults[0].Result; r.Success || r.ErrorType != core.ErrTypeChildRun || !strings.Contains(r.Error, "could not be started") {
		t.Fatalf("the call's result %+v, want the child's failed start", r)
	}

	id = h.startAgent(t, "planner", scripted(
		turn("", call("flaky", "agent/researcher", map[string]any{"task": "alpha"})),
		turn("Done.")), false)
	ctx := context.Background()
	var stepErr error
	_ = h.q.Drain(ctx, 10, func(step core.Step, m core.ReceivedMessage) error {
		err := h.eng.HandleStep(ctx, step, durable.Attempt{ReceiveCount: m.ReceiveCount, Owner: m.ReceiptHandle})
		if step.Kind == core.StepToolCall {
			stepErr = err
			return nil
		}
		return err
	})
	if stepErr == nil || !core.IsRetryable(stepErr) || !strings.Contains(stepErr.Error(), "throttled") {
		t.Fatalf("the step's error %v, want a retryable one naming the store's", stepErr)
	}
	if st := h.run(t, id); st.Status != core.StatusRunning || len(st.ScheduledSteps()) != 1 {
		t.Fatalf("parent %s, steps %v; want the tool step still current", st.Status, st.ScheduledSteps())
	}
}

// TestChildStopDeliveredAgain: a running child that could not be stopped
// when its parent was cancelled stays in the outbox, and the sweeper
// stops it.
func TestChildStopDeliveredAgain(t *testing.T) {
	fs := &childFailingStore{}
	h := newHarnessWith(t, childrenFile, func(s durable.Store) durable.Store { fs.Store = s; return fs })
	id := h.startAgent(t, "planner", scripted(
		turn("", call("c2", "agent/researcher", map[string]any{"task": "beta"})),
		turn("Never.")), false)
	h.pump(t)
	beta := core.ChildRunID(id, "c2")
	fs.mu.Lock()
	fs.failOn = func(w core.Write) bool { return w.Output.State.RunID == beta }
	fs.mu.Unlock()
	if _, err := h.eng.Apply(context.Background(), "acme", id, core.Cancel{Reason: "enough"}); err != nil {
		t.Fatal(err)
	}
	h.pump(t)
	if st := h.run(t, beta); st.Status != core.StatusApprovalRequired || !fs.failed {
		t.Fatalf("child %s (the stop failed: %v), want still waiting for its approval", st.Status, fs.failed)
	}
	h.clock.T = h.clock.T.Add(time.Minute)
	h.sweep(t)
	h.pump(t)
	if st := h.run(t, beta); st.Status != core.StatusCancelled {
		t.Fatalf("child after the sweep %s, want cancelled", st.Status)
	}
	if un := h.unsent(t); len(un) != 0 {
		t.Fatalf("unsent after delivery: %+v", un)
	}
}

// TestChildItemDecidedThroughParent: an approval a child run waits on is
// listed in its parent's view and may be decided on the parent's route:
// the child takes it, and deciding it again there is refused.
func TestChildItemDecidedThroughParent(t *testing.T) {
	h := newHarnessWith(t, childrenFile, nil)
	ctx := context.Background()
	id := h.startAgent(t, "planner", scripted(
		turn("", call("c2", "agent/researcher", map[string]any{"task": "beta"})),
		turn("Done.")), false)
	h.pump(t)
	child := h.run(t, core.ChildRunID(id, "c2"))
	_, acts := child.Pending()
	if len(acts) != 1 {
		t.Fatalf("the child's actions %+v", acts)
	}
	// The parent's view lists what its running child waits on.
	snap, err := h.eng.Get(ctx, "acme", id)
	if err != nil {
		t.Fatal(err)
	}
	v, err := h.eng.View(ctx, snap, 0)
	if err != nil {
		t.Fatal(err)
	}
	if pa := v.Pending.Actions; len(pa) != 1 || pa[0].ActionID != acts[0].ActionID || pa[0].RunID != child.RunID {
		t.Fatalf("the parent's pending actions %+v, want the child's", pa)
	}
	decide := core.ApprovalDecision{ActionID: acts[0].ActionID, Decision: "accept"}
	if _, err := h.eng.Apply(ctx, "acme", id, decide); err != nil {
		t.Fatalf("the child's approval decided on the parent's route: %v", err)
	}
	h.pump(t)
	if st := h.run(t, id); st.Status != core.StatusCompleted || h.count.n["mail"] != 1 {
		t.Fatalf("parent %s, mail sent %d times; want completed, once", st.Status, h.count.n["mail"])
	}
	if _, err := h.eng.Apply(ctx, "acme", id, decide); !errors.Is(err, durable.ErrAlreadyDecided) && !errors.Is(err, durable.ErrFinished) {
		t.Fatalf("the same decision again: %v", err)
	}
}
