package durable

import (
	"context"
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

// MemoryService is the deployment's memory service (package memory).
type MemoryService interface {
	core.MemoryRecaller
	core.MemoryExtractor
}

// Memory extraction. The commit that completes a run of an agent with
// extraction stores, with it, an outbox record (core.Notification.Memory)
// whose delivery sends the run's StepMemoryExtract message; the sweeper
// delivers a record left unsent. The worker hands that message to
// ExtractMemories, which asks the memory service to extract the run:
// its write is keyed by the run (core.MemoryExtractID), so a second
// delivery of the record, or of the message, writes nothing. The
// outcome is then recorded on the finished run (memory_written), once.

// extractionRecord is the outbox record of a run's extraction: on the
// commit that completes a run whose memory policy extracts.
func extractionRecord(prev core.RunState, out core.Output) []core.Notification {
	st := out.State
	if p := st.Config.Memory; p == nil || !p.Extract || st.Status != core.StatusCompleted || core.IsTerminal(prev.Status) {
		return nil
	}
	return []core.Notification{{ID: fmt.Sprintf("%s:%d:memory", st.RunID, st.Version), RunID: st.RunID, Time: st.UpdatedAt,
		Memory: &core.MemoryExtraction{Subject: st.Config.Memory.Subject}}}
}

// sendExtraction delivers an extraction record: the run's
// StepMemoryExtract message, in a group of its own (the run's session
// goes on without waiting for it).
func (e *Runner) sendExtraction(ctx context.Context, n core.Notification) error {
	step := core.Step{Kind: core.StepMemoryExtract, Format: core.StepFormat, RunID: n.RunID}
	return e.Queue.Enqueue(ctx, []core.QueuedStep{{Step: step, Group: "memory:" + n.RunID, DedupID: n.ID}})
}

// ExtractMemories handles a run's StepMemoryExtract message: it extracts
// the run (once) and records memory_written on it. An error retries the
// message; on its last receive the failure is recorded instead.
func (e *Runner) ExtractMemories(ctx context.Context, step core.Step, d Attempt) error {
	log := e.Log.With("run_id", step.RunID, "step_kind", step.Kind)
	rec, err := e.Store.LoadRun(ctx, step.RunID)
	if errors.Is(err, core.ErrNotFound) {
		log.ErrorContext(ctx, "dropping the extraction of an unknown run")
		return nil
	}
	if err != nil {
		return fmt.Errorf("load run %s: %w", step.RunID, err)
	}
	st := rec.State
	p := st.Config.Memory
	if p == nil || !p.Extract || st.Extracted || st.Status != core.StatusCompleted {
		return nil
	}
	if e.Memory == nil {
		log.ErrorContext(ctx, "a memory extraction reached a process without a memory service; dropping it")
		return nil
	}
	tr, err := e.transcript(ctx, rec.Tenant, st)
	if err != nil {
		return err
	}
	var own []core.Message
	for _, m := range tr {
		if m.Seq >= st.FirstMsgSeq && m.Metadata[core.MetaSource] != core.MessagesMemory {
			own = append(own, m)
		}
	}
	written, err := e.Memory.Extract(ctx, core.ExtractRequest{
		Scope: core.MemoryScope{Tenant: rec.Tenant, Subject: p.Subject}, RunID: st.RunID,
		Agent: st.Config.Agent, AgentVersion: st.Config.AgentVersion, Model: st.Config.Model,
		Since: st.CreatedAt, Messages: own,
	})
	if err != nil {
		if d.ReceiveCount < e.Limits.MaxReceives {
			log.WarnContext(ctx, "memory extraction failed; retrying", "err", err, "receive_count", d.ReceiveCount)
			return err
		}
		log.ErrorContext(ctx, "memory extraction failed on the last receive; recording it", "err", err)
		written = core.MemoryWritten{Error: err.Error()}
	}
	written.Source = core.MemoryFromExtraction
	_, err = e.apply(ctx, rec, written)
	if err == nil || errors.Is(err, core.ErrNothingToApply) {
		return nil
	}
	return err
}
