// Package podendpoints maps an S3 endpoint as the manager reaches it to the endpoint pods reach
// it at, where the two differ: a manager outside the cluster, or make dev's real node, whose pods
// live in a network namespace of their own and cannot reach the host's loopback. The platform
// says it with a flag; an Application's containers get the pods' endpoint.
package podendpoints

import (
	"fmt"
	"net/url"
	"strings"
)

// Flag and Usage describe the flag.
const (
	Flag  = "pod-endpoints"
	Usage = "S3 endpoints as pods reach them, where the manager reaches them at another address: " +
		"a comma-separated list of MANAGER=POD, each an http(s) URL (http://127.0.0.1:17070=http://10.244.0.1:17070). " +
		"An Application's containers get the second in <PREFIX>_ENDPOINT and AWS_ENDPOINT_URL."
)

// Parse reads --pod-endpoints.
func Parse(list string) (map[string]string, error) {
	endpoints := map[string]string{}
	for _, pair := range strings.Split(list, ",") {
		if pair = strings.TrimSpace(pair); pair == "" {
			continue
		}
		from, to, ok := strings.Cut(pair, "=")
		if !ok {
			return nil, fmt.Errorf("%q: want MANAGER=POD", pair)
		}
		for _, e := range []string{from, to} {
			if u, err := url.Parse(e); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil || strings.Trim(u.Path, "/") != "" || u.RawQuery != "" {
				return nil, fmt.Errorf("%q: %q is not an http(s) endpoint URL (scheme and host, no path)", pair, e)
			}
		}
		endpoints[from] = to
	}
	return endpoints, nil
}
