package main

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/object-storage-manager/object-storage-manager/internal/contractserver"
)

func TestParsePlans(t *testing.T) {
	tests := []struct {
		in      string
		want    []contractserver.Plan
		wantErr bool
	}{
		{in: "standard", want: []contractserver.Plan{{Name: "standard"}}},
		{in: "standard, small=1Gi,tiny=500M,exact=1024", want: []contractserver.Plan{
			{Name: "standard"}, {Name: "small", QuotaBytes: 1 << 30}, {Name: "tiny", QuotaBytes: 500e6}, {Name: "exact", QuotaBytes: 1024},
		}},
		{in: "", wantErr: true},
		{in: "=1Gi", wantErr: true},
		{in: "a,a", wantErr: true},
		{in: "small=1.5Gi", wantErr: true},
		{in: "small=0", wantErr: true},
		{in: "small=-1", wantErr: true},
		{in: "small=9999999Pi", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := parsePlans(tt.in)
			if (err != nil) != tt.wantErr {
				t.Fatalf("parsePlans(%q) error %v, wantErr %t", tt.in, err, tt.wantErr)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("parsePlans(%q) (-want +got):\n%s", tt.in, diff)
			}
		})
	}
}
