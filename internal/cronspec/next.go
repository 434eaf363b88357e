package cronspec

import (
	"math"
	"math/bits"
	"time"
)

// dayRule is which days of a month a cron expression fires on.
type dayRule struct {
	kind int
	dom  uint64 // dayList: bit d is day d
	dow  uint64 // weekList: bit w is time.Weekday w
	n    int    // nearestWeekday: the day; weekLast, weekNth: the weekday
	k    int    // weekNth: the week, 1-5
}

const (
	weekList       = iota // the days of the weekdays in dow (every day when all)
	dayList               // the days in dom
	lastDay               // L
	lastWeekday           // LW
	nearestWeekday        // nW
	weekLast              // nL
	weekNth               // n#k
)

func isLeap(y int) bool { return y%4 == 0 && (y%100 != 0 || y%400 == 0) }

func daysIn(y, mo int) int {
	switch mo {
	case 2:
		if isLeap(y) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

// days is the mask of the days (bit d is day d) of month mo of year y the
// expression fires on.
func (s *Spec) days(y, mo int) uint64 {
	n := daysIn(y, mo)
	all := uint64(1)<<(n+1) - 2
	first := int(time.Date(y, time.Month(mo), 1, 0, 0, 0, 0, time.UTC).Weekday())
	weekday := func(d int) int { return (first + d - 1) % 7 }
	firstOf := func(w int) int { return 1 + (w-first+7)%7 } // the first day that is weekday w
	r := s.day
	switch r.kind {
	case dayList:
		return r.dom & all
	case lastDay:
		return 1 << n
	case lastWeekday:
		d := n
		switch weekday(d) {
		case int(time.Saturday):
			d--
		case int(time.Sunday):
			d -= 2
		}
		return 1 << d
	case nearestWeekday:
		d := r.n
		if d > n {
			return 0
		}
		switch weekday(d) {
		case int(time.Saturday):
			if d == 1 {
				d = 3
			} else {
				d--
			}
		case int(time.Sunday):
			if d == n {
				d -= 2
			} else {
				d++
			}
		}
		return 1 << d
	case weekLast:
		d := firstOf(r.n)
		for d+7 <= n {
			d += 7
		}
		return 1 << d
	case weekNth:
		d := firstOf(r.n) + 7*(r.k-1)
		if d > n {
			return 0
		}
		return 1 << d
	}
	var mask uint64
	for w := 0; w < 7; w++ {
		if r.dow&(1<<w) != 0 {
			for d := firstOf(w); d <= n; d += 7 {
				mask |= 1 << d
			}
		}
	}
	return mask
}

func (s *Spec) yearOK(y int) bool {
	if s.years == nil {
		return true
	}
	i := y - yearField.min
	return i >= 0 && i <= yearField.max-yearField.min && s.years.has(i)
}

// civil is a wall-clock minute.
type civil struct{ y, mo, d, h, mi int }

func (c civil) nextMinute() civil {
	if c.mi++; c.mi < 60 {
		return c
	}
	if c.mi, c.h = 0, c.h+1; c.h < 24 {
		return c
	}
	if c.h, c.d = 0, c.d+1; c.d <= daysIn(c.y, c.mo) {
		return c
	}
	if c.d, c.mo = 1, c.mo+1; c.mo <= 12 {
		return c
	}
	c.mo, c.y = 1, c.y+1
	return c
}

// nextCivil is the first wall-clock minute at or after c that the
// expression matches, in a year up to maxYear.
func (s *Spec) nextCivil(c civil, maxYear int) (civil, bool) {
	for ; c.y <= maxYear; c = (civil{y: c.y + 1, mo: 1, d: 1}) {
		if !s.yearOK(c.y) {
			continue
		}
		for ; c.mo <= 12; c = (civil{y: c.y, mo: c.mo + 1, d: 1}) {
			if s.month&(1<<c.mo) == 0 {
				continue
			}
			for days := s.days(c.y, c.mo) >> c.d << c.d; days != 0; days &^= 1 << c.d {
				if d := bits.TrailingZeros64(days); d != c.d {
					c.d, c.h, c.mi = d, 0, 0
				}
				if h, mi, ok := s.nextTime(c.h, c.mi); ok {
					c.h, c.mi = h, mi
					return c, true
				}
				c.h, c.mi = 0, 0
			}
		}
	}
	return civil{}, false
}

// nextTime is the first hour and minute at or after h:mi the expression
// matches, within the day.
func (s *Spec) nextTime(h, mi int) (int, int, bool) {
	for hours := s.hour >> h << h; hours != 0; hours &^= 1 << h {
		if hh := bits.TrailingZeros64(hours); hh != h {
			h, mi = hh, 0
		}
		if mins := s.minute >> mi << mi; mins != 0 {
			return h, bits.TrailingZeros64(mins), true
		}
		mi = 0
	}
	return 0, 0, false
}

// horizon is how far Next looks.
const horizonYears = 5

// Next is the first fire time strictly after `after`, in UTC; false when
// there is none within 5 years of it.
func (s *Spec) Next(after time.Time) (time.Time, bool) {
	limit := after.AddDate(horizonYears, 0, 0)
	if s.every > 0 {
		t := s.anchor
		if !after.Before(t) {
			t = t.Add(after.Sub(t) / s.every * s.every) // at or before after
			if !t.After(after) {
				t = t.Add(s.every)
			}
		}
		if !t.After(after) || t.After(limit) {
			return time.Time{}, false
		}
		return t.UTC(), true
	}
	w := after.In(s.loc)
	y, mo, d := w.Date()
	h, mi, _ := w.Clock()
	c := civil{y, int(mo), d, h, mi}.nextMinute()
	for {
		var ok bool
		if c, ok = s.nextCivil(c, y+horizonYears+1); !ok {
			return time.Time{}, false
		}
		// A wall-clock time in a gap does not exist; one in the second
		// occurrence of a repeated hour fired at its first (or is before
		// `after` when `after` is in the repeat).
		if t, ok := firstInstant(s.loc, c); ok && t.After(after) {
			if t.After(limit) {
				return time.Time{}, false
			}
			return t.UTC(), true
		}
		c = c.nextMinute()
	}
}

// zoneMargin bounds how far apart two instants with the same wall-clock
// time can be (UTC offsets lie within -12h..+14h, with room to spare).
const zoneMargin = 30 * 60 * 60

// firstInstant is the first instant whose wall-clock time in loc is c, and
// false when there is none (the clocks skip it).
func firstInstant(loc *time.Location, c civil) (time.Time, bool) {
	u := time.Date(c.y, time.Month(c.mo), c.d, c.h, c.mi, 0, 0, time.UTC).Unix()
	// Usually no zone transition is near: one instant, off the offset in
	// force around it.
	_, off := time.Unix(u, 0).In(loc).Zone()
	t := time.Unix(u-int64(off), 0).In(loc)
	if _, o := t.Zone(); o == off {
		start, end := t.ZoneBounds()
		if (start.IsZero() || start.Unix() <= t.Unix()-zoneMargin) && (end.IsZero() || t.Unix()+zoneMargin < end.Unix()) {
			return t, true
		}
	}
	// Otherwise try each offset in force within the margin (sampled every
	// 15 minutes: ZoneBounds is unreliable past a zone's table of
	// transitions): c is at u-o when the offset there is o.
	best := int64(math.MaxInt64)
	for at := u - zoneMargin; at <= u+zoneMargin; at += 15 * 60 {
		_, o := time.Unix(at, 0).In(loc).Zone()
		if cand := u - int64(o); cand < best {
			if _, oc := time.Unix(cand, 0).In(loc).Zone(); oc == o {
				best = cand
			}
		}
	}
	if best == math.MaxInt64 {
		return time.Time{}, false
	}
	return time.Unix(best, 0), true
}

// Scan limits of MinInterval.
const (
	scanFires      = 2000
	scanWindow     = 400 * 24 * time.Hour
	transitionSpan = 48 * time.Hour
	transitionMax  = 6000
)

// MinInterval is the smallest gap between consecutive fire times after
// from: a rate's duration; for cron, the smallest gap among its first 2000
// fire times or those within 400 days, whichever ends first, and between
// the fire times around each of the zone's transitions in those 400 days
// (daylight saving can bring two fire times closer: "0 0,2 * * *" fires an
// hour apart in Europe/Lisbon on 29 March 2026). A spec that fires at most
// once has no gap: the largest Duration.
func (s *Spec) MinInterval(from time.Time) time.Duration {
	if s.every > 0 {
		return s.every
	}
	best := time.Duration(math.MaxInt64)
	// scan measures the gaps from the first fire time after t, at most
	// limit of them, until one ends after until; it returns the last fire
	// time it reached. No gap is shorter than a minute.
	scan := func(t, until time.Time, limit int) time.Time {
		prev, ok := s.Next(t)
		for i := 0; ok && i < limit && best > time.Minute; i++ {
			next, more := s.Next(prev)
			if !more {
				break
			}
			best = min(best, next.Sub(prev))
			if prev = next; next.After(until) {
				break
			}
		}
		return prev
	}
	end := from.Add(scanWindow)
	last := scan(from, end, scanFires)
	for t := from; ; {
		_, next := t.In(s.loc).ZoneBounds()
		if next.IsZero() || next.After(end) {
			break
		}
		if !next.After(t) { // past a zone's table, ZoneBounds can stall
			t = t.Add(time.Hour)
			continue
		}
		if next.After(last) {
			// Only a pair of fire times around the transition can be
			// closer than best: the first of them is less than best
			// before it.
			scan(next.Add(-min(best, transitionSpan)), next, transitionMax)
		}
		t = next
	}
	return best
}
