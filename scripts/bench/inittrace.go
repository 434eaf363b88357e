package main

import (
	"sort"
	"strconv"
	"strings"
)

// initTraceRuns is how many more times each function is started with
// GODEBUG=inittrace=1 (apart from the timed starts: tracing perturbs
// them), and initTopPackages how many packages the report names.
const (
	initTraceRuns   = 10
	initTopPackages = 8
)

// pkgInit is one package's initialisation, as GODEBUG=inittrace=1
// prints it: "init <package> @<start> ms, <clock> ms clock, <bytes>
// bytes, <allocs> allocs".
type pkgInit struct {
	Package string  `json:"package"`
	ClockMS float64 `json:"clock_ms"`
	Bytes   int64   `json:"bytes"`
	Allocs  int64   `json:"allocs"`
}

// parseInitTrace returns the packages' initialisations in out, in the
// order they ran; lines that are not init trace lines are skipped.
func parseInitTrace(out string) []pkgInit {
	var ps []pkgInit
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		// init pkg @t ms, c ms clock, b bytes, a allocs
		if len(f) != 11 || f[0] != "init" || !strings.HasPrefix(f[2], "@") || f[5] != "ms" || f[6] != "clock," || f[8] != "bytes," || f[10] != "allocs" {
			continue
		}
		clock, err1 := strconv.ParseFloat(f[4], 64)
		bytes, err2 := strconv.ParseInt(f[7], 10, 64)
		allocs, err3 := strconv.ParseInt(f[9], 10, 64)
		if err1 != nil || err2 != nil || err3 != nil {
			continue
		}
		ps = append(ps, pkgInit{Package: f[1], ClockMS: clock, Bytes: bytes, Allocs: allocs})
	}
	return ps
}

// initSummary is a function's package initialisation over several
// starts: the medians of the per-start totals, and the packages that
// take the most time by their median.
type initSummary struct {
	Runs     int     `json:"runs"`
	Packages int     `json:"packages"`
	TotalMS  float64 `json:"total_clock_ms_p50"`
	Bytes    float64 `json:"total_bytes_p50"`
	// Top are the initTopPackages packages with the largest median
	// clock time, largest first (their bytes and allocs: medians too).
	Top []pkgInit `json:"top"`
}

// summarizeInit summarizes the traces of several starts of one binary.
func summarizeInit(runs [][]pkgInit, top int) initSummary {
	s := initSummary{Runs: len(runs)}
	if len(runs) == 0 {
		return s
	}
	var totals, bytes []float64
	by := map[string][]pkgInit{}
	for _, r := range runs {
		t, b := 0.0, 0.0
		for _, p := range r {
			t += p.ClockMS
			b += float64(p.Bytes)
			by[p.Package] = append(by[p.Package], p)
		}
		totals, bytes = append(totals, t), append(bytes, b)
	}
	s.TotalMS, s.Bytes, s.Packages = distOf(totals).P50, distOf(bytes).P50, len(by)
	med := func(ps []pkgInit, f func(pkgInit) float64) float64 {
		xs := make([]float64, len(ps))
		for i, p := range ps {
			xs[i] = f(p)
		}
		return distOf(xs).P50
	}
	all := make([]pkgInit, 0, len(by))
	for name, ps := range by {
		all = append(all, pkgInit{Package: name, ClockMS: med(ps, func(p pkgInit) float64 { return p.ClockMS }),
			Bytes: int64(med(ps, func(p pkgInit) float64 { return float64(p.Bytes) })), Allocs: int64(med(ps, func(p pkgInit) float64 { return float64(p.Allocs) }))})
	}
	sort.Slice(all, func(i, j int) bool {
		if all[i].ClockMS != all[j].ClockMS {
			return all[i].ClockMS > all[j].ClockMS
		}
		return all[i].Package < all[j].Package
	})
	s.Top = all[:min(top, len(all))]
	return s
}
