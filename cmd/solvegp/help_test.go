package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

var updateCLIDoc = flag.Bool("update-cli-doc", false, "rewrite docs/cli.md from the commands' full help")

// cliDocPath is docs/cli.md, the full reference of every command's flags.
var cliDocPath = filepath.Join("..", "..", "docs", "cli.md")

// helpFlags returns the flag names a -h output lists.
func helpFlags(help string) []string {
	var names []string
	_, list, _ := strings.Cut(help, "Flags:\n")
	for _, line := range strings.Split(list, "\n") {
		if strings.HasPrefix(line, "  -") {
			names = append(names, strings.Fields(line)[0][1:])
		}
	}
	return names
}

// TestHelpFitsOneScreen checks that `solvegp <cmd> -h` is at most 40 lines
// of at most 100 columns and lists every flag.
func TestHelpFitsOneScreen(t *testing.T) {
	for _, c := range commands() {
		code, _, help := runCmd(t, c.name, "-h")
		if code != exitOK {
			t.Fatalf("%s -h: exit %d", c.name, code)
		}
		lines := strings.Split(strings.TrimSuffix(help, "\n"), "\n")
		if len(lines) > 40 {
			t.Errorf("%s -h: %d lines, want at most 40", c.name, len(lines))
		}
		for _, l := range lines {
			if n := utf8.RuneCountInString(l); n > helpWidth {
				t.Errorf("%s -h: %d columns: %q", c.name, n, l)
			}
		}
		fullHelp = true
		_, _, full := runCmd(t, c.name, "-h")
		fullHelp = false
		if got, want := helpFlags(help), helpFlags(full); strings.Join(got, " ") != strings.Join(want, " ") || len(want) == 0 {
			t.Errorf("%s -h lists flags %v, the flag set has %v", c.name, got, want)
		}
	}
}

// cliDoc returns docs/cli.md: an introduction and, for every command, its
// full help (synopsis, description and every flag's usage).
func cliDoc(t *testing.T) string {
	var b strings.Builder
	b.WriteString(`# solvegp command line

Every command of ` + "`solvegp`" + ` with its full description and every flag.
` + "`solvegp <command> -h`" + ` prints a one-screen summary of the same flags.
This file is written by ` + "`go test ./cmd/solvegp -run TestCLIDoc -update-cli-doc`" + `
from the flag definitions, and the test fails when a flag is missing here.
`)
	fullHelp = true
	defer func() { fullHelp = false }()
	for _, c := range commands() {
		_, _, full := runCmd(t, c.name, "-h")
		fmt.Fprintf(&b, "\n## solvegp %s\n\n%s.\n\n```text\n%s```\n", c.name, strings.ToUpper(c.summary[:1])+c.summary[1:], full)
	}
	return b.String()
}

// TestCLIDoc checks that docs/cli.md documents every flag of every
// command in the command's section; -update-cli-doc rewrites it.
func TestCLIDoc(t *testing.T) {
	want := cliDoc(t)
	if *updateCLIDoc {
		if err := os.WriteFile(cliDocPath, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	doc, err := os.ReadFile(cliDocPath)
	if err != nil {
		t.Fatal(err)
	}
	sections := strings.Split(string(doc), "\n## solvegp ")
	for _, c := range commands() {
		fullHelp = true
		_, _, full := runCmd(t, c.name, "-h")
		fullHelp = false
		var sec string
		for _, s := range sections[1:] {
			if strings.HasPrefix(s, c.name+"\n") {
				sec = s
			}
		}
		if sec == "" {
			t.Errorf("docs/cli.md has no section \"## solvegp %s\"", c.name)
			continue
		}
		for _, name := range helpFlags(full) {
			if !strings.Contains(sec, "\n  -"+name+" ") && !strings.Contains(sec, "\n  -"+name+"\n") {
				t.Errorf("docs/cli.md, solvegp %s: flag -%s missing", c.name, name)
			}
		}
	}
}
