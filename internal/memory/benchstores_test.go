package memory

import (
	"context"
	"fmt"
	"math"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/smithy-go/middleware"

	"github.com/baton-agents/baton/internal/cost"
	"github.com/baton-agents/baton/internal/dynamostore"
	"github.com/baton-agents/baton/internal/memstore"
)

// benchStores are the stores BenchmarkRecall measures: memstore, and
// DynamoDB when BATON_TEST_DYNAMODB_ENDPOINT names one
// (scripts/emulators.sh run …).
func benchStores(tb testing.TB) []benchStore {
	m := newStore(memstore.New())
	out := []benchStore{{name: "memstore", store: m, counters: m.counters}}
	if d, ok := dynamoBenchStore(tb); ok {
		out = append(out, d)
	}
	return out
}

// queryMeter counts the Query calls of a DynamoDB client and the read
// capacity they consume, computed from the items returned by DynamoDB's
// rule (a Query's items' sizes summed and rounded up to 4 KB: one unit
// per 4 KB strongly consistent, half eventually consistent; at least one
// 4 KB block a call), and as the endpoint reports it.
type queryMeter struct {
	mu       sync.Mutex
	pages    int
	rcu      float64 // computed
	reported float64
	bytes    int64
	// call is the Query calls' time; roundTrip the part of it from
	// sending each request to the response's headers (the rest is the
	// client's: signing, reading and decoding the body).
	call, roundTrip time.Duration
}

func (m *queryMeter) middleware(st *middleware.Stack) error {
	err := st.Deserialize.Add(middleware.DeserializeMiddlewareFunc("BenchRoundTrip", func(ctx context.Context, in middleware.DeserializeInput, next middleware.DeserializeHandler) (middleware.DeserializeOutput, middleware.Metadata, error) {
		start := time.Now()
		out, md, err := next.HandleDeserialize(ctx, in)
		m.mu.Lock()
		m.roundTrip += time.Since(start)
		m.mu.Unlock()
		return out, md, err
	}), middleware.After)
	if err != nil {
		return err
	}
	return st.Initialize.Add(middleware.InitializeMiddlewareFunc("BenchQueryMeter", func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
		q, ok := in.Parameters.(*dynamodb.QueryInput)
		if !ok {
			return next.HandleInitialize(ctx, in)
		}
		q.ReturnConsumedCapacity = "TOTAL"
		start := time.Now()
		out, md, err := next.HandleInitialize(ctx, in)
		took := time.Since(start)
		if res, ok := out.Result.(*dynamodb.QueryOutput); ok && err == nil {
			n := 0
			for _, it := range res.Items {
				n += cost.ItemBytes(it)
			}
			units := math.Max(1, math.Ceil(float64(n)/4096))
			if q.ConsistentRead == nil || !*q.ConsistentRead {
				units /= 2
			}
			rru, _ := cost.Consumed(res)
			m.mu.Lock()
			m.pages++
			m.rcu += units
			m.reported += rru
			m.bytes += int64(n)
			m.call += took
			m.mu.Unlock()
		}
		return out, md, err
	}), middleware.Before)
}

func (m *queryMeter) read() benchCounters {
	m.mu.Lock()
	defer m.mu.Unlock()
	return benchCounters{pages: m.pages, rcu: m.rcu, reported: m.reported, bytes: m.bytes, call: m.call, roundTrip: m.roundTrip}
}

// dynamoBenchStore is a dynamostore on a new table of the endpoint
// BATON_TEST_DYNAMODB_ENDPOINT names, when it is set.
func dynamoBenchStore(tb testing.TB) (benchStore, bool) {
	m := &queryMeter{}
	store, ok := dynamoStore(tb, m.middleware)
	if !ok {
		return benchStore{}, false
	}
	return benchStore{name: "dynamodb", store: store, counters: m.read}, true
}

// dynamoStore is a dynamostore on a new table (dropped when tb ends) of
// the endpoint BATON_TEST_DYNAMODB_ENDPOINT names, its client with the
// API options given; false when the variable is not set.
func dynamoStore(tb testing.TB, opts ...func(*middleware.Stack) error) (*dynamostore.Store, bool) {
	endpoint := os.Getenv("BATON_TEST_DYNAMODB_ENDPOINT")
	if endpoint == "" {
		return nil, false
	}
	cfg := aws.Config{Region: "us-east-1", Credentials: credentials.NewStaticCredentialsProvider("local", "local", "")}
	db := dynamodb.NewFromConfig(cfg, func(o *dynamodb.Options) {
		o.BaseEndpoint = aws.String(endpoint)
		o.APIOptions = append(o.APIOptions, opts...)
	})
	name := fmt.Sprintf("baton-test-memory-%d-%d-%d", os.Getpid(), time.Now().UnixNano()%1e9, tables.Add(1))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := dynamostore.CreateTable(ctx, db, name); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		_, _ = db.DeleteTable(context.Background(), &dynamodb.DeleteTableInput{TableName: aws.String(name)})
	})
	return dynamostore.New(db, name), true
}

var tables atomic.Int64
