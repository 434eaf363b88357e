package cronspec

import (
	"errors"
	"testing"
	"time"
)

// FuzzParse: no input panics; a refusal is a cron *Error; an accepted
// expression fires at increasing minute-precise UTC times, and its
// EventBridge form, when it has one, parses and fires at the same times.
func FuzzParse(f *testing.F) {
	for _, e := range roundTripExpressions {
		f.Add(e)
	}
	for _, e := range []string{"", "cron()", "rate()", "cron(0 0 ? * 3#2,L *)", "0 0 */0 * *", "cron(0 0 LW * ? 2199)",
		"cron(0 0 31W 2 ? *)", "rate(3650 days)", "0-59/59 23/23 31/30 12/11 6/6", "cron(* * ? * 7L 1970-2199/229)"} {
		f.Add(e)
	}
	loc, err := LoadZone("Europe/Lisbon")
	if err != nil {
		f.Fatal(err)
	}
	anchor := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	from := time.Date(2026, 3, 28, 12, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, expr string) {
		s, err := Parse(expr, loc, anchor)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) || e.Field != "cron" || e.Message == "" {
				t.Fatalf("%q: %v is not a cron *Error", expr, err)
			}
			return
		}
		got := fires(s, from, 5)
		prev := from
		for _, g := range got {
			if !g.After(prev) || g.Location() != time.UTC || g.Second() != 0 || g.Nanosecond() != 0 {
				t.Fatalf("%q: fire time %s after %s", expr, g, prev)
			}
			prev = g
		}
		if d := s.MinInterval(from); d < time.Minute {
			t.Fatalf("%q: MinInterval %s", expr, d)
		}
		aws, err := s.AWS()
		if err != nil {
			return
		}
		back, err := Parse(aws, loc, anchor)
		if err != nil {
			t.Fatalf("%q renders %q, refused: %v", expr, aws, err)
		}
		again := fires(back, from, 5)
		if len(again) != len(got) {
			t.Fatalf("%q: %v; its form %q: %v", expr, got, aws, again)
		}
		for i := range got {
			if !got[i].Equal(again[i]) {
				t.Fatalf("%q: %v; its form %q: %v", expr, got, aws, again)
			}
		}
	})
}

// BenchmarkNext: one fire time, for a spread of expressions in a zone
// with daylight saving.
func BenchmarkNext(b *testing.B) {
	loc, err := LoadZone("Europe/Lisbon")
	if err != nil {
		b.Fatal(err)
	}
	for _, expr := range []string{"* * * * *", "*/5 * * * *", "0 9 * * MON-FRI", "30 1 * * *", "0 0 29 2 *", "cron(0 0 ? * 6L *)", "cron(0 12 15W * ? 2026-2030)", "rate(5 minutes)"} {
		s, err := Parse(expr, loc, time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
		if err != nil {
			b.Fatal(err)
		}
		b.Run(expr, func(b *testing.B) {
			t := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
			for b.Loop() {
				next, ok := s.Next(t)
				if !ok {
					b.Fatal("no fire time")
				}
				if t = next; t.Year() > 2029 {
					t = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
				}
			}
		})
	}
}
