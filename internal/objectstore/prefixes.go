package objectstore

import (
	"cmp"
	"context"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// PrefixSummary is what lies under one key segment: "run-1" for the keys "backups/run-1/...".
type PrefixSummary struct {
	Name         string
	Objects      int64
	Bytes        int64
	LastModified time.Time
}

// Lister reads what a bucket holds under a prefix. It is apart from Store because only the
// Application controller needs it, to show the backups it can see.
type Lister interface {
	// SummarizePrefixes groups the objects under prefix by their next key segment, reading at
	// most limit keys; complete is false when there were more. Keys directly under prefix
	// (with no further "/") are not a segment and are left out.
	SummarizePrefixes(ctx context.Context, bucket, prefix string, limit int) (summaries []PrefixSummary, complete bool, err error)
}

// NewLister returns a Lister for one account on one endpoint.
func NewLister(cfg Config) Lister { return &store{s3: newClient(cfg), region: cfg.Region} }

func (s *store) SummarizePrefixes(ctx context.Context, bucket, prefix string, limit int) ([]PrefixSummary, bool, error) {
	byName := map[string]*PrefixSummary{}
	seen := 0
	p := s3.NewListObjectsV2Paginator(s.s3, &s3.ListObjectsV2Input{Bucket: aws.String(bucket), Prefix: aws.String(prefix)})
	for p.HasMorePages() && seen < limit {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, false, classify(wrap("listing objects of bucket", bucket, err))
		}
		for _, o := range page.Contents {
			seen++
			name, _, ok := strings.Cut(strings.TrimPrefix(aws.ToString(o.Key), prefix), "/")
			if !ok || name == "" {
				continue
			}
			sum := byName[name]
			if sum == nil {
				sum = &PrefixSummary{Name: name}
				byName[name] = sum
			}
			sum.Objects++
			sum.Bytes += aws.ToInt64(o.Size)
			if t := aws.ToTime(o.LastModified); t.After(sum.LastModified) {
				sum.LastModified = t
			}
		}
	}
	out := make([]PrefixSummary, 0, len(byName))
	for _, s := range byName {
		out = append(out, *s)
	}
	// Newest first; names break ties so the order is stable.
	slices.SortFunc(out, func(a, b PrefixSummary) int {
		return cmp.Or(b.LastModified.Compare(a.LastModified), strings.Compare(b.Name, a.Name))
	})
	return out, !p.HasMorePages(), nil
}
