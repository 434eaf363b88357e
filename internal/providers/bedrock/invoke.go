package bedrock

import (
	"context"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"

	"github.com/baton-agents/baton/internal/awsenv"
	"github.com/baton-agents/baton/internal/providers"
)

// InvokeModel returns Bedrock's InvokeModel on client for JSON bodies
// (application/json in and out), as package memory's Titan embedder
// takes it: the SDK does not retry (the caller's retry policy does), and
// a failure is a *providers.Error as Complete's are (throttling, 5xx and
// network failures transient).
func InvokeModel(client *bedrockruntime.Client) func(ctx context.Context, modelID string, body []byte) ([]byte, error) {
	return func(ctx context.Context, modelID string, body []byte) ([]byte, error) {
		out, err := client.InvokeModel(ctx, &bedrockruntime.InvokeModelInput{
			ModelId: aws.String(modelID), Body: body,
			ContentType: aws.String("application/json"), Accept: aws.String("application/json"),
		}, noSDKRetries)
		if err != nil {
			return nil, classify(err)
		}
		return out.Body, nil
	}
}

// LazyInvokeModel is InvokeModel on a client built (NewClient, in region
// at endpoint) from load's configuration on the first call, so a process
// that never embeds with Bedrock never loads it. A failure to load is a
// transient *providers.Error, and the next call loads again.
func LazyInvokeModel(load awsenv.Loader, region, endpoint string) func(ctx context.Context, modelID string, body []byte) ([]byte, error) {
	var (
		mu     sync.Mutex
		invoke func(ctx context.Context, modelID string, body []byte) ([]byte, error)
	)
	return func(ctx context.Context, modelID string, body []byte) ([]byte, error) {
		mu.Lock()
		if invoke == nil {
			cfg, err := load(ctx)
			if err != nil {
				mu.Unlock()
				return nil, &providers.Error{Provider: Name, Transient: true, Err: err, Message: "loading the AWS configuration: " + providers.Trim(err.Error(), providers.MaxErrorMessage)}
			}
			invoke = InvokeModel(NewClient(cfg, region, endpoint))
		}
		f := invoke
		mu.Unlock()
		return f(ctx, modelID, body)
	}
}
