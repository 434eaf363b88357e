package cost

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go/middleware"

	"github.com/baton-agents/baton/core"
)

// Instrument adds the request counter to a client of service
// ("dynamodb" or "sqs"): each call made with a context that carries a
// core.Meter adds what AWS bills for it. A DynamoDB call asks for its
// consumed capacity (TOTAL, unless another middleware asked for more)
// and counts the request units reported, except a transaction's write
// units, computed from its items by DynamoDB's rules (TransactWCU, as
// the step benchmark does, since DynamoDB Local reports them wrong), and
// a PutItem reported without capacity, counted per started KB. An SQS
// call counts one request (step messages carry references, far below
// the 64 KB a request covers).
func Instrument(st *middleware.Stack, service string) error {
	count := middleware.InitializeMiddlewareFunc("BatonCountCost", func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
		m := core.MeterFrom(ctx)
		if m == nil {
			return next.HandleInitialize(ctx, in)
		}
		if service == "sqs" {
			out, md, err := next.HandleInitialize(ctx, in)
			m.Add(core.Resources{SQSRequests: 1})
			return out, md, err
		}
		askCapacity(in.Parameters)
		out, md, err := next.HandleInitialize(ctx, in)
		var r core.Resources
		r.DynamoDBRRU, r.DynamoDBWRU = Consumed(out.Result)
		switch p := in.Parameters.(type) {
		case *dynamodb.TransactWriteItemsInput:
			if err == nil {
				r.DynamoDBWRU, _ = TransactWCU(p, nil)
			}
		case *dynamodb.PutItemInput:
			if err == nil && r.DynamoDBWRU == 0 {
				r.DynamoDBWRU = float64((max(ItemBytes(p.Item), 1) + 1023) / 1024)
			}
		}
		m.Add(r)
		return out, md, err
	})
	if err := st.Initialize.Add(count, middleware.Before); err != nil {
		return fmt.Errorf("add BatonCountCost: %w", err)
	}
	return nil
}

// askCapacity asks DynamoDB to report a call's consumed capacity.
func askCapacity(params any) {
	set := func(v *types.ReturnConsumedCapacity) {
		if *v == "" || *v == types.ReturnConsumedCapacityNone {
			*v = types.ReturnConsumedCapacityTotal
		}
	}
	switch in := params.(type) {
	case *dynamodb.QueryInput:
		set(&in.ReturnConsumedCapacity)
	case *dynamodb.GetItemInput:
		set(&in.ReturnConsumedCapacity)
	case *dynamodb.PutItemInput:
		set(&in.ReturnConsumedCapacity)
	case *dynamodb.UpdateItemInput:
		set(&in.ReturnConsumedCapacity)
	case *dynamodb.DeleteItemInput:
		set(&in.ReturnConsumedCapacity)
	case *dynamodb.TransactWriteItemsInput:
		set(&in.ReturnConsumedCapacity)
	case *dynamodb.TransactGetItemsInput:
		set(&in.ReturnConsumedCapacity)
	case *dynamodb.BatchWriteItemInput:
		set(&in.ReturnConsumedCapacity)
	case *dynamodb.BatchGetItemInput:
		set(&in.ReturnConsumedCapacity)
	case *dynamodb.ScanInput:
		set(&in.ReturnConsumedCapacity)
	}
}

// Capacities returns the consumed capacities a DynamoDB output reports,
// whether it is a read's, and whether the output is one that reports any.
func Capacities(result any) (ccs []types.ConsumedCapacity, read, known bool) {
	one := func(c *types.ConsumedCapacity) []types.ConsumedCapacity {
		if c == nil {
			return nil
		}
		return []types.ConsumedCapacity{*c}
	}
	switch o := result.(type) {
	case *dynamodb.QueryOutput:
		return one(o.ConsumedCapacity), true, true
	case *dynamodb.GetItemOutput:
		return one(o.ConsumedCapacity), true, true
	case *dynamodb.ScanOutput:
		return one(o.ConsumedCapacity), true, true
	case *dynamodb.BatchGetItemOutput:
		return o.ConsumedCapacity, true, true
	case *dynamodb.TransactGetItemsOutput:
		return o.ConsumedCapacity, true, true
	case *dynamodb.UpdateItemOutput:
		return one(o.ConsumedCapacity), false, true
	case *dynamodb.PutItemOutput:
		return one(o.ConsumedCapacity), false, true
	case *dynamodb.DeleteItemOutput:
		return one(o.ConsumedCapacity), false, true
	case *dynamodb.TransactWriteItemsOutput:
		return o.ConsumedCapacity, false, true
	case *dynamodb.BatchWriteItemOutput:
		return o.ConsumedCapacity, false, true
	}
	return nil, false, false
}

// Consumed reads the read and write request units a DynamoDB output
// reports (0 when it reports none).
func Consumed(result any) (rru, wru float64) {
	ccs, read, _ := Capacities(result)
	for _, c := range ccs {
		if c.CapacityUnits == nil {
			continue
		}
		if read {
			rru += *c.CapacityUnits
		} else {
			wru += *c.CapacityUnits
		}
	}
	return rru, wru
}
