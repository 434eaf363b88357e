// Package memory is Baton's long-term memory service: the embedders
// (scripted, OpenAI-compatible, Amazon Titan Text Embeddings v2 on
// Bedrock), the ranking of a scope's memories, and Service, which
// implements core.MemoryRecaller (Recall), core.MemoryExtractor
// (Extract) and core.ToolExecutor (the memory/remember, memory/recall
// and memory/forget tools) over a core.MemoryStore.
//
// It is a driven adapter: the composition root builds a Service with the
// deployment's store, model router, embedders (NewEmbedders, which takes
// the Bedrock InvokeModel call as a function, so this package links no
// AWS SDK client) and a lookup of each agent version's memory
// declaration.
//
// Vectors are stored scaled to unit length and quantized to int8
// (Quantize: each component × 127, rounded); a memory is scored against
// a query by the cosine of the two int8 vectors (Cosine: their integer
// dot product over the product of their integer norms), which differs
// from the float cosine by less than 0.01 at 256 dimensions.
//
// Ranking (Ranker, Select): score = 0.85 × similarity + 0.15 × recency, where
// similarity is the cosine above when the memory's vector was made by
// the agent's embedder, and otherwise (a vector of another embedder, or
// none) the lexical overlap of the query's and the memory's words
// (LexicalSimilarity: the cosine of their word sets), so a memory written
// before an embedder change is still found by its words and never
// re-embedded at read time; recency = 0.5^(age / 30 days), age measured
// from the memory's UpdatedAt. With an empty query, similarity is 0 and
// the newest memories come first. The best memories are taken in score
// order until TopK are taken; one whose estimated tokens
// (core.EstimateTokens: a quarter of its characters, rounded up) would
// exceed what is left of MaxTokens is skipped. The budget counts the
// memories' texts, not the framing core.RenderMemories adds around them.
// A recall reads every memory of the scope (one store page per 1,000)
// before it embeds the query, and embeds it only when some memory has a
// vector of the agent's embedder: a user's first run (an empty scope)
// costs no embedding call. docs/performance.md ("Memory recall") has
// its cost at 100, 1,000 and 10,000 memories and where a vector index
// would pay.
//
// Extraction (Extract) reads the scope, shows the model the stored
// memories most related to what the user said (MaxShownMemories, as
// quoted data) with the run's messages, asks it for facts as JSON,
// embeds them, and updates a stored memory instead of adding one when a
// fact names it as the one it replaces, or its normalized text equals
// it, or its vector's cosine is at least DuplicateSimilarity (0.92); it
// writes once per run (the run's
// core.MemoryExtractID as the write's Once key, the ids it adds derived
// from the run), and an erasure of the scope after the run began wins.
package memory
