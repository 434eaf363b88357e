package providers

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/baton-agents/baton/internal/secrets"
)

type fakeSSM struct {
	params map[string]string
	calls  []string
}

func (f *fakeSSM) GetParameter(_ context.Context, name string) (string, error) {
	f.calls = append(f.calls, name)
	v, ok := f.params[name]
	if !ok {
		return "", errors.New("ParameterNotFound")
	}
	return v, nil
}

type fakeSecrets map[string]string

func (f fakeSecrets) GetSecretValue(_ context.Context, id string) (*string, []byte, error) {
	v, ok := f[id]
	if !ok {
		return nil, nil, errors.New("ResourceNotFoundException")
	}
	return &v, nil, nil
}

func TestResolveSecret(t *testing.T) {
	ssmc := &fakeSSM{params: map[string]string{"/baton/openai": " sk-from-ssm \n", "/baton/empty": ""}}
	sm := fakeSecrets{"arn:plain": "sk-from-sm", "arn:json": `{"api_key":"sk-json","other":"x"}`, "arn:json-nokey": `{"token":"sk-x"}`}
	r := secrets.New(secrets.Options{SSM: ssmc, SecretsManager: sm})
	ctx := context.Background()
	cases := []struct {
		ref  SecretRef
		want string
		err  string
	}{
		{SecretRef{Var: "K", Value: "sk-env"}, "sk-env", ""},
		{SecretRef{Var: "K", SSMParameter: "/baton/openai"}, "sk-from-ssm", ""},
		{SecretRef{Var: "K", SecretARN: "arn:plain"}, "sk-from-sm", ""},
		{SecretRef{Var: "K", SecretARN: "arn:json"}, "sk-json", ""},
		{SecretRef{Var: "K"}, "", ""},
		{SecretRef{Var: "K", SSMParameter: "/missing"}, "", "K_SSM: read SSM parameter /missing"},
		{SecretRef{Var: "K", SSMParameter: "/baton/empty"}, "", "is empty"},
		{SecretRef{Var: "K", SecretARN: "arn:json-nokey"}, "", "without a string \"api_key\" field"},
		{SecretRef{Var: "K", Value: "a", SecretARN: "arn:plain"}, "", "set only one"},
	}
	for _, tc := range cases {
		got, err := ResolveSecret(ctx, tc.ref, r)
		if got != tc.want || (tc.err == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("%v: got %q, %v; want %q, %q", tc.ref, got, err, tc.want, tc.err)
		}
		if err != nil && strings.Contains(err.Error(), "sk-") {
			t.Errorf("error shows a key: %v", err)
		}
	}
}
