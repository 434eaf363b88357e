package memory

import (
	"context"
	"fmt"
	"hash/fnv"
	"math"
	"strings"
	"unicode"
)

// Embedder turns texts into vectors. Name identifies the model and the
// dimensions (core.Memory.Embedder): vectors are compared only when
// their names are equal.
type Embedder interface {
	Name() string
	// Embed returns one vector per text, in order, each of unit length.
	Embed(ctx context.Context, texts []string) ([][]float32, error)
}

// DefaultScriptedDimensions is the scripted embedder's default size.
const DefaultScriptedDimensions = 256

// MaxDimensions caps an embedder's dimensions.
const MaxDimensions = 4096

// Scripted is the deterministic embedder of tests and baton dev: each
// lowercased word of a text (stop words left out) and each pair of
// adjacent words is hashed (FNV-1a) to a signed component of a
// Dimensions-long vector (words weigh 1, pairs 0.5), which is then
// scaled to unit length. Texts sharing words are near; it knows no
// synonyms. A text without words embeds to the zero vector.
type Scripted struct {
	Dimensions int
}

var _ Embedder = Scripted{}

func (s Scripted) dims() int {
	if s.Dimensions <= 0 {
		return DefaultScriptedDimensions
	}
	return s.Dimensions
}

// Name is "scripted:words:<dimensions>".
func (s Scripted) Name() string { return fmt.Sprintf("scripted:words:%d", s.dims()) }

// Embed hashes each text's words; it never fails.
func (s Scripted) Embed(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		out[i] = s.vector(t)
	}
	return out, nil
}

func (s Scripted) vector(text string) []float32 {
	n := s.dims()
	v := make([]float32, n)
	add := func(feature string, w float32) {
		h := fnv.New64a()
		h.Write([]byte(feature))
		sum := h.Sum64()
		if sum>>63 == 1 {
			w = -w
		}
		v[sum%uint64(n)] += w
	}
	ws := Words(text)
	for i, w := range ws {
		add(w, 1)
		if i > 0 {
			add(ws[i-1]+" "+w, 0.5)
		}
	}
	normalize(v)
	return v
}

// stopWords are left out of the scripted embedding and of the lexical
// similarity: they say nothing of what a text is about.
var stopWords = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`a an the and or but of to in on at for with by from as is are was were be been
		it its this that these those i me my we our you your he she they them his her their do does did
		have has had not no so if then than there here what which who whom how when where why can could
		would should will shall may might must just about into over also very too s t`) {
		stopWords[w] = true
	}
}

// Words splits text into its lowercased words (letters and digits; an
// apostrophe's tail, as in "user's", is dropped), stop words left out.
func Words(text string) []string {
	var out []string
	for _, f := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '\''
	}) {
		if i := strings.IndexByte(f, '\''); i >= 0 {
			f = f[:i]
		}
		if f != "" && !stopWords[f] {
			out = append(out, f)
		}
	}
	return out
}

// LexicalSimilarity is the cosine of the word sets of two texts (Words):
// shared words over the geometric mean of their sizes, in [0, 1].
func LexicalSimilarity(a, b []string) float64 {
	if len(a) == 0 || len(b) == 0 {
		return 0
	}
	set := make(map[string]bool, len(a))
	for _, w := range a {
		set[w] = true
	}
	seen := make(map[string]bool, len(b))
	shared := 0
	for _, w := range b {
		if set[w] && !seen[w] {
			shared++
		}
		seen[w] = true
	}
	return float64(shared) / math.Sqrt(float64(len(set))*float64(len(seen)))
}

// normalize scales v to unit length in place (a zero vector stays zero)
// and reports whether it was non-zero.
func normalize(v []float32) bool {
	var sum float64
	for _, x := range v {
		sum += float64(x) * float64(x)
	}
	if sum == 0 || math.IsNaN(sum) || math.IsInf(sum, 0) {
		return false
	}
	inv := 1 / math.Sqrt(sum)
	for i, x := range v {
		v[i] = float32(float64(x) * inv)
	}
	return true
}

// Quantize scales v to unit length and stores each component × 127,
// rounded, as an int8: the stored form of a memory's vector. A zero
// vector quantizes to nil.
func Quantize(v []float32) []int8 {
	u := append([]float32(nil), v...)
	if !normalize(u) {
		return nil
	}
	q := make([]int8, len(u))
	for i, x := range u {
		q[i] = int8(max(-127, min(127, math.Round(float64(x)*127))))
	}
	return q
}

// Cosine is the cosine of two int8 vectors: their integer dot product
// over the product of their integer norms. Vectors of different lengths,
// or a zero vector, score 0.
func Cosine(a, b []int8) float64 {
	if len(a) != len(b) || len(a) == 0 {
		return 0
	}
	var dot, na, nb int64
	b = b[:len(a)]
	for i, x := range a {
		y := int64(b[i])
		dot += int64(x) * y
		na += int64(x) * int64(x)
		nb += y * y
	}
	if na == 0 || nb == 0 {
		return 0
	}
	return float64(dot) / math.Sqrt(float64(na)*float64(nb))
}

// checkVectors verifies that an embedder returned one finite, non-empty
// vector per text, all of one length, and scales each to unit length.
func checkVectors(name string, texts []string, vecs [][]float32) error {
	if len(vecs) != len(texts) {
		return fmt.Errorf("embedder %s returned %d vectors for %d texts", name, len(vecs), len(texts))
	}
	for i, v := range vecs {
		if len(v) == 0 {
			return fmt.Errorf("embedder %s returned an empty vector for text %d", name, i)
		}
		if len(v) != len(vecs[0]) {
			return fmt.Errorf("embedder %s returned vectors of %d and %d dimensions", name, len(vecs[0]), len(v))
		}
		for _, x := range v {
			if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
				return fmt.Errorf("embedder %s returned a vector that is not finite for text %d", name, i)
			}
		}
		normalize(v)
	}
	return nil
}
