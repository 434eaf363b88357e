package cost

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go/middleware"

	"github.com/baton-agents/baton/core"
)

func TestModelUSDPricesCacheTokensApart(t *testing.T) {
	tb, err := NewTable("us-east-1", "")
	if err != nil {
		t.Fatal(err)
	}
	// claude-sonnet-4: $3/M input, $15/M output, $0.30/M cache reads,
	// $3.75/M cache writes. 10,000 prompt tokens of which 6,000 read
	// from and 1,000 written to the cache, 2,000 completion tokens:
	// 3,000*3 + 6,000*0.30 + 1,000*3.75 + 2,000*15 = 44,550 per million.
	usd, ok := tb.ModelUSD("anthropic", "claude-sonnet-4-20250514", map[string]any{
		"prompt_tokens": json.Number("10000"), "completion_tokens": json.Number("2000"),
		"cache_read_tokens": json.Number("6000"), "cache_write_tokens": json.Number("1000")})
	if !ok || roundUSD(usd) != 0.04455 {
		t.Fatalf("usd = %v, %v", usd, ok)
	}
	if _, ok := tb.ModelUSD("openai", "gpt-unknown", map[string]any{"prompt_tokens": 1}); ok {
		t.Fatal("an unknown model was priced")
	}
}

func roundUSD(f float64) float64 { return float64(int64(f*1e9+0.5)) / 1e9 }

func TestPricesFileOverridesModelsAndRegion(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "prices.json")
	if err := os.WriteFile(path, []byte(`{"models":{"scripted/m1":{"input":1,"output":2}},
 "aws":{"eu-west-1":{"dynamodb_wru":1e-6,"dynamodb_rru":0,"sqs_request":0,"lambda_gb_second":0,"lambda_request":0}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	tb, err := NewTable("eu-west-1", path)
	if err != nil {
		t.Fatal(err)
	}
	if usd, ok := tb.ModelUSD("scripted", "m1", map[string]any{"prompt_tokens": json.Number("1000000"), "completion_tokens": json.Number("1000000")}); !ok || usd != 3 {
		t.Fatalf("model usd = %v %v", usd, ok)
	}
	if usd := tb.AWSUSD(core.Resources{DynamoDBWRU: 3, SQSRequests: 100}); usd != 3e-6 {
		t.Fatalf("aws usd = %v", usd)
	}
	// Another region keeps the built-in list (us-east-1's figures).
	tb, _ = NewTable("ap-south-1", path)
	if usd := tb.AWSUSD(core.Resources{SQSRequests: 2}); usd != 1e-6 {
		t.Fatalf("aws usd = %v", usd)
	}
	for name, body := range map[string]string{
		"unknown field":  `{"modles":{}}`,
		"negative price": `{"models":{"a/b":{"input":-1,"output":0}}}`,
		"no provider":    `{"models":{"b":{"input":1,"output":1}}}`,
		"bad json":       `{`,
	} {
		if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := NewTable("us-east-1", path); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if _, err := NewTable("us-east-1", filepath.Join(dir, "missing.json")); err == nil {
		t.Error("a missing prices file was accepted")
	}
}

// canned answers every request with one JSON body.
type canned string

func (c canned) Do(r *http.Request) (*http.Response, error) {
	return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"application/x-amz-json-1.0"}},
		Body: io.NopCloser(strings.NewReader(string(c))), Request: r}, nil
}

func client(body string, seen *types.ReturnConsumedCapacity) *dynamodb.Client {
	return dynamodb.New(dynamodb.Options{Region: "us-east-1", HTTPClient: canned(body), BaseEndpoint: aws.String("http://127.0.0.1:1"),
		Credentials: credentials.NewStaticCredentialsProvider("a", "b", ""),
		APIOptions: []func(*middleware.Stack) error{
			func(st *middleware.Stack) error { return Instrument(st, "dynamodb") },
			func(st *middleware.Stack) error {
				return st.Serialize.Add(middleware.SerializeMiddlewareFunc("seen", func(ctx context.Context, in middleware.SerializeInput, next middleware.SerializeHandler) (middleware.SerializeOutput, middleware.Metadata, error) {
					if g, ok := in.Parameters.(*dynamodb.GetItemInput); ok {
						*seen = g.ReturnConsumedCapacity
					}
					return next.HandleSerialize(ctx, in)
				}), middleware.After)
			},
		}})
}

func TestInstrumentCountsIntoTheContextMeter(t *testing.T) {
	var seen types.ReturnConsumedCapacity
	c := client(`{"ConsumedCapacity":{"TableName":"t","CapacityUnits":1.5},"Item":{}}`, &seen)
	m := &core.Meter{}
	ctx := core.WithMeter(context.Background(), m)
	for i := 0; i < 2; i++ {
		if _, err := c.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String("t"), Key: map[string]types.AttributeValue{"PK": &types.AttributeValueMemberS{Value: "x"}}}); err != nil {
			t.Fatal(err)
		}
	}
	if seen != types.ReturnConsumedCapacityTotal {
		t.Fatalf("ReturnConsumedCapacity = %q", seen)
	}
	if got := m.Total(); got != (core.Resources{DynamoDBRRU: 3}) {
		t.Fatalf("meter = %+v", got)
	}
	// Without a meter in the context nothing is counted, and nothing
	// fails.
	if _, err := c.GetItem(context.Background(), &dynamodb.GetItemInput{TableName: aws.String("t"), Key: map[string]types.AttributeValue{"PK": &types.AttributeValueMemberS{Value: "x"}}}); err != nil {
		t.Fatal(err)
	}
	// A PutItem reported without capacity counts a unit per started KB.
	p := client(`{}`, &seen)
	item := map[string]types.AttributeValue{"PK": &types.AttributeValueMemberS{Value: strings.Repeat("x", 1500)}}
	if _, err := p.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String("t"), Item: item}); err != nil {
		t.Fatal(err)
	}
	if got := m.Total(); got != (core.Resources{DynamoDBRRU: 3, DynamoDBWRU: 2}) {
		t.Fatalf("meter = %+v", got)
	}
}
