package guardrails

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"

	"github.com/baton-agents/baton/internal/awsenv"
)

func init() { Register(BedrockType, newBedrockRule) }

// newBedrockRule builds a bedrock rule whose client is made on its first
// check, so that loading the agents file needs no AWS configuration (a
// misconfigured rule is still refused at load).
func newBedrockRule(raw json.RawMessage, d Deps) (Rule, error) {
	var cfg BedrockConfig
	if err := json.Unmarshal(raw, &cfg); err != nil {
		return nil, err
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if d.AWS == nil {
		return nil, errors.New("bedrock rules need the AWS configuration, which this process was built without")
	}
	return NewBedrock(cfg, &lazyBedrock{load: d.AWS})
}

// lazyBedrock is a Bedrock runtime client made from the process's AWS
// configuration on first use, in the configuration's region (a rule's
// own region is applied per call).
type lazyBedrock struct {
	load   awsenv.Loader
	once   sync.Once
	client *bedrockruntime.Client
	err    error
}

func (l *lazyBedrock) ApplyGuardrail(ctx context.Context, in *bedrockruntime.ApplyGuardrailInput, opts ...func(*bedrockruntime.Options)) (*bedrockruntime.ApplyGuardrailOutput, error) {
	l.once.Do(func() {
		ac, err := l.load(ctx)
		if err != nil {
			l.err = fmt.Errorf("load the AWS configuration for Bedrock Guardrails: %w", err)
			return
		}
		l.client = awsenv.BedrockRuntime(ac, ac.Region, "")
	})
	if l.err != nil {
		return nil, l.err
	}
	return l.client.ApplyGuardrail(ctx, in, opts...)
}
