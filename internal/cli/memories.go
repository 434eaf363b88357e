package cli

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
)

// Long-term memories (docs/memory.md): baton memories ls lists a
// subject's memories, baton memories rm deletes one or erases them all.
// Without --subject they are the caller's own (its token's label, its
// JWT's subject); another subject needs a token with memories:subject.

// memoriesPage is the most memories one request asks for.
const memoriesPage = 100

func cmdMemories(ctx context.Context, args []string, env *Env) error {
	if len(args) < 1 {
		return usageErr("want memories ls|rm")
	}
	switch args[0] {
	case "ls", "list":
		return cmdMemoriesList(ctx, args[1:], env)
	case "rm", "delete":
		return cmdMemoriesRemove(ctx, args[1:], env)
	}
	return usageErr("unknown memories command %q: want ls or rm", args[0])
}

// memory is a memory as the API answers it.
type memory struct {
	ID          string `json:"id"`
	Text        string `json:"text"`
	Subject     string `json:"subject"`
	Source      string `json:"source"`
	SourceRunID string `json:"source_run_id"`
	CreatedAt   string `json:"created_at"`
	UpdatedAt   string `json:"updated_at"`
}

// subjectQuery is ?subject= when --subject names one.
func subjectQuery(subject string) url.Values {
	q := url.Values{}
	if subject != "" {
		q.Set("subject", subject)
	}
	return q
}

func cmdMemoriesList(ctx context.Context, args []string, env *Env) error {
	f := newFlags("memories ls", "[--subject S] [--limit N] [--json]", env)
	subject := f.String("subject", "", "whose memories (default: your own; another subject needs the memories:subject scope)")
	limit := f.Int("limit", 0, "list at most N memories (default: all of them)")
	if _, err := f.parse(args, 0, 0); err != nil {
		return err
	}
	if *limit < 0 {
		return usageErr("--limit wants 1 or more (0 lists all); got %d", *limit)
	}
	c, err := f.client(env)
	if err != nil {
		return err
	}
	// Follow next_cursor until the last page or --limit.
	all := []memory{}
	next := ""
	for {
		q := subjectQuery(*subject)
		size := memoriesPage
		if *limit > 0 {
			size = min(size, *limit-len(all))
		}
		q.Set("limit", strconv.Itoa(size))
		if next != "" {
			q.Set("cursor", next)
		}
		var page struct {
			Memories   []memory `json:"memories"`
			NextCursor string   `json:"next_cursor"`
		}
		if err := c.request(ctx, http.MethodGet, "/v1/memories", q, nil, &page); err != nil {
			return err
		}
		all = append(all, page.Memories...)
		next = page.NextCursor
		if next == "" || (*limit > 0 && len(all) >= *limit) {
			break
		}
	}
	if f.json {
		return writeJSON(env, map[string]any{"memories": all, "next_cursor": next})
	}
	p := newPrinter(env, false)
	if len(all) == 0 {
		p.line("no memories")
		return nil
	}
	idw := len("ID")
	for _, m := range all {
		idw = max(idw, len(m.ID))
	}
	p.line("%s", p.paint(cBold, fmt.Sprintf("%-*s %-19s %-10s %s", idw, "ID", "CREATED", "SOURCE", "TEXT")))
	for _, m := range all {
		p.line("%-*s %-19s %-10s %s", idw, m.ID, localTime(m.CreatedAt), m.Source, truncate(oneLine(m.Text), 72))
	}
	if next != "" {
		p.line("%s", p.paint(cDim, fmt.Sprintf("%d listed; more remain (raise --limit)", len(all))))
	}
	return nil
}

func cmdMemoriesRemove(ctx context.Context, args []string, env *Env) error {
	f := newFlags("memories rm", "ID [--subject S] | --all --subject S", env)
	subject := f.String("subject", "", "whose memory (default: your own; another subject needs the memories:subject scope)")
	all := f.Bool("all", false, "erase every memory of --subject, and refuse what runs that began before now would write later")
	pos, err := f.parse(args, 0, 1)
	if err != nil {
		return err
	}
	switch {
	case *all && len(pos) > 0:
		return usageErr("give a memory ID or --all, not both")
	case *all && *subject == "":
		return usageErr("--all erases one subject's memories: name it with --subject")
	case !*all && len(pos) == 0:
		return usageErr("name the memory to delete (baton memories ls lists them), or erase a subject with --all --subject S")
	}
	c, err := f.client(env)
	if err != nil {
		return err
	}
	if !*all {
		if err := c.request(ctx, http.MethodDelete, "/v1/memories/"+url.PathEscape(pos[0]), subjectQuery(*subject), nil, nil); err != nil {
			return err
		}
		if f.json {
			return writeJSON(env, map[string]any{"deleted": pos[0]})
		}
		fmt.Fprintf(env.Stdout, "deleted memory %s\n", pos[0])
		return nil
	}
	var erased struct {
		Subject  string `json:"subject"`
		Deleted  int    `json:"deleted"`
		ErasedAt string `json:"erased_at"`
	}
	if err := c.request(ctx, http.MethodDelete, "/v1/memories", subjectQuery(*subject), nil, &erased); err != nil {
		return err
	}
	if f.json {
		return writeJSON(env, erased)
	}
	fmt.Fprintf(env.Stdout, "erased the memories of %s: %d deleted (at %s)\n", erased.Subject, erased.Deleted, localTime(erased.ErasedAt))
	return nil
}
