package cli

import (
	"cmp"
	"encoding/xml"
	"fmt"
	"strings"
	"time"
)

// JUnit XML of evals (baton eval run --junit FILE), for CI systems: a
// testsuite per eval (named by its id), a testcase per case (named by
// its id, classname eval/AGENT, its run's duration), a failure per failed
// case carrying its failing checks, skipped for a case a cancelled eval
// never scored.

type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Skipped  int          `xml:"skipped,attr"`
	Time     string       `xml:"time,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name       string          `xml:"name,attr"`
	Tests      int             `xml:"tests,attr"`
	Failures   int             `xml:"failures,attr"`
	Skipped    int             `xml:"skipped,attr"`
	Time       string          `xml:"time,attr"`
	Timestamp  string          `xml:"timestamp,attr,omitempty"`
	Properties []junitProperty `xml:"properties>property"`
	Cases      []junitCase     `xml:"testcase"`
}

type junitProperty struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Time      string        `xml:"time,attr"`
	Failure   *junitFailure `xml:"failure"`
	Skipped   *junitSkipped `xml:"skipped"`
	SystemOut string        `xml:"system-out,omitempty"`
}

type junitFailure struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",chardata"`
}

type junitSkipped struct {
	Message string `xml:"message,attr"`
}

func seconds(d time.Duration) string { return fmt.Sprintf("%.3f", d.Seconds()) }

// junitXML writes the evals as one testsuites document.
func junitXML(evals []evalView) ([]byte, error) {
	doc := junitSuites{Name: "baton eval"}
	var total time.Duration
	for _, v := range evals {
		s := junitSuite{Name: v.EvalID, Tests: len(v.Cases), Properties: []junitProperty{
			{"name", v.Name}, {"agent", v.Agent}, {"agent_version", v.AgentVersion}, {"status", v.Status}, {"pass_rate", percent(v.passRate())},
		}}
		var sum time.Duration
		for _, c := range v.Cases {
			d := time.Duration(c.DurationMS) * time.Millisecond
			sum += d
			tc := junitCase{Name: c.ID, Classname: "eval/" + v.Agent, Time: seconds(d)}
			switch {
			case !c.scored():
				s.Skipped++
				tc.Skipped = &junitSkipped{Message: fmt.Sprintf("not scored: the case is %s and the eval %s", cmp.Or(c.Status, "pending"), v.Status)}
			case !c.passed():
				s.Failures++
				fails := c.failing()
				var body strings.Builder
				for _, f := range fails {
					fmt.Fprintf(&body, "%s: %s\n", f.Name, f.Detail)
				}
				msg, typ := "the case failed", "fail"
				if len(fails) > 0 {
					msg, typ = c.firstFailure(), fails[0].Name
				}
				tc.Failure = &junitFailure{Message: truncate(msg, 200), Type: typ, Text: body.String()}
			}
			var out strings.Builder
			if c.RunID != "" {
				fmt.Fprintf(&out, "run %s\n", c.RunID)
			}
			if c.Judge != nil {
				fmt.Fprintf(&out, "judge score %.2f: %s\n", c.Judge.Score, c.Judge.Reason)
			}
			if c.FinalAnswer != "" {
				fmt.Fprintf(&out, "final answer: %s\n", c.FinalAnswer)
			}
			tc.SystemOut = out.String()
			s.Cases = append(s.Cases, tc)
		}
		// The suite's time is the eval's wall time when it has both ends,
		// else the sum of its cases'.
		start, err1 := time.Parse(time.RFC3339Nano, v.CreatedAt)
		end, err2 := time.Parse(time.RFC3339Nano, v.EndedAt)
		if err1 == nil && err2 == nil && !end.Before(start) {
			sum = end.Sub(start)
		}
		if err1 == nil {
			s.Timestamp = start.UTC().Format("2006-01-02T15:04:05")
		}
		s.Time = seconds(sum)
		total += sum
		doc.Tests += s.Tests
		doc.Failures += s.Failures
		doc.Skipped += s.Skipped
		doc.Suites = append(doc.Suites, s)
	}
	doc.Time = seconds(total)
	b, err := xml.MarshalIndent(doc, "", "  ")
	if err != nil {
		return nil, err
	}
	return append([]byte(xml.Header), append(b, '\n')...), nil
}
