package toolspec

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"
)

// Executor types.
const (
	TypeHTTP   = "http"
	TypeLambda = "lambda"
	TypeGo     = "go"
	// TypeAgent: a child run of another agent of the file answers the
	// call (Agent names it); it is built by the runner, not executors.
	TypeAgent = "agent"
	// TypeA2A: a remote A2A agent answers the call (CardURL is its agent
	// card); internal/a2atool runs it.
	TypeA2A = "a2a"
)

// Executor is a server tool's concrete executor configuration.
type Executor struct {
	Type      string `json:"type"` // http, lambda, go, agent or a2a
	URL       string `json:"url,omitempty"`
	CardURL   string `json:"card_url,omitempty"` // a2a: the remote agent's card
	SecretEnv string `json:"secret_env,omitempty"`
	SecretSSM string `json:"secret_ssm,omitempty"`
	SecretARN string `json:"secret_arn,omitempty"`
	Function  string `json:"function,omitempty"` // lambda: function ARN or name
	Handler   string `json:"handler,omitempty"`  // go: registered handler name
	Agent     string `json:"agent,omitempty"`    // agent: the answering agent's slug
	Timeout   string `json:"timeout,omitempty"`
}

// Tools binds each agent's server tools to their executors: agent slug →
// tool name → executor.
type Tools map[string]map[string]Executor

// Parse reads and validates an executor object of the agents file.
// Unknown fields are errors.
func Parse(v any) (Executor, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return Executor{}, fmt.Errorf("executor must be an object with a type (http, lambda, go, agent or a2a)")
	}
	b, _ := json.Marshal(m)
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var ex Executor
	if err := dec.Decode(&ex); err != nil {
		return Executor{}, fmt.Errorf("executor: %w", err)
	}
	switch ex.Type {
	case TypeHTTP:
		if !strings.HasPrefix(ex.URL, "http://") && !strings.HasPrefix(ex.URL, "https://") {
			return Executor{}, fmt.Errorf("executor.url must be an http(s) URL")
		}
	case TypeLambda:
		if ex.Function == "" {
			return Executor{}, fmt.Errorf("executor.function (ARN or name) is required for lambda executors")
		}
	case TypeGo:
		if ex.Handler == "" {
			return Executor{}, fmt.Errorf("executor.handler is required for go executors")
		}
	case TypeAgent:
		if ex.Agent == "" {
			return Executor{}, fmt.Errorf("executor.agent (an agent's slug) is required for agent executors")
		}
		if ex.Timeout != "" || ex.URL != "" || ex.Function != "" || ex.Handler != "" || ex.SecretEnv != "" || ex.SecretSSM != "" || ex.SecretARN != "" {
			return Executor{}, fmt.Errorf("an agent executor takes only type and agent")
		}
	case TypeA2A:
		if err := ex.checkA2A(); err != nil {
			return Executor{}, err
		}
	default:
		return Executor{}, fmt.Errorf("executor.type must be http, lambda, go, agent or a2a, got %q", ex.Type)
	}
	if ex.CardURL != "" && ex.Type != TypeA2A {
		return Executor{}, fmt.Errorf("executor.card_url is for a2a executors")
	}
	if ex.Timeout != "" {
		if d, err := time.ParseDuration(ex.Timeout); err != nil || d <= 0 {
			return Executor{}, fmt.Errorf("executor.timeout: want a positive Go duration, got %q", ex.Timeout)
		}
	}
	return ex, nil
}

// On-error settings of a hook.
const (
	// OnErrorReject rejects the tool call (pre_tool_mediator, the default).
	OnErrorReject = "reject"
	// OnErrorProceed lets the call proceed (pre_tool_mediator).
	OnErrorProceed = "proceed"
	// OnErrorContinue makes no decision: the loop continues
	// (completion_policy, the only setting).
	OnErrorContinue = "continue"
)

// Hook is an http or lambda hook of the agents file (pre_tool_mediator,
// completion_policy): an executor object (type http or lambda, with the
// same url/function, secret and timeout fields as a tool's executor) plus
// "on_error", what a failed or timed-out call decides.
type Hook struct {
	Executor
	OnError string
}

// ParseHook reads and validates a hook object. onError lists the allowed
// on_error settings, the first being the default. Unknown fields are
// errors.
func ParseHook(v any, onError ...string) (Hook, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return Hook{}, fmt.Errorf("must be an object with a type (http or lambda)")
	}
	rest := make(map[string]any, len(m))
	var h Hook
	for k, val := range m {
		if k != "on_error" {
			rest[k] = val
			continue
		}
		s, _ := val.(string)
		if len(onError) == 0 {
			return Hook{}, fmt.Errorf("on_error is not a setting of this hook")
		}
		if !slices.Contains(onError, s) {
			return Hook{}, fmt.Errorf("on_error must be %s, got %v", strings.Join(onError, " or "), val)
		}
		h.OnError = s
	}
	if h.OnError == "" && len(onError) > 0 {
		h.OnError = onError[0]
	}
	ex, err := Parse(rest)
	if err != nil {
		return Hook{}, err
	}
	if ex.Type != TypeHTTP && ex.Type != TypeLambda {
		return Hook{}, fmt.Errorf("executor.type must be http or lambda for a hook, got %q", ex.Type)
	}
	h.Executor = ex
	return h, nil
}

// checkA2A checks an a2a executor: an http(s) card_url without
// credentials, at most one secret reference (the bearer token), and no
// field of another type.
func (ex Executor) checkA2A() error {
	u, err := url.Parse(ex.CardURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("executor.card_url must be the http(s) URL of the remote agent's card (e.g. https://agent.example.com/.well-known/agent-card.json)")
	}
	if u.User != nil {
		return fmt.Errorf("executor.card_url must not carry credentials: name the bearer token with secret_env, secret_ssm or secret_arn")
	}
	if ex.URL != "" || ex.Function != "" || ex.Handler != "" || ex.Agent != "" {
		return fmt.Errorf("an a2a executor takes type, card_url, timeout and one of secret_env, secret_ssm and secret_arn")
	}
	if ref := ex.SecretRef(); ref != (SecretRef{}) {
		if err := ref.Validate(); err != nil {
			return fmt.Errorf("executor: %w", err)
		}
	}
	return nil
}

// SecretRef is the executor's secret reference (zero when it names none).
func (ex Executor) SecretRef() SecretRef {
	return SecretRef{Env: ex.SecretEnv, SSM: ex.SecretSSM, ARN: ex.SecretARN}
}
