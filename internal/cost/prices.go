package cost

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"os"
	"slices"
	"strings"

	"github.com/baton-agents/baton/core"
)

// ModelPrice is a model's price in US dollars per million tokens.
// Cache reads and writes default to the input price when not set.
type ModelPrice struct {
	Input      float64  `json:"input"`
	Output     float64  `json:"output"`
	CacheRead  *float64 `json:"cache_read,omitempty"`
	CacheWrite *float64 `json:"cache_write,omitempty"`
}

// AWSPrices are the list prices Baton counts, in US dollars per unit.
type AWSPrices struct {
	DynamoDBWRU    float64 `json:"dynamodb_wru"`
	DynamoDBRRU    float64 `json:"dynamodb_rru"`
	SQSRequest     float64 `json:"sqs_request"`
	LambdaGBSecond float64 `json:"lambda_gb_second"`
	LambdaRequest  float64 `json:"lambda_request"`
}

// USEast1 holds the list prices in us-east-1 (as of 2025): DynamoDB
// on-demand $0.625 per million write and $0.125 per million read
// request units, SQS FIFO $0.50 per million requests (each 64 KB chunk
// a request), Lambda arm64 $0.0000133334 per GB-second and $0.20 per
// million requests. us-east-2 and us-west-2 have the same prices.
var USEast1 = AWSPrices{
	DynamoDBWRU: 0.625 / 1e6, DynamoDBRRU: 0.125 / 1e6, SQSRequest: 0.50 / 1e6,
	LambdaGBSecond: 0.0000133334, LambdaRequest: 0.20 / 1e6,
}

// regions are the built-in regional price lists; another region takes
// us-east-1's unless the prices file sets its own.
var regions = map[string]AWSPrices{"us-east-1": USEast1, "us-east-2": USEast1, "us-west-2": USEast1}

// Split prices counted requests: DynamoDB writes, reads, SQS and Lambda.
func (p AWSPrices) Split(r core.Resources) (writes, reads, sqs, lambda float64) {
	return r.DynamoDBWRU * p.DynamoDBWRU, r.DynamoDBRRU * p.DynamoDBRRU, r.SQSRequests * p.SQSRequest,
		r.LambdaRequests*p.LambdaRequest + r.LambdaGBSeconds*p.LambdaGBSecond
}

// DefaultModels is the built-in model price table (US dollars per
// million tokens, list prices as of 2025). A model not in the table
// (nor in the operator's prices file) is reported unpriced.
var DefaultModels = map[string]ModelPrice{
	"anthropic/claude-sonnet-4-20250514":               {Input: 3, Output: 15, CacheRead: ptr(0.30), CacheWrite: ptr(3.75)},
	"anthropic/claude-opus-4-20250514":                 {Input: 15, Output: 75, CacheRead: ptr(1.50), CacheWrite: ptr(18.75)},
	"anthropic/claude-3-5-haiku-20241022":              {Input: 0.80, Output: 4, CacheRead: ptr(0.08), CacheWrite: ptr(1)},
	"bedrock/anthropic.claude-3-5-haiku-20241022-v1:0": {Input: 0.80, Output: 4, CacheRead: ptr(0.08), CacheWrite: ptr(1)},
	"bedrock/anthropic.claude-sonnet-4-20250514-v1:0":  {Input: 3, Output: 15, CacheRead: ptr(0.30), CacheWrite: ptr(3.75)},
	"openai/gpt-4o":      {Input: 2.50, Output: 10, CacheRead: ptr(1.25)},
	"openai/gpt-4o-mini": {Input: 0.15, Output: 0.60, CacheRead: ptr(0.075)},
}

func ptr(f float64) *float64 { return &f }

// Table is a Pricer: model prices keyed "provider/model" and the AWS
// prices of one region.
type Table struct {
	Models map[string]ModelPrice
	AWS    AWSPrices
}

var _ core.Pricer = (*Table)(nil)

// File is the operator's prices file (BATON_PRICES): model prices keyed
// "provider/model" that add to or replace the built-in ones, and AWS
// prices by region that replace the built-in list for that region.
type File struct {
	Models map[string]ModelPrice `json:"models"`
	AWS    map[string]AWSPrices  `json:"aws"`
}

// NewTable is the price table for region with the operator's file (path
// "" for none) applied.
func NewTable(region, path string) (*Table, error) {
	t := &Table{Models: map[string]ModelPrice{}, AWS: USEast1}
	for k, v := range DefaultModels {
		t.Models[k] = v
	}
	if p, ok := regions[region]; ok {
		t.AWS = p
	}
	if path == "" {
		return t, nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("prices file: %w", err)
	}
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	var f File
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("prices file %s: %w", path, err)
	}
	for _, k := range slices.Sorted(maps.Keys(f.Models)) {
		v := f.Models[k]
		if !strings.Contains(k, "/") {
			return nil, fmt.Errorf("prices file %s: model %q: want provider/model", path, k)
		}
		if bad(v.Input) || bad(v.Output) || (v.CacheRead != nil && bad(*v.CacheRead)) || (v.CacheWrite != nil && bad(*v.CacheWrite)) {
			return nil, fmt.Errorf("prices file %s: model %q: prices must be non-negative numbers", path, k)
		}
		t.Models[k] = v
	}
	if p, ok := f.AWS[region]; ok {
		if bad(p.DynamoDBWRU) || bad(p.DynamoDBRRU) || bad(p.SQSRequest) || bad(p.LambdaGBSecond) || bad(p.LambdaRequest) {
			return nil, fmt.Errorf("prices file %s: aws %q: prices must be non-negative numbers", path, region)
		}
		t.AWS = p
	}
	return t, nil
}

func bad(f float64) bool { return f < 0 || math.IsNaN(f) || math.IsInf(f, 0) }

// ModelUSD prices one call's usage: prompt tokens less the cache reads
// and writes at the input price, cache reads and writes at theirs,
// completion tokens at the output price.
func (t *Table) ModelUSD(provider, model string, usage map[string]any) (float64, bool) {
	p, ok := t.Models[provider+"/"+model]
	if !ok {
		return 0, false
	}
	prompt, completion := core.NumberOf(usage["prompt_tokens"]), core.NumberOf(usage["completion_tokens"])
	cr, cw := core.NumberOf(usage["cache_read_tokens"]), core.NumberOf(usage["cache_write_tokens"])
	read, write := p.Input, p.Input
	if p.CacheRead != nil {
		read = *p.CacheRead
	}
	if p.CacheWrite != nil {
		write = *p.CacheWrite
	}
	usd := (max(prompt-cr-cw, 0)*p.Input + cr*read + cw*write + completion*p.Output) / 1e6
	return usd, true
}

// AWSUSD prices counted AWS requests.
func (t *Table) AWSUSD(r core.Resources) float64 {
	w, rd, s, l := t.AWS.Split(r)
	return w + rd + s + l
}
