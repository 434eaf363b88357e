package providers

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"

	"github.com/baton-agents/baton/core"
)

// MaxResponseBytes caps the body read from a provider response.
const MaxResponseBytes = 32 << 20

// HTTP POSTs JSON to one provider with the shared retry policy. Header
// holds the authentication headers; Secrets (the API key) are scrubbed
// from every error and log line. Build it once per cold start.
type HTTP struct {
	// Provider names the provider in errors and logs ("openai").
	Provider string
	// BaseURL is the endpoint prefix; paths are appended to it.
	BaseURL string
	// Header is sent with every request.
	Header http.Header
	// Secrets are scrubbed from error text: put the API key here.
	Secrets []string
	// RequestIDHeader names the response header holding the request id.
	RequestIDHeader string
	Client          *http.Client
	Retry           RetryPolicy
	Log             *slog.Logger
}

// ClientConfig configures a provider that POSTs JSON over HTTP.
type ClientConfig struct {
	// BaseURL is the API root the provider's paths are appended to.
	BaseURL string
	// APIKey is the provider's credential, scrubbed from every error and
	// log line.
	APIKey     string
	HTTPClient *http.Client
	Retry      RetryPolicy
	Log        *slog.Logger
}

// Transport returns the transport of provider on c: it sends header
// with every request and reads the request id of a response from its
// requestIDHeader. BaseURL is required.
func (c ClientConfig) Transport(provider string, header http.Header, requestIDHeader string) (*HTTP, error) {
	if strings.TrimSpace(c.BaseURL) == "" {
		return nil, fmt.Errorf("%s: a base URL is required", provider)
	}
	var secrets []string
	if c.APIKey != "" {
		secrets = append(secrets, c.APIKey)
	}
	return &HTTP{
		Provider: provider, BaseURL: c.BaseURL, Header: header, Secrets: secrets, RequestIDHeader: requestIDHeader,
		Client: c.HTTPClient, Retry: c.Retry.WithDefaults(), Log: c.Log,
	}, nil
}

// Response is a successful (2xx) response.
type Response struct {
	Status    int
	Header    http.Header
	Body      []byte
	RequestID string
	Attempts  int
}

func (h *HTTP) scrubber() Scrubber { return Scrubber(h.Secrets) }

// Complete runs one model turn of req on h with codec: the request is
// encoded with the wire names of its tools and POSTed to path. When ctx
// asks for the call to be streamed (core.StreamsTokens) and codec can
// stream, the streamed form is requested and decoded as it arrives (see
// Stream); otherwise the buffered response is decoded by codec.Parse.
func (h *HTTP) Complete(ctx context.Context, path string, req core.ModelRequest, codec Codec) (core.ModelReply, error) {
	names := NewToolNames(req.Tools)
	stream := codec.Stream != nil && core.StreamsTokens(ctx)
	body, err := codec.Build(req, names, stream)
	if err != nil {
		return core.ModelReply{}, err
	}
	if stream {
		return h.Stream(ctx, path, body, req.Model.Model, names, codec)
	}
	resp, err := h.PostJSON(ctx, path, body)
	if err != nil {
		return core.ModelReply{}, err
	}
	return codec.Parse(resp, req.Model.Model, names)
}

// PostJSON POSTs body to BaseURL+path and returns the 2xx response. A
// non-2xx response is an *Error (retried when transient); see
// RetryPolicy.Do for what is returned when retries run out.
func (h *HTTP) PostJSON(ctx context.Context, path string, body []byte) (Response, error) {
	var out Response
	attempts, err := h.post(ctx, path, body, "application/json", func(_ context.Context, resp *http.Response, reqID string) error {
		data, err := h.readBody(resp, reqID)
		if err != nil {
			return err
		}
		out = Response{Status: resp.StatusCode, Header: resp.Header, Body: data, RequestID: reqID}
		return nil
	})
	out.Attempts = attempts
	return out, err
}

// post POSTs body to BaseURL+path under the retry policy and returns the
// number of attempts. Each attempt that gets a 2xx response hands it to
// read, with the attempt's context and the response's request id, before
// the body is closed; read's error is the attempt's. A non-2xx response
// is an *Error, transient when a retry may succeed.
func (h *HTTP) post(ctx context.Context, path string, body []byte, accept string,
	read func(ctx context.Context, resp *http.Response, reqID string) error,
) (int, error) {
	client := h.Client
	if client == nil {
		client = http.DefaultClient
	}
	scrub := h.scrubber()
	url := strings.TrimRight(h.BaseURL, "/") + path
	return h.Retry.Do(ctx, h.Log, h.Provider, func(ctx context.Context) error {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
		if err != nil {
			return fmt.Errorf("%s: build request: %w", h.Provider, scrub.ScrubError(err))
		}
		for k, vs := range h.Header {
			for _, v := range vs {
				req.Header.Add(k, v)
			}
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", accept)
		resp, err := client.Do(req)
		if err != nil {
			return &Error{Provider: h.Provider, Transient: true, Err: scrub.ScrubError(err), Message: scrub.Scrub(err.Error())}
		}
		defer resp.Body.Close()
		reqID := resp.Header.Get(h.RequestIDHeader)
		if resp.StatusCode < 200 || resp.StatusCode > 299 {
			data, err := h.readBody(resp, reqID)
			if err != nil {
				return err
			}
			code, msg := ErrorFromBody([]byte(scrub.Scrub(string(data))))
			return &Error{
				Provider: h.Provider, Status: resp.StatusCode, Code: code, Message: msg,
				RequestID: reqID, Transient: Transient(resp.StatusCode, code), RetryAfter: RetryAfter(resp.Header),
			}
		}
		return read(ctx, resp, reqID)
	})
}

// readBody reads a response body up to MaxResponseBytes; a failure to
// read it is a transient *Error.
func (h *HTTP) readBody(resp *http.Response, reqID string) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(resp.Body, MaxResponseBytes))
	if err != nil {
		return nil, h.readError(reqID, "reading the response", err)
	}
	return data, nil
}

// readError is a transient *Error for a response whose body failed to
// arrive: what names what was being read.
func (h *HTTP) readError(reqID, what string, err error) error {
	scrub := h.scrubber()
	return &Error{Provider: h.Provider, Status: 0, RequestID: reqID, Transient: true, Err: scrub.ScrubError(err),
		Message: what + ": " + scrub.Scrub(err.Error())}
}
