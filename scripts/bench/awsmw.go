package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go/middleware"
	smithyhttp "github.com/aws/smithy-go/transport/http"
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
				s.WCU, s.IndexWCU = transactWCU(tx)
			}
			if _, ok := in.Parameters.(*dynamodb.QueryInput); ok && err == nil && s.RCU == 0 {
				s.ZeroRCUQueries = 1
			}
			if put, ok := in.Parameters.(*dynamodb.PutItemInput); ok && err == nil {
				s.ItemBytes = int64(itemBytes(put.Item))
				if s.WCU == 0 {
					s.WCU = kb1(s.ItemBytes)
				}
			}
		}
		pick(ctx).add(op, s)
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

// single lists the one ConsumedCapacity of a single-table output, if any.
func single(cc *types.ConsumedCapacity) []types.ConsumedCapacity {
	if cc == nil {
		return nil
	}
	return []types.ConsumedCapacity{*cc}
}

// consumed reads the read and write capacity units from an output.
func consumed(result any) (rcu, wcu, indexWCU float64) {
	var ccs []types.ConsumedCapacity
	read := false
	switch o := result.(type) {
	case *dynamodb.QueryOutput:
		read = true
		ccs = single(o.ConsumedCapacity)
	case *dynamodb.GetItemOutput:
		read = true
		ccs = single(o.ConsumedCapacity)
	case *dynamodb.ScanOutput:
		read = true
		ccs = single(o.ConsumedCapacity)
	case *dynamodb.BatchGetItemOutput:
		read = true
		ccs = o.ConsumedCapacity
	case *dynamodb.TransactGetItemsOutput:
		read = true
		ccs = o.ConsumedCapacity
	case *dynamodb.UpdateItemOutput:
		ccs = single(o.ConsumedCapacity)
	case *dynamodb.PutItemOutput:
		ccs = single(o.ConsumedCapacity)
	case *dynamodb.DeleteItemOutput:
		ccs = single(o.ConsumedCapacity)
	case *dynamodb.TransactWriteItemsOutput:
		ccs = o.ConsumedCapacity
	case *dynamodb.BatchWriteItemOutput:
		ccs = o.ConsumedCapacity
	default:
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

// transactWCU computes a successful TransactWriteItems' write request
// units by DynamoDB's documented rules: a transactional write costs 2
// units per started KB of each item (Put: the new item; Update: the item
// after the update, estimated from its key and the values it sets;
// ConditionCheck and Delete: the key, as their items are not in the
// request), and each write to a global secondary index one standard
// unit (its entries are far below 1 KB): 2 when an existing entry's key
// changes (delete and put), 1 when an entry is added or removed or (the
// run list) a projected attribute changes, none when the write leaves it
// as it was. The run item is the only item carrying index keys; dueKeys
// and listEntries remember the entries each run's last committed Put
// gave it.
func transactWCU(in *dynamodb.TransactWriteItemsInput) (wcu, index float64) {
	for i, it := range in.TransactItems {
		var size int
		switch {
		case it.Put != nil:
			size = itemBytes(it.Put.Item)
			if i == 0 && isRunItem(it.Put.Item) {
				index += dueIndexWrites(it.Put.Item) + listIndexWrites(it.Put.Item)
			}
		case it.Update != nil:
			size = itemBytes(it.Update.Key) + itemBytes(it.Update.ExpressionAttributeValues)
			for _, v := range it.Update.ExpressionAttributeNames {
				size += len(v)
			}
		case it.ConditionCheck != nil:
			size = itemBytes(it.ConditionCheck.Key)
		case it.Delete != nil:
			size = itemBytes(it.Delete.Key)
		}
		wcu += 2 * float64((max(size, 1)+1023)/1024)
	}
	return wcu + index, index
}

// dueKeys holds, by run item key, the due-index key (GSI1SK) of its last
// committed write ("" or absent: no entry).
var dueKeys sync.Map

// dueIndexWrites counts the index writes of a committed Put of a run
// item, and remembers its index key.
func dueIndexWrites(it map[string]types.AttributeValue) float64 {
	pk, _ := it["PK"].(*types.AttributeValueMemberS)
	key := ""
	if sk, ok := it["GSI1SK"].(*types.AttributeValueMemberS); ok {
		key = sk.Value
	}
	prev := ""
	if v, ok := dueKeys.Swap(pk.Value, key); ok {
		prev = v.(string)
	}
	switch {
	case prev == key:
		return 0
	case prev == "" || key == "":
		return 1
	default:
		return 2
	}
}

// listEntries holds, by run item key, the run-list index entry (GSI2:
// its keys and projected attributes) of its last committed write.
var listEntries sync.Map

// listIndexWrites counts the run-list index (GSI2) writes of a committed
// Put of a run item: 1 when its entry appears or a projected attribute
// (session, status, agent, created_at) changes, 2 when its key changes,
// none when the entry stays as it was.
func listIndexWrites(it map[string]types.AttributeValue) float64 {
	pk, _ := it["PK"].(*types.AttributeValueMemberS)
	str := func(name string) string {
		if v, ok := it[name].(*types.AttributeValueMemberS); ok {
			return v.Value
		}
		return ""
	}
	key := str("GSI2PK") + "\x00" + str("GSI2SK")
	entry := key + "\x00" + str("session") + "\x00" + str("status") + "\x00" + str("agent") + "\x00" + str("created_at")
	if str("GSI2PK") == "" {
		key, entry = "", ""
	}
	prev := ""
	if v, ok := listEntries.Swap(pk.Value, entry); ok {
		prev = v.(string)
	}
	switch {
	case prev == entry:
		return 0
	case prev == "" || entry == "":
		return 1
	case !strings.HasPrefix(prev, key+"\x00"):
		return 2
	default:
		return 1
	}
}

func isRunItem(it map[string]types.AttributeValue) bool {
	sk, _ := it["SK"].(*types.AttributeValueMemberS)
	pk, _ := it["PK"].(*types.AttributeValueMemberS)
	return sk != nil && pk != nil && sk.Value == "STATE" && strings.HasPrefix(pk.Value, "RUN#")
}

// itemBytes is an item's size by DynamoDB's rules: attribute names plus
// values (strings and binaries their length, numbers about one byte per
// two significant digits plus one, booleans and nulls one byte, lists and
// maps three bytes plus one per element plus their elements).
func itemBytes(it map[string]types.AttributeValue) int {
	n := 0
	for k, v := range it {
		n += len(k) + valueBytes(v)
	}
	return n
}

func valueBytes(v types.AttributeValue) int {
	switch t := v.(type) {
	case *types.AttributeValueMemberS:
		return len(t.Value)
	case *types.AttributeValueMemberB:
		return len(t.Value)
	case *types.AttributeValueMemberN:
		digits := len(strings.Trim(strings.NewReplacer("-", "", ".", "").Replace(t.Value), "0"))
		return (digits+1)/2 + 1
	case *types.AttributeValueMemberL:
		n := 3
		for _, x := range t.Value {
			n += 1 + valueBytes(x)
		}
		return n
	case *types.AttributeValueMemberM:
		return 3 + itemBytes(t.Value) + len(t.Value)
	case *types.AttributeValueMemberSS:
		n := 0
		for _, x := range t.Value {
			n += len(x)
		}
		return n
	}
	return 1
}
