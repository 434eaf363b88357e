package httpapi_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/baton-agents/baton/internal/httpapi"
)

// TestConfigDefaults: the API's documented defaults fill a zero or
// negative setting and leave a set one, and ?wait= is capped at 25 s.
func TestConfigDefaults(t *testing.T) {
	const mib5 = 5 << 20
	for _, tc := range []struct {
		name string
		in   httpapi.Config
		want httpapi.Config
	}{
		{"zero", httpapi.Config{}, httpapi.Config{MaxBodyBytes: mib5, MaxViewBytes: mib5, MaxWait: 25 * time.Second, IdempotencyTTL: 24 * time.Hour}},
		{"negative", httpapi.Config{MaxBodyBytes: -1, MaxViewBytes: -1, MaxWait: -1, IdempotencyTTL: -1},
			httpapi.Config{MaxBodyBytes: mib5, MaxViewBytes: mib5, MaxWait: 25 * time.Second, IdempotencyTTL: 24 * time.Hour}},
		{"set", httpapi.Config{MaxBodyBytes: 1, MaxViewBytes: 2, MaxWait: time.Second, IdempotencyTTL: time.Hour},
			httpapi.Config{MaxBodyBytes: 1, MaxViewBytes: 2, MaxWait: time.Second, IdempotencyTTL: time.Hour}},
		{"the longest wait", httpapi.Config{MaxWait: 25 * time.Second}, httpapi.Config{MaxBodyBytes: mib5, MaxViewBytes: mib5, MaxWait: 25 * time.Second, IdempotencyTTL: 24 * time.Hour}},
		{"a longer wait", httpapi.Config{MaxWait: 26 * time.Second}, httpapi.Config{MaxBodyBytes: mib5, MaxViewBytes: mib5, MaxWait: 25 * time.Second, IdempotencyTTL: 24 * time.Hour}},
	} {
		a := httpapi.New(nil, nil, nil, nil, nil, tc.in)
		got := a.Config
		if got.MaxBodyBytes != tc.want.MaxBodyBytes || got.MaxViewBytes != tc.want.MaxViewBytes || got.MaxWait != tc.want.MaxWait || got.IdempotencyTTL != tc.want.IdempotencyTTL {
			t.Errorf("%s: %+v, want %+v", tc.name, got, tc.want)
		}
		if a.Log == nil {
			t.Errorf("%s: no logger", tc.name)
		}
	}
}

// TestMultiValueQuery: a query parameter API Gateway passes only in its
// multi-value form is read from there; an empty list is no parameter.
func TestMultiValueQuery(t *testing.T) {
	e := newEnv(t)
	for _, tc := range []struct {
		name     string
		wait     []string
		status   int
		wantCode string
	}{
		{"a value", []string{"soon"}, http.StatusBadRequest, "invalid_query"},
		{"the first of two", []string{"soon", "1"}, http.StatusBadRequest, "invalid_query"},
		{"an empty list", []string{}, http.StatusNotFound, "not_found"},
	} {
		req := events.APIGatewayProxyRequest{HTTPMethod: "GET", Path: "/v1/runs/r-404",
			Headers:                         map[string]string{"authorization": "Bearer tok-acme-123"},
			MultiValueQueryStringParameters: map[string][]string{"wait": tc.wait}}
		status, out, _ := e.handle(t, req)
		if status != tc.status || code(out) != tc.wantCode {
			t.Errorf("%s: %d %s, want %d %s", tc.name, status, code(out), tc.status, tc.wantCode)
		}
	}
}

// TestRequestIDEchoed: a response names API Gateway's request id in
// X-Request-Id when the request has one, and has no such header
// otherwise.
func TestRequestIDEchoed(t *testing.T) {
	e := newEnv(t)
	for _, id := range []string{"req-1", ""} {
		req := events.APIGatewayProxyRequest{HTTPMethod: "GET", Path: "/v1/runs/r-404",
			Headers: map[string]string{"authorization": "Bearer tok-acme-123"}}
		req.RequestContext.RequestID = id
		_, _, resp := e.handle(t, req)
		if got, ok := resp.Headers["X-Request-Id"]; got != id || ok != (id != "") {
			t.Errorf("request id %q: X-Request-Id %q (set %v)", id, got, ok)
		}
	}
}
