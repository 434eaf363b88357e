package lambdastream

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/aws/aws-lambda-go/events"
)

// ContentTypeHTTPIntegration is the content type of a response streamed
// to API Gateway (or a function URL): a JSON prelude, eight NUL bytes,
// the body.
const ContentTypeHTTPIntegration = "application/vnd.awslambda.http-integration-response"

// delimiter ends the prelude of a streamed HTTP integration response.
const delimiter = "\x00\x00\x00\x00\x00\x00\x00\x00"

// Defaults of APIGateway.
const (
	// DefaultBufferedTimeout is API Gateway's integration timeout for a
	// buffered Lambda proxy integration: nobody waits for an answer after
	// it.
	DefaultBufferedTimeout = 29 * time.Second
	// DefaultStreamMargin ends a stream this long before the invocation's
	// deadline.
	DefaultStreamMargin = 10 * time.Second
)

// StreamBody writes a streamed response body (httpapi.StreamBody).
type StreamBody = func(ctx context.Context, w io.Writer, flush func()) error

// APIGateway serves API Gateway REST proxy events: the routes IsStream
// matches are streamed in API Gateway's format, every other route is
// answered with the ordinary proxy JSON response.
type APIGateway struct {
	// Handle answers a buffered route.
	Handle func(context.Context, events.APIGatewayProxyRequest) (events.APIGatewayProxyResponse, error)
	// Stream answers a streamed route: a complete (error) response and a
	// nil body, or the response's status and headers and its body.
	Stream func(context.Context, events.APIGatewayProxyRequest) (events.APIGatewayProxyResponse, StreamBody)
	// IsStream reports whether a request is for a streamed route; nil
	// streams nothing (Handle serves every route).
	IsStream func(method, path string) bool
	// RoutePath is the path a request is routed on (nil: its path); the
	// API's router leaves out a custom domain's base path.
	RoutePath func(events.APIGatewayProxyRequest) string
	// BufferedTimeout bounds a buffered invocation (default
	// DefaultBufferedTimeout): the function's timeout is the stream's, far
	// longer than anyone waits for a buffered answer.
	BufferedTimeout time.Duration
	// StreamMargin ends a stream that long before the invocation's deadline
	// (default DefaultStreamMargin), so that it ends cleanly — the client
	// reconnects with Last-Event-ID — instead of being cut off by the
	// function's timeout.
	StreamMargin time.Duration
}

// Invoke is the Handler of the API Lambda.
func (g APIGateway) Invoke(ctx context.Context, payload []byte) (Response, error) {
	var req events.APIGatewayProxyRequest
	if err := json.Unmarshal(payload, &req); err != nil {
		return Response{}, fmt.Errorf("not an API Gateway proxy event: %w", err)
	}
	if strings.TrimSpace(req.HTTPMethod) == "" || strings.TrimSpace(req.Path) == "" {
		return Response{}, fmt.Errorf("not an API Gateway REST proxy event: httpMethod and path are required")
	}
	path := req.Path
	if g.RoutePath != nil {
		path = g.RoutePath(req)
	}
	if g.IsStream != nil && g.IsStream(req.HTTPMethod, path) {
		return g.stream(ctx, req), nil
	}
	timeout := g.BufferedTimeout
	if timeout <= 0 {
		timeout = DefaultBufferedTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	resp, err := g.Handle(ctx, req)
	if err != nil {
		return Response{}, err
	}
	b, err := marshal(resp)
	if err != nil {
		return Response{}, err
	}
	return Response{Payload: b}, nil
}

// stream answers a streamed route: the prelude with the status and
// headers, the delimiter, then the body — the error body of a failed
// request, or the stream, which ends StreamMargin before the deadline.
func (g APIGateway) stream(ctx context.Context, req events.APIGatewayProxyRequest) Response {
	resp, body := g.Stream(ctx, req)
	if id := req.RequestContext.RequestID; id != "" {
		if resp.Headers == nil {
			resp.Headers = map[string]string{}
		}
		if _, ok := resp.Headers["X-Request-Id"]; !ok {
			resp.Headers["X-Request-Id"] = id
		}
	}
	margin := g.StreamMargin
	if margin <= 0 {
		margin = DefaultStreamMargin
	}
	return Response{ContentType: ContentTypeHTTPIntegration, Stream: func(ctx context.Context, w io.Writer, flush func()) error {
		prelude, err := streamPrelude(resp)
		if err != nil {
			return err
		}
		if _, err := w.Write(prelude); err != nil {
			return nil // the client went away
		}
		flush() // the status and headers at once
		if body == nil {
			b, err := bodyBytes(resp)
			if err != nil {
				return err
			}
			_, _ = w.Write(b)
			flush()
			return nil
		}
		if dl, ok := ctx.Deadline(); ok {
			var cancel context.CancelFunc
			ctx, cancel = context.WithDeadline(ctx, dl.Add(-margin))
			defer cancel()
		}
		return body(ctx, w, flush)
	}}
}

// streamPrelude is the start of a response streamed through API Gateway:
// the JSON metadata (statusCode, headers, multiValueHeaders; API Gateway
// also reads cookies, which Baton never sets) and the delimiter.
func streamPrelude(resp events.APIGatewayProxyResponse) ([]byte, error) {
	b, err := json.Marshal(struct {
		StatusCode        int                 `json:"statusCode"`
		Headers           map[string]string   `json:"headers,omitempty"`
		MultiValueHeaders map[string][]string `json:"multiValueHeaders,omitempty"`
	}{resp.StatusCode, resp.Headers, resp.MultiValueHeaders})
	if err != nil {
		return nil, fmt.Errorf("stream prelude: %w", err)
	}
	return append(b, delimiter...), nil
}

func bodyBytes(resp events.APIGatewayProxyResponse) ([]byte, error) {
	if !resp.IsBase64Encoded {
		return []byte(resp.Body), nil
	}
	b, err := base64.StdEncoding.DecodeString(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("response body: %w", err)
	}
	return b, nil
}

// marshal encodes a proxy response as aws-lambda-go does: without HTML
// escaping and without a trailing newline.
func marshal(resp events.APIGatewayProxyResponse) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(resp); err != nil {
		return nil, fmt.Errorf("proxy response: %w", err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}
