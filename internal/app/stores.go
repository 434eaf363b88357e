package app

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/smithy-go/middleware"

	"github.com/baton-agents/baton/core"
	"github.com/baton-agents/baton/internal/awsenv"
	"github.com/baton-agents/baton/internal/cost"
	"github.com/baton-agents/baton/internal/durable"
	"github.com/baton-agents/baton/internal/dynamostore"
	"github.com/baton-agents/baton/internal/memstore"
	"github.com/baton-agents/baton/internal/sqsqueue"
)

// StoresInfo describes the stores a process runs on.
type StoresInfo struct {
	// Describe says it in a sentence, for baton dev's banner.
	Describe string
	// Table and QueueURL name the DynamoDB table and the SQS queue
	// (empty on the embedded stores); DeadLetterURL is the dead-letter
	// queue Build created, if it did.
	Table, QueueURL, DeadLetterURL string
}

// stores are the opened ports.
type stores struct {
	store  durable.Store
	deltas core.DeltaStore
	tokens core.TokenStore
	idem   core.IdempotencyStore
	limits core.LimitStore
	// memories is the store itself (the runner's store is wrapped), for
	// the API's memory routes.
	memories core.MemoryStore
	queue    Queue
	sqs      *sqs.Client // nil on the embedded stores
	info     StoresInfo
	cleanup  func(context.Context) error
}

// openStores opens the embedded stores or the DynamoDB table and SQS
// queue, creating them when asked, and applies the wrappers of deps.
func openStores(ctx context.Context, cfg Config, loadAWS awsenv.Loader, clock core.Clock, deps Deps) (stores, error) {
	var st stores
	var err error
	if cfg.Stores.Memory {
		s := memstore.New()
		var now func() time.Time
		if deps.Clock != nil {
			now = clock.Now
		}
		st = stores{store: s, deltas: s, tokens: s, idem: s, limits: s, memories: s, queue: memstore.NewStepQueue(cfg.Stores.Visibility, cfg.MaxReceives, now), info: StoresInfo{Describe: "embedded in-memory stores"}}
	} else if st, err = openAWS(ctx, cfg, loadAWS, deps); err != nil {
		return st, err
	}
	if deps.WrapStore != nil {
		st.store = deps.WrapStore(st.store)
	}
	if cfg.Stores.Memory || cfg.Stores.OneProcess {
		// Outermost, so a wrapper of deps sees the store itself.
		changes := durable.NewChanges()
		st.store, st.deltas = changes.Store(st.store), changes.Deltas(st.deltas)
	}
	if deps.WrapQueue != nil {
		st.queue = deps.WrapQueue(st.queue)
	}
	return st, nil
}

// openAWS opens the DynamoDB store and the SQS step queue.
func openAWS(ctx context.Context, cfg Config, loadAWS awsenv.Loader, deps Deps) (stores, error) {
	sc := cfg.Stores
	ac, err := loadAWS(ctx)
	if err != nil {
		return stores{}, err
	}
	instrument := func(service string) []func(*middleware.Stack) error {
		out := []func(*middleware.Stack) error{func(st *middleware.Stack) error { return cost.Instrument(st, service) }}
		if deps.InstrumentAWS == nil {
			return out
		}
		return append(out, func(st *middleware.Stack) error { return deps.InstrumentAWS(st, service) })
	}
	ddb := awsenv.DynamoDB(ac, sc.DynamoDBEndpoint, instrument("dynamodb")...)
	sq := awsenv.SQS(ac, sc.SQSEndpoint, instrument("sqs")...)
	info := StoresInfo{Table: sc.Table, QueueURL: sc.QueueURL}
	var cleanup func(context.Context) error
	switch {
	case sc.CreateResources:
		if err := dynamostore.CreateTable(ctx, ddb, sc.Table); err != nil {
			return stores{}, fmt.Errorf("create table %s: %w", sc.Table, err)
		}
		if info.QueueURL, info.DeadLetterURL, err = sqsqueue.CreateQueues(ctx, sq, sc.QueueName, sc.Visibility, cfg.MaxReceives); err != nil {
			return stores{}, fmt.Errorf("create queues %s: %w", sc.QueueName, err)
		}
		cleanup = func(ctx context.Context) error {
			_, err1 := ddb.DeleteTable(ctx, &dynamodb.DeleteTableInput{TableName: aws.String(info.Table)})
			_, err2 := sq.DeleteQueue(ctx, &sqs.DeleteQueueInput{QueueUrl: aws.String(info.QueueURL)})
			_, err3 := sq.DeleteQueue(ctx, &sqs.DeleteQueueInput{QueueUrl: aws.String(info.DeadLetterURL)})
			return errors.Join(err1, err2, err3)
		}
	case sc.QueueURL == "":
		out, err := sq.GetQueueUrl(ctx, &sqs.GetQueueUrlInput{QueueName: aws.String(sc.QueueName + ".fifo")})
		if err != nil {
			return stores{}, fmt.Errorf("find queue %s.fifo (pass --create-resources to create it): %w", sc.QueueName, err)
		}
		info.QueueURL = aws.ToString(out.QueueUrl)
	}
	queue := info.QueueURL
	if sc.QueueName != "" {
		queue = sc.QueueName + ".fifo"
	}
	info.Describe = fmt.Sprintf("DynamoDB table %s at %s, SQS queue %s at %s", sc.Table, orAWS(sc.DynamoDBEndpoint), queue, orAWS(sc.SQSEndpoint))
	s := dynamostore.New(ddb, sc.Table)
	return stores{store: s, deltas: s, tokens: s, idem: s, limits: s, memories: s, queue: sqsqueue.New(sq, info.QueueURL), sqs: sq, info: info, cleanup: cleanup}, nil
}

func orAWS(endpoint string) string {
	if endpoint == "" {
		return "AWS"
	}
	return endpoint
}
