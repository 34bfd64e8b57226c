package main

import "testing"

// TestFirstError: a failed reload's one line names the compiler's first error, not the
// "# package" header go build prints before it.
func TestFirstError(t *testing.T) {
	for _, tc := range []struct{ out, want string }{
		{"# github.com/x/y/internal/controller/storage\ninternal/controller/storage/c.go:551:14: syntax error: unexpected {\ninternal/controller/storage/c.go:560:1: more\n",
			"internal/controller/storage/c.go:551:14: syntax error: unexpected {"},
		{"\n\n  Error: a generator's own words  \n", "Error: a generator's own words"},
		{"", "no output"},
	} {
		if got := firstError([]byte(tc.out)); got != tc.want {
			t.Errorf("firstError(%q) = %q, want %q", tc.out, got, tc.want)
		}
	}
}
