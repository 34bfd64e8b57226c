package contractserver

import (
	"context"
	"encoding/xml"
	"fmt"
	"net/http"
	"net/url"
	"strings"
)

// vgwAdmin calls versitygw's admin API: PATCH requests on the admin port, SigV4-signed for
// service "s3" with an admin account, XML bodies. The shapes follow versitygw v1.8.0
// (s3api/controllers/admin.go, cmd/internal/gwcli/admin.go).
type vgwAdmin struct {
	endpoint string
	signed   *signedClient
}

// vgwAccount is auth.Account as the admin API reads and writes it: no XML tags, so the elements
// are the Go field names.
type vgwAccount struct {
	Access    string `xml:"Access"`
	Secret    string `xml:"Secret"`
	Role      string `xml:"Role"`
	UserID    int    `xml:"UserID"`
	GroupID   int    `xml:"GroupID"`
	ProjectID int    `xml:"ProjectID"`
}

// vgwListUsers is auth.ListUserAccountsResult.
type vgwListUsers struct {
	Accounts []vgwAccount `xml:"Accounts"`
}

// vgwListBuckets is s3response.ListBucketsResult; Owner is the owning access key.
type vgwListBuckets struct {
	Buckets []struct {
		Name  string `xml:"Name"`
		Owner string `xml:"Owner"`
	} `xml:"Buckets"`
}

// Gateway roles: userplus may create buckets, user may not; neither has rights on another
// account's bucket unless its ACL or policy grants them.
const (
	vgwRoleUserPlus = "userplus"
	vgwRoleUser     = "user"
)

func (a *vgwAdmin) createUser(ctx context.Context, acc vgwAccount) error {
	// The root element is named as versitygw's own client names it; the gateway ignores it.
	body, err := xml.Marshal(struct {
		XMLName xml.Name `xml:"Account"`
		vgwAccount
	}{vgwAccount: acc})
	if err != nil {
		return fmt.Errorf("encoding account: %w", err)
	}
	_, err = a.do(ctx, "create-user", nil, body)
	return err
}

func (a *vgwAdmin) deleteUser(ctx context.Context, access string) error {
	_, err := a.do(ctx, "delete-user", url.Values{"access": {access}}, nil)
	return err
}

func (a *vgwAdmin) listUsers(ctx context.Context) ([]vgwAccount, error) {
	data, err := a.do(ctx, "list-users", nil, nil)
	if err != nil {
		return nil, err
	}
	var res vgwListUsers
	if err := xml.Unmarshal(data, &res); err != nil {
		return nil, fmt.Errorf("decoding list-users answer: %w", err)
	}
	return res.Accounts, nil
}

// bucketsOwnedBy lists the buckets whose owner is the access key.
func (a *vgwAdmin) bucketsOwnedBy(ctx context.Context, access string) ([]string, error) {
	data, err := a.do(ctx, "list-buckets", nil, nil)
	if err != nil {
		return nil, err
	}
	var res vgwListBuckets
	if err := xml.Unmarshal(data, &res); err != nil {
		return nil, fmt.Errorf("decoding list-buckets answer: %w", err)
	}
	var names []string
	for _, b := range res.Buckets {
		if b.Owner == access {
			names = append(names, b.Name)
		}
	}
	return names, nil
}

// do sends one signed PATCH to the admin API and returns the answer body.
func (a *vgwAdmin) do(ctx context.Context, op string, query url.Values, body []byte) ([]byte, error) {
	u := strings.TrimSuffix(a.endpoint, "/") + "/" + op
	if len(query) > 0 {
		u += "?" + query.Encode()
	}
	return a.signed.do(ctx, "versitygw "+op, http.MethodPatch, u, "", body)
}

// Keys implements KeyLister: every user of the gateway but its admins, since a user is its key.
func (b *VersityGWBackend) Keys(ctx context.Context) ([]BackendKey, error) {
	users, err := b.admin.listUsers(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]BackendKey, 0, len(users))
	for _, u := range users {
		if u.Role != "admin" {
			out = append(out, BackendKey{AccessKeyID: u.Access, Owner: "user of role " + u.Role})
		}
	}
	return out, nil
}
