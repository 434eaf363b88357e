package main

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/baton-agents/baton/core"
	"github.com/baton-agents/baton/internal/agents"
)

// The in-process comparison: core.Runner with every mediation feature of
// the benchmark agent on (parameter schema validation, duplicate-call
// prevention, redaction, audit hashes, lifecycle events) against a
// minimal hand-written loop on the same workload (the floor: the same
// model and the same tool handler, a slice for the transcript and
// nothing else), each measured with testing.Benchmark in the same
// process one after the other, at 20, 100 and 500 turns with 100 B
// results. It reports time and allocations per turn (a turn is one model
// call: T tool turns and the final one), the ratio to the floor at the
// same length, and how the per-turn time at each length compares with
// 20 turns.

// floorTurns are the run lengths of the comparison.
var floorTurns = []int{20, 100, 500}

// floorRow is one run length of the comparison.
type floorRow struct {
	Turns int `json:"turns"`
	// Baton and Floor are per turn: nanoseconds, allocations and bytes.
	BatonNS     float64 `json:"baton_ns_per_turn"`
	BatonAllocs float64 `json:"baton_allocs_per_turn"`
	BatonBytes  float64 `json:"baton_bytes_per_turn"`
	FloorNS     float64 `json:"floor_ns_per_turn"`
	FloorAllocs float64 `json:"floor_allocs_per_turn"`
	FloorBytes  float64 `json:"floor_bytes_per_turn"`
	// Ratio is BatonNS / FloorNS; Growth is BatonNS / BatonNS at 20 turns.
	Ratio  float64 `json:"ratio_to_floor"`
	Growth float64 `json:"growth_vs_20_turns"`
	// Runs are the benchmark's iterations of each loop.
	BatonRuns int `json:"baton_runs"`
	FloorRuns int `json:"floor_runs"`
}

// floorLoop runs the workload by hand: call the model with the
// transcript, execute the tool call it asks for and append both, until
// it answers.
func floorLoop(ctx context.Context, w workload) ([]core.Message, error) {
	model, spec := models(), w.spec()
	transcript := userMessage()
	for turn := 1; ; turn++ {
		reply, err := model.Complete(ctx, core.ModelRequest{Turn: turn, Model: *spec, Messages: transcript[:len(transcript):len(transcript)]})
		if err != nil {
			return nil, err
		}
		if len(reply.ToolCalls) == 0 {
			return append(transcript, core.Message{Role: core.RoleAssistant, Content: reply.Content}), nil
		}
		c := reply.ToolCalls[0]
		out, err := blobHandler(ctx, core.ToolCall{ToolCallID: c.ID, ToolName: c.Name, Parameters: c.Parameters})
		if err != nil {
			return nil, err
		}
		text, _ := out.(string)
		transcript = append(transcript,
			core.Message{Role: core.RoleToolCall, Metadata: map[string]any{core.MetaToolCallID: c.ID, core.MetaToolName: c.Name, core.MetaParameters: c.Parameters}},
			core.Message{Role: core.RoleToolResult, Content: text, Metadata: map[string]any{core.MetaToolCallID: c.ID}})
	}
}

// batonLoop runs the workload with core.Runner, as runInProcess does but
// without the step marks.
func batonLoop(ctx context.Context, rn *core.Runner, cfg core.RunConfig, w workload, runID string) error {
	run, err := rn.Start(ctx, core.StartInput{RunID: runID, SessionID: runID, Config: cfg, Messages: userMessage()})
	if err != nil {
		return err
	}
	return w.check(string(run.State.Status), run.Transcript)
}

// compareFloor measures the comparison at each of turns.
func compareFloor(ctx context.Context, reg *agents.Registry, tools core.ToolExecutor, turns []int) ([]floorRow, error) {
	a, _ := reg.Get(agentSlug)
	rn := &core.Runner{Machine: core.NewMachine(core.SystemClock{}), Model: models(), Tools: tools}
	var rows []floorRow
	for _, t := range turns {
		w := workload{Turns: t, ResultBytes: 100}
		cfg, err := a.RunConfig(agents.Overrides{Model: w.spec()})
		if err != nil {
			return nil, err
		}
		// One checked run of each before measuring: the benchmark
		// functions cannot return an error.
		if err := batonLoop(ctx, rn, cfg, w, "r-check"); err != nil {
			return nil, fmt.Errorf("in-process comparison: %w", err)
		}
		msgs, err := floorLoop(ctx, w)
		if err == nil {
			err = w.check(core.StatusCompleted, msgs)
		}
		if err != nil {
			return nil, fmt.Errorf("in-process comparison: floor loop: %w", err)
		}
		var failed error
		baton := testing.Benchmark(func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				if err := batonLoop(ctx, rn, cfg, w, fmt.Sprintf("r-%d", i)); err != nil {
					failed = err
					b.FailNow()
				}
			}
		})
		floor := testing.Benchmark(func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				if _, err := floorLoop(ctx, w); err != nil {
					failed = err
					b.FailNow()
				}
			}
		})
		if failed != nil || baton.N == 0 || floor.N == 0 {
			return nil, fmt.Errorf("in-process comparison at %d turns: %v", t, failed)
		}
		perTurn := func(r testing.BenchmarkResult) (ns, allocs, bytes float64) {
			n := float64(r.N) * float64(t+1)
			return float64(r.T.Nanoseconds()) / n, float64(r.MemAllocs) / n, float64(r.MemBytes) / n
		}
		row := floorRow{Turns: t, BatonRuns: baton.N, FloorRuns: floor.N}
		row.BatonNS, row.BatonAllocs, row.BatonBytes = perTurn(baton)
		row.FloorNS, row.FloorAllocs, row.FloorBytes = perTurn(floor)
		row.Ratio = safeDiv(row.BatonNS, row.FloorNS)
		if len(rows) > 0 {
			row.Growth = safeDiv(row.BatonNS, rows[0].BatonNS)
		} else {
			row.Growth = 1
		}
		rows = append(rows, row)
	}
	return rows, nil
}

// floorMarkdown is the comparison's section of the report.
func floorMarkdown(rows []floorRow) string {
	if len(rows) == 0 {
		return ""
	}
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	p("## In process vs a hand-written loop (the floor)\n\n")
	p("The workload with 100 B results through core.Runner with the benchmark agent's mediation (parameter schema validation, duplicate-call prevention, redaction, audit hashes, events) and through a minimal hand-written loop calling the same model and tool handler (the floor), one after the other with testing.Benchmark in this process. Per turn: one model call, so T tool turns and the final one. Growth: Baton's time per turn against its time at %d turns.\n\n", rows[0].Turns)
	p("| turns | Baton µs/turn | floor µs/turn | ratio to the floor | growth vs %d turns | Baton allocs/turn | floor allocs/turn | Baton B/turn | floor B/turn | runs (Baton / floor) |\n|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n", rows[0].Turns)
	for _, r := range rows {
		p("| %d | %.2f | %.2f | **%.2f×** | **%.2f×** | %.0f | %.0f | %s | %s | %d / %d |\n", r.Turns, r.BatonNS/1e3, r.FloorNS/1e3, r.Ratio, r.Growth,
			r.BatonAllocs, r.FloorAllocs, human(r.BatonBytes), human(r.FloorBytes), r.BatonRuns, r.FloorRuns)
	}
	p("\n")
	return b.String()
}
