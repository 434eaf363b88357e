package executors

import (
	"context"
	"fmt"
	"net/http"
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

// Remote builds the http and lambda endpoints of one process, for its
// tools (Factories) and its hooks (Endpoint). Endpoints are built once, at
// cold start: secrets are resolved (each reference once) and the Lambda
// client created (once, shared) when an endpoint is built, never per
// call. It is safe for concurrent use.
type Remote struct {
	o       Options
	loadAWS awsenv.Loader
	sec     *secrets.Resolver

	mu      sync.Mutex // guards lambdaC
	lambdaC LambdaInvoker
}

// NewRemote returns the builder of the endpoints o configures.
func NewRemote(o Options) *Remote {
	r := &Remote{o: o, loadAWS: awsenv.Once(o.AWSConfig), sec: o.Secrets, lambdaC: o.Lambda}
	if r.sec == nil {
		r.sec = secrets.New(secrets.Options{AWS: r.loadAWS, Getenv: o.Getenv})
	}
	return r
}

// Endpoint builds the endpoint ex configures: type http or lambda (any
// other type is an error). name names it in errors. ctx bounds the
// cold-start lookups (secrets, AWS configuration) only; it is not used
// by calls.
func (r *Remote) Endpoint(ctx context.Context, name string, ex toolspec.Executor) (Endpoint, error) {
	switch ex.Type {
	case TypeHTTP:
		d, err := timeout(ex)
		if err != nil {
			return nil, err
		}
		secret, err := signingSecret(ctx, r.sec, ex)
		if err != nil {
			return nil, fmt.Errorf("http executor: %w", err)
		}
		h, err := NewHTTP(name, HTTPConfig{URL: ex.URL, Secret: secret, Timeout: d, MaxResponseBytes: r.o.MaxResponseBytes, Client: r.o.HTTPClient, Now: r.o.Now})
		if err != nil {
			return nil, err
		}
		return h, nil
	case TypeLambda:
		d, err := timeout(ex)
		if err != nil {
			return nil, err
		}
		r.mu.Lock()
		defer r.mu.Unlock()
		if r.lambdaC == nil {
			cfg, err := r.loadAWS(ctx)
			if err != nil {
				return nil, fmt.Errorf("lambda executor: %w", err)
			}
			r.lambdaC = awsenv.Lambda(cfg)
		}
		l, err := NewLambda(name, LambdaConfig{Function: ex.Function, Client: r.lambdaC, Timeout: d, MaxResponseBytes: r.o.MaxResponseBytes})
		if err != nil {
			return nil, err
		}
		return l, nil
	}
	return nil, fmt.Errorf("executor type %q is not a remote endpoint (want http or lambda)", ex.Type)
}

// Factories returns the factories of the http and lambda executor types,
// for NewRouter; ctx is as for Endpoint.
func (r *Remote) Factories(ctx context.Context) map[string]Factory {
	f := func(tool string, ex toolspec.Executor) (core.ToolExecutor, error) { return r.Endpoint(ctx, tool, ex) }
	return map[string]Factory{TypeHTTP: f, TypeLambda: f}
}

// Factories returns the factories of the http and lambda executor types,
// for NewRouter, on a Remote of their own (NewRemote(o).Factories(ctx)).
func Factories(ctx context.Context, o Options) map[string]Factory {
	return NewRemote(o).Factories(ctx)
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
// CheckSecret resolves the signing secret ex names (secret_env,
// secret_ssm or secret_arn), as building its http endpoint does; its
// error names the field, for callers that name the endpoint themselves.
func (r *Remote) CheckSecret(ctx context.Context, ex toolspec.Executor) error {
	_, err := signingSecret(ctx, r.sec, ex)
	return err
}

func signingSecret(ctx context.Context, sec *secrets.Resolver, ex toolspec.Executor) ([]byte, error) {
	ref := secrets.Ref{Env: ex.SecretEnv, SSM: ex.SecretSSM, ARN: ex.SecretARN}
	if ref.Source() == "" {
		return nil, fmt.Errorf("a signing secret is required: set secret_env, secret_ssm or secret_arn")
	}
	if err := ref.Validate(); err != nil {
		return nil, err
	}
	v, err := sec.Resolve(ctx, ref, "")
	if err != nil {
		return nil, fmt.Errorf("%s: %w", ref.Source(), err)
	}
	return v, nil
}
