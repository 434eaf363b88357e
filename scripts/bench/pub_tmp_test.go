package main

import (
	"context"
	"fmt"
	"testing"

	"github.com/baton-agents/baton/baton"
	"github.com/baton-agents/baton/core"
)

type blobParams struct {
	I     int `json:"i"`
	Bytes int `json:"bytes"`
}

func BenchmarkPublicTmp(b *testing.B) {
	ctx := context.Background()
	for _, t := range []int{20, 500} {
		w := workload{Turns: t, ResultBytes: 100, Scripted: true}
		spec := w.spec()
		agent := baton.Agent{Name: "bench", Model: *spec, MaxTurns: 600, ToolResultMaxBytes: 131072,
			Tools: []baton.Tool{{Name: toolName, Description: "blob", Parameters: map[string]any{"type": "object", "required": []any{"i", "bytes"},
				"properties": map[string]any{"i": map[string]any{"type": "integer"}, "bytes": map[string]any{"type": "integer"}}},
				Handler: baton.Typed(func(_ context.Context, p blobParams, _ baton.ToolCall) (string, error) { return blob(p.Bytes), nil })}}}
		rt := &baton.Runtime{}
		b.Run(fmt.Sprintf("turns=%d", t), func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				r, err := rt.Start(ctx, agent, baton.Request{Prompt: "go"})
				if err != nil || r.Status() != core.StatusCompleted {
					b.Fatal(err, r.Status())
				}
				_ = r.Envelope()
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*(t+1)), "ns/turn")
		})
	}
}
