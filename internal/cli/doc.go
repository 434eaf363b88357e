// Package cli is the `baton` command line client for people: it starts
// runs and follows them live, answers the approvals and client-tool
// requests a run waits on, and lists and inspects runs — against
// `baton dev` and a deployed API alike.
//
// It is a thin client of the public HTTP API (DESIGN.md §2): it imports
// no server package of this module, only internal/sse (the reader of the
// stream route) and the standard library, which internal/app's
// architecture test enforces. Its exit codes are part of its contract
// (see the Exit constants).
package cli
