package awsenv

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/smithy-go"
	"github.com/aws/smithy-go/encoding/httpbinding"
	smithyhttp "github.com/aws/smithy-go/transport/http"
)

// JSONService is an AWS service whose operations a process calls over
// its JSON 1.1 protocol (a signed POST whose X-Amz-Target header names
// the operation) with a JSONClient instead of the service's generated
// SDK client: SSM and Secrets Manager, from which a process reads each
// secret once, and EventBridge, to which runs' notifications are put.
// Their generated clients' schema tables cost every function that links
// them 2.1 MB of allocations and about 4 ms at each cold start
// (docs/performance.md, Cold start).
type JSONService struct {
	// ID is the SDK's service id: errors name it ("operation error SSM:
	// GetParameter, …"), and AWS_ENDPOINT_URL_<ID> and the shared config's
	// services section override its endpoint.
	ID string
	// SigningName is the SigV4 service name, and the endpoint's host
	// prefix.
	SigningName string
	// TargetPrefix prefixes the operation name in X-Amz-Target (JSON
	// protocol).
	TargetPrefix string
}

// The services called with a JSONClient.
var (
	SSMService            = JSONService{ID: "SSM", SigningName: "ssm", TargetPrefix: "AmazonSSM"}
	SecretsManagerService = JSONService{ID: "Secrets Manager", SigningName: "secretsmanager", TargetPrefix: "secretsmanager"}
	EventBridgeService    = JSONService{ID: "EventBridge", SigningName: "events", TargetPrefix: "AWSEvents"}
	// LambdaService is called with LambdaClient (its REST protocol).
	LambdaService = JSONService{ID: "Lambda", SigningName: "lambda"}
)

// LambdaClient invokes Lambda functions (a JSONClient on Lambda's REST
// protocol: Lambda's generated client is not linked).
type LambdaClient struct{ c *JSONClient }

// Invoke invokes function (a name or ARN, optionally qualified)
// synchronously (RequestResponse) with payload as its event and returns
// the function's error kind (X-Amz-Function-Error: "" unless the
// function failed) and its payload. Errors are the SDK's, as Call's.
func (l *LambdaClient) Invoke(ctx context.Context, function string, payload []byte) (functionError string, out []byte, err error) {
	h := http.Header{}
	h.Set("Content-Type", "application/octet-stream")
	h.Set("X-Amz-Invocation-Type", "RequestResponse")
	res, err := l.c.send(ctx, "/2015-03-31/functions/"+function+"/invocations", "/2015-03-31/functions/"+httpbinding.EscapePath(function, true)+"/invocations", h, payload)
	if err != nil {
		return "", nil, &smithy.OperationError{ServiceID: l.c.svc.ID, OperationName: "Invoke", Err: err}
	}
	return res.header.Get("X-Amz-Function-Error"), res.body, nil
}

// JSONClient calls a JSONService with what an aws.Config provides the
// SDK's clients: its region and credentials (SigV4), its HTTP client, its
// retryer (the standard one when it has none), and the endpoint the SDK
// would choose (Endpoint).
type JSONClient struct {
	svc     JSONService
	cfg     aws.Config
	signer  *v4.Signer
	retryer aws.Retryer // one per client, as the SDK's: its retry quota spans calls
	now     func() time.Time
}

// NewJSONClient returns the client of svc with cfg.
func NewJSONClient(cfg aws.Config, svc JSONService) *JSONClient {
	var r aws.Retryer
	if cfg.Retryer != nil {
		r = cfg.Retryer()
	}
	if r == nil {
		r = retry.NewStandard()
	}
	if cfg.RetryMaxAttempts > 0 { // AWS_MAX_ATTEMPTS, as the SDK's clients apply it
		r = retry.AddWithMaxAttempts(r, cfg.RetryMaxAttempts)
	}
	return &JSONClient{svc: svc, cfg: cfg, signer: v4.NewSigner(), retryer: r, now: time.Now}
}

// Call calls operation op with in, JSON-encoded, and decodes the answer
// into out. Its errors are the SDK's: a *smithy.OperationError wrapping
// the last attempt's error, an *awshttp.ResponseError over a
// smithy.APIError for an error answer (errors.As finds both), so they
// read as the generated client's do.
func (c *JSONClient) Call(ctx context.Context, op string, in, out any) error {
	err := c.call(ctx, op, in, out)
	if err != nil {
		return &smithy.OperationError{ServiceID: c.svc.ID, OperationName: op, Err: err}
	}
	return nil
}

func (c *JSONClient) call(ctx context.Context, op string, in, out any) error {
	body, err := json.Marshal(in)
	if err != nil {
		return fmt.Errorf("encode the request: %w", err)
	}
	h := http.Header{}
	h.Set("Content-Type", "application/x-amz-json-1.1")
	h.Set("X-Amz-Target", c.svc.TargetPrefix+"."+op)
	res, err := c.send(ctx, "/", "", h, body)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(res.body, out); err != nil {
		return fmt.Errorf("decode the response: %w", err)
	}
	return nil
}

// response is a 2xx answer.
type response struct {
	status int
	header http.Header
	body   []byte
}

// send POSTs body to path (rawPath: its escaped form, or "") under the
// endpoint, signed, retrying as the configuration's retryer says; an
// answer other than 2xx is an error.
func (c *JSONClient) send(ctx context.Context, path, rawPath string, h http.Header, body []byte) (response, error) {
	endpoint, err := c.Endpoint(ctx)
	if err != nil {
		return response{}, err
	}
	u := *endpoint
	if path != "/" {
		base := strings.TrimSuffix(u.EscapedPath(), "/")
		u.Path = strings.TrimSuffix(u.Path, "/") + path
		if rawPath != "" {
			u.RawPath = base + rawPath
		}
	}
	retryer := c.retryer
	var release func(error) error // returns the retry token of the attempt
	for attempt := 1; ; attempt++ {
		res, err := c.attempt(ctx, &u, h, body)
		if release != nil {
			_ = release(err)
			release = nil
		}
		if err == nil || attempt >= retryer.MaxAttempts() || !retryer.IsErrorRetryable(err) {
			return res, err
		}
		delay, derr := retryer.RetryDelay(attempt, err)
		if derr != nil {
			return res, err
		}
		if release, derr = retryer.GetRetryToken(ctx, err); derr != nil { // the retry quota is spent
			return res, err
		}
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return res, err
		case <-t.C:
		}
	}
}

// attempt sends one signed request.
func (c *JSONClient) attempt(ctx context.Context, u *url.URL, h http.Header, body []byte) (response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u.String(), bytes.NewReader(body))
	if err != nil {
		return response{}, err
	}
	for k, v := range h {
		req.Header[k] = v
	}
	if c.cfg.Credentials != nil {
		creds, err := c.cfg.Credentials.Retrieve(ctx)
		if err != nil {
			return response{}, fmt.Errorf("retrieve credentials: %w", err)
		}
		sum := sha256.Sum256(body)
		if err := c.signer.SignHTTP(ctx, creds, req, hex.EncodeToString(sum[:]), c.svc.SigningName, c.cfg.Region, c.now().UTC()); err != nil {
			return response{}, fmt.Errorf("sign the request: %w", err)
		}
	}
	var client interface {
		Do(*http.Request) (*http.Response, error)
	} = http.DefaultClient
	if c.cfg.HTTPClient != nil {
		client = c.cfg.HTTPClient
	}
	resp, err := client.Do(req)
	if err != nil {
		return response{}, &smithyhttp.RequestSendError{Err: err}
	}
	defer func() { _ = resp.Body.Close() }()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return response{}, &smithyhttp.RequestSendError{Err: fmt.Errorf("read the response: %w", err)}
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return response{}, &awshttp.ResponseError{
			ResponseError: &smithyhttp.ResponseError{Response: &smithyhttp.Response{Response: resp}, Err: apiError(resp, b)},
			RequestID:     resp.Header.Get("X-Amzn-Requestid"),
		}
	}
	return response{status: resp.StatusCode, header: resp.Header, body: b}, nil
}

// apiError is the error an answer of the JSON protocol describes: its
// code (the __type field or the X-Amzn-Errortype header, without a
// namespace) and message.
func apiError(resp *http.Response, b []byte) *smithy.GenericAPIError {
	var e struct {
		Type     string `json:"__type"`
		Code     string `json:"code"`
		Message  string `json:"message"`
		Message2 string `json:"Message"`
	}
	_ = json.Unmarshal(b, &e)
	code := resp.Header.Get("X-Amzn-Errortype")
	for _, c := range []string{e.Type, e.Code} {
		if code == "" {
			code = c
		}
	}
	code, _, _ = strings.Cut(code, ":")
	if i := strings.LastIndex(code, "#"); i >= 0 {
		code = code[i+1:]
	}
	if code == "" {
		code = "UnknownError"
	}
	msg := e.Message
	if msg == "" {
		msg = e.Message2
	}
	if msg == "" {
		msg = http.StatusText(resp.StatusCode)
	}
	return &smithy.GenericAPIError{Code: code, Message: msg}
}

// Endpoint is where the client sends requests, as the SDK's clients
// resolve it: the service's own endpoint from AWS_ENDPOINT_URL_<ID> or
// the shared config's services section, then cfg.BaseEndpoint
// (AWS_ENDPOINT_URL), then the regional endpoint of the region's
// partition (its FIPS or dual-stack variant when the configuration asks
// for it).
func (c *JSONClient) Endpoint(ctx context.Context) (*url.URL, error) {
	raw := ""
	fips, dual := false, false
	for _, src := range c.cfg.ConfigSources {
		if s, ok := src.(interface {
			GetServiceBaseEndpoint(context.Context, string) (string, bool, error)
		}); ok && raw == "" {
			v, found, err := s.GetServiceBaseEndpoint(ctx, c.svc.ID)
			if err != nil {
				return nil, fmt.Errorf("endpoint of %s: %w", c.svc.ID, err)
			}
			if found {
				raw = v
			}
		}
		if s, ok := src.(interface {
			GetUseFIPSEndpoint(context.Context) (aws.FIPSEndpointState, bool, error)
		}); ok {
			if v, found, err := s.GetUseFIPSEndpoint(ctx); err == nil && found {
				fips = v == aws.FIPSEndpointStateEnabled
			}
		}
		if s, ok := src.(interface {
			GetUseDualStackEndpoint(context.Context) (aws.DualStackEndpointState, bool, error)
		}); ok {
			if v, found, err := s.GetUseDualStackEndpoint(ctx); err == nil && found {
				dual = v == aws.DualStackEndpointStateEnabled
			}
		}
	}
	if raw == "" && c.cfg.BaseEndpoint != nil {
		raw = *c.cfg.BaseEndpoint
	}
	if raw == "" {
		if c.cfg.Region == "" {
			return nil, fmt.Errorf("endpoint of %s: no region", c.svc.ID)
		}
		raw = "https://" + regionalHost(c.svc.SigningName, c.cfg.Region, fips, dual)
	}
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("endpoint of %s: %q is not a URL", c.svc.ID, raw)
	}
	if u.Path == "" {
		u.Path = "/"
	}
	return u, nil
}

// regionalHost is the host of a service's endpoint in region: prefix,
// "-fips" when fips, the region, and its partition's DNS suffix (the
// dual-stack one when dual, in the partitions that have one).
func regionalHost(prefix, region string, fips, dual bool) string {
	suffix, dualSuffix := "amazonaws.com", "api.aws"
	for _, p := range []struct{ region, suffix, dual string }{
		{"cn-", "amazonaws.com.cn", "api.amazonwebservices.com.cn"},
		{"us-isob-", "sc2s.sgov.gov", ""},
		{"us-isof-", "csp.hci.ic.gov", ""},
		{"us-iso-", "c2s.ic.gov", ""},
		{"eu-isoe-", "cloud.adc-e.uk", ""},
	} {
		if strings.HasPrefix(region, p.region) {
			suffix, dualSuffix = p.suffix, p.dual
			break
		}
	}
	if fips {
		prefix += "-fips"
	}
	if dual && dualSuffix != "" {
		suffix = dualSuffix
	}
	return prefix + "." + region + "." + suffix
}
