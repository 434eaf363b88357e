// Command bench measures what a step of the agent loop costs: the
// scripted tool-loop workload (each turn one model call with one tool
// call returning a result of a configured size, then a final answer) for
// 1, 20, 100 and 500 turns and results of 100 B, 8 KB and 64 KB, through
// the in-process runner (core.Runner, the floor), the distributed runtime
// on the in-memory adapters, and the distributed runtime on DynamoDB Local
// and fauxqs; then it compares the in-process runner with a minimal
// hand-written loop on the same workload (floor.go: time and allocations
// per turn at 20, 100 and 500 turns, and their ratio). Per step it
// reports wall and CPU time, round trips to
// DynamoDB and SQS by operation, bytes written and read, DynamoDB capacity
// units, their ratio to the documented minimum and the projected dollars
// per 1,000 steps; then a scaling gate (500 vs 20 turns), a concurrency
// run, token streaming (runs served by baton dev's server over HTTP, a
// model streaming about 100 tokens/s: the delay from a token's emission
// to its SSE event, and on the emulators the DynamoDB writes and reads of
// the token batches per 1,000 tokens; see streaming.go), and cold-start
// proxies of the Lambdas with their package initialisation itemised
// (GODEBUG=inittrace=1; coldstart.go, inittrace.go), optionally beside
// another commit's functions measured in the same run.
// docs/performance.md explains the method.
//
//	go run ./scripts/bench -out results            # what make bench runs, inside scripts/emulators.sh run
//	go run ./scripts/bench -smoke                  # 1 and 3 turns in memory: checks the harness
//	go run ./scripts/bench -skip-cases -coldstart=false -concurrency=false   # token streaming only
//	go run ./scripts/bench -coldstart-only -coldstart-base 21d06ef          # cold starts only, beside 21d06ef's
//
// The emulator runs need BATON_TEST_DYNAMODB_ENDPOINT and
// BATON_TEST_SQS_ENDPOINT (scripts/emulators.sh run sets them); without
// them they are skipped. The command exits non-zero only when the workload
// itself is wrong (a run that does not complete with 2T+2 messages and
// its final answer) or the harness cannot run; slow steps or a failed
// gate never fail it.
package main
