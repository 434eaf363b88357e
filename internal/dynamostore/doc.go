// Package dynamostore implements core's storage ports (core.Storage:
// core.RunStore, core.TranscriptReader, core.RecordReader, core.DueRuns,
// core.IntentStore, core.IdempotencyStore, core.TokenStore,
// core.MemoryStore and the rest) on one DynamoDB table, and passes the
// same contract suite (storetest) as the in-memory store.
//
// # Table
//
// The table has a string partition key PK and a string sort key SK,
// on-demand billing, a TTL attribute ttl (epoch seconds), one sparse
// global secondary index GSI1 (GSI1PK, GSI1SK, keys only) and the run
// list index GSI2 (GSI2PK, GSI2SK; projecting session, status, agent and
// created_at). CreateTable makes it. Items:
//
//	PK=RUN#<run>                       SK=STATE              the run: tenant, session, version, status, counters, state (JSON without the config), cfg_h, steps and, while the run is due, GSI1PK/GSI1SK (the due time and the run); agent, created_at and GSI2PK=TEN#<tenant>, GSI2SK=<created>#<run> (list.go)
//	PK=RUN#<run>                       SK=STATE#CFG          the run's configuration (JSON) and its hash h
//	PK=SES#<tenant>#<session>          SK=HEAD               the session head: next_seq, active_run (written when a run starts and when it finishes)
//	PK=SES#<tenant>#<session>          SK=MSG#<seq>#<part>   a transcript message
//	PK=RUN#<run>                       SK=EVT#<seq>#<part>   a step record: one commit's lifecycle events, tool execution results and audit events, keyed by its first event's seq (deflated when shorter; see steprecord.go)
//	PK=RUN#<run>                       SK=TR#RES#<seq>#<part> in tables written before step records: a tool execution result, keyed by its tool_result message's seq (and, under EVT#, one event each)
//	PK=RUN#<run>                       SK=TR#AUD#<seq>#<part> in those tables: an audit event, keyed the same way
//	PK=RUN#<run>                       SK=PND#<id>           a pending client-tool request or approval action
//	PK=RUN#<run>                       SK=INT#<tool_call_id> a tool call's execution intent (owner, lease, attempt)
//	PK=RUN#<run>                       SK=DLV#<seq>#<call>   a step's delivery notes: redelivered and stale counts, kind, turn, at (deliveries.go; only steps delivered again or stale have one)
//	PK=RUN#<run>                       SK=OBX#<id>           an outbox record (a run notification, JSON in d); while unsent, GSI1PK=OBX#<shard>, GSI1SK=<time>#<run>#<id>
//	PK=IDM#<scope>#<key>               SK=IDM                an idempotency record; SK=IDM#BODY#<nonce>#<part> holds a large body
//	PK=TOK#<hash>                      SK=TOK                an API token
//	PK=MEM#<tenant>#<subject>          SK=M#<id>             a long-term memory of the scope (memory.go): text, source, source run, created and updated times, the vector as binary (one byte per int8 dimension) and its embedder
//	PK=MEM#<tenant>#<subject>          SK=ERASED             the scope's last erasure time (Unix nanoseconds)
//	PK=MEM#<tenant>#<subject>          SK=ONCE#<key>         a memory write's Once marker: the ids the write put (kept through erasures)
//	PK=SCH#<tenant>                    SK=<id>               a schedule (schedules.go): the schedule as JSON (d), tenant, created ca, version ver, cursor cur (the last fire time handled, UTC, fixed width), last run lr; GSI1PK=SCHED, GSI1SK=<tenant>#<id> (every tenant's schedules)
//	PK=SCHN#<tenant>                   SK=COUNT              the tenant's count of schedules (n), changed by the create and delete transactions
//	PK=SCHID#<id>                      SK=SCHID              a schedule id's owner (tenant): ids are unique across tenants
//	PK=SCHT#<schedule>                 SK=<fire time>        a trigger of the schedule (JSON in d), keyed by its fire time (UTC, fixed width, newest first when listed); ttl from its ExpiresAt; kept after its schedule is deleted, until it expires
//
// Sequence numbers are zero-padded to 16 digits and parts to 4, so the
// sort key orders records. A record's JSON is split into parts of at most
// 350 KB (each part carries the part count n and the writer's nonce w),
// so a message of any size is stored whole and reassembled on read, never
// truncated. Tenants and scopes are escaped ('%' and '#'), so no two
// tenants share a session key. Run states and configurations from 512 B
// are stored gzipped when that is shorter (the run item, rewritten by
// every commit, then stays under one write unit); one that is larger than
// 350 KB even gzipped fails its write.
//
// # Commits
//
// A Write's records have deterministic keys and the run item is the
// commit point, conditioned on the previous version. An unfinished run
// holds its session from creation to the commit that finishes it, so
// only that commit (and the creation) writes the session head; until
// then SessionHead and Messages take the session's message counter from
// the active run's item. When the whole Write (records, pending items,
// run item and, finishing, the session head) fits in one
// TransactWriteItems call (at most 100 items and 4 MB), a commit is that
// one round trip. A larger Write first claims the run (or, for a new run,
// the session and the run id) with a short lease, writes its records in
// transactions that each re-check the claim and the version, and commits
// the run item, the session head and the pending items in a last
// transaction. So a writer that lost the race can never overwrite the
// records of the one that won, and a crash leaves records only beyond the
// committed counters, where readers never look: Messages, Events and
// ToolRecords return only records below their before bound (and below the
// committed position when before is 0 or less).
//
// A memory scope (tenant, subject) is one partition: a memory write is
// one TransactWriteItems (its puts and deletes, a ConditionCheck of the
// ERASED item against the write's Since, and the Once marker's put
// conditioned on it being new); its cancellation reasons become
// core.ErrErased and core.ErrMemoryDone. Memories pages the partition's
// M# keys with one strongly consistent query a call (at most
// core.MemoryPageSize, and DynamoDB's 1 MB); EraseMemories raises the
// ERASED item first, then deletes what a strongly consistent query finds,
// 25 keys a BatchWriteItem. Nothing scans.
//
// A tenant's schedules are one partition, listed in id order with one
// strongly consistent query. A create is one TransactWriteItems: the
// schedule's put and its id owner's, each conditioned on being new
// (core.ErrConflict), and the count's ADD conditioned on being under the
// limit (core.ErrScheduleLimit); a delete removes both and takes one off
// the count. An update is one UpdateItem of the JSON, version and cursor
// conditioned on the version. Every tenant's schedules (baton dev's
// scheduler) are the sparse index's SCHED key, whose entries a create and
// a delete write (an update or a trigger leaves the index keys alone),
// read back with BatchGetItem. A trigger is a PutItem conditioned on its
// fire time being new, then an UpdateItem moving the schedule's cursor
// (and, started, its last run) conditioned on the cursor being earlier;
// a schedule's triggers are read with one GetItem (Trigger) or query
// (Triggers, newest first).
//
// The configuration never changes after a run starts, so a commit writes
// only the run item's small mutable state; LoadRun reads both items with
// one strongly consistent query.
//
// # Errors
//
// Failed conditions become core.ErrConflict, core.ErrLockHeld or
// core.ErrNotFound; throttling, 5xx responses, transport failures and
// transactions that kept colliding with concurrent ones are wrapped with
// core.Retryable.
//
// A commit's outbox records (core.Write.Notifications) are written with
// the commit point, in the same transaction as the run item, and listed
// in the sparse index under eight OBX# shards until MarkNotificationSent
// sets sent and removes their index keys (one UpdateItem per sent
// notification). A transition without notifications writes nothing more.
// UnsentNotifications queries the OBX# shards and reads each listed item
// strongly consistently.
//
// DueRuns reads the sparse index, which DynamoDB keeps eventually
// consistent: a run may show up (or stay listed) shortly after a commit
// changed its DueAt. The index is spread over eight key shards so that
// due-time updates never funnel into one partition. A commit rewrites
// the run item with the same index keys when its DueAt did not change
// (the durable runner rounds it down to a quarter of the stall timeout),
// which DynamoDB does not count as an index write.
package dynamostore
