package notify

import (
	"context"
	"errors"
	"fmt"

	"github.com/baton-agents/baton/core"
	"github.com/baton-agents/baton/internal/executors"
	"github.com/baton-agents/baton/internal/toolspec"
)

// Webhooks delivers notifications to runs' callbacks: it POSTs the
// notification's detail to the callback's URL through an executors.HTTP
// endpoint, so the request is signed exactly like an http tool call
// (X-Baton-Timestamp, X-Baton-Signature, package toolsig) with the
// secret of the run's agent's callback, and carries the notification's
// event id as its Idempotency-Key. Any 2xx answer, whatever its body, is
// a delivery.
// A callback with a Format (core.Callback) gets the body, and the
// headers, its Format function makes of the detail.
type Webhooks struct {
	remote  *executors.Remote
	signers map[string]toolspec.Executor
	formats map[string]Format
}

// Format makes the body (and extra headers) of a callback of its format
// from a notification's detail and the callback's token.
type Format func(detail []byte, token string) (body []byte, headers map[string]string, err error)

// NewWebhooks returns the sender of the callbacks of the agents in
// signers (agent slug → http endpoint without URL: the callback's secret
// reference and timeout). It resolves every secret now (cold start), so
// a missing one fails here, naming the agent. formats are the callback
// formats besides the detail itself, by name.
func NewWebhooks(ctx context.Context, remote *executors.Remote, signers map[string]toolspec.Executor, formats map[string]Format) (*Webhooks, error) {
	w := &Webhooks{remote: remote, signers: signers, formats: formats}
	for slug, ex := range signers {
		ex.URL = "https://callback.invalid/"
		if err := remote.CheckSecret(ctx, ex); err != nil {
			return nil, fmt.Errorf("agent %s: callback: %w", slug, err)
		}
		if _, err := remote.Endpoint(ctx, "callback of agent "+slug, ex); err != nil {
			return nil, fmt.Errorf("agent %s: callback: %w", slug, err)
		}
	}
	return w, nil
}

// Deliver POSTs n's detail to its callback.
func (w *Webhooks) Deliver(ctx context.Context, n core.Notification) (int, error) {
	c := n.Callback
	ex, ok := w.signers[c.Agent]
	if !ok {
		return 0, fmt.Errorf("agent %s has no callback secret", c.Agent)
	}
	ex.URL = c.URL
	// The secret is resolved once per process; building the endpoint is
	// cheap.
	ep, err := w.remote.Endpoint(ctx, "callback", ex)
	if err != nil {
		return 0, err
	}
	body := n.Detail
	if c.Format != "" {
		f, ok := w.formats[c.Format]
		if !ok {
			return 0, fmt.Errorf("callback format %q is not known here", c.Format)
		}
		var hdr map[string]string
		if body, hdr, err = f(n.Detail, c.Token); err != nil {
			return 0, fmt.Errorf("callback format %s: %w", c.Format, err)
		}
		ctx = executors.WithHeaders(ctx, hdr)
	}
	_, err = ep.Call(ctx, body, c.EventID)
	var f *executors.Failure
	if errors.As(err, &f) {
		if f.Type != executors.ErrTypeHTTPStatus {
			return 200, nil // a 2xx whose body is not JSON, or large
		}
		status, _ := f.Metadata["http_status"].(int)
		return status, err
	}
	if err != nil {
		return 0, err
	}
	return 200, nil
}
