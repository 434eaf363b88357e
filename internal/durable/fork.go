package durable

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/baton-agents/baton/core"
	"github.com/baton-agents/baton/internal/agents"
)

// ForkRequest is a validated POST /v1/runs/{run_id}/fork: a new run on a
// new session whose transcript is the source run's below Seq (shared,
// not copied), then the message at Seq as it was or with Content, on the
// source's agent (its version, or the one Alias or Version names), and
// whose tool calls meet the source's record as Tools says (core/fork.go).
type ForkRequest struct {
	Source string
	Seq    int64
	// Content, when set, replaces the message at Seq.
	Content *string
	// Tools is the tool mode (default core.ForkToolsReuse).
	Tools          string
	Alias, Version string
	Overrides      agents.Overrides
	// Caller is the principal of the request: the fork carries the
	// source run's principal with no scope the caller lacks.
	Caller *core.Principal
	// runID, eval and pinned make the fork an eval's case run: its id,
	// its tag, and Version as the eval resolved it (not a caller's
	// choice, which the agent would have to allow).
	runID  string
	eval   *core.EvalRef
	pinned bool
}

// ErrForkPoint: a fork names a message that is no fork point (400); the
// error is a *ForkPointError.
var ErrForkPoint = errors.New("invalid fork point")

// ForkPointError names the messages of the source run a fork may start
// at.
type ForkPointError struct {
	Run   string
	Seq   int64
	Why   string
	Valid []ForkPointRef
	// More: more fork points than Valid lists.
	More bool
}

// ForkPointRef is one fork point: a user or assistant message.
type ForkPointRef struct {
	Seq  int64  `json:"seq"`
	Role string `json:"role"`
}

func (e *ForkPointError) Error() string {
	pts := make([]string, len(e.Valid))
	for i, p := range e.Valid {
		pts[i] = fmt.Sprintf("%d (%s)", p.Seq, p.Role)
	}
	list := strings.Join(pts, ", ")
	if e.More {
		list += ", …"
	}
	if list == "" {
		list = "none"
	}
	return fmt.Sprintf("message %d of run %s %s; a fork starts at a user or assistant message of the run: %s", e.Seq, e.Run, e.Why, list)
}

func (e *ForkPointError) Unwrap() error { return ErrForkPoint }

// forkPointsListed bounds the fork points an error lists.
const forkPointsListed = 50

// forkStart is what a fork adds to a run's start: where it comes from,
// where its shared prefix is, its source's configuration and what its
// source's agent would have had without a request's overrides.
type forkStart struct {
	from   core.ForkRef
	base   []core.TranscriptSegment
	edited bool
	src    core.RunConfig
	def    core.RunConfig
}

// inherit fills the settings a fork's body leaves unset with those its
// source's request set (where agent lets a request set them): the fork
// runs as its source was asked to (its model, a scripted one included,
// its turns, budgets, context budget and parallel calls) unless it says
// otherwise; what the source took from its agent, the fork takes from
// its own version's agent.
func (f *forkStart) inherit(agent *agents.Agent, o agents.Overrides) agents.Overrides {
	src, def := f.src, f.def
	if o.Model == nil && agent.Allows(agents.OverrideModel) && !sameJSON(src.Model, def.Model) {
		m := src.Model
		o.Model = &m
	}
	if o.MaxTurns == nil && agent.Allows(agents.OverrideMaxTurns) && src.MaxTurns != def.MaxTurns {
		n := src.MaxTurns
		o.MaxTurns = &n
	}
	if o.Budgets == nil && agent.Allows(agents.OverrideBudgets) && ((len(src.Budgets)+len(def.Budgets) > 0 && !sameJSON(src.Budgets, def.Budgets)) || src.CostBudgetUSD != def.CostBudgetUSD) {
		o.Budgets = core.BudgetLimits{}
		for k, v := range src.Budgets {
			o.Budgets[k] = float64(v)
		}
		if src.CostBudgetUSD > 0 {
			o.Budgets[core.BudgetCostUSD] = src.CostBudgetUSD
		}
	}
	if o.ParallelToolCalls == nil && agent.Allows(agents.OverrideParallelToolCalls) && src.ParallelToolCalls != def.ParallelToolCalls {
		p := src.ParallelToolCalls
		o.ParallelToolCalls = &p
	}
	if o.ContextBudget == nil && agent.Allows(agents.OverrideContextBudget) && src.ContextBudget != def.ContextBudget {
		n := src.ContextBudget
		o.ContextBudget = &n
	}
	return o
}

// sameJSON: a and b encode to the same canonical JSON.
func sameJSON(a, b any) bool {
	x, err1 := core.CanonicalJSON(a)
	y, err2 := core.CanonicalJSON(b)
	return err1 == nil && err2 == nil && string(x) == string(y)
}

// agentDefaults is the configuration the agent of run configuration cfg
// gives a run without a request's overrides, in the run's version.
func (e *Runner) agentDefaults(ctx context.Context, cfg core.RunConfig) (core.RunConfig, error) {
	v, err := e.version(ctx, cfg)
	if err != nil {
		return core.RunConfig{}, err
	}
	a, ok := v.Agents.Get(cfg.Agent)
	if !ok {
		return core.RunConfig{}, fmt.Errorf("%w %q in agent version %s", ErrUnknownAgent, cfg.Agent, v.ID)
	}
	return a.RunConfig(agents.Overrides{})
}

// Fork starts a fork of a run of the tenant's (another tenant's run is
// not found). It writes what any run start writes, however long the
// source's transcript: the shared prefix is read where it is.
func (e *Runner) Fork(ctx context.Context, tenant string, req ForkRequest) (Snapshot, error) {
	if req.Tools == "" {
		req.Tools = core.ForkToolsReuse
	}
	if !core.ValidForkTools(req.Tools) {
		return Snapshot{}, fmt.Errorf("%w: tools %q: use reuse, replay or live", core.ErrInvalidInput, req.Tools)
	}
	src, err := e.loadOwned(ctx, tenant, req.Source)
	if err != nil {
		return Snapshot{}, err
	}
	st := src.State
	at, err := e.forkPoint(ctx, tenant, st, req.Seq)
	if err != nil {
		return Snapshot{}, err
	}
	start := StartRequest{Agent: st.Config.Agent, Overrides: req.Overrides, Metadata: st.Config.Metadata,
		Principal: forkPrincipal(st.Config.Principal, req.Caller), RequestTools: requestTools(st.Config), Alias: req.Alias, Version: req.Version}
	switch {
	case req.pinned:
		start.inherited = true
	case req.Alias == "" && req.Version == "":
		start.Version, start.inherited = st.Config.AgentVersion, true
	}
	start.RunID, start.eval = req.runID, req.eval
	msg := core.Message{Role: at.Role, Content: at.Content, Metadata: at.Metadata}
	if req.Content != nil {
		msg = core.Message{Role: at.Role, Content: *req.Content}
	}
	switch {
	case at.Role == core.RoleUser || req.Content != nil:
		start.Messages = []core.Message{msg}
	default:
		// An assistant message without a new answer: asked again.
	}
	def, err := e.agentDefaults(ctx, st.Config)
	if err != nil {
		return Snapshot{}, err
	}
	return e.start(ctx, tenant, start, &forkStart{def: def,
		from: core.ForkRef{RunID: st.RunID, Seq: req.Seq, Tools: req.Tools},
		base: core.ForkBase(st.Base, st.SessionID, req.Seq), edited: req.Content != nil, src: st.Config,
	})
}

// forkPoint reads the message of run st at seq, which a fork may start
// at: a user or assistant message of the run's own.
func (e *Runner) forkPoint(ctx context.Context, tenant string, st core.RunState, seq int64) (core.Message, error) {
	refuse := func(why string) error {
		fe := &ForkPointError{Run: st.RunID, Seq: seq, Why: why, Valid: []ForkPointRef{}}
		own, err := e.messages(ctx, tenant, st.SessionID, st.Base, st.FirstMsgSeq-1, st.NextMsgSeq, 0)
		if err != nil {
			return err
		}
		for _, m := range own {
			if !core.ForkPoint(m) {
				continue
			}
			if len(fe.Valid) == forkPointsListed {
				fe.More = true
				break
			}
			fe.Valid = append(fe.Valid, ForkPointRef{Seq: m.Seq, Role: m.Role})
		}
		return fe
	}
	if seq < st.FirstMsgSeq || seq >= st.NextMsgSeq {
		return core.Message{}, refuse("is not in the run's transcript")
	}
	msgs, err := e.messages(ctx, tenant, st.SessionID, st.Base, seq-1, seq+1, 1)
	if err != nil {
		return core.Message{}, err
	}
	if len(msgs) != 1 || msgs[0].Seq != seq {
		return core.Message{}, fmt.Errorf("run %s: message %d of its transcript is missing", st.RunID, seq)
	}
	if !core.ForkPoint(msgs[0]) {
		return core.Message{}, refuse(fmt.Sprintf("is a %s message, inside a turn", msgs[0].Role))
	}
	return msgs[0], nil
}

// forkPrincipal is the principal a fork runs with: the source run's, its
// scopes cut to those the caller holds.
func forkPrincipal(src, caller *core.Principal) *core.Principal {
	if src == nil {
		return caller
	}
	p := *src
	if caller != nil {
		p.Tenant = caller.Tenant
		if len(p.CapabilityCeiling) == 0 {
			p.CapabilityCeiling = slices.Clone(caller.CapabilityCeiling)
		} else if len(caller.CapabilityCeiling) > 0 {
			p.CapabilityCeiling = slices.DeleteFunc(slices.Clone(p.CapabilityCeiling), func(c string) bool {
				return !caller.Allows(c)
			})
		}
	}
	return &p
}

// requestTools are the client tools the source run's caller declared,
// declared again for the fork.
func requestTools(cfg core.RunConfig) []any {
	var out []any
	for _, t := range cfg.Tools {
		if t.IsClient() && slices.Contains(cfg.Policy.RuntimeTools, t.Name) {
			out = append(out, map[string]any{"name": t.Name, "description": t.Description, "parameters": t.Parameters})
		}
	}
	return out
}

// recorded gives a fork's state the calls its source recorded after the
// fork point, or an eval case's run its scripted answers, when its step
// needs them (core.RunState.NeedsRecorded).
func (e *Runner) recorded(ctx context.Context, tenant string, st *core.RunState, step core.Step) error {
	if !st.NeedsRecorded(step) {
		return nil
	}
	f := st.Config.ForkedFrom
	if f == nil {
		return e.caseAnswers(ctx, tenant, st)
	}
	key := fmt.Sprintf("%s\x00%s\x00%d", tenant, f.RunID, f.Seq)
	if calls, ok := e.records.get(key); ok {
		st.UseRecorded(calls)
		return nil
	}
	src, err := e.Store.LoadRun(ctx, f.RunID)
	if err != nil {
		return fmt.Errorf("load run %s, which run %s was forked from: %w", f.RunID, st.RunID, err)
	}
	if src.Tenant != tenant {
		return fmt.Errorf("run %s was forked from run %s of another tenant", st.RunID, f.RunID)
	}
	recs, _, err := e.Store.ToolRecords(ctx, f.RunID, src.State.NextMsgSeq)
	if err != nil {
		return fmt.Errorf("read the tool records of run %s: %w", f.RunID, err)
	}
	recs = slices.DeleteFunc(recs, func(r core.ToolExecutionResult) bool { return r.Seq < f.Seq })
	if slices.ContainsFunc(recs, func(r core.ToolExecutionResult) bool { return r.ResultRef != "" }) {
		tail, err := e.messages(ctx, tenant, src.State.SessionID, src.State.Base, f.Seq-1, src.State.NextMsgSeq, 0)
		if err != nil {
			return err
		}
		if recs, err = restoreResults(recs, tail); err != nil {
			return fmt.Errorf("run %s: %w", f.RunID, err)
		}
	}
	calls := core.RecordedCalls(f.RunID, f.Seq, recs)
	if core.IsTerminal(src.State.Status) {
		// A finished run records nothing more: its record is read once
		// per process, however many steps its forks take.
		e.records.put(key, calls)
	}
	st.UseRecorded(calls)
	return nil
}

// Comparison is where two runs diverge and what each did.
type Comparison struct {
	// DivergedAt is the first message the runs' transcripts differ in
	// (nil: none, they are the same).
	DivergedAt *Divergence `json:"diverged_at"`
	A          ComparedRun `json:"a"`
	B          ComparedRun `json:"b"`
}

// Divergence is the first sequence number at which two transcripts hold
// different messages (or one holds none).
type Divergence struct {
	Seq int64        `json:"seq"`
	A   *MessageView `json:"a"`
	B   *MessageView `json:"b"`
}

// MessageView is a transcript message with its sequence number.
type MessageView struct {
	Seq      int64          `json:"seq"`
	Role     string         `json:"role"`
	Content  string         `json:"content"`
	Metadata map[string]any `json:"metadata,omitempty"`
}

// ComparedRun is one side of a comparison.
type ComparedRun struct {
	RunID        string         `json:"run_id"`
	Status       core.RunStatus `json:"status"`
	AgentVersion string         `json:"agent_version,omitempty"`
	ForkedFrom   *core.ForkRef  `json:"forked_from,omitempty"`
	FinalAnswer  string         `json:"final_answer"`
	Turns        int            `json:"turns"`
	TotalTokens  int64          `json:"total_tokens"`
	CostUSD      *float64       `json:"cost_usd"`
	DurationMS   int64          `json:"duration_ms"`
	ToolCalls    []ComparedCall `json:"tool_calls"`
}

// ComparedCall is a tool call of a compared run and how it was answered.
type ComparedCall struct {
	Seq        int64  `json:"seq"`
	ToolCallID string `json:"tool_call_id"`
	ToolName   string `json:"tool_name"`
	// Outcome is replayed (the source's recorded result), not_recorded
	// (a replay fork's call the source never made) or executed.
	Outcome string `json:"outcome"`
	Success bool   `json:"success"`
}

// Call outcomes of a compared run.
const (
	OutcomeExecuted    = "executed"
	OutcomeReplayed    = "replayed"
	OutcomeNotRecorded = "not_recorded"
)

// Compare compares two runs of the tenant's (another tenant's run is
// not found).
func (e *Runner) Compare(ctx context.Context, tenant, a, b string) (Comparison, error) {
	var sides [2]core.RunState
	var trs [2][]core.Message
	for i, id := range []string{a, b} {
		rec, err := e.loadOwned(ctx, tenant, id)
		if err != nil {
			return Comparison{}, err
		}
		tr, err := e.transcript(ctx, tenant, rec.State)
		if err != nil {
			return Comparison{}, err
		}
		sides[i], trs[i] = rec.State, tr
	}
	c := Comparison{A: e.compared(sides[0], trs[0]), B: e.compared(sides[1], trs[1])}
	c.DivergedAt = firstDivergence(trs[0], trs[1], 0)
	return c, nil
}

// firstDivergence is where two transcripts first differ at or after seq.
func firstDivergence(a, b []core.Message, from int64) *Divergence {
	cut := func(tr []core.Message) []core.Message {
		i, _ := slices.BinarySearchFunc(tr, from, func(m core.Message, seq int64) int { return cmp.Compare(m.Seq, seq) })
		return tr[i:]
	}
	a, b = cut(a), cut(b)
	for i := 0; i < max(len(a), len(b)); i++ {
		ma, mb := messageAt(a, i), messageAt(b, i)
		if ma != nil && mb != nil && ma.Seq == mb.Seq && sameMessage(*ma, *mb) {
			continue
		}
		d := &Divergence{Seq: min(seqOf(ma), seqOf(mb))}
		if ma != nil && ma.Seq == d.Seq {
			d.A = messageView(*ma)
		}
		if mb != nil && mb.Seq == d.Seq {
			d.B = messageView(*mb)
		}
		return d
	}
	return nil
}

func messageAt(tr []core.Message, i int) *core.Message {
	if i < len(tr) {
		return &tr[i]
	}
	return nil
}

func seqOf(m *core.Message) int64 {
	if m == nil {
		return 1<<63 - 1
	}
	return m.Seq
}

func messageView(m core.Message) *MessageView {
	return &MessageView{Seq: m.Seq, Role: m.Role, Content: m.Content, Metadata: m.Metadata}
}

// sameMessage: the same role and text, and for a tool call the same tool
// and canonical parameters (a replayed result is the same message as the
// one it repeats).
func sameMessage(a, b core.Message) bool {
	if a.Role != b.Role || a.Content != b.Content || a.ToolName() != b.ToolName() {
		return false
	}
	if a.Role != core.RoleToolCall {
		return true
	}
	pa, erra := core.CanonicalJSON(a.Metadata[core.MetaParameters])
	pb, errb := core.CanonicalJSON(b.Metadata[core.MetaParameters])
	return erra == nil && errb == nil && string(pa) == string(pb)
}

// compared is one side of a comparison: what run st did.
func (e *Runner) compared(st core.RunState, tr []core.Message) ComparedRun {
	sum := st.Summary()
	end := st.UpdatedAt
	if !core.IsTerminal(st.Status) {
		end = e.Clock.Now()
	}
	first, _ := slices.BinarySearchFunc(tr, st.FirstMsgSeq, func(m core.Message, seq int64) int { return cmp.Compare(m.Seq, seq) })
	own := tr[first:]
	c := ComparedRun{RunID: st.RunID, Status: st.Status, AgentVersion: st.Config.AgentVersion, ForkedFrom: st.Config.ForkedFrom,
		FinalAnswer: core.FinalContent(own), Turns: st.Turn, TotalTokens: sum.TotalTokens, CostUSD: sum.CostUSD,
		DurationMS: max(end.Sub(st.CreatedAt), 0).Milliseconds(), ToolCalls: []ComparedCall{}}
	for _, m := range own {
		if m.Role != core.RoleToolResult {
			continue
		}
		cc := ComparedCall{Seq: m.Seq, ToolCallID: m.ToolCallID(), ToolName: m.ToolName(), Outcome: OutcomeExecuted}
		cc.Success, _ = m.Metadata[core.MetaSuccess].(bool)
		switch et, _ := m.Metadata[core.MetaErrorType].(string); {
		case m.Metadata[core.MetaReplayed] == true:
			cc.Outcome = OutcomeReplayed
		case et == core.ErrTypeNotRecorded:
			cc.Outcome = OutcomeNotRecorded
		}
		c.ToolCalls = append(c.ToolCalls, cc)
	}
	return c
}
