package bucketpolicy

import "testing"

func TestCheckShapeTakesPoliciesAndNothingElse(t *testing.T) {
	for _, c := range []struct {
		name, doc string
		ok        bool
	}{
		{"a policy", `{"Version":"2012-10-17","Statement":[{"Sid":"r","Effect":"Allow","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::b/*"}]}`, true},
		{"one statement, not a list", `{"Statement":{"Effect":"Deny","Principal":{"AWS":["*"]},"NotAction":"s3:*","Resource":"*","Condition":{"Bool":{"aws:SecureTransport":"false"}}}}`, true},
		{"a service's JSON", `{"Code":"Success","AccessKeyId":"ASIA...","Token":"..."}`, false},
		{"a policy with a smuggled element", `{"Statement":[{"Effect":"Allow","Action":"s3:*"}],"Credentials":"x"}`, false},
		{"a statement with a smuggled element", `{"Statement":[{"Effect":"Allow","Action":"s3:*","Data":"x"}]}`, false},
		{"no statements", `{"Version":"2012-10-17","Statement":[]}`, false},
		{"no Statement", `{"Version":"2012-10-17"}`, false},
		{"an Effect that is neither", `{"Statement":[{"Effect":"Maybe"}]}`, false},
		{"an array", `[{"Effect":"Allow"}]`, false},
		{"two values", `{"Statement":[{"Effect":"Allow"}]} {"x":1}`, false},
		{"empty", ``, false},
		{"HTML", `<html>metadata</html>`, false},
	} {
		err := CheckShape([]byte(c.doc))
		if (err == nil) != c.ok {
			t.Errorf("%s: CheckShape = %v, want ok %v", c.name, err, c.ok)
		}
	}
}
