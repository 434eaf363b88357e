package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/baton-agents/baton/core"
	"github.com/baton-agents/baton/internal/agents"
	"github.com/baton-agents/baton/internal/app"
)

// TestSmoke runs the smoke mode (1 and 3 turns, in process and on the
// in-memory adapters) as a unit test, so the harness itself is tested in
// make test: the workload must complete with 2T+2 messages and its final
// answer (run fails otherwise), and the harness must have sampled and
// classified every step. Its streaming check serves a run over HTTP and
// reads its stream: every token the model emitted must arrive once, with
// its text (run fails on wrong text). Nothing here depends on timing.
func TestSmoke(t *testing.T) {
	var out strings.Builder
	res, err := run(context.Background(), options{smoke: true, streaming: true, repoRoot: "../..", progress: io.Discard,
		log: slog.New(slog.DiscardHandler)}, &out)
	if err != nil {
		t.Fatal(err)
	}
	p := smokePlan()
	if got, want := len(res.Cases), 2*len(p.turns)*len(p.sizes); got != want {
		t.Fatalf("%d cases, want %d", got, want)
	}
	for _, c := range res.Cases {
		if want := p.reps[c.Runtime][c.Workload.Turns] * c.Workload.steps(); c.Steps != want {
			t.Errorf("%s %s: %d steps sampled, want %d", c.Runtime, c.Workload, c.Steps, want)
		}
		if c.Runtime != rtMemory {
			continue
		}
		kinds := map[string]int{}
		for _, k := range c.ByKind {
			// Queued and chained steps of a kind and class together.
			kinds[strings.NewReplacer(", "+deliveryChained, "", " ("+deliveryChained+")", "").Replace(k.Kind)] += k.Steps
			if k.RT == 0 || k.MinRT == 0 {
				t.Errorf("%s %s: step kind %s counted no operations", c.Runtime, c.Workload, k.Kind)
			}
		}
		runs := p.reps[c.Runtime][c.Workload.Turns]
		want := map[string]int{
			kindName(string(core.StepModelTurn), classFirst, deliveryQueued):  runs,
			kindName(string(core.StepModelTurn), classSteady, deliveryQueued): runs * (c.Workload.Turns - 1),
			kindName(string(core.StepToolCall), classSteady, deliveryQueued):  runs * c.Workload.Turns,
			kindName(string(core.StepModelTurn), classFinal, deliveryQueued):  runs,
		}
		for k, n := range want {
			if kinds[k] != n {
				t.Errorf("%s %s: %d %s steps, want %d (all: %v)", c.Runtime, c.Workload, kinds[k], k, n, kinds)
			}
		}
		if c.BytesW.Mean <= 0 || c.BytesR.Mean <= 0 || c.ESM[opReceive].Calls == 0 {
			t.Errorf("%s %s: no bytes or receives counted: %+v", c.Runtime, c.Workload, c)
		}
	}
	sp := smokeStreamPlan()
	if len(res.Streaming) != 1 {
		t.Fatalf("%d streaming results, want 1 (memory)", len(res.Streaming))
	}
	if s := res.Streaming[0]; s.Tokens != sp.runs*(sp.toolTurns+1)*sp.deltas || s.Received != s.Tokens || s.Missing != 0 || s.Duplicates != 0 {
		t.Errorf("streaming: %d tokens emitted, %d received, %d missing, %d duplicated; want %d received once each",
			s.Tokens, s.Received, s.Missing, s.Duplicates, sp.runs*(sp.toolTurns+1)*sp.deltas)
	}
	for _, section := range []string{"## Per step (median / p99)", "## Round trips per step kind vs the minimum: memory", "## Token streaming"} {
		if !strings.Contains(out.String(), section) {
			t.Errorf("the report has no %q section", section)
		}
	}
}

// TestWorkloadCheck makes sure a wrong run is refused, since the
// benchmark's exit status rests on it.
func TestWorkloadCheck(t *testing.T) {
	w := workload{Turns: 1, ResultBytes: 3}
	good := []core.Message{
		{Role: core.RoleUser, Content: "go"},
		{Role: core.RoleToolCall, Content: "", Metadata: map[string]any{core.MetaToolCallID: "call_1"}},
		{Role: core.RoleToolResult, Content: "abc", Metadata: map[string]any{core.MetaToolCallID: "call_1"}},
		{Role: core.RoleAssistant, Content: finalAnswer(1)},
	}
	if err := w.check(core.StatusCompleted, good); err != nil {
		t.Fatalf("a good run was refused: %v", err)
	}
	for name, tc := range map[string]struct {
		status string
		msgs   []core.Message
	}{
		"status":       {core.StatusFailed, good},
		"length":       {core.StatusCompleted, good[:3]},
		"final answer": {core.StatusCompleted, append(append([]core.Message(nil), good[:3]...), core.Message{Role: core.RoleAssistant, Content: "?"})},
		"result size":  {core.StatusCompleted, []core.Message{good[0], good[1], {Role: core.RoleToolResult, Content: "ab"}, good[3]}},
	} {
		if err := w.check(tc.status, tc.msgs); err == nil {
			t.Errorf("%s: a wrong run was accepted", name)
		}
	}
}

// BenchmarkInProcess runs the in-process comparison's two loops, for a
// profile: go test ./scripts/bench -run '^$' -bench InProcess -cpuprofile cpu.out
func BenchmarkInProcess(b *testing.B) {
	ctx := context.Background()
	mem, err := newDist(ctx, rtMemory, memoryConfig(), app.Deps{}, slog.New(slog.DiscardHandler), 0)
	if err != nil {
		b.Fatal(err)
	}
	a, _ := mem.app.Agents.Get(agentSlug)
	rn := &core.Runner{Machine: core.NewMachine(core.SystemClock{}), Model: models(), Tools: mem.app.Tools}
	for _, t := range floorTurns {
		w := workload{Turns: t, ResultBytes: 100}
		cfg, err := a.RunConfig(agents.Overrides{Model: w.spec()})
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("baton/turns=%d", t), func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if err := batonLoop(ctx, rn, cfg, w, fmt.Sprintf("r-%d", i)); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*(t+1)), "ns/turn")
		})
		rt, agent := publicRuntime(), publicAgent()
		for _, spec := range []*core.ModelSpec{w.spec(), workload{Turns: t, ResultBytes: 100, Scripted: true}.spec()} {
			b.Run(fmt.Sprintf("public-%s/turns=%d", spec.Provider, t), func(b *testing.B) {
				b.ReportAllocs()
				for i := 0; i < b.N; i++ {
					if err := publicLoop(ctx, rt, agent, spec, w); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*(t+1)), "ns/turn")
			})
		}
		b.Run(fmt.Sprintf("floor/turns=%d", t), func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if _, err := floorLoop(ctx, w); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*(t+1)), "ns/turn")
		})
	}
}

// TestCompareFloor runs the interleaved comparison briefly: a row per
// length with the medians and the range of the ratio over the rounds,
// the first length's growth 1.
func TestCompareFloor(t *testing.T) {
	ctx := context.Background()
	mem, err := newDist(ctx, rtMemory, memoryConfig(), app.Deps{}, slog.New(slog.DiscardHandler), 0)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := compareFloor(ctx, mem.app.Agents, mem.app.Tools, []int{1, 3}, 3, time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 || rows[0].Turns != 1 || rows[1].Turns != 3 {
		t.Fatalf("rows %+v", rows)
	}
	for _, r := range rows {
		if r.Rounds != 3 || r.BatonRuns < 3 || r.FloorRuns < 3 || r.Public.Runs < 3 || r.PublicScripted.Runs < 3 {
			t.Errorf("%d turns: %d rounds, runs %d / %d / %d / %d", r.Turns, r.Rounds, r.BatonRuns, r.FloorRuns, r.Public.Runs, r.PublicScripted.Runs)
		}
		if r.BatonNS <= 0 || r.FloorNS <= 0 || r.BatonAllocs <= r.FloorAllocs || r.Public.NS <= 0 || r.PublicScripted.NS <= 0 {
			t.Errorf("%d turns: %+v", r.Turns, r)
		}
		if r.Ratio <= 0 || r.RatioRange[0] > r.Ratio || r.Ratio > r.RatioRange[1] || r.Public.Ratio <= 0 {
			t.Errorf("%d turns: ratio %.2f, range %v, public %.2f", r.Turns, r.Ratio, r.RatioRange, r.Public.Ratio)
		}
	}
	if rows[0].Growth != 1 || rows[0].Public.Growth != 1 || rows[1].Growth <= 0 {
		t.Errorf("growth %.2f / %.2f / %.2f", rows[0].Growth, rows[0].Public.Growth, rows[1].Growth)
	}
}

// TestFloorLoops checks the two loops of the in-process comparison do the
// workload: the floor's transcript and Baton's run pass the workload's
// check, and the report shows the comparison.
func TestFloorLoops(t *testing.T) {
	ctx := context.Background()
	w := workload{Turns: 3, ResultBytes: 100}
	msgs, err := floorLoop(ctx, w)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.check(core.StatusCompleted, msgs); err != nil {
		t.Fatal(err)
	}
	mem, err := newDist(ctx, rtMemory, memoryConfig(), app.Deps{}, slog.New(slog.DiscardHandler), 0)
	if err != nil {
		t.Fatal(err)
	}
	a, _ := mem.app.Agents.Get(agentSlug)
	cfg, err := a.RunConfig(agents.Overrides{Model: w.spec()})
	if err != nil {
		t.Fatal(err)
	}
	rn := &core.Runner{Machine: core.NewMachine(core.SystemClock{}), Model: models(), Tools: mem.app.Tools}
	if err := batonLoop(ctx, rn, cfg, w, "r-test"); err != nil {
		t.Fatal(err)
	}
	for _, spec := range []*core.ModelSpec{w.spec(), workload{Turns: 3, ResultBytes: 100, Scripted: true}.spec()} {
		if err := publicLoop(ctx, publicRuntime(), publicAgent(), spec, w); err != nil {
			t.Fatalf("public API (%s): %v", spec.Provider, err)
		}
	}
	if err := publicLoop(ctx, publicRuntime(), publicAgent(), workload{Turns: 2, ResultBytes: 100, Scripted: true}.spec(), w); err == nil {
		t.Fatal("the public loop accepted a run of the wrong workload")
	}
	md := floorMarkdown([]floorRow{{Turns: 20, BatonNS: 8000, FloorNS: 2000, Ratio: 4, Growth: 1,
		Public: pathRow{NS: 6000, Ratio: 3, Growth: 1}, PublicScripted: pathRow{NS: 7000, Growth: 1}}})
	if !strings.Contains(md, "| 20 | 8.00 | 2.00 | **4.00×** | 0.00–0.00× |") || !strings.Contains(md, "| 20 | 6.00 | **3.00×** | **1.00×** |") {
		t.Errorf("the comparison's row is missing from the report:\n%s", md)
	}
	if strings.Contains(md, "Targets:") {
		t.Errorf("the targets are reported without the 500-turn row:\n%s", md)
	}
	for _, tc := range []struct {
		ratio, ns500 float64
		want         string
	}{
		{4, 8800, "at 20 turns: **met** (4.00×); its time per turn at 500 turns at most 1.1× its time at 20: **met** (1.10×)"},
		{4.01, 8000, "at 20 turns: **not met** (4.01×)"},
		{3, 8900, "at 20: **not met** (1.11×)"},
	} {
		md := floorMarkdown([]floorRow{{Turns: 20, BatonNS: 8000, FloorNS: 2000, Ratio: tc.ratio, Growth: 1}, {Turns: 500, BatonNS: tc.ns500, FloorNS: 2000, Growth: tc.ns500 / 8000}})
		if !strings.Contains(md, tc.want) {
			t.Errorf("ratio %.2f, %.0f ns at 500 turns: want %q in\n%s", tc.ratio, tc.ns500, tc.want, md)
		}
	}
}

// TestLoadSmoke runs the load run on the in-memory adapters, small: every
// run must complete with its final answer, every tool call must run
// exactly once for its own tenant, each tenant's active-run count must
// be back to 0, and every step's requests must have been counted.
func TestLoadSmoke(t *testing.T) {
	cfg := loadConfig{Runs: 60, Tenants: 6, Turns: 2, ResultBytes: 100, Pollers: 4, Starters: 3, Batch: 10, Deadline: time.Minute}
	res, err := loadRun(context.Background(), options{log: slog.New(slog.DiscardHandler)}, cfg, func(string, ...any) {})
	if err != nil {
		t.Fatal(err)
	}
	if !res.ok() || !res.ActiveChecked {
		t.Fatalf("load run failed its checks: %+v", res)
	}
	if res.Steps != cfg.Runs*(2*cfg.Turns+1) || res.ToolExecutions != cfg.Runs*cfg.Turns {
		t.Errorf("%d steps and %d tool executions, want %d and %d", res.Steps, res.ToolExecutions, cfg.Runs*(2*cfg.Turns+1), cfg.Runs*cfg.Turns)
	}
	if res.Worker[opCommit].Calls < res.Steps || res.API[opCreateRun].Calls != cfg.Runs || res.ESM[opDelete].Calls == 0 || res.Invocations == 0 {
		t.Errorf("requests not counted: worker %v, API %v, ESM %v, %d invocations", res.Worker, res.API, res.ESM, res.Invocations)
	}
	if res.RunMS.P50 <= 0 || res.StepMS.P50 <= 0 || res.RunsPerSec <= 0 || res.StepsPerSec <= 0 {
		t.Errorf("figures missing: run %+v, step %+v, %.1f runs/s, %.1f steps/s", res.RunMS, res.StepMS, res.RunsPerSec, res.StepsPerSec)
	}
	md := loadMarkdown(res)
	for _, s := range []string{"**PASS**", "| **all** | SQS |"} {
		if !strings.Contains(md, s) {
			t.Errorf("the load report has no %q:\n%s", s, md)
		}
	}
}

// TestLoadTally makes sure the checks of the tool executions can fail:
// a call run twice, one never run and one run for another tenant are
// each found.
func TestLoadTally(t *testing.T) {
	l := newToolLedger()
	ctx := context.Background()
	call := func(run, id, tenant string) {
		if _, err := l.handler(ctx, core.ToolCall{RunID: run, ToolCallID: id, Tenant: tenant, Parameters: map[string]any{"bytes": 3}}); err != nil {
			t.Fatal(err)
		}
	}
	call("r1", "call_1", "a")
	call("r1", "call_2", "a")
	call("r2", "call_1", "b")
	if execs, doubled, missing, wrong := l.tally([]string{"r1", "r2"}, 2); execs != 3 || doubled != 0 || missing != 1 || wrong != 0 {
		t.Errorf("tally = %d, %d, %d, %d; want 3 executions, 0 doubled, 1 missing, 0 wrong", execs, doubled, missing, wrong)
	}
	call("r2", "call_2", "b")
	call("r2", "call_2", "b")
	call("r1", "call_2", "c")
	if execs, doubled, missing, wrong := l.tally([]string{"r1", "r2"}, 2); execs != 6 || doubled != 2 || missing != 0 || wrong != 1 {
		t.Errorf("tally = %d, %d, %d, %d; want 6 executions, 2 doubled, 0 missing, 1 wrong", execs, doubled, missing, wrong)
	}
}

// TestInitTrace checks the parser of GODEBUG=inittrace=1 lines and the
// summary the report itemises: per-start totals, per-package medians,
// the largest packages first.
func TestInitTrace(t *testing.T) {
	run := func(jsonMS, coreMS string) string {
		return "init internal/bytealg @0.004 ms, 0 ms clock, 0 bytes, 0 allocs\n" +
			"init github.com/santhosh-tekuri/jsonschema/v6 @11 ms, " + jsonMS + " ms clock, 1700544 bytes, 21277 allocs\n" +
			"baton: configuration error: something else\n" +
			"init github.com/baton-agents/baton/core @18 ms, " + coreMS + " ms clock, 357192 bytes, 4985 allocs\n" +
			"init broken @1 ms, x ms clock, 1 bytes, 1 allocs\n"
	}
	first := parseInitTrace(run("6.8", "0.81"))
	want := []pkgInit{{"internal/bytealg", 0, 0, 0}, {"github.com/santhosh-tekuri/jsonschema/v6", 6.8, 1700544, 21277}, {"github.com/baton-agents/baton/core", 0.81, 357192, 4985}}
	if len(first) != len(want) {
		t.Fatalf("parsed %+v, want %+v", first, want)
	}
	for i := range want {
		if first[i] != want[i] {
			t.Errorf("line %d: %+v, want %+v", i, first[i], want[i])
		}
	}
	s := summarizeInit([][]pkgInit{first, parseInitTrace(run("5.0", "2.0")), parseInitTrace(run("9.0", "0.5"))}, 2)
	if s.Runs != 3 || s.Packages != 3 {
		t.Errorf("runs %d, packages %d; want 3 and 3", s.Runs, s.Packages)
	}
	if math.Abs(s.TotalMS-7.61) > 1e-9 || s.Bytes != 2057736 { // the sums 7.61, 7.0, 9.5
		t.Errorf("total %v ms, %v bytes; want 7.61 ms, 2057736 bytes", s.TotalMS, s.Bytes)
	}
	if len(s.Top) != 2 || s.Top[0].Package != "github.com/santhosh-tekuri/jsonschema/v6" || s.Top[0].ClockMS != 6.8 || s.Top[1].ClockMS != 0.81 {
		t.Errorf("top %+v; want jsonschema at 6.8 ms, then core at 0.81 ms", s.Top)
	}
	if e := summarizeInit(nil, 2); e.Runs != 0 || len(e.Top) != 0 {
		t.Errorf("no runs: %+v", e)
	}
}
