// Package memstore holds the in-memory implementations of core's storage
// and queue ports: the embedded stores of `baton dev` and the reference
// implementation every AWS adapter is checked against (the same contract
// suites run on both).
package memstore
