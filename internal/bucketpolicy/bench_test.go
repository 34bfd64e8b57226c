package bucketpolicy

import "testing"

// Every resync of every Bucket compares the server's policy with the one it should have, so
// this comparison is part of the operator's steady-state CPU cost per Bucket.

func BenchmarkPoliciesEqual(b *testing.B) {
	spec := `{"Version":"2012-10-17","Statement":[` +
		`{"Sid":"Read","Effect":"Allow","Principal":"*","Action":["s3:GetObject"],"Resource":["arn:aws:s3:::b/*"]},` +
		`{"Sid":"Owner","Effect":"Allow","Principal":{"AWS":["OWNER"]},"Action":"s3:*","Resource":["arn:aws:s3:::b","arn:aws:s3:::b/*"]}]}`
	observed := `{"Statement":[{"Action":"s3:GetObject","Effect":"Allow","Principal":{"AWS":"*"},"Resource":"arn:aws:s3:::b/*","Sid":"Read"},` +
		`{"Action":["s3:*"],"Effect":"Allow","Principal":{"AWS":"OWNER"},"Resource":["arn:aws:s3:::b/*","arn:aws:s3:::b"],"Sid":"Owner"}],"Version":"2012-10-17"}`
	b.ReportAllocs()
	for b.Loop() {
		if !PoliciesEqual(spec, observed) {
			b.Fatal("the policies differ")
		}
	}
}
