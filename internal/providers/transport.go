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

// Complete runs one model turn of req on h: build encodes the request
// with the wire names of its tools, the body is POSTed to path, and parse
// decodes the response, given the requested model and the same names.
func (h *HTTP) Complete(ctx context.Context, path string, req core.ModelRequest,
	build func(core.ModelRequest, *ToolNames) ([]byte, error),
	parse func(Response, string, *ToolNames) (core.ModelReply, error),
) (core.ModelReply, error) {
	names := NewToolNames(req.Tools)
	body, err := build(req, names)
	if err != nil {
		return core.ModelReply{}, err
	}
	resp, err := h.PostJSON(ctx, path, body)
	if err != nil {
		return core.ModelReply{}, err
	}
	return parse(resp, req.Model.Model, names)
}

// PostJSON POSTs body to BaseURL+path and returns the 2xx response. A
// non-2xx response is an *Error (retried when transient); see
// RetryPolicy.Do for what is returned when retries run out.
func (h *HTTP) PostJSON(ctx context.Context, path string, body []byte) (Response, error) {
	client := h.Client
	if client == nil {
		client = http.DefaultClient
	}
	scrub := h.scrubber()
	url := strings.TrimRight(h.BaseURL, "/") + path
	var out Response
	attempts, err := h.Retry.Do(ctx, h.Log, h.Provider, func(ctx context.Context) error {
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
		req.Header.Set("Accept", "application/json")
		resp, err := client.Do(req)
		if err != nil {
			return &Error{Provider: h.Provider, Transient: true, Err: scrub.ScrubError(err), Message: scrub.Scrub(err.Error())}
		}
		defer resp.Body.Close()
		data, err := io.ReadAll(io.LimitReader(resp.Body, MaxResponseBytes))
		reqID := resp.Header.Get(h.RequestIDHeader)
		if err != nil {
			return &Error{Provider: h.Provider, Status: 0, RequestID: reqID, Transient: true, Err: scrub.ScrubError(err),
				Message: "reading the response: " + scrub.Scrub(err.Error())}
		}
		if resp.StatusCode < 200 || resp.StatusCode > 299 {
			code, msg := ErrorFromBody([]byte(scrub.Scrub(string(data))))
			return &Error{
				Provider: h.Provider, Status: resp.StatusCode, Code: code, Message: msg,
				RequestID: reqID, Transient: Transient(resp.StatusCode, code), RetryAfter: RetryAfter(resp.Header),
			}
		}
		out = Response{Status: resp.StatusCode, Header: resp.Header, Body: data, RequestID: reqID}
		return nil
	})
	out.Attempts = attempts
	return out, err
}
