package providers

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/baton-agents/baton/core"
)

// Provider names.
const (
	OpenAI    = "openai"
	Anthropic = "anthropic"
	Bedrock   = "bedrock"
)

// Known lists the providers Baton knows (an agents file naming another
// is refused when it loads); BATON_PROVIDERS enables some of them.
var Known = []string{core.ProviderScripted, OpenAI, Anthropic, Bedrock}

// Default endpoints.
const (
	DefaultOpenAIBaseURL    = "https://api.openai.com/v1"
	DefaultAnthropicBaseURL = "https://api.anthropic.com"
)

// SecretRef says where an API key comes from: the value of an environment
// variable, an SSM SecureString parameter, or a Secrets Manager secret. At
// most one is set. Its String, GoString, LogValue and MarshalJSON never
// print the value.
type SecretRef struct {
	// Var is the environment variable the settings were read from
	// (BATON_OPENAI_API_KEY), for messages.
	Var          string
	Value        string
	SSMParameter string
	SecretARN    string
}

// IsZero reports whether no source is set.
func (s SecretRef) IsZero() bool { return s.Value == "" && s.SSMParameter == "" && s.SecretARN == "" }

// String names the source without the value.
func (s SecretRef) String() string {
	switch {
	case s.Value != "":
		return s.Var + " (environment)"
	case s.SSMParameter != "":
		return "SSM parameter " + s.SSMParameter
	case s.SecretARN != "":
		return "secret " + s.SecretARN
	}
	return "none"
}

// GoString is String, so %#v does not print the value either.
func (s SecretRef) GoString() string { return s.String() }

// LogValue is String, so slog does not print the value either.
func (s SecretRef) LogValue() slog.Value { return slog.StringValue(s.String()) }

// MarshalJSON writes String, so a configuration encoded as JSON (by a
// JSON log handler, say) does not hold the value either.
func (s SecretRef) MarshalJSON() ([]byte, error) { return json.Marshal(s.String()) }

func (s SecretRef) validate() error {
	n := 0
	for _, v := range []string{s.Value, s.SSMParameter, s.SecretARN} {
		if v != "" {
			n++
		}
	}
	if n > 1 {
		return fmt.Errorf("set only one of %s, %s_SSM and %s_SECRET_ARN", s.Var, s.Var, s.Var)
	}
	return nil
}

// HTTPConfig configures an HTTP provider.
type HTTPConfig struct {
	BaseURL string
	// BaseURLSet reports whether the base URL was configured explicitly.
	BaseURLSet bool
	Key        SecretRef
}

// BedrockConfig configures the Bedrock provider.
type BedrockConfig struct {
	Region string
	// Endpoint overrides the Bedrock runtime endpoint (VPC endpoints,
	// emulators); empty uses the SDK's resolution.
	Endpoint string
}

// Config is the deployment's model-provider configuration, read once at
// cold start from the environment.
type Config struct {
	Timeout     time.Duration // BATON_MODEL_TIMEOUT: per attempt (default 120s)
	MaxAttempts int           // BATON_MODEL_MAX_ATTEMPTS (default 4)
	OpenAI      HTTPConfig    // BATON_OPENAI_BASE_URL, BATON_OPENAI_API_KEY[_SSM|_SECRET_ARN]
	Anthropic   HTTPConfig    // BATON_ANTHROPIC_BASE_URL, BATON_ANTHROPIC_API_KEY[_SSM|_SECRET_ARN]
	Bedrock     BedrockConfig // BATON_BEDROCK_REGION (default AWS_REGION), BATON_BEDROCK_ENDPOINT
}

// ConfigFromEnv reads the configuration with lookup (os.LookupEnv in
// production). It applies defaults but does not validate: call Validate
// with the enabled providers.
func ConfigFromEnv(lookup func(string) (string, bool)) (Config, error) {
	get := func(k string) string {
		if v, ok := lookup(k); ok {
			return strings.TrimSpace(v)
		}
		return ""
	}
	key := func(prefix string) SecretRef {
		return SecretRef{Var: prefix, Value: get(prefix), SSMParameter: get(prefix + "_SSM"), SecretARN: get(prefix + "_SECRET_ARN")}
	}
	c := Config{
		Timeout: DefaultTimeout, MaxAttempts: DefaultMaxAttempts,
		OpenAI:    HTTPConfig{BaseURL: get("BATON_OPENAI_BASE_URL"), Key: key("BATON_OPENAI_API_KEY")},
		Anthropic: HTTPConfig{BaseURL: get("BATON_ANTHROPIC_BASE_URL"), Key: key("BATON_ANTHROPIC_API_KEY")},
		Bedrock:   BedrockConfig{Region: get("BATON_BEDROCK_REGION"), Endpoint: get("BATON_BEDROCK_ENDPOINT")},
	}
	c.OpenAI.BaseURLSet = c.OpenAI.BaseURL != ""
	if !c.OpenAI.BaseURLSet {
		c.OpenAI.BaseURL = DefaultOpenAIBaseURL
	}
	c.Anthropic.BaseURLSet = c.Anthropic.BaseURL != ""
	if !c.Anthropic.BaseURLSet {
		c.Anthropic.BaseURL = DefaultAnthropicBaseURL
	}
	if c.Bedrock.Region == "" {
		c.Bedrock.Region = get("AWS_REGION")
	}
	if v := get("BATON_MODEL_TIMEOUT"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return c, fmt.Errorf("BATON_MODEL_TIMEOUT: want a positive Go duration such as 90s, got %q", v)
		}
		c.Timeout = d
	}
	if v := get("BATON_MODEL_MAX_ATTEMPTS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 10 {
			return c, fmt.Errorf("BATON_MODEL_MAX_ATTEMPTS: want an integer from 1 to 10, got %q", v)
		}
		c.MaxAttempts = n
	}
	return c, nil
}

// Validate checks the settings of the enabled providers: a listed
// provider whose configuration is missing is an error that says what to
// set. Providers not in enabled are not checked.
func (c Config) Validate(enabled []string) error {
	for _, p := range enabled {
		switch p {
		case OpenAI:
			if err := validURL("BATON_OPENAI_BASE_URL", c.OpenAI.BaseURL); err != nil {
				return err
			}
			if err := c.OpenAI.Key.validate(); err != nil {
				return fmt.Errorf("openai: %w", err)
			}
			if c.OpenAI.Key.IsZero() && !c.OpenAI.BaseURLSet {
				return fmt.Errorf("openai is enabled but has no API key: set BATON_OPENAI_API_KEY, BATON_OPENAI_API_KEY_SSM or BATON_OPENAI_API_KEY_SECRET_ARN (a self-hosted OpenAI-compatible server needs only BATON_OPENAI_BASE_URL)")
			}
		case Anthropic:
			if err := validURL("BATON_ANTHROPIC_BASE_URL", c.Anthropic.BaseURL); err != nil {
				return err
			}
			if err := c.Anthropic.Key.validate(); err != nil {
				return fmt.Errorf("anthropic: %w", err)
			}
			if c.Anthropic.Key.IsZero() {
				return fmt.Errorf("anthropic is enabled but has no API key: set BATON_ANTHROPIC_API_KEY, BATON_ANTHROPIC_API_KEY_SSM or BATON_ANTHROPIC_API_KEY_SECRET_ARN")
			}
		case Bedrock:
			if c.Bedrock.Region == "" {
				return fmt.Errorf("bedrock is enabled but no region is configured: set BATON_BEDROCK_REGION or AWS_REGION")
			}
			if c.Bedrock.Endpoint != "" {
				if err := validURL("BATON_BEDROCK_ENDPOINT", c.Bedrock.Endpoint); err != nil {
					return err
				}
			}
		}
	}
	if c.Timeout <= 0 || c.MaxAttempts < 1 {
		return fmt.Errorf("BATON_MODEL_TIMEOUT and BATON_MODEL_MAX_ATTEMPTS must be positive")
	}
	return nil
}

// Retry returns the retry policy the configuration sets.
func (c Config) Retry() RetryPolicy {
	return RetryPolicy{MaxAttempts: c.MaxAttempts, Timeout: c.Timeout}.WithDefaults()
}

func validURL(name, s string) error {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("%s must be an http(s) URL, got %q", name, s)
	}
	if u.User != nil {
		return fmt.Errorf("%s must not carry credentials; use the _API_KEY settings", name)
	}
	return nil
}
