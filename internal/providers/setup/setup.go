package setup

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	"github.com/aws/aws-sdk-go-v2/service/ssm"

	"github.com/baton-agents/baton/core"
	"github.com/baton-agents/baton/internal/providers"
	"github.com/baton-agents/baton/internal/providers/anthropic"
	"github.com/baton-agents/baton/internal/providers/bedrock"
	"github.com/baton-agents/baton/internal/providers/openai"
)

// Available lists the providers this build includes.
var Available = []string{core.ProviderScripted, providers.OpenAI, providers.Anthropic, providers.Bedrock}

// Deps are what Router needs from outside; every field is optional.
type Deps struct {
	// AWS loads the AWS configuration when a provider needs it (Bedrock,
	// or a key in SSM or Secrets Manager); nil loads the default
	// configuration.
	AWS func(ctx context.Context) (aws.Config, error)
	// SSM and Secrets override the clients built from the AWS
	// configuration.
	SSM     providers.SSMAPI
	Secrets providers.SecretsAPI
	// HTTPClient is shared by the HTTP providers; nil uses a new client
	// (the retry policy bounds each attempt).
	HTTPClient *http.Client
	// Retry overrides the policy the configuration sets.
	Retry *providers.RetryPolicy
	Log   *slog.Logger
}

// Router builds the enabled providers.
func Router(ctx context.Context, enabled []string, cfg providers.Config, deps Deps) (core.ModelRouter, error) {
	if err := cfg.Validate(enabled); err != nil {
		return nil, err
	}
	b := &builder{cfg: cfg, deps: deps}
	if b.deps.HTTPClient == nil {
		b.deps.HTTPClient = &http.Client{}
	}
	retry := cfg.Retry()
	if deps.Retry != nil {
		retry = deps.Retry.WithDefaults()
	}
	r := core.ModelRouter{}
	for _, name := range enabled {
		if _, done := r[name]; done {
			continue
		}
		var p core.ModelProvider
		var err error
		switch name {
		case core.ProviderScripted:
			p = core.ScriptedModel{}
		case providers.OpenAI:
			var key string
			if key, err = b.key(ctx, cfg.OpenAI.Key); err == nil {
				p, err = openai.New(openai.Config{BaseURL: cfg.OpenAI.BaseURL, APIKey: key, HTTPClient: b.deps.HTTPClient, Retry: retry, Log: deps.Log})
			}
		case providers.Anthropic:
			var key string
			if key, err = b.key(ctx, cfg.Anthropic.Key); err == nil {
				p, err = anthropic.New(anthropic.Config{BaseURL: cfg.Anthropic.BaseURL, APIKey: key, HTTPClient: b.deps.HTTPClient, Retry: retry, Log: deps.Log})
			}
		case providers.Bedrock:
			var ac aws.Config
			if ac, err = b.aws(ctx); err == nil {
				client := bedrockruntime.NewFromConfig(ac, func(o *bedrockruntime.Options) {
					o.Region = cfg.Bedrock.Region
					if cfg.Bedrock.Endpoint != "" {
						o.BaseEndpoint = aws.String(cfg.Bedrock.Endpoint)
					}
				})
				p, err = bedrock.New(client, bedrock.Config{Retry: retry, Log: deps.Log})
			}
		default:
			return nil, fmt.Errorf("model provider %q is not available in this build (available: %s)", name, strings.Join(Available, ", "))
		}
		if err != nil {
			return nil, fmt.Errorf("model provider %s: %w", name, err)
		}
		r[name] = p
	}
	return r, nil
}

type builder struct {
	cfg    providers.Config
	deps   Deps
	awsCfg *aws.Config
}

func (b *builder) aws(ctx context.Context) (aws.Config, error) {
	if b.awsCfg != nil {
		return *b.awsCfg, nil
	}
	load := b.deps.AWS
	if load == nil {
		load = func(ctx context.Context) (aws.Config, error) { return awsconfig.LoadDefaultConfig(ctx) }
	}
	c, err := load(ctx)
	if err != nil {
		return aws.Config{}, fmt.Errorf("load AWS configuration: %w", err)
	}
	b.awsCfg = &c
	return c, nil
}

// key resolves a key reference, building the SSM or Secrets Manager
// client only when the reference needs it.
func (b *builder) key(ctx context.Context, ref providers.SecretRef) (string, error) {
	if ref.SSMParameter != "" && b.deps.SSM == nil {
		c, err := b.aws(ctx)
		if err != nil {
			return "", err
		}
		b.deps.SSM = ssm.NewFromConfig(c)
	}
	if ref.SecretARN != "" && b.deps.Secrets == nil {
		c, err := b.aws(ctx)
		if err != nil {
			return "", err
		}
		b.deps.Secrets = secretsmanager.NewFromConfig(c)
	}
	return providers.ResolveSecret(ctx, ref, b.deps.SSM, b.deps.Secrets)
}
