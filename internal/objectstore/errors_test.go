package objectstore

import (
	"errors"
	"net/http"
	"testing"

	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"
)

func answered(status int, code string) error {
	return &awshttp.ResponseError{ResponseError: &smithyhttp.ResponseError{
		Response: &smithyhttp.Response{Response: &http.Response{StatusCode: status}},
		Err:      &smithy.GenericAPIError{Code: code},
	}}
}

func TestANotImplementedAnswerIsNeitherTransientNorRetried(t *testing.T) {
	tests := []struct {
		name                      string
		err                       error
		transient, notImplemented bool
	}{
		{"versitygw's lifecycle answer", answered(http.StatusNotImplemented, "NotImplemented"), false, true},
		{"versitygw without a versioning directory", answered(http.StatusNotImplemented, "VersioningNotConfigured"), false, true},
		{"a server error", answered(http.StatusInternalServerError, "InternalError"), true, false},
		{"throttling", answered(http.StatusServiceUnavailable, "SlowDown"), true, false},
		{"a refusal", answered(http.StatusBadRequest, "MalformedXML"), false, false},
		{"no answer at all", errors.New("connection refused"), true, false},
	}
	for _, tt := range tests {
		if got := IsTransient(tt.err); got != tt.transient {
			t.Errorf("%s: IsTransient = %v, want %v", tt.name, got, tt.transient)
		}
		if got := IsNotImplemented(tt.err); got != tt.notImplemented {
			t.Errorf("%s: IsNotImplemented = %v, want %v", tt.name, got, tt.notImplemented)
		}
	}
}
