package worker

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strconv"

	"github.com/aws/aws-lambda-go/events"

	"github.com/baton-agents/baton/core"
	"github.com/baton-agents/baton/internal/durable"
)

// Worker handles step batches.
type Worker struct {
	Runner *durable.Runner
	Log    *slog.Logger
}

// Handle processes a batch. It returns the messages to retry; it never
// fails the whole batch.
func (w *Worker) Handle(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
	var resp events.SQSEventResponse
	failedGroups := map[string]bool{}
	for _, rec := range ev.Records {
		group := rec.Attributes["MessageGroupId"]
		if failedGroups[group] && group != "" {
			resp.BatchItemFailures = append(resp.BatchItemFailures, events.SQSBatchItemFailure{ItemIdentifier: rec.MessageId})
			continue
		}
		step, ok := decodeStep(rec.Body)
		if !ok {
			w.Log.ErrorContext(ctx, "dropping a message that is not a step", "message_id", rec.MessageId)
			continue
		}
		count, _ := strconv.Atoi(rec.Attributes["ApproximateReceiveCount"])
		if count < 1 {
			count = 1
		}
		err := w.Runner.HandleStep(ctx, step, durable.Attempt{ReceiveCount: count, Owner: rec.MessageId + "#" + strconv.Itoa(count)})
		if err != nil {
			w.Log.WarnContext(ctx, "step will be retried", "run_id", step.RunID, "step_seq", step.Seq, "receive_count", count, "err", err)
			resp.BatchItemFailures = append(resp.BatchItemFailures, events.SQSBatchItemFailure{ItemIdentifier: rec.MessageId})
			failedGroups[group] = true
		}
	}
	return resp, nil
}

func decodeStep(body string) (core.Step, bool) {
	dec := json.NewDecoder(bytes.NewReader([]byte(body)))
	dec.DisallowUnknownFields()
	var s core.Step
	if err := dec.Decode(&s); err != nil {
		return core.Step{}, false
	}
	return s, s.RunID != ""
}
