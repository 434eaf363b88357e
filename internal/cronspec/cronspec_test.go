package cronspec

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"
)

func zone(t testing.TB, name string) *time.Location {
	t.Helper()
	loc, err := LoadZone(name)
	if err != nil {
		t.Fatal(err)
	}
	return loc
}

func at(t testing.TB, s string) time.Time {
	t.Helper()
	v, err := time.Parse(time.RFC3339, s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// fires is the first n fire times after `after`.
func fires(s *Spec, after time.Time, n int) []time.Time {
	var out []time.Time
	for len(out) < n {
		next, ok := s.Next(after)
		if !ok {
			break
		}
		out = append(out, next)
		after = next
	}
	return out
}

func checkFires(t *testing.T, name string, s *Spec, after time.Time, want []string) {
	t.Helper()
	got := fires(s, after, len(want))
	if len(got) != len(want) {
		t.Errorf("%s: %d fire times after %s (%v), want %d", name, len(got), after.Format(time.RFC3339), got, len(want))
		return
	}
	for i, g := range got {
		w := at(t, want[i])
		if !g.Equal(w) {
			t.Errorf("%s: fire time %d after %s is %s, want %s", name, i, after.Format(time.RFC3339), g.Format(time.RFC3339), w.Format(time.RFC3339))
		}
		if g.Location() != time.UTC || g.Second() != 0 || g.Nanosecond() != 0 {
			t.Errorf("%s: fire time %s is not minute-precise UTC", name, g)
		}
	}
}

// TestFireTimes: each syntax fires at the times it says, across
// month and year ends and leap days.
func TestFireTimes(t *testing.T) {
	const jan1 = "2026-01-01T00:00:00Z"
	for _, tc := range []struct {
		expr, zone, after string
		want              []string
	}{
		{"* * * * *", "", jan1, []string{"2026-01-01T00:01:00Z", "2026-01-01T00:02:00Z"}},
		{"*/15 * * * *", "", jan1, []string{"2026-01-01T00:15:00Z", "2026-01-01T00:30:00Z", "2026-01-01T00:45:00Z", "2026-01-01T01:00:00Z"}},
		{"5-10/2 * * * *", "", jan1, []string{"2026-01-01T00:05:00Z", "2026-01-01T00:07:00Z", "2026-01-01T00:09:00Z", "2026-01-01T01:05:00Z"}},
		{"10/20 3 * * *", "", jan1, []string{"2026-01-01T03:10:00Z", "2026-01-01T03:30:00Z", "2026-01-01T03:50:00Z", "2026-01-02T03:10:00Z"}},
		{"0,30 9-10 * * *", "", "2026-01-01T09:45:00Z", []string{"2026-01-01T10:00:00Z", "2026-01-01T10:30:00Z", "2026-01-02T09:00:00Z"}},
		// 1 January 2026 is a Thursday.
		{"0 9 * * MON-FRI", "", jan1, []string{"2026-01-01T09:00:00Z", "2026-01-02T09:00:00Z", "2026-01-05T09:00:00Z"}},
		{"0 9 * * mon-fri", "", jan1, []string{"2026-01-01T09:00:00Z", "2026-01-02T09:00:00Z", "2026-01-05T09:00:00Z"}},
		{"0 0 * * 7", "", jan1, []string{"2026-01-04T00:00:00Z", "2026-01-11T00:00:00Z"}},
		{"0 0 * * 0", "", jan1, []string{"2026-01-04T00:00:00Z", "2026-01-11T00:00:00Z"}},
		{"0 0 * * SUN", "", jan1, []string{"2026-01-04T00:00:00Z", "2026-01-11T00:00:00Z"}},
		{"0 0 * * 0,7", "", jan1, []string{"2026-01-04T00:00:00Z", "2026-01-11T00:00:00Z"}},
		{"0 0 * * FRI-SUN", "", jan1, []string{"2026-01-02T00:00:00Z", "2026-01-03T00:00:00Z", "2026-01-04T00:00:00Z", "2026-01-09T00:00:00Z"}},
		{"0 0 * * 5-7", "", jan1, []string{"2026-01-02T00:00:00Z", "2026-01-03T00:00:00Z", "2026-01-04T00:00:00Z", "2026-01-09T00:00:00Z"}},
		{"0 0 * * */2", "", jan1, []string{"2026-01-03T00:00:00Z", "2026-01-04T00:00:00Z", "2026-01-06T00:00:00Z"}},
		{"0 12 1 JAN,jul *", "", jan1, []string{"2026-01-01T12:00:00Z", "2026-07-01T12:00:00Z", "2027-01-01T12:00:00Z"}},
		{"0 0 1/10 * *", "", jan1, []string{"2026-01-11T00:00:00Z", "2026-01-21T00:00:00Z", "2026-01-31T00:00:00Z", "2026-02-01T00:00:00Z"}},
		{"30 23 31 * *", "", jan1, []string{"2026-01-31T23:30:00Z", "2026-03-31T23:30:00Z", "2026-05-31T23:30:00Z", "2026-07-31T23:30:00Z", "2026-08-31T23:30:00Z"}},
		{"59 23 31 12 *", "", "2026-12-31T23:59:00Z", []string{"2027-12-31T23:59:00Z", "2028-12-31T23:59:00Z"}},
		{"0 0 1 1 *", "", "2026-12-31T23:59:59Z", []string{"2027-01-01T00:00:00Z"}},
		{"0 0 29 2 *", "", jan1, []string{"2028-02-29T00:00:00Z", "2032-02-29T00:00:00Z"}},
		{"0 0 28-31 2 *", "", jan1, []string{"2026-02-28T00:00:00Z", "2027-02-28T00:00:00Z", "2028-02-28T00:00:00Z", "2028-02-29T00:00:00Z"}},
		{"0 0 1 * *", "America/New_York", jan1, []string{"2026-01-01T05:00:00Z", "2026-02-01T05:00:00Z"}},
		{"0 9 * * *", "Asia/Kolkata", jan1, []string{"2026-01-01T03:30:00Z", "2026-01-02T03:30:00Z"}},

		{"cron(0 10 * * ? *)", "", jan1, []string{"2026-01-01T10:00:00Z", "2026-01-02T10:00:00Z"}},
		{"cron(0 18 ? * MON-FRI *)", "", jan1, []string{"2026-01-01T18:00:00Z", "2026-01-02T18:00:00Z", "2026-01-05T18:00:00Z"}},
		{"cron(0 0 ? * 1 *)", "", jan1, []string{"2026-01-04T00:00:00Z", "2026-01-11T00:00:00Z"}},
		{"cron(0 0 ? * 6,7 *)", "", jan1, []string{"2026-01-02T00:00:00Z", "2026-01-03T00:00:00Z", "2026-01-09T00:00:00Z"}},
		{"cron(0/20 8-9 ? * 2 2026)", "", jan1, []string{"2026-01-05T08:00:00Z", "2026-01-05T08:20:00Z", "2026-01-05T08:40:00Z", "2026-01-05T09:00:00Z"}},
		{"cron(0 0 1 */3 ? 2026-2027)", "", jan1, []string{"2026-04-01T00:00:00Z", "2026-07-01T00:00:00Z", "2026-10-01T00:00:00Z", "2027-01-01T00:00:00Z", "2027-04-01T00:00:00Z", "2027-07-01T00:00:00Z", "2027-10-01T00:00:00Z"}},
		{"CRON( 15 10 ? * 6L 2026 )", "", jan1, []string{"2026-01-30T10:15:00Z", "2026-02-27T10:15:00Z"}},
		{"cron(0 0 L * ? *)", "", jan1, []string{"2026-01-31T00:00:00Z", "2026-02-28T00:00:00Z", "2026-03-31T00:00:00Z", "2026-04-30T00:00:00Z"}},
		{"cron(0 0 L 2 ? *)", "", jan1, []string{"2026-02-28T00:00:00Z", "2027-02-28T00:00:00Z", "2028-02-29T00:00:00Z"}},
		{"cron(0 0 29 2 ? 2028/4)", "", jan1, []string{"2028-02-29T00:00:00Z", "2032-02-29T00:00:00Z"}},

		{"rate(5 minutes)", "", "2025-12-31T00:00:00Z", []string{"2026-01-01T00:00:00Z", "2026-01-01T00:05:00Z", "2026-01-01T00:10:00Z"}},
		{"rate(1 day)", "", "2026-01-05T00:00:00Z", []string{"2026-01-06T00:00:00Z", "2026-01-07T00:00:00Z"}},
		{"rate(2 hours)", "", "2026-01-01T03:00:00Z", []string{"2026-01-01T04:00:00Z", "2026-01-01T06:00:00Z"}},
		{"rate(1 minute)", "", "2026-01-01T00:00:00Z", []string{"2026-01-01T00:01:00Z"}},
	} {
		// The anchor has seconds: a rate's anchor is truncated to the minute.
		s, err := Parse(tc.expr, zone(t, tc.zone), at(t, "2026-01-01T00:00:30Z"))
		if err != nil {
			t.Errorf("%q: %v", tc.expr, err)
			continue
		}
		checkFires(t, tc.expr, s, at(t, tc.after), tc.want)
	}
}

// TestDaySpecials: cron(…)'s L, LW, nW, nL and n#k.
func TestDaySpecials(t *testing.T) {
	const jan1 = "2026-01-01T00:00:00Z"
	for _, tc := range []struct {
		expr, after string
		want        []string
	}{
		// 31 January 2026 is a Saturday, 28 February a Saturday, 31 May a Sunday.
		{"cron(0 0 LW * ? *)", jan1, []string{"2026-01-30T00:00:00Z", "2026-02-27T00:00:00Z", "2026-03-31T00:00:00Z", "2026-04-30T00:00:00Z", "2026-05-29T00:00:00Z"}},
		// 15 February and 15 March 2026 are Sundays, 15 August a Saturday.
		{"cron(0 0 15W * ? *)", jan1, []string{"2026-01-15T00:00:00Z", "2026-02-16T00:00:00Z", "2026-03-16T00:00:00Z", "2026-04-15T00:00:00Z"}},
		{"cron(0 0 15W 8 ? *)", jan1, []string{"2026-08-14T00:00:00Z"}},
		// 1 August 2026 is a Saturday: Monday the 3rd (not July 31).
		{"cron(0 0 1W * ? *)", "2026-07-15T00:00:00Z", []string{"2026-08-03T00:00:00Z", "2026-09-01T00:00:00Z"}},
		// 31W: only months with a 31st; Sunday 31 May moves back to Friday 29.
		{"cron(0 0 31W * ? *)", jan1, []string{"2026-01-30T00:00:00Z", "2026-03-31T00:00:00Z", "2026-05-29T00:00:00Z", "2026-07-31T00:00:00Z"}},
		{"cron(0 0 ? * 3#2 *)", jan1, []string{"2026-01-13T00:00:00Z", "2026-02-10T00:00:00Z", "2026-03-10T00:00:00Z"}},
		{"cron(0 0 ? * SUN#1 *)", jan1, []string{"2026-01-04T00:00:00Z", "2026-02-01T00:00:00Z", "2026-03-01T00:00:00Z"}},
		// Fifth Mondays: only some months have one.
		{"cron(0 0 ? * 2#5 *)", jan1, []string{"2026-03-30T00:00:00Z", "2026-06-29T00:00:00Z", "2026-08-31T00:00:00Z"}},
		{"cron(0 0 ? * 6L *)", jan1, []string{"2026-01-30T00:00:00Z", "2026-02-27T00:00:00Z", "2026-03-27T00:00:00Z"}},
		{"cron(0 0 ? * FRIL *)", jan1, []string{"2026-01-30T00:00:00Z", "2026-02-27T00:00:00Z"}},
		{"cron(0 0 ? * L *)", jan1, []string{"2026-01-03T00:00:00Z", "2026-01-10T00:00:00Z"}},
	} {
		s, err := Parse(tc.expr, nil, time.Time{})
		if err != nil {
			t.Errorf("%q: %v", tc.expr, err)
			continue
		}
		checkFires(t, tc.expr, s, at(t, tc.after), tc.want)
	}
}

// TestNoFireWithinHorizon: Next says false when nothing fires within
// five years (the year field ran out; 2100 is no leap year).
func TestNoFireWithinHorizon(t *testing.T) {
	for _, tc := range []struct{ expr, after string }{
		{"cron(0 0 1 */3 ? 2026-2027)", "2027-10-01T00:00:00Z"},
		{"cron(0 0 1 1 ? 2040)", "2026-01-01T00:00:00Z"},
		{"0 0 29 2 *", "2096-03-01T00:00:00Z"},
	} {
		s, err := Parse(tc.expr, nil, time.Time{})
		if err != nil {
			t.Fatalf("%q: %v", tc.expr, err)
		}
		if next, ok := s.Next(at(t, tc.after)); ok {
			t.Errorf("%q after %s: %s, want none", tc.expr, tc.after, next)
		}
	}
	s, _ := Parse("rate(1 day)", nil, at(t, "2040-01-01T00:00:00Z"))
	if next, ok := s.Next(at(t, "2026-01-01T00:00:00Z")); ok {
		t.Errorf("a rate anchored 14 years on: %s, want none within 5 years", next)
	}
}

// TestRefusals: each malformed expression is refused with an *Error
// (field cron) naming what is wrong.
func TestRefusals(t *testing.T) {
	for _, tc := range []struct{ expr, want string }{
		{"", "cron: the expression is empty"},
		{"   ", "cron: the expression is empty"},
		{strings.Repeat("1,", 200) + "1 * * * *", "more than 256"},
		{"61 * * * *", "cron: the minute field 61 is out of range 0-59"},
		{"* 24 * * *", "cron: the hour field 24 is out of range 0-23"},
		{"* * 0 * *", "cron: the day-of-month field 0 is out of range 1-31"},
		{"* * 32 * *", "cron: the day-of-month field 32 is out of range 1-31"},
		{"* * * 13 *", "cron: the month field 13 is out of range 1-12"},
		{"* * * 0 *", "cron: the month field 0 is out of range 1-12"},
		{"* * * * 8", "cron: the day-of-week field 8 is out of range 0-7"},
		{"99999 * * * *", "cron: the minute field 99999 is out of range 0-59"},
		{"* * * FOO *", `cron: the month field "FOO" is not a number or a month name (JAN-DEC)`},
		{"* * * * FUNDAY", `cron: the day-of-week field "FUNDAY" is not a number or a day name (SUN-SAT)`},
		{"x * * * *", `cron: the minute field "x" is not a number`},
		{"-1 * * * *", `cron: the minute field "-1" is missing a value`},
		{"1- * * * *", `cron: the minute field "1-" is missing a value`},
		{"1-2-3 * * * *", `cron: the minute field "1-2-3" is not a value, a range a-b or a step`},
		{"*/0 * * * *", `the minute field "*/0": the step 0 is not 1-59`},
		{"*/60 * * * *", `the minute field "*/60": the step 60 is not 1-59 (a longer interval is a rate(…))`},
		{"*/x * * * *", `the minute field "*/x": the step after / must be a whole number 1-59`},
		{"1/2/3 * * * *", `the minute field "1/2/3": the step after / must be a whole number`},
		{"5-2 * * * *", `the minute field "5-2" is a range that runs backwards; ranges do not wrap around`},
		{"0 0 * * FRI-MON", `the day-of-week field "FRI-MON" is a range that runs backwards`},
		{"1,,2 * * * *", `the minute field "1,,2" has an empty list item`},
		{"? * * * *", `the minute field "?": ? means any in cron(…)'s day-of-month or day-of-week only`},
		{"* * * *", `expected 5 fields (minute hour day-of-month month day-of-week), found 4`},
		{"0 0 * * ? *", `found 6 in "0 0 * * ? *"; EventBridge's six fields (with a year) are written cron(…)`},
		{"0 0 1 * MON", `cron: day-of-month and day-of-week are both restricted ("1" and "MON"): standard cron fires on days matching either, which EventBridge Scheduler cannot express; use cron(…) with ? in one of them`},
		{"0 0 */2 * 1-5", "both restricted"},
		{"0 0 1-31 * MON", "both restricted"},
		{"0 0 ? * *", `the day-of-month field "?": ?, L, W and # are cron(…) syntax`},
		{"0 0 L * *", `the day-of-month field "L": ?, L, W and # are cron(…) syntax`},
		{"0 0 15W * *", `the day-of-month field "15W"`},
		{"0 0 * * 5#2", `the day-of-week field "5#2": ?, L, W and # are cron(…) syntax`},
		{"0 0 * * 5L", `the day-of-week field "5L"`},
		{"0 0 30 2 *", `cron: "0 0 30 2 *" never fires: no date matches its day and month fields`},
		{"0 0 31 4,6,9,11 *", "never fires"},
		{"@daily", `descriptors such as @daily are not supported; write five fields (@daily is "0 0 * * *")`},
		{"at(2026-01-01T00:00:00)", "at(…) is a one-off time, not a cron expression: give the time in the at field (RFC 3339)"},

		{"cron(0 0 * * * *)", `cron(…) needs ? in exactly one of day-of-month and day-of-week (found "*" and "*")`},
		{"cron(0 0 ? * ? *)", `needs ? in exactly one of day-of-month and day-of-week (found "?" and "?")`},
		{"cron(0 0 1 * ?)", `cron(…) takes 6 fields (minute hour day-of-month month day-of-week year), found 5`},
		{"cron(0 0 * * ? *", `cron(…) must end with ")"`},
		{"cron(60 0 * * ? *)", "cron: the minute field 60 is out of range 0-59"},
		{"cron(0 0 ? * 8 *)", "cron: the day-of-week field 8 is out of range 1-7"},
		{"cron(0 0 ? * 0 *)", "cron: the day-of-week field 0 is out of range 1-7"},
		{"cron(0 0 ? * */2 *)", `the day-of-week field "*/2": cron(…)'s day-of-week takes no / steps`},
		{"cron(0 0 1 * ? 1969)", "cron: the year field 1969 is out of range 1970-2199"},
		{"cron(0 0 1 * ? 2200)", "cron: the year field 2200 is out of range 1970-2199"},
		{"cron(0 0 32W * ? *)", "cron: the day-of-month field 32 is out of range 1-31"},
		{"cron(0 0 1-5W * ? *)", `the day-of-month field "1-5W": L, LW and nW (such as 15W) stand alone in the field`},
		{"cron(0 0 1,L * ? *)", `the day-of-month field "1,L": L, LW and nW`},
		{"cron(0 0 ? * 3#6 *)", `the day-of-week field "3#6": the week after # must be 1-5`},
		{"cron(0 0 ? * 3#0 *)", `the week after # must be 1-5`},
		{"cron(0 0 ? * 3#1,6#3 *)", `the day-of-week field "3#1,6#3": with # the field holds one expression`},
		{"cron(0 0 ? * 8#1 *)", "cron: the day-of-week field 8 is out of range 1-7"},
		{"cron(0 0 ? * 1,6L *)", `the day-of-week field "1,6L": L and nL (such as 6L) stand alone in the field`},
		{"cron(0 0 ? * 8L *)", "cron: the day-of-week field 8 is out of range 1-7"},
		{"cron(? 0 1 * ? *)", `the minute field "?": ? means any`},
		{"cron(0 0 31 2 ? *)", `cron: "cron(0 0 31 2 ? *)" never fires`},
		{"cron(0 0 29 2 ? 2100)", "never fires"},
		{"cron(0 0 ? 2 2#5 2026)", "never fires"}, // February 2026 has four Mondays

		{"rate(0 minutes)", "cron: rate(0 minutes): a rate is a positive whole number and a unit (minute(s), hour(s) or day(s)), as in rate(5 minutes)"},
		{"rate(5 weeks)", "rate(5 weeks): a rate is a positive whole number and a unit"},
		{"rate(five minutes)", "a rate is a positive whole number"},
		{"rate(5)", "a rate is a positive whole number"},
		{"rate(-1 minutes)", "a rate is a positive whole number"},
		{"rate(1.5 hours)", "a rate is a positive whole number"},
		{"rate(3651 days)", "cron: rate(3651 days) is longer than the longest rate, 3650 days"},
		{"rate(99999999 days)", "a rate is a positive whole number"},
		{"rate(5 minutes", `rate(…) must end with ")"`},
	} {
		_, err := Parse(tc.expr, nil, time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
		var e *Error
		if !errors.As(err, &e) || e.Field != "cron" {
			t.Errorf("%q: %v, want an *Error for field cron", tc.expr, err)
			continue
		}
		if !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q:\n got %s\nwant %s", tc.expr, err, tc.want)
		}
	}
	// A rate counts from an anchor: none is a refusal, not a panic.
	if _, err := Parse("rate(5 minutes)", nil, time.Time{}); err == nil || !strings.Contains(err.Error(), "needs a start time") {
		t.Errorf("rate without an anchor: %v", err)
	}
}

// TestLoadZone: "" is UTC, IANA names load (embedded data), "Local" and
// unknown names are refused naming the zone.
func TestLoadZone(t *testing.T) {
	for name, want := range map[string]string{"": "UTC", "UTC": "UTC", "Europe/Lisbon": "Europe/Lisbon", "America/New_York": "America/New_York"} {
		loc, err := LoadZone(name)
		if err != nil || loc.String() != want {
			t.Errorf("LoadZone(%q) = %v, %v; want %s", name, loc, err, want)
		}
	}
	for name, want := range map[string]string{
		"Mars/Base":             `timezone: unknown time zone "Mars/Base"`,
		"Local":                 `timezone: "Local" is the server's zone, not an IANA time zone name`,
		"../../etc/passwd":      `timezone: unknown time zone "../../etc/passwd"`,
		"europe/lisbon ":        `timezone: unknown time zone "europe/lisbon "`,
		strings.Repeat("A", 65): "timezone: unknown time zone",
	} {
		_, err := LoadZone(name)
		var e *Error
		if !errors.As(err, &e) || e.Field != "timezone" || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("LoadZone(%q): %v, want %s", name, err, want)
		}
	}
}

// TestAtExpression renders a one-off time in the zone's wall clock.
func TestAtExpression(t *testing.T) {
	lis := zone(t, "Europe/Lisbon")
	for _, tc := range []struct {
		t    string
		loc  *time.Location
		want string
	}{
		{"2026-03-29T00:30:00Z", lis, "at(2026-03-29T00:30:00)"},
		{"2026-07-01T12:00:00Z", lis, "at(2026-07-01T13:00:00)"},
		{"2026-07-01T12:00:00+02:00", nil, "at(2026-07-01T10:00:00)"},
		{"2026-11-01T05:30:00Z", zone(t, "America/New_York"), "at(2026-11-01T01:30:00)"},
	} {
		if got := AtExpression(at(t, tc.t), tc.loc); got != tc.want {
			t.Errorf("AtExpression(%s) = %s, want %s", tc.t, got, tc.want)
		}
	}
}

// TestMinInterval: a rate's duration; a cron expression's smallest gap,
// daylight saving included; none for one that fires once.
func TestMinInterval(t *testing.T) {
	jan1 := at(t, "2026-01-01T00:00:00Z")
	for _, tc := range []struct {
		expr, zone, from string
		want             time.Duration
	}{
		{"rate(90 minutes)", "", "2026-01-01T00:00:00Z", 90 * time.Minute},
		{"rate(1 day)", "Europe/Lisbon", "2026-01-01T00:00:00Z", 24 * time.Hour},
		{"* * * * *", "", "2026-01-01T00:00:00Z", time.Minute},
		{"*/5 * * * *", "", "2026-01-01T00:00:00Z", 5 * time.Minute},
		{"0,58 * * * *", "", "2026-01-01T00:00:00Z", 2 * time.Minute},
		{"0 9 * * MON-FRI", "", "2026-01-01T00:00:00Z", 24 * time.Hour},
		{"0 0 1 * *", "", "2026-01-01T00:00:00Z", 28 * 24 * time.Hour},
		{"0 0 1 1 *", "", "2026-01-02T00:00:00Z", 365 * 24 * time.Hour},
		{"cron(0 0 ? * 6L *)", "", "2026-01-01T00:00:00Z", 28 * 24 * time.Hour},
		// 00:00 WET and 02:00 WEST on 29 March 2026 are an hour apart.
		{"0 0,2 * * *", "Europe/Lisbon", "2026-01-01T00:00:00Z", time.Hour},
		// Twelve fire times a day: the 2000 scanned from April end in
		// September; the spring 2027 transition is scanned on its own.
		{"0 */2 * * *", "Europe/Lisbon", "2026-04-01T00:00:00Z", time.Hour},
		{"0 */2 * * *", "UTC", "2026-04-01T00:00:00Z", 2 * time.Hour},
		// A day is 23 hours when the clocks go forward (8 March 2026).
		{"59 0 * * *", "America/New_York", "2026-01-01T00:00:00Z", 23 * time.Hour},
		{"59 1 * * *", "America/New_York", "2026-01-01T00:00:00Z", 23 * time.Hour},
		{"59 1,3 * * *", "America/New_York", "2026-01-01T00:00:00Z", time.Hour},
		{"cron(0 0 1 1 ? 2027)", "", "2026-01-01T00:00:00Z", math.MaxInt64},
	} {
		s, err := Parse(tc.expr, zone(t, tc.zone), jan1)
		if err != nil {
			t.Fatalf("%q: %v", tc.expr, err)
		}
		if got := s.MinInterval(at(t, tc.from)); got != tc.want {
			t.Errorf("%q in %q from %s: MinInterval %s, want %s", tc.expr, tc.zone, tc.from, got, tc.want)
		}
	}
}
