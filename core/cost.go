package core

import (
	"context"
	"math"
	"slices"
	"sync"
)

// BudgetCostUSD is the spend cap: the run's priced cost (its model calls
// at the price table's rates plus the counted AWS requests of its steps)
// in US dollars. Its ceiling is RunConfig.CostBudgetUSD.
const BudgetCostUSD = "cost_usd"

// Resources counts the AWS requests of a run's steps, the quantities AWS
// bills: DynamoDB on-demand write and read request units, SQS requests
// (64 KB chunks), Lambda invocations and GB-seconds.
type Resources struct {
	DynamoDBWRU     float64 `json:"dynamodb_wru"`
	DynamoDBRRU     float64 `json:"dynamodb_rru"`
	SQSRequests     float64 `json:"sqs_requests"`
	LambdaRequests  float64 `json:"lambda_requests"`
	LambdaGBSeconds float64 `json:"lambda_gb_seconds"`
}

// Add returns the sum of r and o.
func (r Resources) Add(o Resources) Resources {
	return Resources{
		DynamoDBWRU: r.DynamoDBWRU + o.DynamoDBWRU, DynamoDBRRU: r.DynamoDBRRU + o.DynamoDBRRU,
		SQSRequests: r.SQSRequests + o.SQSRequests, LambdaRequests: r.LambdaRequests + o.LambdaRequests,
		LambdaGBSeconds: r.LambdaGBSeconds + o.LambdaGBSeconds,
	}
}

// Sub is r less o, field by field.
func (r Resources) Sub(o Resources) Resources {
	return Resources{
		DynamoDBWRU: r.DynamoDBWRU - o.DynamoDBWRU, DynamoDBRRU: r.DynamoDBRRU - o.DynamoDBRRU,
		SQSRequests: r.SQSRequests - o.SQSRequests, LambdaRequests: r.LambdaRequests - o.LambdaRequests,
		LambdaGBSeconds: r.LambdaGBSeconds - o.LambdaGBSeconds,
	}
}

// IsZero reports whether nothing was counted.
func (r Resources) IsZero() bool { return r == Resources{} }

// Pricer prices a run's usage. ModelUSD prices one model call's usage
// (prompt, completion and cache tokens) and reports ok false when the
// table has no price for the provider and model: such a call is
// reported unpriced, never guessed. AWSUSD prices counted AWS requests
// at the deployment region's list prices.
type Pricer interface {
	ModelUSD(provider, model string, usage map[string]any) (usd float64, ok bool)
	AWSUSD(r Resources) float64
}

// RunCost is what a run cost so far: result.cost in the run view and
// cost in the envelope's request_metadata.
type RunCost struct {
	Currency string  `json:"currency"`
	TotalUSD float64 `json:"total_usd"`
	ModelUSD float64 `json:"model_usd"`
	AWSUSD   float64 `json:"aws_usd"`
	// Unpriced names the provider/model pairs whose calls the price
	// table does not price; their tokens count nothing.
	Unpriced []string `json:"unpriced_models,omitempty"`
	// AWS is the counted requests AWSUSD prices.
	AWS Resources `json:"aws"`
}

// addUnpriced adds a provider/model pair to Unpriced, kept sorted and
// without repeats.
func (c *RunCost) addUnpriced(name string) {
	if i, found := slices.BinarySearch(c.Unpriced, name); !found {
		c.Unpriced = slices.Insert(c.Unpriced, i, name)
	}
}

func (c *RunCost) clone() *RunCost {
	if c == nil {
		return nil
	}
	cp := *c
	cp.Unpriced = append([]string(nil), c.Unpriced...)
	return &cp
}

// roundUSD keeps a dollar figure to a billionth of a dollar, so sums of
// float prices compare exactly with hand-computed figures.
func roundUSD(f float64) float64 { return math.Round(f*1e9) / 1e9 }

func (c *RunCost) total(p Pricer) {
	c.AWSUSD = roundUSD(p.AWSUSD(c.AWS))
	c.ModelUSD = roundUSD(c.ModelUSD)
	c.TotalUSD = roundUSD(c.ModelUSD + c.AWSUSD)
}

// Meter accumulates the AWS requests of one step (or one API request);
// the AWS clients' middleware adds to the meter of the call's context.
// It is safe for concurrent use.
type Meter struct {
	mu sync.Mutex
	r  Resources
}

// Add counts r.
func (m *Meter) Add(r Resources) {
	m.mu.Lock()
	m.r = m.r.Add(r)
	m.mu.Unlock()
}

// Total is what was counted so far.
func (m *Meter) Total() Resources {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.r
}

type meterKey struct{}

// WithMeter returns ctx carrying m.
func WithMeter(ctx context.Context, m *Meter) context.Context {
	return context.WithValue(ctx, meterKey{}, m)
}

// MeterFrom returns the meter of ctx (nil: none).
func MeterFrom(ctx context.Context) *Meter {
	m, _ := ctx.Value(meterKey{}).(*Meter)
	return m
}

type spentKey struct{}

// WithSpent returns ctx telling Apply that the input's step counted r of
// AWS requests so far: Apply adds them to the run's cost before it
// checks the cost_usd budget.
func WithSpent(ctx context.Context, r Resources) context.Context {
	return context.WithValue(ctx, spentKey{}, r)
}

// countSpent adds the AWS requests of ctx to the run's cost.
func (t *transition) countSpent(ctx context.Context) {
	r, _ := ctx.Value(spentKey{}).(Resources)
	if t.st.Cost == nil || t.m.Pricer == nil || r.IsZero() {
		return
	}
	t.st.Cost.AWS = t.st.Cost.AWS.Add(r)
	t.st.Cost.total(t.m.Pricer)
	t.costBudgetCurrent()
}

// countModelCost prices one model call's usage.
func (t *transition) countModelCost(usage map[string]any) {
	s := t.st
	if s.Cost == nil || t.m.Pricer == nil || len(usage) == 0 {
		return
	}
	usd, ok := t.m.Pricer.ModelUSD(s.Config.Model.Provider, s.Config.Model.Model, usage)
	if ok {
		s.Cost.ModelUSD += usd
	} else {
		s.Cost.addUnpriced(s.Config.Model.Provider + "/" + s.Config.Model.Model)
	}
	s.Cost.total(t.m.Pricer)
	t.costBudgetCurrent()
}

func (t *transition) costBudgetCurrent() {
	if b := t.st.budget(BudgetCostUSD); b != nil && t.st.Cost != nil {
		b.CurrentUSD = t.st.Cost.TotalUSD
	}
}

// costExceeded returns the cost_usd budget when the run's cost reached
// it.
func (t *transition) costExceeded() *BudgetState {
	if b := t.st.budget(BudgetCostUSD); b != nil && b.Exceeded() {
		return b
	}
	return nil
}

// withCost adds the run's cost to a copy of its request metadata.
func withCost(meta map[string]any, c *RunCost) map[string]any {
	if c == nil {
		return meta
	}
	out := make(map[string]any, len(meta)+1)
	for k, v := range meta {
		out[k] = v
	}
	out["cost"] = *c
	return out
}

// BudgetLimits is a budgets object as an agents file or a request gives
// it: the iteration budgets (turns, tool_calls, tool_calls_<tool>,
// total_tokens) are positive integers, cost_usd a positive number of US
// dollars.
type BudgetLimits map[string]float64

// ApplyTo sets the limits on cfg, replacing budgets of the same names; a
// count that is not a whole number is set to 0, which Validate refuses.
func (l BudgetLimits) ApplyTo(cfg *RunConfig) {
	for k, v := range l {
		if k == BudgetCostUSD {
			cfg.CostBudgetUSD = v
			if v <= 0 {
				cfg.CostBudgetUSD = -1
			}
			continue
		}
		if cfg.Budgets == nil {
			cfg.Budgets = map[string]int{}
		}
		n := 0
		if v == math.Trunc(v) && math.Abs(v) < 1<<31 {
			n = int(v)
		}
		cfg.Budgets[k] = n
	}
}
