package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/baton-agents/baton/core"
	"github.com/baton-agents/baton/internal/awsenv"
	"github.com/baton-agents/baton/internal/dynamostore"
	"github.com/baton-agents/baton/internal/executors"
	"github.com/baton-agents/baton/internal/providers"
	"github.com/baton-agents/baton/internal/providers/setup"
	"github.com/baton-agents/baton/internal/sqsqueue"
)

// toolFactories adds the executor types beyond go: http tools work
// anywhere (their secret_env is read from baton dev's environment); lambda
// tools and secret_ssm/secret_arn secrets load the AWS configuration (the
// usual environment and shared files, AWS_ENDPOINT_URL_LAMBDA for a local
// endpoint) the first time one is configured, so baton dev needs no AWS
// setup when no tool uses AWS.
func toolFactories() map[string]executors.Factory {
	return executors.Factories(context.Background(), executors.Options{
		AWSConfig: executors.AWSConfigLoader(firstEnv("AWS_REGION", "AWS_DEFAULT_REGION")),
	})
}

// devModels enables the scripted provider plus those listed in
// BATON_PROVIDERS, configured from the environment like a deployment
// (BATON_OPENAI_*, BATON_ANTHROPIC_*, BATON_BEDROCK_*).
func devModels(ctx context.Context, log *slog.Logger) (core.ModelRouter, []string, error) {
	enabled := []string{core.ProviderScripted}
	for _, p := range strings.Split(os.Getenv("BATON_PROVIDERS"), ",") {
		if p = strings.TrimSpace(p); p != "" && p != core.ProviderScripted {
			enabled = append(enabled, p)
		}
	}
	pc, err := providers.ConfigFromEnv(os.LookupEnv)
	if err != nil {
		return nil, nil, err
	}
	if pc.Bedrock.Region == "" {
		pc.Bedrock.Region = firstEnv("AWS_REGION", "AWS_DEFAULT_REGION")
	}
	r, err := setup.Router(ctx, enabled, pc, setup.Deps{Log: log})
	if err != nil {
		return nil, nil, err
	}
	return r, enabled, nil
}

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
