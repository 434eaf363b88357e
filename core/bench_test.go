package core

import (
	"context"
	"fmt"
	"runtime"
	"testing"
)

// BenchmarkInProcessLoop runs a 20-turn scripted run with one server tool
// call per turn and a final answer, and reports the cost per turn.
func BenchmarkInProcessLoop(b *testing.B) {
	const turns = 20
	script := make([]ScriptedTurn, 0, turns+1)
	for i := 1; i <= turns; i++ {
		script = append(script, turn("", call(fmt.Sprintf("call_%d", i), "ability/search", map[string]any{"q": fmt.Sprint(i)})))
	}
	script = append(script, turn("done"))
	cfg := RunConfig{Model: scripted(script...), MaxTurns: turns + 1, Tools: []ToolDeclaration{serverTool("ability/search", nil)}}
	rn := &Runner{Machine: NewMachine(SystemClock{}), Model: ScriptedModel{},
		Tools: ToolExecutorFunc(func(_ context.Context, c ToolCall) (any, error) {
			return map[string]any{"hits": c.Parameters["q"]}, nil
		})}
	ctx := context.Background()
	var ms0, ms1 runtime.MemStats
	runtime.ReadMemStats(&ms0)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		run, err := rn.Start(ctx, StartInput{RunID: "r", SessionID: "s", Config: cfg, Messages: user("go")})
		if err != nil {
			b.Fatal(err)
		}
		if run.State.Status != StatusCompleted || run.State.Turn != turns+1 || len(run.Transcript) != 2*turns+2 {
			b.Fatalf("unexpected run: %s, %d turns, %d messages", run.State.Status, run.State.Turn, len(run.Transcript))
		}
	}
	b.StopTimer()
	runtime.ReadMemStats(&ms1)
	perTurn := float64(b.N * (turns + 1))
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/perTurn, "ns/turn")
	b.ReportMetric(float64(ms1.Mallocs-ms0.Mallocs)/perTurn, "allocs/turn")
	b.ReportMetric(float64(ms1.TotalAlloc-ms0.TotalAlloc)/perTurn, "B/turn")
}
