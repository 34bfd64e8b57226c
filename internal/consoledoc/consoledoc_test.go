package consoledoc

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestCommands(t *testing.T) {
	page := strings.Split("# Title\n"+
		"```sh\n$ not a console block\n```\n"+
		"```console\n"+
		"$ kubectl get buckets\n"+
		"NAME   READY\n"+
		"data   True\n"+
		"$ kubectl get x \\\n"+
		"    -o name\n"+
		"$ kubectl apply -f - <<'EOF'\n"+
		"kind: Bucket\n"+
		"EOF\n"+
		"bucket/x created\n"+
		"```\n", "\n")
	got, err := Commands(page)
	if err != nil {
		t.Fatal(err)
	}
	want := []Command{
		{Line: 6, Text: "kubectl get buckets", Output: []string{"NAME   READY", "data   True"}, OutputStart: 6, OutputEnd: 8},
		{Line: 9, Text: "kubectl get x \\\n    -o name", OutputStart: 10, OutputEnd: 10},
		{Line: 11, Text: "kubectl apply -f - <<'EOF'\nkind: Bucket\nEOF", Output: []string{"bucket/x created"}, OutputStart: 13, OutputEnd: 14},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Commands (-want +got):\n%s", diff)
	}

	if _, err := Commands(strings.Split("```console\noutput first\n```", "\n")); err == nil {
		t.Error("output before any command: no error")
	}
	if _, err := Commands(strings.Split("```console\n$ ls\n", "\n")); err == nil {
		t.Error("a block left open: no error")
	}
}

// TestShape: two runs of the same command differ only in what Shape takes away.
func TestShape(t *testing.T) {
	a := []string{
		"contract.storage.osm.dev/demo      standard   nfa7vu2wbqe46d72   demo-credentials      True    Available   5s",
		"Warning: spec.bucket: Bucket private is not Ready",
		"",
		"http://127.0.0.1:17070 us-east-1",
		"etcd             ready on http://127.0.0.1:12379 (pid 28512)",
		"  export KUBECONFIG=/work/wt-docs/.osm-dev/kubeconfig",
		`OSMPJRFT6UOK57XOD3AJ [{"accessKeyID":"OSMPHKB4ZFIE23PNJSAZ","revokeAfter":"2026-11-26T18:35:50Z"}]`,
		"2026-11-26 18:28:24          6 hello.txt",
	}
	b := []string{
		"contract.storage.osm.dev/demo   standard   alkoccvychxfhzai   demo-credentials   True   Available   2m3s",
		"http://127.0.0.1:40111 us-east-1",
		"etcd             ready on http://127.0.0.1:41000 (pid 7)",
		"  export KUBECONFIG=/tmp/osm-e2e-1/state/kubeconfig",
		`OSMPAAAAAAAAAAAAAAAA [{"accessKeyID":"OSMPBBBBBBBBBBBBBBBB","revokeAfter":"2027-01-01T00:00:00Z"}]`,
		"2027-01-01 00:00:00          6 hello.txt",
	}
	if diff := cmp.Diff(Shape(a), Shape(b)); diff != "" {
		t.Errorf("the same output from two runs has two shapes (-a +b):\n%s", diff)
	}
	// What must match still does.
	if cmp.Equal(Shape([]string{"Ready=True Available"}), Shape([]string{"Ready=False Deleting"})) {
		t.Error("a changed reason has the same shape")
	}
	if cmp.Equal(Shape([]string{"6 hello.txt"}), Shape([]string{"6 other.txt"})) {
		t.Error("a changed object name has the same shape")
	}
}
