package providers

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
)

// Model option keys a run's core.ModelSpec.Options may set.
const (
	OptMaxTokens           = "max_tokens"
	OptMaxCompletionTokens = "max_completion_tokens"
	OptTemperature         = "temperature"
	OptTopP                = "top_p"
	OptStop                = "stop"
)

// CommonOptions are the option keys every provider accepts.
var CommonOptions = []string{OptMaxTokens, OptTemperature, OptTopP, OptStop}

// Options are the validated per-run generation settings. Unset numbers
// are nil.
type Options struct {
	MaxTokens           *int
	MaxCompletionTokens *int
	Temperature         *float64
	TopP                *float64
	Stop                []string
}

// deploymentKeys are option keys that name endpoints or credentials. They
// are refused with an explanation, because a run's model spec may come
// from an API caller.
var deploymentKeys = []string{"api_key", "api_key_env", "api_key_ssm", "api_key_secret_arn", "base_url", "endpoint",
	"url", "region", "headers", "organization", "project", "profile", "credentials", "secret_env", "secret_ssm", "secret_arn"}

// ParseOptions validates a model spec's options against the keys a
// provider accepts. A key naming an endpoint or a credential is refused
// (they come only from deployment configuration), as is any other key not
// in allowed; values must have the right type and range.
func ParseOptions(provider string, raw map[string]any, allowed []string) (Options, error) {
	var o Options
	keys := make([]string, 0, len(raw))
	for k := range raw {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := raw[k]
		if slices.Contains(deploymentKeys, strings.ToLower(k)) {
			return Options{}, fmt.Errorf("%s: model option %q is not allowed: endpoints and API keys come from the deployment's configuration (BATON_%s_*), never from an agent's or a request's model options", provider, k, strings.ToUpper(provider))
		}
		if !slices.Contains(allowed, k) {
			return Options{}, fmt.Errorf("%s: unknown model option %q (allowed: %s)", provider, k, strings.Join(allowed, ", "))
		}
		switch k {
		case OptMaxTokens, OptMaxCompletionTokens:
			n, ok := intValue(v)
			if !ok || n <= 0 {
				return Options{}, fmt.Errorf("%s: model option %s must be a positive integer, got %v", provider, k, v)
			}
			if k == OptMaxTokens {
				o.MaxTokens = &n
			} else {
				o.MaxCompletionTokens = &n
			}
		case OptTemperature, OptTopP:
			f, ok := floatValue(v)
			if !ok || f < 0 || (k == OptTemperature && f > 2) || (k == OptTopP && f > 1) {
				return Options{}, fmt.Errorf("%s: model option %s must be a number in range, got %v", provider, k, v)
			}
			if k == OptTemperature {
				o.Temperature = &f
			} else {
				o.TopP = &f
			}
		case OptStop:
			switch t := v.(type) {
			case string:
				o.Stop = []string{t}
			case []any:
				for _, s := range t {
					str, ok := s.(string)
					if !ok {
						return Options{}, fmt.Errorf("%s: model option stop must be a string or an array of strings", provider)
					}
					o.Stop = append(o.Stop, str)
				}
			case []string:
				o.Stop = append([]string(nil), t...)
			default:
				return Options{}, fmt.Errorf("%s: model option stop must be a string or an array of strings", provider)
			}
		}
	}
	return o, nil
}

func floatValue(v any) (float64, bool) {
	switch t := v.(type) {
	case json.Number:
		f, err := t.Float64()
		return f, err == nil
	case float64:
		return t, true
	case float32:
		return float64(t), true
	case int:
		return float64(t), true
	case int64:
		return float64(t), true
	}
	return 0, false
}

func intValue(v any) (int, bool) {
	f, ok := floatValue(v)
	if !ok || f != math.Trunc(f) || f > math.MaxInt32 || f < math.MinInt32 {
		return 0, false
	}
	return int(f), true
}
