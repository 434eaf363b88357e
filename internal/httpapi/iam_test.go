package httpapi_test

import (
	"net/http"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/baton-agents/baton/internal/app"
)

const iamPrincipals = `{"arn:aws:iam::123456789012:role/ingest":{"tenant":"acme","scopes":["runs:write","runs:read"]},
 "arn:aws:iam::123456789012:role/reader":{"tenant":"acme","scopes":["runs:read"]}}`

// iamDo sends a request under /iam/ with the request context API Gateway
// would set after AWS_IAM authorization of callerARN ("": none).
func iamDo(t *testing.T, e *env, method, path, callerARN, resourcePath, body string, hdr map[string]string) (int, map[string]any) {
	t.Helper()
	req := events.APIGatewayProxyRequest{HTTPMethod: method, Path: path, Headers: map[string]string{}, Body: body}
	for k, v := range hdr {
		req.Headers[k] = v
	}
	if callerARN != "" {
		req.RequestContext.Identity.UserArn, req.RequestContext.Identity.AccessKey = callerARN, "ASIAEXAMPLE"
	}
	req.RequestContext.ResourcePath = resourcePath
	st, m, _ := e.handle(t, req)
	return st, m
}

// TestIAMCallers: under /iam/ the caller is the principal of API
// Gateway's request context, mapped to its tenant and scopes; headers
// (a Baton token included) are never trusted there, an unmapped
// principal is refused, and a deployment without IAM callers has no
// /iam/ routes.
func TestIAMCallers(t *testing.T) {
	e := newEnvWith(t, func(c *app.Config) { c.IAMPrincipals = iamPrincipals })
	const ingest = "arn:aws:sts::123456789012:assumed-role/ingest/job-42"
	st, run := iamDo(t, e, "POST", "/iam/v1/runs", ingest, "/iam/{proxy+}", startBody, nil)
	if st != http.StatusAccepted {
		t.Fatalf("start as an IAM caller: %d %v", st, run)
	}
	id := run["run_id"].(string)
	// The run is acme's: acme's token reads it, globex's does not.
	if st, _, _ := e.do(t, "GET", "/v1/runs/"+id, "tok-acme-123", "", nil); st != http.StatusOK {
		t.Fatalf("acme's token reads the IAM caller's run: %d", st)
	}
	if st, _, _ := e.do(t, "GET", "/v1/runs/"+id, "tok-globex-1", "", nil); st != http.StatusNotFound {
		t.Fatalf("globex's token reads acme's run: %d", st)
	}
	for name, tc := range map[string]struct {
		method, path, arn, resource string
		hdr                         map[string]string
		status                      int
		code                        string
	}{
		"no identity":               {"GET", "/iam/v1/runs", "", "/iam/{proxy+}", nil, 401, "unauthorized"},
		"a Baton token instead":     {"GET", "/iam/v1/runs", "", "/iam/{proxy+}", map[string]string{"Authorization": "Bearer tok-acme-123"}, 401, "unauthorized"},
		"identity off the IAM tree": {"GET", "/iam/v1/runs", ingest, "/v1/{proxy+}", nil, 401, "unauthorized"},
		"unmapped principal":        {"GET", "/iam/v1/runs", "arn:aws:sts::123456789012:assumed-role/other/s", "/iam/{proxy+}", nil, 403, "forbidden"},
		"scope the role lacks":      {"POST", "/iam/v1/runs", "arn:aws:iam::123456789012:role/reader", "/iam/{proxy+}", nil, 403, "forbidden"},
		"read with its scope":       {"GET", "/iam/v1/runs/" + id, "arn:aws:iam::123456789012:role/reader", "/iam/v1/runs/{run_id}", nil, 200, ""},
	} {
		st, body := iamDo(t, e, tc.method, tc.path, tc.arn, tc.resource, startBody, tc.hdr)
		if st != tc.status || code(body) != tc.code {
			t.Errorf("%s: %d %v, want %d %s", name, st, body, tc.status, tc.code)
		}
	}
	// On the ordinary routes, a request context identity is not a caller.
	if st, body := iamDo(t, e, "GET", "/v1/runs", ingest, "/v1/{proxy+}", "", nil); st != http.StatusUnauthorized {
		t.Fatalf("an identity on /v1/: %d %v", st, body)
	}
	plain := newEnv(t)
	if st, body := iamDo(t, plain, "GET", "/iam/v1/runs", ingest, "/iam/{proxy+}", "", nil); st != http.StatusNotFound || code(body) != "route_not_found" {
		t.Fatalf("no IAM callers configured: %d %v", st, body)
	}
}
