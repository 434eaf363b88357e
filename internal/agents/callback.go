package agents

import (
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/baton-agents/baton/core"
	"github.com/baton-agents/baton/internal/toolspec"
)

// OverrideCallback lets callers set a run's callback, to a host in the
// agent's callback_hosts, signed with the agent's callback secret.
const OverrideCallback = "callback"

// Callback events: the notification events a callback may take.
var callbackEvents = []string{"paused", "finished", "expired"}

// CallbackSpec is an agent's callback (webhook) as written in the file.
// URL is the default callback of the agent's runs (optional: without it
// only callers' callbacks are sent); exactly one secret reference signs
// every callback of the agent's runs, callers' included; Events defaults
// to paused, finished and expired; Timeout bounds one POST (default 10s).
type CallbackSpec struct {
	URL       string   `json:"url,omitempty"`
	SecretEnv string   `json:"secret_env,omitempty"`
	SecretSSM string   `json:"secret_ssm,omitempty"`
	SecretARN string   `json:"secret_arn,omitempty"`
	Events    []string `json:"events,omitempty"`
	Timeout   string   `json:"timeout,omitempty"`
}

// CallbackRequest is a caller's callback (the start request's
// "callback"). The secret fields exist only to be refused with a clear
// error: a caller's callback is signed with the agent's secret.
type CallbackRequest struct {
	URL       string   `json:"url"`
	Events    []string `json:"events,omitempty"`
	SecretEnv string   `json:"secret_env,omitempty"`
	SecretSSM string   `json:"secret_ssm,omitempty"`
	SecretARN string   `json:"secret_arn,omitempty"`
	// Format, Token and ID are set by a protocol edge, never by a
	// request body (core.Callback).
	Format string `json:"-"`
	Token  string `json:"-"`
	ID     string `json:"-"`
}

// CallbackError is a caller's callback the agent refuses; Code is the
// API error code (callback_host_not_allowed, invalid_callback).
type CallbackError struct{ Code, Message string }

func (e *CallbackError) Error() string { return e.Message }

// defaultCallbackTimeout bounds one callback POST.
const defaultCallbackTimeout = 10 * time.Second

// parseCallback validates the agent's callback and callback_hosts.
func (a *Agent) parseCallback() error {
	s := a.Spec
	for i, h := range s.CallbackHosts {
		if h == "" || strings.ContainsAny(h, "/:@ ") || h != strings.ToLower(h) {
			return fmt.Errorf("callback_hosts[%d]: want a lower-case host name such as \"hooks.example.com\", got %q", i, h)
		}
	}
	if a.allowed[OverrideCallback] && (s.Callback == nil || len(s.CallbackHosts) == 0) {
		return fmt.Errorf("allow_overrides: callback needs callback (with its secret_env, secret_ssm or secret_arn, which signs callers' callbacks too) and callback_hosts")
	}
	if len(s.CallbackHosts) > 0 && !a.allowed[OverrideCallback] {
		return fmt.Errorf("callback_hosts: set only when allow_overrides lists callback")
	}
	c := s.Callback
	if c == nil {
		return nil
	}
	var refs []string
	for _, r := range []struct{ name, v string }{{"secret_env", c.SecretEnv}, {"secret_ssm", c.SecretSSM}, {"secret_arn", c.SecretARN}} {
		if r.v != "" {
			refs = append(refs, "callback."+r.name)
		}
	}
	if len(refs) != 1 {
		return fmt.Errorf("callback: set exactly one of secret_env, secret_ssm and secret_arn (got %d)", len(refs))
	}
	if c.URL != "" {
		if _, err := callbackURL(c.URL); err != nil {
			return fmt.Errorf("callback.url: %w", err)
		}
	}
	events, err := checkEvents(c.Events)
	if err != nil {
		return fmt.Errorf("callback.events: %w", err)
	}
	a.callbackEvents = events
	a.callbackTimeout = defaultCallbackTimeout
	if c.Timeout != "" {
		d, err := time.ParseDuration(c.Timeout)
		if err != nil || d <= 0 {
			return fmt.Errorf("callback.timeout: want a positive Go duration, got %q", c.Timeout)
		}
		a.callbackTimeout = d
	}
	return nil
}

// callbackURL parses an http(s) URL with a host.
func callbackURL(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" {
		return nil, fmt.Errorf("want an http(s) URL with a host, got %q", raw)
	}
	return u, nil
}

// checkEvents validates callback events; none means all.
func checkEvents(evs []string) ([]string, error) {
	if len(evs) == 0 {
		return slices.Clone(callbackEvents), nil
	}
	var out []string
	for _, e := range evs {
		if !slices.Contains(callbackEvents, e) {
			return nil, fmt.Errorf("unknown event %q (want paused, finished or expired)", e)
		}
		if !slices.Contains(out, e) {
			out = append(out, e)
		}
	}
	return out, nil
}

// baseCallback is the agent's default callback of its runs (nil: none).
func (a *Agent) baseCallback() *core.Callback {
	if a.Spec.Callback == nil || a.Spec.Callback.URL == "" {
		return nil
	}
	return &core.Callback{URL: a.Spec.Callback.URL, Events: slices.Clone(a.callbackEvents)}
}

// callerCallback checks a caller's callback against the agent: allowed
// by allow_overrides, no secret, an http(s) URL whose host is in
// callback_hosts, known events (none: the agent's).
func (a *Agent) callerCallback(r *CallbackRequest) (*core.Callback, error) {
	if !a.Allows(OverrideCallback) {
		return nil, &OverrideError{Field: OverrideCallback}
	}
	if r.SecretEnv != "" || r.SecretSSM != "" || r.SecretARN != "" {
		return nil, &CallbackError{"invalid_callback", "callback: callers cannot choose a secret; the callback is signed with the agent's callback secret"}
	}
	u, err := callbackURL(r.URL)
	if err != nil {
		return nil, &CallbackError{"invalid_callback", "callback.url: " + err.Error()}
	}
	if host := strings.ToLower(u.Hostname()); !slices.Contains(a.Spec.CallbackHosts, host) {
		return nil, &CallbackError{"callback_host_not_allowed", fmt.Sprintf("callback.url: host %q is not in agent %s's callback_hosts", host, a.Spec.Slug)}
	}
	events := a.callbackEvents
	if len(r.Events) > 0 {
		if events, err = checkEvents(r.Events); err != nil {
			return nil, &CallbackError{"invalid_callback", "callback.events: " + err.Error()}
		}
	}
	return &core.Callback{URL: u.String(), Events: slices.Clone(events), Format: r.Format, Token: r.Token, ID: r.ID}, nil
}

// PushCallback checks an A2A push notification configuration (a
// caller's callback, as callerCallback checks it) and returns it as the
// run's callback: the agent's events, the A2A body, token and id.
func (a *Agent) PushCallback(url, token, id string) (*core.Callback, error) {
	return a.callerCallback(PushRequest(url, token, id))
}

// PushRequest is the caller's callback of an A2A push notification
// configuration.
func PushRequest(url, token, id string) *CallbackRequest {
	return &CallbackRequest{URL: url, Format: core.CallbackFormatA2A, Token: token, ID: id}
}

// PushNotifications reports whether callers may configure callbacks of
// the agent's runs (allow_overrides lists callback; the agent has a
// secret to sign them).
func (a *Agent) PushNotifications() bool { return a.Allows(OverrideCallback) && a.Spec.Callback != nil }

// CallbackSigners returns, by agent slug, the http endpoint template
// (secret reference and timeout, no URL) that signs the callbacks of each
// agent with a callback.
func (r *Registry) CallbackSigners() map[string]toolspec.Executor {
	out := map[string]toolspec.Executor{}
	for slug, a := range r.agents {
		if c := a.Spec.Callback; c != nil {
			out[slug] = toolspec.Executor{Type: toolspec.TypeHTTP, SecretEnv: c.SecretEnv, SecretSSM: c.SecretSSM, SecretARN: c.SecretARN, Timeout: a.callbackTimeout.String()}
		}
	}
	return out
}
