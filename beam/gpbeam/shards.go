// Package gpbeam runs solvegp models over sharded CSV or Parquet data as
// Apache Beam pipelines: batch prediction (Predict), evaluation (Eval) and
// the refit of an SVGP's optimal collapsed q(u) (Refit). Each input shard
// is one element of the pipeline, parsed and processed by one worker, so a
// runner spreads the shards over as many machines as it has; the
// in-process Prism runner runs the same pipelines on one machine.
//
// Shards are read with gp/data's CSV reader, or its Parquet reader for
// files named *.parquet, and their columns matched to the model's inputs
// as solvegp predict matches them, so a shard that solvegp predict accepts
// is accepted here; a shard that fails to parse (a truncated Parquet file
// among them) fails the pipeline with an error naming the file.
package gpbeam

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem"
	// Local paths, the default scheme, are always readable.
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem/local"

	"github.com/solvegp/solvegp/gp/modelfile"
	"github.com/solvegp/solvegp/internal/atomicfile"
)

// Shard is one input file of a pipeline: its path (or URL, such as
// gs://bucket/part-00003.csv) and its 0-based index among the sorted
// matches of the input glob.
type Shard struct {
	Index int
	Path  string
}

// MatchShards expands glob with the Beam file system of its scheme (local
// paths by default) and returns the matching files in sorted order. No
// match is an error: a pipeline over no data is almost always a typo.
func MatchShards(ctx context.Context, glob string) ([]Shard, error) {
	if glob == "" {
		return nil, fmt.Errorf("gpbeam: empty input glob")
	}
	fs, err := filesystem.New(ctx, glob)
	if err != nil {
		return nil, fmt.Errorf("gpbeam: %s: %w", glob, err)
	}
	defer fs.Close()
	paths, err := fs.List(ctx, glob)
	if err != nil {
		return nil, fmt.Errorf("gpbeam: %s: %w", glob, err)
	}
	if len(paths) == 0 {
		return nil, fmt.Errorf("gpbeam: no file matches %s", glob)
	}
	slices.Sort(paths)
	out := make([]Shard, len(paths))
	for i, p := range paths {
		out[i] = Shard{Index: i, Path: p}
	}
	return out, nil
}

// readFile returns the contents of path, read through the Beam file system
// of its scheme.
func readFile(ctx context.Context, path string) ([]byte, error) {
	fs, err := filesystem.New(ctx, path)
	if err != nil {
		return nil, err
	}
	defer fs.Close()
	r, err := fs.OpenRead(ctx, path)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return io.ReadAll(r)
}

// hasScheme reports whether path is a URL (gs://..., s3://...) rather than
// a local path.
func hasScheme(path string) bool {
	i := strings.Index(path, "://")
	return i > 0 && !strings.ContainsAny(path[:i], "/\\")
}

// writeFile writes buf to path: a local path atomically with
// internal/atomicfile, so that a retried bundle or a failed write never
// leaves a partial shard, and a URL through the Beam file system of its
// scheme (object stores commit a write on Close).
func writeFile(ctx context.Context, path string, buf []byte) error {
	if !hasScheme(path) {
		return atomicfile.WriteFile(path, buf, 0o644)
	}
	fs, err := filesystem.New(ctx, path)
	if err != nil {
		return err
	}
	defer fs.Close()
	w, err := fs.OpenWrite(ctx, path)
	if err != nil {
		return err
	}
	if _, err := io.Copy(w, bytes.NewReader(buf)); err != nil {
		w.Close()
		return err
	}
	return w.Close()
}

// LoadModel reads the model file at path (a local path or a URL of a Beam
// file system) and decodes it, returning its bytes, which the pipelines
// ship to their workers, with the decoded bundle.
func LoadModel(ctx context.Context, path string) ([]byte, *modelfile.Bundle, error) {
	buf, err := readFile(ctx, path)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	b, err := modelfile.Unmarshal(buf)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	return buf, b, nil
}
