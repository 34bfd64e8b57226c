package main

import (
	"slices"
	"testing"
)

func TestSectionsOfEachSizeAndServerKeepTheirPlace(t *testing.T) {
	doc := docHeader +
		"<!-- bench-scale N=1000 begin -->\nthousand\n<!-- bench-scale N=1000 end -->\n\n" +
		"<!-- bench-scale N=1000 s3=rgw begin -->\nthousand on rgw\n<!-- bench-scale N=1000 s3=rgw end -->\n\n" +
		"<!-- bench-scale N=100 begin -->\nhundred\n<!-- bench-scale N=100 end -->\n"
	sections := readSections(doc)
	if sections["N=1000"] != "thousand\n" || sections["N=1000 s3=rgw"] != "thousand on rgw\n" || sections["N=100"] != "hundred\n" {
		t.Fatalf("sections %q", sections)
	}
	keys := []string{"N=10000", "N=1000 s3=rgw", "N=100", "N=1000"}
	slices.SortFunc(keys, compareKeys)
	if want := []string{"N=100", "N=1000", "N=1000 s3=rgw", "N=10000"}; !slices.Equal(keys, want) {
		t.Errorf("order %q, want %q", keys, want)
	}
}
