// Package docs holds the documentation's own tests: every relative link resolves, every
// condition reason is explained, and README.md shows what docs/getting-started.md runs.
package docs

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/object-storage-manager/object-storage-manager/internal/consoledoc"
)

// root is the repository, one folder up from this package.
const root = ".."

// pages are README.md and every page under docs/, relative to the root.
func pages(t *testing.T) []string {
	t.Helper()
	md, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	out := []string{"README.md"}
	for _, p := range md {
		rel, _ := filepath.Rel(root, p)
		out = append(out, rel)
	}
	return out
}

var (
	link       = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	inlineCode = regexp.MustCompile("`[^`]*`")
	heading    = regexp.MustCompile(`^#{1,6}\s+(.*)$`)
	notSlug    = regexp.MustCompile(`[^\p{L}\p{N}\s_-]`)
)

// prose is a page's lines outside fenced code blocks, with inline code taken out: what
// GitHub renders as text, where links and headings are.
func prose(t *testing.T, page string) []string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(root, page))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	fenced := false
	for _, l := range strings.Split(string(raw), "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "```") {
			fenced = !fenced
			out = append(out, "")
			continue
		}
		if fenced {
			out = append(out, "")
			continue
		}
		out = append(out, l)
	}
	return out
}

// anchors are the ids GitHub gives a page's headings: lower case, punctuation dropped, spaces
// as hyphens, a repeated one numbered.
func anchors(t *testing.T, page string) map[string]bool {
	t.Helper()
	ids := map[string]bool{}
	seen := map[string]int{}
	for _, l := range prose(t, page) {
		m := heading.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		id := strings.ReplaceAll(notSlug.ReplaceAllString(strings.ToLower(strings.TrimSpace(m[1])), ""), " ", "-")
		if n := seen[id]; n > 0 {
			ids[id+"-"+strconv.Itoa(n)] = true
		} else {
			ids[id] = true
		}
		seen[id]++
	}
	return ids
}

// TestDocLinks: every relative link in README.md and docs/*.md reaches a file, and a link
// with a #fragment a heading of that page.
func TestDocLinks(t *testing.T) {
	checked := 0
	for _, page := range pages(t) {
		for i, l := range prose(t, page) {
			for _, m := range link.FindAllStringSubmatch(inlineCode.ReplaceAllString(l, ""), -1) {
				target := m[1]
				if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				checked++
				file, fragment, _ := strings.Cut(target, "#")
				resolved := page
				if file != "" {
					resolved = filepath.Clean(filepath.Join(filepath.Dir(page), file))
				}
				where := page + ":" + strconv.Itoa(i+1)
				if _, err := os.Stat(filepath.Join(root, resolved)); err != nil {
					t.Errorf("%s: link %s: %s does not exist", where, target, resolved)
					continue
				}
				if fragment == "" {
					continue
				}
				if !strings.HasSuffix(resolved, ".md") {
					t.Errorf("%s: link %s: a #fragment into a file that is not Markdown", where, target)
					continue
				}
				if !anchors(t, resolved)[fragment] {
					t.Errorf("%s: link %s: %s has no heading #%s", where, target, resolved, fragment)
				}
			}
		}
	}
	if checked < 50 {
		t.Errorf("only %d relative links found: is the link pattern broken?", checked)
	}
}

// notTrouble are the reasons of a condition that is as it should be; they have no section of
// their own in troubleshooting.md.
var notTrouble = []string{"Available", "Verified", "KeyRotated", "KeyRotationScheduled", "BucketsExist", "NoBuckets",
	"InUse", "NotInUse", "BucketsReady", "Scheduled", "Exists", "BelowThreshold"}

// reasons are the values of the string constants named Reason* (API) or reason* (the
// plugin's own) in the Go files of dirs.
func reasons(t *testing.T, dirs ...string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, dir := range dirs {
		files, err := filepath.Glob(filepath.Join(root, dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			file, err := parser.ParseFile(token.NewFileSet(), f, nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			for _, decl := range file.Decls {
				gen, ok := decl.(*ast.GenDecl)
				if !ok || gen.Tok != token.CONST {
					continue
				}
				for _, spec := range gen.Specs {
					vs := spec.(*ast.ValueSpec)
					for i, name := range vs.Names {
						if !strings.HasPrefix(strings.ToLower(name.Name), "reason") || i >= len(vs.Values) {
							continue
						}
						if lit, ok := vs.Values[i].(*ast.BasicLit); ok && lit.Kind == token.STRING {
							v, _ := strconv.Unquote(lit.Value)
							out[v] = dir + "." + name.Name
						}
					}
				}
			}
		}
	}
	if len(out) < 40 {
		t.Fatalf("only %d reasons found in %v: has the API moved?", len(out), dirs)
	}
	return out
}

// TestEveryReasonIsExplained: every condition reason of the API, and of kubectl osm, has a
// section of its name in troubleshooting.md (which kubectl osm trace links to), unless it says
// all is well; and every reason of the API is in a kind's reference page.
func TestEveryReasonIsExplained(t *testing.T) {
	sections := anchors(t, "docs/troubleshooting.md")
	for reason, where := range reasons(t, "api/storage/v1alpha1", "api/paas/v1alpha1", "cmd/kubectl-osm") {
		if slices.Contains(notTrouble, reason) {
			continue
		}
		if !sections[strings.ToLower(reason)] {
			t.Errorf("%s (%s) has no section \"### %s\" in docs/troubleshooting.md", reason, where, reason)
		}
	}
	var reference strings.Builder
	for _, page := range []string{"contract.md", "bucket.md", "bucketaccess.md", "application.md"} {
		raw, err := os.ReadFile(filepath.Join(root, "docs", page))
		if err != nil {
			t.Fatal(err)
		}
		reference.Write(raw)
	}
	for reason, where := range reasons(t, "api/storage/v1alpha1", "api/paas/v1alpha1") {
		if !strings.Contains(reference.String(), "`"+reason+"`") {
			t.Errorf("%s (%s) is in no reference page (docs/contract.md, bucket.md, bucketaccess.md, application.md)", reason, where)
		}
	}
}

// measurement is a figure with a unit of time or size: what README leaves to the pages that
// say how it was measured.
var measurement = regexp.MustCompile(`\b\d+(\.\d+)?\s?(ms|s|seconds?|minutes?|hours?|KiB|MiB|GiB|CPU-minutes)\b`)

// TestReadmeIsShort: README.md reads in five minutes: at most 250 lines, no figure or build
// time outside its command outputs, and every command it shows is one of
// docs/getting-started.md's, with an output of the same shape (which the e2e suite re-runs).
func TestReadmeIsShort(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimRight(string(raw), "\n"), "\n")
	if len(lines) > 250 {
		t.Errorf("README.md has %d lines, more than 250: move the detail into docs/", len(lines))
	}
	for i, l := range prose(t, "README.md") {
		if m := measurement.FindString(inlineCode.ReplaceAllString(l, "")); m != "" {
			t.Errorf("README.md:%d: %q is a measurement: it belongs in docs/development.md or docs/performance.md", i+1, m)
		}
	}

	readme, err := consoledoc.Commands(lines)
	if err != nil {
		t.Fatal(err)
	}
	raw, err = os.ReadFile(filepath.Join(root, "docs", "getting-started.md"))
	if err != nil {
		t.Fatal(err)
	}
	started, err := consoledoc.Commands(strings.Split(string(raw), "\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(readme) < 5 {
		t.Fatalf("README.md shows %d commands: is its walkthrough gone?", len(readme))
	}
	for _, c := range readme {
		i := slices.IndexFunc(started, func(s consoledoc.Command) bool { return s.Text == c.Text })
		if i < 0 {
			t.Errorf("README.md:%d: $ %s is not a command of docs/getting-started.md, so no test runs it", c.Line, c.Text)
			continue
		}
		if diff := cmp.Diff(consoledoc.Shape(started[i].Output), consoledoc.Shape(c.Output)); diff != "" {
			t.Errorf("README.md:%d: $ %s shows another output than docs/getting-started.md (-getting-started +README):\n%s", c.Line, c.Text, diff)
		}
	}
}
