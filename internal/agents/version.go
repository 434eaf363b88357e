package agents

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"

	"github.com/baton-agents/baton/core"
)

// Canonical is an agents file's canonical JSON (keys sorted, no white
// space, numbers as written): the bytes its version is named by, so two
// files that differ only in layout are one version.
func Canonical(b []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("decode: %w", err)
	}
	return core.CanonicalJSON(v)
}

// NewVersion parses and validates an agents file and returns it as a
// version published at by by, with its registry.
func NewVersion(b []byte, at time.Time, by string) (core.AgentVersion, *Registry, error) {
	reg, err := Parse(b)
	if err != nil {
		return core.AgentVersion{}, nil, err
	}
	canon, err := Canonical(b)
	if err != nil {
		return core.AgentVersion{}, nil, err
	}
	return core.AgentVersion{ID: core.AgentVersionID(canon), File: canon, Agents: reg.Slugs(), PublishedAt: at.UTC(), PublishedBy: by}, reg, nil
}
