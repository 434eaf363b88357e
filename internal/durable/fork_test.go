package durable_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/baton-agents/baton/core"
	"github.com/baton-agents/baton/internal/agents"
	"github.com/baton-agents/baton/internal/cost"
	"github.com/baton-agents/baton/internal/durable"
	"github.com/baton-agents/baton/internal/telemetry"
)

// writeCountingStore counts the items each run creation writes: the run,
// and each message, event, tool record, audit record, pending item and
// outbox record.
type writeCountingStore struct {
	durable.Store
	mu      sync.Mutex
	created map[string]int
}

func (c *writeCountingStore) CreateRun(ctx context.Context, head core.SessionHead, w core.Write) error {
	o := w.Output
	n := 1 + len(o.Messages) + len(o.Events) + len(o.ToolResults) + len(o.Audit) + len(w.Pending) + len(w.Notifications)
	c.mu.Lock()
	c.created[o.State.RunID] = n
	c.mu.Unlock()
	return c.Store.CreateRun(ctx, head, w)
}

// TestForkOfALongRunWritesWhatAStartWrites: forking a 500-turn run (1,500
// messages) writes as many items as starting a run does, and the fork's
// transcript reads the shared prefix and then its own messages, in
// order, page by page.
func TestForkOfALongRunWritesWhatAStartWrites(t *testing.T) {
	cs := &writeCountingStore{created: map[string]int{}}
	h := newHarness(t, func(s durable.Store) durable.Store { cs.Store = s; return cs })
	ctx := context.Background()
	const turns = 500
	var script []core.ScriptedTurn
	for i := 1; i < turns; i++ {
		script = append(script, turn(fmt.Sprintf("Looking up %d.", i), call(fmt.Sprintf("c%d", i), "ability/search", map[string]any{"q": fmt.Sprint(i)})))
	}
	script = append(script, turn("All found."))
	max := turns
	src := h.start(t, scripted(script...), func(r *durable.StartRequest) { r.Overrides.MaxTurns = &max })
	h.pump(t)
	env := h.envelope(t, src)
	if env.Status != core.StatusCompleted || len(env.Messages) != 1+3*(turns-1)+1 {
		t.Fatalf("source: %s, %d messages", env.Status, len(env.Messages))
	}
	last := int64(len(env.Messages)) // the final answer
	snap, err := h.eng.Fork(ctx, "acme", durable.ForkRequest{Source: src, Seq: last,
		Overrides: agents.Overrides{Model: scripted(turn("All found, again."))}})
	if err != nil {
		t.Fatal(err)
	}
	fork := snap.State.RunID
	if n, start := cs.created[fork], cs.created[src]; n > start+1 || n > 6 {
		t.Fatalf("the fork wrote %d items (the source's start %d)", n, start)
	}
	h.pump(t)
	fv := h.envelope(t, fork)
	if fv.Status != core.StatusCompleted || fv.FinalContent != "All found, again." {
		t.Fatalf("fork: %s %q", fv.Status, fv.FinalContent)
	}
	var all []core.Message
	for after := int64(0); ; {
		page, err := h.eng.Messages(ctx, "acme", fork, after, 97)
		if err != nil {
			t.Fatal(err)
		}
		if len(page) == 0 {
			break
		}
		all = append(all, page...)
		after = page[len(page)-1].Seq
	}
	if int64(len(all)) != last {
		t.Fatalf("the fork's transcript has %d messages, want %d", len(all), last)
	}
	for i, m := range all {
		if m.Seq != int64(i+1) {
			t.Fatalf("message %d has seq %d", i, m.Seq)
		}
		if i < len(all)-1 && m.Content != env.Messages[i].Content {
			t.Fatalf("message %d: %q, the source's %q", m.Seq, m.Content, env.Messages[i].Content)
		}
	}
	if all[len(all)-1].Content != "All found, again." || all[len(all)-2].Content != env.Messages[len(all)-2].Content {
		t.Fatalf("the fork's last messages: %+v", all[len(all)-2:])
	}
	// A run continuing the fork's session reads the same prefix.
	next, err := h.eng.Start(ctx, "acme", durable.StartRequest{Agent: "demo", SessionID: snap.State.SessionID, Messages: userMsg("and now?"),
		Overrides: agents.Overrides{Model: scripted(turn("Still found."))}})
	if err != nil {
		t.Fatal(err)
	}
	h.pump(t)
	nv := h.envelope(t, next.State.RunID)
	if nv.Status != core.StatusCompleted || int64(len(nv.Messages)) != last+2 || nv.Messages[0].Content != "hi" || nv.Messages[last-1].Content != "All found, again." {
		t.Fatalf("continued session: %s, %d messages", nv.Status, len(nv.Messages))
	}
	// Compare: the fork differs first at its regenerated answer.
	c, err := h.eng.Compare(ctx, "acme", src, fork)
	if err != nil {
		t.Fatal(err)
	}
	if c.DivergedAt == nil || c.DivergedAt.Seq != last || c.DivergedAt.A.Content != "All found." || c.DivergedAt.B.Content != "All found, again." {
		t.Fatalf("diverged at %+v", c.DivergedAt)
	}
	if len(c.A.ToolCalls) != turns-1 || c.A.ToolCalls[0].Outcome != durable.OutcomeExecuted || len(c.B.ToolCalls) != 0 || c.B.Turns != 1 {
		t.Fatalf("sides: a %d calls, b %d calls, %d turns", len(c.A.ToolCalls), len(c.B.ToolCalls), c.B.Turns)
	}
	// A run compared with itself does not diverge.
	if same, err := h.eng.Compare(ctx, "acme", src, src); err != nil || same.DivergedAt != nil {
		t.Fatalf("a run compared with itself: %+v %v", same.DivergedAt, err)
	}
}

// TestForkRefusals: a fork point must be a user or assistant message of
// the run itself; another tenant's run is not found; the fork's
// principal has no scope its caller lacks.
func TestForkRefusals(t *testing.T) {
	h := newHarness(t, nil)
	ctx := context.Background()
	first := h.start(t, scripted(turn("one")), nil)
	h.pump(t)
	src := h.start(t, scripted(turn("", call("c1", "ability/search", map[string]any{"q": "x"})), turn("two")), func(r *durable.StartRequest) {
		r.Principal = &core.Principal{Tenant: "acme", ActorID: "ann", CapabilityCeiling: []string{"runs:read", "runs:write", "crm:write"}}
	})
	h.pump(t)
	var fe *durable.ForkPointError
	for _, seq := range []int64{1, 2, 4, 5, 7} { // the first run's, a tool call, a tool result, beyond the end
		_, err := h.eng.Fork(ctx, "acme", durable.ForkRequest{Source: src, Seq: seq})
		if !errors.As(err, &fe) || !errors.Is(err, durable.ErrForkPoint) {
			t.Fatalf("seq %d: %v", seq, err)
		}
		if fmt.Sprint(fe.Valid) != "[{3 user} {6 assistant}]" {
			t.Fatalf("seq %d: valid points %v (%v)", seq, fe.Valid, err)
		}
	}
	if _, err := h.eng.Fork(ctx, "globex", durable.ForkRequest{Source: src, Seq: 3}); !errors.Is(err, core.ErrNotFound) {
		t.Fatalf("another tenant's fork: %v", err)
	}
	if _, err := h.eng.Compare(ctx, "globex", src, first); !errors.Is(err, core.ErrNotFound) {
		t.Fatalf("another tenant's compare: %v", err)
	}
	if _, err := h.eng.Fork(ctx, "acme", durable.ForkRequest{Source: src, Seq: 3, Tools: "maybe"}); !errors.Is(err, core.ErrInvalidInput) {
		t.Fatalf("unknown tool mode: %v", err)
	}
	snap, err := h.eng.Fork(ctx, "acme", durable.ForkRequest{Source: src, Seq: 3,
		Caller: &core.Principal{Tenant: "acme", ActorID: "bob", CapabilityCeiling: []string{"runs:read", "runs:write"}}})
	if err != nil {
		t.Fatal(err)
	}
	p := snap.State.Config.Principal
	if p == nil || p.ActorID != "ann" || fmt.Sprint(p.CapabilityCeiling) != "[runs:read runs:write]" {
		t.Fatalf("fork principal %+v", p)
	}
	if f := snap.State.Config.ForkedFrom; f == nil || *f != (core.ForkRef{RunID: src, Seq: 3, Tools: core.ForkToolsReuse}) {
		t.Fatalf("forked_from %+v", f)
	}
	h.pump(t)
	page, err := h.eng.List(ctx, "acme", core.RunListQuery{Limit: 10, ForkedFrom: src})
	if err != nil || len(page.Runs) != 1 || page.Runs[0].RunID != snap.State.RunID {
		t.Fatalf("forks of the source: %+v %v", page.Runs, err)
	}
	if _, err := h.eng.List(ctx, "globex", core.RunListQuery{Limit: 10, ForkedFrom: src}); !errors.Is(err, core.ErrNotFound) {
		t.Fatalf("another tenant lists the forks: %v", err)
	}
}

// TestForkReplaysInTheTrace: a fork's reused call executes nothing (its
// result is the source's recorded one), its step span says it was
// replayed and from where, and every step span of the fork names its
// source.
func TestForkReplaysInTheTrace(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	h := newHarness(t, nil)
	h.opts.Telemetry = telemetry.Settings{Provider: sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))}
	h.eng = durable.New(h.opts)
	ctx := context.Background()
	script := scripted(turn("", call("c1", "ability/charge", map[string]any{"amount": 10})), turn("Charged."))
	src := h.start(t, script, nil)
	h.pump(t)
	if h.count.n["c1"] != 1 {
		t.Fatalf("source charged %d times", h.count.n["c1"])
	}
	snap, err := h.eng.Fork(ctx, "acme", durable.ForkRequest{Source: src, Seq: 1, Overrides: agents.Overrides{Model: script}})
	if err != nil {
		t.Fatal(err)
	}
	h.pump(t)
	if env := h.envelope(t, snap.State.RunID); env.Status != core.StatusCompleted || h.count.n["c1"] != 1 || env.ToolExecutionResults[0].ReplayedFrom == nil ||
		canon(t, env.ToolExecutionResults[0].Result.Result) != `{"ok":{"amount":10}}` {
		t.Fatalf("fork: %s, charged %d times in all, records %+v", env.Status, h.count.n["c1"], env.ToolExecutionResults)
	}
	replayed, forkSteps := 0, 0
	for _, s := range rec.Ended() {
		attrs := map[string]any{}
		for _, kv := range s.Attributes() {
			attrs[string(kv.Key)] = kv.Value.AsInterface()
		}
		if attrs["baton.run_id"] != snap.State.RunID || s.Name()[:5] != "step " {
			continue
		}
		forkSteps++
		if attrs["baton.forked_from.run_id"] != src || attrs["baton.fork.tools"] != "reuse" {
			t.Errorf("step span %s: %v", s.Name(), attrs)
		}
		if attrs["baton.tool.replayed"] == true {
			replayed++
			if attrs["baton.tool.replayed_from.run_id"] != src || attrs["baton.tool.replayed_from.seq"] != int64(3) {
				t.Errorf("replayed span %v", attrs)
			}
		}
	}
	if forkSteps != 3 || replayed != 1 {
		t.Fatalf("%d step spans of the fork, %d replayed; want 3 and 1", forkSteps, replayed)
	}
}

// TestForkKeepsItsSourceSettings: a fork whose body names no model,
// turns or budgets runs with its source's (a scripted model included),
// where the agent lets a request set them; a body's own win.
func TestForkKeepsItsSourceSettings(t *testing.T) {
	h := newHarness(t, nil)
	ctx := context.Background()
	maxTurns := 3
	src := h.start(t, scripted(turn("", call("c1", "ability/search", map[string]any{"q": "x"})), turn("Found x.")), func(r *durable.StartRequest) {
		r.Overrides.MaxTurns = &maxTurns
		r.Overrides.Budgets = core.BudgetLimits{core.BudgetToolCalls: 5}
	})
	h.pump(t)
	snap, err := h.eng.Fork(ctx, "acme", durable.ForkRequest{Source: src, Seq: 1})
	if err != nil {
		t.Fatal(err)
	}
	cfg := snap.State.Config
	if cfg.MaxTurns != 3 || cfg.Budgets[core.BudgetToolCalls] != 5 || len(cfg.Model.Turns) != 2 {
		t.Fatalf("fork settings: max_turns %d budgets %v model turns %d", cfg.MaxTurns, cfg.Budgets, len(cfg.Model.Turns))
	}
	h.pump(t)
	if env := h.envelope(t, snap.State.RunID); env.Status != core.StatusCompleted || env.FinalContent != "Found x." || h.count.n["c1"] != 1 {
		t.Fatalf("fork: %s %q, c1 ran %d times in all", env.Status, env.FinalContent, h.count.n["c1"])
	}
	other := 6
	snap, err = h.eng.Fork(ctx, "acme", durable.ForkRequest{Source: src, Seq: 1, Overrides: agents.Overrides{MaxTurns: &other, Model: scripted(turn("Own."))}})
	if err != nil || snap.State.Config.MaxTurns != 6 || snap.State.Config.Model.Turns[0].Content != "Own." {
		t.Fatalf("a fork's own settings: %+v %v", snap.State.Config.MaxTurns, err)
	}
}

// recordReadsStore counts the tool-record reads of each run.
type recordReadsStore struct {
	durable.Store
	mu    sync.Mutex
	reads map[string]int
}

func (c *recordReadsStore) ToolRecords(ctx context.Context, runID string, before int64) ([]core.ToolExecutionResult, []core.AuditEvent, error) {
	c.mu.Lock()
	c.reads[runID]++
	c.mu.Unlock()
	return c.Store.ToolRecords(ctx, runID, before)
}

// TestForkReadsAFinishedRecordOnce: a fork whose every call is answered
// from its finished source's record reads that record once, not once a
// step.
func TestForkReadsAFinishedRecordOnce(t *testing.T) {
	cs := &recordReadsStore{reads: map[string]int{}}
	h := newHarness(t, func(s durable.Store) durable.Store { cs.Store = s; return cs })
	ctx := context.Background()
	var turns []core.ScriptedTurn
	for i := 0; i < 5; i++ {
		turns = append(turns, turn("", call(fmt.Sprint("c", i), "ability/search", map[string]any{"q": fmt.Sprint(i)})))
	}
	script := scripted(append(turns, turn("Five found."))...)
	src := h.start(t, script, nil)
	h.pump(t)
	snap, err := h.eng.Fork(ctx, "acme", durable.ForkRequest{Source: src, Seq: 1, Overrides: agents.Overrides{Model: script}})
	if err != nil {
		t.Fatal(err)
	}
	cs.reads = map[string]int{}
	h.pump(t)
	env := h.envelope(t, snap.State.RunID)
	if env.Status != core.StatusCompleted || len(env.ToolExecutionResults) != 5 || env.ToolExecutionResults[4].ReplayedFrom == nil {
		t.Fatalf("fork: %s, %d results", env.Status, len(env.ToolExecutionResults))
	}
	if cs.reads[src] != 1 {
		t.Fatalf("the source's record was read %d times for five replayed calls", cs.reads[src])
	}
}

// sameSessionIDs names every new session s-1 (a session that exists);
// other ids are sequential.
type sameSessionIDs struct {
	core.SequentialIDs
	sessions int
}

func (s *sameSessionIDs) NewID(prefix string) string {
	if prefix == "s" {
		s.sessions++
		return "s-1"
	}
	return s.SequentialIDs.NewID(prefix)
}

// TestForkSessionIDsInUse: a fork starts on a session id no session has;
// an id source that keeps naming a used one is asked 8 times, then the
// fork is refused as a conflict.
func TestForkSessionIDsInUse(t *testing.T) {
	h := newHarness(t, nil)
	src := h.start(t, scripted(turn("one")), nil) // on session s-1
	h.pump(t)
	ids := &sameSessionIDs{}
	h.opts.IDs = ids
	h.eng = durable.New(h.opts)
	_, err := h.eng.Fork(context.Background(), "acme", durable.ForkRequest{Source: src, Seq: 1})
	if !errors.Is(err, core.ErrConflict) || ids.sessions != 9 {
		t.Fatalf("fork: %v after %d session ids; want a conflict after 9 (the first and 8 more)", err, ids.sessions)
	}
}

// TestForkInheritsWhatItsSourceWasAsked: a fork takes its source's cost
// budget, other budgets, parallel calls and context budget when its
// source's request set them, and its agent's defaults when it did not;
// run_forked says whether the message at the fork point was replaced.
func TestForkInheritsWhatItsSourceWasAsked(t *testing.T) {
	h := newHarnessWith(t, `{"agents":[{"slug":"demo","model":{"provider":"scripted","model":"m1"},"system":"Be brief.","budgets":{"tool_calls":10},
 "allow_overrides":["model","budgets","parallel_tool_calls","context_budget"]}]}`, nil)
	table, err := cost.NewTable("us-east-1", "")
	if err != nil {
		t.Fatal(err)
	}
	h.opts.Pricer = table
	h.eng = durable.New(h.opts)
	ctx := context.Background()
	parallel, window := true, 5000
	asked := h.start(t, nil, func(r *durable.StartRequest) {
		r.Overrides = agents.Overrides{Budgets: core.BudgetLimits{core.BudgetCostUSD: 0.5}, ParallelToolCalls: &parallel, ContextBudget: &window,
			Model: scripted(turn("Asked."))}
	})
	plain := h.start(t, nil, func(r *durable.StartRequest) { r.SessionID = "s-2"; r.Overrides = agents.Overrides{} })
	fewer := h.start(t, nil, func(r *durable.StartRequest) {
		r.SessionID = "s-3"
		r.Overrides = agents.Overrides{Budgets: core.BudgetLimits{core.BudgetToolCalls: 3}}
	})
	h.pump(t)
	for _, tc := range []struct {
		src       string
		content   *string
		costUSD   float64
		toolCalls float64
		parallel  bool
		window    int
	}{
		{asked, nil, 0.5, 10, true, 5000},
		{plain, str("Edited."), 0, 10, false, 0},
		{fewer, nil, 0, 3, false, 0},
	} {
		snap, err := h.eng.Fork(ctx, "acme", durable.ForkRequest{Source: tc.src, Seq: 1, Content: tc.content})
		if err != nil {
			t.Fatal(err)
		}
		cfg := snap.State.Config
		if cfg.CostBudgetUSD != tc.costUSD || float64(cfg.Budgets[core.BudgetToolCalls]) != tc.toolCalls || cfg.ParallelToolCalls != tc.parallel || cfg.ContextBudget != tc.window {
			t.Errorf("fork of %s: cost budget %g, budgets %v, parallel %v, context budget %d", tc.src, cfg.CostBudgetUSD, cfg.Budgets, cfg.ParallelToolCalls, cfg.ContextBudget)
		}
		var edited any
		for _, ev := range snap.Written.Events {
			if ev.Type == core.EventRunForked {
				edited = ev.Data.(*core.RunForkedData).Edited
			}
		}
		if edited != (tc.content != nil) {
			t.Errorf("fork of %s: run_forked edited %v", tc.src, edited)
		}
	}
}

// newVersionedHarness is a harness on two agent versions whose agent
// demo answers "One." in v1, the default alias's pick, and "Two." in v2,
// which the alias "beta" picks; neither lets a request pin a version.
func newVersionedHarness(t *testing.T) (h *harness, v1, v2 string) {
	t.Helper()
	file := `{"agents":[{"slug":"demo","model":{"provider":"scripted","turns":[{"content":"%s"}]},"allow_overrides":["model"],"system":"Be brief."}]}`
	v1, v2 = core.AgentVersionID([]byte("1")), core.AgentVersionID([]byte("2"))
	h = newHarnessWith(t, fmt.Sprintf(file, "One."), nil)
	h.opts.Versions = mapVersions{"": versionOf(t, "", fmt.Sprintf(file, "One.")), v1: versionOf(t, v1, fmt.Sprintf(file, "One.")), v2: versionOf(t, v2, fmt.Sprintf(file, "Two."))}
	h.eng = durable.New(h.opts)
	for alias, v := range map[string]string{core.DefaultAlias: v1, "beta": v2} {
		if _, err := h.store.PutAgentAlias(context.Background(), core.AgentAlias{Name: alias, Routes: []core.AliasRoute{{Version: v, Weight: 100}}}, 0); err != nil {
			t.Fatal(err)
		}
	}
	return h, v1, v2
}

// TestForkRunsOnItsSourcesVersion: a fork naming no version or alias
// runs on its source's version, even once the default alias picks
// another; a fork naming an alias runs on the alias's pick.
func TestForkRunsOnItsSourcesVersion(t *testing.T) {
	h, v1, v2 := newVersionedHarness(t)
	ctx := context.Background()
	src := h.start(t, nil, nil)
	h.pump(t)
	if _, err := h.store.PutAgentAlias(ctx, core.AgentAlias{Name: core.DefaultAlias, Routes: []core.AliasRoute{{Version: v2, Weight: 100}}}, 1); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ alias, version, answer string }{{"", v1, "One."}, {"beta", v2, "Two."}} {
		snap, err := h.eng.Fork(ctx, "acme", durable.ForkRequest{Source: src, Seq: 1, Alias: tc.alias})
		if err != nil {
			t.Fatal(err)
		}
		h.pump(t)
		if env := h.envelope(t, snap.State.RunID); snap.State.Config.AgentVersion != tc.version || env.FinalContent != tc.answer {
			t.Errorf("fork with alias %q: on %q, answered %q; want %q, %q", tc.alias, snap.State.Config.AgentVersion, env.FinalContent, tc.version, tc.answer)
		}
	}
}

// TestCompareOutcomes: a compared run's tool calls say how each was
// answered: executed, replayed from the source's record, or not
// recorded (a replay fork's call its source never made).
func TestCompareOutcomes(t *testing.T) {
	h := newHarness(t, nil)
	ctx := context.Background()
	charge := func(amount int) *core.ModelSpec {
		return scripted(turn("", call("c1", "ability/charge", map[string]any{"amount": amount})), turn("Charged."))
	}
	src := h.start(t, charge(10), nil)
	h.pump(t)
	for _, tc := range []struct {
		model *core.ModelSpec
		want  string
	}{{charge(10), durable.OutcomeReplayed}, {charge(20), durable.OutcomeNotRecorded}} {
		snap, err := h.eng.Fork(ctx, "acme", durable.ForkRequest{Source: src, Seq: 1, Tools: core.ForkToolsReplay, Overrides: agents.Overrides{Model: tc.model}})
		if err != nil {
			t.Fatal(err)
		}
		h.pump(t)
		c, err := h.eng.Compare(ctx, "acme", src, snap.State.RunID)
		if err != nil {
			t.Fatal(err)
		}
		if len(c.A.ToolCalls) != 1 || c.A.ToolCalls[0].Outcome != durable.OutcomeExecuted || len(c.B.ToolCalls) != 1 || c.B.ToolCalls[0].Outcome != tc.want {
			t.Errorf("compared calls: %+v and %+v, want executed and %s", c.A.ToolCalls, c.B.ToolCalls, tc.want)
		}
	}
	if h.count.n["c1"] != 1 {
		t.Fatalf("charged %d times in all", h.count.n["c1"])
	}
}
