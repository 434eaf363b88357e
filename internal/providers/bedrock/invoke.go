package bedrock

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
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
