package bucketpolicy

import "testing"

func TestPoliciesEqualIgnoresFormatting(t *testing.T) {
	const spec = `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":"*",` +
		`"Action":["s3:GetObject","s3:ListBucket"],"Resource":["arn:aws:s3:::b/*","arn:aws:s3:::b"]}]}`
	tests := []struct {
		name     string
		observed string
		want     bool
	}{
		{name: "identical", observed: spec, want: true},
		{name: "indented, keys reordered", want: true, observed: `{
  "Statement": [{
    "Resource": ["arn:aws:s3:::b/*", "arn:aws:s3:::b"],
    "Action": ["s3:ListBucket", "s3:GetObject"],
    "Principal": {"AWS": "*"},
    "Effect": "Allow"
  }],
  "Version": "2012-10-17"
}`},
		{name: "single statement written as an object, lists as their one element", want: true,
			observed: `{"Version":"2012-10-17","Statement":{"Effect":"Allow","Principal":{"AWS":["*"]},` +
				`"Action":["s3:GetObject","s3:ListBucket"],"Resource":["arn:aws:s3:::b","arn:aws:s3:::b/*"]}}`},
		{name: "another action", want: false,
			observed: `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":"*",` +
				`"Action":["s3:GetObject"],"Resource":["arn:aws:s3:::b/*","arn:aws:s3:::b"]}]}`},
		{name: "deny instead of allow", want: false,
			observed: `{"Version":"2012-10-17","Statement":[{"Effect":"Deny","Principal":"*",` +
				`"Action":["s3:GetObject","s3:ListBucket"],"Resource":["arn:aws:s3:::b/*","arn:aws:s3:::b"]}]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := PoliciesEqual(spec, tt.observed); got != tt.want {
				a, _ := CanonicalPolicy([]byte(spec))
				b, _ := CanonicalPolicy([]byte(tt.observed))
				t.Errorf("PoliciesEqual = %v, want %v\nspec:     %s\nobserved: %s", got, tt.want, a, b)
			}
		})
	}
}

func TestCanonicalPolicyRejectsWhatIsNotAnObject(t *testing.T) {
	for doc, want := range map[string]string{
		`[1,2]`:  "parsing policy: want a JSON object, got an array",
		`"text"`: "parsing policy: want a JSON object, got a string",
		`{`:      "parsing policy: unexpected EOF",
	} {
		if _, err := CanonicalPolicy([]byte(doc)); err == nil || err.Error() != want {
			t.Errorf("CanonicalPolicy(%s) error = %v, want %q", doc, err, want)
		}
	}
}
