package setup

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"

	"github.com/baton-agents/baton/core"
	"github.com/baton-agents/baton/internal/providers"
	"github.com/baton-agents/baton/internal/providers/anthropic"
	"github.com/baton-agents/baton/internal/providers/bedrock"
	"github.com/baton-agents/baton/internal/providers/openai"
	"github.com/baton-agents/baton/internal/secrets"
)

type fakeSSM struct{ n int }

func (f *fakeSSM) GetParameter(_ context.Context, name string) (string, error) {
	f.n++
	if name != "/baton/anthropic" {
		return "", errors.New("ParameterNotFound: " + name)
	}
	return "sk-ant-from-ssm", nil
}

type fakeSecrets struct{}

func (fakeSecrets) GetSecretValue(context.Context, string) (*string, []byte, error) {
	v := `{"api_key":"sk-from-secret"}`
	return &v, nil, nil
}

func env(m map[string]string) providers.Config {
	c, err := providers.ConfigFromEnv(func(k string) (string, bool) { v, ok := m[k]; return v, ok })
	if err != nil {
		panic(err)
	}
	return c
}

func staticAWS(loads *int) func(context.Context) (aws.Config, error) {
	return func(context.Context) (aws.Config, error) {
		*loads++
		return aws.Config{Region: "us-east-1", Credentials: credentials.NewStaticCredentialsProvider("AKID", "SECRET", "")}, nil
	}
}

func TestRouter(t *testing.T) {
	var loads int
	ssmc := &fakeSSM{}
	cfg := env(map[string]string{
		"BATON_OPENAI_API_KEY_SECRET_ARN": "arn:aws:secretsmanager:us-east-1:123456789012:secret:openai",
		"BATON_ANTHROPIC_API_KEY_SSM":     "/baton/anthropic",
		"BATON_BEDROCK_REGION":            "us-west-2",
	})
	r, err := Router(context.Background(), []string{"scripted", "openai", "anthropic", "bedrock", "openai"}, cfg,
		Deps{AWS: staticAWS(&loads), Secrets: secrets.New(secrets.Options{SSM: ssmc, SecretsManager: fakeSecrets{}})})
	if err != nil {
		t.Fatal(err)
	}
	if loads != 0 || ssmc.n != 0 {
		t.Errorf("cold start loaded the AWS configuration %d times and read SSM %d times; want neither before a model call", loads, ssmc.n)
	}
	if _, ok := r["scripted"].(core.ScriptedModel); !ok {
		t.Error("scripted missing")
	}
	built := func(name string) core.ModelProvider {
		l, ok := r[name].(*lazy)
		if !ok {
			t.Fatalf("%s: %T, want a provider built on first use", name, r[name])
		}
		p, err := l.provider(context.Background())
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return p
	}
	if _, ok := built("openai").(*openai.Provider); !ok {
		t.Error("openai missing")
	}
	if _, ok := built("anthropic").(*anthropic.Provider); !ok {
		t.Error("anthropic missing")
	}
	if _, ok := built("bedrock").(*bedrock.Provider); !ok {
		t.Error("bedrock missing")
	}
	built("anthropic")
	if loads != 1 || ssmc.n != 1 {
		t.Errorf("AWS configuration loaded %d times, SSM read %d times; want once each", loads, ssmc.n)
	}
}

func TestRouterOnlyWhatIsEnabled(t *testing.T) {
	var loads int
	r, err := Router(context.Background(), []string{"scripted"}, env(nil), Deps{AWS: staticAWS(&loads)})
	if err != nil || len(r) != 1 || loads != 0 {
		t.Errorf("router %v, err %v, AWS loads %d", r, err, loads)
	}
	r, err = Router(context.Background(), []string{"openai"}, env(map[string]string{"BATON_OPENAI_BASE_URL": "http://127.0.0.1:11434/v1"}), Deps{AWS: staticAWS(&loads)})
	if err != nil || r["openai"] == nil || loads != 0 {
		t.Errorf("self-hosted openai: router %v, err %v, AWS loads %d", r, err, loads)
	}
}

func TestRouterErrors(t *testing.T) {
	var loads int
	cases := []struct {
		enabled []string
		env     map[string]string
		msg     string
	}{
		{[]string{"gemini"}, nil, `model provider "gemini" is not available in this build (available: scripted, openai, anthropic, bedrock)`},
		{[]string{"anthropic"}, nil, "anthropic is enabled but has no API key: set BATON_ANTHROPIC_API_KEY"},
		{[]string{"openai"}, nil, "openai is enabled but has no API key"},
		{[]string{"bedrock"}, nil, "set BATON_BEDROCK_REGION or AWS_REGION"},
	}
	for _, tc := range cases {
		_, err := Router(context.Background(), tc.enabled, env(tc.env), Deps{AWS: staticAWS(&loads), Secrets: secrets.New(secrets.Options{SSM: &fakeSSM{}})})
		if err == nil || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("%v %v: error %v, want %q", tc.enabled, tc.env, err, tc.msg)
		}
	}
	// A key or AWS configuration that cannot be read fails the first model
	// call, retryably, and is read again only after buildRetry.
	ssmc := &fakeSSM{}
	r, err := Router(context.Background(), []string{"anthropic"}, env(map[string]string{"BATON_ANTHROPIC_API_KEY_SSM": "/nope"}), Deps{AWS: staticAWS(&loads), Secrets: secrets.New(secrets.Options{SSM: ssmc})})
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		_, err = r["anthropic"].Complete(context.Background(), core.ModelRequest{})
		if err == nil || !core.IsRetryable(err) || !strings.Contains(err.Error(), "model provider anthropic: BATON_ANTHROPIC_API_KEY_SSM: read SSM parameter /nope") {
			t.Fatalf("unreadable key: %v", err)
		}
	}
	if ssmc.n != 1 {
		t.Errorf("SSM read %d times for two calls within buildRetry, want 1", ssmc.n)
	}
	failing := func(context.Context) (aws.Config, error) { return aws.Config{}, errors.New("no credentials") }
	r, err = Router(context.Background(), []string{"bedrock"}, env(map[string]string{"AWS_REGION": "us-east-1"}), Deps{AWS: failing})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r["bedrock"].Complete(context.Background(), core.ModelRequest{}); err == nil || !core.IsRetryable(err) || !strings.Contains(err.Error(), "load AWS configuration: no credentials") {
		t.Errorf("AWS failure: %v", err)
	}
}
