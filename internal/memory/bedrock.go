package memory

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"

	"github.com/baton-agents/baton/internal/agents"
	"github.com/baton-agents/baton/internal/providers"
)

// TitanV2 is the model id of Amazon Titan Text Embeddings v2.
const TitanV2 = agents.TitanV2

// DefaultTitanDimensions is Titan v2's default vector size here (it
// takes 256, 512 or 1024).
const DefaultTitanDimensions = 256

// InvokeModel calls Bedrock's InvokeModel with a JSON body
// (application/json in and out) and returns the response body. The
// composition root supplies it from the Bedrock runtime client, which
// only the functions that run steps link. An error that a retry may fix
// should be (or wrap) a *providers.Error marked Transient: the embedder
// retries those under its policy and returns any other error as is.
type InvokeModel func(ctx context.Context, modelID string, body []byte) ([]byte, error)

// Titan embeds with Amazon Titan Text Embeddings v2 on Bedrock: one
// InvokeModel call per text, body {"inputText", "dimensions",
// "normalize": true}, reading "embedding" from the response.
type Titan struct {
	invoke     InvokeModel
	model      string
	dimensions int
	retry      providers.RetryPolicy
	log        *slog.Logger
}

var _ Embedder = (*Titan)(nil)

// Name is "bedrock:<model>:<dimensions>", such as
// "bedrock:amazon.titan-embed-text-v2:0:256".
func (t *Titan) Name() string { return fmt.Sprintf("bedrock:%s:%d", t.model, t.dimensions) }

type (
	titanRequest struct {
		InputText  string `json:"inputText"`
		Dimensions int    `json:"dimensions"`
		Normalize  bool   `json:"normalize"`
	}
	titanResponse struct {
		Embedding []float32 `json:"embedding"`
	}
)

// Embed calls InvokeModel once per text, in order.
func (t *Titan) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	vecs := make([][]float32, len(texts))
	for i, text := range texts {
		body, err := json.Marshal(titanRequest{InputText: text, Dimensions: t.dimensions, Normalize: true})
		if err != nil {
			return nil, err
		}
		var out []byte
		if _, err := t.retry.Do(ctx, t.log, "bedrock embeddings", func(ctx context.Context) error {
			var err error
			out, err = t.invoke(ctx, t.model, body)
			return err
		}); err != nil {
			return nil, fmt.Errorf("embedder %s: %w", t.Name(), err)
		}
		var r titanResponse
		if err := json.Unmarshal(out, &r); err != nil {
			return nil, fmt.Errorf("embedder %s: the response is not a Titan embedding: %v", t.Name(), err)
		}
		if len(r.Embedding) != t.dimensions {
			return nil, fmt.Errorf("embedder %s returned a vector of %d dimensions, not %d", t.Name(), len(r.Embedding), t.dimensions)
		}
		vecs[i] = r.Embedding
	}
	if err := checkVectors(t.Name(), texts, vecs); err != nil {
		return nil, err
	}
	return vecs, nil
}
