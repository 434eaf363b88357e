package dynamostore

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/baton-agents/baton/core"
)

// cancelling answers every transaction with the given cancellation
// reasons and GetItem with marker (nil: no item).
type cancelling struct {
	dynamoAPI
	reasons []string
	marker  item
	sent    []*dynamodb.TransactWriteItemsInput
}

func (c *cancelling) TransactWriteItems(_ context.Context, in *dynamodb.TransactWriteItemsInput, _ ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error) {
	c.sent = append(c.sent, in)
	rs := make([]types.CancellationReason, len(c.reasons))
	for i, r := range c.reasons {
		rs[i] = types.CancellationReason{Code: aws.String(r)}
	}
	return nil, &types.TransactionCanceledException{Message: aws.String("cancelled"), CancellationReasons: rs}
}

func (c *cancelling) GetItem(context.Context, *dynamodb.GetItemInput, ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error) {
	return &dynamodb.GetItemOutput{Item: c.marker}, nil
}

// TestMemoryWriteCancellations maps a cancelled write's reasons: its
// Once marker's failed condition is ErrMemoryDone; its erasure check's
// is ErrErased, unless the marker exists (DynamoDB may report only one
// failed condition), which makes it ErrMemoryDone.
func TestMemoryWriteCancellations(t *testing.T) {
	scope := core.MemoryScope{Tenant: "acme", Subject: "alice"}
	w := core.MemoryWrite{Scope: scope, Once: "extract:r1", Since: time.Unix(100, 0),
		Put:    []core.Memory{{ID: "m1", Subject: "alice", Text: "one"}, {ID: "m2", Subject: "alice", Text: "two"}},
		Delete: []string{"m3"}}
	marker := itemKey(memPK(scope), prefixMemOnce+w.Once)
	cases := []struct {
		name    string
		reasons []string
		marker  item
		want    error
	}{
		{"done", []string{"ConditionalCheckFailed", "None", "None", "None", "None"}, nil, core.ErrMemoryDone},
		{"done and erased", []string{"ConditionalCheckFailed", "ConditionalCheckFailed", "None", "None", "None"}, nil, core.ErrMemoryDone},
		{"erased", []string{"None", "ConditionalCheckFailed", "None", "None", "None"}, nil, core.ErrErased},
		{"erased, marker reported alone", []string{"None", "ConditionalCheckFailed", "None", "None", "None"}, marker, core.ErrMemoryDone},
	}
	for _, tc := range cases {
		c := &cancelling{reasons: tc.reasons, marker: tc.marker}
		s := &Store{db: c, table: "t"}
		if err := s.WriteMemories(t.Context(), w); !errors.Is(err, tc.want) {
			t.Fatalf("%s: %v, want %v", tc.name, err, tc.want)
		}
		if len(c.sent) != 1 || len(c.sent[0].TransactItems) != 5 {
			t.Fatalf("%s: sent %d transactions", tc.name, len(c.sent))
		}
		items := c.sent[0].TransactItems
		if items[0].Put == nil || !strings.Contains(aws.ToString(items[0].Put.ConditionExpression), "attribute_not_exists") || items[1].ConditionCheck == nil ||
			items[2].Put == nil || items[4].Delete == nil {
			t.Fatalf("%s: transaction items %+v", tc.name, items)
		}
	}
}

// TestMemoryItemSize: a memory at the text limit with a 1,024-dimension
// vector is one item of about 3 KB, and reads back whole.
func TestMemoryItemSize(t *testing.T) {
	vec := make([]int8, 1024)
	for i := range vec {
		vec[i] = int8(i)
	}
	at := time.Date(2026, 3, 2, 9, 0, 0, 123456789, time.UTC)
	m := core.Memory{ID: "mem_01J9Z3", Subject: "alice", Text: strings.Repeat("x", core.MaxMemoryText), Source: core.MemoryFromExtraction,
		SourceRunID: "run_01J9Z3", CreatedAt: at, UpdatedAt: at.Add(time.Hour), Vector: vec, Embedder: "amazon.titan-embed-text-v2:0"}
	it := memoryItem(memPK(core.MemoryScope{Tenant: "acme", Subject: "alice"}), m)
	if n := itemSize(it); n > 3300 {
		t.Fatalf("a memory item of %d bytes", n)
	}
	got, err := memoryOf("alice", it)
	if err != nil || got.Text != m.Text || got.Embedder != m.Embedder || !got.UpdatedAt.Equal(m.UpdatedAt) || len(got.Vector) != 1024 || got.Vector[200] != vec[200] {
		t.Fatalf("read back: %+v, %v", got.ID, err)
	}
}

func TestMemoryKeysAreUnambiguous(t *testing.T) {
	seen := map[string]core.MemoryScope{}
	for _, sc := range []core.MemoryScope{{Tenant: "a#b", Subject: "c"}, {Tenant: "a", Subject: "b#c"}, {Tenant: "a%23b", Subject: "c"}, {Tenant: "a", Subject: "b%23c"}} {
		k := memPK(sc)
		if prev, dup := seen[k]; dup {
			t.Fatalf("scopes %+v and %+v share key %q", prev, sc, k)
		}
		seen[k] = sc
	}
}
