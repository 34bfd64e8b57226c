// Package consoledoc reads the commands and outputs a Markdown page shows in its ```console
// blocks, and reduces an output to its shape, so that a test can hold the page to what a real
// run prints (test/e2e re-runs docs/getting-started.md; docs/ checks that README.md shows the
// same).
package consoledoc

import (
	"fmt"
	"regexp"
	"strings"
)

// Command is one "$ command" of a console block and the output the page shows under it.
type Command struct {
	// Line is where the command starts in the page, 1-based.
	Line int
	// Text is the command, with its continuation lines.
	Text string
	// Output is the lines the page shows under it.
	Output []string
	// OutputStart and OutputEnd are where the output is in the page: [start, end) as 0-based
	// line indexes.
	OutputStart, OutputEnd int
}

var heredoc = regexp.MustCompile(`<<-?'?([A-Z]+)'?`)

// Commands reads every command of the page's ```console blocks: a line that starts with
// "$ ", its continuation lines (a trailing "\", or a here-document up to its delimiter), and
// the lines after it up to the next command or the end of the block as its output.
func Commands(lines []string) ([]Command, error) {
	var cmds []Command
	inBlock := false
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		switch {
		case !inBlock && strings.HasPrefix(l, "```console"):
			inBlock = true
			continue
		case inBlock && strings.HasPrefix(l, "```"):
			inBlock = false
			continue
		case !inBlock:
			continue
		}
		if !strings.HasPrefix(l, "$ ") {
			if len(cmds) == 0 || cmds[len(cmds)-1].OutputEnd != i {
				return nil, fmt.Errorf("line %d: output with no command before it in its block: %q", i+1, l)
			}
			c := &cmds[len(cmds)-1]
			c.Output = append(c.Output, l)
			c.OutputEnd = i + 1
			continue
		}
		c := Command{Line: i + 1, Text: strings.TrimPrefix(l, "$ ")}
		for strings.HasSuffix(lines[i], `\`) && i+1 < len(lines) {
			i++
			c.Text += "\n" + lines[i]
		}
		if m := heredoc.FindStringSubmatch(c.Text); m != nil {
			for i+1 < len(lines) {
				i++
				c.Text += "\n" + lines[i]
				if lines[i] == m[1] {
					break
				}
			}
		}
		c.OutputStart, c.OutputEnd = i+1, i+1
		cmds = append(cmds, c)
	}
	if inBlock {
		return nil, fmt.Errorf("a console block is not closed")
	}
	return cmds, nil
}

// What changes from run to run, replaced by a name in both the page and the run.
var (
	timestamp  = regexp.MustCompile(`\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(\.\d+)?Z?`)
	hostPort   = regexp.MustCompile(`(127\.0\.0\.1|localhost):\d+`)
	pid        = regexp.MustCompile(`pid \d+`)
	accessKey  = regexp.MustCompile(`\bOSM[A-Z0-9]{17}\b`)
	age        = regexp.MustCompile(`\b\d+(\.\d+)?[smhd](\d+[smh])?\b`)
	absPath    = regexp.MustCompile(`(^|[\s=(])/[^\s,;)]+`)
	idLike     = regexp.MustCompile(`\b[a-z0-9]{16}\b`)
	whitespace = regexp.MustCompile(`\s+`)
)

// Shape is an output reduced to what must match between a page and a run: no times, ages,
// ports, pids, access keys, contract ids or local paths; whitespace collapsed (columns are as
// wide as their values); empty lines and admission warnings dropped (whether a warning is
// printed depends on whether a controller got there first).
func Shape(lines []string) []string {
	var out []string
	for _, l := range lines {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "Warning:") {
			continue
		}
		l = timestamp.ReplaceAllString(l, "TIME")
		l = hostPort.ReplaceAllString(l, "$1:PORT")
		l = pid.ReplaceAllString(l, "pid N")
		l = accessKey.ReplaceAllString(l, "KEY")
		l = absPath.ReplaceAllString(l, "${1}PATH")
		// A contract id: 16 lower-case letters and digits, letters alone as often as not.
		l = idLike.ReplaceAllString(l, "ID")
		l = age.ReplaceAllString(l, "AGE")
		out = append(out, whitespace.ReplaceAllString(l, " "))
	}
	return out
}
