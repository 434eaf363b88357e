package main

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/baton-agents/baton/internal/awsenv"
	"github.com/baton-agents/baton/internal/dynamostore"
	"github.com/baton-agents/baton/internal/executors"
	"github.com/baton-agents/baton/internal/sqsqueue"
)

// toolFactories adds the executor types beyond go (http, lambda).
func toolFactories() map[string]executors.Factory { return nil }

// openExternal runs baton dev on DynamoDB and SQS endpoints, creating the
// table and queues when asked.
func openExternal(ctx context.Context, o devOptions) (devStores, error) {
	c, err := awsenv.New(ctx, awsenv.Options{Region: o.region, DynamoDBEndpoint: o.ddbEndpoint, SQSEndpoint: o.sqsEndpoint})
	if err != nil {
		return devStores{}, err
	}
	var queueURL string
	if o.createResources {
		if err := dynamostore.CreateTable(ctx, c.DynamoDB, o.table); err != nil {
			return devStores{}, fmt.Errorf("create table %s: %w", o.table, err)
		}
		if queueURL, _, err = sqsqueue.CreateQueues(ctx, c.SQS, o.queueName, o.visibility, 5); err != nil {
			return devStores{}, fmt.Errorf("create queues %s: %w", o.queueName, err)
		}
	} else {
		out, err := c.SQS.GetQueueUrl(ctx, &sqs.GetQueueUrlInput{QueueName: aws.String(o.queueName + ".fifo")})
		if err != nil {
			return devStores{}, fmt.Errorf("find queue %s.fifo (pass --create-resources to create it): %w", o.queueName, err)
		}
		queueURL = aws.ToString(out.QueueUrl)
	}
	s := dynamostore.New(c.DynamoDB, o.table)
	q := sqsqueue.New(c.SQS, queueURL)
	return devStores{store: s, tokens: s, idem: s, queue: q, receiver: q,
		describe: fmt.Sprintf("DynamoDB table %s at %s, SQS queue %s at %s", o.table, o.ddbEndpoint, o.queueName+".fifo", o.sqsEndpoint)}, nil
}
