// Package cronspec reads a schedule's expression and time zone and
// computes its fire times, the same way in baton dev (which fires them
// itself) and on AWS (where EventBridge Scheduler fires the expression
// AWS renders). It is pure: no I/O beyond loading a zone, no clock reads.
//
// # Expressions
//
// Parse reads three forms.
//
// Standard cron, five fields "minute hour day-of-month month day-of-week":
// minute 0-59, hour 0-23, day-of-month 1-31, month 1-12 or JAN-DEC,
// day-of-week 0-7 or SUN-SAT (0 and 7 are Sunday; SUN ends a range as 7,
// so MON-SUN is the whole week). Each field is * or a comma-separated list
// of a value, a range a-b, or a step */s, a/s (a to the field's end) or
// a-b/s. Names are case-insensitive. A range does not wrap around (FRI-MON
// is refused) and a step is 1 to the field's span (*/90 minutes is refused:
// write rate(90 minutes)). Standard cron fires on a day that matches
// either day field when both are restricted; EventBridge Scheduler cannot
// express that, so an expression where neither day field is * is refused
// (write cron(…) with ? in one of them). ?, L, W and # belong to cron(…).
//
// EventBridge Scheduler's cron(minute hour day-of-month month day-of-week
// year): six fields, exactly one of day-of-month and day-of-week is ?.
// day-of-week is 1-7 or SUN-SAT (1 is Sunday) and takes no / steps; year is
// 1970-2199. day-of-month may instead be L (the month's last day), LW (its
// last weekday, Monday to Friday) or nW (the weekday nearest day n, within
// the month: a Saturday moves to the Friday before, a Sunday to the Monday
// after, except that a Saturday the 1st moves to Monday the 3rd and a
// Sunday on the month's last day to the Friday before; a month without day
// n has none). day-of-week may instead be L (Saturday, the week's last
// day), nL (the month's last weekday n, e.g. 6L its last Friday) or n#k
// (its k-th weekday n, k 1-5, e.g. 3#2 its second Tuesday; a month without
// one has none). These stand alone in their field.
//
// rate(N unit), unit minute, minutes, hour, hours, day or days (N a
// positive whole number, at most 3650 days in all; the singular and the
// plural are both accepted whatever N): fire times every N units, a fixed
// duration (a day is 24 hours), from the anchor Parse is given (truncated
// to the minute), which is itself the first fire time.
//
// The prefixes cron( and rate( are case-insensitive; AWS renders them in
// lower case.
//
// An expression with no fire time on any date (such as "0 0 30 2 *") is
// refused; one whose year field has passed, or whose only times are ones
// the clocks skip, parses and has no next fire time. Descriptors (@daily)
// are refused. One-off times are not expressions: AtExpression renders
// one for EventBridge.
//
// # Time zones and daylight saving
//
// Cron fire times are wall-clock times in the schedule's zone (LoadZone:
// IANA names, with the zone data embedded so no zoneinfo is needed). When
// the clocks go forward, a wall-clock time that does not exist does not
// fire (Europe/Lisbon, 29 March 2026, 01:00 becomes 02:00: "30 1 * * *"
// does not fire that day). When they go back, a wall-clock time that
// occurs twice fires once, at its first occurrence (25 October 2026,
// 02:00 becomes 01:00: "30 1 * * *" fires at 01:30 WEST only). This is
// EventBridge Scheduler's documented behaviour. rate() is a fixed
// duration: daylight saving does not move it. Fire times are precise to
// the minute (seconds 0).
//
// Zones load from the system's zoneinfo database, or from the copy in
// the binary of the programs that import time/tzdata: the API and intake
// functions and baton (Lambda's runtime has no zoneinfo); the other
// functions never read a zone and do not carry the 450 KB.
package cronspec

import (
	"fmt"
	"strings"
	"time"
)

// Error is a refusal of an expression or a zone: Field is "cron" or
// "timezone", Message says what is wrong.
type Error struct {
	Field   string
	Message string
}

func (e *Error) Error() string { return e.Field + ": " + e.Message }

func cronError(format string, args ...any) *Error {
	return &Error{Field: "cron", Message: fmt.Sprintf(format, args...)}
}

// maxExpression is the longest expression accepted, and the longest
// EventBridge Scheduler takes.
const maxExpression = 256

// LoadZone loads an IANA time zone: "" is UTC; "Local" (the server's
// zone, different in dev and on AWS) and unknown names are refused with an
// *Error whose Field is "timezone".
func LoadZone(tz string) (*time.Location, error) {
	switch tz {
	case "", "UTC":
		return time.UTC, nil
	case "Local":
		return nil, &Error{Field: "timezone", Message: `"Local" is the server's zone, not an IANA time zone name; give one such as "Europe/Lisbon" or "UTC"`}
	}
	if len(tz) > 64 || strings.ContainsAny(tz, "\x00\\") {
		return nil, &Error{Field: "timezone", Message: fmt.Sprintf("unknown time zone %q", tz)}
	}
	loc, err := time.LoadLocation(tz)
	if err != nil {
		return nil, &Error{Field: "timezone", Message: fmt.Sprintf("unknown time zone %q", tz)}
	}
	return loc, nil
}

// Spec is a parsed expression in its zone; it does not change, so it is
// safe for concurrent use.
type Spec struct {
	loc *time.Location

	// rate(…): every > 0.
	every  time.Duration
	anchor time.Time
	count  int    // N of rate(N unit)
	unit   string // "minute", "hour" or "day"

	// cron: bit i of minute, hour, month is value i; years nil is every
	// year, else bit y-1970.
	minute, hour uint64
	month        uint64
	years        *bitset
	day          dayRule
}

// Parse reads expr (a five-field cron expression, cron(…) or rate(…)) in
// loc (nil is UTC). anchor is a rate's first fire time (truncated to the
// minute); cron ignores it. A refusal is an *Error whose Field is "cron".
func Parse(expr string, loc *time.Location, anchor time.Time) (*Spec, error) {
	if loc == nil {
		loc = time.UTC
	}
	e := strings.TrimSpace(expr)
	lower := strings.ToLower(e)
	switch {
	case e == "":
		return nil, cronError("the expression is empty")
	case len(e) > maxExpression:
		return nil, cronError("the expression is %d characters, more than %d", len(e), maxExpression)
	case strings.HasPrefix(lower, "cron("):
		inner, err := inParens(e, "cron")
		if err != nil {
			return nil, err
		}
		return parseAWS(inner, loc)
	case strings.HasPrefix(lower, "rate("):
		inner, err := inParens(e, "rate")
		if err != nil {
			return nil, err
		}
		return parseRate(inner, loc, anchor)
	case strings.HasPrefix(lower, "at("):
		return nil, cronError("at(…) is a one-off time, not a cron expression: give the time in the at field (RFC 3339)")
	case strings.HasPrefix(e, "@"):
		return nil, cronError("%q: descriptors such as @daily are not supported; write five fields (@daily is \"0 0 * * *\")", e)
	}
	return parseStandard(e, loc)
}

func inParens(e, name string) (string, error) {
	if !strings.HasSuffix(e, ")") {
		return "", cronError("%s(…) must end with \")\"", name)
	}
	return strings.TrimSpace(e[len(name)+1 : len(e)-1]), nil
}

// AtExpression is EventBridge Scheduler's one-off expression for t, read
// in loc (nil is UTC): "at(2026-03-29T01:30:00)". A time in the second
// occurrence of a repeated hour reads the same as its first in loc; give
// such a schedule loc UTC (and the zone "UTC") to be exact.
func AtExpression(t time.Time, loc *time.Location) string {
	if loc == nil {
		loc = time.UTC
	}
	return "at(" + t.In(loc).Format("2006-01-02T15:04:05") + ")"
}
