// Package metrics holds the operator's own Prometheus metrics: every call to S3 and to the
// contract API by operation and outcome, and the resources by their Ready reason. They are
// registered on controller-runtime's registry, so the manager's /metrics serves them beside its
// own (behind authentication and authorization).
package metrics

import (
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
			s3Requests.WithLabelValues(op, s3Code(md, err)).Inc()
			s3Duration.WithLabelValues(op).Observe(time.Since(start).Seconds())
			return out, md, err
		}), middleware.After)
}

func s3Code(md middleware.Metadata, err error) string {
	var re *smithyhttp.ResponseError
	if errors.As(err, &re) {
		return strconv.Itoa(re.HTTPStatusCode())
	}
	if raw, ok := awsmiddleware.GetRawResponse(md).(*smithyhttp.Response); ok && raw != nil {
		return strconv.Itoa(raw.StatusCode)
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
		op := ContractOperation(req.Method, req.URL.Path)
		code := "error"
		if err == nil {
			code = strconv.Itoa(resp.StatusCode)
		}
		contractRequests.WithLabelValues(op, code).Inc()
		contractDuration.WithLabelValues(op).Observe(time.Since(start).Seconds())
		return resp, err
	})
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

// collections are the contract API's collections: the path segment after one is an id, which
// must not become a label value (one series per contract would grow without bound).
var collections = map[string]bool{"contracts": true, "keys": true, "principals": true, "buckets": true}

// ContractOperation is the method and the path template of a contract API request, for
// example "DELETE /v1/contracts/{id}/keys/{id}".
func ContractOperation(method, path string) string {
	segments := strings.Split(strings.Trim(path, "/"), "/")
	for i := 1; i < len(segments); i++ {
		if collections[segments[i-1]] {
			segments[i] = "{id}"
		}
	}
	return method + " /" + strings.Join(segments, "/")
}
