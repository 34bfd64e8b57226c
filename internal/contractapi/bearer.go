package contractapi

import (
	"context"
	"net/http"
)

// WithBearerToken makes a client send the API's bearer token on every request.
func WithBearerToken(token string) ClientOption {
	return WithRequestEditorFn(func(_ context.Context, req *http.Request) error {
		req.Header.Set("Authorization", "Bearer "+token)
		return nil
	})
}
