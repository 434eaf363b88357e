package awsenv

import (
	"context"
	"fmt"
	"net/url"
	"os"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
)

// Options selects the region and optional endpoints; empty endpoints use
// the SDK's resolution (which honours AWS_ENDPOINT_URL_DYNAMODB and
// AWS_ENDPOINT_URL_SQS).
type Options struct {
	Region           string
	DynamoDBEndpoint string
	SQSEndpoint      string
}

// Clients are the SDK clients Baton uses.
type Clients struct {
	DynamoDB *dynamodb.Client
	SQS      *sqs.Client
}

// New loads the default AWS configuration and builds the clients. When an
// endpoint is on the loopback interface and no credentials are configured,
// placeholder credentials are used (emulators accept any).
func New(ctx context.Context, o Options) (Clients, error) {
	var opts []func(*config.LoadOptions) error
	if o.Region != "" {
		opts = append(opts, config.WithRegion(o.Region))
	}
	cfg, err := config.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return Clients{}, fmt.Errorf("load AWS configuration: %w", err)
	}
	if cfg.Region == "" {
		cfg.Region = "us-east-1"
	}
	if (isLoopback(o.DynamoDBEndpoint) || isLoopback(o.SQSEndpoint)) && os.Getenv("AWS_ACCESS_KEY_ID") == "" && os.Getenv("AWS_PROFILE") == "" {
		cfg.Credentials = credentials.NewStaticCredentialsProvider("local", "local", "")
	}
	ddb := dynamodb.NewFromConfig(cfg, func(opt *dynamodb.Options) {
		if o.DynamoDBEndpoint != "" {
			opt.BaseEndpoint = aws.String(o.DynamoDBEndpoint)
		}
	})
	q := sqs.NewFromConfig(cfg, func(opt *sqs.Options) {
		if o.SQSEndpoint != "" {
			opt.BaseEndpoint = aws.String(o.SQSEndpoint)
		}
	})
	return Clients{DynamoDB: ddb, SQS: q}, nil
}

func isLoopback(endpoint string) bool {
	if endpoint == "" {
		return false
	}
	u, err := url.Parse(endpoint)
	if err != nil {
		return false
	}
	h := u.Hostname()
	return h == "127.0.0.1" || h == "localhost" || h == "::1"
}
