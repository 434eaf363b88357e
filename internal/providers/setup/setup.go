package setup

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/baton-agents/baton/core"
	"github.com/baton-agents/baton/internal/awsenv"
	"github.com/baton-agents/baton/internal/providers"
	"github.com/baton-agents/baton/internal/providers/anthropic"
	"github.com/baton-agents/baton/internal/providers/bedrock"
	"github.com/baton-agents/baton/internal/providers/openai"
	"github.com/baton-agents/baton/internal/secrets"
)

// Available lists the providers this build includes.
var Available = []string{core.ProviderScripted, providers.OpenAI, providers.Anthropic, providers.Bedrock}

// Deps are what Router needs from outside; every field is optional.
type Deps struct {
	// AWS loads the AWS configuration when a provider needs it (Bedrock,
	// or a key in SSM or Secrets Manager); nil loads the default
	// configuration.
	AWS awsenv.Loader
	// Secrets resolves API keys kept in SSM or Secrets Manager; nil means
	// a resolver of its own on AWS.
	Secrets *secrets.Resolver
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
	if deps.AWS == nil {
		deps.AWS = awsenv.Lazy(awsenv.Options{})
	}
	deps.AWS = awsenv.Once(deps.AWS)
	if deps.Secrets == nil {
		deps.Secrets = secrets.New(secrets.Options{AWS: deps.AWS})
	}
	if deps.HTTPClient == nil {
		deps.HTTPClient = &http.Client{}
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
			if key, err = providers.ResolveSecret(ctx, cfg.OpenAI.Key, deps.Secrets); err == nil {
				p, err = openai.New(openai.Config{BaseURL: cfg.OpenAI.BaseURL, APIKey: key, HTTPClient: deps.HTTPClient, Retry: retry, Log: deps.Log})
			}
		case providers.Anthropic:
			var key string
			if key, err = providers.ResolveSecret(ctx, cfg.Anthropic.Key, deps.Secrets); err == nil {
				p, err = anthropic.New(anthropic.Config{BaseURL: cfg.Anthropic.BaseURL, APIKey: key, HTTPClient: deps.HTTPClient, Retry: retry, Log: deps.Log})
			}
		case providers.Bedrock:
			var ac aws.Config
			if ac, err = deps.AWS(ctx); err == nil {
				p, err = bedrock.New(awsenv.BedrockRuntime(ac, cfg.Bedrock.Region, cfg.Bedrock.Endpoint), bedrock.Config{Retry: retry, Log: deps.Log})
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
