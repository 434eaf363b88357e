package dynamostore

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/baton-agents/baton/core"
	"github.com/baton-agents/baton/internal/wait"
)

// dynamoAPI is the part of the DynamoDB client the store uses.
type dynamoAPI interface {
	GetItem(ctx context.Context, in *dynamodb.GetItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error)
	PutItem(ctx context.Context, in *dynamodb.PutItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error)
	UpdateItem(ctx context.Context, in *dynamodb.UpdateItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error)
	DeleteItem(ctx context.Context, in *dynamodb.DeleteItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.DeleteItemOutput, error)
	Query(ctx context.Context, in *dynamodb.QueryInput, opts ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error)
	BatchGetItem(ctx context.Context, in *dynamodb.BatchGetItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.BatchGetItemOutput, error)
	BatchWriteItem(ctx context.Context, in *dynamodb.BatchWriteItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.BatchWriteItemOutput, error)
	TransactWriteItems(ctx context.Context, in *dynamodb.TransactWriteItemsInput, opts ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error)
}

// Store implements every storage port of core on one DynamoDB table. It
// is safe for concurrent use.
type Store struct {
	db    dynamoAPI
	table string
	// now is the wall clock of claim leases (large writes only).
	now func() time.Time
	// claimLease bounds how long a large write may hold its claim.
	claimLease time.Duration
}

var _ core.Storage = (*Store)(nil)

// New returns a store on table, which CreateTable made (or an equivalent
// table from the infrastructure code).
func New(client *dynamodb.Client, table string) *Store {
	return &Store{db: client, table: table, now: time.Now, claimLease: time.Minute}
}

// Attribute names and fixed sort keys.
const (
	attrPK     = "PK"
	attrSK     = "SK"
	attrGSI1PK = "GSI1PK"
	attrGSI1SK = "GSI1SK"
	attrTTL    = "ttl"
	indexGSI1  = "GSI1"
	// attrSteps on a run item: the run stores its events, tool results
	// and audit events in step records (steprecord.go).
	attrSteps = "steps"

	skState  = "STATE"
	skConfig = "STATE#CFG"
	skHead   = "HEAD"
	skIdem   = "IDM"
	skToken  = "TOK"

	prefixMsg    = "MSG#"
	prefixEvt    = "EVT#"
	prefixRes    = "TR#RES#"
	prefixAud    = "TR#AUD#"
	prefixPend   = "PND#"
	prefixInt    = "INT#"
	prefixOutbox = "OBX#"
	prefixIBody  = "IDM#BODY#"

	// maxSeq is the largest sequence number a 16-digit key holds.
	maxSeq = 9_999_999_999_999_999
	// maxParts is the largest part count a 4-digit key holds.
	maxParts = 9999
	// chunkBytes is the most data one item holds, well under DynamoDB's
	// 400 KB item limit once keys and attribute names are added.
	chunkBytes = 350 * 1024
)

// escape makes a key component safe to join with '#'.
func escape(s string) string {
	return strings.NewReplacer("%", "%25", "#", "%23").Replace(s)
}

func runPK(runID string) string               { return "RUN#" + runID }
func sessionPK(tenant, session string) string { return "SES#" + escape(tenant) + "#" + session }
func idemPK(scope, key string) string         { return "IDM#" + escape(scope) + "#" + key }
func tokenPK(hash string) string              { return "TOK#" + hash }

func partSK(prefix string, seq int64, part int) string {
	return fmt.Sprintf("%s%016d#%04d", prefix, seq, part)
}

type item = map[string]types.AttributeValue

func avS(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
func avN(v int64) types.AttributeValue {
	return &types.AttributeValueMemberN{Value: strconv.FormatInt(v, 10)}
}
func avB(v []byte) types.AttributeValue { return &types.AttributeValueMemberB{Value: v} }
func avBool(v bool) types.AttributeValue {
	return &types.AttributeValueMemberBOOL{Value: v}
}

func itemKey(pk, sk string) item { return item{attrPK: avS(pk), attrSK: avS(sk)} }

func getS(it item, name string) (string, bool) {
	v, ok := it[name].(*types.AttributeValueMemberS)
	if !ok {
		return "", false
	}
	return v.Value, true
}

func getN(it item, name string) (int64, bool, error) {
	v, ok := it[name].(*types.AttributeValueMemberN)
	if !ok {
		return 0, false, nil
	}
	n, err := strconv.ParseInt(v.Value, 10, 64)
	if err != nil {
		return 0, true, fmt.Errorf("attribute %s: %w", name, err)
	}
	return n, true, nil
}

func getB(it item, name string) ([]byte, bool) {
	v, ok := it[name].(*types.AttributeValueMemberB)
	if !ok {
		return nil, false
	}
	return v.Value, true
}

func getBool(it item, name string) bool {
	v, ok := it[name].(*types.AttributeValueMemberBOOL)
	return ok && v.Value
}

// expr collects the names and values of one expression.
type expr struct {
	names  map[string]string
	values item
}

func newExpr() *expr { return &expr{names: map[string]string{}, values: item{}} }

// n returns the placeholder of attribute name.
func (e *expr) n(name string) string {
	k := "#" + name
	e.names[k] = name
	return k
}

// v returns the placeholder of a value.
func (e *expr) v(av types.AttributeValue) string {
	k := fmt.Sprintf(":v%d", len(e.values))
	e.values[k] = av
	return k
}

func (e *expr) namesOrNil() map[string]string {
	if len(e.names) == 0 {
		return nil
	}
	return e.names
}

func (e *expr) valuesOrNil() item {
	if len(e.values) == 0 {
		return nil
	}
	return e.values
}

// nonce returns a random identifier of one writer.
func nonce() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// ---- blobs: run state and configuration ----

// gzipFrom is the blob size from which blobAttrs tries gzip: a run item
// is rewritten by every commit, at two write units per started KB, and a
// run state of 600 B gzips to about 400 B, which keeps the item under
// one KB.
const gzipFrom = 512

var gzipWriters = sync.Pool{New: func() any {
	w, _ := gzip.NewWriterLevel(nil, gzip.BestSpeed)
	return w
}}

// blobAttrs stores b under name, gzipped under name+"_gz" when that is
// shorter (from gzipFrom bytes on) or when it is too
// large for an item.
func blobAttrs(it item, name string, b []byte) error {
	if len(b) < gzipFrom {
		it[name] = avB(b)
		return nil
	}
	var buf bytes.Buffer
	zw := gzipWriters.Get().(*gzip.Writer)
	defer gzipWriters.Put(zw)
	zw.Reset(&buf)
	if _, err := zw.Write(b); err != nil {
		return err
	}
	if err := zw.Close(); err != nil {
		return err
	}
	if len(b) <= chunkBytes && buf.Len() >= len(b) {
		it[name] = avB(b)
		return nil
	}
	if buf.Len() > chunkBytes {
		return fmt.Errorf("%s is %d bytes (%d gzipped), more than the %d bytes one DynamoDB item holds", name, len(b), buf.Len(), chunkBytes)
	}
	it[name+"_gz"] = avB(buf.Bytes())
	return nil
}

func readBlob(it item, name string) ([]byte, error) {
	if b, ok := getB(it, name); ok {
		return b, nil
	}
	z, ok := getB(it, name+"_gz")
	if !ok {
		return nil, fmt.Errorf("item has no %s", name)
	}
	zr, err := gzip.NewReader(bytes.NewReader(z))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", name, err)
	}
	b, err := io.ReadAll(zr)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", name, err)
	}
	return b, nil
}

// encodeState splits a run state into its mutable part and its
// configuration, which never changes after Start.
func encodeState(st core.RunState) (state, cfg []byte, cfgHash string, err error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(st.Config); err != nil {
		return nil, nil, "", fmt.Errorf("encode run config: %w", err)
	}
	cfg = bytes.TrimRight(buf.Bytes(), "\n")
	sum := sha256.Sum256(cfg)
	bare := st
	bare.Config = placeholderConfig
	if state, err = core.MarshalState(bare); err != nil {
		return nil, nil, "", fmt.Errorf("encode run state: %w", err)
	}
	return state, cfg, hex.EncodeToString(sum[:]), nil
}

// placeholderConfig stands in for the configuration in the run item: the
// smallest configuration a state decodes with.
var placeholderConfig = core.RunConfig{PendingTTL: core.Duration(time.Nanosecond)}

func decodeState(state, cfg []byte) (core.RunState, error) {
	st, err := core.UnmarshalState(state)
	if err != nil {
		return core.RunState{}, err
	}
	st.Config = core.RunConfig{}
	if err := core.DecodeJSON(cfg, &st.Config); err != nil {
		return core.RunState{}, fmt.Errorf("decode run config: %w", err)
	}
	return st, nil
}

// ---- sessions and runs ----

// SessionHead reads a session's head (strongly consistent).
func (s *Store) SessionHead(ctx context.Context, tenant, sessionID string) (core.SessionHead, error) {
	head, err := s.currentHead(ctx, tenant, sessionID)
	if err != nil {
		return core.SessionHead{}, fmt.Errorf("session head %s: %w", sessionID, err)
	}
	return head, nil
}

// currentHead is the session head with, while a run holds the session,
// that run's committed message counter: its commits leave the head item
// alone until the one that finishes it (writePlan.writesHead).
func (s *Store) currentHead(ctx context.Context, tenant, sessionID string) (core.SessionHead, error) {
	head, _, err := s.readHead(ctx, tenant, sessionID)
	if err != nil || head.ActiveRun == "" {
		return head, err
	}
	next, _, ok, err := s.runCounters(ctx, head.ActiveRun)
	if err != nil {
		return core.SessionHead{}, err
	}
	if ok && next > head.NextSeq {
		head.NextSeq = next
	}
	return head, nil
}

// readHead returns the head and the raw item (nil when missing).
func (s *Store) readHead(ctx context.Context, tenant, sessionID string) (core.SessionHead, item, error) {
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{
		TableName: aws.String(s.table), Key: itemKey(sessionPK(tenant, sessionID), skHead), ConsistentRead: aws.Bool(true),
	})
	if err != nil {
		return core.SessionHead{}, nil, translate(err)
	}
	head, err := headOf(out.Item)
	return head, out.Item, err
}

// headOf reads a head item; an item without next_seq is only a claim of a
// session being created.
func headOf(it item) (core.SessionHead, error) {
	next, ok, err := getN(it, "next_seq")
	if err != nil {
		return core.SessionHead{}, err
	}
	if !ok {
		return core.SessionHead{NextSeq: 1}, nil
	}
	active, _ := getS(it, "active_run")
	head := core.SessionHead{Exists: true, NextSeq: next, ActiveRun: active}
	if b, ok := getS(it, attrBase); ok {
		if err := json.Unmarshal([]byte(b), &head.Base); err != nil {
			return core.SessionHead{}, fmt.Errorf("session head: transcript base: %w", err)
		}
	}
	return head, nil
}

// attrBase is a session head's transcript base (core.SessionHead.Base),
// JSON: set on a fork's session when its first run creates it.
const attrBase = "base"

// LoadRun reads a run's committed state with one strongly consistent
// query of its state and configuration items.
func (s *Store) LoadRun(ctx context.Context, runID string) (core.RunRecord, error) {
	for attempt := 0; ; attempt++ {
		rec, torn, err := s.loadRun(ctx, runID)
		if err != nil {
			return core.RunRecord{}, fmt.Errorf("load run %s: %w", runID, err)
		}
		if !torn {
			return rec, nil
		}
		// A query may see half of a transaction that changed the
		// configuration; read again.
		if attempt >= 4 {
			return core.RunRecord{}, core.Retryable(fmt.Errorf("load run %s: configuration does not match the state", runID))
		}
		if err := wait.Sleep(ctx, time.Duration(attempt+1)*20*time.Millisecond); err != nil {
			return core.RunRecord{}, fmt.Errorf("load run %s: %w", runID, err)
		}
	}
}

func (s *Store) loadRun(ctx context.Context, runID string) (rec core.RunRecord, torn bool, err error) {
	e := newExpr()
	in := &dynamodb.QueryInput{
		TableName:              aws.String(s.table),
		KeyConditionExpression: aws.String(fmt.Sprintf("%s = %s AND begins_with(%s, %s)", e.n(attrPK), e.v(avS(runPK(runID))), e.n(attrSK), e.v(avS(skState)))),
		ConsistentRead:         aws.Bool(true),
	}
	in.ExpressionAttributeNames, in.ExpressionAttributeValues = e.namesOrNil(), e.valuesOrNil()
	var run, cfg item
	err = s.query(ctx, in, 0, func(it item) (bool, error) {
		switch sk, _ := getS(it, attrSK); sk {
		case skState:
			run = it
		case skConfig:
			cfg = it
		}
		return false, nil
	})
	if err != nil {
		return rec, false, err
	}
	if _, committed, _ := getN(run, "version"); run == nil || !committed {
		return rec, false, core.ErrNotFound
	}
	if cfg == nil {
		return rec, true, nil
	}
	want, _ := getS(run, "cfg_h")
	if got, _ := getS(cfg, "h"); got != want {
		return rec, true, nil
	}
	stateJSON, err := readBlob(run, "state")
	if err != nil {
		return rec, false, err
	}
	cfgJSON, err := readBlob(cfg, "cfg")
	if err != nil {
		return rec, false, err
	}
	st, err := decodeState(stateJSON, cfgJSON)
	if err != nil {
		return rec, false, err
	}
	tenant, _ := getS(run, "tenant")
	return core.RunRecord{Tenant: tenant, State: st}, false, nil
}

// query reads what in selects page by page, handing each item to visit
// until visit reports done or fails. A positive limit sizes the pages (at
// most 1,000 items).
func (s *Store) query(ctx context.Context, in *dynamodb.QueryInput, limit int, visit func(it item) (done bool, err error)) error {
	if limit > 0 {
		in.Limit = aws.Int32(int32(min(limit, 1000)))
	}
	p := dynamodb.NewQueryPaginator(s.db, in)
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return translate(err)
		}
		for _, it := range page.Items {
			if done, err := visit(it); err != nil || done {
				return err
			}
		}
	}
	return nil
}
