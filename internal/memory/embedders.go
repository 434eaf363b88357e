package memory

import (
	"fmt"
	"log/slog"
	"net/http"
	"sync"

	"github.com/baton-agents/baton/internal/agents"
	"github.com/baton-agents/baton/internal/providers"
	"github.com/baton-agents/baton/internal/secrets"
)

// EmbedderConfig is what the embedders need from the deployment.
type EmbedderConfig struct {
	// OpenAI is the deployment's OpenAI settings (providers.Config.OpenAI:
	// BATON_OPENAI_BASE_URL and the BATON_OPENAI_API_KEY[_SSM|_SECRET_ARN]
	// reference), used by the openai embedders.
	OpenAI providers.HTTPConfig
	// Secrets resolves an API key kept in SSM or Secrets Manager.
	Secrets *secrets.Resolver
	// HTTPClient is shared by the openai embedders; nil uses a new one.
	HTTPClient *http.Client
	// Retry bounds each embedding call (providers.Config.Retry()).
	Retry providers.RetryPolicy
	// InvokeModel calls Bedrock; nil when this process links no Bedrock
	// runtime client, and then a bedrock embedder is an error when built.
	InvokeModel InvokeModel
	Log         *slog.Logger
}

// Embedders builds the embedder an agent declares, once per name, and
// keeps it. It is safe for concurrent use.
type Embedders struct {
	cfg EmbedderConfig

	mu    sync.Mutex
	built map[string]Embedder
}

// NewEmbedders returns the embedders of cfg.
func NewEmbedders(cfg EmbedderConfig) *Embedders {
	cfg.Retry = cfg.Retry.WithDefaults()
	if cfg.OpenAI.BaseURL == "" {
		cfg.OpenAI.BaseURL = providers.DefaultOpenAIBaseURL
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = &http.Client{}
	}
	return &Embedders{cfg: cfg, built: map[string]Embedder{}}
}

// ValidateEmbedder checks an agent's embedder declaration: a known
// provider, dimensions the model takes, and (bedrock) the one model this
// package speaks to. nil is the scripted default.
func ValidateEmbedder(spec *agents.EmbedderSpec) error {
	_, err := resolve(spec)
	return err
}

// resolve fills a declaration's defaults.
func resolve(spec *agents.EmbedderSpec) (agents.EmbedderSpec, error) {
	var s agents.EmbedderSpec
	if spec != nil {
		s = *spec
	}
	if s.Provider == "" {
		s.Provider = agents.EmbedderScripted
	}
	if s.Dimensions < 0 || s.Dimensions > MaxDimensions {
		return s, fmt.Errorf("embedder dimensions must be from 1 to %d, got %d", MaxDimensions, s.Dimensions)
	}
	switch s.Provider {
	case agents.EmbedderScripted:
		s.Model = "" // it has one model
		if s.Dimensions == 0 {
			s.Dimensions = DefaultScriptedDimensions
		}
	case agents.EmbedderOpenAI:
		if s.Model == "" {
			s.Model = DefaultOpenAIModel
		}
	case agents.EmbedderBedrock:
		if s.Model == "" {
			s.Model = TitanV2
		}
		if s.Model != TitanV2 {
			return s, fmt.Errorf("the bedrock embedder speaks to %s only, not %q", TitanV2, s.Model)
		}
		switch s.Dimensions {
		case 0:
			s.Dimensions = DefaultTitanDimensions
		case 256, 512, 1024:
		default:
			return s, fmt.Errorf("%s takes 256, 512 or 1024 dimensions, not %d", TitanV2, s.Dimensions)
		}
	default:
		return s, fmt.Errorf("unknown embedder provider %q (want %s, %s or %s)", s.Provider,
			agents.EmbedderScripted, agents.EmbedderOpenAI, agents.EmbedderBedrock)
	}
	return s, nil
}

// For returns the embedder spec declares (nil: the scripted default).
func (e *Embedders) For(spec *agents.EmbedderSpec) (Embedder, error) {
	s, err := resolve(spec)
	if err != nil {
		return nil, err
	}
	var emb Embedder
	switch s.Provider {
	case agents.EmbedderScripted:
		return Scripted{Dimensions: s.Dimensions}, nil
	case agents.EmbedderOpenAI:
		emb = &OpenAI{model: s.Model, dimensions: s.Dimensions, base: e.cfg.OpenAI, secrets: e.cfg.Secrets,
			client: e.cfg.HTTPClient, retry: e.cfg.Retry, log: e.cfg.Log}
	case agents.EmbedderBedrock:
		if e.cfg.InvokeModel == nil {
			return nil, fmt.Errorf("the bedrock embedder needs Amazon Bedrock, which this process does not link")
		}
		emb = &Titan{invoke: e.cfg.InvokeModel, model: s.Model, dimensions: s.Dimensions, retry: e.cfg.Retry, log: e.cfg.Log}
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if got, ok := e.built[emb.Name()]; ok {
		return got, nil
	}
	e.built[emb.Name()] = emb
	return emb, nil
}
