package executors

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/baton-agents/baton/core"
	"github.com/baton-agents/baton/internal/awsenv"
	"github.com/baton-agents/baton/internal/secrets"
	"github.com/baton-agents/baton/internal/toolspec"
)

// Executor types built by Factories.
const (
	TypeHTTP   = toolspec.TypeHTTP
	TypeLambda = toolspec.TypeLambda
	TypeGo     = toolspec.TypeGo
)

// Options configures the factories of the remote executor types. Every
// field is optional.
type Options struct {
	// AWSConfig loads the AWS configuration. It is called at most once,
	// and only when an executor needs AWS: a lambda tool, or a secret in
	// SSM or Secrets Manager. Nil means AWS is not available, and such
	// executors fail to build with a clear error.
	AWSConfig awsenv.Loader
	// Lambda replaces the client AWSConfig would build (tests, custom
	// endpoints).
	Lambda LambdaInvoker
	// Secrets resolves signing secrets; nil means a resolver of its own
	// on AWSConfig and Getenv.
	Secrets *secrets.Resolver
	// Getenv reads secret_env variables when Secrets is nil; nil means
	// os.Getenv.
	Getenv func(string) string
	// HTTPClient sends http tool requests; nil means a client on
	// http.DefaultTransport.
	HTTPClient *http.Client
	// Now is the signing clock; nil means time.Now.
	Now func() time.Time
	// MaxResponseBytes caps tool responses; zero means
	// DefaultMaxResponseBytes.
	MaxResponseBytes int64
}

// Factories returns the factories of the http and lambda executor types,
// for NewRouter. Executors are built once, at cold start: secrets are
// resolved (each reference once) and AWS clients created when the router
// is built, never per call. ctx bounds those cold-start lookups only; it
// is not used by executions.
func Factories(ctx context.Context, o Options) map[string]Factory {
	loadAWS := awsenv.Once(o.AWSConfig)
	sec := o.Secrets
	if sec == nil {
		sec = secrets.New(secrets.Options{AWS: loadAWS, Getenv: o.Getenv})
	}
	var (
		mu      sync.Mutex // guards lambdaC
		lambdaC = o.Lambda
	)
	return map[string]Factory{
		TypeHTTP: func(tool string, ex toolspec.Executor) (core.ToolExecutor, error) {
			d, err := timeout(ex)
			if err != nil {
				return nil, err
			}
			secret, err := signingSecret(ctx, sec, ex)
			if err != nil {
				return nil, fmt.Errorf("http executor: %w", err)
			}
			return NewHTTP(tool, HTTPConfig{URL: ex.URL, Secret: secret, Timeout: d, MaxResponseBytes: o.MaxResponseBytes, Client: o.HTTPClient, Now: o.Now})
		},
		TypeLambda: func(tool string, ex toolspec.Executor) (core.ToolExecutor, error) {
			d, err := timeout(ex)
			if err != nil {
				return nil, err
			}
			mu.Lock()
			defer mu.Unlock()
			if lambdaC == nil {
				cfg, err := loadAWS(ctx)
				if err != nil {
					return nil, fmt.Errorf("lambda executor: %w", err)
				}
				lambdaC = awsenv.Lambda(cfg)
			}
			return NewLambda(tool, LambdaConfig{Function: ex.Function, Client: lambdaC, Timeout: d, MaxResponseBytes: o.MaxResponseBytes})
		},
	}
}

// timeout is an executor's timeout, DefaultTimeout when unset.
func timeout(ex toolspec.Executor) (time.Duration, error) {
	if ex.Timeout == "" {
		return DefaultTimeout, nil
	}
	d, err := time.ParseDuration(ex.Timeout)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("executor.timeout: want a positive Go duration, got %q", ex.Timeout)
	}
	return d, nil
}

// signingSecret returns the secret an executor references: exactly one of
// secret_env, secret_ssm (a SecureString parameter, decrypted) and
// secret_arn (a Secrets Manager secret's SecretString, or SecretBinary).
func signingSecret(ctx context.Context, sec *secrets.Resolver, ex toolspec.Executor) ([]byte, error) {
	var refs []string
	for _, r := range []struct{ name, v string }{{"secret_env", ex.SecretEnv}, {"secret_ssm", ex.SecretSSM}, {"secret_arn", ex.SecretARN}} {
		if r.v != "" {
			refs = append(refs, r.name)
		}
	}
	var v []byte
	var err error
	switch {
	case len(refs) == 0:
		return nil, fmt.Errorf("a signing secret is required: set secret_env, secret_ssm or secret_arn")
	case len(refs) > 1:
		return nil, fmt.Errorf("set only one of secret_env, secret_ssm and secret_arn (got %s)", strings.Join(refs, ", "))
	case ex.SecretEnv != "":
		v, err = sec.Env(ex.SecretEnv)
	case ex.SecretSSM != "":
		v, err = sec.Parameter(ctx, ex.SecretSSM)
	default:
		v, err = sec.Secret(ctx, ex.SecretARN)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", refs[0], err)
	}
	return v, nil
}
