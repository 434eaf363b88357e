package cli

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
)

// The agent version commands (docs/agent-versions.md): publish an agents
// file as a version, list versions and aliases, diff two versions, point
// an alias. They need a token with the agents:manage scope.

type agentVersion struct {
	ID          string          `json:"id"`
	Agents      []string        `json:"agents"`
	PublishedAt string          `json:"published_at"`
	PublishedBy string          `json:"published_by"`
	File        json.RawMessage `json:"file,omitempty"`
	Created     *bool           `json:"created,omitempty"`
}

type aliasRoute struct {
	Version string `json:"version"`
	Weight  int    `json:"weight"`
}

type agentAlias struct {
	Name      string            `json:"name"`
	Routes    []aliasRoute      `json:"routes"`
	Tenants   map[string]string `json:"tenants,omitempty"`
	Deployed  string            `json:"deployed,omitempty"`
	UpdatedAt string            `json:"updated_at"`
	UpdatedBy string            `json:"updated_by"`
	Revision  int64             `json:"revision"`
}

func cmdAgents(ctx context.Context, args []string, env *Env) error {
	if len(args) == 0 {
		return usageErr("want agents publish|versions|diff|alias")
	}
	switch args[0] {
	case "publish":
		return cmdAgentsPublish(ctx, args[1:], env)
	case "versions":
		return cmdAgentsVersions(ctx, args[1:], env)
	case "diff":
		return cmdAgentsDiff(ctx, args[1:], env)
	case "alias":
		return cmdAgentsAlias(ctx, args[1:], env)
	}
	return usageErr("unknown agents command %q: want publish, versions, diff or alias", args[0])
}

// cmdAgentsPublish is agents publish FILE [--alias A [--weight W]].
func cmdAgentsPublish(ctx context.Context, args []string, env *Env) error {
	f := newFlags("agents publish", "FILE [--alias A [--weight W]]", env)
	alias := f.String("alias", "", "then point this alias at the version (all new runs, or --weight of them)")
	weight := f.Int("weight", 100, "with --alias: the percentage of the alias's new runs the version gets; the rest stay where the alias points")
	pos, err := f.parse(args, 1, 1)
	if err != nil {
		return err
	}
	if *weight < 1 || *weight > 100 {
		return usageErr("--weight must be 1 to 100")
	}
	if *alias == "" && *weight != 100 {
		return usageErr("--weight goes with --alias")
	}
	b, err := os.ReadFile(pos[0])
	if err != nil {
		return err
	}
	if !json.Valid(b) {
		return fmt.Errorf("%s is not JSON (baton agents validate %s says where)", pos[0], pos[0])
	}
	c, err := f.client(env)
	if err != nil {
		return err
	}
	var v agentVersion
	if err := c.request(ctx, http.MethodPost, "/v1/agent-versions", nil, json.RawMessage(b), &v); err != nil {
		return err
	}
	var al *agentAlias
	if *alias != "" {
		if al, err = moveAlias(ctx, c, *alias, v.ID, *weight); err != nil {
			return fmt.Errorf("published %s, but the alias did not move: %w", v.ID, err)
		}
	}
	if f.json {
		return writeJSON(env, map[string]any{"version": v, "alias": al})
	}
	what := "published"
	if v.Created != nil && !*v.Created {
		what = "already published (same file)"
	}
	fmt.Fprintf(env.Stdout, "%s %s (agents: %s)\n", v.ID, what, strings.Join(v.Agents, ", "))
	if al != nil {
		fmt.Fprintf(env.Stdout, "alias %s → %s (revision %d)\n", al.Name, routesText(al.Routes), al.Revision)
	}
	return nil
}

// moveAlias points alias at version for weight percent of its new runs:
// 100 replaces its routes; less scales the other routes down to the rest.
func moveAlias(ctx context.Context, c *client, alias, version string, weight int) (*agentAlias, error) {
	var cur agentAlias
	err := c.request(ctx, http.MethodGet, "/v1/agent-aliases/"+url.PathEscape(alias), nil, nil, &cur)
	if ae, ok := err.(*APIError); ok && ae.Status == http.StatusNotFound {
		if weight != 100 {
			return nil, fmt.Errorf("alias %s does not exist yet: create it with all runs on one version first", alias)
		}
		err = nil
	}
	if err != nil {
		return nil, err
	}
	routes := []aliasRoute{{Version: version, Weight: weight}}
	if weight < 100 {
		rest := []aliasRoute{}
		total := 0
		for _, r := range cur.Routes {
			if r.Version != version {
				rest, total = append(rest, r), total+r.Weight
			}
		}
		if total == 0 {
			return nil, fmt.Errorf("alias %s routes only to %s: nothing to split with", alias, version)
		}
		left := 100 - weight
		for i, r := range rest {
			share := r.Weight * left / total
			if i == len(rest)-1 {
				share = left
			}
			left -= share
			if share > 0 {
				routes = append(routes, aliasRoute{Version: r.Version, Weight: share})
			}
		}
	}
	var out agentAlias
	body := map[string]any{"routes": routes, "revision": cur.Revision}
	if cur.Tenants != nil {
		body["tenants"] = cur.Tenants
	}
	if err := c.request(ctx, http.MethodPut, "/v1/agent-aliases/"+url.PathEscape(alias), nil, body, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

func routesText(rs []aliasRoute) string {
	parts := make([]string, len(rs))
	for i, r := range rs {
		parts[i] = fmt.Sprintf("%s %d%%", r.Version, r.Weight)
	}
	return strings.Join(parts, ", ")
}

// cmdAgentsVersions lists the versions (newest first) and the aliases.
func cmdAgentsVersions(ctx context.Context, args []string, env *Env) error {
	f := newFlags("agents versions", "", env)
	if _, err := f.parse(args, 0, 0); err != nil {
		return err
	}
	c, err := f.client(env)
	if err != nil {
		return err
	}
	var out struct {
		Versions []agentVersion `json:"versions"`
		Aliases  []agentAlias   `json:"aliases"`
	}
	if err := c.request(ctx, http.MethodGet, "/v1/agent-versions", nil, nil, &out); err != nil {
		return err
	}
	if f.json {
		return writeJSON(env, out)
	}
	names := map[string][]string{}
	for _, a := range out.Aliases {
		for _, r := range a.Routes {
			label := a.Name
			if r.Weight < 100 {
				label += " " + strconv.Itoa(r.Weight) + "%"
			}
			names[r.Version] = append(names[r.Version], label)
		}
		for t, v := range a.Tenants {
			names[v] = append(names[v], a.Name+" (tenant "+t+")")
		}
	}
	tw := tabwriter.NewWriter(env.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "VERSION\tPUBLISHED\tBY\tAGENTS\tALIASES")
	for _, v := range out.Versions {
		sort.Strings(names[v.ID])
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", v.ID, localTime(v.PublishedAt), v.PublishedBy, strings.Join(v.Agents, ","), strings.Join(names[v.ID], ", "))
	}
	return tw.Flush()
}

// cmdAgentsAlias is agents alias NAME VERSION [--weight W]: point an
// alias at a version (rollback is pointing it back).
func cmdAgentsAlias(ctx context.Context, args []string, env *Env) error {
	f := newFlags("agents alias", "NAME VERSION [--weight W] [--if-eval EVAL [--min-pass P]]", env)
	weight := f.Int("weight", 100, "the percentage of the alias's new runs the version gets; the rest stay where the alias points")
	ifEval := f.String("if-eval", "", "move the alias only if this eval completed on VERSION and every case passed")
	minPass := f.Float64("min-pass", -1, "with --if-eval: a pass rate (0 to 1) that is enough instead of every case")
	pos, err := f.parse(args, 2, 2)
	if err != nil {
		return err
	}
	set := map[string]bool{}
	f.Visit(func(fl *flag.Flag) { set[fl.Name] = true })
	switch {
	case *weight < 1 || *weight > 100:
		return usageErr("--weight must be 1 to 100")
	case set["if-eval"] && *ifEval == "":
		return usageErr("--if-eval wants an eval id")
	case set["min-pass"] && !set["if-eval"]:
		return usageErr("--min-pass goes with --if-eval")
	case set["min-pass"] && (*minPass < 0 || *minPass > 1):
		return usageErr("--min-pass wants a pass rate from 0 to 1; got %g", *minPass)
	}
	c, err := f.client(env)
	if err != nil {
		return err
	}
	if *ifEval != "" {
		v, err := checkEvalGate(ctx, c, *ifEval, pos[1], *minPass)
		if err != nil {
			return err
		}
		if !f.json {
			fmt.Fprintf(env.Stdout, "eval %s passed on %s: pass rate %s (%d of %d)\n", v.EvalID, v.AgentVersion, percent(v.passRate()), v.Progress.Passed, v.Progress.Total)
		}
	}
	al, err := moveAlias(ctx, c, pos[0], pos[1], *weight)
	if err != nil {
		return err
	}
	if f.json {
		return writeJSON(env, al)
	}
	fmt.Fprintf(env.Stdout, "alias %s → %s (revision %d)\n", al.Name, routesText(al.Routes), al.Revision)
	return nil
}

// cmdAgentsDiff prints what changed between two versions, agent by agent:
// agents added and removed, and for each agent in both, its settings as
// indented JSON in a unified line diff.
func cmdAgentsDiff(ctx context.Context, args []string, env *Env) error {
	f := newFlags("agents diff", "V1 V2", env)
	pos, err := f.parse(args, 2, 2)
	if err != nil {
		return err
	}
	c, err := f.client(env)
	if err != nil {
		return err
	}
	var files [2]map[string]json.RawMessage
	for i, id := range pos {
		var v agentVersion
		if err := c.request(ctx, http.MethodGet, "/v1/agent-versions/"+url.PathEscape(id), nil, nil, &v); err != nil {
			return err
		}
		if files[i], err = agentsBySlug(v.File); err != nil {
			return fmt.Errorf("version %s: %w", id, err)
		}
	}
	d := diffAgents(files[0], files[1])
	if f.json {
		return writeJSON(env, map[string]any{"from": pos[0], "to": pos[1], "diff": d})
	}
	if d == "" {
		fmt.Fprintf(env.Stdout, "%s and %s declare the same agents\n", pos[0], pos[1])
		return nil
	}
	fmt.Fprintf(env.Stdout, "--- %s\n+++ %s\n%s", pos[0], pos[1], d)
	return nil
}

// agentsBySlug reads an agents file's agents by slug, as indented JSON.
func agentsBySlug(file []byte) (map[string]json.RawMessage, error) {
	var f struct {
		Agents []map[string]any `json:"agents"`
	}
	if err := json.Unmarshal(file, &f); err != nil {
		return nil, err
	}
	out := map[string]json.RawMessage{}
	for _, a := range f.Agents {
		slug, _ := a["slug"].(string)
		b, err := json.MarshalIndent(a, "", "  ")
		if err != nil {
			return nil, err
		}
		out[slug] = b
	}
	return out, nil
}

// diffAgents writes the changes from a to b.
func diffAgents(a, b map[string]json.RawMessage) string {
	slugs := map[string]bool{}
	for s := range a {
		slugs[s] = true
	}
	for s := range b {
		slugs[s] = true
	}
	order := make([]string, 0, len(slugs))
	for s := range slugs {
		order = append(order, s)
	}
	sort.Strings(order)
	var sb strings.Builder
	for _, s := range order {
		x, inA := a[s]
		y, inB := b[s]
		switch {
		case !inA:
			fmt.Fprintf(&sb, "agent %s: added\n", s)
			writeLines(&sb, "+ ", string(y))
		case !inB:
			fmt.Fprintf(&sb, "agent %s: removed\n", s)
			writeLines(&sb, "- ", string(x))
		case string(x) != string(y):
			fmt.Fprintf(&sb, "agent %s: changed\n", s)
			sb.WriteString(lineDiff(strings.Split(string(x), "\n"), strings.Split(string(y), "\n")))
		}
	}
	return sb.String()
}

func writeLines(sb *strings.Builder, prefix, text string) {
	for _, l := range strings.Split(text, "\n") {
		sb.WriteString(prefix + l + "\n")
	}
}

// lineDiff is a diff of two line lists by their longest common
// subsequence: "  " kept, "- " removed, "+ " added (a changed line's
// removal before its addition); runs of kept lines
// longer than six show their first and last three.
func lineDiff(a, b []string) string {
	n, m := len(a), len(b)
	lcs := make([][]int, n+1)
	for i := range lcs {
		lcs[i] = make([]int, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var out []string
	i, j := 0, 0
	for i < n || j < m {
		switch {
		case i < n && j < m && a[i] == b[j]:
			out = append(out, "  "+a[i])
			i, j = i+1, j+1
		case i < n && (j == m || lcs[i+1][j] >= lcs[i][j+1]):
			out = append(out, "- "+a[i])
			i++
		default:
			out = append(out, "+ "+b[j])
			j++
		}
	}
	var sb strings.Builder
	for k := 0; k < len(out); {
		e := k
		for e < len(out) && strings.HasPrefix(out[e], "  ") {
			e++
		}
		if e-k > 6 {
			for _, l := range out[k : k+3] {
				sb.WriteString(l + "\n")
			}
			fmt.Fprintf(&sb, "  … %d unchanged lines\n", e-k-6)
			for _, l := range out[e-3 : e] {
				sb.WriteString(l + "\n")
			}
		} else {
			for _, l := range out[k:e] {
				sb.WriteString(l + "\n")
			}
		}
		if e < len(out) {
			sb.WriteString(out[e] + "\n")
			e++
		}
		k = e
	}
	return sb.String()
}

// localTime writes an RFC 3339 time of the API in the local zone, to the
// second ("2026-11-27 13:54:04"); anything else as it came.
func localTime(s string) string {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return s
	}
	return t.Local().Format(time.DateTime)
}

// writeJSON prints v as one line of JSON (--json).
func writeJSON(env *Env, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	fmt.Fprintln(env.Stdout, string(b))
	return nil
}
