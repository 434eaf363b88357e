package cronspec

import (
	"testing"
	"time"
)

// TestDaylightSaving: a wall-clock time the clocks skip does not fire; one
// they repeat fires once, at its first occurrence; rate() ignores both.
//
// Europe/Lisbon 2026: 29 March 01:00 WET becomes 02:00 WEST (at 01:00Z);
// 25 October 02:00 WEST becomes 01:00 WET (at 01:00Z).
// America/New_York 2026: 8 March 02:00 EST becomes 03:00 EDT (at 07:00Z);
// 1 November 02:00 EDT becomes 01:00 EST (at 06:00Z).
func TestDaylightSaving(t *testing.T) {
	for _, tc := range []struct {
		name, zone, expr, anchor, after string
		want                            []string
	}{
		// Lisbon, spring forward.
		{"01:30 is skipped on 29 March", "Europe/Lisbon", "30 1 * * *", "", "2026-03-27T12:00:00Z",
			[]string{"2026-03-28T01:30:00Z", "2026-03-30T00:30:00Z"}},
		{"02:30 exists on 29 March", "Europe/Lisbon", "30 2 * * *", "", "2026-03-27T12:00:00Z",
			[]string{"2026-03-28T02:30:00Z", "2026-03-29T01:30:00Z", "2026-03-30T01:30:00Z"}},
		{"*/30 jumps from 00:30 WET to 02:00 WEST", "Europe/Lisbon", "*/30 * * * *", "", "2026-03-28T23:45:00Z",
			[]string{"2026-03-29T00:00:00Z", "2026-03-29T00:30:00Z", "2026-03-29T01:00:00Z", "2026-03-29T01:30:00Z"}},
		{"every minute runs on through the gap", "Europe/Lisbon", "* * * * *", "", "2026-03-29T00:58:00Z",
			[]string{"2026-03-29T00:59:00Z", "2026-03-29T01:00:00Z", "2026-03-29T01:01:00Z"}},
		{"cron(…) skips the same", "Europe/Lisbon", "cron(30 1 * * ? *)", "", "2026-03-27T12:00:00Z",
			[]string{"2026-03-28T01:30:00Z", "2026-03-30T00:30:00Z"}},
		{"rate(1 hour) keeps its hours", "Europe/Lisbon", "rate(1 hour)", "2026-03-28T22:00:00Z", "2026-03-28T23:30:00Z",
			[]string{"2026-03-29T00:00:00Z", "2026-03-29T01:00:00Z", "2026-03-29T02:00:00Z"}},
		// Lisbon, fall back.
		{"01:30 fires once on 25 October, as WEST", "Europe/Lisbon", "30 1 * * *", "", "2026-10-24T12:00:00Z",
			[]string{"2026-10-25T00:30:00Z", "2026-10-26T01:30:00Z"}},
		{"*/30 does not repeat 01:00 and 01:30", "Europe/Lisbon", "*/30 * * * *", "", "2026-10-24T23:45:00Z",
			[]string{"2026-10-25T00:00:00Z", "2026-10-25T00:30:00Z", "2026-10-25T02:00:00Z", "2026-10-25T02:30:00Z"}},
		{"from inside the repeat (01:10 WET)", "Europe/Lisbon", "*/30 * * * *", "", "2026-10-25T01:10:00Z",
			[]string{"2026-10-25T02:00:00Z"}},
		{"from inside the repeat, 01:30 is next day's", "Europe/Lisbon", "30 1 * * *", "", "2026-10-25T01:10:00Z",
			[]string{"2026-10-26T01:30:00Z"}},
		{"from the first 01:10 (WEST)", "Europe/Lisbon", "*/30 * * * *", "", "2026-10-25T00:10:00Z",
			[]string{"2026-10-25T00:30:00Z", "2026-10-25T02:00:00Z"}},
		{"rate(1 hour) fires in both 01:00s", "Europe/Lisbon", "rate(1 hour)", "2026-10-24T22:00:00Z", "2026-10-24T23:30:00Z",
			[]string{"2026-10-25T00:00:00Z", "2026-10-25T01:00:00Z", "2026-10-25T02:00:00Z"}},
		// New York, spring forward.
		{"02:30 is skipped on 8 March", "America/New_York", "30 2 * * *", "", "2026-03-07T00:00:00Z",
			[]string{"2026-03-07T07:30:00Z", "2026-03-09T06:30:00Z"}},
		{"01:30 is not", "America/New_York", "30 1 * * *", "", "2026-03-07T00:00:00Z",
			[]string{"2026-03-07T06:30:00Z", "2026-03-08T06:30:00Z", "2026-03-09T05:30:00Z"}},
		{"*/30 jumps from 01:30 EST to 03:00 EDT", "America/New_York", "*/30 * * * *", "", "2026-03-08T06:15:00Z",
			[]string{"2026-03-08T06:30:00Z", "2026-03-08T07:00:00Z", "2026-03-08T07:30:00Z"}},
		{"rate(1 hour) across 8 March", "America/New_York", "rate(1 hour)", "2026-03-08T05:00:00Z", "2026-03-08T05:30:00Z",
			[]string{"2026-03-08T06:00:00Z", "2026-03-08T07:00:00Z", "2026-03-08T08:00:00Z"}},
		// New York, fall back.
		{"01:30 fires once on 1 November, as EDT", "America/New_York", "30 1 * * *", "", "2026-10-31T12:00:00Z",
			[]string{"2026-11-01T05:30:00Z", "2026-11-02T06:30:00Z"}},
		{"02:30 fires once", "America/New_York", "30 2 * * *", "", "2026-10-31T12:00:00Z",
			[]string{"2026-11-01T07:30:00Z", "2026-11-02T07:30:00Z"}},
		{"*/30 on 1 November", "America/New_York", "*/30 * * * *", "", "2026-11-01T04:45:00Z",
			[]string{"2026-11-01T05:00:00Z", "2026-11-01T05:30:00Z", "2026-11-01T07:00:00Z", "2026-11-01T07:30:00Z"}},
		{"rate(1 hour) across 1 November", "America/New_York", "rate(1 hour)", "2026-11-01T03:00:00Z", "2026-11-01T04:30:00Z",
			[]string{"2026-11-01T05:00:00Z", "2026-11-01T06:00:00Z", "2026-11-01T07:00:00Z"}},
		// Dublin's tzdata has "negative" daylight saving (IST is standard
		// time, GMT the winter offset): the same rules by offset.
		{"Dublin spring", "Europe/Dublin", "30 1 * * *", "", "2026-03-27T12:00:00Z",
			[]string{"2026-03-28T01:30:00Z", "2026-03-30T00:30:00Z"}},
		{"Dublin autumn", "Europe/Dublin", "30 1 * * *", "", "2026-10-24T12:00:00Z",
			[]string{"2026-10-25T00:30:00Z", "2026-10-26T01:30:00Z"}},
		// Lord Howe moves its clocks by 30 minutes: 4 October 2026 02:00
		// becomes 02:30 (+10:30 to +11): 02:15 is skipped, 02:45 is not.
		{"half-hour gap", "Australia/Lord_Howe", "15,45 2 * * *", "", "2026-10-02T16:00:00Z",
			[]string{"2026-10-02T16:15:00Z", "2026-10-03T15:45:00Z", "2026-10-04T15:15:00Z", "2026-10-04T15:45:00Z"}},
	} {
		var anchor time.Time
		if tc.anchor != "" {
			anchor = at(t, tc.anchor)
		}
		s, err := Parse(tc.expr, zone(t, tc.zone), anchor)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		checkFires(t, tc.name+" ("+tc.expr+")", s, at(t, tc.after), tc.want)
	}
}
