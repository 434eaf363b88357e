package dynamostore

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/baton-agents/baton/core"
	"github.com/baton-agents/baton/internal/wait"
)

// The run list: every run item carries GSI2PK = TEN#<tenant> and GSI2SK =
// core.RunListKey (creation time and run id), neither of which changes
// after the run is created, and the index projects the few attributes a
// list entry shows. So listing a tenant's runs is one query on its own
// partition key, newest first, and a commit writes the index only when
// the run's status changes.
const (
	attrGSI2PK = "GSI2PK"
	attrGSI2SK = "GSI2SK"
	indexGSI2  = "GSI2"

	// listPagesMax bounds the index pages one filtered list reads before
	// it returns a short page with a cursor.
	listPagesMax = 8
)

// listProjection names the attributes GSI2 projects besides its keys.
var listProjection = []string{"session", "status", "agent", "created_at"}

func tenantListPK(tenant string) string { return "TEN#" + escape(tenant) }

// listAttrs adds the run-list attributes to a run item.
func listAttrs(run item, tenant string, st core.RunState) {
	run[attrGSI2PK] = avS(tenantListPK(tenant))
	run[attrGSI2SK] = avS(core.RunListKey(st.CreatedAt, st.RunID))
	run["agent"] = avS(st.Config.Agent)
	run["created_at"] = avS(st.CreatedAt.UTC().Format(time.RFC3339Nano))
}

var _ core.RunLister = (*Store)(nil)

// ListRuns lists a tenant's runs newest first from GSI2 (core.RunLister).
// A status filter is applied to the tenant's index entries, reading at
// most listPagesMax index pages per call.
func (s *Store) ListRuns(ctx context.Context, tenant string, q core.RunListQuery) (core.RunPage, error) {
	if q.Limit < 1 {
		return core.RunPage{}, fmt.Errorf("%w: limit must be at least 1", core.ErrInvalidInput)
	}
	e := newExpr()
	cond := fmt.Sprintf("%s = %s", e.n(attrGSI2PK), e.v(avS(tenantListPK(tenant))))
	if q.Cursor != "" {
		key, err := core.DecodeRunCursor(q.Cursor)
		if err != nil {
			return core.RunPage{}, err
		}
		cond += fmt.Sprintf(" AND %s < %s", e.n(attrGSI2SK), e.v(avS(key)))
	}
	in := &dynamodb.QueryInput{
		TableName: aws.String(s.table), IndexName: aws.String(indexGSI2),
		KeyConditionExpression: aws.String(cond), ScanIndexForward: aws.Bool(false),
		Limit: aws.Int32(int32(min(q.Limit+1, 1000))),
	}
	if q.Status != "" {
		in.FilterExpression = aws.String(fmt.Sprintf("%s = %s", e.n("status"), e.v(avS(string(q.Status)))))
		in.Limit = aws.Int32(1000)
	}
	in.ExpressionAttributeNames, in.ExpressionAttributeValues = e.namesOrNil(), e.valuesOrNil()
	page := core.RunPage{Runs: []core.RunSummary{}}
	var lastKey string
	p := dynamodb.NewQueryPaginator(s.db, in)
	for pages := 0; p.HasMorePages(); pages++ {
		if pages == listPagesMax {
			page.Next = core.EncodeRunCursor(lastKey)
			return page, nil
		}
		out, err := p.NextPage(ctx)
		if err != nil {
			return core.RunPage{}, fmt.Errorf("list runs: %w", translate(err))
		}
		for _, it := range out.Items {
			if len(page.Runs) == q.Limit {
				page.Next = core.EncodeRunCursor(lastKey)
				return page, nil
			}
			sum, key, err := listEntry(it)
			if err != nil {
				return core.RunPage{}, err
			}
			page.Runs, lastKey = append(page.Runs, sum), key
		}
		if k := out.LastEvaluatedKey; k != nil {
			// Resume a filtered read after the last entry it examined.
			if sk, ok := getS(k, attrGSI2SK); ok {
				lastKey = sk
			}
		}
	}
	return page, nil
}

func listEntry(it item) (core.RunSummary, string, error) {
	key, _ := getS(it, attrGSI2SK)
	pk, _ := getS(it, attrPK)
	sum := core.RunSummary{RunID: pk[len("RUN#"):]}
	sum.SessionID, _ = getS(it, "session")
	sum.Agent, _ = getS(it, "agent")
	status, _ := getS(it, "status")
	sum.Status = core.RunStatus(status)
	created, _ := getS(it, "created_at")
	t, err := time.Parse(time.RFC3339Nano, created)
	if err != nil {
		return core.RunSummary{}, "", fmt.Errorf("list runs: run %s: created_at: %w", sum.RunID, err)
	}
	sum.CreatedAt = t
	return sum, key, nil
}

// listIndex is the definition of GSI2.
func listIndex() types.GlobalSecondaryIndex {
	return types.GlobalSecondaryIndex{
		IndexName: aws.String(indexGSI2),
		KeySchema: []types.KeySchemaElement{
			{AttributeName: aws.String(attrGSI2PK), KeyType: types.KeyTypeHash},
			{AttributeName: aws.String(attrGSI2SK), KeyType: types.KeyTypeRange},
		},
		Projection: &types.Projection{ProjectionType: types.ProjectionTypeInclude, NonKeyAttributes: listProjection},
	}
}

// addListIndex adds GSI2 to a table made before it existed and waits
// until the index is active.
func addListIndex(ctx context.Context, client *dynamodb.Client, table string) error {
	for {
		d, err := client.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(table)})
		if err != nil {
			return fmt.Errorf("describe table: %w", translate(err))
		}
		var idx *types.GlobalSecondaryIndexDescription
		for i, g := range d.Table.GlobalSecondaryIndexes {
			if aws.ToString(g.IndexName) == indexGSI2 {
				idx = &d.Table.GlobalSecondaryIndexes[i]
			}
		}
		switch {
		case idx == nil:
			str := types.ScalarAttributeTypeS
			gsi := listIndex()
			_, err := client.UpdateTable(ctx, &dynamodb.UpdateTableInput{
				TableName: aws.String(table),
				AttributeDefinitions: []types.AttributeDefinition{
					{AttributeName: aws.String(attrGSI2PK), AttributeType: str},
					{AttributeName: aws.String(attrGSI2SK), AttributeType: str},
				},
				GlobalSecondaryIndexUpdates: []types.GlobalSecondaryIndexUpdate{{Create: &types.CreateGlobalSecondaryIndexAction{
					IndexName: gsi.IndexName, KeySchema: gsi.KeySchema, Projection: gsi.Projection,
				}}},
			})
			if err != nil {
				return fmt.Errorf("add index %s: %w", indexGSI2, translate(err))
			}
		case idx.IndexStatus == types.IndexStatusActive:
			return nil
		}
		if err := wait.Sleep(ctx, time.Second); err != nil {
			return err
		}
	}
}
