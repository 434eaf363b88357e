// Package core is Baton's pure agent-loop step machine.
//
// It holds the normalized message envelope, tool declarations and their
// mediation, budgets, the completion policy, lifecycle and audit events, and
// the versioned conversation result envelope. Its centre is a deterministic
// step machine: Machine.Plan tells a runner which single piece of I/O a
// scheduled step needs (one model call or one tool execution, or none), and
// Machine.Apply folds the outcome of that I/O, or an outside input such as a
// submitted client-tool result or an approval decision, into the run state,
// returning the messages to append, the events and records to store and the
// next steps to schedule.
//
// The package imports only the standard library and a JSON-Schema validator.
// It never performs I/O itself: model providers, tool executors, the clock
// and ID sources are ports supplied by the caller. Two runners drive it:
// Runner in this package, in process, and the durable runner in
// internal/durable, one step per Lambda invocation.
//
// # Files
//
// machine.go holds the Machine, its steps and Start; inputs.go every input
// Apply accepts; mediation.go Plan and tool-call mediation; transition.go
// Apply and the transition type that carries out every input; hooks.go the
// caller-supplied hooks and the wrappers that call them; state.go the
// serialized run state; compaction.go and window.go what the model sees;
// events.go and toolresults.go the records a transition produces;
// perform.go and runner.go the I/O side that the machine itself never does.
//
// # Determinism
//
// A run must come out the same whichever runner drives it, however its
// steps are spread over processes and retries, and when a stored run is
// replayed or resumed by a newer build. Golden envelopes in testdata check
// this: every scenario runs both in process and one serialized step at a
// time, and the two envelopes must be identical byte for byte. Anyone
// changing Start, Plan or Apply, or anything they call, must keep these
// rules:
//
//   - Time comes only from Machine.Clock, read once per transition
//     (transition.now). Never call time.Now, time.Since or a timer.
//   - Identifiers come only from injected sources or are derived from what
//     the state already holds: request and action ids are hashes of the run
//     and call ids (derivedID), step sequence numbers count in the state,
//     and tool call ids the model leaves empty are numbered by turn and
//     position. Never use crypto/rand, math/rand or a UUID library in the
//     machine; RandomIDs is for callers minting run and session ids.
//   - Nothing a transition outputs may depend on Go's map iteration order.
//     Iterate over sorted keys (sortedKeys) or over slices, and encode
//     hashed or compared JSON with CanonicalJSON.
//   - The machine does no I/O: no network, files, environment variables or
//     logging. Everything it needs arrives in its arguments (the state, the
//     transcript, the input) or from its configured hooks.
//   - The machine starts no goroutines and keeps no global mutable state.
//     A Machine holds configuration only and is safe for concurrent use;
//     per-run state lives in RunState, which Apply copies before changing
//     (cloneMutable), so a failed Apply leaves the caller's state as it was.
//     The Runner applies its run's own current steps' outcomes, whose
//     transitions cannot fail (appliesCleanly), to the run's state in
//     place after the same copy of its mutable parts, so earlier copies of
//     the state never change either.
//   - A context.Context is passed as the first parameter to whatever may
//     call a hook, and is never stored in a struct. The machine never reads
//     a deadline or a cancellation from it; cancelling a run is an input
//     (Cancel), not a context.
//   - Hooks (the pre-tool mediator, the completion policy, guardrails,
//     policy providers and filters, summarizers and compactors) are caller
//     code. They are called only through the wrappers in hooks.go, so a
//     panic becomes a documented fallback answer (a rejection, a denial,
//     fail-closed visibility, an error) and never aborts or changes a
//     transition in any other way. A hook should itself be deterministic;
//     the machine cannot make it so.
//   - Stored and wire shapes change only compatibly: JSON tags stay, new
//     fields are optional, and RunState.Format (StateFormat) and
//     Step.Format (StepFormat) change when an old reader could not read the
//     new shape. Status, kind and event type strings are part of the wire.
//   - A behaviour change shows up as a golden envelope change. Rewrite
//     goldens with go test ./core -run TestScenarios -update only when the
//     change is intended, and review the diff.
package core
