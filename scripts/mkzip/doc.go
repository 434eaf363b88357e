// Command mkzip writes a reproducible Lambda deployment zip: entries in a
// fixed order, a fixed modification time, and fixed permissions
// (bootstrap executable), so the same inputs always give the same bytes.
//
//	go run ./scripts/mkzip -o build/api.zip bootstrap=build/api/bootstrap agents.json=cmd/baton/agents.demo.json
package main
