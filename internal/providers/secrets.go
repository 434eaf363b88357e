package providers

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	"github.com/aws/aws-sdk-go-v2/service/ssm"
)

// SSMAPI is the part of the SSM client ResolveSecret uses.
type SSMAPI interface {
	GetParameter(ctx context.Context, in *ssm.GetParameterInput, opts ...func(*ssm.Options)) (*ssm.GetParameterOutput, error)
}

// SecretsAPI is the part of the Secrets Manager client ResolveSecret uses.
type SecretsAPI interface {
	GetSecretValue(ctx context.Context, in *secretsmanager.GetSecretValueInput, opts ...func(*secretsmanager.Options)) (*secretsmanager.GetSecretValueOutput, error)
}

// ResolveSecret returns the API key ref points at, reading an SSM
// SecureString parameter (with decryption) or a Secrets Manager secret
// when the reference names one. A secret whose string is a JSON object
// must hold the key in its "api_key" field; any other secret string is
// the key itself. Call it once at cold start. Errors name the source,
// never the value. An empty ref resolves to "".
func ResolveSecret(ctx context.Context, ref SecretRef, ssmc SSMAPI, sm SecretsAPI) (string, error) {
	if err := ref.validate(); err != nil {
		return "", err
	}
	switch {
	case ref.Value != "":
		return ref.Value, nil
	case ref.SSMParameter != "":
		if ssmc == nil {
			return "", fmt.Errorf("%s_SSM: no SSM client is configured", ref.Var)
		}
		out, err := ssmc.GetParameter(ctx, &ssm.GetParameterInput{Name: aws.String(ref.SSMParameter), WithDecryption: aws.Bool(true)})
		if err != nil {
			return "", fmt.Errorf("%s_SSM: read SSM parameter %s: %w", ref.Var, ref.SSMParameter, err)
		}
		if out.Parameter == nil || strings.TrimSpace(aws.ToString(out.Parameter.Value)) == "" {
			return "", fmt.Errorf("%s_SSM: SSM parameter %s is empty", ref.Var, ref.SSMParameter)
		}
		return strings.TrimSpace(aws.ToString(out.Parameter.Value)), nil
	case ref.SecretARN != "":
		if sm == nil {
			return "", fmt.Errorf("%s_SECRET_ARN: no Secrets Manager client is configured", ref.Var)
		}
		out, err := sm.GetSecretValue(ctx, &secretsmanager.GetSecretValueInput{SecretId: aws.String(ref.SecretARN)})
		if err != nil {
			return "", fmt.Errorf("%s_SECRET_ARN: read secret %s: %w", ref.Var, ref.SecretARN, err)
		}
		s := strings.TrimSpace(aws.ToString(out.SecretString))
		if strings.HasPrefix(s, "{") {
			var obj map[string]any
			if err := json.Unmarshal([]byte(s), &obj); err != nil {
				return "", fmt.Errorf("%s_SECRET_ARN: secret %s looks like JSON but does not parse", ref.Var, ref.SecretARN)
			}
			k, _ := obj["api_key"].(string)
			if strings.TrimSpace(k) == "" {
				return "", fmt.Errorf("%s_SECRET_ARN: secret %s is a JSON object without a string \"api_key\" field", ref.Var, ref.SecretARN)
			}
			return strings.TrimSpace(k), nil
		}
		if s == "" {
			return "", fmt.Errorf("%s_SECRET_ARN: secret %s has no string value", ref.Var, ref.SecretARN)
		}
		return s, nil
	}
	return "", nil
}
