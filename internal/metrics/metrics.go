// Package metrics holds the operator's own Prometheus metrics: every call to S3 and to the
// contract API by operation and outcome, and the resources by their Ready reason. They are
// registered on controller-runtime's registry, so the manager's /metrics serves them beside its
// own (behind authentication and authorization).
package metrics

import (
	"cmp"
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	"github.com/aws/smithy-go/middleware"
	smithyhttp "github.com/aws/smithy-go/transport/http"
	"github.com/prometheus/client_golang/prometheus"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

var (
	s3Requests = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "osm_s3_requests_total",
		Help: "S3 calls by operation (CreateBucket, GetBucketAcl, ...) and outcome: the final HTTP status after the SDK's retries, or \"error\" when no answer came.",
	}, []string{"operation", "code"})
	s3Duration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "osm_s3_request_duration_seconds",
		Help:    "Time of S3 calls by operation, retries included.",
		Buckets: prometheus.ExponentialBuckets(0.005, 2, 12),
	}, []string{"operation"})
	contractRequests = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "osm_contract_api_requests_total",
		Help: "Contract API requests by operation (method and path template) and outcome: the HTTP status, or \"error\" when no answer came.",
	}, []string{"operation", "code"})
	contractDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "osm_contract_api_request_duration_seconds",
		Help:    "Time of contract API requests by operation.",
		Buckets: prometheus.ExponentialBuckets(0.005, 2, 12),
	}, []string{"operation"})
)

func init() {
	crmetrics.Registry.MustRegister(s3Requests, s3Duration, contractRequests, contractDuration)
}

// CountS3 is an aws-sdk-go-v2 API option that records every S3 call. It sits after the SDK's
// own Initialize middleware, so the operation name is known, and around the retry loop, so a
// call counts once with its final outcome.
func CountS3(stack *middleware.Stack) error {
	return stack.Initialize.Add(middleware.InitializeMiddlewareFunc("osmMetrics",
		func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
			start := time.Now()
			out, md, err := next.HandleInitialize(ctx, in)
			op := awsmiddleware.GetOperationName(ctx)
			CallsOf(ctx).add(s3Write(op))
			s3Requests.WithLabelValues(op, s3Code(md, err)).Inc()
			s3Duration.WithLabelValues(op).Observe(time.Since(start).Seconds())
			return out, md, err
		}), middleware.After)
}

func s3Code(md middleware.Metadata, err error) string {
	var re *smithyhttp.ResponseError
	if errors.As(err, &re) {
		return codeLabel(re.HTTPStatusCode())
	}
	if raw, ok := awsmiddleware.GetRawResponse(md).(*smithyhttp.Response); ok && raw != nil {
		return codeLabel(raw.StatusCode)
	}
	if err != nil {
		return "error"
	}
	return "ok"
}

// CountContractAPI wraps an HTTP transport so that every contract API request is recorded.
func CountContractAPI(next http.RoundTripper) http.RoundTripper {
	if next == nil {
		next = http.DefaultTransport
	}
	return roundTripper(func(req *http.Request) (*http.Response, error) {
		start := time.Now()
		resp, err := next.RoundTrip(req)
		CallsOf(req.Context()).add(httpWrite(req.Method))
		op := ContractOperation(req.Method, req.URL.Path)
		code := "error"
		if err == nil {
			code = codeLabel(resp.StatusCode)
		}
		contractRequests.WithLabelValues(op, code).Inc()
		contractDuration.WithLabelValues(op).Observe(time.Since(start).Seconds())
		return resp, err
	})
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

// Every label value comes from a small fixed set, whatever tenants create and delete: an id, a
// topic name (which holds a Bucket's UID), a bucket name or a status code a tenant's server
// chose would make a series of its own that stays until the manager restarts.

// contractRoutes are the contract API's paths, as openapi/contract.yaml names them (a test
// keeps them the same): a request is counted under the one its path matches, with the ids in
// it left out, or under "other".
var contractRoutes = []string{
	"/v1/contracts",
	"/v1/contracts/{id}",
	"/v1/contracts/{id}/keys",
	"/v1/contracts/{id}/keys/{accessKeyId}",
	"/v1/contracts/{id}/oidc-provider",
	"/v1/contracts/{id}/principals",
	"/v1/contracts/{id}/principals/{principalId}",
	"/v1/contracts/{id}/principals/{principalId}/keys",
	"/v1/contracts/{id}/principals/{principalId}/keys/{accessKeyId}",
	"/v1/contracts/{id}/roles/{roleName}",
	"/v1/contracts/{id}/topics",
	"/v1/contracts/{id}/topics/{topicName}",
	"/v1/contracts/{id}/usage",
	"/v1/contracts/{id}/buckets/{bucket}/quota",
}

// ContractOperation is the method and the route of a contract API request, for example
// "DELETE /v1/contracts/{id}/keys/{accessKeyId}"; "<method> other" for a path that is no route
// of the API. The route is matched at the end of the path: what comes before it is the base
// URL's path, the install's.
func ContractOperation(method, path string) string {
	segments := strings.Split(strings.Trim(path, "/"), "/")
	route := "" // the longest that matches
	for _, r := range contractRoutes {
		if matchesEnd(segments, strings.Split(strings.Trim(r, "/"), "/")) && len(r) > len(route) {
			route = r
		}
	}
	return methodLabel(method) + " " + cmp.Or(route, "other")
}

// matchesEnd says whether the last segments of a path are route's, a "{...}" segment of the
// route matching any one segment.
func matchesEnd(segments, route []string) bool {
	if len(route) > len(segments) {
		return false
	}
	tail := segments[len(segments)-len(route):]
	for i, r := range route {
		if !strings.HasPrefix(r, "{") && r != tail[i] {
			return false
		}
	}
	return true
}

// methodLabel is method, or "OTHER" for one the contract API does not use.
func methodLabel(method string) string {
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete:
		return method
	}
	return "OTHER"
}

// codeLabel is an HTTP status as a label value: a status HTTP defines, or "other" (a server
// may answer any three digits, and an existing account's endpoint is any server).
func codeLabel(status int) string {
	if http.StatusText(status) == "" {
		return "other"
	}
	return strconv.Itoa(status)
}
