package main

import (
	"archive/zip"
	"compress/flate"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"time"
)

func main() {
	out := flag.String("o", "", "output zip")
	flag.Parse()
	if *out == "" || flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: mkzip -o OUT.zip NAME=PATH ...")
		os.Exit(2)
	}
	if err := write(*out, flag.Args()); err != nil {
		fmt.Fprintln(os.Stderr, "mkzip:", err)
		os.Exit(1)
	}
}

// epoch is the fixed modification time of every entry.
var epoch = time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)

func write(out string, specs []string) error {
	type entry struct{ name, path string }
	var entries []entry
	for _, s := range specs {
		name, path, ok := strings.Cut(s, "=")
		if !ok || name == "" || path == "" {
			return fmt.Errorf("want NAME=PATH, got %q", s)
		}
		entries = append(entries, entry{name, path})
	}
	sort.Slice(entries, func(i, j int) bool { return entries[i].name < entries[j].name })
	tmp := out + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	zw := zip.NewWriter(f)
	// The best deflate level: a zip is built once and downloaded at every
	// cold start, and inflating it costs the same at any level.
	zw.RegisterCompressor(zip.Deflate, func(w io.Writer) (io.WriteCloser, error) {
		return flate.NewWriter(w, flate.BestCompression)
	})
	for _, e := range entries {
		src, err := os.Open(e.path)
		if err != nil {
			f.Close()
			return err
		}
		h := &zip.FileHeader{Name: e.name, Method: zip.Deflate, Modified: epoch}
		mode := os.FileMode(0o644)
		if e.name == "bootstrap" {
			mode = 0o755
		}
		h.SetMode(mode)
		w, err := zw.CreateHeader(h)
		if err == nil {
			_, err = io.Copy(w, src)
		}
		src.Close()
		if err != nil {
			f.Close()
			return err
		}
	}
	if err := zw.Close(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, out)
}
