package bucketpolicy

import "testing"

func TestComposeKeepsTheOwnerInControlWhereTheServerNeedsIt(t *testing.T) {
	spec := `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::b/downloads/*"}]}`
	withOwner := `{"Version":"2012-10-17","Statement":[
		{"Effect":"Allow","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::b/downloads/*"},
		{"Sid":"OSMOwnerAccess","Effect":"Allow","Principal":{"AWS":["AK1"]},"Action":"s3:*","Resource":["arn:aws:s3:::b","arn:aws:s3:::b/*"]}]}`
	judgesOwner := Form{ResourcePrefix: "arn:aws:s3:::", Owner: map[string]string{"AWS": "AK1"}, OwnerNeedsAllow: true}
	asAWS := Form{ResourcePrefix: "arn:aws:s3:::", Owner: map[string]string{"AWS": "arn:aws:iam:::user/u"}}

	tests := []struct {
		name, spec string
		form       Form
		want       string
	}{
		{"a server that judges the owner by the policy gets the owner's statement", spec, judgesOwner, withOwner},
		{"a server that keeps the owner in control, as AWS does, gets the spec", spec, asAWS, spec},
		{"a provider that says nothing is taken to work as AWS", spec, Form{}, spec},
		{"no policy denies no one, and needs no statement", "", judgesOwner, ""},
	}
	for _, tt := range tests {
		got := Compose(tt.spec, "b", nil, tt.form)
		if (got == "") != (tt.want == "") || (got != "" && !PoliciesEqual(got, tt.want)) {
			t.Errorf("%s:\n got %s\nwant %s", tt.name, got, tt.want)
		}
	}
}

func TestComposeAddsTheGrantsStatementsAfterTheSpecs(t *testing.T) {
	grants := []AccessGrant{{Name: "r", Access: ReadOnly, Principal: map[string]any{"AWS": "p-1"}}}
	got := Compose("", "b", grants, Form{})
	if GeneratedStatements(got) == "" {
		t.Fatalf("Compose without a spec policy = %s, want the grant's statements", got)
	}
	if Compose(`not json`, "b", grants, Form{}) != `not json` {
		t.Error("a spec policy that is no JSON object must reach the server as it is, for its own message")
	}
}
