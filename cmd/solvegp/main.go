// Command solvegp trains, evaluates and benchmarks sparse variational
// Gaussian process models — SVGP, ODVGP and SOLVE-GP (Shi, Titsias & Mnih,
// AISTATS 2020) — from the command line.
//
// Usage:
//
//	solvegp <command> [flags]
//
// The commands are:
//
//	demo     train SVGP, ODVGP and SOLVE-GP on the embedded Snelson data set,
//	         print a comparison table and plot the posteriors (Figure 3)
//	train    train a model on a CSV or gzip CSV file and save it
//	predict  write predictive means and variances for new inputs as CSV
//	eval     test RMSE, log-likelihood, accuracy and bound on a labelled file
//	split    split a data file into training and test files by a mask
//	         file (the UCI test masks) and split index, or at random
//	classify class probabilities, accuracy and log-likelihood of images
//	         under a convolutional GP model file (bench/convgp's .cgp)
//	bench    per-operation cost table (Table 3) with measured times
//
// A data file given as "-" is read from standard input. Run "solvegp
// <command> -h" for the flags of each command. Exit codes: 0
// success, 1 error (invalid flag values included), 2 bad usage (an unknown
// flag, a malformed flag value, a missing or extra argument, a flag after
// the file arguments, which must come last), 130
// interrupted (train saves the best model so far before exiting, or nothing
// if no training step had finished).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/solvegp/solvegp/internal/atomicfile"
	"unicode/utf8"
)

// Exit codes.
const (
	exitOK          = 0
	exitError       = 1
	exitUsage       = 2
	exitInterrupted = 130
)

func main() {
	// SIGTERM (a job scheduler's or kill's request to stop) is handled as
	// Ctrl-C is.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() {
		// After the first Ctrl-C, which stops training cleanly, restore
		// the default handling so that a second one ends the program.
		<-ctx.Done()
		stop()
	}()
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

type command struct {
	name, summary string
	run           func(ctx context.Context, args []string, stdout, stderr io.Writer) int
}

func commands() []command {
	return []command{
		{"demo", "train SVGP, ODVGP and SOLVE-GP on the embedded Snelson data and plot them", runDemo},
		{"train", "train a model on a CSV or gzip CSV file and save it", runTrain},
		{"predict", "write predictive means and variances for new inputs as CSV", runPredict},
		{"eval", "test RMSE, log-likelihood, accuracy and bound on a labelled file", runEval},
		{"split", "split a data file into training and test files by a mask file or at random", runSplit},
		{"classify", "class probabilities and accuracy of images under a convolutional GP model", runClassify},
		{"bench", "per-operation cost table (the paper's Table 3) with measured times", runBench},
	}
}

func usage(w io.Writer) {
	fmt.Fprintf(w, `solvegp — sparse orthogonal variational inference for Gaussian processes

Usage:
  solvegp <command> [flags]

Commands:
`)
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-8s %s\n", c.name, c.summary)
	}
	fmt.Fprintf(w, `
Run "solvegp <command> -h" for the flags of a command.
Start with "solvegp demo".
`)
}

// run executes the command line args (without the program name) and
// returns the process exit code. ctx cancellation (Ctrl-C) stops training.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		usage(stderr)
		return exitUsage
	}
	switch args[0] {
	case "-h", "-help", "--help", "help":
		usage(stdout)
		return exitOK
	}
	for _, c := range commands() {
		if c.name == args[0] {
			return c.run(ctx, args[1:], stdout, stderr)
		}
	}
	fmt.Fprintf(stderr, "solvegp: unknown command %q\n\n", args[0])
	usage(stderr)
	return exitUsage
}

// newFlags returns a flag set that reports to stderr with a usage message
// that fits on one screen: the synopsis, the command's summary and one line
// per flag (see shortUsage). The description and the flags' full usage
// texts are what docs/cli.md shows (fullUsage prints them).
func newFlags(name, synopsis, description string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		if fullHelp {
			fullUsage(fs.Output(), fs, synopsis, description)
			return
		}
		shortUsage(fs.Output(), fs, synopsis)
	}
	return fs
}

// fullHelp makes -h print fullUsage instead of shortUsage; the test that
// writes docs/cli.md sets it.
var fullHelp bool

// helpWidth is the widest line shortUsage prints, in runes.
const helpWidth = 100

// fullUsage writes the synopsis, the description and every flag's full
// usage text with its default, as the flag package formats them.
func fullUsage(w io.Writer, fs *flag.FlagSet, synopsis, description string) {
	fmt.Fprintf(w, "Usage: solvegp %s %s\n\n%s\n\nFlags:\n", fs.Name(), synopsis, description)
	fs.PrintDefaults()
}

// shortUsage writes the synopsis, the command's summary, a pointer to
// docs/cli.md and one line of at most helpWidth runes per flag: its name,
// its value type and its usage text up to the first clause that fits
// (without references to the description), with the default.
func shortUsage(w io.Writer, fs *flag.FlagSet, synopsis string) {
	summary := ""
	for _, c := range commands() {
		if c.name == fs.Name() {
			summary = c.summary
		}
	}
	// The summary, the pointer and "Flags:" share a line when they fit.
	sep, flags := "\n", "\n"
	if n := utf8.RuneCountInString(summary) + len(". Every flag in full: docs/cli.md."); n <= helpWidth {
		sep = " "
		if n+len(" Flags:") <= helpWidth {
			flags = " "
		}
	}
	fmt.Fprintf(w, "Usage: solvegp %s %s\n%s.%sEvery flag in full: docs/cli.md.%sFlags:\n", fs.Name(), synopsis,
		strings.ToUpper(summary[:1])+summary[1:], sep, flags)
	head := func(f *flag.Flag) string {
		if typ, _ := flag.UnquoteUsage(f); typ != "" {
			return "  -" + f.Name + " " + typ
		}
		return "  -" + f.Name
	}
	col := 0
	fs.VisitAll(func(f *flag.Flag) { col = max(col, utf8.RuneCountInString(head(f))) })
	fs.VisitAll(func(f *flag.Flag) {
		typ, text := flag.UnquoteUsage(f)
		text = strings.ReplaceAll(text, " (see above)", "")
		h := head(f) + strings.Repeat(" ", col+1-utf8.RuneCountInString(head(f)))
		def := ""
		if f.DefValue != "" && f.DefValue != "0" && f.DefValue != "false" && f.DefValue != "0s" {
			def = fmt.Sprintf(" (default %s)", f.DefValue)
			if typ == "string" {
				def = fmt.Sprintf(" (default %q)", f.DefValue)
			}
		}
		fmt.Fprintln(w, h+clip(text, helpWidth-utf8.RuneCountInString(h+def))+def)
	})
}

// clip shortens s to at most n runes: to its first clause (up to "; " or
// " (") if that fits and says enough (30 runes), else to whole words
// followed by "…".
func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	for _, sep := range []string{"; ", " ("} {
		if i := strings.Index(s, sep); i > 0 && utf8.RuneCountInString(s[:i]) <= n && utf8.RuneCountInString(s[:i]) >= 30 {
			return s[:i]
		}
	}
	words := strings.Fields(s)
	out := ""
	for _, w := range words {
		if utf8.RuneCountInString(out+" "+w)+1 > n {
			break
		}
		if out != "" {
			out += " "
		}
		out += w
	}
	return out + "…"
}

// parse parses args and returns (done, code): done is true when the caller
// must return code (help requested or bad usage).
func parse(fs *flag.FlagSet, args []string) (bool, int) {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return true, exitOK
		}
		return true, exitUsage
	}
	// Every command's -threads: 0 means all CPUs, a negative count is a
	// mistake.
	if f := fs.Lookup("threads"); f != nil {
		if v, err := strconv.Atoi(f.Value.String()); err == nil && v < 0 {
			fmt.Fprintf(fs.Output(), "solvegp %s: -threads %d: must be ≥ 0 (0: all CPUs)\n", fs.Name(), v)
			return true, exitError // an invalid value, as for every other flag
		}
	}
	return false, 0
}

// misplacedFlag reports an argument that looks like a flag (it starts with
// '-') after the first positional argument, and returns true if there is
// one: the flag package stops at the first argument that is not a flag, so
// that "train data.csv -m 5" would take -m for a second file. what names
// the positional arguments ("the data file"). Arguments after "--" are
// file names whatever they look like.
func misplacedFlag(fs *flag.FlagSet, args []string, what string) bool {
	rest := fs.Args()
	if len(rest) < 2 || len(args) > len(rest) && args[len(args)-len(rest)-1] == "--" {
		return false
	}
	for i, a := range rest[1:] {
		if a == "--" {
			fmt.Fprintf(fs.Output(), "solvegp %s: \"--\" must come before the first file, not after %s: the files after it may begin with '-' (see solvegp %s -h)\n", fs.Name(), rest[i], fs.Name())
			return true
		}
		if len(a) > 1 && a[0] == '-' {
			fmt.Fprintf(fs.Output(), "solvegp %s: flags must come before %s: %q follows %s (see solvegp %s -h)\n", fs.Name(), what, a, rest[i], fs.Name())
			return true
		}
	}
	return false
}

// namedFile is a file a command reads or writes, with the flag or
// argument that names it. stdio marks a flag for which "-" means standard
// input or output rather than a file of that name.
type namedFile struct {
	what, path string
	stdio      bool
}

// none reports whether f names no file: an empty path, or "-" where that
// means standard input or output.
func (f namedFile) none() bool { return f.path == "" || f.stdio && f.path == "-" }

// distinctFiles returns an error if two of files are the same file, so that
// a command neither overwrites its input nor writes two outputs to one
// path (training would then report success having lost the model or the
// data). Files that are none() are skipped. Paths are compared after
// filepath.Abs, and existing files with os.SameFile, which also catches
// links.
func distinctFiles(files ...namedFile) error {
	for i, a := range files {
		for _, b := range files[:i] {
			if a.none() || b.none() {
				continue
			}
			if sameFile(a.path, b.path) {
				return fmt.Errorf("%s and %s are the same file (%s)", b.what, a.what, a.path)
			}
		}
	}
	return nil
}

// writableDir returns an error naming the flag if f.path cannot be written
// by atomicfile.Write (skipped if f is none()): it is a directory, a file
// cannot be created in its directory, or it is a device or FIFO the
// process may not write. A run should stop before its work, not after it,
// when its output cannot be written.
func writableDir(f namedFile) error {
	if f.none() {
		return nil
	}
	if fi, err := os.Stat(f.path); err == nil && fi.IsDir() {
		return fmt.Errorf("%s %s is a directory", f.what, f.path)
	}
	if err := atomicfile.Writable(f.path); err != nil {
		return fmt.Errorf("%s %s: %w", f.what, f.path, err)
	}
	return nil
}

func sameFile(a, b string) bool {
	aa, err1 := filepath.Abs(a)
	ab, err2 := filepath.Abs(b)
	if err1 == nil && err2 == nil && aa == ab {
		return true
	}
	fa, err1 := os.Stat(a)
	fb, err2 := os.Stat(b)
	return err1 == nil && err2 == nil && os.SameFile(fa, fb)
}

// fail prints an error for command name and returns exitError.
func fail(stderr io.Writer, name string, err error) int {
	fmt.Fprintf(stderr, "solvegp %s: %v\n", name, err)
	return exitError
}
