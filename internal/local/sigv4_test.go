package local

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
)

// TestSigV4: requests signed by the AWS SDK's own signer reach the
// handler with the caller in the request context; every way a signature
// can be wrong is API Gateway's 403 and never reaches it.
func TestSigV4(t *testing.T) {
	var got []events.APIGatewayProxyRequest
	api := func(_ context.Context, r events.APIGatewayProxyRequest) (events.APIGatewayProxyResponse, error) {
		got = append(got, r)
		return events.APIGatewayProxyResponse{StatusCode: 200, Body: "{}"}, nil
	}
	const arn = "arn:aws:iam::123456789012:user/ci"
	verifier := &SigV4{Keys: map[string]IAMKey{"AKIDLOCAL": {Secret: "s3cret", ARN: arn}}}
	srv := httptest.NewServer(Proxy(api, Streams{}, 1<<10, verifier))
	defer srv.Close()
	good := aws.Credentials{AccessKeyID: "AKIDLOCAL", SecretAccessKey: "s3cret"}
	send := func(method, path, body string, creds aws.Credentials, service string, at time.Time, tamper func(*http.Request)) (int, string) {
		t.Helper()
		req, _ := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		sum := sha256.Sum256([]byte(body))
		service, region, _ := strings.Cut(service, "@") // "execute-api@eu-west-1": signed for another region
		if creds.AccessKeyID != "" {
			if err := v4.NewSigner().SignHTTP(context.Background(), creds, req, hex.EncodeToString(sum[:]), service, cmp.Or(region, "us-east-1"), at); err != nil {
				t.Fatal(err)
			}
		}
		if tamper != nil {
			tamper(req)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	now := time.Now()
	if st, body := send("POST", "/iam/v1/runs", `{"agent":"demo"}`, good, "execute-api", now, nil); st != 200 {
		t.Fatalf("signed POST: %d %s", st, body)
	}
	if st, body := send("GET", "/iam/v1/runs/r-1/events?after=3&limit=10&x=a%20b", "", good, "execute-api", now, nil); st != 200 {
		t.Fatalf("signed GET with a query: %d %s", st, body)
	}
	if len(got) != 2 {
		t.Fatalf("%d requests reached the handler", len(got))
	}
	for _, r := range got {
		if r.RequestContext.Identity.UserArn != arn || r.RequestContext.Identity.AccessKey != "AKIDLOCAL" || r.RequestContext.ResourcePath != "/iam/{proxy+}" || r.Resource != "/iam/{proxy+}" {
			t.Fatalf("request context %+v resource %q", r.RequestContext, r.Resource)
		}
	}
	if got[1].PathParameters["proxy"] != "v1/runs/r-1/events" {
		t.Fatalf("proxy %v", got[1].PathParameters)
	}
	for name, tc := range map[string]struct {
		creds   aws.Credentials
		service string
		at      time.Time
		tamper  func(*http.Request)
		want    string
	}{
		"unsigned":       {aws.Credentials{}, "execute-api", now, nil, "Missing Authentication Token"},
		"wrong secret":   {aws.Credentials{AccessKeyID: "AKIDLOCAL", SecretAccessKey: "guess"}, "execute-api", now, nil, "signature we calculated does not match"},
		"unknown key":    {aws.Credentials{AccessKeyID: "AKIDOTHER", SecretAccessKey: "s3cret"}, "execute-api", now, nil, "security token included in the request is invalid"},
		"other service":  {good, "lambda", now, nil, "execute-api"},
		"other region":   {good, "execute-api@eu-west-1", now, nil, "Credential should be scoped to a valid region, not 'eu-west-1'."},
		"an hour old":    {good, "execute-api", now.Add(-time.Hour), nil, "Signature expired"},
		"session token":  {aws.Credentials{AccessKeyID: "AKIDLOCAL", SecretAccessKey: "s3cret", SessionToken: "tok"}, "execute-api", now, nil, "temporary credentials"},
		"path changed":   {good, "execute-api", now, func(r *http.Request) { r.URL.Path = "/iam/v1/runs/r-2" }, "does not match"},
		"header changed": {good, "execute-api", now, func(r *http.Request) { r.Header.Set("Content-Type", "text/plain") }, "does not match"},
		"body changed": {good, "execute-api", now, func(r *http.Request) {
			r.Body, r.ContentLength = io.NopCloser(strings.NewReader(`{"agent":"evil"}`)), 16
		}, "does not match"},
	} {
		st, body := send("POST", "/iam/v1/runs", `{"agent":"demo"}`, tc.creds, tc.service, tc.at, tc.tamper)
		var m map[string]string
		_ = json.Unmarshal([]byte(body), &m)
		if st != 403 || !strings.Contains(m["message"], tc.want) {
			t.Errorf("%s: %d %s, want 403 %q", name, st, body, tc.want)
		}
	}
	if len(got) != 2 {
		t.Fatalf("a refused request reached the handler (%d requests)", len(got))
	}
}
