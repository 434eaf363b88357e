package durable_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/baton-agents/baton/core"
	"github.com/baton-agents/baton/internal/durable"
	"github.com/baton-agents/baton/internal/evals"
)

// evalsFile: the demo agent (its own script answers by the question)
// and a judge whose script scores every answer.
const evalsFile = `{"agents":[{"slug":"demo","model":{"provider":"scripted","turns":[
  {"if_user_said":"search","content":"","tool_calls":[{"id":"s1","name":"ability/search","parameters":{"q":"x"}}]},
  {"if_user_said":"calendar","content":"","tool_calls":[{"id":"k1","name":"client/get_calendar","parameters":{"day":"mon"}}]},
  {"content":"Done."}]},
 "allow_overrides":["model"],"system":"Be brief.","max_turns":4,
 "tools":[{"name":"ability/search","source":"go","description":"Search.","parameters":{"type":"object","properties":{"q":{"type":"string"}}},"executor":{"type":"go","handler":"count"}}]},
 {"slug":"judge","model":{"provider":"scripted","turns":[{"content":"{\"score\": 0.8, \"reason\": \"brief and right\"}"}]},"system":"Judge."}]}`

func inputCase(id, question string, expect evals.Expect) evals.Case {
	return evals.Case{ID: id, Input: &evals.Input{Messages: []any{map[string]any{"role": "user", "content": question}}}, Expect: expect}
}

func str(s string) *string { return &s }

// TestEvalScoresEachCaseOnce: five cases at concurrency 2 each run once
// and are scored once, as their expectations say; a scripted client
// answer answers a client tool; a repeated delivery of a case's end
// changes nothing; a judged case carries the judge's score and its run
// is a child of the case run, asked about the case's question; the
// eval is listed; each scored case is counted once in the metrics.
func TestEvalScoresEachCaseOnce(t *testing.T) {
	h := newHarnessWith(t, evalsFile, nil)
	var metrics bytes.Buffer
	h.opts.Metrics = durable.NewEMF(&metrics)
	h.eng = durable.New(h.opts)
	ctx := context.Background()
	cal := inputCase("calendar", "check my calendar", evals.Expect{Final: &evals.FinalCheck{Equals: str("Done.")},
		Trajectory: &evals.Trajectory{Tools: []evals.ToolStep{{Name: "client/get_calendar", Parameters: map[string]any{"day": "mon"}}}}})
	cal.Input.Tools = []map[string]any{{"name": "client/get_calendar", "description": "Calendar.", "parameters": map[string]any{"type": "object"}}}
	cal.Input.ClientResults = []evals.ClientAnswer{{Tool: "client/get_calendar", Result: map[string]any{"free": true}}}
	cases := []evals.Case{
		inputCase("search", "search for x", evals.Expect{Final: &evals.FinalCheck{Equals: str("Done.")},
			Trajectory: &evals.Trajectory{Tools: []evals.ToolStep{{Name: "ability/search"}}}, MaxTurns: 2}),
		inputCase("wrong", "hello", evals.Expect{Final: &evals.FinalCheck{Contains: []string{"Goodbye"}}}),
		cal,
		inputCase("judged", "hello again", evals.Expect{Rubric: "Is it brief?", Final: &evals.FinalCheck{Regex: "^Done"}}),
		inputCase("turns", "search again", evals.Expect{MaxTurns: 1}),
	}
	v, err := h.eng.StartEval(ctx, "acme", durable.EvalRequest{Agent: "demo", Judge: "judge", Concurrency: 2, Cases: cases})
	if err != nil {
		t.Fatal(err)
	}
	if v.Progress.Started != 2 || v.Status != core.EvalRunning || v.Progress.Total != 5 {
		t.Fatalf("started: %+v", v.Progress)
	}
	h.pump(t)
	v, err = h.eng.Eval(ctx, "acme", v.EvalID)
	if err != nil {
		t.Fatal(err)
	}
	if v.Status != core.EvalCompleted || v.Progress.Scored != 5 || v.Progress.Passed != 3 {
		t.Fatalf("eval %s: %+v", v.Status, v.Progress)
	}
	want := map[string]bool{"search": true, "wrong": false, "calendar": true, "judged": true, "turns": false}
	for _, c := range v.Cases {
		if c.Pass != want[c.ID] {
			t.Errorf("case %s: pass %v, checks %+v", c.ID, c.Pass, c.Checks)
		}
	}
	if h.count.n["s1"] != 2 {
		t.Errorf("ability/search ran %d times, want once per searching case", h.count.n["s1"])
	}
	judged := v.Cases[3]
	if judged.Judge == nil || judged.Judge.Score != 0.8 || judged.Judge.Reason != "brief and right" {
		t.Fatalf("judged case: %+v", judged.CaseResult)
	}
	kids, err := h.eng.List(ctx, "acme", core.RunListQuery{Limit: 10, Parent: judged.RunID})
	if err != nil || len(kids.Runs) != 1 || kids.Runs[0].RunID != judged.Judge.RunID {
		t.Fatalf("the judge's run as the case run's child: %+v %v", kids.Runs, err)
	}
	if prompt := h.envelope(t, judged.Judge.RunID).Messages[0].Content; !strings.Contains(prompt, "Question: hello again\n") || !strings.Contains(prompt, "Answer: Done.") {
		t.Errorf("the judge's prompt: %q", prompt)
	}
	// The calendar case's client call got the case's scripted answer, the
	// eval's first.
	if r := h.envelope(t, v.Cases[2].RunID).ToolExecutionResults; len(r) != 1 || !r[0].Result.Success || canon(t, r[0].Result.Result) != `{"free":true}` ||
		r[0].ReplayedFrom == nil || *r[0].ReplayedFrom != (core.ReplayRef{RunID: v.EvalID, Seq: 1}) {
		t.Errorf("the calendar case's client call: %+v", r)
	}
	if fc := v.Cases[4].Checks; fc[len(fc)-1].Name != evals.CheckMaxTurns || fc[len(fc)-1].Pass {
		t.Errorf("turns case checks %+v", fc)
	}
	if d := v.Cases[1].Checks[1].Detail; !strings.Contains(d, `does not contain "Goodbye"`) {
		t.Errorf("wrong case's detail %q", d)
	}
	// Each case run started once, with the eval's id derived.
	page, _ := h.eng.List(ctx, "acme", core.RunListQuery{Limit: 50})
	if len(page.Runs) != 6 {
		t.Fatalf("%d runs, want 5 cases and a judge", len(page.Runs))
	}
	// A second delivery of every run's end scores nothing twice and
	// starts nothing.
	for _, r := range page.Runs {
		if err := h.eng.RedeliverEnd(ctx, r.RunID); err != nil {
			t.Fatal(err)
		}
	}
	h.pump(t)
	again, _ := h.eng.Eval(ctx, "acme", v.EvalID)
	if again.Progress != v.Progress {
		t.Fatalf("after repeated deliveries: %+v, was %+v", again.Progress, v.Progress)
	}
	if page, _ := h.eng.List(ctx, "acme", core.RunListQuery{Limit: 50}); len(page.Runs) != 6 {
		t.Fatalf("%d runs after repeated deliveries", len(page.Runs))
	}
	if _, err := h.eng.Eval(ctx, "globex", v.EvalID); !errors.Is(err, core.ErrNotFound) {
		t.Fatalf("another tenant reads the eval: %v", err)
	}
	if evs, _, err := h.eng.Evals(ctx, "acme", 10, ""); err != nil || len(evs) != 1 || evs[0].EvalID != v.EvalID || evs[0].Progress != v.Progress || evs[0].Cases != nil {
		t.Fatalf("the tenant's evals: %+v %v", evs, err)
	}
	scored := map[any]float64{}
	for _, l := range parseEMF(t, metrics.Bytes()) {
		if n, ok := l.fields["EvalCasesScored"].(float64); ok {
			scored[l.fields["Pass"]] += n
		}
	}
	if scored["true"] != 3 || scored["false"] != 2 || len(scored) != 2 {
		t.Errorf("EvalCasesScored by Pass: %v, want 3 passed and 2 failed", scored)
	}
}

// TestEvalBadInput: a bad case is refused with its place, and a case
// from another tenant's run too; nothing starts.
func TestEvalBadInput(t *testing.T) {
	h := newHarnessWith(t, evalsFile, nil)
	ctx := context.Background()
	other := h.start(t, scripted(turn("hi")), func(r *durable.StartRequest) { r.Agent = "demo" })
	for _, tc := range []struct {
		cases []evals.Case
		line  int
	}{
		{[]evals.Case{inputCase("a", "x", evals.Expect{}), {ID: "b"}}, 2},
		{[]evals.Case{inputCase("a", "x", evals.Expect{}), inputCase("a", "y", evals.Expect{})}, 2},
		{[]evals.Case{{ID: "c", FromRun: other}}, 1},
	} {
		_, err := h.eng.StartEval(ctx, "globex", durable.EvalRequest{Agent: "demo", Cases: tc.cases})
		var le *evals.LineError
		if !errors.Is(err, durable.ErrInvalidDataset) || !errors.As(err, &le) || le.Line != tc.line {
			t.Fatalf("%+v: %v", tc.cases, err)
		}
	}
	if _, err := h.eng.StartEval(ctx, "acme", durable.EvalRequest{Agent: "nobody", Cases: []evals.Case{inputCase("a", "x", evals.Expect{})}}); !errors.Is(err, durable.ErrUnknownAgent) {
		t.Fatalf("unknown agent: %v", err)
	}
	one := []evals.Case{inputCase("a", "x", evals.Expect{})}
	for _, c := range []int{-1, durable.MaxEvalConcurrency + 1} {
		if _, err := h.eng.StartEval(ctx, "globex", durable.EvalRequest{Agent: "demo", Concurrency: c, Cases: one}); !errors.Is(err, core.ErrInvalidInput) {
			t.Fatalf("concurrency %d: %v", c, err)
		}
	}
	if evs, _, _ := h.eng.Evals(ctx, "globex", 10, ""); len(evs) != 0 {
		t.Fatalf("refused evals were stored: %+v", evs)
	}
	if v, err := h.eng.StartEval(ctx, "acme", durable.EvalRequest{Agent: "demo", Concurrency: durable.MaxEvalConcurrency, Cases: one}); err != nil || v.Concurrency != durable.MaxEvalConcurrency {
		t.Fatalf("concurrency %d: %+v %v", durable.MaxEvalConcurrency, v, err)
	}
}

// TestEvalCaseThatCannotStart: a case whose run its agent refuses (a
// model override the agent does not allow) is scored failed at once,
// saying why, and the next case starts in its place.
func TestEvalCaseThatCannotStart(t *testing.T) {
	h := newHarnessWith(t, evalsFile, nil)
	ctx := context.Background()
	refused := inputCase("refused", "hello", evals.Expect{})
	refused.Input.Model = scripted(turn("Mine."))
	again := refused
	again.ID = "refused-again"
	v, err := h.eng.StartEval(ctx, "acme", durable.EvalRequest{Agent: "judge", Concurrency: 1, Cases: []evals.Case{refused, again, inputCase("next", "hello", evals.Expect{})}})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range v.Cases[:2] {
		if c.Status != durable.CaseScored || c.Pass || len(c.Checks) != 1 || c.Checks[0].Name != evals.CheckRun || !strings.Contains(c.Checks[0].Detail, "the case's run could not start") {
			t.Fatalf("a refused case: %s %+v", c.Status, c.CaseResult)
		}
	}
	if v.Cases[2].Status != durable.CaseRunning {
		t.Fatalf("the next case: %s", v.Cases[2].Status)
	}
	h.pump(t)
	if v, _ = h.eng.Eval(ctx, "acme", v.EvalID); v.Status != core.EvalCompleted || v.Progress.Passed != 1 || v.Progress.Failed != 2 {
		t.Fatalf("eval: %s %+v", v.Status, v.Progress)
	}
}

// TestEvalCancel: a cancelled eval starts no more cases and cancels its
// running ones, which are scored failed.
func TestEvalCancel(t *testing.T) {
	h := newHarnessWith(t, evalsFile, nil)
	ctx := context.Background()
	var cases []evals.Case
	for i := 0; i < 6; i++ {
		cases = append(cases, inputCase(fmt.Sprint(i), "hello", evals.Expect{}))
	}
	v, err := h.eng.StartEval(ctx, "acme", durable.EvalRequest{Agent: "demo", Concurrency: 2, Cases: cases,
		Principal: &core.Principal{Tenant: "acme"}})
	if err != nil {
		t.Fatal(err)
	}
	if v, err = h.eng.CancelEval(ctx, "acme", v.EvalID); err != nil || v.Status != core.EvalCancelled {
		t.Fatalf("cancel: %+v %v", v, err)
	}
	h.pump(t)
	v, _ = h.eng.Eval(ctx, "acme", v.EvalID)
	if v.Status != core.EvalCancelled || v.Progress.Scored != 2 || v.Progress.Failed != 2 || v.Cases[2].Status != durable.CasePending {
		t.Fatalf("after the cancel: %s %+v", v.Status, v.Progress)
	}
	if _, err := h.eng.CancelEval(ctx, "globex", v.EvalID); !errors.Is(err, core.ErrNotFound) {
		t.Fatalf("another tenant cancels: %v", err)
	}
}

// TestEvalWithoutNotifier: a runner that publishes no notifications
// still writes and delivers its case runs' ends: the eval completes.
func TestEvalWithoutNotifier(t *testing.T) {
	h := newHarnessWith(t, evalsFile, nil)
	h.opts.Notifier = nil
	h.eng = durable.New(h.opts)
	ctx := context.Background()
	v, err := h.eng.StartEval(ctx, "acme", durable.EvalRequest{Agent: "demo", Concurrency: 1,
		Cases: []evals.Case{inputCase("a", "hello", evals.Expect{}), inputCase("b", "hello", evals.Expect{})}})
	if err != nil {
		t.Fatal(err)
	}
	h.pump(t)
	if v, _ = h.eng.Eval(ctx, "acme", v.EvalID); v.Status != core.EvalCompleted || v.Progress.Passed != 2 {
		t.Fatalf("eval: %s %+v", v.Status, v.Progress)
	}
}

// TestEvalTotals: an eval's totals are its scored cases' means (pass
// rate, turns, tokens, duration) and its runs' cost, a judged case's
// cost being its run's and its judge's.
func TestEvalTotals(t *testing.T) {
	h := newHarnessWith(t, `{"agents":[
 {"slug":"demo","model":{"provider":"scripted","model":"m1","turns":[{"content":"Done.","usage":{"prompt_tokens":1000,"completion_tokens":500}}]},"system":"Be brief."},
 {"slug":"judge","model":{"provider":"scripted","model":"m1","turns":[{"content":"{\"score\": 0.8}","usage":{"prompt_tokens":300,"completion_tokens":10}}]},"system":"Judge."}]}`, nil)
	h.opts.Pricer = m1Prices(t)
	h.eng = durable.New(h.opts)
	ctx := context.Background()
	v, err := h.eng.StartEval(ctx, "acme", durable.EvalRequest{Agent: "demo", Judge: "judge", Concurrency: 2, Cases: []evals.Case{
		inputCase("judged", "hello", evals.Expect{Rubric: "Is it brief?", Final: &evals.FinalCheck{Regex: "^Done"}}),
		inputCase("wrong", "hello", evals.Expect{Final: &evals.FinalCheck{Contains: []string{"Goodbye"}}}),
	}})
	if err != nil {
		t.Fatal(err)
	}
	// Both case runs take 3 s.
	h.clock.T = h.clock.T.Add(3 * time.Second)
	h.pump(t)
	if v, err = h.eng.Eval(ctx, "acme", v.EvalID); err != nil || v.Status != core.EvalCompleted {
		t.Fatalf("eval: %+v %v", v, err)
	}
	judged, wrong := v.Cases[0], v.Cases[1]
	if judged.Judge == nil || !judged.Pass || wrong.Pass {
		t.Fatalf("cases: %+v, %+v", judged.CaseResult, wrong.CaseResult)
	}
	runCost := func(id string) float64 {
		c := h.run(t, id).Cost
		if c == nil || c.TotalUSD <= 0 {
			t.Fatalf("run %s is not priced: %+v", id, c)
		}
		return c.TotalUSD
	}
	if want := runCost(judged.RunID) + runCost(judged.Judge.RunID); judged.CostUSD == nil || *judged.CostUSD != want {
		t.Errorf("the judged case's cost %v, want its run's and its judge's, %v", usd(judged.CostUSD), want)
	}
	if want := *judged.CostUSD + runCost(wrong.RunID); v.Totals.CostUSD == nil || *v.Totals.CostUSD != want {
		t.Errorf("the eval's cost %v, want %v", usd(v.Totals.CostUSD), want)
	}
	want := durable.EvalTotals{PassRate: 0.5, MeanTurns: 1, TotalTokens: 3000, MeanTokens: 1500, CostUSD: v.Totals.CostUSD, MeanDurationMS: 3000}
	if v.Totals != want {
		t.Errorf("totals %+v, want %+v", v.Totals, want)
	}
}

// usd is a cost to print: its figure, or nil.
func usd(c *float64) any {
	if c == nil {
		return nil
	}
	return *c
}

// TestEvalRecordOfNoCase: an eval record, or a case run, naming a case
// the eval does not have is an error, not a panic.
func TestEvalRecordOfNoCase(t *testing.T) {
	h := newHarnessWith(t, evalsFile, nil)
	ctx := context.Background()
	v, err := h.eng.StartEval(ctx, "acme", durable.EvalRequest{Agent: "demo", Cases: []evals.Case{inputCase("a", "hello", evals.Expect{})}})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []int{-1, 1} {
		err := h.eng.DeliverEval(ctx, core.Notification{ID: "x", RunID: v.Cases[0].RunID, Eval: &core.EvalDelivery{EvalID: v.EvalID, Case: c}})
		if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("has no case %d", c)) {
			t.Errorf("a record of case %d: %v", c, err)
		}
		st := core.RunState{RunID: "r", Config: core.RunConfig{Eval: &core.EvalRef{EvalID: v.EvalID, Case: c}}}
		if err := h.eng.CaseAnswers(ctx, "acme", &st); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("has no case %d", c)) {
			t.Errorf("the answers of case %d: %v", c, err)
		}
	}
}

// TestEvalOfAnotherVersion: an eval may run a version its agent does
// not let a run request choose; a case from a recorded run runs on the
// eval's version (the model its source took from its own version's
// agent is not carried over) and is scored with where it diverged.
func TestEvalOfAnotherVersion(t *testing.T) {
	h, _, v2 := newVersionedHarness(t)
	ctx := context.Background()
	src := h.start(t, nil, nil)
	h.pump(t)
	if env := h.envelope(t, src); env.FinalContent != "One." {
		t.Fatalf("source: %s %q", env.Status, env.FinalContent)
	}
	v, err := h.eng.StartEval(ctx, "acme", durable.EvalRequest{Agent: "demo", Version: v2,
		Cases: []evals.Case{{ID: "again", FromRun: src, Expect: evals.Expect{Final: &evals.FinalCheck{Equals: str("One.")}}}}})
	if err != nil {
		t.Fatal(err)
	}
	h.pump(t)
	if v, err = h.eng.Eval(ctx, "acme", v.EvalID); err != nil || v.Status != core.EvalCompleted || v.AgentVersion != v2 {
		t.Fatalf("eval: %+v %v", v, err)
	}
	c := v.Cases[0]
	if c.Pass || c.FinalAnswer != "Two." {
		t.Fatalf("case: %+v", c.CaseResult)
	}
	if d := c.DivergedAt; d == nil || d.Seq != 2 || d.Expected == nil || d.Expected.Content != "One." || d.Got == nil || d.Got.Content != "Two." {
		t.Fatalf("diverged at %+v", d)
	}
}

// failFirstCreate fails the first creation of each run fail picks, as a
// store that is briefly unavailable does.
type failFirstCreate struct {
	durable.Store
	mu     sync.Mutex
	fail   func(core.RunState) bool
	failed map[string]bool
}

func (s *failFirstCreate) CreateRun(ctx context.Context, head core.SessionHead, w core.Write) error {
	st := w.Output.State
	s.mu.Lock()
	first := s.fail(st) && !s.failed[st.RunID]
	if first {
		s.failed[st.RunID] = true
	}
	s.mu.Unlock()
	if first {
		return fmt.Errorf("create run %s: the store is unavailable", st.RunID)
	}
	return s.Store.CreateRun(ctx, head, w)
}

// TestEvalStartsWhatAFailedStartLeft: a case run (or a judge's run)
// whose start failed is started again: the eval's creation reads the
// eval, which starts its first case; a read after the case before it
// was scored starts the next; the sweeper delivers a case run's end
// again, which starts its judge.
func TestEvalStartsWhatAFailedStartLeft(t *testing.T) {
	fs := &failFirstCreate{failed: map[string]bool{}, fail: func(st core.RunState) bool { return st.Config.Eval != nil }}
	h := newHarnessWith(t, evalsFile, func(s durable.Store) durable.Store { fs.Store = s; return fs })
	ctx := context.Background()
	v, err := h.eng.StartEval(ctx, "acme", durable.EvalRequest{Agent: "demo", Judge: "judge", Concurrency: 1, Cases: []evals.Case{
		inputCase("first", "hello", evals.Expect{}),
		inputCase("judged", "hello", evals.Expect{Rubric: "Is it brief?"}),
	}})
	if err != nil {
		t.Fatal(err)
	}
	if v.Cases[0].Status != durable.CaseRunning || !fs.failed[v.Cases[0].RunID] {
		t.Fatalf("the first case after a failed start: %s", v.Cases[0].Status)
	}
	h.pump(t) // the first case ends; starting the next fails
	if v, err = h.eng.Eval(ctx, "acme", v.EvalID); err != nil || v.Cases[0].Status != durable.CaseScored || v.Cases[1].Status != durable.CaseRunning || !fs.failed[v.Cases[1].RunID] {
		t.Fatalf("the next case after a failed start: %+v %v", v.Cases, err)
	}
	h.pump(t) // the judged case ends; starting its judge fails
	if v, _ = h.eng.Eval(ctx, "acme", v.EvalID); v.Cases[1].Status != durable.CaseRunning {
		t.Fatalf("the judged case before its judge: %s", v.Cases[1].Status)
	}
	h.clock.T = h.clock.T.Add(time.Hour)
	h.sweep(t)
	h.pump(t)
	if v, _ = h.eng.Eval(ctx, "acme", v.EvalID); v.Status != core.EvalCompleted || v.Cases[1].Judge == nil || v.Cases[1].Judge.Score != 0.8 || !fs.failed[v.Cases[1].Judge.RunID] {
		t.Fatalf("after the sweep: %s %+v", v.Status, v.Cases[1].CaseResult)
	}
}
