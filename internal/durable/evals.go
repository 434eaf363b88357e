package durable

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/baton-agents/baton/core"
	"github.com/baton-agents/baton/internal/agents"
	"github.com/baton-agents/baton/internal/evals"
)

// Evaluations (core/evals.go): an eval starts its first Concurrency
// cases as ordinary runs of the tenant's, with run ids derived from the
// eval and the case; when a case run ends, the outbox record its last
// commit wrote (delivered at once, or by the sweeper after a crash)
// scores the case, once (the store keeps the first result), and starts
// the case Concurrency places after it. No process waits for the cases,
// and a repeated delivery starts nothing twice: a case's run id is its
// own. A case with a rubric, in an eval with a judge, is scored once the
// judge agent's run (a child of the case run) ended.

// Eval defaults and limits.
const (
	DefaultEvalConcurrency = 5
	MaxEvalConcurrency     = 50
	// DefaultJudgeMinScore is the score a judged case needs to pass.
	DefaultJudgeMinScore = 0.5
	judgeCall            = "eval_judge"
)

// ErrInvalidDataset: an eval's dataset has a case that cannot run (400);
// the error is an *evals.LineError naming it.
var ErrInvalidDataset = errors.New("invalid dataset")

// EvalRequest is a validated POST /v1/evals.
type EvalRequest struct {
	Name           string
	Agent          string
	Alias, Version string
	// Tools is the tool mode of every case ("": replay for a case from
	// a recorded run, live for a case with its own input).
	Tools       string
	Judge       string
	Concurrency int
	Cases       []evals.Case
	// DatasetFrom, instead of Cases, names an eval of the tenant's whose
	// dataset the eval runs (another version on the same cases).
	DatasetFrom string
	Principal   *core.Principal
}

// EvalView is the public view of an eval.
type EvalView struct {
	EvalID       string         `json:"eval_id"`
	Name         string         `json:"name,omitempty"`
	Agent        string         `json:"agent"`
	AgentVersion string         `json:"agent_version"`
	Alias        string         `json:"alias,omitempty"`
	Tools        string         `json:"tools,omitempty"`
	Judge        string         `json:"judge,omitempty"`
	Concurrency  int            `json:"concurrency"`
	Status       string         `json:"status"`
	CreatedAt    time.Time      `json:"created_at"`
	EndedAt      *time.Time     `json:"ended_at,omitempty"`
	Progress     EvalProgress   `json:"progress"`
	Totals       EvalTotals     `json:"totals"`
	Cases        []EvalCaseView `json:"cases,omitempty"`
}

// EvalProgress counts an eval's cases.
type EvalProgress struct {
	Total   int `json:"total"`
	Started int `json:"started"`
	Scored  int `json:"scored"`
	Passed  int `json:"passed"`
	Failed  int `json:"failed"`
}

// EvalTotals sum up an eval's scored cases; CostUSD is what all of its
// runs cost (case runs and judges).
type EvalTotals struct {
	PassRate       float64  `json:"pass_rate"`
	MeanTurns      float64  `json:"mean_turns"`
	TotalTokens    int64    `json:"total_tokens"`
	MeanTokens     float64  `json:"mean_tokens"`
	CostUSD        *float64 `json:"cost_usd"`
	MeanDurationMS int64    `json:"mean_duration_ms"`
}

// EvalCaseView is one case of an eval: pending (not started), running,
// or scored with its result.
type EvalCaseView struct {
	ID     string `json:"id"`
	Index  int    `json:"index"`
	RunID  string `json:"run_id"`
	Status string `json:"status"`
	*CaseResult
}

// Case statuses.
const (
	CasePending = "pending"
	CaseRunning = "running"
	CaseScored  = "scored"
)

// CaseResult is a scored case.
type CaseResult struct {
	Pass        bool                `json:"pass"`
	Checks      []evals.CheckResult `json:"checks"`
	FinalAnswer string              `json:"final_answer"`
	Turns       int                 `json:"turns"`
	TotalTokens int64               `json:"total_tokens"`
	// CostUSD is what the case's run and its judge's cost.
	CostUSD    *float64         `json:"cost_usd"`
	DurationMS int64            `json:"duration_ms"`
	DivergedAt *CaseDivergence  `json:"diverged_at,omitempty"`
	Judge      *JudgeScore      `json:"judge,omitempty"`
	ScoredAt   time.Time        `json:"scored_at"`
	Trajectory []evals.ToolStep `json:"-"`
}

// CaseDivergence is where a case from a recorded run first differs from
// it: the recorded message (expected) and the case run's (got).
type CaseDivergence struct {
	Seq      int64        `json:"seq"`
	Expected *MessageView `json:"expected"`
	Got      *MessageView `json:"got"`
}

// JudgeScore is a judge's score of a case.
type JudgeScore struct {
	RunID  string  `json:"run_id"`
	Score  float64 `json:"score"`
	Reason string  `json:"reason"`
}

// caseRunID is the run id of an eval's case i, and judgeRunID that of
// its judge's run.
func caseRunID(evalID string, i int) string {
	return core.ChildRunID(evalID, fmt.Sprintf("case-%d", i))
}
func judgeRunID(caseRun string) string { return core.ChildRunID(caseRun, judgeCall) }

// smallCache keeps up to 64 values that never change once stored (an
// eval's decoded dataset, a finished run's record of tool calls), and
// starts over when full.
type smallCache[V any] struct {
	mu sync.Mutex
	m  map[string]V
}

func (c *smallCache[V]) get(key string) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	v, ok := c.m[key]
	return v, ok
}

func (c *smallCache[V]) put(key string, v V) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) >= 64 {
		c.m = map[string]V{}
	}
	c.m[key] = v
}

// evalOf reads an eval and its cases.
func (e *Runner) evalOf(ctx context.Context, tenant, id string) (core.EvalRecord, []evals.Case, error) {
	rec, err := e.Store.GetEval(ctx, tenant, id)
	if err != nil {
		return core.EvalRecord{}, nil, err
	}
	if cs, ok := e.evals.get(id); ok {
		return rec, cs, nil
	}
	var cs []evals.Case
	if err := core.DecodeJSON(rec.Dataset, &cs); err != nil {
		return core.EvalRecord{}, nil, fmt.Errorf("eval %s: its dataset: %w", id, err)
	}
	e.evals.put(id, cs)
	return rec, cs, nil
}

// StartEval stores an eval and starts its first cases.
func (e *Runner) StartEval(ctx context.Context, tenant string, req EvalRequest) (EvalView, error) {
	if req.DatasetFrom != "" {
		_, cs, err := e.evalOf(ctx, tenant, req.DatasetFrom)
		if errors.Is(err, core.ErrNotFound) {
			return EvalView{}, fmt.Errorf("%w: dataset_from: no eval %s of this tenant", ErrInvalidDataset, req.DatasetFrom)
		}
		if err != nil {
			return EvalView{}, err
		}
		req.Cases = cs
	}
	if err := evals.Check(req.Cases); err != nil {
		return EvalView{}, fmt.Errorf("%w: %w", ErrInvalidDataset, err)
	}
	if req.Concurrency == 0 {
		req.Concurrency = DefaultEvalConcurrency
	}
	if req.Concurrency < 1 || req.Concurrency > MaxEvalConcurrency {
		return EvalView{}, fmt.Errorf("%w: concurrency is 1 to %d", core.ErrInvalidInput, MaxEvalConcurrency)
	}
	if req.Tools != "" && !core.ValidForkTools(req.Tools) {
		return EvalView{}, fmt.Errorf("%w: tools %q: use reuse, replay or live", core.ErrInvalidInput, req.Tools)
	}
	id := e.IDs.NewID("ev")
	// An eval may name any published version (evaluating one is not
	// serving it), or an alias, picked once for every case.
	v, err := e.startVersion(ctx, tenant, id, StartRequest{Agent: req.Agent, Alias: req.Alias, Version: req.Version, inherited: req.Version != ""})
	if errors.Is(err, core.ErrNotFound) {
		return EvalView{}, fmt.Errorf("%w %s", ErrUnknownVersion, req.Version)
	}
	if err != nil {
		return EvalView{}, err
	}
	for _, a := range []string{req.Agent, req.Judge} {
		if _, ok := v.Agents.Get(a); a != "" && !ok {
			return EvalView{}, fmt.Errorf("%w %q in agent version %s", ErrUnknownAgent, a, cmp.Or(v.ID, "(the deployment's file)"))
		}
	}
	for i, c := range req.Cases {
		if c.FromRun == "" {
			continue
		}
		if _, err := e.loadOwned(ctx, tenant, c.FromRun); errors.Is(err, core.ErrNotFound) {
			return EvalView{}, fmt.Errorf("%w: %w", ErrInvalidDataset, &evals.LineError{Line: i + 1, Err: fmt.Errorf("from_run %s: no such run of this tenant", c.FromRun)})
		} else if err != nil {
			return EvalView{}, err
		}
	}
	dataset, err := json.Marshal(req.Cases)
	if err != nil {
		return EvalView{}, err
	}
	rec := core.EvalRecord{ID: id, Tenant: tenant, Name: req.Name, Agent: req.Agent, Alias: req.Alias, Version: v.ID, Tools: req.Tools,
		Judge: req.Judge, Concurrency: req.Concurrency, Total: len(req.Cases), Dataset: dataset, Principal: req.Principal, CreatedAt: e.Clock.Now()}
	if err := e.Store.CreateEval(ctx, rec); err != nil {
		return EvalView{}, err
	}
	e.evals.put(id, req.Cases)
	for i := 0; i < min(rec.Concurrency, rec.Total); i++ {
		if err := e.startCase(ctx, rec, req.Cases, i); err != nil {
			// The eval's view starts what is left (reconcile).
			e.Log.WarnContext(ctx, "start an eval's case; the eval's next read starts it", "eval_id", id, "case", i, "err", err)
		}
	}
	e.Log.InfoContext(ctx, "eval started", "eval_id", id, "agent", req.Agent, "agent_version", v.ID, "cases", rec.Total, "tenant", tenant)
	return e.Eval(ctx, tenant, id)
}

// startCase starts case i of an eval, unless its run exists. A case that
// cannot run as written (its input refused, its recorded run gone) is
// scored failed at once, and the next case starts.
func (e *Runner) startCase(ctx context.Context, rec core.EvalRecord, cs []evals.Case, i int) error {
	id := caseRunID(rec.ID, i)
	if _, err := e.Store.LoadRun(ctx, id); err == nil {
		return nil
	} else if !errors.Is(err, core.ErrNotFound) {
		return err
	}
	c := cs[i]
	ref := &core.EvalRef{EvalID: rec.ID, Case: i}
	var err error
	if c.FromRun != "" {
		var src core.RunRecord
		if src, err = e.loadOwned(ctx, rec.Tenant, c.FromRun); err == nil {
			_, err = e.Fork(ctx, rec.Tenant, ForkRequest{Source: c.FromRun, Seq: src.State.FirstMsgSeq, Tools: cmp.Or(rec.Tools, core.ForkToolsReplay),
				Version: rec.Version, Caller: rec.Principal, runID: id, eval: ref, pinned: true})
		}
	} else {
		ref.Tools = cmp.Or(rec.Tools, core.ForkToolsLive)
		msgs, nerr := core.NormalizeMessages(c.Input.Messages)
		if nerr != nil {
			err = fmt.Errorf("%w: %v", core.ErrInvalidInput, nerr)
		} else {
			tools := make([]any, len(c.Input.Tools))
			for j, t := range c.Input.Tools {
				tools[j] = t
			}
			_, err = e.start(ctx, rec.Tenant, StartRequest{Agent: rec.Agent, RunID: id, SessionID: core.ChildSessionID(rec.ID, fmt.Sprintf("case-%d", i)),
				Messages: msgs, RequestTools: tools, Overrides: agents.Overrides{Model: c.Input.Model}, Principal: rec.Principal,
				Version: rec.Version, inherited: true, eval: ref}, nil)
		}
	}
	if err == nil {
		return nil
	}
	if _, lerr := e.Store.LoadRun(ctx, id); lerr == nil {
		return nil // another attempt started it meanwhile
	}
	var oe *agents.OverrideError
	var fe *ForkPointError
	if !errors.Is(err, core.ErrInvalidInput) && !errors.Is(err, core.ErrNotFound) && !errors.Is(err, ErrUnknownAgent) &&
		!errors.Is(err, ErrUnknownVersion) && !errors.As(err, &oe) && !errors.As(err, &fe) {
		return err
	}
	res := CaseResult{Checks: []evals.CheckResult{{Name: evals.CheckRun, Detail: "the case's run could not start: " + err.Error()}}, ScoredAt: e.Clock.Now()}
	if err := e.record(ctx, rec, i, res); err != nil {
		return err
	}
	return e.startNext(ctx, rec, cs, i)
}

// startNext starts the case Concurrency places after case i, unless the
// eval was cancelled (read again: a cancel may have come since).
func (e *Runner) startNext(ctx context.Context, rec core.EvalRecord, cs []evals.Case, i int) error {
	next := i + rec.Concurrency
	if next >= len(cs) {
		return nil
	}
	cur, err := e.Store.GetEval(ctx, rec.Tenant, rec.ID)
	if err != nil {
		return err
	}
	if cur.Cancelled {
		return nil
	}
	return e.startCase(ctx, rec, cs, next)
}

// record stores case i's result, unless one is stored.
func (e *Runner) record(ctx context.Context, rec core.EvalRecord, i int, res CaseResult) error {
	b, err := json.Marshal(res)
	if err != nil {
		return err
	}
	first, err := e.Store.PutEvalResult(ctx, rec.ID, core.EvalResult{Case: i, Pass: res.Pass, Data: b})
	if err == nil && first {
		e.countMetric("EvalCasesScored", map[string]string{"Pass": fmt.Sprint(res.Pass)})
	}
	return err
}

// evalRecord is the outbox record of a finishing case run (or judge's
// run) that scores its case.
func evalRecord(st core.RunState) core.Notification {
	ev := st.Config.Eval
	return core.Notification{
		ID: fmt.Sprintf("%s:%d:eval", st.RunID, st.Version), RunID: st.RunID, Time: st.UpdatedAt,
		Eval: &core.EvalDelivery{EvalID: ev.EvalID, Case: ev.Case, Judge: ev.Judge},
	}
}

// deliverToEval scores the case whose run (or judge's run) n says ended,
// or starts its judge first, then starts the next case.
func (e *Runner) deliverToEval(ctx context.Context, n core.Notification) error {
	run, err := e.Store.LoadRun(ctx, n.RunID)
	if err != nil {
		return fmt.Errorf("load the eval's run: %w", err)
	}
	d := n.Eval
	rec, cs, err := e.evalOf(ctx, run.Tenant, d.EvalID)
	if errors.Is(err, core.ErrNotFound) {
		e.Log.ErrorContext(ctx, "a case run's eval is gone", "run_id", n.RunID, "eval_id", d.EvalID)
		return nil
	}
	if err != nil {
		return err
	}
	if d.Case < 0 || d.Case >= len(cs) {
		return fmt.Errorf("eval %s has no case %d", rec.ID, d.Case)
	}
	c := cs[d.Case]
	caseRun, judge := run, (*core.RunRecord)(nil)
	if d.Judge {
		if caseRun, err = e.Store.LoadRun(ctx, caseRunID(rec.ID, d.Case)); err != nil {
			return fmt.Errorf("load the judged case's run: %w", err)
		}
		judge = &run
	} else if rec.Judge != "" && c.Expect.Rubric != "" && run.State.Status == core.StatusCompleted && !rec.Cancelled {
		return e.startJudge(ctx, rec, c, run)
	}
	res, err := e.scoreCase(ctx, rec, c, caseRun, judge)
	if err != nil {
		return err
	}
	if err := e.record(ctx, rec, d.Case, res); err != nil {
		return err
	}
	return e.startNext(ctx, rec, cs, d.Case)
}

// startJudge starts the eval's judge agent on a completed case run: a
// child of the case run (listed with ?parent=), whose end scores the
// case.
func (e *Runner) startJudge(ctx context.Context, rec core.EvalRecord, c evals.Case, caseRun core.RunRecord) error {
	id := judgeRunID(caseRun.State.RunID)
	if _, err := e.Store.LoadRun(ctx, id); err == nil {
		return nil
	}
	tr, err := e.transcript(ctx, caseRun.Tenant, caseRun.State)
	if err != nil {
		return err
	}
	o := evals.OutcomeOf(caseRun.State, tr)
	question := ""
	for _, m := range tr {
		if m.Seq >= caseRun.State.FirstMsgSeq && m.Role == core.RoleUser {
			question = m.Content
			break
		}
	}
	var calls []string
	for _, s := range o.Calls {
		calls = append(calls, s.Name+" "+jsonText(s.Parameters))
	}
	prompt := fmt.Sprintf("Score this answer of an AI agent against the rubric.\n\nRubric: %s\n\nQuestion: %s\n\nTool calls: %s\n\nAnswer: %s\n\n"+
		`Reply with JSON only: {"score": a number from 0 to 1, "reason": "why"}.`, c.Expect.Rubric, question, cmp.Or(strings.Join(calls, "; "), "none"), o.Final)
	ev := *caseRun.State.Config.Eval
	ev.Judge, ev.Tools = true, ""
	_, err = e.start(ctx, rec.Tenant, StartRequest{Agent: rec.Judge, RunID: id, SessionID: core.ChildSessionID(caseRun.State.RunID, judgeCall),
		Messages: []core.Message{{Role: core.RoleUser, Content: prompt}}, Principal: rec.Principal, Version: rec.Version, inherited: true,
		Parent: &core.ParentRef{RunID: caseRun.State.RunID, ToolCallID: judgeCall, RootRunID: caseRun.State.RunID, Depth: 1}, eval: &ev}, nil)
	if err != nil {
		if _, lerr := e.Store.LoadRun(ctx, id); lerr == nil {
			return nil
		}
		return fmt.Errorf("start the judge of eval %s's case %d: %w", rec.ID, ev.Case, err)
	}
	return nil
}

// scoreCase runs a case's checks on its run (and its judge's score).
func (e *Runner) scoreCase(ctx context.Context, rec core.EvalRecord, c evals.Case, run core.RunRecord, judge *core.RunRecord) (CaseResult, error) {
	st := run.State
	tr, err := e.transcript(ctx, run.Tenant, st)
	if err != nil {
		return CaseResult{}, err
	}
	o := evals.OutcomeOf(st, tr)
	pass, checks := evals.Score(c, o)
	res := CaseResult{Pass: pass, Checks: checks, FinalAnswer: o.Final, Turns: o.Turns, TotalTokens: o.Tokens, CostUSD: o.CostUSD,
		DurationMS: max(st.UpdatedAt.Sub(st.CreatedAt), 0).Milliseconds(), ScoredAt: e.Clock.Now()}
	if judge != nil {
		jtr, err := e.transcript(ctx, judge.Tenant, judge.State)
		if err != nil {
			return CaseResult{}, err
		}
		js, check := judgeScore(judge.State, evals.OutcomeOf(judge.State, jtr).Final)
		res.Judge, res.Checks = js, append(res.Checks, check)
		res.Pass = res.Pass && check.Pass
		if jc := judge.State.Cost; jc != nil && res.CostUSD != nil {
			total := *res.CostUSD + jc.TotalUSD
			res.CostUSD = &total
		}
	}
	if f := st.Config.ForkedFrom; f != nil && c.FromRun != "" {
		src, err := e.loadOwned(ctx, run.Tenant, f.RunID)
		if err != nil {
			return CaseResult{}, err
		}
		str, err := e.transcript(ctx, run.Tenant, src.State)
		if err != nil {
			return CaseResult{}, err
		}
		if d := firstDivergence(str, tr, f.Seq); d != nil {
			res.DivergedAt = &CaseDivergence{Seq: d.Seq, Expected: d.A, Got: d.B}
		}
	}
	return res, nil
}

// judgeScore reads a judge's answer: JSON (in a code fence or not) with
// a score from 0 to 1 and a reason; the case passes its judge check at
// DefaultJudgeMinScore.
func judgeScore(j core.RunState, final string) (*JudgeScore, evals.CheckResult) {
	check := evals.CheckResult{Name: evals.CheckJudge}
	js := &JudgeScore{RunID: j.RunID}
	if j.Status != core.StatusCompleted {
		check.Detail = fmt.Sprintf("the judge's run ended %s", j.Status)
		return js, check
	}
	var ans struct {
		Score  *float64 `json:"score"`
		Reason string   `json:"reason"`
	}
	text := strings.TrimSpace(final)
	text = strings.TrimSpace(strings.TrimSuffix(strings.TrimPrefix(strings.TrimPrefix(text, "```json"), "```"), "```"))
	if err := json.Unmarshal([]byte(text), &ans); err != nil || ans.Score == nil || *ans.Score < 0 || *ans.Score > 1 {
		check.Detail = fmt.Sprintf(`the judge's answer is not {"score": 0 to 1, "reason": …}: %q`, final)
		return js, check
	}
	js.Score, js.Reason = *ans.Score, ans.Reason
	check.Pass = js.Score >= DefaultJudgeMinScore
	if !check.Pass {
		check.Detail = fmt.Sprintf("the judge scored %g (under %g): %s", js.Score, DefaultJudgeMinScore, js.Reason)
	}
	return js, check
}

func jsonText(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// Eval reads an eval of the tenant's: its progress, totals and cases.
// It starts the cases that should run and have no run (a start a crash
// cut short), so an eval read is an eval that goes on.
func (e *Runner) Eval(ctx context.Context, tenant, id string) (EvalView, error) {
	rec, cs, err := e.evalOf(ctx, tenant, id)
	if err != nil {
		return EvalView{}, err
	}
	byCase, err := e.results(ctx, id)
	if err != nil {
		return EvalView{}, err
	}
	v := e.evalView(rec, byCase)
	// The cases that should be running: the first Concurrency, and each
	// one Concurrency places after a scored case.
	due := func(i int) bool {
		if i < rec.Concurrency {
			return true
		}
		_, prev := byCase[i-rec.Concurrency]
		return prev
	}
	for i, c := range cs {
		cv := EvalCaseView{ID: c.ID, Index: i, RunID: caseRunID(id, i), Status: CasePending}
		if res, ok := byCase[i]; ok {
			cv.Status, cv.CaseResult = CaseScored, res
		} else if due(i) {
			if _, err := e.Store.LoadRun(ctx, cv.RunID); err == nil {
				cv.Status = CaseRunning
			} else if !errors.Is(err, core.ErrNotFound) {
				return EvalView{}, err
			} else if !rec.Cancelled {
				if err := e.startCase(ctx, rec, cs, i); err != nil {
					return EvalView{}, err
				}
				cv.Status = CaseRunning
			}
		}
		if cv.Status == CaseRunning {
			v.Progress.Started++
		}
		v.Cases = append(v.Cases, cv)
	}
	return v, nil
}

// results reads an eval's scored cases, by case.
func (e *Runner) results(ctx context.Context, id string) (map[int]*CaseResult, error) {
	results, err := e.Store.EvalResults(ctx, id)
	if err != nil {
		return nil, err
	}
	byCase := make(map[int]*CaseResult, len(results))
	for _, r := range results {
		var res CaseResult
		if err := core.DecodeJSON(r.Data, &res); err != nil {
			return nil, fmt.Errorf("eval %s: case %d: %w", id, r.Case, err)
		}
		byCase[r.Case] = &res
	}
	return byCase, nil
}

// evalView is an eval's view without its cases: its status, and its
// progress and totals over its scored cases (Started counts those;
// Eval adds the running ones).
func (e *Runner) evalView(rec core.EvalRecord, byCase map[int]*CaseResult) EvalView {
	v := EvalView{EvalID: rec.ID, Name: rec.Name, Agent: rec.Agent, AgentVersion: rec.Version, Alias: rec.Alias, Tools: rec.Tools, Judge: rec.Judge,
		Concurrency: rec.Concurrency, Status: core.EvalRunning, CreatedAt: rec.CreatedAt, Progress: EvalProgress{Total: rec.Total}}
	var cost float64
	priced := false
	var turns, durMS int64
	for _, res := range byCase {
		v.Progress.Scored++
		if res.Pass {
			v.Progress.Passed++
		} else {
			v.Progress.Failed++
		}
		turns += int64(res.Turns)
		durMS += res.DurationMS
		v.Totals.TotalTokens += res.TotalTokens
		if res.CostUSD != nil {
			cost, priced = cost+*res.CostUSD, true
		}
		if v.EndedAt == nil || res.ScoredAt.After(*v.EndedAt) {
			at := res.ScoredAt
			v.EndedAt = &at
		}
	}
	v.Progress.Started = v.Progress.Scored
	if n := v.Progress.Scored; n > 0 {
		v.Totals.PassRate = float64(v.Progress.Passed) / float64(n)
		v.Totals.MeanTurns = float64(turns) / float64(n)
		v.Totals.MeanTokens = float64(v.Totals.TotalTokens) / float64(n)
		v.Totals.MeanDurationMS = durMS / int64(n)
	}
	if priced {
		v.Totals.CostUSD = &cost
	}
	switch {
	case rec.Cancelled:
		v.Status, v.EndedAt = core.EvalCancelled, rec.CancelledAt
	case v.Progress.Scored == rec.Total:
		v.Status = core.EvalCompleted
	default:
		v.EndedAt = nil
	}
	return v
}

// Evals lists the tenant's evals newest first: their views without
// cases (and Started counting the scored cases only).
func (e *Runner) Evals(ctx context.Context, tenant string, limit int, cursor string) ([]EvalView, string, error) {
	recs, next, err := e.Store.ListEvals(ctx, tenant, limit, cursor)
	if err != nil {
		return nil, "", err
	}
	out := make([]EvalView, 0, len(recs))
	for _, r := range recs {
		byCase, err := e.results(ctx, r.ID)
		if err != nil {
			return nil, "", err
		}
		out = append(out, e.evalView(r, byCase))
	}
	return out, next, nil
}

// CancelEval cancels an eval of the tenant's: no case starts any more,
// and its running case runs are cancelled (each is then scored, failed).
func (e *Runner) CancelEval(ctx context.Context, tenant, id string) (EvalView, error) {
	if err := e.Store.CancelEval(ctx, tenant, id, e.Clock.Now()); err != nil {
		return EvalView{}, err
	}
	v, err := e.Eval(ctx, tenant, id)
	if err != nil {
		return EvalView{}, err
	}
	for _, c := range v.Cases {
		if c.Status != CaseRunning {
			continue
		}
		_, err := e.Apply(ctx, tenant, c.RunID, core.Cancel{Reason: "the eval " + id + " was cancelled"})
		if err != nil && !errors.Is(err, ErrFinished) {
			return EvalView{}, fmt.Errorf("cancel case %s's run %s: %w", c.ID, c.RunID, err)
		}
	}
	return v, nil
}

// caseAnswers gives an eval case's run the case's scripted client
// answers, its record (core.RecordedAnswer).
func (e *Runner) caseAnswers(ctx context.Context, tenant string, st *core.RunState) error {
	ev := st.Config.Eval
	_, cs, err := e.evalOf(ctx, tenant, ev.EvalID)
	if err != nil {
		return fmt.Errorf("run %s: its eval: %w", st.RunID, err)
	}
	if ev.Case < 0 || ev.Case >= len(cs) {
		return fmt.Errorf("run %s: eval %s has no case %d", st.RunID, ev.EvalID, ev.Case)
	}
	var calls []core.RecordedCall
	if in := cs[ev.Case].Input; in != nil {
		for i, a := range in.ClientResults {
			res := core.ToolResult{Success: a.Error == "", ToolName: a.Tool, Result: a.Result, Error: a.Error}
			if !res.Success {
				res.ErrorType = core.ErrTypeClientError
			}
			if v, err := core.ToJSONValue(a.Result); err == nil {
				res.Result = v
			}
			calls = append(calls, core.RecordedAnswer(core.ReplayRef{RunID: ev.EvalID, Seq: int64(i + 1)}, a.Tool, a.Parameters, res))
		}
	}
	st.UseRecorded(calls)
	return nil
}
