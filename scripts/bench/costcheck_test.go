package main

import (
	"context"
	"math"
	"net/http"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/smithy-go/middleware"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/baton-agents/baton/core"
	batoncost "github.com/baton-agents/baton/internal/cost"
)

// recordedCall is one AWS request of a recorded step and the answer it
// got.
type recordedCall struct {
	service, op string
	in, out     any
}

func s(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }

func capOut(units float64) *types.ConsumedCapacity {
	return &types.ConsumedCapacity{TableName: aws.String("t"), CapacityUnits: aws.Float64(units)}
}

func stateQuery(rru float64) recordedCall {
	return recordedCall{"dynamodb", "Query", &dynamodb.QueryInput{TableName: aws.String("t"), KeyConditionExpression: aws.String("PK = :pk"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":pk": s("RUN#cc1")}}, &dynamodb.QueryOutput{ConsumedCapacity: capOut(rru)}}
}

// commit is a step's transaction: the run item (with its index keys;
// due "" for a finished run) and a message of size bytes.
func commit(due, status string, size int) recordedCall {
	run := map[string]types.AttributeValue{"PK": s("RUN#cc1"), "SK": s("STATE"), "status": s(status), "session": s("s1"), "agent": s("a"),
		"created_at": s("2026-01-01"), "GSI2PK": s("LIST#a"), "GSI2SK": s("2026-01-01#cc1"), "state": s(string(make([]byte, 900)))}
	if due != "" {
		run["GSI1SK"] = s(due)
	}
	msg := map[string]types.AttributeValue{"PK": s("SES#s1"), "SK": s("MSG#1"), "data": s(string(make([]byte, size)))}
	in := &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
		{Put: &types.Put{TableName: aws.String("t"), Item: run, ConditionExpression: aws.String("version = :v")}},
		{Put: &types.Put{TableName: aws.String("t"), Item: msg}},
	}}
	// DynamoDB Local reports a transaction as if it held one item.
	return recordedCall{"dynamodb", "TransactWriteItems", in, &dynamodb.TransactWriteItemsOutput{ConsumedCapacity: []types.ConsumedCapacity{*capOut(2)}}}
}

func send() recordedCall {
	return recordedCall{"sqs", "SendMessageBatch", &sqs.SendMessageBatchInput{}, &sqs.SendMessageBatchOutput{}}
}

// play sends a call through a stack carrying both counters, as
// internal/app adds them to the stores' clients (internal/cost's first,
// the benchmark's through app.Deps.InstrumentAWS), with an answer in
// place of the HTTP round trip.
func play(t *testing.T, ctx context.Context, c recordedCall) {
	t.Helper()
	st := middleware.NewStack(c.op, smithyhttp.NewStackRequest)
	// The SDK's deserializer turns the response into the output.
	deserialize := middleware.DeserializeMiddlewareFunc("answer", func(ctx context.Context, in middleware.DeserializeInput, next middleware.DeserializeHandler) (middleware.DeserializeOutput, middleware.Metadata, error) {
		out, md, err := next.HandleDeserialize(ctx, in)
		out.Result = c.out
		return out, md, err
	})
	if err := st.Deserialize.Add(deserialize, middleware.Before); err != nil {
		t.Fatal(err)
	}
	if err := batoncost.Instrument(st, c.service); err != nil {
		t.Fatal(err)
	}
	if err := instrument(st, c.service); err != nil {
		t.Fatal(err)
	}
	answer := middleware.HandlerFunc(func(context.Context, any) (any, middleware.Metadata, error) {
		return &smithyhttp.Response{Response: &http.Response{StatusCode: 200, Body: http.NoBody}}, middleware.Metadata{}, nil
	})
	if _, _, err := st.HandleMiddleware(middleware.WithOperationName(ctx, c.op), c.in, answer); err != nil {
		t.Fatal(err)
	}
}

// TestResultCostAgreesWithBench plays a recorded three-step run (a first
// model turn, a tool call, the final turn) through both counters and
// checks that result.cost, accumulated the way internal/durable's
// Metering does (a commit's units carried to the step it schedules, the
// step message's send, receive and delete and one invocation fixed per
// step), prices the same dollars as the benchmark's like-with-like count
// of the run's steps.
func TestResultCostAgreesWithBench(t *testing.T) {
	steps := []struct {
		kind, class string
		calls       []recordedCall
	}{
		{string(core.StepModelTurn), classFirst, []recordedCall{stateQuery(1),
			{"dynamodb", "Query", &dynamodb.QueryInput{TableName: aws.String("t"), KeyConditionExpression: aws.String("PK = :pk"),
				ExpressionAttributeValues: map[string]types.AttributeValue{":pk": s("SES#s1")}}, &dynamodb.QueryOutput{ConsumedCapacity: capOut(0.5)}},
			commit("due#1", "running", 300), send()}},
		{string(core.StepToolCall), classSteady, []recordedCall{stateQuery(1),
			{"dynamodb", "UpdateItem", &dynamodb.UpdateItemInput{TableName: aws.String("t"),
				Key: map[string]types.AttributeValue{"PK": s("RUN#cc1"), "SK": s("INT#c1")}}, &dynamodb.UpdateItemOutput{ConsumedCapacity: capOut(1)}},
			commit("due#1", "running", 5000), send()}},
		{string(core.StepModelTurn), classFinal, []recordedCall{stateQuery(1), commit("", "completed", 200)}},
	}
	start := newRecorder()
	play(t, withRecorder(context.Background(), start), send())

	var samples []stepSample
	var result core.Resources
	var carried *core.Resources
	for _, st := range steps {
		r, esm := newRecorder(), newRecorder()
		// What durable.Runner.meterStep seeds the step's meter with.
		m := &core.Meter{}
		if carried != nil {
			m.Add(*carried)
		}
		m.Add(core.Resources{SQSRequests: 3, LambdaRequests: 1})
		ctx := core.WithMeter(withRecorder(context.Background(), r), m)
		play(t, withRecorder(context.Background(), esm), recordedCall{"sqs", "ReceiveMessage", &sqs.ReceiveMessageInput{}, &sqs.ReceiveMessageOutput{}})
		var before core.Resources
		for i, c := range st.calls {
			if _, ok := c.in.(*dynamodb.TransactWriteItemsInput); ok {
				before = m.Total() // Apply takes what was counted so far
				result = result.Add(before)
				play(t, ctx, c)
				// The commit's units travel to the next step (none after
				// the last commit).
				after := m.Total()
				carried = nil
				if i+1 < len(st.calls) {
					carried = &core.Resources{DynamoDBWRU: after.DynamoDBWRU - before.DynamoDBWRU, DynamoDBRRU: after.DynamoDBRRU - before.DynamoDBRRU}
				}
				continue
			}
			play(t, ctx, c)
		}
		play(t, withRecorder(context.Background(), esm), recordedCall{"sqs", "DeleteMessage", &sqs.DeleteMessageInput{}, &sqs.DeleteMessageOutput{}})
		samples = append(samples, stepSample{Kind: st.kind, Class: st.class, Delivery: deliveryQueued, HandsOff: true, Invocations: 1, Wall: 10 * time.Millisecond, Ops: r.finish(), ESM: esm.finish()})
	}
	rc := &core.RunCost{Currency: "USD", AWS: result}
	rc.AWSUSD = usEast1.AWSUSD(result)

	c := checkRunCost(workload{Turns: 1, ResultBytes: 100}, samples, start.finish(), rc)
	// Reads as reported (1 + 0.5, 1, 1), the claim's unit, 3 SQS requests and one invocation per step.
	if c.Result.DynamoDBRRU != 3.5 || c.Result.SQSRequests != 9 || c.Result.LambdaRequests != 3 || c.Result.DynamoDBWRU < 1 {
		t.Errorf("result.cost counted %+v", c.Result)
	}
	if c.Bench != c.Result {
		t.Errorf("like-with-like counts differ:\nbench       %+v\nresult.cost %+v", c.Bench, c.Result)
	}
	if !c.OK || math.Abs(c.BenchLikeUSD-c.ResultLikeUSD) > 1e-12 {
		t.Errorf("dollars differ: bench %.9f, result.cost %.9f (ratio %.4f, ok %v)", c.BenchLikeUSD, c.ResultLikeUSD, c.Ratio, c.OK)
	}
	// The benchmark's own figure counts the last commit and the exact
	// index writes: it is not the like-with-like one.
	if c.BenchUSD == c.BenchLikeUSD {
		t.Errorf("bench $ %.9f equals its like-with-like figure: the adjustments did nothing", c.BenchUSD)
	}
	// What the two would be without the adjustments: a mismatch.
	rc.AWS.DynamoDBWRU += 40
	if off := checkRunCost(workload{Turns: 1, ResultBytes: 100}, samples, start.finish(), rc); off.OK {
		t.Errorf("a result.cost 40 WRU off was judged in agreement (ratio %.3f)", off.Ratio)
	}
	if missing := checkRunCost(workload{Turns: 1, ResultBytes: 100}, samples, nil, nil); missing.OK || !missing.Missing {
		t.Errorf("a run without result.cost was judged in agreement")
	}
}
