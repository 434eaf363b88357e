package memory

import (
	"cmp"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/baton-agents/baton/core"
)

// Ranking weights and the recency half-life (see the package
// documentation).
const (
	SimilarityWeight = 0.85
	RecencyWeight    = 0.15
	RecencyHalfLife  = 30 * 24 * time.Hour
)

// Ranker scores memories against one query.
type Ranker struct {
	// Embedder names the embedder Query was made by: only vectors of
	// that embedder are compared with it.
	Embedder string
	// Query is the query's quantized vector; nil when the query is empty.
	Query []int8
	// Words are the query's words (Words), for memories whose vectors
	// cannot be compared.
	Words []string
	Now   time.Time
}

// Scored is a memory (without its vector) and its score.
type Scored struct {
	Memory core.Memory
	Score  float64
	// Similarity is the score's similarity part.
	Similarity float64
}

// Similarity is the similarity of m to the query: the cosine of the
// vectors when m's was made by the query's embedder, else the lexical
// similarity of the words; 0 for an empty query.
func (r *Ranker) Similarity(m core.Memory) float64 {
	if r.Query == nil && len(r.Words) == 0 {
		return 0
	}
	if r.Query != nil && m.Embedder == r.Embedder && len(m.Vector) == len(r.Query) {
		return Cosine(r.Query, m.Vector)
	}
	return LexicalSimilarity(r.Words, Words(m.Text))
}

// Recency is 0.5^(age / RecencyHalfLife) of m's last update (1 for a
// memory updated now or in the future).
func (r *Ranker) Recency(m core.Memory) float64 {
	at := m.UpdatedAt
	if at.IsZero() {
		at = m.CreatedAt
	}
	age := r.Now.Sub(at)
	if age <= 0 {
		return 1
	}
	return math.Exp2(-float64(age) / float64(RecencyHalfLife))
}

// Score is SimilarityWeight × Similarity + RecencyWeight × Recency.
func (r *Ranker) Score(m core.Memory) Scored {
	sim := r.Similarity(m)
	m.Vector = nil
	return Scored{Memory: m, Similarity: sim, Score: SimilarityWeight*sim + RecencyWeight*r.Recency(m)}
}

// Select orders found best first (ties: the newer, then the smaller id)
// and returns the first topK of them (core.DefaultRecallTopK when not
// positive, at most MaxRecallTopK) whose estimated tokens
// (core.EstimateTokens of each text) fit in maxTokens (core.DefaultRecallMaxTokens when not positive): a memory
// that does not fit in what is left is skipped and the next one tried.
func Select(found []Scored, topK, maxTokens int) []Scored {
	if topK <= 0 {
		topK = core.DefaultRecallTopK
	}
	topK = min(topK, MaxRecallTopK)
	if maxTokens <= 0 {
		maxTokens = core.DefaultRecallMaxTokens
	}
	// Sort indexes, not the (large) memories.
	order := make([]int32, len(found))
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortFunc(order, func(i, j int32) int {
		a, b := &found[i], &found[j]
		switch {
		case a.Score != b.Score:
			return cmp.Compare(b.Score, a.Score)
		case !a.Memory.UpdatedAt.Equal(b.Memory.UpdatedAt):
			return b.Memory.UpdatedAt.Compare(a.Memory.UpdatedAt)
		}
		return strings.Compare(a.Memory.ID, b.Memory.ID)
	})
	var out []Scored
	left := maxTokens
	for _, i := range order {
		c := found[i]
		if len(out) == topK {
			break
		}
		if n := core.EstimateTokens(c.Memory.Text); n <= left {
			out = append(out, c)
			left -= n
		}
	}
	return out
}
