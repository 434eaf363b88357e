package schedules

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/baton-agents/baton/core"
	"github.com/baton-agents/baton/internal/memstore"
	"github.com/baton-agents/baton/internal/runspec"
)

var v0 = runspec.Validator{}

func TestValidID(t *testing.T) {
	for id, want := range map[string]bool{
		"sch-00a1b2c3d4e5f6a7b8c9d0e1f2": true, "sch-1": true, "sch-A_z-9": true, "sch-Z": true, "sch-z": true, "sch-a": true, "sch-0": true, "sch-9": true, "sch-" + strings.Repeat("a", 64): true,
		"sch-": false, "sch-" + strings.Repeat("a", 65): false, "r-1": false, "sch-a.b": false, "sch-a/b": false, "sch-a b": false,
		"sch-é": false, "sch-a:b": false, "sch-a@b": false, "sch-a[b": false, "sch-a`b": false, "sch-a{b": false,
	} {
		if got := validID(id); got != want {
			t.Errorf("validID(%q) = %v, want %v", id, got, want)
		}
	}
}

func TestConfigDefaults(t *testing.T) {
	c := Config{}.withDefaults()
	if c.MinInterval != DefaultMinInterval || c.MaxPerTenant != DefaultMaxPerTenant || c.TriggerRetention != DefaultTriggerRetention || c.MisfireGrace != DefaultMisfireGrace {
		t.Fatalf("zero config: %+v", c)
	}
	c = Config{MinInterval: -1, MaxPerTenant: -1, TriggerRetention: -1, MisfireGrace: -1}.withDefaults()
	if c.MinInterval != DefaultMinInterval || c.MaxPerTenant != -1 || c.TriggerRetention != DefaultTriggerRetention || c.MisfireGrace != DefaultMisfireGrace {
		t.Fatalf("negative config: %+v", c)
	}
	set := Config{MinInterval: 5 * time.Minute, MaxPerTenant: 7, TriggerRetention: time.Hour, MisfireGrace: 2 * time.Minute}
	if got := set.withDefaults(); got != set {
		t.Fatalf("set config: %+v", got)
	}
	if s := New(nil, nil, v0, nil, nil, nil, Config{}); s.Log == nil || s.Clock == nil || s.Config.MinInterval != DefaultMinInterval {
		t.Fatalf("New's defaults: %+v", s)
	}
}

// TestRecordCapsTheReason: a reason up to maxReason bytes is kept whole;
// a longer one is cut there (on a rune boundary) and marked.
func TestRecordCapsTheReason(t *testing.T) {
	at := time.Date(2026, 5, 6, 7, 8, 0, 0, time.UTC)
	s := New(memstore.New(), nil, v0, nil, &core.FixedClock{T: at}, nil, Config{})
	for i, c := range []struct{ reason, want string }{
		{strings.Repeat("a", maxReason), strings.Repeat("a", maxReason)},
		{strings.Repeat("b", maxReason+1), strings.Repeat("b", maxReason) + "…"},
		{strings.Repeat("c", maxReason-1) + "é", strings.Repeat("c", maxReason-1) + "…"},
	} {
		got, err := s.record(context.Background(), core.Schedule{ID: "sch-1", Tenant: "acme"},
			core.Trigger{ScheduleID: "sch-1", FireTime: at.Add(time.Duration(i) * time.Minute), Outcome: core.TriggerFailed, Reason: c.reason})
		if err != nil || got.Reason != c.want {
			t.Fatalf("case %d: %d bytes %q…, %v", i, len(got.Reason), got.Reason[len(got.Reason)-5:], err)
		}
		if !got.RecordedAt.Equal(at) {
			t.Fatalf("recorded at %v", got.RecordedAt)
		}
	}
}

// TestBetweenKeepsTheLatest: a catch-up walks every fire time in the
// span, counts them, and keeps the latest keep of them, oldest first.
func TestBetweenKeepsTheLatest(t *testing.T) {
	created := time.Date(2026, 5, 6, 10, 0, 0, 0, time.UTC)
	pl, err := planOf(core.Schedule{Cron: "* * * * *", Timezone: "UTC", CreatedAt: created})
	if err != nil {
		t.Fatal(err)
	}
	got, n := pl.between(created, created.Add(150*time.Minute), 100)
	if n != 150 || len(got) != 100 || !got[0].Equal(created.Add(51*time.Minute)) || !got[99].Equal(created.Add(150*time.Minute)) {
		t.Fatalf("%d fire times, kept %d: %v … %v", n, len(got), got[0], got[len(got)-1])
	}
	if got, n = pl.between(created, created.Add(3*time.Minute), 100); n != 3 || len(got) != 3 {
		t.Fatalf("%d, %v", n, got)
	}
	if got, n = pl.between(created, created.Add(30*time.Second), 100); n != 0 || len(got) != 0 {
		t.Fatalf("%d, %v", n, got)
	}
}
