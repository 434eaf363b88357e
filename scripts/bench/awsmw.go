package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"
	"sync/atomic"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go/middleware"
	smithyhttp "github.com/aws/smithy-go/transport/http"
	batoncost "github.com/baton-agents/baton/internal/cost"
)

// The AWS clients are those internal/app builds for the stores, with two
// middlewares added through app.Deps.InstrumentAWS:
//
//   - an Initialize middleware that names the call (its logical operation,
//     from the operation name and the input's key), asks DynamoDB for
//     ReturnConsumedCapacity INDEXES (the TOTAL figure plus its split
//     between the table and the index), and after the call reads
//     ConsumedCapacity from the output and adds the call to the recorder
//     of the caller's context;
//   - a Deserialize middleware placed last, next to the HTTP round trip,
//     so that it runs once per attempt (retries included): it adds the
//     request body's length and reads the response body to count its
//     bytes.

// callInfo accumulates one API call's attempts.
type callInfo struct {
	attempts int
	out, in  int64
}

type callInfoKey struct{}

// instrument adds the counting middlewares to a client of service
// ("dynamodb" or "sqs"); app.Deps.InstrumentAWS calls it for the clients
// the stores use. Each call is added to the recorder of its context.
var instrument = instrumentWith(recorderFrom)

// instrumentWith is instrument adding each call to the recorder pick
// chooses from the call's context.
func instrumentWith(pick func(context.Context) *recorder) func(*middleware.Stack, string) error {
	return func(st *middleware.Stack, service string) error { return addCounters(st, service, pick) }
}

func addCounters(st *middleware.Stack, service string, pick func(context.Context) *recorder) error {
	count := middleware.InitializeMiddlewareFunc("BenchCountCall", func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
		op := classify(service, middleware.GetOperationName(ctx), in.Parameters)
		ci := &callInfo{}
		out, md, err := next.HandleInitialize(context.WithValue(ctx, callInfoKey{}, ci), in)
		s := opStat{Calls: ci.attempts, BytesOut: ci.out, BytesIn: ci.in}
		switch {
		case service == "sqs":
			s.SQSBilled = ci.attempts * int(max(1, (max(ci.out, ci.in)+65535)/65536))
		default:
			s.RCU, s.WCU, s.IndexWCU = consumed(out.Result)
			s.ReportedWCU = s.WCU
			if tx, ok := in.Parameters.(*dynamodb.TransactWriteItemsInput); ok && err == nil {
				// DynamoDB Local reports a transaction's capacity as if it
				// held one item; compute it from the items instead.
				s.WCU, s.IndexWCU = batoncost.TransactWCU(tx, &indexEntries)
			}
			if _, ok := in.Parameters.(*dynamodb.QueryInput); ok && err == nil && s.RCU == 0 {
				s.ZeroRCUQueries = 1
			}
			if put, ok := in.Parameters.(*dynamodb.PutItemInput); ok && err == nil {
				s.ItemBytes = int64(batoncost.ItemBytes(put.Item))
				if s.WCU == 0 {
					s.WCU = kb1(s.ItemBytes)
				}
			}
			s.CostWCU = s.WCU
			if tx, ok := in.Parameters.(*dynamodb.TransactWriteItemsInput); ok && err == nil {
				s.CostWCU, _ = batoncost.TransactWCU(tx, nil)
			}
		}
		pick(ctx).at(op).add(op, s)
		return out, md, err
	})
	if err := st.Initialize.Add(count, middleware.Before); err != nil {
		return fmt.Errorf("add BenchCountCall: %w", err)
	}
	wire := middleware.DeserializeMiddlewareFunc("BenchCountBytes", func(ctx context.Context, in middleware.DeserializeInput, next middleware.DeserializeHandler) (middleware.DeserializeOutput, middleware.Metadata, error) {
		ci, _ := ctx.Value(callInfoKey{}).(*callInfo)
		if req, ok := in.Request.(*smithyhttp.Request); ok && ci != nil {
			ci.attempts++
			n := req.ContentLength
			if n < 0 {
				if l, ok, err := req.StreamLength(); err == nil && ok {
					n = l
				}
			}
			ci.out += max(n, 0)
		}
		out, md, err := next.HandleDeserialize(ctx, in)
		if resp, ok := out.RawResponse.(*smithyhttp.Response); ok && ci != nil && resp != nil && resp.Body != nil {
			b, rerr := io.ReadAll(resp.Body)
			_ = resp.Body.Close()
			ci.in += int64(len(b))
			resp.Body = io.NopCloser(bytes.NewReader(b))
			if rerr != nil && err == nil {
				err = fmt.Errorf("read response body: %w", rerr)
			}
		}
		return out, md, err
	})
	if err := st.Deserialize.Add(wire, middleware.After); err != nil {
		return fmt.Errorf("add BenchCountBytes: %w", err)
	}
	return nil
}

// classify names a call's logical operation and asks DynamoDB to report
// the capacity it consumes.
func classify(service, op string, params any) string {
	if service == "sqs" {
		switch op {
		case "SendMessageBatch", "SendMessage":
			return opEnqueue
		case "ReceiveMessage":
			return opReceive
		case "DeleteMessage", "DeleteMessageBatch":
			return opDelete
		case "ChangeMessageVisibility", "ChangeMessageVisibilityBatch":
			return opExtend
		}
		return "sqs:" + op
	}
	const rcc = types.ReturnConsumedCapacityIndexes
	switch in := params.(type) {
	case *dynamodb.QueryInput:
		in.ReturnConsumedCapacity = rcc
		switch pk := firstPK(in.ExpressionAttributeValues); {
		case in.IndexName != nil:
			return "dynamodb:Query(index)"
		case hasValuePrefix(in.ExpressionAttributeValues, "DLT#"):
			return opDeltaRead
		case hasValuePrefix(in.ExpressionAttributeValues, "EVT#"):
			return opEventRead
		case hasValuePrefix(in.ExpressionAttributeValues, "TR#"):
			return opToolRecordRead
		case strings.HasPrefix(pk, "RUN#"):
			return opStateRead
		case strings.HasPrefix(pk, "SES#"):
			return opTranscriptRead
		}
		return "dynamodb:Query"
	case *dynamodb.GetItemInput:
		in.ReturnConsumedCapacity = rcc
		if sk, _ := in.Key["SK"].(*types.AttributeValueMemberS); sk != nil && sk.Value == "HEAD" {
			return opSessionHead
		}
		if pk, _ := in.Key["PK"].(*types.AttributeValueMemberS); pk != nil {
			// Named by the key's kind: TOK# (an API token), AV# …
			kind, _, _ := strings.Cut(pk.Value, "#")
			return "dynamodb:GetItem(" + kind + ")"
		}
	case *dynamodb.UpdateItemInput:
		in.ReturnConsumedCapacity = rcc
		if sk, _ := in.Key["SK"].(*types.AttributeValueMemberS); sk != nil && strings.HasPrefix(sk.Value, "INT#") {
			return opIntentClaim
		}
	case *dynamodb.TransactWriteItemsInput:
		in.ReturnConsumedCapacity = rcc
		for _, it := range in.TransactItems {
			// A create's first item is the run, put on the condition
			// that the run id is free.
			if it.Put != nil && it.Put.ConditionExpression != nil && strings.Contains(*it.Put.ConditionExpression, "attribute_not_exists") {
				return opCreateRun
			}
			break
		}
		return opCommit
	case *dynamodb.PutItemInput:
		in.ReturnConsumedCapacity = rcc
		if sk, _ := in.Item["SK"].(*types.AttributeValueMemberS); sk != nil && strings.HasPrefix(sk.Value, "DLT#") {
			return opDeltaWrite
		}
	case *dynamodb.DeleteItemInput:
		in.ReturnConsumedCapacity = rcc
	case *dynamodb.BatchWriteItemInput:
		in.ReturnConsumedCapacity = rcc
	case *dynamodb.BatchGetItemInput:
		in.ReturnConsumedCapacity = rcc
	case *dynamodb.TransactGetItemsInput:
		in.ReturnConsumedCapacity = rcc
	case *dynamodb.ScanInput:
		in.ReturnConsumedCapacity = rcc
	}
	return "dynamodb:" + op
}

// firstPK returns the partition key value of a key condition: the one
// value that names a run or a session.
func firstPK(values map[string]types.AttributeValue) string {
	for _, v := range values {
		if s, ok := v.(*types.AttributeValueMemberS); ok && (strings.HasPrefix(s.Value, "RUN#") || strings.HasPrefix(s.Value, "SES#")) {
			return s.Value
		}
	}
	return ""
}

// hasValuePrefix reports whether a key condition's values hold a string
// starting with prefix: the sort key range of a kind of record.
func hasValuePrefix(values map[string]types.AttributeValue, prefix string) bool {
	for _, v := range values {
		if s, ok := v.(*types.AttributeValueMemberS); ok && strings.HasPrefix(s.Value, prefix) {
			return true
		}
	}
	return false
}

// consumedSeen and consumedMissing count the DynamoDB responses that did
// and did not report ConsumedCapacity (DynamoDB Local may not).
var consumedSeen, consumedMissing atomic.Int64

// consumed reads the read and write capacity units from an output.
func consumed(result any) (rcu, wcu, indexWCU float64) {
	ccs, read, known := batoncost.Capacities(result)
	if !known {
		return 0, 0, 0
	}
	if len(ccs) == 0 {
		consumedMissing.Add(1)
		return 0, 0, 0
	}
	consumedSeen.Add(1)
	for _, c := range ccs {
		switch {
		case c.ReadCapacityUnits != nil || c.WriteCapacityUnits != nil:
			if c.ReadCapacityUnits != nil {
				rcu += *c.ReadCapacityUnits
			}
			if c.WriteCapacityUnits != nil {
				wcu += *c.WriteCapacityUnits
			}
		case c.CapacityUnits != nil && read:
			rcu += *c.CapacityUnits
		case c.CapacityUnits != nil:
			wcu += *c.CapacityUnits
		}
		if !read {
			for _, ix := range c.GlobalSecondaryIndexes {
				if ix.WriteCapacityUnits != nil {
					indexWCU += *ix.WriteCapacityUnits
				} else if ix.CapacityUnits != nil {
					indexWCU += *ix.CapacityUnits
				}
			}
		}
	}
	return rcu, wcu, indexWCU
}

// indexEntries remembers each run's index entries across the benchmark's
// commits, so an entry a commit leaves as it was costs nothing.
var indexEntries batoncost.IndexEntries
