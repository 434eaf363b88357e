package memstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/baton-agents/baton/core"

	"github.com/baton-agents/baton/internal/memstore"
	"github.com/baton-agents/baton/internal/storetest"
)

func TestContract(t *testing.T) {
	storetest.RunContract(t, func(*testing.T) storetest.Store { return memstore.New() })
}

// TestChanged: a run's change channel closes at its next delta write and
// at its next commit, and not for another run's.
func TestChanged(t *testing.T) {
	s := memstore.New()
	ctx := context.Background()
	c := s.Changed("r-1")
	other := s.Changed("r-2")
	if err := s.PutDeltas(ctx, core.DeltaBatch{RunID: "r-1", ExpiresAt: time.Now().Add(time.Minute), Deltas: []core.TokenDelta{{Text: "x"}}}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-c:
	default:
		t.Fatal("a delta write did not signal")
	}
	select {
	case <-other:
		t.Fatal("another run's write signalled")
	default:
	}
	if s.Changed("r-1") == c {
		t.Fatal("a closed channel was handed out again")
	}
}
