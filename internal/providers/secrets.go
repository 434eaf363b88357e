package providers

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/baton-agents/baton/internal/secrets"
)

// ResolveSecret returns the API key ref points at, reading an SSM
// SecureString parameter (with decryption) or a Secrets Manager secret
// with r when the reference names one. A secret whose string is a JSON
// object must hold the key in its "api_key" field; any other secret
// string is the key itself. Call it once at cold start. Errors name the
// source, never the value. An empty ref resolves to "".
func ResolveSecret(ctx context.Context, ref SecretRef, r *secrets.Resolver) (string, error) {
	if err := ref.validate(); err != nil {
		return "", err
	}
	switch {
	case ref.Value != "":
		return ref.Value, nil
	case ref.SSMParameter != "":
		b, err := r.Parameter(ctx, ref.SSMParameter)
		if err != nil {
			return "", fmt.Errorf("%s_SSM: %w", ref.Var, err)
		}
		if s := strings.TrimSpace(string(b)); s != "" {
			return s, nil
		}
		return "", fmt.Errorf("%s_SSM: SSM parameter %s is empty", ref.Var, ref.SSMParameter)
	case ref.SecretARN != "":
		s, err := r.SecretString(ctx, ref.SecretARN)
		if err != nil {
			return "", fmt.Errorf("%s_SECRET_ARN: %w", ref.Var, err)
		}
		s = strings.TrimSpace(s)
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
