package bedrock

import (
	"context"
	"fmt"
	"sync"

	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"

	"github.com/baton-agents/baton/internal/awsenv"
	"github.com/baton-agents/baton/internal/guardrails"
)

// Lazy builds a rule whose client is made from the process's AWS
// configuration on its first check, so that loading the agents file needs
// no AWS configuration (a misconfigured rule is still refused at load).
// It is the guardrails.BedrockBuilder of app.Features.BedrockGuardrails.
func Lazy(cfg guardrails.BedrockConfig, load awsenv.Loader) (guardrails.Rule, error) {
	if load == nil {
		return nil, fmt.Errorf("bedrock rule: the AWS configuration is required")
	}
	return New(cfg, &lazyClient{load: load})
}

var _ guardrails.BedrockBuilder = Lazy

// lazyClient is a Bedrock runtime client made from the process's AWS
// configuration on first use, in the configuration's region (a rule's
// own region is applied per call).
type lazyClient struct {
	load   awsenv.Loader
	once   sync.Once
	client *bedrockruntime.Client
	err    error
}

func (l *lazyClient) ApplyGuardrail(ctx context.Context, in *bedrockruntime.ApplyGuardrailInput, opts ...func(*bedrockruntime.Options)) (*bedrockruntime.ApplyGuardrailOutput, error) {
	l.once.Do(func() {
		ac, err := l.load(ctx)
		if err != nil {
			l.err = fmt.Errorf("load the AWS configuration for Bedrock Guardrails: %w", err)
			return
		}
		l.client = bedrockruntime.NewFromConfig(ac)
	})
	if l.err != nil {
		return nil, l.err
	}
	return l.client.ApplyGuardrail(ctx, in, opts...)
}
