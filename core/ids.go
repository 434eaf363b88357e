package core

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"sync"
)

// RandomIDs mints identifiers from crypto/rand: "<prefix>-<26 hex chars>".
type RandomIDs struct{}

var _ IDSource = RandomIDs{}

// NewID returns a fresh random identifier.
func (RandomIDs) NewID(prefix string) string {
	var b [13]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(fmt.Sprintf("crypto/rand: %v", err))
	}
	return prefix + "-" + hex.EncodeToString(b[:])
}

// SequentialIDs mints "<prefix>-1", "<prefix>-2", … per prefix; for tests.
type SequentialIDs struct {
	mu sync.Mutex
	n  map[string]int
}

var _ IDSource = (*SequentialIDs)(nil)

// NewID returns the next identifier for prefix.
func (s *SequentialIDs) NewID(prefix string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.n == nil {
		s.n = map[string]int{}
	}
	s.n[prefix]++
	return fmt.Sprintf("%s-%d", prefix, s.n[prefix])
}

func derivedID(prefix, runID, callID string) string {
	return prefix + "_" + digest(10, prefix, runID, callID)
}

// digest is the first n bytes, in hex, of the SHA-256 of parts joined by
// NUL: the stable part of an id derived from others.
func digest(n int, parts ...string) string {
	sum := sha256.Sum256([]byte(strings.Join(parts, "\x00")))
	return hex.EncodeToString(sum[:n])
}
