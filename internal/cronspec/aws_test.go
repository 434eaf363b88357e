package cronspec

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"
	"time"

	robfig "github.com/robfig/cron/v3"
)

// TestAWSForm: the EventBridge form of each syntax.
func TestAWSForm(t *testing.T) {
	for expr, want := range map[string]string{
		"0 9 * * MON-FRI":                   "cron(0 9 ? * 2-6 *)",
		"*/15 * * * *":                      "cron(0/15 * * * ? *)",
		"*/30 * * * *":                      "cron(0,30 * * * ? *)",
		"* * * * *":                         "cron(* * * * ? *)",
		"0 0 * * 0":                         "cron(0 0 ? * 1 *)",
		"0 0 * * 7":                         "cron(0 0 ? * 1 *)",
		"0 0 * * 0-7":                       "cron(0 0 * * ? *)",
		"0 0 * * MON-SUN":                   "cron(0 0 * * ? *)",
		"0 0 1,15 * *":                      "cron(0 0 1,15 * ? *)",
		"0 0 1-7 * *":                       "cron(0 0 1-7 * ? *)",
		"0 0 */2 * *":                       "cron(0 0 1/2 * ? *)",
		"0 0 * * */2":                       "cron(0 0 ? * 1,3,5,7 *)",
		"5 4 * JAN-MAR *":                   "cron(5 4 * 1-3 ? *)",
		"0 12 * * SAT,SUN":                  "cron(0 12 ? * 1,7 *)",
		"0,1,2,10 0-5,8,9 * * *":            "cron(0-2,10 0-5,8,9 * * ? *)",
		"cron(0 0 ? * 6L *)":                "cron(0 0 ? * 6L *)",
		"cron(0 0 ? * FRIL *)":              "cron(0 0 ? * 6L *)",
		"cron(0 0 15W * ? *)":               "cron(0 0 15W * ? *)",
		"cron(0 0 ? * 3#2 *)":               "cron(0 0 ? * 3#2 *)",
		"cron(0 0 ? * tue#2 *)":             "cron(0 0 ? * 3#2 *)",
		"cron(0 0 LW * ? *)":                "cron(0 0 LW * ? *)",
		"cron(0 0 L * ? *)":                 "cron(0 0 L * ? *)",
		"cron(0 0 ? * L *)":                 "cron(0 0 ? * 7 *)",
		"cron(0 0 ? * * *)":                 "cron(0 0 * * ? *)",
		"cron(0 0 1 1 ? 2026,2028,2030)":    "cron(0 0 1 1 ? 2026,2028,2030)",
		"cron(0 0 1 1 ? 2030/10)":           "cron(0 0 1 1 ? 2030/10)",
		"cron(0 0 1 jan-jun/2 ? 2026-2199)": "cron(0 0 1 1,3,5 ? 2026-2199)",
		"rate(1 hours)":                     "rate(1 hour)",
		"rate(5 minute)":                    "rate(5 minutes)",
		"rate(2 DAYS)":                      "rate(2 days)",
		"rate(1 day)":                       "rate(1 day)",
	} {
		s, err := Parse(expr, nil, time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
		if err != nil {
			t.Errorf("%q: %v", expr, err)
			continue
		}
		if got, err := s.AWS(); got != want || err != nil {
			t.Errorf("%q: AWS() = %q, %v; want %q", expr, got, err, want)
		}
	}
	// A rendering longer than EventBridge takes is refused, not sent.
	long := "cron(0 0 1 1 ? 1970-2190/3)"
	s, err := Parse(long, nil, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := s.AWS(); err == nil || !strings.HasPrefix(err.Error(), "cron: its EventBridge form is 385 characters, more than 256") {
		t.Errorf("%q: %q, %v", long, got, err)
	}
}

// roundTripExpressions cover every syntax.
var roundTripExpressions = []string{
	"* * * * *", "*/7 * * * *", "5-50/5 */3 * * *", "0 9 * * MON-FRI", "30 1 * * *", "30 2 * * *",
	"*/30 * * * *", "0 0 * * 0", "0 0 * * 7", "15 10 * * FRI-SUN", "0 0 1,15 * *", "0 0 */2 * *",
	"59 23 31 12 *", "0 0 29 2 *", "0 12 * JAN,APR,JUL,OCT *", "0 0 28-31 * *", "45 */4 * * 1,3,5",
	"0 0,2 * * *", "10/20 1-3 * * *", "0 0 * * */2", "0 0 1/10 * *",
	"cron(0 10 * * ? *)", "cron(0 18 ? * MON-FRI *)", "cron(15 10 ? * 6L 2026-2028)", "cron(0 0 L * ? *)",
	"cron(0 0 LW * ? *)", "cron(0 0 15W * ? *)", "cron(0 0 1W * ? *)", "cron(0 0 31W * ? *)",
	"cron(0 0 ? * 3#2 *)", "cron(30 1 ? * 2#5 *)", "cron(0 0 ? * L *)", "cron(0/20 8-9 ? * 2 2026)",
	"cron(0 0 1 */3 ? 2026-2027)", "cron(0 0 29 2 ? 2028/4)", "cron(30 2 ? * SUN *)",
	"rate(5 minutes)", "rate(1 hour)", "rate(3 days)",
}

// TestAWSRoundTrip: the EventBridge form fires at the same times as the
// expression it renders, over a year, in zones with and without daylight
// saving; its day-of-week never takes a / step.
func TestAWSRoundTrip(t *testing.T) {
	anchor := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, name := range []string{"UTC", "Europe/Lisbon", "America/New_York", "Australia/Lord_Howe"} {
		loc := zone(t, name)
		for _, expr := range roundTripExpressions {
			s, err := Parse(expr, loc, anchor)
			if err != nil {
				t.Fatalf("%q: %v", expr, err)
			}
			aws, err := s.AWS()
			if err != nil {
				t.Fatalf("%q: %v", expr, err)
			}
			if f := strings.Fields(aws); strings.HasPrefix(aws, "cron(") && strings.Contains(f[4], "/") {
				t.Errorf("%q renders %q: a / in day-of-week", expr, aws)
			}
			back, err := Parse(aws, loc, anchor)
			if err != nil {
				t.Fatalf("%q renders %q, which is refused: %v", expr, aws, err)
			}
			sameFires(t, expr+" → "+aws+" in "+name, s, back, anchor)
		}
	}
}

// sameFires compares the fire times of a and b over a year from `from`
// (at most 3000 of them).
func sameFires(t *testing.T, name string, a, b *Spec, from time.Time) {
	t.Helper()
	end := from.AddDate(1, 0, 0)
	ta, tb := from, from
	for i := 0; i < 3000; i++ {
		na, oka := a.Next(ta)
		nb, okb := b.Next(tb)
		if oka != okb || !na.Equal(nb) {
			t.Errorf("%s: fire time %d after %s is %s (%v) and %s (%v)", name, i, ta.Format(time.RFC3339), na, oka, nb, okb)
			return
		}
		if !oka || na.After(end) {
			return
		}
		ta, tb = na, nb
	}
}

// TestStandardMatchesRobfig: five-field expressions (one day field *)
// fire where robfig/cron's parser and SpecSchedule say, in UTC, for
// random expressions of every element kind.
func TestStandardMatchesRobfig(t *testing.T) {
	rng := rand.New(rand.NewSource(44))
	elem := func(lo, hi int, names []string, base int) string {
		val := func() string {
			v := lo + rng.Intn(hi-lo+1)
			if names != nil && rng.Intn(2) == 0 {
				return names[v-base]
			}
			return fmt.Sprint(v)
		}
		switch rng.Intn(6) {
		case 0:
			return "*"
		case 1:
			return fmt.Sprintf("*/%d", 1+rng.Intn(hi-lo))
		case 2:
			return val()
		case 3, 4:
			a, b := lo+rng.Intn(hi-lo+1), lo+rng.Intn(hi-lo+1)
			a, b = min(a, b), max(a, b)
			r := fmt.Sprintf("%d-%d", a, b)
			if rng.Intn(2) == 0 {
				r += fmt.Sprintf("/%d", 1+rng.Intn(hi-lo))
			}
			return r
		}
		return fmt.Sprintf("%s/%d", val(), 1+rng.Intn(hi-lo))
	}
	field := func(lo, hi int, names []string, base int) string {
		parts := []string{elem(lo, hi, names, base)}
		for rng.Intn(3) == 0 {
			parts = append(parts, elem(lo, hi, names, base))
		}
		return strings.Join(parts, ",")
	}
	checked := 0
	for i := 0; i < 400; i++ {
		dom, dow := field(1, 31, nil, 0), field(0, 6, dayNames, 0)
		if rng.Intn(2) == 0 {
			dom = "*"
		} else {
			dow = "*"
		}
		expr := strings.Join([]string{field(0, 59, nil, 0), field(0, 23, nil, 0), dom, field(1, 12, monthNames, 1), dow}, " ")
		s, err := Parse(expr, time.UTC, time.Time{})
		if err != nil {
			if !strings.Contains(err.Error(), "never fires") {
				t.Errorf("%q: %v", expr, err)
			}
			continue
		}
		want, err := robfig.ParseStandard(expr)
		if err != nil {
			t.Fatalf("robfig refuses %q: %v", expr, err)
		}
		after := time.Date(2026, time.Month(1+rng.Intn(12)), 1+rng.Intn(28), rng.Intn(24), rng.Intn(60), 0, 0, time.UTC)
		for j := 0; j < 200; j++ {
			got, ok := s.Next(after)
			w := want.Next(after)
			if !ok || !got.Equal(w) {
				t.Errorf("%q after %s: %s (%v), robfig %s", expr, after, got, ok, w)
				break
			}
			after = got
		}
		checked++
	}
	if checked < 300 {
		t.Errorf("only %d expressions compared", checked)
	}
}
