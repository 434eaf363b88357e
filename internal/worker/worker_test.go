package worker_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/baton-agents/baton/core"
	"github.com/baton-agents/baton/internal/app"
	"github.com/baton-agents/baton/internal/durable"
)

// flakyStore fails LoadRun for one run, as a transient store error.
type flakyStore struct {
	durable.Store
	fail string
}

func (f flakyStore) LoadRun(ctx context.Context, id string) (core.RunRecord, error) {
	if id == f.fail {
		return core.RunRecord{}, core.Retryable(context.DeadlineExceeded)
	}
	return f.Store.LoadRun(ctx, id)
}

func TestBatchFailuresKeepGroupOrder(t *testing.T) {
	a, err := app.Build(context.Background(), app.Config{Stores: app.Stores{Memory: true, Visibility: time.Minute}, Agents: app.Agents{JSON: `{"agents":[{"slug":"a","model":{"provider":"scripted"}}]}`},
		Providers: []string{"scripted"}, ExecuteTools: true},
		app.Deps{Clock: &core.FixedClock{T: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}, IDs: &core.SequentialIDs{}, Log: slog.New(slog.DiscardHandler),
			WrapStore: func(s durable.Store) durable.Store { return flakyStore{s, "r-bad"} }})
	if err != nil {
		t.Fatal(err)
	}
	w := a.Worker
	step := func(run string, seq int64) string {
		b, _ := json.Marshal(core.Step{Kind: core.StepModelTurn, Format: core.StepFormat, RunID: run, Seq: seq})
		return string(b)
	}
	ev := events.SQSEvent{Records: []events.SQSMessage{
		{MessageId: "m1", Body: step("r-bad", 1), Attributes: map[string]string{"MessageGroupId": "g1", "ApproximateReceiveCount": "1"}},
		{MessageId: "m2", Body: step("r-unknown", 1), Attributes: map[string]string{"MessageGroupId": "g1"}},
		{MessageId: "m3", Body: step("r-unknown", 2), Attributes: map[string]string{"MessageGroupId": "g2"}},
		{MessageId: "m4", Body: `{"not":"a step"}`, Attributes: map[string]string{"MessageGroupId": "g3"}},
	}}
	resp, err := w.Handle(context.Background(), ev)
	if err != nil {
		t.Fatal(err)
	}
	var failed []string
	for _, f := range resp.BatchItemFailures {
		failed = append(failed, f.ItemIdentifier)
	}
	// m1 failed (retryable); m2 shares its group, so it is reported
	// unprocessed; m3 (unknown run) and m4 (not a step) are acknowledged.
	if len(failed) != 2 || failed[0] != "m1" || failed[1] != "m2" {
		t.Fatalf("failures = %v", failed)
	}
}
