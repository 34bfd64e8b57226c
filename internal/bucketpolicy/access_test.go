package bucketpolicy

import (
	"encoding/json"
	"fmt"
	"slices"
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
			stmts, _ := allowsAndDenies(AccessStatements([]AccessGrant{{Name: "app.reader", Access: tt.access, Principal: principal}}, "arn:aws:s3:::", "photos"))
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
	if stmts := AccessStatements([]AccessGrant{{Name: "x", Access: "Admin", Principal: principal}}, "arn:aws:s3:::", "b"); len(stmts) > 0 {
		t.Errorf("an unknown access was turned into statements: %v", stmts)
	}
}

// allowsAndDenies splits statements by their effect.
func allowsAndDenies(stmts []any) (allows, denies []any) {
	for _, s := range stmts {
		if s.(map[string]any)["Effect"] == "Deny" {
			denies = append(denies, s)
			continue
		}
		allows = append(allows, s)
	}
	return allows, denies
}

// A WriteOnly key is denied, in the whole bucket and whatever its prefix, reading objects and
// their ACLs and changing those ACLs: on Ceph RGW the uploader owns what it wrote, and an
// object's ACL grants its owner everything unless a policy says Deny. One statement names every
// WriteOnly principal; only they are named there.
func TestWriteOnlyKeysAreDeniedReadingWhatTheyWrote(t *testing.T) {
	grants := []AccessGrant{
		{Name: "reader", Access: ReadOnly, Principal: map[string]any{"AWS": "AK1"}},
		{Name: "backup", Access: WriteOnly, Principal: map[string]any{"AWS": "AK2"}},
		{Name: "logs", Access: WriteOnly, Prefix: "logs/", Principal: map[string]any{"AWS": "AK3"}},
	}
	_, denies := allowsAndDenies(AccessStatements(grants, "arn:aws:s3:::", "b"))
	if len(denies) != 1 {
		t.Fatalf("deny statements: %v, want one", denies)
	}
	deny := denies[0].(map[string]any)
	if deny["Resource"] != "arn:aws:s3:::b/*" || !sameStrings(deny["Principal"].(map[string]any)["AWS"], []string{"AK2", "AK3"}) ||
		!sameStrings(deny["Action"], []string{"s3:GetObject", "s3:GetObjectVersion", "s3:GetObjectAcl", "s3:PutObjectAcl"}) {
		t.Errorf("deny statement = %v: want reads and ACLs of the whole bucket denied to AK2 and AK3", deny)
	}
	if _, denies := allowsAndDenies(AccessStatements(grants[:1], "arn:aws:s3:::", "b")); len(denies) != 0 {
		t.Errorf("a policy without WriteOnly grants denies something: %v", denies)
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

// Grants of one mode share its statements, which name every principal granted it, so that a
// grant costs the policy its principal and not two more statements.
func TestGrantsOfOneModeShareItsStatements(t *testing.T) {
	grants := []AccessGrant{
		{Name: "a", Access: ReadOnly, Principal: map[string]any{"AWS": "AK2"}},
		{Name: "b", Access: ReadOnly, Principal: map[string]any{"AWS": []any{"AK1", "AK3"}}}, // a key rotating
		{Name: "c", Access: WriteOnly, Principal: map[string]any{"AWS": "AK4"}},
		{Name: "d", Access: ReadOnly, Principal: nil}, // no principal yet
	}
	stmts, _ := allowsAndDenies(AccessStatements(grants, "arn:aws:s3:::", "b"))
	var sids []string
	principals := map[string]any{}
	for _, s := range stmts {
		m := s.(map[string]any)
		sid := m["Sid"].(string)
		sids = append(sids, sid)
		principals[sid] = m["Principal"].(map[string]any)["AWS"]
	}
	if want := []string{"OSMAccessReadOnlyBucket", "OSMAccessReadOnlyObjects", "OSMAccessWriteOnlyObjects"}; !slices.Equal(sids, want) {
		t.Fatalf("Sids %v, want %v", sids, want)
	}
	if got := principals["OSMAccessReadOnlyObjects"]; !sameStrings(got, []string{"AK1", "AK2", "AK3"}) {
		t.Errorf("ReadOnly principals %v, want every key granted ReadOnly, sorted", got)
	}
	if got := principals["OSMAccessWriteOnlyObjects"]; got != "AK4" {
		t.Errorf("WriteOnly principal %v, want the one key as a string", got)
	}

	// Forty grants of one mode take a policy of under 2.5 KB: on versitygw over ext4 a bucket's
	// policy shares one 4 KB block with its other extended attributes (ACL, tags).
	var many []AccessGrant
	for i := range 40 {
		many = append(many, AccessGrant{Name: fmt.Sprint(i), Access: ReadWrite, Principal: map[string]any{"AWS": fmt.Sprintf("OSMP%016d", i)}})
	}
	policy, err := WithStatements("", AccessStatements(many, "arn:aws:s3:::", "team-a-data"))
	if err != nil {
		t.Fatal(err)
	}
	if len(policy) > 2500 {
		t.Errorf("40 grants make a policy of %d bytes, want under 2500", len(policy))
	}
}

func TestWithStatementsKeepsTheUsersPolicyAndGeneratedStatementsAreFoundAgain(t *testing.T) {
	user := `{"Version":"2012-10-17","Statement":[{"Sid":"Public","Effect":"Allow","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::b/pub/*"}]}`
	stmts := AccessStatements([]AccessGrant{{Name: "r", Access: ReadOnly, Principal: map[string]any{"AWS": "AK1"}}}, "arn:aws:s3:::", "b")
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

// A grant limited to a prefix gets its objects under the prefix only, and may list only with a
// prefix under it; grants of one mode under different prefixes never share a statement.
func TestPrefixedGrantsReachOnlyTheirPrefix(t *testing.T) {
	grants := []AccessGrant{
		{Name: "whole", Access: ReadWrite, Principal: map[string]any{"AWS": "AK1"}},
		{Name: "web", Access: ReadWrite, Prefix: "web/", Principal: map[string]any{"AWS": "AK2"}},
		{Name: "api", Access: ReadWrite, Prefix: "api/", Principal: map[string]any{"AWS": "AK3"}},
		{Name: "backup", Access: WriteOnly, Prefix: "web/", Principal: map[string]any{"AWS": "AK4"}},
	}
	byPrincipal := map[string][]map[string]any{}
	sids := map[string]bool{}
	allows, _ := allowsAndDenies(AccessStatements(grants, "arn:aws:s3:::", "b"))
	for _, s := range allows {
		m := s.(map[string]any)
		p := m["Principal"].(map[string]any)["AWS"].(string)
		byPrincipal[p] = append(byPrincipal[p], m)
		if sid := m["Sid"].(string); sids[sid] || strings.ContainsAny(sid, "/.-_") {
			t.Errorf("Sid %q repeated or not letters and digits", sid)
		}
		sids[m["Sid"].(string)] = true
	}
	if got := byPrincipal["AK1"]; len(got) != 2 || got[0]["Condition"] != nil || got[1]["Resource"] != "arn:aws:s3:::b/*" {
		t.Errorf("the whole bucket's grant changed: %v", got)
	}
	web := byPrincipal["AK2"]
	if len(web) != 2 {
		t.Fatalf("web's statements: %v", web)
	}
	wantCondition := map[string]any{"StringLike": map[string]any{"s3:prefix": "web/*"}}
	if web[0]["Resource"] != "arn:aws:s3:::b" || fmt.Sprint(web[0]["Condition"]) != fmt.Sprint(wantCondition) ||
		!sameStrings(web[0]["Action"], []string{"s3:ListBucket"}) {
		t.Errorf("web's bucket statement = %v: want ListBucket alone, under condition %v", web[0], wantCondition)
	}
	if web[1]["Resource"] != "arn:aws:s3:::b/web/*" {
		t.Errorf("web's objects statement = %v, want resource arn:aws:s3:::b/web/*", web[1])
	}
	if api := byPrincipal["AK3"]; len(api) != 2 || api[1]["Resource"] != "arn:aws:s3:::b/api/*" {
		t.Errorf("api's statements: %v", api)
	}
	if backup := byPrincipal["AK4"]; len(backup) != 1 || backup[0]["Resource"] != "arn:aws:s3:::b/web/*" {
		t.Errorf("the WriteOnly grant under web/: %v", backup)
	}
}

func TestIdentityStatements(t *testing.T) {
	got := mustJSON(IdentityStatements(ReadOnly, "db/", "arn:aws:s3:::", "photos"))
	want := `[{"Action":["s3:ListBucket"],"Condition":{"StringLike":{"s3:prefix":"db/*"}},"Effect":"Allow","Resource":"arn:aws:s3:::photos"},` +
		`{"Action":["s3:GetObject"],"Effect":"Allow","Resource":"arn:aws:s3:::photos/db/*"}]`
	if got != want {
		t.Errorf("IdentityStatements(ReadOnly, db/):\n got %s\nwant %s", got, want)
	}
	if got := IdentityStatements("Admin", "", "arn:aws:s3:::", "photos"); len(got) != 0 {
		t.Errorf("an unknown mode got %v", got)
	}
}
