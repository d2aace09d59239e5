package main

import (
	"flag"
	"fmt"
	"sort"
	"strings"
)

// likeAbsent maps training flags to the value with which a run computes
// what runs of a solvegp without the flag computed: at that value the
// flag is left out of the fingerprint, so that their checkpoints resume.
var likeAbsent = map[string]string{"mean": "zero"}

// trainingFlags returns "name=value" for every flag of fs that changes
// what training computes (all but notTraining), sorted: what the run
// fingerprint hashes of the flags, kept in the checkpoint too so that a
// resumed run with other flags can be told which. Flags of omitAtDefault
// are left out at their default value.
func trainingFlags(fs *flag.FlagSet) []string {
	var names []string
	fs.VisitAll(func(f *flag.Flag) {
		if v, ok := likeAbsent[f.Name]; ok && f.Value.String() == v || omitAtDefault[f.Name] && f.Value.String() == f.DefValue {
			return
		}
		if !notTraining[f.Name] {
			names = append(names, f.Name+"="+f.Value.String())
		}
	})
	sort.Strings(names)
	return names
}

// fingerprintMismatch is the error for a checkpoint at path whose run
// fingerprint differs from this run's. saved holds the checkpoint's
// training flags (nil for checkpoints that do not record them), now this
// run's: the flags whose values differ are named, or, if none does, the
// data is.
func fingerprintMismatch(path string, saved, now []string) error {
	if saved == nil {
		return fmt.Errorf("%s: the checkpoint comes from a run with other data or training flags; remove it to start afresh", path)
	}
	split := func(list []string) map[string]string {
		m := make(map[string]string, len(list))
		for _, s := range list {
			name, value, _ := strings.Cut(s, "=")
			m[name] = value
		}
		return m
	}
	was, is := split(saved), split(now)
	var diffs []string
	for _, s := range now {
		name, _, _ := strings.Cut(s, "=")
		if old, ok := was[name]; !ok {
			diffs = append(diffs, fmt.Sprintf("-%s is new (%s)", name, is[name]))
		} else if old != is[name] {
			diffs = append(diffs, fmt.Sprintf("-%s was %s, is %s", name, old, is[name]))
		}
	}
	for _, s := range saved {
		name, value, _ := strings.Cut(s, "=")
		if _, ok := is[name]; !ok {
			diffs = append(diffs, fmt.Sprintf("-%s was %s, is its default", name, value))
		}
	}
	if len(diffs) == 0 {
		return fmt.Errorf("%s: the checkpoint comes from a run with the same training flags but other data; remove it to start afresh", path)
	}
	return fmt.Errorf("%s: the checkpoint comes from a run with other training flags (%s); give the flags it was run with, or remove it to start afresh", path, strings.Join(diffs, "; "))
}
