package memory

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/baton-agents/baton/internal/agents"
	"github.com/baton-agents/baton/internal/providers"
)

func embedOne(t *testing.T, e Embedder, text string) []float32 {
	t.Helper()
	v, err := e.Embed(context.Background(), []string{text})
	if err != nil {
		t.Fatal(err)
	}
	return v[0]
}

func floatCosine(a, b []float32) float64 {
	var dot, na, nb float64
	for i := range a {
		dot += float64(a[i]) * float64(b[i])
		na += float64(a[i]) * float64(a[i])
		nb += float64(b[i]) * float64(b[i])
	}
	return dot / math.Sqrt(na*nb)
}

func TestScriptedDeterministicUnit(t *testing.T) {
	e := Scripted{}
	if e.Name() != "scripted:words:256" || (Scripted{Dimensions: 64}).Name() != "scripted:words:64" {
		t.Fatalf("names: %s", e.Name())
	}
	a := embedOne(t, e, "The user prefers green tea in the morning.")
	b := embedOne(t, Scripted{}, "The user prefers green tea in the morning.")
	if !slices.Equal(a, b) || len(a) != 256 {
		t.Fatalf("not deterministic or wrong size: %d", len(a))
	}
	var norm float64
	for _, x := range a {
		norm += float64(x) * float64(x)
	}
	if math.Abs(norm-1) > 1e-5 {
		t.Fatalf("norm² %v, want 1", norm)
	}
	if z := embedOne(t, e, "the, of and a!"); slices.ContainsFunc(z, func(x float32) bool { return x != 0 }) {
		t.Fatalf("a text of stop words only should embed to zero: %v", z[:8])
	}
	if Quantize(embedOne(t, e, "")) != nil {
		t.Fatal("the zero vector should quantize to nil")
	}
}

func TestScriptedSimilarity(t *testing.T) {
	e := Scripted{}
	q := Quantize(embedOne(t, e, "What tea does the user like?"))
	near := Quantize(embedOne(t, e, "The user likes green tea."))
	far := Quantize(embedOne(t, e, "The user's flight to Lisbon leaves on Monday."))
	if sn, sf := Cosine(q, near), Cosine(q, far); sn <= sf || sn < 0.2 {
		t.Fatalf("near %v should beat far %v", sn, sf)
	}
	same := Quantize(embedOne(t, e, "The user likes green tea!"))
	if c := Cosine(near, same); c < 0.99 {
		t.Fatalf("punctuation and case should not matter: %v", c)
	}
}

func TestQuantizedCosineTracksFloat(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 200 {
		a, b := make([]float32, 256), make([]float32, 256)
		for i := range a {
			a[i] = float32(r.NormFloat64())
			b[i] = a[i]*0.6 + float32(r.NormFloat64())*0.8
		}
		got, want := Cosine(Quantize(a), Quantize(b)), floatCosine(a, b)
		if math.Abs(got-want) > 0.01 {
			t.Fatalf("int8 cosine %v, float %v", got, want)
		}
	}
	if Cosine([]int8{1, 2}, []int8{1}) != 0 || Cosine(nil, nil) != 0 || Cosine([]int8{0, 0}, []int8{1, 1}) != 0 {
		t.Fatal("mismatched, empty or zero vectors should score 0")
	}
	if q := Quantize([]float32{3, 4}); !slices.Equal(q, []int8{76, 102}) {
		t.Fatalf("Quantize scales to unit length × 127: %v", q)
	}
}

func TestWordsAndLexical(t *testing.T) {
	if got := Words("The user's favourite colour is BLUE, not red."); !slices.Equal(got, []string{"user", "favourite", "colour", "blue", "red"}) {
		t.Fatalf("Words: %q", got)
	}
	if s := LexicalSimilarity(Words("blue colour"), Words("favourite colour is blue")); math.Abs(s-2/math.Sqrt(6)) > 1e-9 {
		t.Fatalf("lexical %v", s)
	}
	if LexicalSimilarity(nil, Words("x")) != 0 {
		t.Fatal("empty side should be 0")
	}
}

func TestValidateEmbedder(t *testing.T) {
	for _, tc := range []struct {
		spec *agents.EmbedderSpec
		ok   bool
	}{
		{nil, true},
		{&agents.EmbedderSpec{Provider: "scripted", Dimensions: 32}, true},
		{&agents.EmbedderSpec{Provider: "scripted", Model: "ignored"}, true},
		{&agents.EmbedderSpec{Provider: "openai", Model: "text-embedding-3-large", Dimensions: 1024}, true},
		{&agents.EmbedderSpec{Provider: "bedrock"}, true},
		{&agents.EmbedderSpec{Provider: "bedrock", Dimensions: 512}, true},
		{&agents.EmbedderSpec{Provider: "bedrock", Dimensions: 300}, false},
		{&agents.EmbedderSpec{Provider: "bedrock", Model: "cohere.embed-english-v3"}, false},
		{&agents.EmbedderSpec{Provider: "vertex"}, false},
		{&agents.EmbedderSpec{Provider: "openai", Dimensions: -1}, false},
		{&agents.EmbedderSpec{Provider: "openai", Dimensions: MaxDimensions + 1}, false},
		{&agents.EmbedderSpec{Provider: "openai", Dimensions: MaxDimensions}, true},
		{&agents.EmbedderSpec{Provider: "bedrock", Dimensions: 1024}, true},
	} {
		if err := ValidateEmbedder(tc.spec); (err == nil) != tc.ok {
			t.Errorf("%+v: err %v, want ok %v", tc.spec, err, tc.ok)
		}
	}
}

func TestEmbeddersFor(t *testing.T) {
	es := NewEmbedders(EmbedderConfig{})
	e, err := es.For(nil)
	if err != nil || e.Name() != "scripted:words:256" {
		t.Fatalf("default: %v %v", e, err)
	}
	if _, err := es.For(&agents.EmbedderSpec{Provider: "bedrock"}); err == nil {
		t.Fatal("bedrock without InvokeModel should be an error")
	}
	o1, _ := es.For(&agents.EmbedderSpec{Provider: "openai", Dimensions: 256})
	o2, _ := es.For(&agents.EmbedderSpec{Provider: "openai", Model: DefaultOpenAIModel, Dimensions: 256})
	if o1 != o2 || o1.Name() != "openai:text-embedding-3-small:256" {
		t.Fatalf("openai embedders should be built once per name: %v %v", o1.Name(), o2.Name())
	}
	if base := o1.(*OpenAI).base.BaseURL; base != providers.DefaultOpenAIBaseURL {
		t.Fatalf("no base URL configured: %q, want OpenAI's", base)
	}
	es = NewEmbedders(EmbedderConfig{InvokeModel: func(context.Context, string, []byte) ([]byte, error) { return nil, nil }})
	b, err := es.For(&agents.EmbedderSpec{Provider: "bedrock"})
	if err != nil || b.Name() != "bedrock:amazon.titan-embed-text-v2:0:256" {
		t.Fatalf("bedrock: %v %v", b, err)
	}
}
