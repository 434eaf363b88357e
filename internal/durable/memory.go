package durable

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/baton-agents/baton/core"
)

// ErrMemorySubject refuses a run request naming a memory subject other
// than the caller's own without the memories:subject scope.
var ErrMemorySubject = errors.New("naming another memory subject needs the " + core.ScopeMemoriesSubject + " scope")

// memorySubject settles the subject of a run's memory scope: the
// request's memory_subject (another than the caller's own only with the
// memories:subject scope), a child run's parent's, or the caller's own
// identity. A run of an agent with memory whose caller has no identity
// and names no subject is refused: no run shares an unnamed scope.
func memorySubject(cfg *core.RunConfig, req StartRequest) error {
	p := cfg.Memory
	if p == nil {
		return nil
	}
	own := core.DefaultMemorySubject(req.Principal)
	subject := p.Subject
	switch {
	case req.inherited && req.memorySubject != "":
		subject = req.memorySubject
	case req.Overrides.MemorySubject != nil:
		if err := core.ValidateSubject(subject); err != nil {
			return err
		}
		if subject != own && (req.Principal == nil || !slices.Contains(req.Principal.CapabilityCeiling, core.ScopeMemoriesSubject)) {
			return fmt.Errorf("%w (memory_subject %q)", ErrMemorySubject, subject)
		}
	case subject == "":
		if own == "" {
			return fmt.Errorf("%w: agent %s has memory, and the caller has no identity to scope it by: set memory_subject", core.ErrInvalidInput, cfg.Agent)
		}
		subject = own
	}
	cp := *p
	cp.Subject = subject
	cfg.Memory = &cp
	return nil
}

// parentSubject is the subject a child run of a run with memory policy
// p inherits: the parent's end user, never an agent-wide scope's.
func parentSubject(p *core.MemoryPolicy) string {
	if p == nil || strings.HasPrefix(p.Subject, core.AgentSubjectPrefix) {
		return ""
	}
	return p.Subject
}
