// Package storetest is the contract test suite of core's storage ports.
// Every implementation of core.Storage (core.RunStore,
// core.TranscriptReader, core.RecordReader, core.DueRuns,
// core.IntentStore, core.IdempotencyStore, core.TokenStore,
// core.MemoryStore and the rest: the in-memory store and the DynamoDB
// store) runs RunContract from its own tests, so the adapters behave the
// same.
//
// The suite drives real runs through core's machine with the scripted
// model, so the writes it stores are the writes the runtime makes, and it
// adds hand-built outputs where it needs sizes or shapes a scenario does
// not produce (more than 100 records, more than 4 MB, 1 MB messages).
//
// Besides what core/store.go documents, the suite pins down these
// readings of the ports, which every implementation must share:
//
//   - A limit of 0 or less means no limit, and a before bound of 0 or
//     less means "up to the committed position" (the session's head for
//     messages, the run's counters for events and tool records).
//   - SessionHead of a missing session has Exists false and no active
//     run.
//   - Commit of an unknown run fails with core.ErrNotFound.
//   - DueRuns lists the earliest DueAt first, ties broken by run id. It
//     may lag a commit briefly (a DynamoDB index is eventually
//     consistent), so the suite polls it for a few seconds.
//   - ClaimIntent counts every successful claim as an attempt: a second
//     claim, by the same owner or after the lease expired (at the expiry
//     instant included), has Previous set and the next Attempt.
//   - BeginIdempotent treats a record as expired from its ExpiresAt on;
//     FinishIdempotent fails with core.ErrConflict unless an in-flight
//     record with the same hash exists, and keeps the record's expiry
//     when rec.ExpiresAt is zero; AbortIdempotent never forgets a
//     finished record and ignores unknown keys.
//   - Nothing a store returns aliases memory the caller passed in, or
//     memory of another result.
//   - Memories (core.MemoryStore) is the exception to the first reading:
//     a limit of 0 means core.MemoryPageSize, a page is never empty
//     while its next cursor is set, and the last page's cursor is "".
//     Memory, DeleteMemory and MemoryOnce of an id or key no write could
//     have used are core.ErrNotFound. A write both done (its Once key
//     used) and refused by an erasure is core.ErrMemoryDone: Once
//     markers outlive erasures. An erasure at a zero time is
//     core.ErrInvalidInput, and an erasure earlier than the scope's last
//     keeps the last one's time.
//   - Schedules (core.ScheduleStore): ids are unique across tenants (a
//     schedule's triggers are keyed by its id alone), so creating an id
//     another tenant holds is core.ErrConflict, and a deleted schedule's
//     id is free again. A tenant or id that is empty, longer than 256
//     bytes or not text is core.ErrInvalidInput on a create and
//     core.ErrNotFound on a read. List limits below 1 and cursors no list
//     returned are core.ErrInvalidInput. A create stores Version 1
//     whatever it is given. A trigger's ExpiresAt is not read back, and a
//     second record of a fire time still moves the schedule's cursor to
//     it (so a record interrupted between its two writes is finished by
//     the next). AllSchedules may lag a create or delete briefly (a
//     DynamoDB index), so the suite polls it.
//
// Subtests run in parallel, each on a fresh store from newStore.
package storetest
