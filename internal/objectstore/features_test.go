package objectstore

import (
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/google/go-cmp/cmp"
)

func TestLifecyclesEqualWhateverFilterShapeTheServerEchoes(t *testing.T) {
	logs := LifecycleRule{ID: "logs", Prefix: "logs/", Enabled: true, ExpirationDays: 7}
	tagged := LifecycleRule{ID: "tmp", Prefix: "tmp/", Tags: map[string]string{"kind": "scratch"}, Enabled: true, NoncurrentDays: 3}
	tests := []struct {
		name   string
		sdk    []types.LifecycleRule
		spec   []LifecycleRule
		wantEq bool
	}{
		{name: "a filter prefix", spec: []LifecycleRule{logs}, wantEq: true, sdk: []types.LifecycleRule{{
			ID: aws.String("logs"), Status: types.ExpirationStatusEnabled, Filter: &types.LifecycleRuleFilter{Prefix: aws.String("logs/")},
			Expiration: &types.LifecycleExpiration{Days: aws.Int32(7)}}}},
		{name: "the legacy rule prefix", spec: []LifecycleRule{logs}, wantEq: true, sdk: []types.LifecycleRule{{
			ID: aws.String("logs"), Status: types.ExpirationStatusEnabled, Prefix: aws.String("logs/"), //nolint:staticcheck // what old servers send
			Expiration: &types.LifecycleExpiration{Days: aws.Int32(7)}}}},
		{name: "an And of prefix and tag, rules in another order", spec: []LifecycleRule{tagged, logs}, wantEq: true, sdk: []types.LifecycleRule{
			{ID: aws.String("logs"), Status: types.ExpirationStatusEnabled, Filter: &types.LifecycleRuleFilter{Prefix: aws.String("logs/")},
				Expiration: &types.LifecycleExpiration{Days: aws.Int32(7)}},
			{ID: aws.String("tmp"), Status: types.ExpirationStatusEnabled, Filter: &types.LifecycleRuleFilter{And: &types.LifecycleRuleAndOperator{
				Prefix: aws.String("tmp/"), Tags: []types.Tag{{Key: aws.String("kind"), Value: aws.String("scratch")}}}},
				NoncurrentVersionExpiration: &types.NoncurrentVersionExpiration{NoncurrentDays: aws.Int32(3)}},
		}},
		{name: "a disabled rule differs", spec: []LifecycleRule{logs}, wantEq: false, sdk: []types.LifecycleRule{{
			ID: aws.String("logs"), Status: types.ExpirationStatusDisabled, Filter: &types.LifecycleRuleFilter{Prefix: aws.String("logs/")},
			Expiration: &types.LifecycleExpiration{Days: aws.Int32(7)}}}},
		{name: "other days differ", spec: []LifecycleRule{logs}, wantEq: false, sdk: []types.LifecycleRule{{
			ID: aws.String("logs"), Status: types.ExpirationStatusEnabled, Filter: &types.LifecycleRuleFilter{Prefix: aws.String("logs/")},
			Expiration: &types.LifecycleExpiration{Days: aws.Int32(8)}}}},
		{name: "an expiration date compares by day", wantEq: true,
			spec: []LifecycleRule{{ID: "end", Enabled: true, ExpirationDate: "2027-01-01", AbortMultipartDays: 2}},
			sdk: []types.LifecycleRule{{ID: aws.String("end"), Status: types.ExpirationStatusEnabled, Filter: &types.LifecycleRuleFilter{Prefix: aws.String("")},
				Expiration:                     &types.LifecycleExpiration{Date: aws.Time(time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC))},
				AbortIncompleteMultipartUpload: &types.AbortIncompleteMultipartUpload{DaysAfterInitiation: aws.Int32(2)}}}},
		{name: "a missing rule differs", spec: []LifecycleRule{logs, tagged}, wantEq: false, sdk: []types.LifecycleRule{{
			ID: aws.String("logs"), Status: types.ExpirationStatusEnabled, Filter: &types.LifecycleRuleFilter{Prefix: aws.String("logs/")},
			Expiration: &types.LifecycleExpiration{Days: aws.Int32(7)}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var observed []LifecycleRule
			for _, r := range tt.sdk {
				observed = append(observed, fromSDKLifecycleRule(r))
			}
			if got := LifecyclesEqual(tt.spec, observed); got != tt.wantEq {
				t.Errorf("LifecyclesEqual = %v, want %v; observed %+v", got, tt.wantEq, observed)
			}
		})
	}
}

func TestLifecycleRulesSurviveTheTripThroughTheSDK(t *testing.T) {
	rules := []LifecycleRule{
		{ID: "all", Enabled: true, AbortMultipartDays: 1},
		{ID: "one-tag", Tags: map[string]string{"a": "1"}, Enabled: true, ExpirationDays: 30},
		{ID: "prefix-and-tags", Prefix: "p/", Tags: map[string]string{"a": "1", "b": "2"}, Enabled: true, ExpirationDate: "2030-06-01"},
		{ID: "noncurrent", Prefix: "backups/", Enabled: true, NoncurrentDays: 14},
	}
	var back []LifecycleRule
	for _, r := range rules {
		back = append(back, fromSDKLifecycleRule(toSDKLifecycleRule(r)))
	}
	if diff := cmp.Diff(NormalizeLifecycle(rules), NormalizeLifecycle(back)); diff != "" {
		t.Errorf("round trip (-sent +read):\n%s", diff)
	}
}

func TestExpirationDateTakesMidnightUTCOnly(t *testing.T) {
	tests := []struct {
		in, want string
		ok       bool
	}{
		{"2027-01-01", "2027-01-01", true},
		{"2027-01-01T00:00:00Z", "2027-01-01", true},
		{"2027-01-01T00:00:00.000Z", "2027-01-01", true},
		{"2027-01-01T01:00:00+01:00", "2027-01-01", true}, // the same instant
		{"2027-01-01T12:00:00Z", "", false},
		{"2027-02-30", "", false},
		{"next year", "", false},
	}
	for _, tt := range tests {
		got, ok := ExpirationDate(tt.in)
		if got != tt.want || ok != tt.ok {
			t.Errorf("ExpirationDate(%q) = %q, %v; want %q, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}

func TestCORSEqualKeepsRuleOrderButNotTheOrderWithinARule(t *testing.T) {
	a := CORSRule{AllowedOrigins: []string{"https://a.example", "https://b.example"}, AllowedMethods: []string{"GET", "PUT"},
		AllowedHeaders: []string{"Content-Type", "x-amz-date"}, MaxAgeSeconds: 60}
	sameA := CORSRule{AllowedOrigins: []string{"https://b.example", "https://a.example"}, AllowedMethods: []string{"PUT", "GET"},
		AllowedHeaders: []string{"x-amz-date", "content-type"}, ExposeHeaders: []string{}, MaxAgeSeconds: 60}
	b := CORSRule{AllowedOrigins: []string{"*"}, AllowedMethods: []string{"GET"}}
	tests := []struct {
		name string
		x, y []CORSRule
		want bool
	}{
		{"sets in another order, header case, empty lists", []CORSRule{a}, []CORSRule{sameA}, true},
		{"rules in another order differ: the first match answers", []CORSRule{a, b}, []CORSRule{b, a}, false},
		{"another max age differs", []CORSRule{a}, []CORSRule{{AllowedOrigins: a.AllowedOrigins, AllowedMethods: a.AllowedMethods,
			AllowedHeaders: a.AllowedHeaders, MaxAgeSeconds: 61}}, false},
		{"no rules and nil are the same", []CORSRule{}, nil, true},
	}
	for _, tt := range tests {
		if got := CORSEqual(tt.x, tt.y); got != tt.want {
			t.Errorf("%s: CORSEqual = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestObjectLockCountsYearsInDays(t *testing.T) {
	got := fromSDKObjectLock(&types.ObjectLockConfiguration{ObjectLockEnabled: types.ObjectLockEnabledEnabled,
		Rule: &types.ObjectLockRule{DefaultRetention: &types.DefaultRetention{Mode: types.ObjectLockRetentionModeCompliance, Years: aws.Int32(1)}}})
	if want := (ObjectLock{Enabled: true, Mode: "COMPLIANCE", Days: 365}); got != want {
		t.Errorf("got %+v, want %+v", got, want)
	}
	if got := fromSDKObjectLock(toSDKObjectLock(ObjectLock{Enabled: true})); got != (ObjectLock{Enabled: true}) {
		t.Errorf("a lock without default retention came back as %+v", got)
	}
}
