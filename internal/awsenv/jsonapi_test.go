package awsenv

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/ratelimit"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/smithy-go"
)

// fakeJSONAPI answers SSM and Secrets Manager requests of the JSON 1.1
// protocol and records them.
type fakeJSONAPI struct {
	mu       sync.Mutex
	requests []*http.Request
	bodies   []map[string]any
	// answer returns the status and body of the n-th request (from 0).
	answer func(n int, target string, body map[string]any) (int, string)
}

func (f *fakeJSONAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	f.mu.Lock()
	n := len(f.requests)
	f.requests, f.bodies = append(f.requests, r), append(f.bodies, m)
	f.mu.Unlock()
	status, body := f.answer(n, r.Header.Get("X-Amz-Target"), m)
	w.Header().Set("X-Amzn-Requestid", "req-1")
	w.WriteHeader(status)
	_, _ = io.WriteString(w, body)
}

// testConfig is the configuration the SDK's clients would get, pointed
// at srv through AWS_ENDPOINT_URL_<SERVICE>, with a retryer that does
// not wait.
func testConfig(t *testing.T) aws.Config {
	t.Helper()
	return aws.Config{
		Region:        "eu-west-1",
		Credentials:   credentials.NewStaticCredentialsProvider("AKIDEXAMPLE", "secret", "session"),
		ConfigSources: []any{config.EnvConfig{}},
		Retryer: func() aws.Retryer {
			return retry.NewStandard(func(o *retry.StandardOptions) {
				o.Backoff = retry.BackoffDelayerFunc(func(int, error) (time.Duration, error) { return 0, nil })
			})
		},
	}
}

func TestJSONClientReadsSecrets(t *testing.T) {
	f := &fakeJSONAPI{answer: func(_ int, target string, body map[string]any) (int, string) {
		switch target {
		case "AmazonSSM.GetParameter":
			return 200, `{"Parameter":{"Name":"/p","Type":"SecureString","Value":"ssm-value","Version":3}}`
		case "secretsmanager.GetSecretValue":
			if body["SecretId"] == "arn:binary" {
				return 200, `{"ARN":"arn:binary","SecretBinary":"c20tYmluYXJ5"}`
			}
			return 200, `{"ARN":"arn:string","SecretString":"sm-string"}`
		}
		return 400, `{"__type":"UnknownOperationException"}`
	}}
	srv := httptest.NewServer(f)
	defer srv.Close()
	t.Setenv("AWS_ENDPOINT_URL_SSM", srv.URL)
	t.Setenv("AWS_ENDPOINT_URL_SECRETS_MANAGER", srv.URL)
	cfg, ctx := testConfig(t), context.Background()

	v, err := SSM(cfg).GetParameter(ctx, "/p")
	if err != nil || v != "ssm-value" {
		t.Fatalf("GetParameter = %q, %v", v, err)
	}
	s, b, err := SecretsManager(cfg).GetSecretValue(ctx, "arn:string")
	if err != nil || s == nil || *s != "sm-string" || b != nil {
		t.Fatalf("GetSecretValue(arn:string) = %v, %q, %v", s, b, err)
	}
	s, b, err = SecretsManager(cfg).GetSecretValue(ctx, "arn:binary")
	if err != nil || s != nil || string(b) != "sm-binary" {
		t.Fatalf("GetSecretValue(arn:binary) = %v, %q, %v", s, b, err)
	}
	if len(f.requests) != 3 {
		t.Fatalf("%d requests, want 3", len(f.requests))
	}
	for i, want := range []struct{ target, service string }{{"AmazonSSM.GetParameter", "ssm"}, {"secretsmanager.GetSecretValue", "secretsmanager"}} {
		r := f.requests[i]
		if r.Method != http.MethodPost || r.URL.Path != "/" || r.Header.Get("X-Amz-Target") != want.target || r.Header.Get("Content-Type") != "application/x-amz-json-1.1" {
			t.Errorf("request %d: %s %s, target %q, content type %q", i, r.Method, r.URL.Path, r.Header.Get("X-Amz-Target"), r.Header.Get("Content-Type"))
		}
		auth := r.Header.Get("Authorization")
		if !strings.HasPrefix(auth, "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/") || !strings.Contains(auth, "/eu-west-1/"+want.service+"/aws4_request") ||
			r.Header.Get("X-Amz-Security-Token") != "session" || r.Header.Get("X-Amz-Date") == "" {
			t.Errorf("request %d is not signed for %s in eu-west-1: %q", i, want.service, auth)
		}
	}
	if f.bodies[0]["Name"] != "/p" || f.bodies[0]["WithDecryption"] != true {
		t.Errorf("GetParameter body %v, want the name and WithDecryption", f.bodies[0])
	}
	if f.bodies[1]["SecretId"] != "arn:string" {
		t.Errorf("GetSecretValue body %v", f.bodies[1])
	}
}

func TestJSONClientErrors(t *testing.T) {
	f := &fakeJSONAPI{answer: func(n int, _ string, body map[string]any) (int, string) {
		switch body["Name"] {
		case "/missing":
			return 400, `{"__type":"com.amazonaws.ssm#ParameterNotFound","message":"Parameter /missing not found."}`
		case "/flaky":
			if n%2 == 1 { // the first attempt (requests 1, 3, …) fails
				return 500, `{"__type":"InternalServerError","Message":"try again"}`
			}
			return 200, `{"Parameter":{"Value":"after a retry"}}`
		case "/throttled":
			return 400, `{"__type":"ThrottlingException","message":"Rate exceeded"}`
		}
		return 200, `{"Parameter":{"Value":"ok"}}`
	}}
	srv := httptest.NewServer(f)
	defer srv.Close()
	t.Setenv("AWS_ENDPOINT_URL_SSM", srv.URL)
	c, ctx := SSM(testConfig(t)), context.Background()
	count := func() int { f.mu.Lock(); defer f.mu.Unlock(); return len(f.requests) }

	_, err := c.GetParameter(ctx, "/missing")
	var api smithy.APIError
	var op *smithy.OperationError
	var re *awshttp.ResponseError
	if !errors.As(err, &api) || api.ErrorCode() != "ParameterNotFound" || api.ErrorMessage() != "Parameter /missing not found." ||
		!errors.As(err, &op) || op.Service() != "SSM" || op.Operation() != "GetParameter" || !errors.As(err, &re) || re.HTTPStatusCode() != 400 || re.ServiceRequestID() != "req-1" {
		t.Fatalf("missing parameter: %v", err)
	}
	if want := "operation error SSM: GetParameter, https response error StatusCode: 400, RequestID: req-1, api error ParameterNotFound: Parameter /missing not found."; err.Error() != want {
		t.Errorf("error text %q, want the SDK's %q", err.Error(), want)
	}
	if count() != 1 {
		t.Errorf("a client error was sent %d times, want once", count())
	}
	if v, err := c.GetParameter(ctx, "/flaky"); err != nil || v != "after a retry" || count() != 3 {
		t.Errorf("a 500 then a 200: %q, %v after %d requests; want the value after 2 more", v, err, count())
	}
	n := count()
	if _, err := c.GetParameter(ctx, "/throttled"); !errors.As(err, &api) || api.ErrorCode() != "ThrottlingException" || count()-n != 3 {
		t.Errorf("throttled: %v after %d attempts; want ThrottlingException after the standard retryer's 3", err, count()-n)
	}
	// The retry quota spans the client's calls, as the SDK's: with room
	// for one retry, the first call retries once and the next not at all.
	quota := testConfig(t)
	quota.Retryer = func() aws.Retryer {
		return retry.NewStandard(func(o *retry.StandardOptions) {
			o.Backoff = retry.BackoffDelayerFunc(func(int, error) (time.Duration, error) { return 0, nil })
			o.RateLimiter = ratelimit.NewTokenRateLimit(5)
			o.RetryCost, o.ThrottlingRetryCost = 5, 5
		})
	}
	qc := SSM(quota)
	for i, want := range []int{2, 1} {
		n = count()
		if _, err := qc.GetParameter(ctx, "/throttled"); err == nil || count()-n != want {
			t.Errorf("call %d with a quota of one retry: %v after %d attempts, want %d", i+1, err, count()-n, want)
		}
	}
	one := testConfig(t)
	one.RetryMaxAttempts = 1
	n = count()
	if _, err := SSM(one).GetParameter(ctx, "/throttled"); err == nil || count()-n != 1 {
		t.Errorf("RetryMaxAttempts 1: %v after %d attempts, want 1", err, count()-n)
	}
	srv.Close()
	if _, err := c.GetParameter(ctx, "/p"); err == nil || !strings.Contains(err.Error(), "operation error SSM: GetParameter") {
		t.Errorf("no server: %v", err)
	}
}

func TestJSONClientEndpoint(t *testing.T) {
	for _, c := range []struct {
		name   string
		env    map[string]string
		base   string
		region string
		want   string
	}{
		{"regional", nil, "", "us-east-1", "https://ssm.us-east-1.amazonaws.com/"},
		{"china", nil, "", "cn-north-1", "https://ssm.cn-north-1.amazonaws.com.cn/"},
		{"govcloud fips", map[string]string{"AWS_USE_FIPS_ENDPOINT": "true"}, "", "us-gov-west-1", "https://ssm-fips.us-gov-west-1.amazonaws.com/"},
		{"dual-stack", map[string]string{"AWS_USE_DUALSTACK_ENDPOINT": "true"}, "", "eu-west-1", "https://ssm.eu-west-1.api.aws/"},
		{"iso", nil, "", "us-iso-east-1", "https://ssm.us-iso-east-1.c2s.ic.gov/"},
		{"base endpoint", nil, "http://localhost:4566", "us-east-1", "http://localhost:4566/"},
		{"service endpoint wins", map[string]string{"AWS_ENDPOINT_URL_SSM": "http://127.0.0.1:9000/x"}, "http://localhost:4566", "us-east-1", "http://127.0.0.1:9000/x"},
	} {
		t.Run(c.name, func(t *testing.T) {
			for k, v := range c.env {
				t.Setenv(k, v)
			}
			env, err := config.NewEnvConfig()
			if err != nil {
				t.Fatal(err)
			}
			cfg := aws.Config{Region: c.region, ConfigSources: []any{env}}
			if c.base != "" {
				cfg.BaseEndpoint = aws.String(c.base)
			}
			u, err := NewJSONClient(cfg, SSMService).Endpoint(context.Background())
			if err != nil || u.String() != c.want {
				t.Errorf("endpoint %v, %v; want %s", u, err, c.want)
			}
		})
	}
	if _, err := NewJSONClient(aws.Config{}, SSMService).Endpoint(context.Background()); err == nil {
		t.Error("no region, no endpoint: no error")
	}
}

func TestLambdaInvoke(t *testing.T) {
	var got []*http.Request
	var mu sync.Mutex
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		got = append(got, r)
		mu.Unlock()
		switch {
		case strings.Contains(r.URL.Path, "missing"):
			w.Header().Set("X-Amzn-Errortype", "ResourceNotFoundException:http://internal.amazon.com/coral/com.amazonaws.awslambda/")
			w.WriteHeader(http.StatusNotFound)
			_, _ = io.WriteString(w, `{"Type":"User","Message":"Function not found: missing"}`)
		case strings.Contains(string(b), "throw"):
			w.Header().Set("X-Amz-Function-Error", "Unhandled")
			_, _ = io.WriteString(w, `{"errorMessage":"boom","errorType":"Error"}`)
		default:
			_, _ = w.Write(b)
		}
	}))
	defer srv.Close()
	t.Setenv("AWS_ENDPOINT_URL_LAMBDA", srv.URL)
	c, ctx := Lambda(testConfig(t)), context.Background()
	const arn = "arn:aws:lambda:eu-west-1:123456789012:function:echo:live"
	fe, out, err := c.Invoke(ctx, arn, []byte(`{"x":1}`))
	if err != nil || fe != "" || string(out) != `{"x":1}` {
		t.Fatalf("Invoke = %q, %s, %v", fe, out, err)
	}
	r := got[0]
	// The SDK escapes the function name's colons in the path.
	if r.URL.EscapedPath() != "/2015-03-31/functions/arn%3Aaws%3Alambda%3Aeu-west-1%3A123456789012%3Afunction%3Aecho%3Alive/invocations" ||
		r.Header.Get("X-Amz-Invocation-Type") != "RequestResponse" || !strings.Contains(r.Header.Get("Authorization"), "/eu-west-1/lambda/aws4_request") {
		t.Errorf("request %s %q %q", r.URL.EscapedPath(), r.Header.Get("X-Amz-Invocation-Type"), r.Header.Get("Authorization"))
	}
	if fe, out, err := c.Invoke(ctx, "echo", []byte(`"throw"`)); err != nil || fe != "Unhandled" || !strings.Contains(string(out), "boom") {
		t.Errorf("function error: %q, %s, %v", fe, out, err)
	}
	_, _, err = c.Invoke(ctx, "missing", []byte(`{}`))
	var api smithy.APIError
	if !errors.As(err, &api) || api.ErrorCode() != "ResourceNotFoundException" || api.ErrorMessage() != "Function not found: missing" ||
		!strings.HasPrefix(err.Error(), "operation error Lambda: Invoke, https response error StatusCode: 404") {
		t.Errorf("missing function: %v", err)
	}
}
