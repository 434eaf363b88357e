package providers

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	"github.com/aws/aws-sdk-go-v2/service/ssm"
	ssmtypes "github.com/aws/aws-sdk-go-v2/service/ssm/types"

	"github.com/baton-agents/baton/internal/secrets"
)

type fakeSSM struct {
	params map[string]string
	calls  []ssm.GetParameterInput
}

func (f *fakeSSM) GetParameter(_ context.Context, in *ssm.GetParameterInput, _ ...func(*ssm.Options)) (*ssm.GetParameterOutput, error) {
	f.calls = append(f.calls, *in)
	v, ok := f.params[aws.ToString(in.Name)]
	if !ok {
		return nil, errors.New("ParameterNotFound")
	}
	return &ssm.GetParameterOutput{Parameter: &ssmtypes.Parameter{Value: aws.String(v)}}, nil
}

type fakeSecrets map[string]string

func (f fakeSecrets) GetSecretValue(_ context.Context, in *secretsmanager.GetSecretValueInput, _ ...func(*secretsmanager.Options)) (*secretsmanager.GetSecretValueOutput, error) {
	v, ok := f[aws.ToString(in.SecretId)]
	if !ok {
		return nil, errors.New("ResourceNotFoundException")
	}
	return &secretsmanager.GetSecretValueOutput{SecretString: aws.String(v)}, nil
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
	for _, c := range ssmc.calls {
		if !aws.ToBool(c.WithDecryption) {
			t.Error("GetParameter without WithDecryption")
		}
	}
}
