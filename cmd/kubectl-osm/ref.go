package main

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// kind is one of the operator's kinds the plugin reads.
type kind string

const (
	kindContract     kind = "Contract"
	kindBucket       kind = "Bucket"
	kindBucketAccess kind = "BucketAccess"
	kindApplication  kind = "Application"
	kindSecret       kind = "Secret"
)

// kindNames are the names kubectl users type for each kind: singular, plural, short and
// fully qualified, as `kubectl get` takes them.
var kindNames = map[string]kind{
	"contract": kindContract, "contracts": kindContract, "contract.storage.osm.dev": kindContract,
	"contracts.storage.osm.dev": kindContract,
	"bucket":                    kindBucket, "buckets": kindBucket, "bucket.storage.osm.dev": kindBucket,
	"buckets.storage.osm.dev": kindBucket,
	"bucketaccess":            kindBucketAccess, "bucketaccesses": kindBucketAccess,
	"bucketaccess.storage.osm.dev": kindBucketAccess, "bucketaccesses.storage.osm.dev": kindBucketAccess,
	"application": kindApplication, "applications": kindApplication, "app": kindApplication,
	"application.paas.osm.dev": kindApplication, "applications.paas.osm.dev": kindApplication,
}

// ref names one object: its kind and name, in the namespace the command runs in.
type ref struct {
	Kind kind
	Name string
}

func (r ref) String() string { return string(r.Kind) + "/" + r.Name }

// parseRef reads "KIND/NAME" or "KIND NAME", as kubectl does, and checks the kind is one of
// allowed.
func parseRef(args []string, allowed ...kind) (ref, error) {
	var typ, name string
	switch {
	case len(args) == 1 && strings.Contains(args[0], "/"):
		typ, name, _ = strings.Cut(args[0], "/")
	case len(args) == 2:
		typ, name = args[0], args[1]
	default:
		return ref{}, fmt.Errorf("name one object, as %s/NAME", strings.ToLower(string(allowed[0])))
	}
	k, ok := kindNames[strings.ToLower(typ)]
	if !ok || name == "" {
		return ref{}, fmt.Errorf("%q is not one of %s", strings.Join(args, " "), kindList(allowed))
	}
	for _, a := range allowed {
		if a == k {
			return ref{Kind: k, Name: name}, nil
		}
	}
	return ref{}, fmt.Errorf("%s: this command takes %s", k, kindList(allowed))
}

func kindList(kinds []kind) string {
	names := make([]string, len(kinds))
	for i, k := range kinds {
		names[i] = strings.ToLower(string(k)) + "/NAME"
	}
	return strings.Join(names, ", ")
}

// table lays rows out in columns, as kubectl does, without the padding of an empty last cell.
type table struct{ rows [][]string }

func (t *table) row(cells ...string) { t.rows = append(t.rows, cells) }

// writeTo writes the rows to b.
func (t *table) writeTo(b *bytes.Buffer) {
	var laid bytes.Buffer
	tw := tabwriter.NewWriter(&laid, 0, 0, 3, ' ', 0)
	for _, r := range t.rows {
		// Writes to a bytes.Buffer do not fail, nor does the tabwriter over one.
		_, _ = io.WriteString(tw, strings.Join(r, "\t")+"\n")
	}
	_ = tw.Flush()
	for _, l := range strings.SplitAfter(laid.String(), "\n") {
		if l != "" {
			b.WriteString(strings.TrimRight(strings.TrimSuffix(l, "\n"), " ") + "\n")
		}
	}
}
