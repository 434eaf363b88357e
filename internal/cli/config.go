package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// DefaultURL is where the CLI finds the API without --url, BATON_URL or
// a profile: baton dev's default address.
const DefaultURL = "http://127.0.0.1:8080"

// profile is the file `baton login` writes.
type profile struct {
	URL   string `json:"url"`
	Token string `json:"token"`
}

// profilePath is $XDG_CONFIG_HOME/baton/config.json, by default
// ~/.config/baton/config.json.
func (e *Env) profilePath() (string, error) {
	dir := e.Getenv("XDG_CONFIG_HOME")
	if dir == "" {
		home := e.Getenv("HOME")
		if home == "" {
			return "", errors.New("neither HOME nor XDG_CONFIG_HOME is set: cannot locate the profile")
		}
		dir = filepath.Join(home, ".config")
	}
	return filepath.Join(dir, "baton", "config.json"), nil
}

func (e *Env) readProfile() (profile, error) {
	path, err := e.profilePath()
	if err != nil {
		return profile{}, nil
	}
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return profile{}, nil
	}
	if err != nil {
		return profile{}, fmt.Errorf("read profile: %w", err)
	}
	var p profile
	if err := json.Unmarshal(b, &p); err != nil {
		return profile{}, fmt.Errorf("profile %s is not valid JSON: %w", path, err)
	}
	return p, nil
}

func (e *Env) writeProfile(p profile) (string, error) {
	path, err := e.profilePath()
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return "", fmt.Errorf("write profile: %w", err)
	}
	b, _ := json.MarshalIndent(p, "", "  ")
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, append(b, '\n'), 0o600); err != nil {
		return "", fmt.Errorf("write profile: %w", err)
	}
	if err := os.Chmod(tmp, 0o600); err != nil {
		return "", fmt.Errorf("write profile: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return "", fmt.Errorf("write profile: %w", err)
	}
	return path, nil
}

// resolve picks the URL and token: flags, then BATON_URL / BATON_TOKEN,
// then the profile, then DefaultURL (no token).
func (e *Env) resolve(flagURL, flagToken string) (string, string, error) {
	p, err := e.readProfile()
	if err != nil {
		return "", "", err
	}
	u := first(flagURL, e.Getenv("BATON_URL"), p.URL, DefaultURL)
	tok := first(flagToken, e.Getenv("BATON_TOKEN"), p.Token)
	if !strings.HasPrefix(u, "http://") && !strings.HasPrefix(u, "https://") {
		return "", "", usageErr("the API URL %q must start with http:// or https://", u)
	}
	return strings.TrimRight(u, "/"), tok, nil
}

func first(vs ...string) string {
	for _, v := range vs {
		if strings.TrimSpace(v) != "" {
			return strings.TrimSpace(v)
		}
	}
	return ""
}
