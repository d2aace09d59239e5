package main

import (
	"bufio"
	"os"
	"strconv"
	"strings"

	"github.com/solvegp/solvegp/gp/data"
)

// autoStreamBuffer is the shuffle buffer, in rows, of a train run that
// streams because its data would not comfortably fit in memory.
const autoStreamBuffer = 100_000

// loadedBytes estimates the memory that loading the data files at paths
// (patterns expanded as data.OpenShards does) and training on them in
// memory takes: about three float64 copies of the values (the table, the
// standardized inputs, the training rows), a CSV value taking about as
// many bytes as text as it does as a float64, gzip shrinking CSV about
// four times and Parquet's doubles about two. A file it cannot stat, or a
// pattern that matches nothing, counts as empty (loading reports it).
func loadedBytes(paths []string) int64 {
	names, _ := data.ExpandPaths(paths) // an error is loading's to report
	var total int64
	for _, name := range names {
		st, err := os.Stat(name)
		if err != nil || !st.Mode().IsRegular() {
			continue
		}
		factor := int64(3)
		switch lower := strings.ToLower(name); {
		case strings.HasSuffix(lower, ".gz"):
			factor = 12
		case data.IsParquet(lower):
			factor = 6
		}
		total += factor * st.Size()
	}
	return total
}

// memAvailable returns the memory available to new allocations in bytes
// (MemAvailable of /proc/meminfo, Linux); ok is false where it is not known.
func memAvailable() (n int64, ok bool) {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0, false
	}
	defer f.Close()
	return parseMemAvailable(bufio.NewScanner(f))
}

// parseMemAvailable reads the MemAvailable line ("MemAvailable: 123 kB")
// of a /proc/meminfo listing.
func parseMemAvailable(sc *bufio.Scanner) (int64, bool) {
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 3 && f[0] == "MemAvailable:" && f[2] == "kB" {
			kb, err := strconv.ParseInt(f[1], 10, 64)
			return kb << 10, err == nil && kb > 0
		}
	}
	return 0, false
}

// wouldNotFit reports whether data estimated at need bytes in memory would
// not comfortably fit when avail bytes are available: more than half of it
// (the model, the kernel matrices of a batch and the rest of the system
// need the other half).
func wouldNotFit(need, avail int64) bool { return need > avail/2 }

// autoStream returns the estimated in-memory size of the run's data files
// and the memory available, with ok true when the run could stream
// instead of loading: a single target column, no -collapsed, and a known
// amount of available memory.
func (f *trainFlags) autoStream() (need, avail int64, ok bool) {
	if f.useCollapsed || len(f.csv.targets) > 0 {
		return 0, 0, false
	}
	avail, ok = memAvailable()
	if !ok {
		return 0, 0, false
	}
	return loadedBytes(f.fs.Args()), avail, true
}
