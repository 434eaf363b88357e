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
	"github.com/baton-agents/baton/internal/wait"
)

// Schedules (core.ScheduleStore):
//
//	PK=SCH#<tenant>   SK=<id>         a schedule: the schedule as JSON (d), tenant, created ca, version ver, cursor cur (core.TriggerKey), last run lr; GSI1PK=SCHED, GSI1SK=core.ScheduleListKey (tenant, id)
//	PK=SCHN#<tenant>  SK=COUNT        the tenant's count of schedules (n)
//	PK=SCHID#<id>     SK=SCHID        the schedule id's owner (tenant): ids are unique across tenants
//	PK=SCHT#<id>      SK=<fire time>  a trigger (JSON in d; core.TriggerKey: UTC, fixed width), ttl from its ExpiresAt
//
// A tenant's schedules are one partition, listed in id order by one
// query. A create is one transaction: the schedule's put and its id's
// (each conditioned on being new: core.ErrConflict) and the count's
// increment (conditioned on being under the limit: core.ErrScheduleLimit);
// a delete deletes both items and decrements the count. AllSchedules
// queries the sparse index GSI1 under the one key SCHED (written when a
// schedule is created and deleted, never by updates) and reads the
// schedules with BatchGetItem; the index is eventually consistent, so a
// new schedule may show up a moment after its create. A schedule's
// triggers are one partition, newest first; RecordTrigger is a put
// conditioned on the fire time being new, then an UpdateItem of the
// schedule's cursor (and last run) conditioned on the schedule existing
// with an earlier cursor. Nothing scans.
const (
	skSchedCount = "COUNT"
	skSchedID    = "SCHID"
	// gsiSchedules is the sparse index key of every schedule.
	gsiSchedules = "SCHED"

	attrSchedVersion = "ver"
	attrSchedCursor  = "cur"
	attrSchedLastRun = "lr"
	attrSchedCreated = "ca"
)

var _ core.ScheduleStore = (*Store)(nil)

func schedPK(tenant string) string      { return "SCH#" + escape(tenant) }
func schedCountPK(tenant string) string { return "SCHN#" + escape(tenant) }
func schedIDPK(id string) string        { return "SCHID#" + id }
func triggerPK(id string) string        { return "SCHT#" + id }

// scheduleItem is a schedule's item as a create writes it.
func scheduleItem(sc core.Schedule) (item, error) {
	d, err := core.MarshalSchedule(sc)
	if err != nil {
		return nil, err
	}
	ca, err := sc.CreatedAt.MarshalText()
	if err != nil {
		return nil, fmt.Errorf("%w: schedule %s: created_at: %v", core.ErrInvalidInput, sc.ID, err)
	}
	it := itemKey(schedPK(sc.Tenant), sc.ID)
	it["d"] = avB(d)
	it["tenant"] = avS(sc.Tenant)
	it[attrSchedCreated] = avS(string(ca))
	it[attrSchedVersion] = avN(sc.Version)
	it[attrSchedCursor] = avS(core.TriggerKey(sc.Cursor))
	if sc.LastRunID != "" {
		it[attrSchedLastRun] = avS(sc.LastRunID)
	}
	it[attrGSI1PK] = avS(gsiSchedules)
	it[attrGSI1SK] = avS(core.ScheduleListKey(sc.Tenant, sc.ID))
	return it, nil
}

// scheduleOf reads a schedule item: its JSON, with the attributes that
// are kept apart (id, tenant, creation, version, cursor, last run) over
// it.
func scheduleOf(it item) (core.Schedule, error) {
	var sc core.Schedule
	id, _ := getS(it, attrSK)
	d, _ := getB(it, "d")
	if err := json.Unmarshal(d, &sc); err != nil {
		return core.Schedule{}, fmt.Errorf("schedule %s: %w", id, err)
	}
	sc.ID = id
	sc.Tenant, _ = getS(it, "tenant")
	sc.LastRunID, _ = getS(it, attrSchedLastRun)
	ca, _ := getS(it, attrSchedCreated)
	if err := sc.CreatedAt.UnmarshalText([]byte(ca)); err != nil {
		return core.Schedule{}, fmt.Errorf("schedule %s: created_at: %w", id, err)
	}
	var err error
	if sc.Version, _, err = getN(it, attrSchedVersion); err != nil {
		return core.Schedule{}, fmt.Errorf("schedule %s: %w", id, err)
	}
	cur, _ := getS(it, attrSchedCursor)
	if sc.Cursor, err = time.Parse(time.RFC3339Nano, cur); err != nil {
		return core.Schedule{}, fmt.Errorf("schedule %s: cursor: %w", id, err)
	}
	if sc.Cursor.IsZero() {
		sc.Cursor = time.Time{}
	}
	return sc, nil
}

// CreateSchedule stores a new schedule (Version 1) with its id's owner and
// one more in its tenant's count, in one transaction.
func (s *Store) CreateSchedule(ctx context.Context, sc core.Schedule, limit int) error {
	if err := core.ValidateScheduleKey(sc.Tenant, sc.ID); err != nil {
		return err
	}
	sc.Version = 1
	it, err := scheduleItem(sc)
	if err != nil {
		return err
	}
	owner := itemKey(schedIDPK(sc.ID), skSchedID)
	owner["tenant"] = avS(sc.Tenant)
	px, ox := newExpr(), newExpr()
	err = s.transact(ctx, []types.TransactWriteItem{
		s.put(it, fmt.Sprintf("attribute_not_exists(%s)", px.n(attrPK)), px),
		s.put(owner, fmt.Sprintf("attribute_not_exists(%s)", ox.n(attrPK)), ox),
		s.countSchedules(sc.Tenant, 1, limit),
	})
	reasons, _ := cancelReasons(err)
	switch {
	case failedAt(reasons, 0) || failedAt(reasons, 1):
		return fmt.Errorf("create schedule %s: %w: it exists", sc.ID, core.ErrConflict)
	case failedAt(reasons, 2):
		return fmt.Errorf("create schedule %s: %w (%d)", sc.ID, core.ErrScheduleLimit, limit)
	case err != nil:
		return fmt.Errorf("create schedule %s: %w", sc.ID, err)
	}
	return nil
}

// countSchedules is the transaction item adding by to tenant's count of
// schedules, conditioned, for a positive limit, on the count being under
// it.
func (s *Store) countSchedules(tenant string, by int64, limit int) types.TransactWriteItem {
	x := newExpr()
	u := &types.Update{TableName: aws.String(s.table), Key: itemKey(schedCountPK(tenant), skSchedCount),
		UpdateExpression: aws.String(fmt.Sprintf("ADD %s %s", x.n("n"), x.v(avN(by))))}
	if limit > 0 {
		u.ConditionExpression = aws.String(fmt.Sprintf("attribute_not_exists(%s) OR %s < %s", x.n("n"), x.n("n"), x.v(avN(int64(limit)))))
	}
	u.ExpressionAttributeNames, u.ExpressionAttributeValues = x.namesOrNil(), x.valuesOrNil()
	return types.TransactWriteItem{Update: u}
}

// GetSchedule reads tenant's schedule with one strongly consistent
// GetItem.
func (s *Store) GetSchedule(ctx context.Context, tenant, id string) (core.Schedule, error) {
	if core.ValidateScheduleKey(tenant, id) != nil {
		return core.Schedule{}, fmt.Errorf("schedule %q: %w", id, core.ErrNotFound)
	}
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(s.table), Key: itemKey(schedPK(tenant), id), ConsistentRead: aws.Bool(true)})
	if err != nil {
		return core.Schedule{}, fmt.Errorf("schedule %s: %w", id, translate(err))
	}
	if out.Item == nil {
		return core.Schedule{}, fmt.Errorf("schedule %s: %w", id, core.ErrNotFound)
	}
	return scheduleOf(out.Item)
}

// UpdateSchedule writes sc's JSON, version and cursor with one UpdateItem
// conditioned on the stored version being sc.Version-1; the item's id,
// tenant, creation time and last run stay.
func (s *Store) UpdateSchedule(ctx context.Context, sc core.Schedule) error {
	if core.ValidateScheduleKey(sc.Tenant, sc.ID) != nil {
		return fmt.Errorf("schedule %q: %w", sc.ID, core.ErrNotFound)
	}
	d, err := core.MarshalSchedule(sc)
	if err != nil {
		return err
	}
	x := newExpr()
	_, err = s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String(s.table), Key: itemKey(schedPK(sc.Tenant), sc.ID),
		UpdateExpression: aws.String(fmt.Sprintf("SET %s = %s, %s = %s, %s = %s", x.n("d"), x.v(avB(d)),
			x.n(attrSchedVersion), x.v(avN(sc.Version)), x.n(attrSchedCursor), x.v(avS(core.TriggerKey(sc.Cursor))))),
		ConditionExpression:      aws.String(fmt.Sprintf("%s = %s", x.n(attrSchedVersion), x.v(avN(sc.Version-1)))),
		ExpressionAttributeNames: x.namesOrNil(), ExpressionAttributeValues: x.valuesOrNil(),
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	})
	old, failed := conditionFailed(err)
	switch {
	case failed && old == nil:
		// No old item came back: read it to tell a missing schedule
		// from a stale version.
		if _, gerr := s.GetSchedule(ctx, sc.Tenant, sc.ID); gerr != nil {
			return gerr
		}
		fallthrough
	case failed:
		return fmt.Errorf("update schedule %s: %w: version %d is not the stored one", sc.ID, core.ErrConflict, sc.Version-1)
	case err != nil:
		return fmt.Errorf("update schedule %s: %w", sc.ID, translate(err))
	}
	return nil
}

// DeleteSchedule deletes tenant's schedule and its id's owner and takes
// one from the tenant's count, in one transaction.
func (s *Store) DeleteSchedule(ctx context.Context, tenant, id string) error {
	if core.ValidateScheduleKey(tenant, id) != nil {
		return fmt.Errorf("schedule %q: %w", id, core.ErrNotFound)
	}
	dx := newExpr()
	err := s.transact(ctx, []types.TransactWriteItem{
		{Delete: &types.Delete{TableName: aws.String(s.table), Key: itemKey(schedPK(tenant), id),
			ConditionExpression: aws.String(fmt.Sprintf("attribute_exists(%s)", dx.n(attrPK))), ExpressionAttributeNames: dx.namesOrNil()}},
		{Delete: &types.Delete{TableName: aws.String(s.table), Key: itemKey(schedIDPK(id), skSchedID)}},
		s.countSchedules(tenant, -1, 0),
	})
	if reasons, _ := cancelReasons(err); failedAt(reasons, 0) {
		return fmt.Errorf("schedule %s: %w", id, core.ErrNotFound)
	}
	if err != nil {
		return fmt.Errorf("delete schedule %s: %w", id, err)
	}
	return nil
}

// ListSchedules pages tenant's schedules in id order: one strongly
// consistent query of the tenant's partition.
func (s *Store) ListSchedules(ctx context.Context, tenant string, limit int, cursor string) ([]core.Schedule, string, error) {
	if err := core.ValidateSchedulePage(limit); err != nil {
		return nil, "", err
	}
	x := newExpr()
	cond := fmt.Sprintf("%s = %s", x.n(attrPK), x.v(avS(schedPK(tenant))))
	if cursor != "" {
		after, err := core.DecodeScheduleCursor(cursor)
		if err != nil {
			return nil, "", err
		}
		cond += fmt.Sprintf(" AND %s > %s", x.n(attrSK), x.v(avS(after)))
	}
	in := &dynamodb.QueryInput{TableName: aws.String(s.table), ConsistentRead: aws.Bool(true),
		KeyConditionExpression: aws.String(cond), ExpressionAttributeNames: x.namesOrNil(), ExpressionAttributeValues: x.valuesOrNil()}
	out := []core.Schedule{}
	next := ""
	err := s.query(ctx, in, limit+1, func(it item) (bool, error) {
		if len(out) == limit {
			next = core.EncodeScheduleCursor(out[limit-1].ID)
			return true, nil
		}
		sc, err := scheduleOf(it)
		out = append(out, sc)
		return err != nil, err
	})
	if err != nil {
		return nil, "", fmt.Errorf("list schedules: %w", err)
	}
	return out, next, nil
}

// AllSchedules pages every tenant's schedules by tenant and id: a query
// of the sparse index's SCHED key, then the schedules themselves with
// strongly consistent BatchGetItems (one deleted in between is left out).
func (s *Store) AllSchedules(ctx context.Context, limit int, cursor string) ([]core.Schedule, string, error) {
	if err := core.ValidateSchedulePage(limit); err != nil {
		return nil, "", err
	}
	x := newExpr()
	cond := fmt.Sprintf("%s = %s", x.n(attrGSI1PK), x.v(avS(gsiSchedules)))
	if cursor != "" {
		after, err := core.DecodeScheduleListCursor(cursor)
		if err != nil {
			return nil, "", err
		}
		cond += fmt.Sprintf(" AND %s > %s", x.n(attrGSI1SK), x.v(avS(after)))
	}
	in := &dynamodb.QueryInput{TableName: aws.String(s.table), IndexName: aws.String(indexGSI1),
		KeyConditionExpression: aws.String(cond), ExpressionAttributeNames: x.namesOrNil(), ExpressionAttributeValues: x.valuesOrNil()}
	var keys []item
	var listKeys []string
	next := ""
	err := s.query(ctx, in, limit+1, func(it item) (bool, error) {
		if len(keys) == limit {
			next = core.EncodeScheduleCursor(listKeys[limit-1])
			return true, nil
		}
		pk, _ := getS(it, attrPK)
		sk, _ := getS(it, attrSK)
		lk, _ := getS(it, attrGSI1SK)
		keys, listKeys = append(keys, itemKey(pk, sk)), append(listKeys, lk)
		return false, nil
	})
	if err != nil {
		return nil, "", fmt.Errorf("list all schedules: %w", err)
	}
	items, err := s.batchGet(ctx, keys)
	if err != nil {
		return nil, "", fmt.Errorf("list all schedules: %w", err)
	}
	out := []core.Schedule{}
	for _, k := range keys {
		pk, _ := getS(k, attrPK)
		sk, _ := getS(k, attrSK)
		it, ok := items[pk+"\x00"+sk]
		if !ok {
			continue // deleted since the index listed it
		}
		sc, err := scheduleOf(it)
		if err != nil {
			return nil, "", err
		}
		out = append(out, sc)
	}
	return out, next, nil
}

// batchGet reads items by key with strongly consistent BatchGetItems,
// batchGetMax keys a call, asking again for unprocessed keys. The
// result is keyed by PK, NUL, SK; a missing item is absent.
func (s *Store) batchGet(ctx context.Context, keys []item) (map[string]item, error) {
	found := make(map[string]item, len(keys))
	for len(keys) > 0 {
		batch := keys[:min(len(keys), batchGetMax)]
		keys = keys[len(batch):]
		req := map[string]types.KeysAndAttributes{s.table: {Keys: batch, ConsistentRead: aws.Bool(true)}}
		for attempt := 0; len(req) > 0; attempt++ {
			out, err := s.db.BatchGetItem(ctx, &dynamodb.BatchGetItemInput{RequestItems: req})
			if err != nil {
				return nil, translate(err)
			}
			for _, it := range out.Responses[s.table] {
				pk, _ := getS(it, attrPK)
				sk, _ := getS(it, attrSK)
				found[pk+"\x00"+sk] = it
			}
			req = out.UnprocessedKeys
			if len(req) > 0 {
				if attempt >= 8 {
					return nil, core.Retryable(errors.New("batch get: keys still unprocessed"))
				}
				if err := wait.Sleep(ctx, backoff(attempt)); err != nil {
					return nil, err
				}
			}
		}
	}
	return found, nil
}

// RecordTrigger puts t conditioned on its fire time being new (the one
// stored comes back when it is not), then moves the schedule's cursor to
// the stored trigger's fire time, and its last run to a started one's
// run, with an UpdateItem conditioned on the schedule existing with an
// earlier cursor; that condition failing is no error. The update follows
// the stored trigger on every call, so a call again after a crash
// between the two finishes what the first began.
func (s *Store) RecordTrigger(ctx context.Context, tenant string, t core.Trigger) (core.Trigger, bool, error) {
	if err := core.ValidateScheduleKey(tenant, t.ScheduleID); err != nil {
		return core.Trigger{}, false, err
	}
	if t.FireTime.IsZero() {
		return core.Trigger{}, false, fmt.Errorf("%w: a trigger needs a fire time", core.ErrInvalidInput)
	}
	t.FireTime, t.RecordedAt = t.FireTime.UTC(), t.RecordedAt.UTC()
	d, err := json.Marshal(t)
	if err != nil {
		return core.Trigger{}, false, fmt.Errorf("%w: trigger: %v", core.ErrInvalidInput, err)
	}
	it := itemKey(triggerPK(t.ScheduleID), core.TriggerKey(t.FireTime))
	it["d"] = avB(d)
	if !t.ExpiresAt.IsZero() {
		it[attrTTL] = avN(t.ExpiresAt.Add(time.Second - 1).Unix()) // not before ExpiresAt
	}
	x := newExpr()
	_, err = s.db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(s.table), Item: it,
		ConditionExpression: aws.String(fmt.Sprintf("attribute_not_exists(%s)", x.n(attrPK))), ExpressionAttributeNames: x.namesOrNil(),
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld})
	old, failed := conditionFailed(err)
	if err != nil && !failed {
		return core.Trigger{}, false, fmt.Errorf("record trigger %s %s: %w", t.ScheduleID, core.TriggerKey(t.FireTime), translate(err))
	}
	stored := t
	stored.ExpiresAt = time.Time{} // as a read gives it: the TTL is not read back
	if failed {
		if old == nil {
			stored, err = s.Trigger(ctx, t.ScheduleID, t.FireTime)
		} else {
			stored, err = triggerOf(old)
		}
		if err != nil {
			return core.Trigger{}, false, err
		}
	}
	if err := s.advanceSchedule(ctx, tenant, stored); err != nil {
		return core.Trigger{}, false, err
	}
	return stored, !failed, nil
}

// advanceSchedule moves the schedule's cursor to t's fire time (and its
// last run to a started t's run) unless the schedule is gone or its
// cursor is not earlier.
func (s *Store) advanceSchedule(ctx context.Context, tenant string, t core.Trigger) error {
	x := newExpr()
	fire := x.v(avS(core.TriggerKey(t.FireTime)))
	update := fmt.Sprintf("SET %s = %s", x.n(attrSchedCursor), fire)
	if t.Outcome == core.TriggerStarted && t.RunID != "" {
		update += fmt.Sprintf(", %s = %s", x.n(attrSchedLastRun), x.v(avS(t.RunID)))
	}
	_, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String(s.table), Key: itemKey(schedPK(tenant), t.ScheduleID),
		UpdateExpression:         aws.String(update),
		ConditionExpression:      aws.String(fmt.Sprintf("attribute_exists(%s) AND %s < %s", x.n(attrPK), x.n(attrSchedCursor), fire)),
		ExpressionAttributeNames: x.namesOrNil(), ExpressionAttributeValues: x.valuesOrNil()})
	if _, failed := conditionFailed(err); err != nil && !failed {
		return fmt.Errorf("record trigger %s %s: move the schedule's cursor: %w", t.ScheduleID, core.TriggerKey(t.FireTime), translate(err))
	}
	return nil
}

func triggerOf(it item) (core.Trigger, error) {
	var t core.Trigger
	d, _ := getB(it, "d")
	if err := json.Unmarshal(d, &t); err != nil {
		pk, _ := getS(it, attrPK)
		sk, _ := getS(it, attrSK)
		return core.Trigger{}, fmt.Errorf("trigger %s %s: %w", pk, sk, err)
	}
	return t, nil
}

// Trigger reads the trigger of a schedule's fire time with one strongly
// consistent GetItem.
func (s *Store) Trigger(ctx context.Context, scheduleID string, fire time.Time) (core.Trigger, error) {
	key := core.TriggerKey(fire)
	if core.ValidateScheduleID(scheduleID) != nil {
		return core.Trigger{}, fmt.Errorf("trigger %q %s: %w", scheduleID, key, core.ErrNotFound)
	}
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(s.table), Key: itemKey(triggerPK(scheduleID), key), ConsistentRead: aws.Bool(true)})
	if err != nil {
		return core.Trigger{}, fmt.Errorf("trigger %s %s: %w", scheduleID, key, translate(err))
	}
	if out.Item == nil {
		return core.Trigger{}, fmt.Errorf("trigger %s %s: %w", scheduleID, key, core.ErrNotFound)
	}
	return triggerOf(out.Item)
}

// Triggers pages a schedule's triggers latest first: one strongly
// consistent query of its partition, backwards.
func (s *Store) Triggers(ctx context.Context, scheduleID string, limit int, cursor string) ([]core.Trigger, string, error) {
	if err := core.ValidateSchedulePage(limit); err != nil {
		return nil, "", err
	}
	x := newExpr()
	cond := fmt.Sprintf("%s = %s", x.n(attrPK), x.v(avS(triggerPK(scheduleID))))
	if cursor != "" {
		before, err := core.DecodeTriggerCursor(cursor)
		if err != nil {
			return nil, "", err
		}
		cond += fmt.Sprintf(" AND %s < %s", x.n(attrSK), x.v(avS(before)))
	}
	out := []core.Trigger{}
	if core.ValidateScheduleID(scheduleID) != nil {
		return out, "", nil // no schedule has it
	}
	in := &dynamodb.QueryInput{TableName: aws.String(s.table), ConsistentRead: aws.Bool(true), ScanIndexForward: aws.Bool(false),
		KeyConditionExpression: aws.String(cond), ExpressionAttributeNames: x.namesOrNil(), ExpressionAttributeValues: x.valuesOrNil()}
	next := ""
	err := s.query(ctx, in, limit+1, func(it item) (bool, error) {
		if len(out) == limit {
			next = core.EncodeScheduleCursor(core.TriggerKey(out[limit-1].FireTime))
			return true, nil
		}
		t, err := triggerOf(it)
		out = append(out, t)
		return err != nil, err
	})
	if err != nil {
		return nil, "", fmt.Errorf("list triggers of %s: %w", scheduleID, err)
	}
	return out, next, nil
}
