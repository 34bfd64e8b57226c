package contractserver

import "testing"

// A contract made since tenants is a user of its own tenant; one made before is a user of the
// default tenant, named by its contract id alone. Each is named as RGW expects where it is used.
func TestRGWAccountNames(t *testing.T) {
	b := &RGWBackend{region: "default"}
	for _, tc := range []struct {
		account                    string
		uid, owner, principal, web string
	}{{
		account:   b.AccountName("abc"),
		uid:       "abc$contract-abc",
		owner:     "arn:aws:iam::abc:user/contract-abc",
		principal: "arn:aws:iam::abc:user/contract-abc-p1",
		web:       "http://s3-website.localhost:7480/abc:{bucket}",
	}, {
		account:   "abc",
		uid:       "contract-abc",
		owner:     "arn:aws:iam:::user/contract-abc",
		principal: "arn:aws:iam:::user/contract-abc-p1",
		web:       "http://{bucket}.s3-website.localhost:7480",
	}} {
		t.Run(tc.account, func(t *testing.T) {
			a := rgwAccountOf(tc.account)
			if got := a.uid(); got != tc.uid {
				t.Errorf("uid %q, want %q", got, tc.uid)
			}
			if got := b.BucketPolicyForm(tc.account, "").OwnerPrincipal["AWS"]; got != tc.owner {
				t.Errorf("owner principal %q, want %q", got, tc.owner)
			}
			if got := b.PolicyPrincipal(tc.account, "p1", nil)["AWS"]; got != tc.principal {
				t.Errorf("principal %q, want %q", got, tc.principal)
			}
			if got := b.WebsiteEndpoint(tc.account, "http://{bucket}.s3-website.localhost:7480"); got != tc.web {
				t.Errorf("website endpoint %q, want %q", got, tc.web)
			}
			if got := a.contractID(); got != "abc" {
				t.Errorf("contract %q, want abc", got)
			}
		})
	}
	// A website endpoint that names the bucket by path already keeps its form.
	if got, want := b.WebsiteEndpoint(b.AccountName("abc"), "https://web.example.com/sites/{bucket}"), "https://web.example.com/sites/abc:{bucket}"; got != want {
		t.Errorf("website endpoint %q, want %q", got, want)
	}
}
