package setup

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/baton-agents/baton/core"
	"github.com/baton-agents/baton/internal/awsenv"
	"github.com/baton-agents/baton/internal/providers"
	"github.com/baton-agents/baton/internal/providers/anthropic"
	"github.com/baton-agents/baton/internal/providers/bedrock"
	"github.com/baton-agents/baton/internal/providers/openai"
	"github.com/baton-agents/baton/internal/secrets"
)

// Available lists the providers this build includes.
var Available = providers.Known

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
		var build func(context.Context) (core.ModelProvider, error)
		switch name {
		case core.ProviderScripted:
			r[name] = core.ScriptedModel{}
			continue
		case providers.OpenAI:
			build = func(ctx context.Context) (core.ModelProvider, error) {
				key, err := providers.ResolveSecret(ctx, cfg.OpenAI.Key, deps.Secrets)
				if err != nil {
					return nil, err
				}
				return openai.New(openai.Config{BaseURL: cfg.OpenAI.BaseURL, APIKey: key, HTTPClient: deps.HTTPClient, Retry: retry, Log: deps.Log})
			}
		case providers.Anthropic:
			build = func(ctx context.Context) (core.ModelProvider, error) {
				key, err := providers.ResolveSecret(ctx, cfg.Anthropic.Key, deps.Secrets)
				if err != nil {
					return nil, err
				}
				return anthropic.New(anthropic.Config{BaseURL: cfg.Anthropic.BaseURL, APIKey: key, HTTPClient: deps.HTTPClient, Retry: retry, Log: deps.Log})
			}
		case providers.Bedrock:
			build = func(ctx context.Context) (core.ModelProvider, error) {
				ac, err := deps.AWS(ctx)
				if err != nil {
					return nil, err
				}
				return bedrock.New(bedrock.NewClient(ac, cfg.Bedrock.Region, cfg.Bedrock.Endpoint), bedrock.Config{Retry: retry, Log: deps.Log})
			}
		default:
			return nil, fmt.Errorf("model provider %q is not available in this build (available: %s)", name, strings.Join(Available, ", "))
		}
		r[name] = &lazy{name: name, build: build}
	}
	return r, nil
}

// lazy builds a provider on its first call: reading its API key (from
// SSM or Secrets Manager, maybe) and the AWS configuration cost a cold
// start nothing, and a function that never calls a model never reads
// them. A failed build fails the call with a retryable error (the step
// runs again later, as after a failed cold start) and is tried again
// after buildRetry; a built provider is kept.
type lazy struct {
	name  string
	build func(context.Context) (core.ModelProvider, error)

	mu       sync.Mutex
	p        core.ModelProvider
	err      error
	failedAt time.Time
}

// buildRetry is how long a failed build's error is returned before the
// next call builds again.
const buildRetry = 10 * time.Second

// Complete builds the provider if need be and calls it.
func (l *lazy) Complete(ctx context.Context, req core.ModelRequest) (core.ModelReply, error) {
	p, err := l.provider(ctx)
	if err != nil {
		return core.ModelReply{}, err
	}
	return p.Complete(ctx, req)
}

// provider returns the built provider, building it when it is not.
func (l *lazy) provider(ctx context.Context) (core.ModelProvider, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.p != nil {
		return l.p, nil
	}
	if l.err != nil && time.Since(l.failedAt) < buildRetry {
		return nil, l.err
	}
	p, err := l.build(ctx)
	if err != nil {
		l.err, l.failedAt = core.Retryable(fmt.Errorf("model provider %s: %w", l.name, err)), time.Now()
		return nil, l.err
	}
	l.p, l.err = p, nil
	return p, nil
}
