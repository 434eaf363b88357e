package dynamostore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/baton-agents/baton/core"
)

// Agent versions and aliases (core.AgentVersionStore):
//
//	PK=AGV#<id>   SK=AGV              a version: its metadata (JSON in d) and its file (blob f)
//	PK=AGVS       SK=<published>#<id> the version list: the metadata again, for ListAgentVersions
//	PK=AGA        SK=<name>           an alias (JSON in d) and its revision rev
//	PK=AGL        SK=<at>#<nonce>     an audit entry (JSON in d), written with its change
//
// A version's items and its audit entry are one transaction, conditioned
// on the version being new; an alias and its audit entry are one
// transaction, conditioned on the revision the writer read.
const (
	pkVersionList = "AGVS"
	pkAliases     = "AGA"
	pkAgentAudit  = "AGL"
	skVersion     = "AGV"
)

var _ core.AgentVersionStore = (*Store)(nil)

func versionPK(id string) string { return "AGV#" + id }

// auditItem is an audit entry's item.
func auditItem(e core.AgentAuditEntry) (item, error) {
	d, err := json.Marshal(e)
	if err != nil {
		return nil, err
	}
	it := itemKey(pkAgentAudit, e.At.UTC().Format(time.RFC3339Nano)+"#"+nonce())
	it["d"] = avB(d)
	return it, nil
}

// PutAgentVersion stores v unless a version of its id is stored.
func (s *Store) PutAgentVersion(ctx context.Context, v core.AgentVersion) (core.AgentVersion, bool, error) {
	if len(v.File) > core.MaxAgentVersionBytes {
		return core.AgentVersion{}, false, fmt.Errorf("%w: the agents file is %d bytes as canonical JSON, more than a version's %d", core.ErrInvalidInput, len(v.File), core.MaxAgentVersionBytes)
	}
	meta, err := json.Marshal(v)
	if err != nil {
		return core.AgentVersion{}, false, err
	}
	it := itemKey(versionPK(v.ID), skVersion)
	it["d"] = avB(meta)
	if err := blobAttrs(it, "f", v.File); err != nil {
		return core.AgentVersion{}, false, fmt.Errorf("%w: %v", core.ErrInvalidInput, err)
	}
	list := itemKey(pkVersionList, v.PublishedAt.UTC().Format(time.RFC3339Nano)+"#"+v.ID)
	list["d"] = avB(meta)
	audit, err := auditItem(core.AgentAuditEntry{At: v.PublishedAt, By: v.PublishedBy, Action: core.AuditPublish, Version: v.ID})
	if err != nil {
		return core.AgentVersion{}, false, err
	}
	e := newExpr()
	_, err = s.db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
		{Put: &types.Put{TableName: aws.String(s.table), Item: it, ConditionExpression: aws.String(fmt.Sprintf("attribute_not_exists(%s)", e.n(attrPK))), ExpressionAttributeNames: e.namesOrNil()}},
		{Put: &types.Put{TableName: aws.String(s.table), Item: list}},
		{Put: &types.Put{TableName: aws.String(s.table), Item: audit}},
	}})
	if err == nil {
		return v, true, nil
	}
	if reasons, ok := cancelReasons(err); ok && failedAt(reasons, 0) {
		old, gerr := s.GetAgentVersion(ctx, v.ID)
		return old, false, gerr
	}
	return core.AgentVersion{}, false, fmt.Errorf("put agent version %s: %w", v.ID, translate(err))
}

// getJSON reads the item at key and decodes its d attribute into v;
// what names it in errors (ErrNotFound when there is no item).
func (s *Store) getJSON(ctx context.Context, key item, what string, v any) (item, error) {
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(s.table), Key: key, ConsistentRead: aws.Bool(true)})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, translate(err))
	}
	if out.Item == nil {
		return nil, fmt.Errorf("%s: %w", what, core.ErrNotFound)
	}
	d, _ := getB(out.Item, "d")
	if err := json.Unmarshal(d, v); err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return out.Item, nil
}

// GetAgentVersion returns a stored version with its file.
func (s *Store) GetAgentVersion(ctx context.Context, id string) (core.AgentVersion, error) {
	var v core.AgentVersion
	it, err := s.getJSON(ctx, itemKey(versionPK(id), skVersion), "agent version "+id, &v)
	if err != nil {
		return core.AgentVersion{}, err
	}
	if v.File, err = readBlob(it, "f"); err != nil {
		return core.AgentVersion{}, fmt.Errorf("agent version %s: %w", id, err)
	}
	return v, nil
}

// ListAgentVersions lists the versions newest first, without files.
func (s *Store) ListAgentVersions(ctx context.Context) ([]core.AgentVersion, error) {
	return listJSON[core.AgentVersion](ctx, s, pkVersionList, false, 0)
}

// GetAgentAlias returns a stored alias.
func (s *Store) GetAgentAlias(ctx context.Context, name string) (core.AgentAlias, error) {
	var a core.AgentAlias
	if _, err := s.getJSON(ctx, itemKey(pkAliases, name), "agent alias "+name, &a); err != nil {
		return core.AgentAlias{}, err
	}
	return a, nil
}

// PutAgentAlias stores a when the stored alias's revision is prev.
func (s *Store) PutAgentAlias(ctx context.Context, a core.AgentAlias, prev int64) (core.AgentAlias, error) {
	var before *core.AgentAlias
	if prev > 0 {
		old, err := s.GetAgentAlias(ctx, a.Name)
		switch {
		case errors.Is(err, core.ErrNotFound):
			return core.AgentAlias{}, fmt.Errorf("agent alias %s: none stored, not revision %d: %w", a.Name, prev, core.ErrConflict)
		case err != nil:
			return core.AgentAlias{}, err
		case old.Revision != prev:
			return core.AgentAlias{}, fmt.Errorf("agent alias %s: revision %d, not %d: %w", a.Name, old.Revision, prev, core.ErrConflict)
		}
		before = &old
	}
	a.Revision = prev + 1
	d, err := json.Marshal(a)
	if err != nil {
		return core.AgentAlias{}, err
	}
	it := itemKey(pkAliases, a.Name)
	it["d"] = avB(d)
	it["rev"] = avN(a.Revision)
	after := a
	audit, err := auditItem(core.AgentAuditEntry{At: a.UpdatedAt, By: a.UpdatedBy, Action: core.AuditAlias, Alias: a.Name, Before: before, After: &after})
	if err != nil {
		return core.AgentAlias{}, err
	}
	e := newExpr()
	var cond string
	if prev > 0 {
		cond = fmt.Sprintf("%s = %s", e.n("rev"), e.v(avN(prev)))
	} else {
		cond = fmt.Sprintf("attribute_not_exists(%s)", e.n(attrPK))
	}
	_, err = s.db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
		{Put: &types.Put{TableName: aws.String(s.table), Item: it, ConditionExpression: aws.String(cond), ExpressionAttributeNames: e.namesOrNil(), ExpressionAttributeValues: e.valuesOrNil()}},
		{Put: &types.Put{TableName: aws.String(s.table), Item: audit}},
	}})
	if err != nil {
		if reasons, ok := cancelReasons(err); ok && failedAt(reasons, 0) {
			return core.AgentAlias{}, fmt.Errorf("agent alias %s changed since revision %d: %w", a.Name, prev, core.ErrConflict)
		}
		return core.AgentAlias{}, fmt.Errorf("put agent alias %s: %w", a.Name, translate(err))
	}
	return a, nil
}

// ListAgentAliases lists the aliases by name.
func (s *Store) ListAgentAliases(ctx context.Context) ([]core.AgentAlias, error) {
	return listJSON[core.AgentAlias](ctx, s, pkAliases, true, 0)
}

// ListAgentAudit lists the latest audit entries, newest first.
func (s *Store) ListAgentAudit(ctx context.Context, limit int) ([]core.AgentAuditEntry, error) {
	return listJSON[core.AgentAuditEntry](ctx, s, pkAgentAudit, false, limit)
}

// listJSON decodes the d attribute of the items of partition pk, in sort
// key order (or reverse), at most limit of them (0: all).
func listJSON[T any](ctx context.Context, s *Store, pk string, forward bool, limit int) ([]T, error) {
	var out []T
	err := s.queryPK(ctx, pk, forward, limit, func(d []byte) error {
		var v T
		if err := json.Unmarshal(d, &v); err != nil {
			return err
		}
		out = append(out, v)
		return nil
	})
	return out, err
}

// queryPK reads the d attribute of the items of partition pk in sort key
// order (or reverse), at most limit of them (0: all).
func (s *Store) queryPK(ctx context.Context, pk string, forward bool, limit int, visit func(d []byte) error) error {
	e := newExpr()
	in := &dynamodb.QueryInput{TableName: aws.String(s.table), ConsistentRead: aws.Bool(true), ScanIndexForward: aws.Bool(forward),
		KeyConditionExpression:   aws.String(fmt.Sprintf("%s = %s", e.n(attrPK), e.v(avS(pk)))),
		ExpressionAttributeNames: e.namesOrNil(), ExpressionAttributeValues: e.valuesOrNil()}
	n := 0
	return s.query(ctx, in, limit, func(it item) (bool, error) {
		d, _ := getB(it, "d")
		if err := visit(d); err != nil {
			return true, err
		}
		n++
		return limit > 0 && n >= limit, nil
	})
}
