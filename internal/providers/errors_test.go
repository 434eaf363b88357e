package providers

import (
	"errors"
	"strings"
	"testing"
)

func TestErrorFromBody(t *testing.T) {
	cases := []struct {
		body, code, msg string
	}{
		{`{"error":{"message":"bad model","type":"invalid_request_error","param":null,"code":"model_not_found"}}`, "invalid_request_error", "bad model"},
		{`{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`, "overloaded_error", "Overloaded"},
		{`{"error":"model 'llama9' not found"}`, "", "model 'llama9' not found"},
		{`{"object":"error","message":"maximum context length is 4096","type":"BadRequestError","code":400}`, "BadRequestError", "maximum context length is 4096"},
		{`{"message":"Too many requests"}`, "", "Too many requests"},
		{"<html>\n  <body>502   Bad Gateway</body></html>", "", "<html> <body>502 Bad Gateway</body></html>"},
	}
	for _, tc := range cases {
		code, msg := ErrorFromBody([]byte(tc.body))
		if code != tc.code || msg != tc.msg {
			t.Errorf("ErrorFromBody(%s) = %q, %q; want %q, %q", tc.body, code, msg, tc.code, tc.msg)
		}
	}
	_, msg := ErrorFromBody([]byte(strings.Repeat("é", 600)))
	if len(msg) > MaxErrorMessage+len("…") || !strings.HasSuffix(msg, "…") {
		t.Errorf("long message not trimmed: %d bytes", len(msg))
	}
}

func TestErrorText(t *testing.T) {
	cases := []struct {
		e    *Error
		want string
	}{
		{&Error{Provider: "openai", Status: 400, Code: "invalid_request_error", Message: "bad", RequestID: "req_1"},
			"openai: HTTP 400 (invalid_request_error): bad (request id req_1)"},
		{&Error{Provider: "anthropic", Status: 401, Message: "invalid x-api-key"},
			"anthropic: HTTP 401: invalid x-api-key (check the API key or credentials configured for this provider in the deployment)"},
		{&Error{Provider: "bedrock", Code: "ThrottlingException", Message: "slow down"}, "bedrock: ThrottlingException: slow down"},
		{&Error{Provider: "openai", Message: "dial tcp: refused"}, "openai: request failed: dial tcp: refused"},
		{&Error{Provider: "openai", Status: 500}, "openai: HTTP 500: the response did not say why"},
	}
	for _, tc := range cases {
		if got := tc.e.Error(); got != tc.want {
			t.Errorf("got  %q\nwant %q", got, tc.want)
		}
	}
}

func TestScrub(t *testing.T) {
	s := Scrubber{"sk-secret-123"}
	if got := s.Scrub("key sk-secret-123 rejected"); got != "key [redacted] rejected" {
		t.Errorf("Scrub = %q", got)
	}
	base := errors.New("call with sk-secret-123 failed")
	err := s.ScrubError(base)
	if strings.Contains(err.Error(), "sk-secret-123") || !errors.Is(err, base) {
		t.Errorf("ScrubError = %v (chain kept: %v)", err, errors.Is(err, base))
	}
	if Scrubber(nil).Scrub("x") != "x" || (Scrubber{""}).Scrub("abc") != "abc" {
		t.Error("an empty secret must not change the text")
	}
}

func TestTransient(t *testing.T) {
	cases := []struct {
		status int
		code   string
		want   bool
	}{
		{429, "rate_limit_exceeded", true},
		{429, "requests", true},
		{429, "insufficient_quota", false},
		{503, "", true},
		{529, "overloaded_error", true},
		{408, "", true},
		{400, "invalid_request_error", false},
		{401, "", false},
	}
	for _, tc := range cases {
		if got := Transient(tc.status, tc.code); got != tc.want {
			t.Errorf("Transient(%d, %q) = %v, want %v", tc.status, tc.code, got, tc.want)
		}
	}
}
