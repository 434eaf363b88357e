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
// and ID sources are ports supplied by the caller.
package core
