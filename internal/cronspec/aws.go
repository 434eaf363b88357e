package cronspec

import (
	"strconv"
	"strings"
)

// AWS is the expression in EventBridge Scheduler's form, to be read in
// the same zone: rate(N unit) (singular for 1, plural otherwise) or
// cron(minute hour day-of-month month day-of-week year) with numbers only
// (a five-field expression's day-of-week becomes 1-7, 1 Sunday, and the
// day field it leaves at * becomes ?). Its fire times are the spec's when
// EventBridge reads it in the same zone and, for a rate, with the anchor
// as the schedule's StartDate (the rendering does not carry it). An
// expression whose rendering is longer than EventBridge's 256 characters
// is an *Error (Field "cron").
func (s *Spec) AWS() (string, error) {
	if s.every > 0 {
		unit := s.unit
		if s.count != 1 {
			unit += "s"
		}
		return "rate(" + strconv.Itoa(s.count) + " " + unit + ")", nil
	}
	dom, dow := "?", "?"
	r := s.day
	switch r.kind {
	case weekList:
		if r.dow == 0x7f {
			dom = "*"
		} else {
			dow = render(r.dow, 0, 6, 1, false) // weekday w is day-of-week w+1
		}
	case dayList:
		dom = render(r.dom, 1, 31, 0, true)
	case lastDay:
		dom = "L"
	case lastWeekday:
		dom = "LW"
	case nearestWeekday:
		dom = strconv.Itoa(r.n) + "W"
	case weekLast:
		dow = strconv.Itoa(r.n+1) + "L"
	case weekNth:
		dow = strconv.Itoa(r.n+1) + "#" + strconv.Itoa(r.k)
	}
	year := "*"
	if s.years != nil {
		year = renderYears(s.years)
	}
	expr := "cron(" + strings.Join([]string{
		render(s.minute, 0, 59, 0, true), render(s.hour, 0, 23, 0, true), dom,
		render(s.month, 1, 12, 0, true), dow, year,
	}, " ") + ")"
	if len(expr) > maxExpression {
		return "", cronError("its EventBridge form is %d characters, more than %d: %s", len(expr), maxExpression, expr)
	}
	return expr, nil
}

// render writes the values lo..hi set in mask (bit v is value v) as *,
// a/s (a step to the field's end, when step is allowed), or a list of
// values and ranges; shift is added to each value written.
func render(mask uint64, lo, hi, shift int, step bool) string {
	var vals []int
	for v := lo; v <= hi; v++ {
		if mask&(1<<v) != 0 {
			vals = append(vals, v)
		}
	}
	return renderValues(vals, lo, hi, shift, step)
}

func renderYears(years *bitset) string {
	var vals []int
	for i := 0; i <= yearField.max-yearField.min; i++ {
		if years.has(i) {
			vals = append(vals, yearField.min+i)
		}
	}
	return renderValues(vals, yearField.min, yearField.max, 0, true)
}

func renderValues(vals []int, lo, hi, shift int, step bool) string {
	if len(vals) == hi-lo+1 {
		return "*"
	}
	if step && len(vals) >= 3 {
		d := vals[1] - vals[0]
		prog := d > 1 && vals[len(vals)-1]+d > hi
		for i := 2; prog && i < len(vals); i++ {
			prog = vals[i]-vals[i-1] == d
		}
		if prog {
			return strconv.Itoa(vals[0]+shift) + "/" + strconv.Itoa(d)
		}
	}
	var parts []string
	for i := 0; i < len(vals); {
		j := i
		for j+1 < len(vals) && vals[j+1] == vals[j]+1 {
			j++
		}
		a, b := strconv.Itoa(vals[i]+shift), strconv.Itoa(vals[j]+shift)
		switch {
		case j == i:
			parts = append(parts, a)
		case j == i+1:
			parts = append(parts, a, b)
		default:
			parts = append(parts, a+"-"+b)
		}
		i = j + 1
	}
	return strings.Join(parts, ",")
}
