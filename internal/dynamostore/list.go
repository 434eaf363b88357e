package dynamostore

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/baton-agents/baton/core"
	"github.com/baton-agents/baton/internal/wait"
)

// The run list: every run item carries GSI2PK = TEN#<tenant> and GSI2SK =
// core.RunListKey (creation time and run id), neither of which changes
// after the run is created, and the index projects the few attributes the
// list filters on. So listing a tenant's runs is one query on its own
// partition key, newest first, and a commit writes the index only when
// the run's status changes. The rest of a list entry (title, turns,
// tokens, cost, reason, parent) comes from the run items themselves, read
// in one BatchGetItem per page: nothing is written for the list beyond
// the commit's own run item (which carries the run's agent version, and a
// child run's its parent).
const (
	attrGSI2PK = "GSI2PK"
	attrGSI2SK = "GSI2SK"
	indexGSI2  = "GSI2"
	attrParent = "parent"
	// attrForkedFrom is a fork's source (core.ForkRef, JSON), attrEval
	// an eval's case or judge (core.EvalRef, JSON).
	attrForkedFrom = "forked_from"
	attrEval       = "eval"
	// attrSchedule is a scheduled run's schedule (core.ScheduleRef, JSON).
	attrSchedule = "schedule"
	// attrAgentVersion is the run's agent version (set once it has one).
	attrAgentVersion = "agent_version"

	// listPagesMax bounds the index pages one filtered list reads before
	// it returns a short page with a cursor.
	listPagesMax = 8
	// batchGetMax is the most keys one BatchGetItem takes.
	batchGetMax = 100
)

// listProjection names the attributes GSI2 projects besides its keys.
var listProjection = []string{"session", "status", "agent", "created_at"}

func tenantListPK(tenant string) string { return "TEN#" + escape(tenant) }

// listAttrs adds the run-list attributes to a run item.
func listAttrs(run item, tenant string, st core.RunState) error {
	run[attrGSI2PK] = avS(tenantListPK(tenant))
	run[attrGSI2SK] = avS(core.RunListKey(st.CreatedAt, st.RunID))
	run["agent"] = avS(st.Config.Agent)
	run["created_at"] = avS(st.CreatedAt.UTC().Format(time.RFC3339Nano))
	if v := st.Config.AgentVersion; v != "" {
		run[attrAgentVersion] = avS(v)
	}
	if p := st.Config.Parent; p != nil {
		b, err := json.Marshal(p)
		if err != nil {
			return fmt.Errorf("encode the parent: %w", err)
		}
		run[attrParent] = avS(string(b))
	}
	for attr, v := range map[string]any{attrForkedFrom: st.Config.ForkedFrom, attrEval: st.Config.Eval, attrSchedule: st.Config.Schedule} {
		if reflect.ValueOf(v).IsNil() {
			continue
		}
		b, err := json.Marshal(v)
		if err != nil {
			return fmt.Errorf("encode the run's %s: %w", attr, err)
		}
		run[attr] = avS(string(b))
	}
	return nil
}

var _ core.RunLister = (*Store)(nil)

// ListRuns lists a tenant's runs newest first from GSI2 (core.RunLister).
// Status and agent filter the tenant's index entries, Until and the
// cursor bound the query, Since ends it; TopLevel and Parent filter the
// entries read from the run items. It reads at most listPagesMax index
// pages per call.
func (s *Store) ListRuns(ctx context.Context, tenant string, q core.RunListQuery) (core.RunPage, error) {
	if q.Limit < 1 {
		return core.RunPage{}, fmt.Errorf("%w: limit must be at least 1", core.ErrInvalidInput)
	}
	e := newExpr()
	cond := fmt.Sprintf("%s = %s", e.n(attrGSI2PK), e.v(avS(tenantListPK(tenant))))
	upper := ""
	if !q.Until.IsZero() {
		upper = core.RunListKey(q.Until, "")
	}
	if q.Cursor != "" {
		key, err := core.DecodeRunCursor(q.Cursor)
		if err != nil {
			return core.RunPage{}, err
		}
		if upper == "" || key < upper {
			upper = key
		}
	}
	if upper != "" {
		cond += fmt.Sprintf(" AND %s < %s", e.n(attrGSI2SK), e.v(avS(upper)))
	}
	lower := ""
	if !q.Since.IsZero() {
		lower = core.RunListKey(q.Since, "")
	}
	in := &dynamodb.QueryInput{
		TableName: aws.String(s.table), IndexName: aws.String(indexGSI2),
		KeyConditionExpression: aws.String(cond), ScanIndexForward: aws.Bool(false),
		Limit: aws.Int32(int32(min(q.Limit+1, 1000))),
	}
	var filters []string
	if q.Status != "" {
		filters = append(filters, fmt.Sprintf("%s = %s", e.n("status"), e.v(avS(string(q.Status)))))
	}
	if q.Agent != "" {
		filters = append(filters, fmt.Sprintf("%s = %s", e.n("agent"), e.v(avS(q.Agent))))
	}
	if len(filters) > 0 || q.TopLevel || q.Parent != "" || q.ForkedFrom != "" {
		in.Limit = aws.Int32(1000)
	}
	if len(filters) > 0 {
		in.FilterExpression = aws.String(strings.Join(filters, " AND "))
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
		entries := make([]listed, 0, len(out.Items))
		for _, it := range out.Items {
			l, err := listEntry(it)
			if err != nil {
				return core.RunPage{}, err
			}
			if l.key < lower {
				break
			}
			entries = append(entries, l)
		}
		for len(entries) > 0 {
			need := min(q.Limit-len(page.Runs), len(entries), batchGetMax)
			if need == 0 {
				page.Next = core.EncodeRunCursor(lastKey)
				return page, nil
			}
			batch := entries[:need]
			entries = entries[need:]
			if err := s.summaries(ctx, batch); err != nil {
				return core.RunPage{}, err
			}
			for _, l := range batch {
				lastKey = l.key
				if q.Keeps(l.sum) {
					page.Runs = append(page.Runs, l.sum)
				}
			}
		}
		if len(out.Items) > 0 {
			if k, _ := getS(out.Items[len(out.Items)-1], attrGSI2SK); k < lower {
				return page, nil // past Since: no older entry is wanted
			}
		}
		if k := out.LastEvaluatedKey; k != nil {
			// Resume a filtered read after the last entry it examined.
			if sk, ok := getS(k, attrGSI2SK); ok {
				if sk < lower {
					return page, nil
				}
				lastKey = sk
			}
		}
		if len(page.Runs) == q.Limit && p.HasMorePages() {
			page.Next = core.EncodeRunCursor(lastKey) // full: no index page more
			return page, nil
		}
	}
	return page, nil
}

// listed is one index entry of the run list, and its list entry.
type listed struct {
	key string
	sum core.RunSummary
}

func listEntry(it item) (listed, error) {
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
		return listed{}, fmt.Errorf("list runs: run %s: created_at: %w", sum.RunID, err)
	}
	sum.CreatedAt = t
	return listed{key, sum}, nil
}

// summaries completes the entries from their run items (state, agent,
// agent version and parent; at most batchGetMax of them), read in one BatchGetItem.
// An entry whose item is gone keeps what the index had.
func (s *Store) summaries(ctx context.Context, entries []listed) error {
	e := newExpr()
	proj := strings.Join([]string{e.n(attrPK), e.n("agent"), e.n(attrAgentVersion), e.n(attrParent), e.n(attrForkedFrom), e.n(attrEval), e.n(attrSchedule), e.n("state"), e.n("state_gz")}, ", ")
	keys := make([]item, len(entries))
	at := make(map[string]int, len(entries))
	for i, l := range entries {
		keys[i] = itemKey(runPK(l.sum.RunID), skState)
		at[runPK(l.sum.RunID)] = i
	}
	req := map[string]types.KeysAndAttributes{s.table: {Keys: keys, ProjectionExpression: aws.String(proj), ExpressionAttributeNames: e.namesOrNil()}}
	for attempt := 0; len(req) > 0; attempt++ {
		out, err := s.db.BatchGetItem(ctx, &dynamodb.BatchGetItemInput{RequestItems: req})
		if err != nil {
			return fmt.Errorf("list runs: read the runs: %w", translate(err))
		}
		for _, it := range out.Responses[s.table] {
			pk, _ := getS(it, attrPK)
			i, ok := at[pk]
			if !ok {
				continue
			}
			if err := fillSummary(&entries[i].sum, it); err != nil {
				return err
			}
		}
		req = out.UnprocessedKeys
		if len(req) > 0 {
			if err := wait.Sleep(ctx, time.Duration(attempt+1)*50*time.Millisecond); err != nil {
				return err
			}
		}
	}
	return nil
}

// fillSummary makes a list entry from a run item's state, agent, agent
// version and parent.
func fillSummary(sum *core.RunSummary, it item) error {
	b, err := readBlob(it, "state")
	if err != nil {
		return fmt.Errorf("list runs: run %s: %w", sum.RunID, err)
	}
	st, err := core.UnmarshalState(b)
	if err != nil {
		return fmt.Errorf("list runs: run %s: %w", sum.RunID, err)
	}
	st.Config = core.RunConfig{}
	st.Config.Agent, _ = getS(it, "agent")
	st.Config.AgentVersion, _ = getS(it, attrAgentVersion)
	if p, ok := getS(it, attrParent); ok {
		st.Config.Parent = &core.ParentRef{}
		if err := json.Unmarshal([]byte(p), st.Config.Parent); err != nil {
			return fmt.Errorf("list runs: run %s: parent: %w", sum.RunID, err)
		}
	}
	if f, ok := getS(it, attrForkedFrom); ok {
		st.Config.ForkedFrom = &core.ForkRef{}
		if err := json.Unmarshal([]byte(f), st.Config.ForkedFrom); err != nil {
			return fmt.Errorf("list runs: run %s: forked_from: %w", sum.RunID, err)
		}
	}
	if ev, ok := getS(it, attrEval); ok {
		st.Config.Eval = &core.EvalRef{}
		if err := json.Unmarshal([]byte(ev), st.Config.Eval); err != nil {
			return fmt.Errorf("list runs: run %s: eval: %w", sum.RunID, err)
		}
	}
	if sc, ok := getS(it, attrSchedule); ok {
		st.Config.Schedule = &core.ScheduleRef{}
		if err := json.Unmarshal([]byte(sc), st.Config.Schedule); err != nil {
			return fmt.Errorf("list runs: run %s: schedule: %w", sum.RunID, err)
		}
	}
	*sum = st.Summary()
	return nil
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
