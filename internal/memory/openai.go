package memory

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/baton-agents/baton/core"
	"github.com/baton-agents/baton/internal/providers"
	"github.com/baton-agents/baton/internal/secrets"
)

// DefaultOpenAIModel is the OpenAI embedding model an embedder declared
// without one uses.
const DefaultOpenAIModel = "text-embedding-3-small"

// OpenAI embeds through an OpenAI-compatible embeddings endpoint: POST
// {base URL}/embeddings with {"model", "input": [texts], "dimensions"
// (when set)}, authenticated with the deployment's OpenAI API key
// (Bearer; none for a self-hosted server that needs none). It uses the
// model providers' transport: 408, 429 (but insufficient_quota) and 5xx
// responses and network failures are retried with backoff, and the key
// never appears in an error. The key is resolved (from the environment,
// SSM or Secrets Manager) on the first call, not at cold start.
type OpenAI struct {
	model      string
	dimensions int
	base       providers.HTTPConfig
	secrets    *secrets.Resolver
	client     *http.Client
	retry      providers.RetryPolicy
	log        *slog.Logger

	mu       sync.Mutex
	http     *providers.HTTP
	err      error
	failedAt time.Time
}

var _ Embedder = (*OpenAI)(nil)

// Name is "openai:<model>" or "openai:<model>:<dimensions>".
func (o *OpenAI) Name() string {
	if o.dimensions > 0 {
		return fmt.Sprintf("openai:%s:%d", o.model, o.dimensions)
	}
	return "openai:" + o.model
}

// keyRetry is how long a failed key resolution's error is returned
// before the next call tries again.
const keyRetry = 10 * time.Second

// transport builds the HTTP transport on the first call.
func (o *OpenAI) transport(ctx context.Context) (*providers.HTTP, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.http != nil {
		return o.http, nil
	}
	if o.err != nil && time.Since(o.failedAt) < keyRetry {
		return nil, o.err
	}
	key, err := providers.ResolveSecret(ctx, o.base.Key, o.secrets)
	if err == nil {
		h := http.Header{}
		if key != "" {
			h.Set("Authorization", "Bearer "+key)
		}
		cc := providers.ClientConfig{BaseURL: o.base.BaseURL, APIKey: key, HTTPClient: o.client, Retry: o.retry, Log: o.log}
		o.http, err = cc.Transport("openai embeddings", h, "x-request-id")
	}
	if err != nil {
		o.err, o.failedAt = core.Retryable(fmt.Errorf("embedder %s: %w", o.Name(), err)), time.Now()
		return nil, o.err
	}
	o.err = nil
	return o.http, nil
}

type (
	openAIRequest struct {
		Model      string   `json:"model"`
		Input      []string `json:"input"`
		Dimensions int      `json:"dimensions,omitempty"`
	}
	openAIResponse struct {
		Data []struct {
			Index     *int      `json:"index"`
			Embedding []float32 `json:"embedding"`
		} `json:"data"`
	}
)

// Embed POSTs the texts in one request.
func (o *OpenAI) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if len(texts) == 0 {
		return nil, nil
	}
	t, err := o.transport(ctx)
	if err != nil {
		return nil, err
	}
	body, err := json.Marshal(openAIRequest{Model: o.model, Input: texts, Dimensions: o.dimensions})
	if err != nil {
		return nil, err
	}
	resp, err := t.PostJSON(ctx, "/embeddings", body)
	if err != nil {
		return nil, fmt.Errorf("embedder %s: %w", o.Name(), err)
	}
	var out openAIResponse
	if err := json.Unmarshal(resp.Body, &out); err != nil {
		return nil, fmt.Errorf("embedder %s: the response is not an embeddings list: %v", o.Name(), err)
	}
	vecs := make([][]float32, len(texts))
	for i, d := range out.Data {
		at := i
		if d.Index != nil {
			at = *d.Index
		}
		if at < 0 || at >= len(texts) || vecs[at] != nil {
			return nil, fmt.Errorf("embedder %s: the response's embeddings do not match the %d texts sent (index %d)", o.Name(), len(texts), at)
		}
		vecs[at] = d.Embedding
	}
	if len(out.Data) != len(texts) {
		return nil, fmt.Errorf("embedder %s returned %d vectors for %d texts", o.Name(), len(out.Data), len(texts))
	}
	if err := checkVectors(o.Name(), texts, vecs); err != nil {
		return nil, err
	}
	if o.dimensions > 0 && len(vecs[0]) != o.dimensions {
		return nil, fmt.Errorf("embedder %s returned vectors of %d dimensions, not %d", o.Name(), len(vecs[0]), o.dimensions)
	}
	return vecs, nil
}
