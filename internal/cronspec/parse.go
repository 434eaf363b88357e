package cronspec

import (
	"strconv"
	"strings"
	"time"
)

// bitset holds up to 256 values (a field's value minus its minimum).
type bitset [4]uint64

func (b *bitset) add(i int)      { b[i>>6] |= 1 << (i & 63) }
func (b *bitset) has(i int) bool { return b[i>>6]&(1<<(i&63)) != 0 }

// field is one field of an expression.
type field struct {
	name     string // "minute", as messages name it
	min, max int
	names    []string // names of the values from nameBase on
	nameBase int
	noStep   bool // EventBridge's day-of-week takes no / steps
	// sunEnd: a range ending with the name SUN ends at 7 (standard
	// day-of-week, where 7 is also Sunday, though * and a/s end at 6).
	sunEnd bool
}

// last is where * and a/s end.
func (f field) last() int {
	if f.sunEnd {
		return f.max - 1
	}
	return f.max
}

var (
	monthNames = []string{"JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"}
	dayNames   = []string{"SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"}

	minuteField = field{name: "minute", min: 0, max: 59}
	hourField   = field{name: "hour", min: 0, max: 23}
	domField    = field{name: "day-of-month", min: 1, max: 31}
	monthField  = field{name: "month", min: 1, max: 12, names: monthNames, nameBase: 1}
	stdDowField = field{name: "day-of-week", min: 0, max: 7, names: dayNames, nameBase: 0, sunEnd: true}
	awsDowField = field{name: "day-of-week", min: 1, max: 7, names: dayNames, nameBase: 1, noStep: true}
	yearField   = field{name: "year", min: 1970, max: 2199}
)

func (f field) hint() string {
	switch {
	case f.names == nil:
		return "a number"
	case f.name == "month":
		return "a number or a month name (JAN-DEC)"
	}
	return "a number or a day name (SUN-SAT)"
}

// value reads a number or a name of f.
func (f field) value(tok, elem string) (int, *Error) {
	if tok == "" {
		return 0, cronError("the %s field %q is missing a value", f.name, elem)
	}
	if isDigits(tok) {
		if len(tok) > 4 {
			return 0, cronError("the %s field %s is out of range %d-%d", f.name, tok, f.min, f.max)
		}
		n, _ := strconv.Atoi(tok)
		if n < f.min || n > f.max {
			return 0, cronError("the %s field %d is out of range %d-%d", f.name, n, f.min, f.max)
		}
		return n, nil
	}
	for i, name := range f.names {
		if strings.EqualFold(tok, name) {
			return f.nameBase + i, nil
		}
	}
	return 0, cronError("the %s field %q is not %s", f.name, tok, f.hint())
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// list reads a field: * or a comma-separated list of values, ranges and
// steps. Bit i of the result is the value f.min+i.
func (f field) list(text string) (bitset, *Error) {
	var set bitset
	if text == "?" {
		return set, cronError("the %s field %q: ? means any in cron(…)'s day-of-month or day-of-week only", f.name, text)
	}
	for _, elem := range strings.Split(text, ",") {
		if elem == "" {
			return set, cronError("the %s field %q has an empty list item", f.name, text)
		}
		lo, hi, step, err := f.element(elem)
		if err != nil {
			return set, err
		}
		for v := lo; v <= hi; v += step {
			set.add(v - f.min)
		}
	}
	return set, nil
}

// element reads one list item: *, v, a-b, each optionally /step.
func (f field) element(elem string) (lo, hi, step int, err *Error) {
	rng, stepText, hasStep := strings.Cut(elem, "/")
	step = 1
	if hasStep {
		if f.noStep {
			return 0, 0, 0, cronError("the %s field %q: cron(…)'s day-of-week takes no / steps (list the days instead)", f.name, elem)
		}
		span := f.last() - f.min
		if !isDigits(stepText) || len(stepText) > 4 {
			return 0, 0, 0, cronError("the %s field %q: the step after / must be a whole number 1-%d", f.name, elem, span)
		}
		step, _ = strconv.Atoi(stepText)
		if step < 1 || step > span {
			return 0, 0, 0, cronError("the %s field %q: the step %d is not 1-%d (a longer interval is a rate(…))", f.name, elem, step, span)
		}
	}
	if rng == "*" {
		return f.min, f.last(), step, nil
	}
	a, b, isRange := strings.Cut(rng, "-")
	if lo, err = f.value(a, elem); err != nil {
		return 0, 0, 0, err
	}
	switch {
	case isRange:
		if strings.Contains(b, "-") {
			return 0, 0, 0, cronError("the %s field %q is not a value, a range a-b or a step", f.name, elem)
		}
		if hi, err = f.value(b, elem); err != nil {
			return 0, 0, 0, err
		}
		if f.sunEnd && lo > 0 && hi == 0 && strings.EqualFold(b, "SUN") {
			hi = 7
		}
		if lo > hi {
			return 0, 0, 0, cronError("the %s field %q is a range that runs backwards; ranges do not wrap around", f.name, elem)
		}
	case hasStep:
		hi = f.last() // a/s runs from a to the field's end
	default:
		hi = lo
	}
	return lo, hi, step, nil
}

// low64 is the first 64 values of a set as a mask whose bit v is value
// v (f.min is 0 or 1 for the fields that use it).
func (f field) low64(set bitset) uint64 { return set[0] << f.min }

// awsSyntax says whether a day field's text uses cron(…)'s own syntax.
func awsSyntax(text string) bool {
	u := strings.ToUpper(text)
	return text == "?" || strings.ContainsAny(u, "#") || u == "L" || u == "LW" ||
		(len(u) > 1 && (u[len(u)-1] == 'W' || u[len(u)-1] == 'L') && isDigits(u[:len(u)-1]))
}

// parseStandard reads five fields.
func parseStandard(e string, loc *time.Location) (*Spec, error) {
	fs := strings.Fields(e)
	if len(fs) != 5 {
		msg := "expected 5 fields (minute hour day-of-month month day-of-week), found %d in %q"
		if len(fs) == 6 {
			msg += "; EventBridge's six fields (with a year) are written cron(…)"
		}
		return nil, cronError(msg, len(fs), e)
	}
	for _, f := range []field{domField, stdDowField} {
		text := fs[2]
		if f.name == stdDowField.name {
			text = fs[4]
		}
		if awsSyntax(text) {
			return nil, cronError("the %s field %q: ?, L, W and # are cron(…) syntax; write cron(minute hour day-of-month month day-of-week year), or * here", f.name, text)
		}
	}
	s := &Spec{loc: loc}
	var err *Error
	if s.minute, s.hour, s.month, err = timeFields(fs[0], fs[1], fs[3]); err != nil {
		return nil, err
	}
	dom, err := domField.list(fs[2])
	if err != nil {
		return nil, err
	}
	dow, err := stdDowField.list(fs[4])
	if err != nil {
		return nil, err
	}
	week := dow[0]
	week = (week | week>>7) & 0x7f // 7 is Sunday, as 0
	switch {
	case fs[2] == "*":
		s.day = dayRule{kind: weekList, dow: week}
	case fs[4] == "*":
		s.day = dayRule{kind: dayList, dom: domField.low64(dom)}
	default:
		return nil, cronError("day-of-month and day-of-week are both restricted (%q and %q): standard cron fires on days matching either, which EventBridge Scheduler cannot express; use cron(…) with ? in one of them, or * in one here", fs[2], fs[4])
	}
	return s.checkFires(e)
}

func timeFields(minute, hour, month string) (m, h, mo uint64, err *Error) {
	set, err := minuteField.list(minute)
	if err != nil {
		return 0, 0, 0, err
	}
	m = minuteField.low64(set)
	if set, err = hourField.list(hour); err != nil {
		return 0, 0, 0, err
	}
	h = hourField.low64(set)
	if set, err = monthField.list(month); err != nil {
		return 0, 0, 0, err
	}
	return m, h, monthField.low64(set), nil
}

// parseAWS reads cron(…)'s six fields.
func parseAWS(inner string, loc *time.Location) (*Spec, error) {
	fs := strings.Fields(inner)
	if len(fs) != 6 {
		return nil, cronError("cron(…) takes 6 fields (minute hour day-of-month month day-of-week year), found %d", len(fs))
	}
	if (fs[2] == "?") == (fs[4] == "?") {
		return nil, cronError("cron(…) needs ? in exactly one of day-of-month and day-of-week (found %q and %q): EventBridge Scheduler reads one of them", fs[2], fs[4])
	}
	s := &Spec{loc: loc}
	var err *Error
	if s.minute, s.hour, s.month, err = timeFields(fs[0], fs[1], fs[3]); err != nil {
		return nil, err
	}
	if fs[2] != "?" {
		s.day, err = awsDom(fs[2])
	} else {
		s.day, err = awsDow(fs[4])
	}
	if err != nil {
		return nil, err
	}
	if fs[5] != "*" {
		years, err := yearField.list(fs[5])
		if err != nil {
			return nil, err
		}
		s.years = &years
	}
	return s.checkFires("cron(" + inner + ")")
}

func awsDom(text string) (dayRule, *Error) {
	u := strings.ToUpper(text)
	switch {
	case u == "L":
		return dayRule{kind: lastDay}, nil
	case u == "LW":
		return dayRule{kind: lastWeekday}, nil
	case strings.HasSuffix(u, "W") && isDigits(u[:len(u)-1]):
		n, err := domField.value(u[:len(u)-1], text)
		return dayRule{kind: nearestWeekday, n: n}, err
	case strings.ContainsAny(u, "LW"):
		return dayRule{}, cronError("the day-of-month field %q: L, LW and nW (such as 15W) stand alone in the field", text)
	}
	set, err := domField.list(text)
	return dayRule{kind: dayList, dom: domField.low64(set)}, err
}

func awsDow(text string) (dayRule, *Error) {
	u := strings.ToUpper(text)
	if u == "L" {
		return dayRule{kind: weekList, dow: 1 << time.Saturday}, nil
	}
	if day, k, ok := strings.Cut(u, "#"); ok {
		if strings.Contains(text, ",") {
			return dayRule{}, cronError("the day-of-week field %q: with # the field holds one expression (n#k, such as 3#2)", text)
		}
		w, err := awsDowField.value(day, text)
		if err != nil {
			return dayRule{}, err
		}
		if !isDigits(k) || len(k) != 1 || k[0] < '1' || k[0] > '5' {
			return dayRule{}, cronError("the day-of-week field %q: the week after # must be 1-5", text)
		}
		return dayRule{kind: weekNth, n: w - 1, k: int(k[0] - '0')}, nil
	}
	if strings.HasSuffix(u, "L") && !strings.Contains(u, ",") && !strings.Contains(u, "-") {
		w, err := awsDowField.value(u[:len(u)-1], text)
		return dayRule{kind: weekLast, n: w - 1}, err
	}
	set, err := awsDowField.list(text)
	if err != nil {
		if strings.Contains(u, "L") {
			return dayRule{}, cronError("the day-of-week field %q: L and nL (such as 6L) stand alone in the field", text)
		}
		return dayRule{}, err
	}
	return dayRule{kind: weekList, dow: set[0]}, nil // bit 0 is 1 (SUN): time.Weekday numbering
}

// parseRate reads rate(N unit).
func parseRate(inner string, loc *time.Location, anchor time.Time) (*Spec, error) {
	fs := strings.Fields(inner)
	bad := func() error {
		return cronError("rate(%s): a rate is a positive whole number and a unit (minute(s), hour(s) or day(s)), as in rate(5 minutes)", inner)
	}
	if len(fs) != 2 || !isDigits(fs[0]) || len(fs[0]) > 7 {
		return nil, bad()
	}
	var unit time.Duration
	name := strings.TrimSuffix(strings.ToLower(fs[1]), "s")
	switch name {
	case "minute":
		unit = time.Minute
	case "hour":
		unit = time.Hour
	case "day":
		unit = 24 * time.Hour
	default:
		return nil, bad()
	}
	n, _ := strconv.Atoi(fs[0])
	if n < 1 {
		return nil, bad()
	}
	if time.Duration(n)*unit > maxRate {
		return nil, cronError("rate(%s) is longer than the longest rate, 3650 days", inner)
	}
	if anchor.IsZero() {
		return nil, cronError("rate(%s) needs a start time to count from", inner)
	}
	return &Spec{loc: loc, every: time.Duration(n) * unit, anchor: anchor.Truncate(time.Minute), count: n, unit: name}, nil
}

const maxRate = 3650 * 24 * time.Hour

// checkFires refuses a cron expression no date matches.
func (s *Spec) checkFires(e string) (*Spec, error) {
	years := [2]int{2000, 2027} // every kind of year (start weekday, leap)
	if s.years != nil {
		years = [2]int{yearField.min, yearField.max}
	}
	for y := years[0]; y <= years[1]; y++ {
		if !s.yearOK(y) {
			continue
		}
		for mo := 1; mo <= 12; mo++ {
			if s.month&(1<<mo) != 0 && s.days(y, mo) != 0 {
				return s, nil
			}
		}
	}
	return nil, cronError("%q never fires: no date matches its day and month fields", e)
}
