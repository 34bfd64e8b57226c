package egress

import (
	"errors"
	"testing"
)

func TestParseRefusesPatternsThatAllowTooMuch(t *testing.T) {
	for _, p := range []string{
		"s3.example.com",              // no scheme
		"ftp://s3.example.com",        // not http
		"https://",                    // no host
		"https://*",                   // everything
		"https://*.com",               // a whole top-level domain
		"https://*.10.0.0.1",          // a wildcard over an address
		"https://s3.example.com:0",    // no port
		"https://s3.example.com:http", // not a number
		"https://s3.example.com/a*",   // a path with a wildcard
		"https://s3.exa\nmple.com",    // a control character
	} {
		if _, err := Parse([]string{p}); err == nil {
			t.Errorf("Parse(%q) = nil error, want one", p)
		}
	}
}

func TestCheckURL(t *testing.T) {
	allow, err := ParseList("https://*.amazonaws.com, http://127.0.0.1:17070, https://minio.corp.example:9000, " +
		"https://gw.example.com/s3, http://rgw.storage.svc:*, https://[fd00::1]")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		url string
		ok  bool
	}{
		{"https://s3.eu-west-1.amazonaws.com", true},
		{"https://s3.eu-west-1.amazonaws.com/", true},
		{"https://S3.EU-WEST-1.AMAZONAWS.COM.", true},
		{"https://amazonaws.com", false},                 // the domain itself is not under it
		{"https://s3.amazonaws.com.evil.example", false}, // a suffix that is not the domain
		{"https://s3.eu-west-1.amazonaws.com:8443", false},
		{"http://s3.eu-west-1.amazonaws.com", false}, // another scheme
		{"https://s3.eu-west-1.amazonaws.com/any/path", true},
		{"http://127.0.0.1:17070", true},
		{"http://127.0.0.1:17071", false},
		{"http://localhost:17070", false}, // another name for it is not the name listed
		{"https://minio.corp.example:9000", true},
		{"https://minio.corp.example", false},
		{"https://gw.example.com/s3", true},
		{"https://gw.example.com/s3/", true},
		{"https://gw.example.com/s3/v2", true},
		{"https://gw.example.com/s3v2", false},
		{"https://gw.example.com", false},
		{"http://rgw.storage.svc:7480", true},
		{"http://rgw.storage.svc", true},
		{"https://[fd00::1]", true},
		{"https://[fd00::2]", false},
		{"https://user:pw@s3.eu-west-1.amazonaws.com", false},
		{"https://s3.eu-west-1.amazonaws.com?x=1", false},
		{"https://s3.eu-west-1.amazonaws.com#frag", false},
		{"https://s3.eu-west-1.amazonaws.com/\n", false},
		{"s3.eu-west-1.amazonaws.com", false},
	} {
		err := allow.CheckURL(c.url)
		if (err == nil) != c.ok {
			t.Errorf("CheckURL(%q) = %v, want allowed %v", c.url, err, c.ok)
		}
		if err != nil && !errors.Is(err, ErrNotAllowed) {
			t.Errorf("CheckURL(%q) = %v, not ErrNotAllowed", c.url, err)
		}
	}
}

func TestTheEmptyListAllowsNothing(t *testing.T) {
	var none Allowlist
	if err := none.CheckURL("https://s3.amazonaws.com"); err == nil {
		t.Error("the empty list allowed a URL")
	}
	if _, ok := none.matchHostPort("s3.amazonaws.com", "443"); ok {
		t.Error("the empty list allowed a connection")
	}
}

func TestMatchHostPortTellsNamedHostsFromWildcards(t *testing.T) {
	allow, err := ParseList("https://s3.example.com, https://*.cloud.example, http://10.1.2.3:9000")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		host, port string
		named, ok  bool
	}{
		{"s3.example.com", "443", true, true},
		{"photos.s3.example.com", "443", false, true}, // virtual-hosted bucket: allowed, not named
		{"a.b.s3.example.com", "443", false, false},
		{"x.cloud.example", "443", false, true},
		{"cloud.example", "443", false, false},
		{"10.1.2.3", "9000", true, true},
		{"x.10.1.2.3", "9000", false, false},
		{"s3.example.com", "80", false, false},
	} {
		named, ok := allow.matchHostPort(c.host, c.port)
		if named != c.named || ok != c.ok {
			t.Errorf("matchHostPort(%q, %q) = named %v, allowed %v; want %v, %v", c.host, c.port, named, ok, c.named, c.ok)
		}
	}
}
