package core

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"
)

// Agent versions. An agents file, once loaded by a deployment or
// published, is an immutable version named by its content hash; every
// run records the version it started on and runs every later step on
// it. Aliases name versions for new runs: one version, a split of new
// runs between versions by weight (a canary), and tenants pinned to a
// version. The default alias always exists; a deploy points it at the
// bundled file's version.

// DefaultAlias is the alias a run request that names none starts on.
const DefaultAlias = "default"

// MaxAgentVersionBytes bounds an agents file's canonical JSON: a version
// is one stored item (DynamoDB's item limit is 400 KB).
const MaxAgentVersionBytes = 350 << 10

// AgentVersion is a published agents file.
type AgentVersion struct {
	// ID is the version's name: av_ and the first 16 hex digits of the
	// SHA-256 of File.
	ID string `json:"id"`
	// File is the agents file as canonical JSON (keys sorted, no white
	// space): two publishes of the same file are one version.
	File []byte `json:"-"`
	// Agents are the slugs the file declares, sorted.
	Agents      []string  `json:"agents"`
	PublishedAt time.Time `json:"published_at"`
	// PublishedBy is who published it: "deploy" for a deployment's
	// bundled file, else the caller (token label, JWT subject, IAM ARN).
	PublishedBy string `json:"published_by"`
}

// AgentVersionID names the version of an agents file's canonical JSON.
func AgentVersionID(canonical []byte) string {
	sum := sha256.Sum256(canonical)
	return fmt.Sprintf("av_%x", sum[:8])
}

var versionIDRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^av_[0-9a-f]{16}$`) })

// ValidAgentVersionID reports whether id is a version's name.
func ValidAgentVersionID(id string) bool { return versionIDRe().MatchString(id) }

var aliasNameRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z0-9][a-z0-9_\-]{0,62}$`) })

// ValidAliasName reports whether name may name an alias: 1 to 63
// lowercase letters, digits, _ and -, starting with a letter or digit.
func ValidAliasName(name string) bool { return aliasNameRe().MatchString(name) }

// AliasRoute is one version of an alias and the percentage of new runs
// it gets.
type AliasRoute struct {
	Version string `json:"version"`
	Weight  int    `json:"weight"`
}

// AgentAlias names the version new runs start on.
type AgentAlias struct {
	Name string `json:"name"`
	// Routes split new runs between versions by weight (summing to 100);
	// one route of weight 100 is a plain pointer.
	Routes []AliasRoute `json:"routes"`
	// Tenants pins tenants to a version, whatever the routes say.
	Tenants map[string]string `json:"tenants,omitempty"`
	// Deployed is the version the last deploy pointed this alias at
	// (default only): a cold start moves the alias only when its bundled
	// file differs, so a rollback made through the API stays until the
	// next deploy.
	Deployed  string    `json:"deployed,omitempty"`
	UpdatedAt time.Time `json:"updated_at"`
	UpdatedBy string    `json:"updated_by"`
	// Revision counts the alias's changes; a write names the revision it
	// read (0: the alias is new), so two concurrent changes never both
	// land.
	Revision int64 `json:"revision"`
}

// Validate checks an alias: its name, routes of known form whose weights
// sum to 100 with no version twice, and well-formed pins.
func (a AgentAlias) Validate() error {
	if !ValidAliasName(a.Name) {
		return invalid("alias name %q: want 1 to 63 lowercase letters, digits, _ or -", a.Name)
	}
	if len(a.Routes) == 0 {
		return invalid("alias %s: routes must name at least one version", a.Name)
	}
	if len(a.Routes) > 10 {
		return invalid("alias %s: at most 10 routes", a.Name)
	}
	sum := 0
	for i, r := range a.Routes {
		if !ValidAgentVersionID(r.Version) {
			return invalid("alias %s: routes[%d].version %q is not a version id (av_ and 16 hex digits)", a.Name, i, r.Version)
		}
		if r.Weight < 1 || r.Weight > 100 {
			return invalid("alias %s: routes[%d].weight must be 1 to 100, got %d", a.Name, i, r.Weight)
		}
		if slices.ContainsFunc(a.Routes[:i], func(o AliasRoute) bool { return o.Version == r.Version }) {
			return invalid("alias %s: version %s is routed twice", a.Name, r.Version)
		}
		sum += r.Weight
	}
	if sum != 100 {
		return invalid("alias %s: route weights must sum to 100, got %d", a.Name, sum)
	}
	if len(a.Tenants) > 1000 {
		return invalid("alias %s: at most 1000 tenant pins", a.Name)
	}
	for t, v := range a.Tenants {
		if strings.TrimSpace(t) == "" || len(t) > 128 {
			return invalid("alias %s: tenants: a tenant name of 1 to 128 characters, got %q", a.Name, t)
		}
		if !ValidAgentVersionID(v) {
			return invalid("alias %s: tenants[%s] %q is not a version id", a.Name, t, v)
		}
	}
	return nil
}

// Versions lists every version the alias names (routes, then pins),
// without repeats.
func (a AgentAlias) Versions() []string {
	var out []string
	for _, r := range a.Routes {
		if !slices.Contains(out, r.Version) {
			out = append(out, r.Version)
		}
	}
	pins := make([]string, 0, len(a.Tenants))
	for _, v := range a.Tenants {
		pins = append(pins, v)
	}
	sort.Strings(pins)
	for _, v := range pins {
		if !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	return out
}

// Pick is the version a new run gets: the tenant's pin, else the route
// whose share of [0, 100) holds the run id's bucket. The bucket is a
// hash of the run id, so the choice is deterministic per run (a retried
// start picks the same version) and uniform over run ids.
func (a AgentAlias) Pick(tenant, runID string) string {
	if v, ok := a.Tenants[tenant]; ok {
		return v
	}
	if len(a.Routes) == 1 {
		return a.Routes[0].Version
	}
	sum := sha256.Sum256([]byte("alias:" + a.Name + ":" + runID))
	bucket := int(binary.BigEndian.Uint64(sum[:8]) % 100)
	for _, r := range a.Routes {
		if bucket < r.Weight {
			return r.Version
		}
		bucket -= r.Weight
	}
	return a.Routes[len(a.Routes)-1].Version
}

// AgentAuditEntry records one publish or alias change; the store writes
// it with the change, all or nothing.
type AgentAuditEntry struct {
	At time.Time `json:"at"`
	By string    `json:"by"`
	// Action is AuditPublish or AuditAlias.
	Action  string `json:"action"`
	Version string `json:"version,omitempty"`
	Alias   string `json:"alias,omitempty"`
	// Before and After are the alias around an alias change (Before nil
	// when it was created).
	Before *AgentAlias `json:"before,omitempty"`
	After  *AgentAlias `json:"after,omitempty"`
}

// Agent audit actions.
const (
	AuditPublish = "publish"
	AuditAlias   = "alias"
)

// AgentVersionStore keeps a deployment's agent versions and aliases.
// Versions are never changed once stored; aliases change by revision.
type AgentVersionStore interface {
	// PutAgentVersion stores v unless a version of that id exists, and
	// returns the stored one (created false when it was there already).
	// A file larger than MaxAgentVersionBytes is ErrInvalidInput.
	PutAgentVersion(ctx context.Context, v AgentVersion) (stored AgentVersion, created bool, err error)
	// GetAgentVersion returns a version with its file; ErrNotFound when
	// there is none.
	GetAgentVersion(ctx context.Context, id string) (AgentVersion, error)
	// ListAgentVersions lists the versions newest first, without their
	// files.
	ListAgentVersions(ctx context.Context) ([]AgentVersion, error)
	// GetAgentAlias returns an alias; ErrNotFound when there is none.
	GetAgentAlias(ctx context.Context, name string) (AgentAlias, error)
	// PutAgentAlias stores a with Revision set to prev+1 when the stored
	// alias's revision is prev (0: none is stored), else ErrConflict.
	PutAgentAlias(ctx context.Context, a AgentAlias, prev int64) (AgentAlias, error)
	// ListAgentAliases lists the aliases by name.
	ListAgentAliases(ctx context.Context) ([]AgentAlias, error)
	// ListAgentAudit lists the latest limit audit entries, newest first.
	// PutAgentVersion (when it creates) and PutAgentAlias each write one
	// with their change.
	ListAgentAudit(ctx context.Context, limit int) ([]AgentAuditEntry, error)
}
