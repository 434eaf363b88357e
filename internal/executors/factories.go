package executors

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	"github.com/aws/aws-sdk-go-v2/service/ssm"

	"github.com/baton-agents/baton/core"
	"github.com/baton-agents/baton/internal/agents"
)

// Executor types built by Factories.
const (
	TypeHTTP   = "http"
	TypeLambda = "lambda"
	TypeGo     = "go"
)

// Options configures the factories of the remote executor types. Every
// field is optional.
type Options struct {
	// AWSConfig loads the AWS configuration. It is called at most once,
	// and only when an executor needs AWS: a lambda tool, or a secret in
	// SSM or Secrets Manager. Nil means AWS is not available, and such
	// executors fail to build with a clear error.
	AWSConfig func(ctx context.Context) (aws.Config, error)
	// Lambda, SSM and SecretsManager replace the clients AWSConfig would
	// build (tests, custom endpoints).
	Lambda         LambdaInvoker
	SSM            SSMParameterGetter
	SecretsManager SecretValueGetter
	// HTTPClient sends http tool requests; nil means a client on
	// http.DefaultTransport.
	HTTPClient *http.Client
	// Getenv reads secret_env variables; nil means os.Getenv.
	Getenv func(string) string
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
	var (
		awsOnce sync.Once
		awsCfg  aws.Config
		awsErr  error
	)
	loadAWS := func() (aws.Config, error) {
		awsOnce.Do(func() {
			if o.AWSConfig == nil {
				awsErr = fmt.Errorf("AWS configuration is not available in this process")
				return
			}
			awsCfg, awsErr = o.AWSConfig(ctx)
			if awsErr != nil {
				awsErr = fmt.Errorf("load AWS configuration: %w", awsErr)
			}
		})
		return awsCfg, awsErr
	}
	var (
		mu       sync.Mutex // guards lambdaC
		clientsM sync.Mutex // guards ssmC and smC
		lambdaC  = o.Lambda
		ssmC     = o.SSM
		smC      = o.SecretsManager
		getenv   = o.Getenv
	)
	if getenv == nil {
		getenv = os.Getenv
	}
	sec := &secrets{getenv: getenv, byRef: map[string][]byte{},
		ssm: func() (SSMParameterGetter, error) {
			clientsM.Lock()
			defer clientsM.Unlock()
			if ssmC == nil {
				cfg, err := loadAWS()
				if err != nil {
					return nil, err
				}
				ssmC = ssm.NewFromConfig(cfg)
			}
			return ssmC, nil
		},
		sm: func() (SecretValueGetter, error) {
			clientsM.Lock()
			defer clientsM.Unlock()
			if smC == nil {
				cfg, err := loadAWS()
				if err != nil {
					return nil, err
				}
				smC = secretsmanager.NewFromConfig(cfg)
			}
			return smC, nil
		},
	}
	timeout := func(ex agents.Executor) (time.Duration, error) {
		if ex.Timeout == "" {
			return DefaultTimeout, nil
		}
		d, err := time.ParseDuration(ex.Timeout)
		if err != nil || d <= 0 {
			return 0, fmt.Errorf("executor.timeout: want a positive Go duration, got %q", ex.Timeout)
		}
		return d, nil
	}
	return map[string]Factory{
		TypeHTTP: func(tool string, ex agents.Executor) (core.ToolExecutor, error) {
			d, err := timeout(ex)
			if err != nil {
				return nil, err
			}
			secret, err := sec.resolve(ctx, ex)
			if err != nil {
				return nil, fmt.Errorf("http executor: %w", err)
			}
			return NewHTTP(tool, HTTPConfig{URL: ex.URL, Secret: secret, Timeout: d, MaxResponseBytes: o.MaxResponseBytes, Client: o.HTTPClient, Now: o.Now})
		},
		TypeLambda: func(tool string, ex agents.Executor) (core.ToolExecutor, error) {
			d, err := timeout(ex)
			if err != nil {
				return nil, err
			}
			mu.Lock()
			defer mu.Unlock()
			if lambdaC == nil {
				cfg, err := loadAWS()
				if err != nil {
					return nil, fmt.Errorf("lambda executor: %w", err)
				}
				lambdaC = lambda.NewFromConfig(cfg)
			}
			return NewLambda(tool, LambdaConfig{Function: ex.Function, Client: lambdaC, Timeout: d, MaxResponseBytes: o.MaxResponseBytes})
		},
	}
}

// AWSConfigLoader returns an Options.AWSConfig that loads the default AWS
// configuration (environment, shared files, the Lambda role) in region,
// or in us-east-1 when neither region nor the environment names one.
// Service endpoints follow the SDK's resolution, including
// AWS_ENDPOINT_URL_LAMBDA, AWS_ENDPOINT_URL_SSM and
// AWS_ENDPOINT_URL_SECRETS_MANAGER.
func AWSConfigLoader(region string) func(ctx context.Context) (aws.Config, error) {
	return func(ctx context.Context) (aws.Config, error) {
		var opts []func(*config.LoadOptions) error
		if region != "" {
			opts = append(opts, config.WithRegion(region))
		}
		cfg, err := config.LoadDefaultConfig(ctx, opts...)
		if err != nil {
			return aws.Config{}, err
		}
		if cfg.Region == "" {
			cfg.Region = "us-east-1"
		}
		return cfg, nil
	}
}
