package executors

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	"github.com/aws/aws-sdk-go-v2/service/ssm"

	"github.com/baton-agents/baton/internal/agents"
)

// SSMParameterGetter is the part of the SSM API secret resolution uses;
// *ssm.Client implements it.
type SSMParameterGetter interface {
	GetParameter(ctx context.Context, in *ssm.GetParameterInput, optFns ...func(*ssm.Options)) (*ssm.GetParameterOutput, error)
}

// SecretValueGetter is the part of the Secrets Manager API secret
// resolution uses; *secretsmanager.Client implements it.
type SecretValueGetter interface {
	GetSecretValue(ctx context.Context, in *secretsmanager.GetSecretValueInput, optFns ...func(*secretsmanager.Options)) (*secretsmanager.GetSecretValueOutput, error)
}

var (
	_ SSMParameterGetter = (*ssm.Client)(nil)
	_ SecretValueGetter  = (*secretsmanager.Client)(nil)
)

// secrets resolves executor signing secrets once per cold start, each
// reference at most once however many tools share it. Values are kept in
// memory only and never appear in errors.
type secrets struct {
	mu     sync.Mutex
	getenv func(string) string
	ssm    func() (SSMParameterGetter, error)
	sm     func() (SecretValueGetter, error)
	byRef  map[string][]byte
}

// resolve returns the secret an executor references: exactly one of
// secret_env, secret_ssm (a SecureString parameter, decrypted) and
// secret_arn (a Secrets Manager secret's SecretString, or SecretBinary).
func (s *secrets) resolve(ctx context.Context, ex agents.Executor) ([]byte, error) {
	var refs []string
	if ex.SecretEnv != "" {
		refs = append(refs, "secret_env")
	}
	if ex.SecretSSM != "" {
		refs = append(refs, "secret_ssm")
	}
	if ex.SecretARN != "" {
		refs = append(refs, "secret_arn")
	}
	switch len(refs) {
	case 0:
		return nil, fmt.Errorf("a signing secret is required: set secret_env, secret_ssm or secret_arn")
	case 1:
	default:
		return nil, fmt.Errorf("set only one of secret_env, secret_ssm and secret_arn (got %s)", strings.Join(refs, ", "))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var key string
	switch {
	case ex.SecretEnv != "":
		key = "env:" + ex.SecretEnv
	case ex.SecretSSM != "":
		key = "ssm:" + ex.SecretSSM
	default:
		key = "arn:" + ex.SecretARN
	}
	if v, ok := s.byRef[key]; ok {
		return v, nil
	}
	var v []byte
	switch {
	case ex.SecretEnv != "":
		v = []byte(s.getenv(ex.SecretEnv))
		if len(v) == 0 {
			return nil, fmt.Errorf("secret_env: environment variable %s is unset or empty", ex.SecretEnv)
		}
	case ex.SecretSSM != "":
		c, err := s.ssm()
		if err != nil {
			return nil, fmt.Errorf("secret_ssm %s: %w", ex.SecretSSM, err)
		}
		out, err := c.GetParameter(ctx, &ssm.GetParameterInput{Name: aws.String(ex.SecretSSM), WithDecryption: aws.Bool(true)})
		if err != nil {
			return nil, fmt.Errorf("secret_ssm %s: get parameter: %w", ex.SecretSSM, err)
		}
		if out.Parameter != nil {
			v = []byte(aws.ToString(out.Parameter.Value))
		}
		if len(v) == 0 {
			return nil, fmt.Errorf("secret_ssm %s: the parameter is empty", ex.SecretSSM)
		}
	default:
		c, err := s.sm()
		if err != nil {
			return nil, fmt.Errorf("secret_arn %s: %w", ex.SecretARN, err)
		}
		out, err := c.GetSecretValue(ctx, &secretsmanager.GetSecretValueInput{SecretId: aws.String(ex.SecretARN)})
		if err != nil {
			return nil, fmt.Errorf("secret_arn %s: get secret value: %w", ex.SecretARN, err)
		}
		if out.SecretString != nil {
			v = []byte(*out.SecretString)
		} else {
			v = append([]byte(nil), out.SecretBinary...)
		}
		if len(v) == 0 {
			return nil, fmt.Errorf("secret_arn %s: the secret is empty", ex.SecretARN)
		}
	}
	s.byRef[key] = v
	return v, nil
}
