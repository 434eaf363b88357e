package executors

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"

	"github.com/baton-agents/baton/core"
	"github.com/baton-agents/baton/toolsig"
)

// HTTPConfig configures an http tool executor. URL and Secret are
// required; the rest have defaults.
type HTTPConfig struct {
	// URL is the operator-set endpoint, http or https.
	URL string
	// Secret signs every request (X-Baton-Signature). It is resolved at
	// cold start and never appears in errors or results.
	Secret []byte
	// Timeout bounds one call, response included; zero means
	// DefaultTimeout.
	Timeout time.Duration
	// MaxResponseBytes caps the response body; zero means
	// DefaultMaxResponseBytes.
	MaxResponseBytes int64
	// Client sends the requests; nil means a client on
	// http.DefaultTransport. Redirects are never followed.
	Client *http.Client
	// Now is the signing clock; nil means time.Now.
	Now func() time.Time
}

// HTTP executes a server tool by POSTing the call to an endpoint: the
// body is {"tool_name","tool_call_id","run_id","session_id","parameters"},
// with the headers Idempotency-Key (<run_id>:<tool_call_id>),
// X-Baton-Timestamp and X-Baton-Signature (see package toolsig).
//
// A 2xx JSON response is the tool's output (an object with a boolean
// "success" is a result envelope). A non-2xx status, an oversized response
// or a 2xx body that is not JSON is a failed result with error_type
// http_status, response_too_large or invalid_response. A transport error
// or a timeout is an error (an executor_exception result).
type HTTP struct {
	tool    string
	url     string
	display string // the URL without user info, query or fragment
	secret  []byte
	limits
	client *http.Client
	now    func() time.Time
}

var _ core.ToolExecutor = (*HTTP)(nil)

// NewHTTP validates c and returns the executor of tool.
func NewHTTP(tool string, c HTTPConfig) (*HTTP, error) {
	u, err := url.Parse(c.URL)
	if err != nil {
		return nil, fmt.Errorf("http executor: url is not a valid URL")
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("http executor: url must be http or https, got scheme %q", u.Scheme)
	}
	if u.Host == "" {
		return nil, fmt.Errorf("http executor: url has no host")
	}
	if len(c.Secret) == 0 {
		return nil, fmt.Errorf("http executor: a signing secret is required")
	}
	h := &HTTP{tool: tool, url: u.String(), display: (&url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path}).String(),
		secret: append([]byte(nil), c.Secret...), limits: newLimits(c.Timeout, c.MaxResponseBytes), now: c.Now}
	if h.now == nil {
		h.now = time.Now
	}
	client := http.Client{}
	if c.Client != nil {
		client = *c.Client
	}
	client.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	h.client = &client
	return h, nil
}

// Execute POSTs the signed call and reads the response.
func (h *HTTP) Execute(ctx context.Context, call core.ToolCall) (any, error) {
	return execute(ctx, h, call, false)
}

// headersKey carries extra request headers (WithHeaders).
type headersKey struct{}

// WithHeaders returns ctx whose HTTP calls also send headers (a
// callback's A2A notification token). They are not signed.
func WithHeaders(ctx context.Context, headers map[string]string) context.Context {
	return context.WithValue(ctx, headersKey{}, headers)
}

// Call POSTs body, signed, with the Idempotency-Key header when key is
// set (and the headers of WithHeaders), and returns the 2xx response's
// JSON.
func (h *HTTP) Call(ctx context.Context, body []byte, key string) (json.RawMessage, error) {
	callCtx, cancel := context.WithTimeout(ctx, h.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(callCtx, http.MethodPost, h.url, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("POST %s: %w", h.display, err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", "baton-http-executor/1")
	if key != "" {
		req.Header.Set(toolsig.HeaderIdempotencyKey, key)
	}
	extra, _ := ctx.Value(headersKey{}).(map[string]string)
	for k, v := range extra {
		req.Header.Set(k, v)
	}
	toolsig.SignRequest(req.Header, h.secret, h.now(), body)

	resp, err := h.client.Do(req)
	if err != nil {
		return nil, h.transportError(ctx, callCtx, err)
	}
	defer resp.Body.Close()
	tooLarge := resp.ContentLength > h.max
	var b []byte
	if !tooLarge || resp.StatusCode < 200 || resp.StatusCode > 299 {
		b, err = io.ReadAll(io.LimitReader(resp.Body, h.max+1))
		if err != nil {
			return nil, h.transportError(ctx, callCtx, err)
		}
		tooLarge = tooLarge || int64(len(b)) > h.max
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		msg := fmt.Sprintf("tool endpoint %s returned HTTP %s", h.display, resp.Status)
		if ex := excerpt(b, h.secret); ex != "" {
			msg += ": " + ex
		}
		return nil, &Failure{Type: ErrTypeHTTPStatus, Message: msg, Metadata: map[string]any{"http_status": resp.StatusCode}}
	}
	if tooLarge {
		return nil, &Failure{Type: ErrTypeResponseTooLarge, Message: fmt.Sprintf("tool endpoint %s returned a response larger than the %d-byte limit", h.display, h.max)}
	}
	if !validJSON(b) {
		return nil, &Failure{Type: ErrTypeInvalidResponse, Message: fmt.Sprintf("tool endpoint %s returned HTTP %d with a body that is not JSON: %s", h.display, resp.StatusCode, excerpt(b, h.secret))}
	}
	return b, nil
}

// transportError names the failure without the URL's query or user info
// (they may hold credentials) and says when the call's own timeout fired.
func (h *HTTP) transportError(parent, callCtx context.Context, err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	if timedOut(parent, callCtx) {
		return fmt.Errorf("POST %s timed out after %s: %w", h.display, h.timeout, context.DeadlineExceeded)
	}
	return fmt.Errorf("POST %s: %w", h.display, err)
}
