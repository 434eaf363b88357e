package dynamostore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/baton-agents/baton/core"
)

// Memories (core.MemoryStore): one partition per scope, so every call
// reads or writes one partition and no call can reach another scope.
//
//	PK=MEM#<tenant>#<subject>  SK=M#<id>       a memory: text t, source src, source run run, created ca and updated ua (RFC 3339 with nanoseconds), vector v (binary: its int8s as bytes) and embedder emb; empty attributes are left out
//	PK=MEM#<tenant>#<subject>  SK=ERASED       the scope's latest erasure: at (Unix nanoseconds)
//	PK=MEM#<tenant>#<subject>  SK=ONCE#<key>   a write's Once marker: the ids it put (ids, a list); kept through erasures
//
// Memory ids are printable text (core.ValidateMemoryID), so the memories
// after a cursor's id are the sort keys from M#<id> plus a space: one key
// condition, never a filter or a scan. A memory of 2,000 bytes of text
// and a 1,024-dimension vector is an item of about 3 KB.
//
// A write is one TransactWriteItems: its Once marker's put conditioned
// on the marker being new, a ConditionCheck of the erasure item (none,
// or erased before the write's Since), its puts and its deletes. An
// erasure first raises the erasure item (conditioned on it being
// earlier), then deletes the memories it finds with a strongly
// consistent query: a write racing with it either committed before the
// erasure item changed, and the query finds what it wrote, or fails its
// check.
const (
	prefixMem     = "M#"
	prefixMemOnce = "ONCE#"
	skMemErased   = "ERASED"
	memKeysEnd    = "M$" // just past every M# key
	attrErasedAt  = "at"
	attrOnceIDs   = "ids"
)

var _ core.MemoryStore = (*Store)(nil)

func memPK(sc core.MemoryScope) string { return "MEM#" + escape(sc.Tenant) + "#" + sc.Subject }

func memoryItem(pk string, m core.Memory) item {
	it := itemKey(pk, prefixMem+m.ID)
	it["t"] = avS(m.Text)
	it["ca"] = avS(m.CreatedAt.Format(time.RFC3339Nano))
	it["ua"] = avS(m.UpdatedAt.Format(time.RFC3339Nano))
	for name, v := range map[string]string{"src": m.Source, "run": m.SourceRunID, "emb": m.Embedder} {
		if v != "" {
			it[name] = avS(v)
		}
	}
	if len(m.Vector) > 0 {
		b := make([]byte, len(m.Vector))
		for i, x := range m.Vector {
			b[i] = byte(x)
		}
		it["v"] = avB(b)
	}
	return it
}

func memoryOf(subject string, it item) (core.Memory, error) {
	sk, _ := getS(it, attrSK)
	m := core.Memory{ID: sk[len(prefixMem):], Subject: subject}
	m.Text, _ = getS(it, "t")
	m.Source, _ = getS(it, "src")
	m.SourceRunID, _ = getS(it, "run")
	m.Embedder, _ = getS(it, "emb")
	for name, t := range map[string]*time.Time{"ca": &m.CreatedAt, "ua": &m.UpdatedAt} {
		s, _ := getS(it, name)
		var err error
		if *t, err = time.Parse(time.RFC3339Nano, s); err != nil {
			return core.Memory{}, fmt.Errorf("memory %s: attribute %s: %w", m.ID, name, err)
		}
	}
	if b, ok := getB(it, "v"); ok && len(b) > 0 {
		m.Vector = make([]int8, len(b))
		for i, x := range b {
			m.Vector[i] = int8(x)
		}
	}
	return m, nil
}

// WriteMemories applies a write in one transaction.
func (s *Store) WriteMemories(ctx context.Context, w core.MemoryWrite) error {
	if err := w.Validate(); err != nil {
		return err
	}
	pk := memPK(w.Scope)
	var items []types.TransactWriteItem
	once, erased := -1, -1
	if w.Once != "" {
		ids := make([]types.AttributeValue, len(w.Put))
		for i, m := range w.Put {
			ids[i] = avS(m.ID)
		}
		marker := itemKey(pk, prefixMemOnce+w.Once)
		marker[attrOnceIDs] = &types.AttributeValueMemberL{Value: ids}
		x := newExpr()
		once, items = len(items), append(items, types.TransactWriteItem{Put: &types.Put{TableName: aws.String(s.table), Item: marker,
			ConditionExpression: aws.String(fmt.Sprintf("attribute_not_exists(%s)", x.n(attrPK))), ExpressionAttributeNames: x.namesOrNil()}})
	}
	if !w.Since.IsZero() {
		x := newExpr()
		erased, items = len(items), append(items, s.check(itemKey(pk, skMemErased),
			fmt.Sprintf("attribute_not_exists(%s) OR %s < %s", x.n(attrErasedAt), x.n(attrErasedAt), x.v(avN(w.Since.UnixNano()))), x))
	}
	for _, m := range w.Put {
		items = append(items, types.TransactWriteItem{Put: &types.Put{TableName: aws.String(s.table), Item: memoryItem(pk, m)}})
	}
	for _, id := range w.Delete {
		items = append(items, types.TransactWriteItem{Delete: &types.Delete{TableName: aws.String(s.table), Key: itemKey(pk, prefixMem+id)}})
	}
	switch {
	case len(items) == 0:
		return nil
	case erased == 0 && len(items) == 1: // nothing to write, only the check
		at, err := s.erasedAt(ctx, pk)
		if err != nil {
			return err
		}
		if at >= w.Since.UnixNano() {
			return fmt.Errorf("memory write: %w", core.ErrErased)
		}
		return nil
	}
	err := s.transact(ctx, items)
	reasons, cancelled := cancelReasons(err)
	switch {
	case cancelled && once >= 0 && failedAt(reasons, once):
		return fmt.Errorf("memory write %s: %w", w.Once, core.ErrMemoryDone)
	case cancelled && erased >= 0 && failedAt(reasons, erased):
		// A write both done and erased since is done: its marker
		// outlives the erasure.
		if once >= 0 {
			if _, err := s.MemoryOnce(ctx, w.Scope, w.Once); err == nil {
				return fmt.Errorf("memory write %s: %w", w.Once, core.ErrMemoryDone)
			} else if !errors.Is(err, core.ErrNotFound) {
				return err
			}
		}
		return fmt.Errorf("memory write: %w", core.ErrErased)
	case err != nil:
		return fmt.Errorf("memory write: %w", err)
	}
	return nil
}

// erasedAt reads when the scope was last erased (Unix nanoseconds; the
// smallest int64 when never).
func (s *Store) erasedAt(ctx context.Context, pk string) (int64, error) {
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(s.table), Key: itemKey(pk, skMemErased), ConsistentRead: aws.Bool(true)})
	if err != nil {
		return 0, fmt.Errorf("memory erasure: %w", translate(err))
	}
	at, ok, err := getN(out.Item, attrErasedAt)
	if !ok {
		return -1 << 63, err
	}
	return at, err
}

// Memories pages a scope's memories in id order with one strongly
// consistent query a call: at most limit (core.MemoryPage), and fewer
// when DynamoDB's 1 MB page ends first.
func (s *Store) Memories(ctx context.Context, scope core.MemoryScope, cursor string, limit int) ([]core.Memory, string, error) {
	if err := scope.Validate(); err != nil {
		return nil, "", err
	}
	after, limit, err := core.MemoryPage(cursor, limit)
	if err != nil {
		return nil, "", err
	}
	from := prefixMem
	if after != "" {
		from = prefixMem + after + " " // the least id after it
	}
	x := newExpr()
	in := &dynamodb.QueryInput{TableName: aws.String(s.table), ConsistentRead: aws.Bool(true), Limit: aws.Int32(int32(limit + 1)),
		KeyConditionExpression: aws.String(fmt.Sprintf("%s = %s AND %s BETWEEN %s AND %s",
			x.n(attrPK), x.v(avS(memPK(scope))), x.n(attrSK), x.v(avS(from)), x.v(avS(memKeysEnd)))),
		ExpressionAttributeNames: x.namesOrNil(), ExpressionAttributeValues: x.valuesOrNil()}
	out := []core.Memory{}
	for {
		page, err := s.db.Query(ctx, in)
		if err != nil {
			return nil, "", fmt.Errorf("list memories: %w", translate(err))
		}
		for _, it := range page.Items {
			m, err := memoryOf(scope.Subject, it)
			if err != nil {
				return nil, "", err
			}
			out = append(out, m)
		}
		switch {
		case len(out) > limit:
			out = out[:limit]
			return out, core.EncodeMemoryCursor(out[limit-1].ID), nil
		case page.LastEvaluatedKey == nil:
			return out, "", nil
		case len(out) > 0: // the 1 MB page ended first
			return out, core.EncodeMemoryCursor(out[len(out)-1].ID), nil
		}
		in.ExclusiveStartKey = page.LastEvaluatedKey
	}
}

// Memory reads one memory of a scope.
func (s *Store) Memory(ctx context.Context, scope core.MemoryScope, id string) (core.Memory, error) {
	if err := scope.Validate(); err != nil {
		return core.Memory{}, err
	}
	if core.ValidateMemoryID(id) != nil {
		return core.Memory{}, fmt.Errorf("memory %q: %w", id, core.ErrNotFound)
	}
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(s.table), Key: itemKey(memPK(scope), prefixMem+id), ConsistentRead: aws.Bool(true)})
	if err != nil {
		return core.Memory{}, fmt.Errorf("memory %s: %w", id, translate(err))
	}
	if out.Item == nil {
		return core.Memory{}, fmt.Errorf("memory %s: %w", id, core.ErrNotFound)
	}
	return memoryOf(scope.Subject, out.Item)
}

// DeleteMemory removes one memory of a scope, conditioned on it being
// there.
func (s *Store) DeleteMemory(ctx context.Context, scope core.MemoryScope, id string) error {
	if err := scope.Validate(); err != nil {
		return err
	}
	if core.ValidateMemoryID(id) != nil {
		return fmt.Errorf("memory %q: %w", id, core.ErrNotFound)
	}
	x := newExpr()
	_, err := s.db.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: aws.String(s.table), Key: itemKey(memPK(scope), prefixMem+id),
		ConditionExpression: aws.String(fmt.Sprintf("attribute_exists(%s)", x.n(attrPK))), ExpressionAttributeNames: x.namesOrNil()})
	if _, failed := conditionFailed(err); failed {
		return fmt.Errorf("memory %s: %w", id, core.ErrNotFound)
	}
	if err != nil {
		return fmt.Errorf("delete memory %s: %w", id, translate(err))
	}
	return nil
}

// EraseMemories raises the scope's erasure item to at (an earlier at
// leaves a later erasure), then deletes every memory a strongly
// consistent query of the scope finds, 25 a BatchWriteItem.
func (s *Store) EraseMemories(ctx context.Context, scope core.MemoryScope, at time.Time) (int, error) {
	if err := scope.Validate(); err != nil {
		return 0, err
	}
	if at.IsZero() {
		return 0, fmt.Errorf("%w: an erasure needs a time", core.ErrInvalidInput)
	}
	pk := memPK(scope)
	x := newExpr()
	name, v := x.n(attrErasedAt), x.v(avN(at.UnixNano()))
	_, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String(s.table), Key: itemKey(pk, skMemErased),
		UpdateExpression:         aws.String(fmt.Sprintf("SET %s = %s", name, v)),
		ConditionExpression:      aws.String(fmt.Sprintf("attribute_not_exists(%s) OR %s < %s", name, name, v)),
		ExpressionAttributeNames: x.namesOrNil(), ExpressionAttributeValues: x.valuesOrNil()})
	if _, failed := conditionFailed(err); err != nil && !failed {
		return 0, fmt.Errorf("erase memories: %w", translate(err))
	}
	q := newExpr()
	in := &dynamodb.QueryInput{TableName: aws.String(s.table), ConsistentRead: aws.Bool(true),
		KeyConditionExpression: aws.String(fmt.Sprintf("%s = %s AND %s BETWEEN %s AND %s",
			q.n(attrPK), q.v(avS(pk)), q.n(attrSK), q.v(avS(prefixMem)), q.v(avS(memKeysEnd)))),
		ProjectionExpression:     aws.String(q.n(attrPK) + ", " + q.n(attrSK)),
		ExpressionAttributeNames: q.namesOrNil(), ExpressionAttributeValues: q.valuesOrNil()}
	n := 0
	var batch []types.WriteRequest
	err = s.query(ctx, in, 0, func(it item) (bool, error) {
		sk, _ := getS(it, attrSK)
		batch = append(batch, types.WriteRequest{DeleteRequest: &types.DeleteRequest{Key: itemKey(pk, sk)}})
		n++
		if len(batch) < batchWriteSize {
			return false, nil
		}
		err := s.batchWrite(ctx, batch)
		batch = nil
		return err != nil, err
	})
	if err == nil {
		err = s.batchWrite(ctx, batch)
	}
	if err != nil {
		return 0, fmt.Errorf("erase memories: %w", err)
	}
	return n, nil
}

// MemoryOnce reads a Once marker of a scope.
func (s *Store) MemoryOnce(ctx context.Context, scope core.MemoryScope, once string) ([]string, error) {
	if err := scope.Validate(); err != nil {
		return nil, err
	}
	if once == "" || len(once) > core.MaxMemoryOnce {
		return nil, fmt.Errorf("memory write %q: %w", once, core.ErrNotFound)
	}
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(s.table), Key: itemKey(memPK(scope), prefixMemOnce+once), ConsistentRead: aws.Bool(true)})
	if err != nil {
		return nil, fmt.Errorf("memory write %s: %w", once, translate(err))
	}
	if out.Item == nil {
		return nil, fmt.Errorf("memory write %s: %w", once, core.ErrNotFound)
	}
	l, _ := out.Item[attrOnceIDs].(*types.AttributeValueMemberL)
	ids := []string{}
	if l != nil {
		for _, v := range l.Value {
			sv, ok := v.(*types.AttributeValueMemberS)
			if !ok {
				return nil, fmt.Errorf("memory write %s: ids hold a %T", once, v)
			}
			ids = append(ids, sv.Value)
		}
	}
	return ids, nil
}
