package awsenv

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/smithy-go/middleware"
)

// DefaultRegion is the region used when neither the options nor the
// environment name one.
const DefaultRegion = "us-east-1"

// Options selects the region and the local endpoints the process talks
// to; empty endpoints use the SDK's resolution (which honours
// AWS_ENDPOINT_URL_DYNAMODB, AWS_ENDPOINT_URL_SQS, AWS_ENDPOINT_URL_LAMBDA
// and the like).
type Options struct {
	Region           string
	DynamoDBEndpoint string
	SQSEndpoint      string
}

// Loader loads the AWS configuration when first called; see Lazy and
// Once.
type Loader func(ctx context.Context) (aws.Config, error)

// Lazy returns a Loader that loads the default AWS configuration
// (environment, shared files, the Lambda role) once, on first use, in
// o.Region or the environment's region (DefaultRegion when neither names
// one). When an endpoint of o is on the loopback interface and no
// credentials are configured, placeholder credentials are used
// (emulators accept any).
func Lazy(o Options) Loader {
	return Once(func(ctx context.Context) (aws.Config, error) {
		var opts []func(*config.LoadOptions) error
		if o.Region != "" {
			opts = append(opts, config.WithRegion(o.Region))
		}
		cfg, err := config.LoadDefaultConfig(ctx, opts...)
		if err != nil {
			return aws.Config{}, err
		}
		if cfg.Region == "" {
			cfg.Region = DefaultRegion
		}
		if (isLoopback(o.DynamoDBEndpoint) || isLoopback(o.SQSEndpoint)) && os.Getenv("AWS_ACCESS_KEY_ID") == "" && os.Getenv("AWS_PROFILE") == "" {
			cfg.Credentials = credentials.NewStaticCredentialsProvider("local", "local", "")
		}
		return cfg, nil
	})
}

// Once returns a Loader that calls load at most once and remembers its
// result; its errors say "load AWS configuration". A nil load means AWS
// is not available in this process.
func Once(load Loader) Loader {
	var (
		once sync.Once
		cfg  aws.Config
		err  error
	)
	return func(ctx context.Context) (aws.Config, error) {
		once.Do(func() {
			if load == nil {
				err = fmt.Errorf("AWS configuration is not available in this process")
				return
			}
			if cfg, err = load(ctx); err != nil && !errors.As(err, new(*loadError)) {
				err = &loadError{err}
			}
		})
		return cfg, err
	}
}

// loadError is a failure to load the AWS configuration, said once however
// many Loaders wrap each other.
type loadError struct{ err error }

func (e *loadError) Error() string { return "load AWS configuration: " + e.err.Error() }
func (e *loadError) Unwrap() error { return e.err }

// DynamoDB builds a DynamoDB client, at endpoint when it is set;
// apiOptions add middleware (the benchmark counts calls with it).
func DynamoDB(cfg aws.Config, endpoint string, apiOptions ...func(*middleware.Stack) error) *dynamodb.Client {
	return dynamodb.NewFromConfig(cfg, func(o *dynamodb.Options) {
		if endpoint != "" {
			o.BaseEndpoint = aws.String(endpoint)
		}
		o.APIOptions = append(o.APIOptions, apiOptions...)
	})
}

// SQS builds an SQS client, at endpoint when it is set; apiOptions add
// middleware.
func SQS(cfg aws.Config, endpoint string, apiOptions ...func(*middleware.Stack) error) *sqs.Client {
	return sqs.NewFromConfig(cfg, func(o *sqs.Options) {
		if endpoint != "" {
			o.BaseEndpoint = aws.String(endpoint)
		}
		o.APIOptions = append(o.APIOptions, apiOptions...)
	})
}

// Lambda builds the Lambda client lambda tools and hooks are invoked
// with.
func Lambda(cfg aws.Config) *LambdaClient { return &LambdaClient{c: NewJSONClient(cfg, LambdaService)} }

// EventBridge returns the EventBridge client of the run notifications
// (a JSONClient: EventBridge's generated client is not linked).
func EventBridge(cfg aws.Config) *JSONClient { return NewJSONClient(cfg, EventBridgeService) }

// SSM builds the SSM client secrets are read with.
func SSM(cfg aws.Config) *SSMClient { return &SSMClient{c: NewJSONClient(cfg, SSMService)} }

// SSMClient reads SSM parameters (a JSONClient: SSM's generated client
// is not linked).
type SSMClient struct{ c *JSONClient }

// GetParameter returns the decrypted value of parameter name (SSM
// GetParameter, WithDecryption).
func (s *SSMClient) GetParameter(ctx context.Context, name string) (string, error) {
	var out struct {
		Parameter *struct {
			Value *string `json:"Value"`
		} `json:"Parameter"`
	}
	in := struct {
		Name           string `json:"Name"`
		WithDecryption bool   `json:"WithDecryption"`
	}{name, true}
	if err := s.c.Call(ctx, "GetParameter", in, &out); err != nil {
		return "", err
	}
	if out.Parameter == nil {
		return "", nil
	}
	return aws.ToString(out.Parameter.Value), nil
}

// SecretsManager builds the Secrets Manager client secrets are read with.
func SecretsManager(cfg aws.Config) *SecretsManagerClient {
	return &SecretsManagerClient{c: NewJSONClient(cfg, SecretsManagerService)}
}

// SecretsManagerClient reads Secrets Manager secrets (a JSONClient:
// Secrets Manager's generated client is not linked).
type SecretsManagerClient struct{ c *JSONClient }

// GetSecretValue returns the current value of secret id (Secrets
// Manager GetSecretValue): its SecretString, or nil and its
// SecretBinary.
func (s *SecretsManagerClient) GetSecretValue(ctx context.Context, id string) (*string, []byte, error) {
	var out struct {
		SecretString *string `json:"SecretString"`
		SecretBinary []byte  `json:"SecretBinary"` // base64 in JSON
	}
	in := struct {
		SecretID string `json:"SecretId"`
	}{id}
	if err := s.c.Call(ctx, "GetSecretValue", in, &out); err != nil {
		return nil, nil, err
	}
	return out.SecretString, out.SecretBinary, nil
}

func isLoopback(endpoint string) bool {
	if endpoint == "" {
		return false
	}
	u, err := url.Parse(endpoint)
	if err != nil {
		return false
	}
	h := u.Hostname()
	return h == "127.0.0.1" || h == "localhost" || h == "::1"
}
