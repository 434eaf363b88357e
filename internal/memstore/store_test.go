package memstore_test

import (
	"testing"

	"github.com/baton-agents/baton/internal/memstore"
	"github.com/baton-agents/baton/internal/storetest"
)

func TestContract(t *testing.T) {
	storetest.RunContract(t, func(*testing.T) storetest.Store { return memstore.New() })
}
