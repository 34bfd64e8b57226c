package objectstore

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestAccessStatementsGrantEachModeOnlyItsActionsOnOneBucket(t *testing.T) {
	principal := map[string]any{"AWS": "arn:aws:iam:::user/p-1"}
	tests := []struct {
		access           string
		bucket, objects  []string
		wantBucketStmt   bool
		forbiddenActions []string
	}{
		{ReadOnly, []string{"s3:ListBucket"}, []string{"s3:GetObject"}, true, []string{"s3:PutObject", "s3:DeleteObject"}},
		{WriteOnly, nil, []string{"s3:PutObject", "s3:AbortMultipartUpload"}, false, []string{"s3:GetObject", "s3:ListBucket", "s3:DeleteObject"}},
		{ReadWrite, []string{"s3:ListBucket", "s3:ListBucketMultipartUploads"},
			[]string{"s3:GetObject", "s3:PutObject", "s3:DeleteObject", "s3:AbortMultipartUpload", "s3:ListMultipartUploadParts"}, true,
			[]string{"s3:PutBucketPolicy", "s3:DeleteBucket", "s3:*"}},
	}
	for _, tt := range tests {
		t.Run(tt.access, func(t *testing.T) {
			stmts, err := AccessStatements(AccessGrant{Name: "app.reader", Access: tt.access, Principal: principal}, "arn:aws:s3:::", "photos")
			if err != nil {
				t.Fatal(err)
			}
			encoded, _ := json.Marshal(stmts)
			for _, a := range tt.forbiddenActions {
				if strings.Contains(string(encoded), `"`+a+`"`) {
					t.Errorf("%s statements grant %s: %s", tt.access, a, encoded)
				}
			}
			last := stmts[len(stmts)-1].(map[string]any)
			if last["Resource"] != "arn:aws:s3:::photos/*" || !sameStrings(last["Action"], tt.objects) {
				t.Errorf("object statement = %v, want %v on arn:aws:s3:::photos/*", last, tt.objects)
			}
			if got := len(stmts) == 2; got != tt.wantBucketStmt {
				t.Fatalf("bucket statement present = %v, want %v", got, tt.wantBucketStmt)
			}
			if tt.wantBucketStmt {
				first := stmts[0].(map[string]any)
				if first["Resource"] != "arn:aws:s3:::photos" || !sameStrings(first["Action"], tt.bucket) {
					t.Errorf("bucket statement = %v, want %v on arn:aws:s3:::photos", first, tt.bucket)
				}
			}
			for _, s := range stmts {
				sid := s.(map[string]any)["Sid"].(string)
				if !strings.HasPrefix(sid, AccessStatementPrefix) || strings.ContainsAny(sid, ".-") {
					t.Errorf("Sid %q: want the prefix and only letters and digits", sid)
				}
			}
		})
	}
	if _, err := AccessStatements(AccessGrant{Name: "x", Access: "Admin", Principal: principal}, "arn:aws:s3:::", "b"); err == nil {
		t.Error("an unknown access was turned into statements")
	}
}

func sameStrings(v any, want []string) bool {
	got, ok := v.([]any)
	if !ok || len(got) != len(want) {
		return false
	}
	for i := range want {
		if got[i] != want[i] {
			return false
		}
	}
	return true
}

func TestAccessStatementIDsTellApartNamesThatDifferOnlyInPunctuation(t *testing.T) {
	if AccessStatementID("app.reader") == AccessStatementID("app-reader") {
		t.Error("two BucketAccesses would share statements")
	}
	if got := AccessStatementID("app.reader"); got != "OSMAccessappreader"+got[len(got)-8:] || len(got) != len("OSMAccessappreader")+8 {
		t.Errorf("Sid %q: want the prefix, the name's letters and digits, and eight hex digits", got)
	}
}

func TestWithStatementsKeepsTheUsersPolicyAndGeneratedStatementsAreFoundAgain(t *testing.T) {
	user := `{"Version":"2012-10-17","Statement":[{"Sid":"Public","Effect":"Allow","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::b/pub/*"}]}`
	stmts, err := AccessStatements(AccessGrant{Name: "r", Access: ReadOnly, Principal: map[string]any{"AWS": "AK1"}}, "arn:aws:s3:::", "b")
	if err != nil {
		t.Fatal(err)
	}
	both, err := WithStatements(user, stmts)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(both, `"Sid":"Public"`) {
		t.Errorf("the user's statement was lost: %s", both)
	}
	if GeneratedStatements(user) != "" {
		t.Error("a user's statement was taken for a generated one")
	}
	alone, err := WithStatements("", stmts)
	if err != nil {
		t.Fatal(err)
	}
	if GeneratedStatements(both) == "" || GeneratedStatements(both) != GeneratedStatements(alone) {
		t.Errorf("the generated statements differ with and without the user's:\n%s\n%s", GeneratedStatements(both), GeneratedStatements(alone))
	}
	if same, _ := WithStatements(user, nil); same != user {
		t.Error("no statements changed the policy")
	}
	if _, err := WithStatements("[1]", stmts); err == nil {
		t.Error("a policy that is no JSON object was extended")
	}
}
