package durable

import (
	"testing"
	"time"
)

// TestLimitsDefaults: each limit left at zero (or negative) takes its
// documented default, and a limit that is set is kept; a negative
// transcript cache size turns the cache off.
func TestLimitsDefaults(t *testing.T) {
	defaults := Limits{StallAfter: 2 * time.Minute, IntentLease: 5 * time.Minute, MaxReceives: 5, CommitAttempts: 8,
		TranscriptCacheBytes: 64 << 20, DeltaWindow: 250 * time.Millisecond, DeltaBatchDeltas: 18, DeltaBatchBytes: 4 << 10,
		DeltaTTL: 10 * time.Minute, NotifyAfter: 30 * time.Second, CallbackAttempts: 6, CallbackBackoff: 30 * time.Second,
		RemoteFollow: 2 * time.Second, RemoteFollowMax: time.Minute}
	set := Limits{StallAfter: time.Second, IntentLease: 2 * time.Second, MaxReceives: 1, MaxActiveRuns: 3, CommitAttempts: 1,
		TranscriptCacheBytes: 1, DeltaWindow: time.Millisecond, DeltaBatchDeltas: 1, DeltaBatchBytes: 1,
		DeltaTTL: 3 * time.Second, NotifyAfter: 4 * time.Second, CallbackAttempts: 1, CallbackBackoff: 5 * time.Second,
		RemoteFollow: 6 * time.Second, RemoteFollowMax: 7 * time.Second}
	negative := Limits{StallAfter: -1, IntentLease: -1, MaxReceives: -1, CommitAttempts: -1, TranscriptCacheBytes: -1,
		DeltaWindow: -1, DeltaBatchDeltas: -1, DeltaBatchBytes: -1, DeltaTTL: -1, NotifyAfter: -1, CallbackAttempts: -1,
		CallbackBackoff: -1, RemoteFollow: -1, RemoteFollowMax: -1}
	offCache := defaults
	offCache.TranscriptCacheBytes = -1
	cases := []struct {
		name    string
		in, out Limits
	}{
		{"zero", Limits{}, defaults},
		{"set", set, set},
		{"negative", negative, offCache},
		{"a follow max under the follow", Limits{RemoteFollow: 90 * time.Second, RemoteFollowMax: time.Minute},
			func() Limits {
				l := defaults
				l.RemoteFollow, l.RemoteFollowMax = 90*time.Second, 90*time.Second
				return l
			}()},
		{"a follow max at the follow", Limits{RemoteFollow: 3 * time.Second, RemoteFollowMax: 3 * time.Second},
			func() Limits {
				l := defaults
				l.RemoteFollow, l.RemoteFollowMax = 3*time.Second, 3*time.Second
				return l
			}()},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.in.withDefaults(); got != tc.out {
				t.Fatalf("\n got %+v\nwant %+v", got, tc.out)
			}
		})
	}
}

// TestRemoteWait: the wait before a parked remote task's next follow-up:
// RemoteFollow, doubling per follow-up, at most RemoteFollowMax.
func TestRemoteWait(t *testing.T) {
	l := Limits{}.withDefaults() // 2s, at most 1m
	for follows, want := range map[int]time.Duration{0: 2 * time.Second, 1: 4 * time.Second, 2: 8 * time.Second,
		4: 32 * time.Second, 5: time.Minute, 6: time.Minute, 100: time.Minute} {
		if got := l.remoteWait(follows); got != want {
			t.Errorf("after %d follow-ups: %v, want %v", follows, got, want)
		}
	}
	l = Limits{RemoteFollow: 3 * time.Second, RemoteFollowMax: 3 * time.Second}.withDefaults()
	if got := l.remoteWait(3); got != 3*time.Second {
		t.Errorf("a follow at its max: %v", got)
	}
}
