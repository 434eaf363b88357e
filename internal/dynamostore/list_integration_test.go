//go:build integration

package dynamostore

import (
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/baton-agents/baton/core"
)

// TestCreateTableAddsListIndex: a table made before the run list index
// existed gets GSI2 from CreateTable, and the list works on it.
func TestCreateTableAddsListIndex(t *testing.T) {
	db := client(t)
	name := newTable(t, db)
	ctx := t.Context()
	if _, err := db.UpdateTable(ctx, &dynamodb.UpdateTableInput{TableName: aws.String(name),
		GlobalSecondaryIndexUpdates: []types.GlobalSecondaryIndexUpdate{{Delete: &types.DeleteGlobalSecondaryIndexAction{IndexName: aws.String(indexGSI2)}}}}); err != nil {
		t.Fatalf("drop GSI2: %v", err)
	}
	for i := 0; ; i++ {
		d, err := db.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(name)})
		if err != nil {
			t.Fatal(err)
		}
		if len(d.Table.GlobalSecondaryIndexes) == 1 {
			break
		}
		if i == 600 {
			t.Fatal("GSI2 was never dropped")
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err := CreateTable(ctx, db, name); err != nil {
		t.Fatalf("CreateTable on an older table: %v", err)
	}
	d, err := db.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(name)})
	if err != nil {
		t.Fatal(err)
	}
	var found bool
	for _, g := range d.Table.GlobalSecondaryIndexes {
		found = found || (aws.ToString(g.IndexName) == indexGSI2 && g.IndexStatus == types.IndexStatusActive)
	}
	if !found {
		t.Fatalf("no active GSI2: %+v", d.Table.GlobalSecondaryIndexes)
	}
	if _, err := New(db, name).ListRuns(ctx, "t", core.RunListQuery{Limit: 5}); err != nil {
		t.Fatalf("list on the upgraded table: %v", err)
	}
}
