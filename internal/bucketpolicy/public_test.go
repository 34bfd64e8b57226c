package bucketpolicy

import "testing"

func TestIsPublicAsThePublicAccessBlockJudgesIt(t *testing.T) {
	const read = `"Action":"s3:GetObject","Resource":"arn:aws:s3:::b/*"`
	tests := []struct {
		name, policy string
		public       bool
	}{
		{"anyone may read", `{"Statement":[{"Effect":"Allow","Principal":"*",` + read + `}]}`, true},
		{"anyone, as an AWS principal list", `{"Statement":{"Effect":"Allow","Principal":{"AWS":["arn:aws:iam::1:root","*"]},` + read + `}}`, true},
		{"all but some", `{"Statement":[{"Effect":"Allow","NotPrincipal":{"AWS":"arn:aws:iam::1:root"},` + read + `}]}`, true},
		{"anyone, from one network", `{"Statement":[{"Effect":"Allow","Principal":"*",` + read + `,"Condition":{"IpAddress":{"aws:SourceIp":"10.0.0.0/8"}}}]}`, false},
		{"anyone, on a condition that ties nothing", `{"Statement":[{"Effect":"Allow","Principal":"*",` + read + `,"Condition":{"Bool":{"aws:SecureTransport":"true"}}}]}`, true},
		{"anyone, from any account", `{"Statement":[{"Effect":"Allow","Principal":"*",` + read + `,"Condition":{"StringEquals":{"aws:SourceAccount":"*"}}}]}`, true},
		{"one account", `{"Statement":[{"Effect":"Allow","Principal":{"AWS":"arn:aws:iam::1:root"},` + read + `}]}`, false},
		{"a deny for anyone", `{"Statement":[{"Effect":"Deny","Principal":"*",` + read + `}]}`, false},
		{"not JSON", `{`, false},
	}
	for _, tt := range tests {
		if got := IsPublic(tt.policy); got != tt.public {
			t.Errorf("%s: IsPublic = %v, want %v", tt.name, got, tt.public)
		}
	}
}
