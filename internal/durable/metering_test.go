package durable

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/baton-agents/baton/core"
)

// TestStepGBSeconds: a step's Lambda GB-seconds are its duration times
// the worker's memory in GB (1024 MB by default), never negative; and a
// step counts its message's three SQS requests and one invocation.
func TestStepGBSeconds(t *testing.T) {
	cases := []struct {
		memoryMB int
		elapsed  time.Duration
		want     float64
	}{
		{0, 2 * time.Second, 2},
		{-5, 2 * time.Second, 2},
		{1024, 2 * time.Second, 2},
		{512, 2 * time.Second, 1},
		{2048, 1500 * time.Millisecond, 3},
		{1, time.Second, 1.0 / 1024},
		{512, -time.Second, 0}, // a clock that went back
	}
	for _, tc := range cases {
		t.Run(fmt.Sprintf("%d MB for %v", tc.memoryMB, tc.elapsed), func(t *testing.T) {
			clock := &core.FixedClock{T: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
			e := &Runner{Metering: &Metering{LambdaMemoryMB: tc.memoryMB}, Clock: clock}
			ctx := e.meterStep(context.Background(), core.Step{}, Attempt{})
			clock.T = clock.T.Add(tc.elapsed)
			_, r := e.withSpent(ctx)
			if r.LambdaGBSeconds != tc.want || r.SQSRequests != 3 || r.LambdaRequests != 1 {
				t.Fatalf("%+v, want %v GB-s, 3 SQS requests and 1 invocation", r, tc.want)
			}
		})
	}
}
